// RUN: not hlo-opt %s --split-input-file --flatten-tensors 2>&1 | FileCheck %s

// Ops that would have to understand an N-d tensor and are not rewritten by the pass are
// refused before anything changes.
// CHECK: flatten-tensors-invalid.mlir:[[# @LINE + 4]]:3: error: 'vector.transfer_read' op cannot flatten 'tensor<4x8xf32>': unsupported op
func.func @transfer(%t: tensor<4x8xf32>, %i: index) -> vector<8xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %t[%i, %c0], %pad {in_bounds = [true]} : tensor<4x8xf32>, vector<8xf32>
  return %v : vector<8xf32>
}

// -----

// A tensor with a dynamic dimension has no static flat size.
// CHECK: flatten-tensors-invalid.mlir:[[# @LINE + 1]]:1: error: 'func.func' op cannot flatten 'tensor<?x4xf32>': dynamic shape
func.func @dynamic(%t: tensor<?x4xf32>, %i: index, %j: index) -> f32 {
  %x = tensor.extract %t[%i, %j] : tensor<?x4xf32>
  return %x : f32
}
