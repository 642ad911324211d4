// RUN: not hlo-opt %s --split-input-file 2>&1 | FileCheck %s
// RUN: not hlo-opt %s --split-input-file --lower-tensors 2>&1 | FileCheck %s --check-prefix=LOWER

// XLA's size of a dynamic dimension is read (XLA's spelling too), verified and printed;
// shapes here are static, so lower-tensors refuses it where it is written.

// CHECK-DAG: xla_gpu.get_dynamic_dim_size %in 1 : tensor<16x8x4xf32>
// LOWER: xla-gpu-get-dynamic-dim-size.mlir:[[# @LINE + 2]]:3: error: 'xla_gpu.get_dynamic_dim_size' op cannot lower this op on tensors
func.func @size(%in: tensor<16x8x4xf32>) -> i32 {
  %out = xla.get_dynamic_dim_size %in 1 : tensor<16x8x4xf32>
  func.return %out : i32
}

// -----

// CHECK-DAG: xla-gpu-get-dynamic-dim-size.mlir:[[# @LINE + 2]]:3: error: 'xla_gpu.get_dynamic_dim_size' op dim 3 is not a dimension of a tensor of rank 3
func.func @past_the_rank(%in: tensor<16x8x4xf32>) -> i32 {
  %out = xla_gpu.get_dynamic_dim_size %in 3 : tensor<16x8x4xf32>
  func.return %out : i32
}
