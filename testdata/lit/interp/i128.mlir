// i128 values (c128 patterns) are held as two 64-bit words: a kernel takes a pattern apart
// into its halves and puts it together again with its halves swapped. Tensors of i128 are
// filled and printed whole.
// RUN: hlo-interp %s --grid=1x4 --print-elements=4 | FileCheck %s
// CHECK: @main: 1 x 4 threads, {{[0-9]+}} ops executed
// CHECK: %arg0: tensor<4xi128> = [0, 1, 2, 3]
// CHECK: %arg1: tensor<4xi128> = [0, 18446744073709551616, 36893488147419103232, 55340232221128654848]
func.func @main(%in: tensor<4xi128>, %out: tensor<4xi128>) -> tensor<4xi128> {
  %tid = gpu.thread_id  x {xla.range = [0 : index, 3 : index]}
  %v = tensor.extract %in[%tid] : tensor<4xi128>
  %c64 = arith.constant 64 : i128
  %low = arith.trunci %v : i128 to i64
  %shifted = arith.shrui %v, %c64 : i128
  %high = arith.trunci %shifted : i128 to i64
  %new_low = arith.extui %high : i64 to i128
  %wide_high = arith.extui %low : i64 to i128
  %new_high = arith.shli %wide_high, %c64 : i128
  %swapped = arith.ori %new_low, %new_high : i128
  %r = tensor.insert %swapped into %out[%tid] : tensor<4xi128>
  return %r : tensor<4xi128>
}
