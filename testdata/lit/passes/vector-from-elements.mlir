// MLIR's `vector.from_elements` (XLA's IR writes it): read, verified, printed as MLIR
// prints it (real MLIR reads our output back) and lowered by `lower-to-llvm` (MLIR's
// conversion) to a chain of `llvm.insertelement`. Our own builders write that chain as
// `vector.broadcast` and `vector.insert` instead.
// RUN: hlo-opt %s --split-input-file | FileCheck %s
// RUN: hlo-opt %s --split-input-file | mlir-opt --split-input-file -o /dev/null
// RUN: hlo-opt %s --lower-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: not hlo-opt %S/vector-from-elements-invalid.mlir --split-input-file 2>&1 | FileCheck %S/vector-from-elements-invalid.mlir

// CHECK-LABEL: func.func @pair
// CHECK: %[[V:.*]] = vector.from_elements %a, %b : vector<2xf32>
// LLVM-LABEL: llvm.func @pair
// LLVM-COUNT-2: llvm.insertelement
// LLVM: llvm.return
func.func @pair(%a: f32, %b: f32) -> vector<2xf32> {
  %v = vector.from_elements %a, %b : vector<2xf32>
  return %v : vector<2xf32>
}

// -----

// CHECK-LABEL: func.func @square
// CHECK: vector.from_elements %a, %c2, %c3, %a : vector<2x2xi32>
func.func @square(%a: i32) -> vector<2x2xi32> {
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %v = vector.from_elements %a, %c2, %c3, %a : vector<2x2xi32>
  return %v : vector<2x2xi32>
}
