// The nested layout as an attribute of our IR: `#xla_gpu.nested_layout<...>` and the seed's
// `#iree_vector_ext.nested_layout<...>` parse, are verified, and print back in the one
// canonical spelling; printing again gives the same text (a round trip). Broken layouts are
// located errors: at the offending character for the syntax, at the `#` for a rule the
// values break (attribute-errors.mlir).
// RUN: hlo-opt %s | FileCheck %s
// RUN: hlo-opt %s | hlo-opt - | FileCheck %s

func.func @seed() attributes {layout = #iree_vector_ext.nested_layout<subgroup_tile = [2, 1], batch_tile = [2, 4], outer_tile = [1, 1], thread_tile = [16, 4], element_tile = [1, 4], subgroup_strides = [1, 0], thread_strides = [1, 16]>} {
  return
}

func.func @ours() attributes {layout = #xla_gpu.nested_layout<subgroup_tile=[1],batch_tile=[2],outer_tile=[1],thread_tile=[32],element_tile=[4],subgroup_strides=[0],thread_strides=[1]>} {
  return
}

// CHECK: func.func @seed() attributes {layout = #xla_gpu.nested_layout<subgroup_tile = [2, 1], batch_tile = [2, 4], outer_tile = [1, 1], thread_tile = [16, 4], element_tile = [1, 4], subgroup_strides = [1, 0], thread_strides = [1, 16]>}
// CHECK: func.func @ours() attributes {layout = #xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [2], outer_tile = [1], thread_tile = [32], element_tile = [4], subgroup_strides = [0], thread_strides = [1]>}
