// A vector type whose element count overflows 64 bits.
// PASSES: --vectorize-loads-stores --unroll-loops
// EXPECT: error: vector type is too large
func.func @main(%v: vector<9223372036854775807x9223372036854775807xf32>) -> vector<9223372036854775807x9223372036854775807xf32> {
  return %v : vector<9223372036854775807x9223372036854775807xf32>
}
