// RUN: hlo-opt %s --lower-to-llvm | FileCheck %s

// Transcendental math on a vector: libdevice has scalar functions only, so each lane is
// one call, extracted and inserted at its row-major position (any rank; MLIR unrolls vector
// math the same way before calling libdevice). bf16 lanes are extended to f32 around it.
// CHECK-LABEL: llvm.func @lanes(
// CHECK-COUNT-6: llvm.call @__nv_sinf(
// CHECK-NOT:     llvm.call @__nv_sinf(
// CHECK-COUNT-2: llvm.call @__nv_expf(
// CHECK-NOT:     unrealized_conversion_cast
// CHECK:         llvm.return
func.func @lanes(%a: vector<2x3xf32>, %b: vector<2xbf16>) -> (vector<2x3xf32>, vector<2xbf16>) {
  %s = math.sin %a : vector<2x3xf32>
  %e = math.exp %b : vector<2xbf16>
  return %s, %e : vector<2x3xf32>, vector<2xbf16>
}
