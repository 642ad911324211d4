// RUN: hlo-opt %s --split-input-file --erase-dead-functions | FileCheck %s
// RUN: hlo-opt %s --split-input-file --inline --erase-dead-functions | FileCheck %s --check-prefix=INLINED

// Private functions live on while something public reaches them: through a pure_call, a
// func.call, a shuffle_reduce combiner, transitively. Unreachable ones go, even when they
// call each other.
// CHECK-LABEL: func.func @main
// CHECK:       func.func private @called
// CHECK:       func.func private @transitive
// CHECK:       func.func private @combiner
// CHECK:       func.func @public_unused
// CHECK-NOT:   func.func
func.func @main(%x: f32) -> f32 {
  %0 = xla_gpu.pure_call @called(%x) {noinline} : (f32) -> f32
  %1 = xla_gpu.shuffle_reduce(%0) to 16 combiner=@combiner : f32
  return %1 : f32
}
func.func private @called(%x: f32) -> f32 {
  %0 = func.call @transitive(%x) {no_inline} : (f32) -> f32
  return %0 : f32
}
func.func private @transitive(%x: f32) -> f32 {
  return %x : f32
}
func.func private @combiner(%a: f32, %b: f32) -> f32 {
  %0 = arith.addf %a, %b : f32
  return %0 : f32
}
func.func private @dead(%x: f32) -> f32 {
  %0 = func.call @dead_cycle(%x) : (f32) -> f32
  return %0 : f32
}
func.func private @dead_cycle(%x: f32) -> f32 {
  %0 = func.call @dead(%x) : (f32) -> f32
  return %0 : f32
}
func.func @public_unused(%x: f32) -> f32 {
  return %x : f32
}

// -----

// After inlining, @subgraph is still referenced, but only by @unused, which nothing
// public reaches: both go.
// INLINED-LABEL: func.func @kernel
// INLINED-NOT:     xla_gpu.pure_call
// INLINED:         math.exp
// INLINED-NOT:   func.func private
// CHECK-LABEL: func.func @kernel
// CHECK:       func.func private @subgraph
// CHECK-NOT:   func.func private @unused
func.func @kernel(%t: tensor<8xf32>, %i: index) -> f32 {
  %a = xla_gpu.pure_call @subgraph(%t, %i) : (tensor<8xf32>, index) -> f32
  return %a : f32
}
func.func private @subgraph(%t: tensor<8xf32>, %i: index) -> f32 {
  %e = tensor.extract %t[%i] : tensor<8xf32>
  %0 = math.exp %e : f32
  return %0 : f32
}
func.func private @unused(%t: tensor<8xf32>, %i: index) -> f32 {
  %a = xla_gpu.pure_call @subgraph(%t, %i) {noinline} : (tensor<8xf32>, index) -> f32
  return %a : f32
}
