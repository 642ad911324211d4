#map = affine_map<(d0, d1) -> (d0)>
module {
  llvm.mlir.global internal @shared_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<128 x f32>
  llvm.mlir.global private constant @table(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
  llvm.mlir.global internal @counter() {addr_space = 0 : i32} : i32 {
    %0 = llvm.mlir.constant(0 : i32) : i32
    llvm.return %0 : i32
  }
  llvm.mlir.global internal constant @name("gelu\00") {addr_space = 0 : i32}
  llvm.func @__nv_tanhf(f32) -> f32
  llvm.func @printf(!llvm.ptr {llvm.noundef}, ...) -> i32
  llvm.func internal @helper(%arg0: f32) -> f32 attributes {no_unwind} {
    llvm.return %arg0 : f32
  }
  llvm.func @kernel(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr) {
    %0 = nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
    %1 = nvvm.read.ptx.sreg.ctaid.x : i32
    %2 = nvvm.read.ptx.sreg.ntid.y : i32
    %3 = nvvm.read.ptx.sreg.nctaid.z : i32
    %4 = nvvm.read.ptx.sreg.laneid range <i32, 0, 32> : i32
    %5 = llvm.mlir.constant(4 : i32) : i32
    %6 = llvm.mlir.constant(5.000000e-01 : f32) : f32
    %7 = llvm.mlir.constant(dense<0.000000e+00> : vector<4xbf16>) : vector<4xbf16>
    %8 = llvm.mlir.constant(-1 : i32) : i32
    %9 = llvm.getelementptr inbounds %arg0[%0] : (!llvm.ptr, i32) -> !llvm.ptr, bf16
    %10 = llvm.load %9 invariant : !llvm.ptr -> vector<4xbf16>
    %11 = llvm.load %9 {alignment = 8 : i64} : !llvm.ptr -> vector<4xbf16>
    %12 = llvm.load volatile %arg1 atomic acquire {alignment = 4 : i64} : !llvm.ptr -> f32
    %13 = llvm.getelementptr %arg1[%1] : (!llvm.ptr, i32) -> !llvm.ptr, vector<4xbf16>
    llvm.store %10, %13 {alignment = 8 : i64} : vector<4xbf16>, !llvm.ptr
    llvm.store %7, %13 : vector<4xbf16>, !llvm.ptr
    %14 = llvm.mlir.addressof @shared_0 : !llvm.ptr<3>
    %15 = llvm.getelementptr inbounds|nuw %14[0, %0] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, !llvm.array<128 x f32>
    %16 = llvm.getelementptr nusw %14[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f32
    %17 = llvm.load %15 : !llvm.ptr<3> -> f32
    %18 = llvm.call @__nv_tanhf(%17) : (f32) -> f32
    %19 = llvm.call @helper(%18) {fastmathFlags = #llvm.fastmath<fast>} : (f32) -> f32
    llvm.store %19, %16 : f32, !llvm.ptr<3>
    nvvm.barrier0
    %20 = nvvm.shfl.sync  bfly %8, %19, %2, %3 : f32 -> f32
    %21 = nvvm.shfl.sync  down %8, %0, %2, %3 : i32 -> i32
    %22 = nvvm.shfl.sync  idx %8, %19, %2, %3 {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
    %23 = llvm.mlir.addressof @name : !llvm.ptr
    %24 = llvm.call @printf(%23, %20) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, f32) -> i32
    llvm.return
  }
  llvm.func @special_registers() -> i32 {
    %0 = nvvm.read.ptx.sreg.tid.x : i32
    %1 = nvvm.read.ptx.sreg.tid.y : i32
    %2 = nvvm.read.ptx.sreg.tid.z : i32
    %3 = nvvm.read.ptx.sreg.ntid.x : i32
    %4 = nvvm.read.ptx.sreg.ntid.y : i32
    %5 = nvvm.read.ptx.sreg.ntid.z range <i32, 1, 1025> : i32
    %6 = nvvm.read.ptx.sreg.ctaid.x : i32
    %7 = nvvm.read.ptx.sreg.ctaid.y : i32
    %8 = nvvm.read.ptx.sreg.ctaid.z : i32
    %9 = nvvm.read.ptx.sreg.nctaid.x : i32
    %10 = nvvm.read.ptx.sreg.nctaid.y : i32
    %11 = nvvm.read.ptx.sreg.nctaid.z : i32
    %12 = nvvm.read.ptx.sreg.laneid : i32
    %13 = nvvm.read.ptx.sreg.warpsize : i32
    llvm.return %13 : i32
  }
  func.func @vector(%input: tensor<12582912xbf16>, %output: tensor<12582912xbf16>, %m: tensor<4x16xf32>, %i: index, %f: f32) -> tensor<12582912xbf16> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0.000000e+00 : bf16
    %cst_0 = arith.constant 5.000000e-01 : bf16
    %vector_0 = arith.constant dense<0.000000e+00> : vector<4xbf16>
    %cst_1 = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : vector<4xf32>
    %0 = vector.transfer_read %input[%i], %cst {in_bounds = [true]} : tensor<12582912xbf16>, vector<4xbf16>
    %xla_loop:2 = scf.for %vector_index = %c0 to %c4 step %c1 iter_args(%iter = %output, %iter_vector = %vector_0) -> (tensor<12582912xbf16>, vector<4xbf16>) {
      %1 = vector.extract %0[%vector_index] : bf16 from vector<4xbf16>
      %2 = arith.mulf %1, %cst_0 : bf16
      %3 = vector.insert %2, %iter_vector [%vector_index] : bf16 into vector<4xbf16>
      scf.yield %iter, %3 : tensor<12582912xbf16>, vector<4xbf16>
    }
    %4 = vector.extract %0[3] : bf16 from vector<4xbf16>
    %5 = vector.insert %4, %xla_loop#1 [0] : bf16 into vector<4xbf16>
    %6 = vector.transfer_write %5, %xla_loop#0[%i] {in_bounds = [true]} : vector<4xbf16>, tensor<12582912xbf16>
    %7 = vector.transfer_write %5, %6[%c0] : vector<4xbf16>, tensor<12582912xbf16>
    %8 = vector.transfer_read %m[%i, %c0], %f : tensor<4x16xf32>, vector<4xf32>
    %9 = vector.transfer_read %m[%c0, %i], %f {permutation_map = #map} : tensor<4x16xf32>, vector<4xf32>
    %10 = vector.broadcast %f : f32 to vector<4xf32>
    %11 = vector.broadcast %10 : vector<4xf32> to vector<2x4xf32>
    %12 = vector.extract %11[1] : vector<4xf32> from vector<2x4xf32>
    %13 = vector.extract %11[%i, 2] : f32 from vector<2x4xf32>
    %14 = vector.insert %cst_1, %11 [0] : vector<4xf32> into vector<2x4xf32>
    %15 = arith.addf %12, %8 : vector<4xf32>
    %16 = arith.addf %15, %9 : vector<4xf32>
    %17 = vector.transfer_write %16, %m[%c1, %c0] {in_bounds = [true]} : vector<4xf32>, tensor<4x16xf32>
    return %7 : tensor<12582912xbf16>
  }
  func.func @gpu(%v: f32, %offset: i32, %width: i32) -> f32 {
    %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 127 : index]}
    %thread_id_y = gpu.thread_id  y upper_bound 4
    %block_id_x = gpu.block_id  x upper_bound 1024 {xla.range = [0 : index, 1023 : index]}
    %block_id_z = gpu.block_id  z
    %block_dim_x = gpu.block_dim  x
    %grid_dim_y = gpu.grid_dim  y upper_bound 16
    %0:2 = gpu.shuffle  xor %v, %offset, %width : f32
    %1:2 = gpu.shuffle  down %0#0, %offset, %width : f32
    %2:2 = gpu.shuffle  up %1#0, %offset, %width : f32
    %3:2 = gpu.shuffle  idx %2#0, %offset, %width : f32
    %4:2 = gpu.shuffle  xor %offset, %offset, %width : i32
    gpu.barrier
    return %3#0 : f32
  }
}
