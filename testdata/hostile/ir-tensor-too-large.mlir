// A tensor type of 2^64 elements: flatten-tensors would wrap the count to a 0-element
// tensor. Every shaped type in IR text obeys the front end's limit (fewer than 2^62
// elements and bytes), checked where the type is written.
// PASSES: --flatten-tensors --lower-tensors
// EXPECT: error: tensor type is too large
func.func @main(%arg0: tensor<4611686018427387904x4xf32>, %i: index) -> f32 {
  %0 = tensor.extract %arg0[%i, %i] : tensor<4611686018427387904x4xf32>
  return %0 : f32
}
