// RUN: hlo-opt %s --split-input-file --unswitch-loops | FileCheck %s

// A loop whose whole body is an scf.if on a condition from outside the loop becomes an
// scf.if between two loops, each holding one branch (the inner ifs folded away).

// CHECK-LABEL: func.func @block_check
// CHECK:         %[[IN_RANGE:.*]] = arith.cmpi ult, %[[BLOCK:.*]], %{{.*}} : index
// CHECK-NEXT:    %[[R:.*]] = scf.if %[[IN_RANGE]] -> (tensor<64xf32>) {
// CHECK-NEXT:      %[[FOR:.*]] = scf.for
// CHECK:             tensor.extract
// CHECK-NEXT:        tensor.insert
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[FOR]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %out
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
func.func @block_check(%in: tensor<64xf32>, %out: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c3 = arith.constant 3 : index
  %block = gpu.block_id  x {xla.range = [0 : index, 15 : index]}
  %in_range = arith.cmpi ult, %block, %c3 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %out) -> (tensor<64xf32>) {
    %next = scf.if %in_range -> (tensor<64xf32>) {
      %base = arith.muli %block, %c4 : index
      %j = arith.addi %base, %i : index
      %x = tensor.extract %in[%j] : tensor<64xf32>
      %u = tensor.insert %x into %acc[%j] : tensor<64xf32>
      scf.yield %u : tensor<64xf32>
    } else {
      scf.yield %acc : tensor<64xf32>
    }
    scf.yield %next : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// Left alone: a condition on the induction variable, a body with more than the if, and a
// constant condition (the canonicalizer's to fold; the pass runs it only after unswitching).

// CHECK-LABEL: func.func @not_unswitched
// CHECK:         scf.for
// CHECK-NEXT:      arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      scf.if
// CHECK:         scf.for
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      scf.if %c
// CHECK:         scf.for
// CHECK-NEXT:      scf.if %true
func.func @not_unswitched(%x: f32, %c: i1) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %r0 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %x) -> (f32) {
    %small = arith.cmpi ult, %i, %c2 : index
    %next = scf.if %small -> (f32) {
      %d = arith.addf %acc, %x : f32
      scf.yield %d : f32
    } else {
      scf.yield %acc : f32
    }
    scf.yield %next : f32
  }
  %r1 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %x) -> (f32) {
    %d = arith.addf %acc, %x : f32
    %next = scf.if %c -> (f32) {
      %e = arith.mulf %d, %x : f32
      scf.yield %e : f32
    } else {
      scf.yield %d : f32
    }
    scf.yield %next : f32
  }
  %true = arith.constant true
  %r2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %r1) -> (f32) {
    %next = scf.if %true -> (f32) {
      %e = arith.mulf %acc, %x : f32
      scf.yield %e : f32
    } else {
      scf.yield %acc : f32
    }
    scf.yield %next : f32
  }
  return %r0, %r2 : f32, f32
}

// -----

// Both branches do work: each loop copy keeps its branch, and an if in a nest rises through
// every loop whose body it becomes.

// CHECK-LABEL: func.func @nest
// CHECK:         scf.if %c
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        scf.for
// CHECK-NEXT:          arith.addf
// CHECK:         } else {
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        scf.for
// CHECK-NEXT:          arith.mulf
func.func @nest(%x: f32, %c: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x) -> (f32) {
    %s = scf.for %j = %c0 to %c4 step %c1 iter_args(%b = %a) -> (f32) {
      %next = scf.if %c -> (f32) {
        %d = arith.addf %b, %x : f32
        scf.yield %d : f32
      } else {
        %e = arith.mulf %b, %x : f32
        scf.yield %e : f32
      }
      scf.yield %next : f32
    }
    scf.yield %s : f32
  }
  return %r : f32
}
