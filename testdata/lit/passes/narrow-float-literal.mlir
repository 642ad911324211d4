// Literals of MLIR's float formats of 8 bits or fewer (`narrow-floats.mlir`), as XLA's IR
// writes them: a decimal literal rounds to the nearest value of the format (ties to even),
// a hexadecimal one is the bit pattern; both print as MLIR prints them (real MLIR reads our
// output back). No pass computes in these formats (storage only); `lower-to-llvm` refuses
// them at the op.
// RUN: hlo-opt %s --split-input-file | FileCheck %s
// RUN: hlo-opt %s --split-input-file | mlir-opt --split-input-file -o /dev/null
// RUN: not hlo-opt %s --split-input-file --lower-to-llvm 2>&1 | FileCheck %s --check-prefix=LLVM
// RUN: not hlo-opt %S/narrow-float-literal-invalid.mlir --split-input-file 2>&1 | FileCheck %S/narrow-float-literal-invalid.mlir

// CHECK-LABEL: func.func @literals
// CHECK: arith.constant 1.500000e+00 : f8E5M2
// 2.5 lies between 2 and 3 in f4E2M1FN: the even pattern, 2.
// CHECK: arith.constant 2.000000e+00 : f4E2M1FN
// 0x7E is f8E4M3FN's largest value, 0x7F its NaN.
// CHECK: arith.constant 4.480000e+02 : f8E4M3FN
// CHECK: arith.constant 0x7F : f8E4M3FN
// Past f8E4M3's largest value by half a step: infinity.
// CHECK: arith.constant 0x78 : f8E4M3
// CHECK: arith.constant dense<[5.000000e-01, -5.000000e-01, 2.000000e+00]> : tensor<3xf4E2M1FN>
// LLVM: narrow-float-literal.mlir:[[# @LINE + 2]]:3: error: 'arith.constant' op unsupported: 'arith.constant' on 'f8E5M2', a type our lowering does not take
func.func @literals() -> (f8E5M2, f4E2M1FN, f8E4M3FN, f8E4M3FN, f8E4M3, tensor<3xf4E2M1FN>) {
  %0 = arith.constant 1.5 : f8E5M2
  %1 = arith.constant 2.5 : f4E2M1FN
  %2 = arith.constant 0x7E : f8E4M3FN
  %3 = arith.constant 0x7F : f8E4M3FN
  %4 = arith.constant 248.0 : f8E4M3
  %5 = arith.constant dense<[0.5, -0.5, 2.5]> : tensor<3xf4E2M1FN>
  return %0, %1, %2, %3, %4, %5 : f8E5M2, f4E2M1FN, f8E4M3FN, f8E4M3FN, f8E4M3, tensor<3xf4E2M1FN>
}
