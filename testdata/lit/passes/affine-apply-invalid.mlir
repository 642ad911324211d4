// `affine.apply` refused where MLIR refuses it.
// RUN: not hlo-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: affine-apply-invalid.mlir:[[# @LINE + 2]]:3: error: 'affine.apply' op operand count and affine map dimension and symbol count must match (1 operands, 2 dimensions and symbols)
func.func @count(%a: index) -> index {
  %0 = affine.apply affine_map<(d0)[s0] -> (d0 + s0)>(%a)
  return %0 : index
}

// -----

// CHECK: affine-apply-invalid.mlir:[[# @LINE + 2]]:3: error: 'affine.apply' op mapping must produce one value
func.func @results(%a: index) -> index {
  %0 = affine.apply affine_map<(d0) -> (d0, d0)>(%a)
  return %0 : index
}

// -----

// CHECK: affine-apply-invalid.mlir:[[# @LINE + 2]]:21: error: expected an affine_map<...> attribute
func.func @not_a_map(%a: index) -> index {
  %0 = affine.apply 42 (%a)
  return %0 : index
}
