// RUN: not hlo-opt %s 2>&1 | FileCheck %s

// A packed update's lanes must be of the tensor's element type.

func.func @lanes_of_another_type(%t: tensor<8xf16>, %i: index) -> tensor<8xf16> {
  %r = xla.atomic_rmw %t[%i] : tensor<8xf16> {
  // CHECK: atomic-rmw-packed-invalid.mlir:[[@LINE-1]]:{{[0-9]+}}: error: 'xla_gpu.atomic_rmw' op expects the body to have one argument of the element type 'f16' (or a vector of it)
    ^bb0(%old : vector<2xf32>):
      xla.yield %old : vector<2xf32>
  }
  return %r : tensor<8xf16>
}
