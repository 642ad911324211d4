// MLIR's `complex<f32>` and the `complex` ops XLA's IR writes (`create`, `re`, `im`, `add`,
// `constant`): read, verified, printed as MLIR prints them (real MLIR reads our output
// back). Our emitters hold c64/c128 as integer patterns, so no pass computes on these:
// `lower-to-llvm` and the interpreter refuse them at the op.
// RUN: hlo-opt %s --split-input-file | FileCheck %s
// RUN: hlo-opt %s --split-input-file | mlir-opt --split-input-file -o /dev/null
// RUN: not hlo-opt %s --split-input-file --lower-to-llvm 2>&1 | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @parts
// CHECK-SAME: (%a: f32, %b: f32, %t: tensor<4xcomplex<f64>>) -> complex<f32>
// CHECK: %[[C:.*]] = complex.create %a, %b : complex<f32>
// CHECK: %[[K:.*]] = complex.constant [1.000000e+00 : f32, -2.500000e+00 : f32] : complex<f32>
// CHECK: %[[S:.*]] = complex.add %[[C]], %[[K]] fastmath<nnan> : complex<f32>
// CHECK: %[[R:.*]] = complex.re %[[S]] : complex<f32>
// CHECK: %[[I:.*]] = complex.im %[[S]] : complex<f32>
// CHECK: complex.create %[[R]], %[[I]] : complex<f32>
// LLVM: complex-type.mlir:[[# @LINE + 2]]:3: error: 'complex.create' op unsupported: 'complex.create' on 'complex<f32>', a type our lowering does not take
func.func @parts(%a: f32, %b: f32, %t: tensor<4xcomplex<f64>>) -> complex<f32> {
  %c = complex.create %a, %b : complex<f32>
  %k = complex.constant [1.0 : f32, -2.5 : f32] : complex<f32>
  %s = complex.add %c, %k fastmath<nnan> : complex<f32>
  %r = complex.re %s : complex<f32>
  %i = complex.im %s : complex<f32>
  %d = complex.create %r, %i : complex<f32>
  return %d : complex<f32>
}
