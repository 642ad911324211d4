// RUN: hlo-opt %s --split-input-file --recover-exp2 | FileCheck %s

// exp(x * c), c being ln 2 rounded to f32, tf32/f16 or bf16 (or one ulp off), becomes
// exp2(x); the product and the constant go unless something else reads them.

// CHECK-LABEL: func.func @f16_constant
// CHECK-NEXT:    %[[R:.*]] = math.exp2 %x : f16
// CHECK-NEXT:    return %[[R]]
func.func @f16_constant(%x: f16) -> f16 {
  %ln2 = arith.constant 0.693359375 : f16
  %p = arith.mulf %x, %ln2 : f16
  %e = math.exp %p : f16
  return %e : f16
}

// -----

// Left alone: a vector, the constant on the left (canonicalize moves it), a constant that
// is ln 2 in no type, and a product that is not the exp's operand.

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     math.exp2
// CHECK-COUNT-4: math.exp %
// CHECK-NOT:     math.exp2
func.func @kept(%x: f32, %v: vector<4xf32>) -> (vector<4xf32>, f32, f32, f32) {
  %ln2v = arith.constant dense<0.693147182> : vector<4xf32>
  %pv = arith.mulf %v, %ln2v : vector<4xf32>
  %ev = math.exp %pv : vector<4xf32>
  %ln2 = arith.constant 0.693147182 : f32
  %left = arith.mulf %ln2, %x : f32
  %e1 = math.exp %left : f32
  %near = arith.constant 0.6931 : f32
  %p2 = arith.mulf %x, %near : f32
  %e2 = math.exp %p2 : f32
  %s = arith.addf %x, %ln2 : f32
  %e3 = math.exp %s : f32
  return %ev, %e1, %e2, %e3 : vector<4xf32>, f32, f32, f32
}
