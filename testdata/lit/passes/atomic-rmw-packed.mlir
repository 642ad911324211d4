// RUN: hlo-opt %s --split-input-file | FileCheck %s
// RUN: not hlo-opt %s --split-input-file --lower-tensors 2>&1 | FileCheck %s --check-prefix=LOWER

// An atomic update of several elements at once, as XLA writes one for a packed
// `atom.v2.f16x2`-style add: the `atomic_rmw` body takes a vector of the element type from
// the indexed element on. It is read, verified and printed; `lower-tensors` (and the
// interpreter) do not write it and say so where it is written.

func.func @packed(%t: tensor<8xf16>, %i: index) -> tensor<8xf16> {
  %r = xla.atomic_rmw %t[%i] : tensor<8xf16> {
  // LOWER: atomic-rmw-packed.mlir:[[@LINE-1]]:{{[0-9]+}}: error: 'xla_gpu.atomic_rmw' op unsupported: an atomic update of a vector of elements
    ^bb0(%old : vector<2xf16>):
      %two = arith.constant dense<2.0> : vector<2xf16>
      %new = arith.mulf %old, %two : vector<2xf16>
      xla.yield %new : vector<2xf16>
  }
  return %r : tensor<8xf16>
}
// CHECK-LABEL: func.func @packed
// CHECK:       xla_gpu.atomic_rmw %{{.*}}[%{{.*}}] : tensor<8xf16> {
// CHECK-NEXT:  ^bb0(%{{.*}}: vector<2xf16>):
