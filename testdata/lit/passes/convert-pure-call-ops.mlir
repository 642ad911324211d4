// RUN: hlo-opt %s --convert-pure-call-ops | FileCheck %s
// RUN: hlo-opt %s --cse --convert-pure-call-ops | FileCheck %s --check-prefix=CSE

// Every xla_gpu.pure_call becomes a func.call of the same callee, operands and results,
// nested ones too, its other attributes kept. Before the conversion, cse merges equal pure
// calls (the one in the loop reuses the one before it); func.calls it leaves alone.

// CHECK-LABEL: func.func @caller
// CHECK:         %[[PAIR:.*]]:2 = call @pair(%arg0) : (f32) -> (f32, f32)
// CHECK:         scf.for
// CHECK:           %[[IN_LOOP:.*]]:2 = func.call @pair(%arg0) : (f32) -> (f32, f32)
// CHECK:           arith.addf %[[IN_LOOP]]#1, %{{.*}} : f32
// CHECK:         %[[SUM:.*]] = arith.addf %[[PAIR]]#0, %{{.*}} : f32
// CHECK:         call @pair(%[[SUM]]) {noinline} : (f32) -> (f32, f32)
// CHECK-NOT:     pure_call

// CSE-LABEL: func.func @caller
// CSE:         %[[PAIR:.*]]:2 = call @pair(%arg0) : (f32) -> (f32, f32)
// CSE:         scf.for
// CSE-NOT:       call
// CSE:           arith.addf %[[PAIR]]#1, %{{.*}} : f32
func.func private @pair(%x: f32) -> (f32, f32) {
  %y = arith.addf %x, %x : f32
  func.return %x, %y : f32, f32
}
func.func @caller(%arg0: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p:2 = xla_gpu.pure_call @pair(%arg0) : (f32) -> (f32, f32)
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %p#1) -> (f32) {
    %q:2 = xla_gpu.pure_call @pair(%arg0) : (f32) -> (f32, f32)
    %next = arith.addf %q#1, %acc : f32
    scf.yield %next : f32
  }
  %r = arith.addf %p#0, %sum : f32
  %t:2 = xla_gpu.pure_call @pair(%r) {noinline} : (f32) -> (f32, f32)
  func.return %t#1 : f32
}
