// `complex<...>` and the `complex` ops, refused where MLIR refuses them.
// RUN: not hlo-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: complex-type-invalid.mlir:[[# @LINE + 2]]:3: error: 'complex.constant' op requires 'value' to be a complex constant, represented as array of two f32 values
func.func @wrong_parts() -> complex<f32> {
  %k = complex.constant [1.0 : f64, 2.0 : f64] : complex<f32>
  return %k : complex<f32>
}

// -----

// CHECK: complex-type-invalid.mlir:[[# @LINE + 1]]:39: error: invalid element type for complex: 'i32'
func.func @integer_parts() -> complex<i32> {
  %c = arith.constant 0 : index
  return %c : index
}

// -----

// CHECK: complex-type-invalid.mlir:[[# @LINE + 2]]:3: error: 'complex.add' op requires the same type for all operands and results
func.func @mixed(%a: complex<f32>, %b: complex<f64>) -> complex<f32> {
  %s = "complex.add"(%a, %b) : (complex<f32>, complex<f64>) -> complex<f32>
  return %s : complex<f32>
}
