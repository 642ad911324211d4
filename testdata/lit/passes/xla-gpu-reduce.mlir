// RUN: hlo-opt %s | FileCheck %s
// RUN: hlo-opt %s --mlir-print-op-generic | hlo-opt - | FileCheck %s
// RUN: not hlo-opt %s --lower-xla-gpu-to-scf --flatten-tensors 2>&1 | FileCheck %s --check-prefix=PASS

// XLA's `xla_gpu.reduce` (a reduction before XLA's emitter lowers it) is read, verified and
// printed, in custom and generic form; the emitters here write reductions out, so the
// passes (and the interpreter) refuse it where it is written.

// CHECK: xla_gpu.reduce(%in, %in_i) inits(%zero, %zero_i) dimensions=[0] combiner=@add
// CHECK-SAME: : tensor<4x8xf32>, tensor<4x8xi32> to tensor<8xf32>, tensor<8xi32>
// PASS: xla-gpu-reduce.mlir:[[# @LINE + 10]]:3: error: 'xla_gpu.reduce' op cannot flatten 'tensor<4x8xf32>': unsupported op
func.func private @add(%a: f32, %b: i32, %c: f32, %d: i32) -> (f32, i32) {
  %x = arith.addf %a, %c : f32
  %y = arith.addi %b, %d : i32
  return %x, %y : f32, i32
}
func.func @main(%in: tensor<4x8xf32>, %in_i: tensor<4x8xi32>, %out: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xi32>) {
  %zero = arith.constant 0.0 : f32
  %zero_i = arith.constant 0 : i32
  %s:2 = xla_gpu.reduce(%in, %in_i) inits(%zero, %zero_i) dimensions=[0] combiner=@add
    : tensor<4x8xf32>, tensor<4x8xi32> to tensor<8xf32>, tensor<8xi32>
  return %s#0, %s#1 : tensor<8xf32>, tensor<8xi32>
}
