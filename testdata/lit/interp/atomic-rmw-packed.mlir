// An atomic update of a vector of elements (XLA's packed form) is not modelled: the
// interpreter refuses it at the op instead of updating one element.
// RUN: not hlo-interp %s 2>&1 | FileCheck %s
// CHECK: atomic-rmw-packed.mlir:[[# @LINE + 3]]:3: error: unsupported: an atomic update of a vector of elements in 'xla_gpu.atomic_rmw'
func.func @main(%t: tensor<8xf16>) -> tensor<8xf16> {
  %i = arith.constant 2 : index
  %r = xla.atomic_rmw %t[%i] : tensor<8xf16> {
    ^bb0(%old : vector<2xf16>):
      %two = arith.constant dense<2.0> : vector<2xf16>
      %new = arith.mulf %old, %two : vector<2xf16>
      xla.yield %new : vector<2xf16>
  }
  return %r : tensor<8xf16>
}
