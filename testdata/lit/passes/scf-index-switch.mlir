// MLIR's `scf.index_switch` (XLA's IR writes it): read in both forms, verified, printed as
// MLIR prints it (real MLIR reads our output back); `flatten-tensors` flattens the tensors
// it passes along (scf-index-switch-tensors.mlir) and `lower-to-llvm` lowers it through
// MLIR to an `llvm.switch`. The interpreter refuses it (our emitters do not make it).
// RUN: hlo-opt %s --split-input-file | FileCheck %s
// RUN: hlo-opt %s --split-input-file | mlir-opt --split-input-file -o /dev/null
// RUN: hlo-opt %s --split-input-file --mlir-print-op-generic | hlo-opt - --split-input-file | FileCheck %s
// RUN: hlo-opt %s --split-input-file --lower-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @pick
// CHECK:      %[[R:.*]] = scf.index_switch %i -> f32
// CHECK-NEXT: case 0 {
// CHECK-NEXT:   scf.yield %a : f32
// CHECK-NEXT: }
// CHECK-NEXT: case 2 {
// CHECK-NEXT:   %[[S:.*]] = arith.addf %a, %b : f32
// CHECK-NEXT:   scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: default {
// CHECK-NEXT:   scf.yield %b : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]] : f32
// LLVM-LABEL: llvm.func @pick
// LLVM: "llvm.switch"
// LLVM-SAME: case_values = dense<[0, 2]>
func.func @pick(%i: index, %a: f32, %b: f32) -> f32 {
  %r = scf.index_switch %i -> f32
  case 0 {
    scf.yield %a : f32
  }
  case 2 {
    %s = arith.addf %a, %b : f32
    scf.yield %s : f32
  }
  default {
    scf.yield %b : f32
  }
  return %r : f32
}

// -----

// No results, no cases: only the default region.
// CHECK-LABEL: func.func @only_default
// CHECK:      scf.index_switch %i
// CHECK-NEXT: default {
// CHECK-NEXT:   scf.yield
// CHECK-NEXT: }
func.func @only_default(%i: index) {
  scf.index_switch %i
  default {
    scf.yield
  }
  return
}
