// RUN: not hlo-opt %s --expand-integer-power 2>&1 | FileCheck %s

// A `math.ipowi` of 1-bit integers (lanes of them too) is refused where it is written, not
// left for the LLVM lowering to trip on (the emitters compute `power` of `pred` otherwise).

func.func @bits(%arg0: vector<4xi1>, %arg1: vector<4xi1>) -> vector<4xi1> {
  %0 = math.ipowi %arg0, %arg1 : vector<4xi1>
  func.return %0 : vector<4xi1>
}
// CHECK: expand-integer-power-invalid.mlir:[[@LINE-3]]:{{[0-9]+}}: error: 'math.ipowi' op unsupported: math.ipowi of vector<4xi1>: only integers of two bits or more (or vectors and tensors of them) are expanded
