// RUN: not hlo-opt %s --split-input-file 2>&1 | FileCheck %s

// The verifier's errors, XLA's words where XLA has them.

// CHECK: xla-gpu-reduce-invalid.mlir:[[# @LINE + 2]]:3: error: 'xla_gpu.reduce' op combiner `@missing` not found
func.func @f(%in: tensor<4x8xf32>, %init: f32) -> tensor<8xf32> {
  %s = xla_gpu.reduce(%in) inits(%init) dimensions=[0] combiner=@missing : tensor<4x8xf32> to tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// CHECK: xla-gpu-reduce-invalid.mlir:[[# @LINE + 7]]:3: error: 'xla_gpu.reduce' op combiner `@add expected to have type '(f32, f32) -> f32' but got '(f32, f32) -> f64'
func.func private @add(%a: f32, %b: f32) -> f64 {
  %x = arith.addf %a, %b : f32
  %y = arith.extf %x : f32 to f64
  return %y : f64
}
func.func @f(%in: tensor<4x8xf32>, %init: f32) -> tensor<8xf32> {
  %s = xla_gpu.reduce(%in) inits(%init) dimensions=[0] combiner=@add : tensor<4x8xf32> to tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// CHECK: xla-gpu-reduce-invalid.mlir:[[# @LINE + 6]]:3: error: 'xla_gpu.reduce' op dimensions [2] must be increasing dimensions of 'tensor<4x8xf32>'
func.func private @add(%a: f32, %b: f32) -> f32 {
  %x = arith.addf %a, %b : f32
  return %x : f32
}
func.func @f(%in: tensor<4x8xf32>, %init: f32) -> tensor<8xf32> {
  %s = xla_gpu.reduce(%in) inits(%init) dimensions=[2] combiner=@add : tensor<4x8xf32> to tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// CHECK: xla-gpu-reduce-invalid.mlir:[[# @LINE + 6]]:3: error: 'xla_gpu.reduce' op result type 'tensor<4xf32>' does not match inferred type 'tensor<8xf32>'
func.func private @add(%a: f32, %b: f32) -> f32 {
  %x = arith.addf %a, %b : f32
  return %x : f32
}
func.func @f(%in: tensor<4x8xf32>, %init: f32) -> tensor<4xf32> {
  %s = xla_gpu.reduce(%in) inits(%init) dimensions=[0] combiner=@add : tensor<4x8xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// CHECK: xla-gpu-reduce-invalid.mlir:[[# @LINE + 2]]:22: error: expects as many inits as tensor inputs, each of the input's element type
func.func @f(%in: tensor<4x8xf32>, %init: f32) -> tensor<8xf32> {
  %s = xla_gpu.reduce(%in) inits(%init, %init) dimensions=[0] combiner=@add : tensor<4x8xf32> to tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// CHECK: xla-gpu-reduce-invalid.mlir:[[# @LINE + 2]]:3: error: 'xla_gpu.reduce' op init type 'i32' does not match inferred type 'f32'
func.func @f(%in: tensor<4x8xf32>, %init: i32) -> tensor<8xf32> {
  %s = "xla_gpu.reduce"(%in, %init) <{combiner = @add, dimensions = array<i64: 0>}> : (tensor<4x8xf32>, i32) -> tensor<8xf32>
  return %s : tensor<8xf32>
}
