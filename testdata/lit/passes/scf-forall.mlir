// MLIR's `scf.forall` with `scf.forall.in_parallel` and `tensor.parallel_insert_slice`
// (XLA's work-item form): read in both forms, verified, printed as MLIR prints them (real
// MLIR reads our output back, custom and generic).
// RUN: hlo-opt %s --split-input-file | FileCheck %s
// RUN: hlo-opt %s --split-input-file | mlir-opt --split-input-file -o /dev/null
// RUN: hlo-opt %s --split-input-file --mlir-print-op-generic | mlir-opt --split-input-file -o /dev/null
// RUN: hlo-opt %s --split-input-file --mlir-print-op-generic | hlo-opt - --split-input-file | FileCheck %s
// RUN: not hlo-opt %S/scf-forall-invalid.mlir --split-input-file 2>&1 | FileCheck %S/scf-forall-invalid.mlir

// CHECK-LABEL: func.func @threads
// CHECK:      %[[R:.*]] = scf.forall (%i, %j) in (128, 2) shared_outs(%out = %init) -> (tensor<128x2xf32>) {
// CHECK:        %[[V:.*]] = tensor.insert %x into %out[%i, %j] : tensor<128x2xf32>
// CHECK-NEXT:   scf.forall.in_parallel {
// CHECK-NEXT:     tensor.parallel_insert_slice %[[V]] into %out[0, 0] [128, 2] [1, 1] : tensor<128x2xf32> into tensor<128x2xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
func.func @threads(%init: tensor<128x2xf32>, %x: f32) -> tensor<128x2xf32> {
  %r = scf.forall (%i, %j) in (128, 2) shared_outs(%out = %init) -> (tensor<128x2xf32>) {
    %v = tensor.insert %x into %out[%i, %j] : tensor<128x2xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %out[0, 0][128, 2][1, 1] : tensor<128x2xf32> into tensor<128x2xf32>
    }
  }
  return %r : tensor<128x2xf32>
}

// -----

// Bounds that are values, a lower bound and a step: the long form. No outputs: the
// terminator may be left out.
// CHECK-LABEL: func.func @long_form
// CHECK:      scf.forall (%i) = (2) to (%n) step (4) {
// CHECK-NEXT:   scf.forall.in_parallel {
// CHECK-NEXT:   }
// CHECK-NEXT: } {mapping = [#gpu.thread<x>]}
func.func @long_form(%n: index) {
  scf.forall (%i) = (2) to (%n) step (4) {
  } {mapping = [#gpu.thread<x>]}
  return
}
