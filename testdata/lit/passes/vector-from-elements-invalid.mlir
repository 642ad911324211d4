// `vector.from_elements` refused where MLIR refuses it, located (run by vector-from-elements.mlir).

// CHECK: vector-from-elements-invalid.mlir:[[# @LINE + 2]]:29: error: 3 operands present, but expected 2
func.func @count(%a: f32) -> vector<2xf32> {
  %v = vector.from_elements %a, %a, %a : vector<2xf32>
  return %v : vector<2xf32>
}

// -----

// CHECK: vector-from-elements-invalid.mlir:[[# @LINE + 2]]:29: error: use of value '%a' expects different type than prior uses: 'i32' vs 'f32'
func.func @element_type(%a: f32) -> vector<2xi32> {
  %v = vector.from_elements %a, %a : vector<2xi32>
  return %v : vector<2xi32>
}

// -----

// CHECK: vector-from-elements-invalid.mlir:[[# @LINE + 2]]:34: error: expected a vector type, got 'f32'
func.func @not_a_vector(%a: f32) -> f32 {
  %v = vector.from_elements %a : f32
  return %v : f32
}

// -----

// Vector types have positive sizes, as in MLIR.
// CHECK: vector-from-elements-invalid.mlir:[[# @LINE + 1]]:22: error: vector types must have positive constant sizes but got 0
func.func @empty(%v: vector<0xf32>) {
  return
}
