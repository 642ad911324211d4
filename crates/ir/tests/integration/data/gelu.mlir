module {
  func.func @main(%input: tensor<6x512x4096xbf16>, %output: tensor<6x512x4096xbf16>) -> tensor<6x512x4096xbf16> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c6 = arith.constant 6 : index
    %c512 = arith.constant 512 : index
    %c4096 = arith.constant 4096 : index
    %xla_loop = scf.for %dim0 = %c0 to %c6 step %c1 iter_args(%iter = %output) -> (tensor<6x512x4096xbf16>) {
      %0 = scf.for %dim1 = %c0 to %c512 step %c1 iter_args(%iter_0 = %iter) -> (tensor<6x512x4096xbf16>) {
        %1 = scf.for %dim2 = %c0 to %c4096 step %c1 iter_args(%iter_1 = %iter_0) -> (tensor<6x512x4096xbf16>) {
          %pure_call = func.call @gelu(%input, %dim0, %dim1, %dim2) : (tensor<6x512x4096xbf16>, index, index, index) -> bf16
          %inserted = tensor.insert %pure_call into %iter_1[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
          scf.yield %inserted : tensor<6x512x4096xbf16>
        }
        scf.yield %1 : tensor<6x512x4096xbf16>
      }
      scf.yield %0 : tensor<6x512x4096xbf16>
    }
    return %xla_loop : tensor<6x512x4096xbf16>
  }
  func.func private @gelu(%arg0: tensor<6x512x4096xbf16>, %i: index, %j: index, %k: index) -> bf16 {
    %cst = arith.constant 5.000000e-01 : bf16
    %cst_0 = arith.constant 1.000000e+00 : bf16
    %cst_1 = arith.constant 7.968750e-01 : bf16
    %cst_2 = arith.constant 4.467770e-02 : bf16
    %extracted = tensor.extract %arg0[%i, %j, %k] : tensor<6x512x4096xbf16>
    %0 = arith.mulf %extracted, %extracted : bf16
    %1 = arith.mulf %0, %extracted : bf16
    %2 = arith.mulf %1, %cst_2 : bf16
    %3 = arith.addf %extracted, %2 : bf16
    %4 = arith.mulf %3, %cst_1 : bf16
    %5 = math.tanh %4 : bf16
    %6 = arith.addf %5, %cst_0 : bf16
    %7 = arith.mulf %6, %cst : bf16
    %8 = arith.mulf %extracted, %7 : bf16
    return %8 : bf16
  }
}
