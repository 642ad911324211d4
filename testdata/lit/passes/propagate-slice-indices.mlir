// RUN: hlo-opt %s --split-input-file --propagate-slice-indices | FileCheck %s

// The entry function's buffer attributes reach the leading tensor arguments of every other
// function, position by position; the first argument that is not a tensor ends them, and
// other attributes an argument has (xla.range) stay.

// CHECK-LABEL: func.func private @subgraph
// CHECK-SAME:    (%{{.*}}: tensor<4xf32> {xla.invariant, xla.slice_index = 0 : i64},
// CHECK-SAME:     %{{.*}}: tensor<8xf32> {xla.range = [0 : index, 3 : index], xla.slice_index = 1 : i64, xla.streamed_once},
// CHECK-SAME:     %{{.*}}: index,
// CHECK-SAME:     %{{.*}}: tensor<4xf32>)
// CHECK-LABEL: func.func private @scalars(%{{.*}}: f32) -> f32
// CHECK-LABEL: func.func @kernel
func.func private @subgraph(%a: tensor<4xf32>, %b: tensor<8xf32> {xla.range = [0 : index, 3 : index]},
                            %i: index, %c: tensor<4xf32>) -> f32 {
  %v = tensor.extract %a[%i] : tensor<4xf32>
  func.return %v : f32
}
func.func private @scalars(%x: f32) -> f32 {
  func.return %x : f32
}
func.func @kernel(%a: tensor<4xf32> {xla.invariant, xla.slice_index = 0},
                  %b: tensor<8xf32> {xla.slice_index = 1, xla.streamed_once},
                  %c: tensor<4xf32> {xla.slice_index = 2}) -> tensor<4xf32> attributes {xla.entry} {
  func.return %c : tensor<4xf32>
}

// -----

// A function with more tensor arguments than the entry keeps the extra ones as they are.

// CHECK-LABEL: func.func private @wide
// CHECK-SAME:    (%{{.*}}: tensor<2xf32> {xla.slice_index = 0 : i64}, %{{.*}}: tensor<2xf32>)
func.func private @wide(%a: tensor<2xf32>, %b: tensor<2xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %b[%c0] : tensor<2xf32>
  func.return %v : f32
}
func.func @kernel(%a: tensor<2xf32> {xla.slice_index = 0}) -> tensor<2xf32> attributes {xla.entry} {
  func.return %a : tensor<2xf32>
}
