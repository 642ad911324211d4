// Narrow float literals refused, located (run by narrow-float-literal.mlir).

// f8E4M3FN has no infinity: 1000 is out of its range.
// CHECK: narrow-float-literal-invalid.mlir:[[# @LINE + 2]]:23: error: float literal out of range for type 'f8E4M3FN'
func.func @too_big() -> f8E4M3FN {
  %0 = arith.constant 1000.0 : f8E4M3FN
  return %0 : f8E4M3FN
}

// -----

// CHECK: narrow-float-literal-invalid.mlir:[[# @LINE + 2]]:23: error: hexadecimal float constant out of range for type
func.func @wide_bits() -> f4E2M1FN {
  %0 = arith.constant 0x1F : f4E2M1FN
  return %0 : f4E2M1FN
}

// -----

// f8E8M0FNU has no sign and no zero.
// CHECK: narrow-float-literal-invalid.mlir:[[# @LINE + 2]]:35: error: float literal out of range for type 'f8E8M0FNU'
func.func @no_zero() -> tensor<2xf8E8M0FNU> {
  %0 = arith.constant dense<[1.0, 0.0]> : tensor<2xf8E8M0FNU>
  return %0 : tensor<2xf8E8M0FNU>
}

// -----

// A bit pattern takes no sign, as in MLIR (for every float type).
// CHECK: narrow-float-literal-invalid.mlir:[[# @LINE + 2]]:23: error: hexadecimal float literal should not have a leading minus
func.func @signed_bits() -> f8E8M0FNU {
  %0 = arith.constant -0x1 : f8E8M0FNU
  return %0 : f8E8M0FNU
}

// -----

// CHECK: narrow-float-literal-invalid.mlir:[[# @LINE + 2]]:30: error: hexadecimal float literal should not have a leading minus
func.func @signed_dense_bits() -> tensor<1xf32> {
  %0 = arith.constant dense<[-0x1]> : tensor<1xf32>
  return %0 : tensor<1xf32>
}
