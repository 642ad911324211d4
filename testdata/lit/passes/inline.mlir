// RUN: hlo-opt %s --split-input-file --inline | FileCheck %s

// The seed's GELU: @gelu has one use, so its body moves into the loop and it is erased.
#map = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[INPUT:.*]]: tensor<6x512x4096xbf16>, %[[OUTPUT:.*]]: tensor<6x512x4096xbf16>)
// CHECK:         xla_gpu.loop ({{.*}})[%{{.*}}] -> (%[[D0:.*]], %[[D1:.*]], %[[D2:.*]]) in #map iter_args(%[[ITER:.*]] = %[[OUTPUT]])
// CHECK-COUNT-4:   arith.constant
// CHECK-NEXT:      %[[X:.*]] = tensor.extract %[[INPUT]][%[[D0]], %[[D1]], %[[D2]]]
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : bf16
// CHECK-NEXT:      %[[CUBE:.*]] = arith.mulf %[[SQ]], %[[X]] : bf16
// CHECK:           math.tanh
// CHECK:           %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} : bf16
// CHECK-NEXT:      %[[NEW:.*]] = tensor.insert %[[Y]] into %[[ITER]][%[[D0]], %[[D1]], %[[D2]]]
// CHECK-NEXT:      xla_gpu.yield %[[NEW]]
// CHECK-NOT:     xla_gpu.pure_call
// CHECK-NOT:     @gelu
func.func @main(%input: tensor<6x512x4096xbf16>, %output: tensor<6x512x4096xbf16>) -> tensor<6x512x4096xbf16> {
  %thread_id_x = gpu.thread_id  x {xla.range = [0 : index, 127 : index]}
  %block_id_x = gpu.block_id  x {xla.range = [0 : index, 24575 : index]}
  %xla_loop = xla_gpu.loop (%thread_id_x, %block_id_x)[%vector_index] -> (%dim0, %dim1, %dim2) in #map iter_args(%iter = %output) -> (tensor<6x512x4096xbf16>) {
    %pure_call = xla_gpu.pure_call @gelu(%input, %dim0, %dim1, %dim2) : (tensor<6x512x4096xbf16>, index, index, index) -> bf16
    %inserted = tensor.insert %pure_call into %iter[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
    xla_gpu.yield %inserted : tensor<6x512x4096xbf16>
  }
  return %xla_loop : tensor<6x512x4096xbf16>
}
func.func private @gelu(%arg0: tensor<6x512x4096xbf16>, %i: index, %j: index, %k: index) -> bf16 {
  %cst = arith.constant 5.000000e-01 : bf16
  %cst_0 = arith.constant 1.000000e+00 : bf16
  %cst_1 = arith.constant 7.968750e-01 : bf16
  %cst_2 = arith.constant 4.467770e-02 : bf16
  %extracted = tensor.extract %arg0[%i, %j, %k] : tensor<6x512x4096xbf16>
  %0 = arith.mulf %extracted, %extracted : bf16
  %1 = arith.mulf %0, %extracted : bf16
  %2 = arith.mulf %1, %cst_2 : bf16
  %3 = arith.addf %extracted, %2 : bf16
  %4 = arith.mulf %3, %cst_1 : bf16
  %5 = math.tanh %4 : bf16
  %6 = arith.addf %5, %cst_0 : bf16
  %7 = arith.mulf %6, %cst : bf16
  %8 = arith.mulf %extracted, %7 : bf16
  return %8 : bf16
}

// -----

// A small callee (at most 8 ops) is inlined at every call site, even with different
// arguments: copied while it has other uses, moved (and erased) at its last one.
// CHECK-LABEL: func.func @small_callee_called_twice
// CHECK-SAME:      (%[[T:.*]]: tensor<16xf32>, %[[I:.*]]: index, %[[J:.*]]: index)
// CHECK-NEXT:    %[[A:.*]] = tensor.extract %[[T]][%[[I]]]
// CHECK-NEXT:    %[[LA:.*]] = math.log %[[A]]
// CHECK-NEXT:    %[[B:.*]] = tensor.extract %[[T]][%[[J]]]
// CHECK-NEXT:    %[[LB:.*]] = math.log %[[B]]
// CHECK-NEXT:    %[[SUM:.*]] = arith.addf %[[LA]], %[[LB]]
// CHECK-NEXT:    return %[[SUM]]
// CHECK-NOT:   func.func private @log
func.func @small_callee_called_twice(%t: tensor<16xf32>, %i: index, %j: index) -> f32 {
  %a = xla_gpu.pure_call @log(%t, %i) : (tensor<16xf32>, index) -> f32
  %b = xla_gpu.pure_call @log(%t, %j) : (tensor<16xf32>, index) -> f32
  %sum = arith.addf %a, %b : f32
  return %sum : f32
}
func.func private @log(%t: tensor<16xf32>, %i: index) -> f32 {
  %e = tensor.extract %t[%i] : tensor<16xf32>
  %l = math.log %e : f32
  return %l : f32
}

// -----

// A large callee (more than 8 ops) called twice with different arguments is not copied:
// each copy would evaluate the whole subgraph again.
// CHECK-LABEL: func.func @large_callee_called_with_different_arguments
// CHECK:         xla_gpu.pure_call @large(%{{.*}}, %[[I:.*]]) :
// CHECK:         xla_gpu.pure_call @large(%{{.*}}, %[[J:.*]]) :
// CHECK:       func.func private @large
// CHECK-COUNT-8: math.exp
func.func @large_callee_called_with_different_arguments(%t: tensor<16xf32>, %i: index, %j: index) -> f32 {
  %a = xla_gpu.pure_call @large(%t, %i) : (tensor<16xf32>, index) -> f32
  %b = xla_gpu.pure_call @large(%t, %j) : (tensor<16xf32>, index) -> f32
  %sum = arith.addf %a, %b : f32
  return %sum : f32
}
func.func private @large(%t: tensor<16xf32>, %i: index) -> f32 {
  %e = tensor.extract %t[%i] : tensor<16xf32>
  %0 = math.exp %e : f32
  %1 = math.exp %0 : f32
  %2 = math.exp %1 : f32
  %3 = math.exp %2 : f32
  %4 = math.exp %3 : f32
  %5 = math.exp %4 : f32
  %6 = math.exp %5 : f32
  %7 = math.exp %6 : f32
  return %7 : f32
}

// -----

// XLA's exception for a large callee with other uses: the only call in its block (an equal
// call reuses the first one's results) and it calls a function (@leaf) the block also calls,
// so the copy shares work with its neighbours after cse. Its last use (in @other) then moves
// the body. @large_alone shares nothing with its callers' blocks: it stays a function.
// CHECK-LABEL: func.func @large_callee_sharing_a_leaf
// CHECK-SAME:      (%[[X:.*]]: f32)
// CHECK-NEXT:    xla_gpu.pure_call @leaf(%[[X]], %[[X]]) {noinline}
// CHECK-COUNT-7: math.exp
// CHECK-NEXT:    %[[R:.*]] = math.exp
// CHECK-NEXT:    %[[C:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[R]], %[[R]]
// CHECK-NEXT:    arith.addf %[[S]], %[[C]]
// CHECK-LABEL: func.func @other
// CHECK-NEXT:    xla_gpu.pure_call @leaf
// CHECK-LABEL: func.func @uses_large_alone
// CHECK-NEXT:    xla_gpu.pure_call @large_alone
// CHECK-LABEL: func.func @uses_large_alone_too
// CHECK-NEXT:    xla_gpu.pure_call @large_alone
// CHECK-NOT:   func.func private @large(
// CHECK:       func.func private @large_alone
func.func @large_callee_sharing_a_leaf(%x: f32) -> f32 {
  %a = xla_gpu.pure_call @large(%x) : (f32) -> f32
  %b = xla_gpu.pure_call @large(%x) : (f32) -> f32
  %c = xla_gpu.pure_call @leaf(%x, %x) : (f32, f32) -> f32
  %0 = arith.addf %a, %b : f32
  %1 = arith.addf %0, %c : f32
  return %1 : f32
}
func.func @other(%x: f32, %y: f32) -> f32 {
  %a = xla_gpu.pure_call @large(%y) : (f32) -> f32
  return %a : f32
}
func.func @uses_large_alone(%x: f32) -> f32 {
  %a = xla_gpu.pure_call @large_alone(%x) : (f32) -> f32
  return %a : f32
}
func.func @uses_large_alone_too(%x: f32) -> f32 {
  %a = xla_gpu.pure_call @large_alone(%x) : (f32) -> f32
  return %a : f32
}
func.func private @large(%x: f32) -> f32 {
  %l = xla_gpu.pure_call @leaf(%x, %x) {noinline} : (f32, f32) -> f32
  %0 = math.exp %l : f32
  %1 = math.exp %0 : f32
  %2 = math.exp %1 : f32
  %3 = math.exp %2 : f32
  %4 = math.exp %3 : f32
  %5 = math.exp %4 : f32
  %6 = math.exp %5 : f32
  %7 = math.exp %6 : f32
  return %7 : f32
}
func.func private @large_alone(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  %1 = math.exp %0 : f32
  %2 = math.exp %1 : f32
  %3 = math.exp %2 : f32
  %4 = math.exp %3 : f32
  %5 = math.exp %4 : f32
  %6 = math.exp %5 : f32
  %7 = math.exp %6 : f32
  %8 = math.exp %7 : f32
  return %8 : f32
}
func.func private @leaf(%x: f32, %y: f32) -> f32 {
  %0 = arith.mulf %x, %y : f32
  return %0 : f32
}

// -----

// Never inlined: a `noinline` call, a callee marked `no_inline`, a public callee and a
// recursive one. A func.call of a private function is inlined like a pure_call.
// CHECK-LABEL: func.func @not_inlined
// CHECK-NEXT:    xla_gpu.pure_call @leaf(%{{.*}}) {noinline}
// CHECK-NEXT:    call @marked
// CHECK-NEXT:    call @public
// CHECK-NEXT:    call @recursive
// CHECK-NEXT:    %[[N:.*]] = arith.negf
// CHECK-NEXT:    return
// CHECK-NOT:   func.func private @callee
func.func @not_inlined(%x: f32) -> f32 {
  %0 = xla_gpu.pure_call @leaf(%x) {noinline} : (f32) -> f32
  %1 = func.call @marked(%0) : (f32) -> f32
  %2 = func.call @public(%1) : (f32) -> f32
  %3 = func.call @recursive(%2) : (f32) -> f32
  %4 = func.call @callee(%3) : (f32) -> f32
  return %4 : f32
}
func.func private @leaf(%x: f32) -> f32 {
  return %x : f32
}
func.func private @marked(%x: f32) -> f32 attributes {no_inline} {
  return %x : f32
}
func.func @public(%x: f32) -> f32 {
  return %x : f32
}
func.func private @recursive(%x: f32) -> f32 {
  %0 = func.call @recursive(%x) : (f32) -> f32
  return %0 : f32
}
func.func private @callee(%x: f32) -> f32 {
  %0 = arith.negf %x : f32
  return %0 : f32
}
