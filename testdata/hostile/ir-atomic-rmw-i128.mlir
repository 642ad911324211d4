// An atomic update of a 128-bit element (a c128 pattern): NVPTX has no 128-bit atomic
// read-modify-write or compare-and-swap here, so lower-tensors refuses it at the op.
// PASSES: --lower-tensors
// EXPECT: error: atomic updates of elements wider than 64 bits are not supported
func.func @main(%t: tensor<4xi128>) -> tensor<4xi128> {
  %c1 = arith.constant 1 : index
  %k = arith.constant 1 : i128
  %r = xla_gpu.atomic_rmw %t[%c1] : tensor<4xi128> {
  ^bb0(%current: i128):
    %n = arith.addi %current, %k : i128
    xla_gpu.yield %n : i128
  }
  return %r : tensor<4xi128>
}
