// RUN: hlo-opt %s --split-input-file --peel-loops | FileCheck %s
// RUN: hlo-opt %s --split-input-file --peel-loops --lower-xla-gpu-to-scf | FileCheck %s --check-prefix=SCF

// A range variable a constraint mentions is peeled when the main loop, without its last
// value, needs the constraint no more: the main loop runs first, then the tail for the last
// value, the loop-carried values passing on. Lowered, the main loop has no check.

// CHECK: #[[MAIN:.*]] = #xla_gpu.indexing_map<"(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 3], s0 in [0, 2]">
// CHECK: #[[TAIL:.*]] = #xla_gpu.indexing_map<"(d0)[s0] -> (d0 * 4 + 3), domain: d0 in [0, 2], s0 in [3, 3]">
// CHECK-LABEL: func.func @edge
// CHECK:         %[[M:.*]] = xla_gpu.loop (%d)[%{{.*}}] -> (%{{.*}}) in #[[MAIN]] iter_args(%{{.*}} = %init)
// CHECK:         %[[T:.*]] = xla_gpu.loop (%d)[%{{.*}}] -> (%{{.*}}) in #[[TAIL]] iter_args(%{{.*}} = %[[M]])
// CHECK:         return %[[T]]

// SCF-LABEL: func.func @edge
// SCF:         scf.for
// SCF-NOT:       scf.if
// SCF:         scf.yield
// SCF:         scf.if
#map = #xla_gpu.indexing_map<"(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 3], s0 in [0, 3], d0 * 4 + s0 in [0, 14]">
func.func @edge(%in: tensor<16xf32>, %d: index, %init: f32) -> f32 {
  %r = xla_gpu.loop (%d)[%s] -> (%i) in #map iter_args(%acc = %init) -> (f32) {
    %x = tensor.extract %in[%i] : tensor<16xf32>
    %y = arith.addf %acc, %x : f32
    xla_gpu.yield %y : f32
  }
  return %r : f32
}

// -----

// Nothing to peel: simplified, the constraint is a bound on s0 (d0 <= 3, so d0 + 8 s0 <= 20
// is s0 <= 2), and the loop stays as written.

// CHECK-LABEL: func.func @bound_in_disguise
// CHECK-COUNT-1: xla_gpu.loop
// CHECK-NOT:     xla_gpu.loop
#map = #xla_gpu.indexing_map<"(d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 3], d0 + s0 * 8 in [0, 20]">
func.func @bound_in_disguise(%in: tensor<16xf32>, %d: index, %init: f32) -> f32 {
  %r = xla_gpu.loop (%d)[%s] -> (%i) in #map iter_args(%acc = %init) -> (f32) {
    %x = tensor.extract %in[%i] : tensor<16xf32>
    %y = arith.addf %acc, %x : f32
    xla_gpu.yield %y : f32
  }
  return %r : f32
}
