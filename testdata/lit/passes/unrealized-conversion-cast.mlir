// MLIR's `builtin.unrealized_conversion_cast` (XLA's tests write it): read in MLIR's
// declarative format, with any number of inputs and outputs, and printed back (real MLIR
// reads our output). It has no meaning of its own, so `lower-to-llvm` refuses it, located.
// RUN: hlo-opt %s | FileCheck %s
// RUN: hlo-opt %s | mlir-opt -o /dev/null
// RUN: not hlo-opt %s --lower-to-llvm 2>&1 | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @casts
// CHECK:      %[[ONE:.*]] = builtin.unrealized_conversion_cast %a : f32 to i32
// CHECK-NEXT: %[[TWO:.*]]:2 = builtin.unrealized_conversion_cast %a, %b : f32, f32 to i32, i64
// CHECK-NEXT: %[[NONE:.*]] = builtin.unrealized_conversion_cast to i8
// LLVM: unrealized-conversion-cast.mlir:[[# @LINE + 3]]:3: error: 'builtin.unrealized_conversion_cast' op unsupported: 'builtin.unrealized_conversion_cast' (a conversion's leftover: it has no meaning of its own to lower)
func.func @casts(%a: f32, %b: f32) -> (i32, i8) {
  %x = arith.constant 1 : i32
  %c = builtin.unrealized_conversion_cast %a : f32 to i32
  %d:2 = builtin.unrealized_conversion_cast %a, %b : f32, f32 to i32, i64
  %e = builtin.unrealized_conversion_cast to i8
  return %c, %e : i32, i8
}
