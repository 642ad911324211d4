// Ops of XLA's other backends (CPU, AMD) are refused by name, located, as unsupported:
// this compiler reads XLA's IR for NVIDIA GPUs.
// RUN: not hlo-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: other-target-ops.mlir:[[# @LINE + 2]]:8: error: unsupported: 'xla_cpu.load' is an op for XLA's CPU backend; hlo-emit compiles for NVIDIA GPUs
func.func @cpu_load(%arg0: !xla_cpu.call_frame) -> tensor<10x10x4xf32> {
  %0 = xla_cpu.load %arg0, 0 : tensor<10x10x4xf32>
  return %0 : tensor<10x10x4xf32>
}

// -----

// CHECK: other-target-ops.mlir:[[# @LINE + 2]]:8: error: unsupported: 'rocdl.workitem.id.x' is an op for AMD GPUs (ROCDL); hlo-emit compiles for NVIDIA GPUs
func.func @amd() -> i32 {
  %0 = rocdl.workitem.id.x : i32
  return %0 : i32
}
