// XLA's GPU tensor encoding `#xla_gpu.layout<"shmem", map>` (memory space and the map
// spreading elements over threads): read and printed with the map in canonical form. No
// pass gives it a meaning, so the passes that lower tensors refuse it, located.
// RUN: hlo-opt %s --split-input-file | FileCheck %s
// RUN: hlo-opt %s --split-input-file | hlo-opt - --split-input-file | FileCheck %s
// RUN: not hlo-opt %s --split-input-file --flatten-tensors 2>&1 | FileCheck %s --check-prefix=FLAT
// RUN: not hlo-opt %S/xla-gpu-thread-layout-invalid.mlir --split-input-file 2>&1 | FileCheck %S/xla-gpu-thread-layout-invalid.mlir

// CHECK-LABEL: func.func private @tensor_layout
// CHECK-SAME: tensor<42xf32, #xla_gpu.layout<"shmem", "(d0) -> (), domain: d0 in [0, 42]">>
func.func private @tensor_layout(
  %in0: tensor<42xf32, #xla_gpu.layout<"shmem",
     "(d0) -> ()," "domain: d0 in [0, 42]">>)

// -----

// FLAT: xla-gpu-thread-layout.mlir:[[# @LINE + 1]]:1: error: 'func.func' op unsupported: 'tensor<8xf32, #xla_gpu.layout<"registers", "(d0) -> (d0 mod 4), domain: d0 in [0, 7]">>': XLA's thread layout encoding has no meaning here
func.func @read(%in: tensor<8xf32, #xla_gpu.layout<"registers", "(d0) -> (d0 mod 4), domain: d0 in [0, 7]">>) -> f32 {
  %c0 = arith.constant 0 : index
  %0 = tensor.extract %in[%c0] : tensor<8xf32, #xla_gpu.layout<"registers", "(d0) -> (d0 mod 4), domain: d0 in [0, 7]">>
  return %0 : f32
}
