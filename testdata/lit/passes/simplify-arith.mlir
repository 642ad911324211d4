// `simplify-arith` folds comparisons that the operands' known ranges decide: launch ids
// with `xla.range`, function arguments with `xla.range`, loop induction variables.
// RUN: hlo-opt %s --simplify-arith --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @bounds_check
// CHECK-NOT: arith.cmpi
// CHECK-NOT: scf.if
// CHECK: return
func.func @bounds_check(%t: tensor<128xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c127 = arith.constant 127 : index
  %cst = arith.constant 0.000000e+00 : f32
  %tid = gpu.thread_id  x {xla.range = [0 : index, 127 : index]}
  %lo = arith.cmpi sge, %tid, %c0 : index
  %hi = arith.cmpi sle, %tid, %c127 : index
  %in = arith.andi %lo, %hi : i1
  %r = scf.if %in -> (f32) {
    %e = tensor.extract %t[%tid] : tensor<128xf32>
    scf.yield %e : f32
  } else {
    scf.yield %cst : f32
  }
  return %r : f32
}

// A check the ranges do not decide stays.
// CHECK-LABEL: func.func @undecided
// CHECK: arith.cmpi slt
func.func @undecided(%i: index {xla.range = [0 : index, 9 : index]}) -> i1 {
  %c5 = arith.constant 5 : index
  %0 = arith.cmpi slt, %i, %c5 : index
  return %0 : i1
}

// Loop bounds give the induction variable's range.
// CHECK-LABEL: func.func @loop
// CHECK-NOT: arith.cmpi
func.func @loop(%init: i1) -> i1 {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %iv = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (i1) {
    %lt = arith.cmpi ult, %iv, %c4 : index
    %a = arith.andi %acc, %lt : i1
    scf.yield %a : i1
  }
  return %r : i1
}

// `min`/`max` whose operands' ranges do not overlap become the winning operand, an
// `arith.addi` of known ranges included; overlapping ranges, or an unsigned op on a range
// that may be negative, stay.
// CHECK-LABEL: func.func @min_max
// CHECK-SAME: (%[[A:.*]]: index {{.*}}, %[[B:.*]]: index {{.*}}, %[[N:.*]]: index {{.*}})
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[B]], %[[B]] : index
// CHECK-NEXT: %[[KEEP:.*]] = arith.maxui %[[N]], %[[A]] : index
// CHECK-NEXT: %[[OVERLAP:.*]] = arith.minsi %[[N]], %[[B]] : index
// CHECK-NEXT: return %[[A]], %[[B]], %[[SUM]], %[[B]], %[[KEEP]], %[[OVERLAP]]
func.func @min_max(%a: index {xla.range = [12 : index, 42 : index]},
                   %b: index {xla.range = [63 : index, 100 : index]},
                   %n: index {xla.range = [-5 : index, 70 : index]})
    -> (index, index, index, index, index, index) {
  %0 = arith.minsi %b, %a : index
  %1 = arith.maxsi %a, %b : index
  %sum = arith.addi %b, %b : index
  %2 = arith.maxsi %sum, %b : index
  %3 = arith.minui %sum, %b : index
  %4 = arith.maxui %n, %a : index
  %5 = arith.minsi %n, %b : index
  return %0, %1, %2, %3, %4, %5 : index, index, index, index, index, index
}
