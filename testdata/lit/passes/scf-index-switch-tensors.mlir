// `flatten-tensors` flattens the tensors an `scf.index_switch` passes along (XLA's test).
// RUN: hlo-opt %s --flatten-tensors | FileCheck %s

// CHECK-LABEL: func.func @tensors
// CHECK-SAME: -> (tensor<6xf32>, tensor<6xf32>)
// CHECK: scf.index_switch %{{.*}} -> tensor<6xf32>, tensor<6xf32>
func.func @tensors(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %block_id_y = gpu.block_id y {xla.range = [0 : index, 1 : index]}
  %0:2 = scf.index_switch %block_id_y -> tensor<2x3xf32>, tensor<2x3xf32>
  case 1 {
    scf.yield %arg0, %arg1 : tensor<2x3xf32>, tensor<2x3xf32>
  }
  default {
    scf.yield %arg1, %arg0 : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xf32>
}
