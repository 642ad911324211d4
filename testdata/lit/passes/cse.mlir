// RUN: hlo-opt %s --split-input-file --cse | FileCheck %s

// Common subexpression elimination. Every expectation here is also what mlir-opt 22's
// --cse computes for the same input.

// Equal pure ops merge; what used the second uses the first.
// CHECK-LABEL: func.func @duplicates
// CHECK-SAME:    (%[[A:.*]]: i32, %[[B:.*]]: i32)
// CHECK-NEXT:    %[[M:.*]] = arith.muli %[[A]], %[[B]] : i32
// CHECK-NEXT:    %[[S:.*]] = arith.addi %[[M]], %[[M]] : i32
// CHECK-NEXT:    return %[[M]], %[[M]], %[[S]], %[[S]] :
func.func @duplicates(%a: i32, %b: i32) -> (i32, i32, i32, i32) {
  %0 = arith.muli %a, %b : i32
  %1 = arith.muli %a, %b : i32
  %2 = arith.addi %0, %1 : i32
  %3 = arith.addi %0, %1 : i32
  return %0, %1, %2, %3 : i32, i32, i32, i32
}

// -----

// Operands of commutative ops compare as a set; of others, in order.
// CHECK-LABEL: func.func @commutative
// CHECK-SAME:    (%[[A:.*]]: i32, %[[B:.*]]: i32, %[[X:.*]]: f32, %[[Y:.*]]: f32)
// CHECK-NEXT:    %[[ADD:.*]] = arith.addi %[[A]], %[[B]] : i32
// CHECK-NEXT:    %[[SUB1:.*]] = arith.subi %[[A]], %[[B]] : i32
// CHECK-NEXT:    %[[SUB2:.*]] = arith.subi %[[B]], %[[A]] : i32
// CHECK-NEXT:    %[[MUL:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:    %[[DIV1:.*]] = arith.divf %[[X]], %[[Y]] : f32
// CHECK-NEXT:    %[[DIV2:.*]] = arith.divf %[[Y]], %[[X]] : f32
// CHECK-NEXT:    return %[[ADD]], %[[ADD]], %[[SUB1]], %[[SUB2]], %[[MUL]], %[[MUL]], %[[DIV1]], %[[DIV2]] :
func.func @commutative(%a: i32, %b: i32, %x: f32, %y: f32) -> (i32, i32, i32, i32, f32, f32, f32, f32) {
  %0 = arith.addi %a, %b : i32
  %1 = arith.addi %b, %a : i32
  %2 = arith.subi %a, %b : i32
  %3 = arith.subi %b, %a : i32
  %4 = arith.mulf %x, %y : f32
  %5 = arith.mulf %y, %x : f32
  %6 = arith.divf %x, %y : f32
  %7 = arith.divf %y, %x : f32
  return %0, %1, %2, %3, %4, %5, %6, %7 : i32, i32, i32, i32, f32, f32, f32, f32
}

// -----

// Different predicates, flags or result types make different ops.
// CHECK-LABEL: func.func @attributes_and_types
// CHECK-NEXT:    arith.cmpi slt
// CHECK-NEXT:    arith.cmpi sgt
// CHECK-NEXT:    arith.addf {{.*}} fastmath<fast>
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    arith.addi {{.*}} overflow<nsw>
// CHECK-NEXT:    arith.addi
// CHECK-NEXT:    arith.index_cast {{.*}} to i32
// CHECK-NEXT:    arith.index_cast {{.*}} to i64
// CHECK-NEXT:    return
func.func @attributes_and_types(%a: i32, %x: f32, %i: index) -> (i1, i1, f32, f32, i32, i32, i32, i64) {
  %0 = arith.cmpi slt, %a, %a : i32
  %1 = arith.cmpi sgt, %a, %a : i32
  %2 = arith.addf %x, %x fastmath<fast> : f32
  %3 = arith.addf %x, %x : f32
  %4 = arith.addi %a, %a overflow<nsw> : i32
  %5 = arith.addi %a, %a : i32
  %6 = arith.index_cast %i : index to i32
  %7 = arith.index_cast %i : index to i64
  return %0, %1, %2, %3, %4, %5, %6, %7 : i1, i1, f32, f32, i32, i32, i32, i64
}

// -----

// Calls may have side effects: never merged.
// CHECK-LABEL: func.func @side_effects
// CHECK-NEXT:    call @effect
// CHECK-NEXT:    call @effect
// CHECK-NEXT:    return
func.func private @effect(i32) -> i32

func.func @side_effects(%a: i32) -> (i32, i32) {
  %0 = func.call @effect(%a) : (i32) -> i32
  %1 = func.call @effect(%a) : (i32) -> i32
  return %0, %1 : i32, i32
}

// -----

// An op of an enclosing block is visible in a loop body (and replaces the copy there);
// ops of one branch are invisible to the other branch and after the scf.if.
// CHECK-LABEL: func.func @nested_regions
// CHECK-SAME:    (%[[A:.*]]: index, %[[N:.*]]: index, %{{.*}}: i1)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[OUTER:.*]] = arith.muli %[[A]], %[[A]] : index
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[C0]])
// CHECK-NEXT:      %[[DEP:.*]] = arith.muli %[[I]], %[[I]] : index
// CHECK-NEXT:      %[[S0:.*]] = arith.addi %[[ACC]], %[[OUTER]] : index
// CHECK-NEXT:      %[[S1:.*]] = arith.addi %[[S0]], %[[DEP]] : index
// CHECK-NEXT:      %[[S2:.*]] = arith.addi %[[S1]], %[[C1]] : index
// CHECK-NEXT:      scf.yield %[[S2]]
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      arith.addi %[[A]], %[[N]]
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      arith.addi %[[A]], %[[N]]
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    arith.addi %[[A]], %[[N]]
// CHECK-NEXT:    arith.muli %[[A]], %[[N]]
func.func @nested_regions(%a: index, %n: index, %c: i1) -> (index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %outer = arith.muli %a, %a : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
    %c1_0 = arith.constant 1 : index
    %inner = arith.muli %a, %a : index
    %dep = arith.muli %i, %i : index
    %s0 = arith.addi %acc, %inner : index
    %s1 = arith.addi %s0, %dep : index
    %s2 = arith.addi %s1, %c1_0 : index
    scf.yield %s2 : index
  }
  %b = scf.if %c -> (index) {
    %t = arith.addi %a, %n : index
    scf.yield %t : index
  } else {
    %e = arith.addi %a, %n : index
    scf.yield %e : index
  }
  %after = arith.addi %a, %n : index
  %dep2 = arith.muli %a, %n : index
  %sum = arith.addi %b, %after : index
  %sum2 = arith.addi %sum, %dep2 : index
  %sum3 = arith.addi %sum2, %outer : index
  return %r, %sum3 : index, index
}

// -----

// Functions are isolated from above: each keeps its own constants.
// CHECK-LABEL: func.func @f
// CHECK-NEXT:    arith.constant 7 : i32
// CHECK-LABEL: func.func @g
// CHECK-NEXT:    %[[C:.*]] = arith.constant 7 : i32
// CHECK-NEXT:    arith.addi %[[C]], %[[C]] : i32
func.func @f() -> i32 {
  %c7 = arith.constant 7 : i32
  return %c7 : i32
}

func.func @g() -> i32 {
  %c7 = arith.constant 7 : i32
  %c7_0 = arith.constant 7 : i32
  %0 = arith.addi %c7, %c7_0 : i32
  return %0 : i32
}

// -----

// Unused pure ops are erased; tensor reads and empty tensors are pure and merge.
// CHECK-LABEL: func.func @dead_and_tensors
// CHECK-NEXT:    %[[E:.*]] = tensor.extract
// CHECK-NEXT:    %[[T:.*]] = tensor.empty() : tensor<2xf32>
// CHECK-NEXT:    return %[[E]], %[[E]], %[[T]], %[[T]] :
func.func @dead_and_tensors(%t: tensor<4xf32>, %i: index) -> (f32, f32, tensor<2xf32>, tensor<2xf32>) {
  %unused = arith.addi %i, %i : index
  %0 = tensor.extract %t[%i] : tensor<4xf32>
  %1 = tensor.extract %t[%i] : tensor<4xf32>
  %2 = tensor.empty() : tensor<2xf32>
  %3 = tensor.empty() : tensor<2xf32>
  return %0, %1, %2, %3 : f32, f32, tensor<2xf32>, tensor<2xf32>
}
