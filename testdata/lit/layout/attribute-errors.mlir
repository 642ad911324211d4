// Nested layouts in the IR that the parser refuses, each a located error.
// RUN: not hlo-opt %s --split-input-file 2>&1 | FileCheck %s

func.func @zero_tile() attributes {layout = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [0], outer_tile = [1], thread_tile = [1], element_tile = [1], subgroup_strides = [0], thread_strides = [0]>} {
  return
}
// CHECK: attribute-errors.mlir:4:45: error: invalid nested layout: batch_tile has 0; its entries must be positive

// -----

func.func @missing_field() attributes {layout = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], thread_tile = [1], element_tile = [1], subgroup_strides = [0], thread_strides = [0]>} {
  return
}
// CHECK: attribute-errors.mlir:11:{{[0-9]+}}: error: invalid nested layout: expected 'outer_tile'

// -----

func.func @overlap() attributes {layout = #xla_gpu.nested_layout<subgroup_tile = [1, 1], batch_tile = [1, 1], outer_tile = [1, 1], thread_tile = [4, 4], element_tile = [1, 1], subgroup_strides = [0, 0], thread_strides = [1, 2]>} {
  return
}
// CHECK: attribute-errors.mlir:18:43: error: invalid nested layout: two threads share thread id {{[0-9]+}}: the thread strides overlap

// -----

func.func @rank_eight() attributes {layout = #xla_gpu.nested_layout<subgroup_tile = [1, 1, 1, 1, 1, 1, 1, 1], batch_tile = [1], outer_tile = [1], thread_tile = [1], element_tile = [1], subgroup_strides = [0], thread_strides = [0]>} {
  return
}
// CHECK: attribute-errors.mlir:25:{{[0-9]+}}: error: invalid nested layout: more than 7 entries

// -----

func.func @huge() attributes {layout = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [4294967296], outer_tile = [4294967296], thread_tile = [1], element_tile = [1], subgroup_strides = [0], thread_strides = [0]>} {
  return
}
// CHECK: attribute-errors.mlir:32:40: error: invalid nested layout: the tiles of dimension 0 multiply past 2^63
