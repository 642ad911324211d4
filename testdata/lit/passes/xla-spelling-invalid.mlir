// RUN: not hlo-opt %s --split-input-file 2>&1 | FileCheck %s

// XLA's minor-to-major layout encoding must be a permutation of the tensor's dimensions,
// written as a dense list.

// CHECK: xla-spelling-invalid.mlir:[[# @LINE + 1]]:42: error: invalid tensor layout
func.func private @f(%t: tensor<2x3xf32, dense<[0, 0]> : tensor<2xi64>>)

// -----

// CHECK: xla-spelling-invalid.mlir:[[# @LINE + 1]]:42: error: expected a minor-to-major order `dense<[...]> : tensor<Nxi64>` as the encoding
func.func private @g(%t: tensor<2x3xf32, dense<[0.0, 1.0]> : tensor<2xf32>>)
