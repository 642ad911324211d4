// MLIR's inliner option `default-pipeline`: passes run once the calls are inlined (XLA's
// emitter tests clean the copies up with `--inline="default-pipeline='cse'"`). Two callees
// computing the same sum leave two equal `arith.addf` after inlining; `cse` keeps one.
// RUN: hlo-opt %s --inline | FileCheck %s --check-prefix=PLAIN
// RUN: hlo-opt %s --inline="default-pipeline='cse'" | FileCheck %s --check-prefix=CSE
// RUN: hlo-opt %s --pass-pipeline='inline{default-pipeline=cse}' | FileCheck %s --check-prefix=CSE
// RUN: not hlo-opt %s --inline=default-pipeline=nosuch 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not hlo-opt %s --inline=depth=2 2>&1 | FileCheck %s --check-prefix=OPTION

// PLAIN-LABEL: func.func @main
// PLAIN-COUNT-2: arith.addf
// PLAIN-NOT: xla_gpu.pure_call

// CSE-LABEL: func.func @main
// CSE: %[[SUM:.*]] = arith.addf %x, %y : f32
// CSE-NOT: arith.addf
// CSE: arith.mulf %[[SUM]], %[[SUM]] : f32

// UNKNOWN: error: --inline=default-pipeline=nosuch: default-pipeline=nosuch: no pass 'nosuch'
// OPTION: error: --inline=depth=2: the pass 'inline' has no option 'depth' (it has default-pipeline)

func.func private @sum_a(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  return %s : f32
}
func.func private @sum_b(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  return %s : f32
}
func.func @main(%x: f32, %y: f32) -> f32 {
  %0 = xla_gpu.pure_call @sum_a(%x, %y) : (f32, f32) -> f32
  %1 = xla_gpu.pure_call @sum_b(%x, %y) : (f32, f32) -> f32
  %2 = arith.mulf %0, %1 : f32
  return %2 : f32
}
