// 2^61 f64 elements: the count fits, the 2^64 bytes that lower-tensors would promise
// (llvm.dereferenceable) do not.
// PASSES: --flatten-tensors --lower-tensors
// EXPECT: error: tensor type is too large
func.func @main(%arg0: tensor<2305843009213693952xf64>, %i: index) -> f64 {
  %0 = tensor.extract %arg0[%i] : tensor<2305843009213693952xf64>
  return %0 : f64
}
