// Literals of MLIR's narrow float formats (`narrow-floats.mlir`) are not read: no pass folds
// or computes in these formats, which are storage formats here.
// RUN: not hlo-opt %s 2>&1 | FileCheck %s
// CHECK: narrow-float-literal.mlir:[[# @LINE + 2]]:23: error: unsupported: a float literal of type 'f8E5M2' (a storage format here: write its bits as an integer of its width)
func.func @literal() -> f8E5M2 {
  %0 = arith.constant 1.5 : f8E5M2
  return %0 : f8E5M2
}
