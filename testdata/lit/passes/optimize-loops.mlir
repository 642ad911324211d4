// RUN: hlo-opt %s --split-input-file --optimize-loops | FileCheck %s
// RUN: hlo-opt %s --split-input-file --optimize-loops=max_unroll_factor=12 | FileCheck %s --check-prefix=MAX12
// RUN: hlo-opt %s --split-input-file --pass-pipeline='optimize-loops{max_unroll_factor=12}' | FileCheck %s --check-prefix=MAX12

// XLA's unrolling: by the largest divisor of the trip count not above 400 / size (size:
// XLA's estimate, here exp 20 + log 20 + addf + addi + the yield = 43, so 9, and 12 has
// 6), or fully up to max_unroll_factor. Copy i reads the induction variable plus i and
// the values the copy before it yields.

// CHECK-LABEL: func.func @by_divisor
// CHECK:         %[[C6:.*]] = arith.constant 6 : index
// CHECK:         scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %[[C6]] iter_args(%[[V:.*]] = %arg0, %[[S:.*]] = %{{.*}})
// CHECK:           %[[LOG0:.*]] = math.log
// CHECK:           %[[SUM0:.*]] = arith.addi %[[S]], %[[IV]]
// CHECK:           %[[IV1:.*]] = arith.addi %[[IV]], %{{.*}} : index
// CHECK:           math.exp %[[LOG0]]
// CHECK:           arith.addi %[[SUM0]], %[[IV1]]
// CHECK-COUNT-4:   math.log
// CHECK:           scf.yield

// MAX12-LABEL: func.func @by_divisor
// MAX12-NOT:     scf.for
// MAX12-COUNT-12: math.exp
func.func @by_divisor(%arg0: f32) -> (f32, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %r:2 = scf.for %i = %c0 to %c12 step %c1 iter_args(%v = %arg0, %s = %c0) -> (f32, index) {
    %e = math.exp %v : f32
    %a = arith.addf %v, %e : f32
    %l = math.log %a : f32
    %t = arith.addi %s, %i : index
    scf.yield %l, %t : f32, index
  }
  return %r#0, %r#1 : f32, index
}

// -----

// Left alone: a call in the body, a step other than 1, a trip count of 13 (prime, above
// 9), a nested loop (the inner one, small, is unrolled fully first).

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: scf.for
// CHECK-NOT:     scf.for
// CHECK-COUNT-2: arith.mulf
func.func private @g(%x: f32) -> f32 {
  return %x : f32
}
func.func @kept(%x: f32) -> (f32, f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c13 = arith.constant 13 : index
  %r0 = scf.for %i = %c0 to %c4 step %c1 iter_args(%v = %x) -> (f32) {
    %y = func.call @g(%v) : (f32) -> f32
    scf.yield %y : f32
  }
  %r1 = scf.for %i = %c0 to %c4 step %c2 iter_args(%v = %x) -> (f32) {
    %y = arith.addf %v, %v : f32
    scf.yield %y : f32
  }
  %r2 = scf.for %i = %c0 to %c13 step %c1 iter_args(%v = %x) -> (f32) {
    %e = math.exp %v : f32
    %l = math.log %e : f32
    %f = math.exp %l : f32
    scf.yield %f : f32
  }
  %r3 = scf.for %i = %c0 to %c13 step %c1 iter_args(%v = %x) -> (f32) {
    %s = scf.for %j = %c0 to %c2 step %c1 iter_args(%w = %v) -> (f32) {
      %y = arith.mulf %w, %w : f32
      scf.yield %y : f32
    }
    %e = math.exp %s : f32
    %l = math.log %e : f32
    %f = math.exp %l : f32
    scf.yield %f : f32
  }
  return %r0, %r1, %r2, %r3 : f32, f32, f32, f32
}
