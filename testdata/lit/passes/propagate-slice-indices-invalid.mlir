// RUN: not hlo-opt %s --propagate-slice-indices 2>&1 | FileCheck %s

// Without an entry function there is nothing to propagate from: an error, as in XLA.

// CHECK: propagate-slice-indices-invalid.mlir:1:1: error: 'builtin.module' op no entry function (marked xla.entry) found
func.func @kernel(%a: tensor<2xf32> {xla.slice_index = 0}) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}
