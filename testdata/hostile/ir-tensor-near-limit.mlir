// Just under the limit (2^60 - 1 f32 elements, about 2^62 - 4 bytes): accepted, flattened
// and lowered to a pointer whose llvm.dereferenceable is the exact byte size.
// PASSES: --flatten-tensors --lower-tensors
// EXPECT: ok
func.func @main(%arg0: tensor<1152921504606846975xf32>, %i: index) -> f32 {
  %0 = tensor.extract %arg0[%i] : tensor<1152921504606846975xf32>
  return %0 : f32
}
