// RUN: not hlo-opt %s --expand-integer-power 2>&1 | FileCheck %s

// A vector `math.ipowi` (XLA's test writes one; the emitters here write `power` per
// element) is refused where it is written, not left for the LLVM lowering to trip on.

func.func @vector(%arg0: vector<4xi32>, %arg1: vector<4xi32>) -> vector<4xi32> {
  %0 = math.ipowi %arg0, %arg1 : vector<4xi32>
  func.return %0 : vector<4xi32>
}
// CHECK: expand-integer-power-invalid.mlir:[[@LINE-3]]:{{[0-9]+}}: error: 'math.ipowi' op unsupported: math.ipowi of vector<4xi32>: only scalar integers are expanded
