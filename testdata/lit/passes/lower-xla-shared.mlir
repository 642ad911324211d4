// `lower-xla-shared`: XLA's work-item form back to threads. The loop's induction variables
// become the thread ids (with their ranges), the body runs in place of the loop with the
// shared outputs replaced by their initial tensors, and the loop's results are the tensors
// the terminator writes back whole. Forms XLA does not lower either are refused at the op.
// RUN: hlo-opt %s --split-input-file --lower-xla-shared | FileCheck %s
// RUN: not hlo-opt %S/lower-xla-shared-invalid.mlir --split-input-file --lower-xla-shared 2>&1 | FileCheck %S/lower-xla-shared-invalid.mlir

// CHECK-LABEL: func.func @threads
// CHECK-NEXT:  %[[BX:.*]] = gpu.block_id x
// CHECK-NEXT:  %[[TX:.*]] = gpu.thread_id x {xla.range = [0 : index, 127 : index]}
// CHECK-NEXT:  %[[TY:.*]] = gpu.thread_id y {xla.range = [0 : index, 1 : index]}
// CHECK-NEXT:  %[[V:.*]] = tensor.insert %x into %init[%[[TX]], %[[TY]]] : tensor<128x2xf32>
// CHECK-NEXT:  return %[[V]] : tensor<128x2xf32>
func.func @threads(%init: tensor<128x2xf32>, %x: f32) -> tensor<128x2xf32> {
  %b = xla.workgroup_id x
  %r = scf.forall (%i, %j) in (128, 2) shared_outs(%out = %init) -> (tensor<128x2xf32>) {
    %v = tensor.insert %x into %out[%i, %j] : tensor<128x2xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %out[0, 0][128, 2][1, 1] : tensor<128x2xf32> into tensor<128x2xf32>
    }
  }
  return %r : tensor<128x2xf32>
}

// -----

// An output the body does not change is its initial tensor.
// CHECK-LABEL: func.func @unchanged
// CHECK-NEXT:  gpu.thread_id x
// CHECK-NEXT:  return %init : tensor<8xf32>
func.func @unchanged(%init: tensor<8xf32>) -> tensor<8xf32> {
  %r = scf.forall (%i) in (8) shared_outs(%out = %init) -> (tensor<8xf32>) {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %out into %out[0][8][1] : tensor<8xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}
