// MLIR's `affine.apply`, as XLA's simplify-affine tests write it: read, verified and printed
// as MLIR prints it (the maps as aliases, `()` always, `[...]` when the map has symbols),
// and real MLIR reads our output back. Our index arithmetic is `xla_gpu.apply_indexing`,
// so `lower-to-llvm` refuses `affine.apply` at the op.
// RUN: hlo-opt %s | FileCheck %s
// RUN: hlo-opt %s | mlir-opt -o /dev/null
// RUN: not hlo-opt %s --lower-to-llvm 2>&1 | FileCheck %s --check-prefix=LLVM

// CHECK-DAG: #[[MAP0:.*]] = affine_map<()[s0, s1] -> (s0 * 4 + s1 + s0 floordiv 128)>
// CHECK-DAG: #[[MAP1:.*]] = affine_map<(d0)[s0] -> (d0 mod 8 + s0)>
// CHECK-DAG: #[[MAP2:.*]] = affine_map<(d0, d1) -> (d0 + d1)>
// CHECK: %[[A:.*]] = affine.apply #[[MAP0]]()[%a, %b]
// CHECK: %[[B:.*]] = affine.apply #[[MAP1]](%[[A]])[%b]
// CHECK: affine.apply #[[MAP2]](%[[B]], %a)
// LLVM: affine-apply.mlir:[[# @LINE + 2]]:3: error: 'affine.apply' op unsupported: 'affine.apply' (our index arithmetic is 'xla_gpu.apply_indexing', which 'simplify-affine' lowers)
func.func @main(%a: index, %b: index) -> index {
  %0 = affine.apply affine_map<()[s0, s1] -> (s0 * 4 + s1 + s0 floordiv 128)>()[%a, %b]
  %1 = affine.apply affine_map<(d0)[s0] -> (d0 mod 8 + s0)>(%0)[%b]
  %2 = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%1, %a)
  return %2 : index
}
