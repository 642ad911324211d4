// MLIR's float formats of 8 bits or fewer, as XLA's IR writes them (its expand-float-ops and
// convert-float-nvidia tests): read, verified and printed back. They are storage formats
// here (the emitters hold f8/f4 values as integers), so no pass computes on them:
// `lower-to-llvm` and the interpreter refuse them at the op, as LLVM has no such type.
// RUN: hlo-opt %s --split-input-file | FileCheck %s
// RUN: not hlo-opt %s --split-input-file --lower-to-llvm 2>&1 | FileCheck %s --check-prefix=LLVM
// RUN: not hlo-interp %s --grid=1x1 2>&1 | FileCheck %s --check-prefix=INTERP

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%a: f8E4M3FN, %b: f8E5M2, %c: f4E2M1FN, %d: f8E8M0FNU, %e: f6E2M3FN, %g: f8E4M3FNUZ) -> f32
// CHECK: arith.extf %a : f8E4M3FN to f32
// CHECK: arith.truncf %{{.*}} : f32 to f8E5M2
// CHECK: arith.bitcast %c : f4E2M1FN to i4
// CHECK: arith.extf %d : f8E8M0FNU to bf16
// LLVM: narrow-floats.mlir:[[# @LINE + 3]]:3: error: 'arith.extf' op unsupported: 'arith.extf' on 'f8E4M3FN', a type our lowering does not take
// INTERP: narrow-floats.mlir:[[# @LINE + 1]]:1: error: unsupported: kernel parameter #0 of type 'f8E4M3FN' in 'func.func'
func.func @main(%a: f8E4M3FN, %b: f8E5M2, %c: f4E2M1FN, %d: f8E8M0FNU, %e: f6E2M3FN, %g: f8E4M3FNUZ) -> f32 {
  %0 = arith.extf %a : f8E4M3FN to f32
  %1 = arith.truncf %0 : f32 to f8E5M2
  %2 = arith.extf %1 : f8E5M2 to f32
  %3 = arith.bitcast %c : f4E2M1FN to i4
  %4 = arith.extf %d : f8E8M0FNU to bf16
  %5 = arith.addf %0, %2 : f32
  return %5 : f32
}

// -----

// CHECK-LABEL: func.func @shaped
// CHECK-SAME: tensor<4x8xf8E4M3FN>, %v: vector<4xf4E2M1FN>) -> vector<4xf8E5M2>
func.func @shaped(%t: tensor<4x8xf8E4M3FN>, %v: vector<4xf4E2M1FN>) -> vector<4xf8E5M2> {
  %0 = arith.extf %v : vector<4xf4E2M1FN> to vector<4xf8E5M2>
  return %0 : vector<4xf8E5M2>
}

