// RUN: hlo-opt %s --split-input-file --lower-tensors --merge-pointers-to-same-slice | FileCheck %s

// Arguments that are one buffer slice (xla.slice_index) become one: a later one is replaced
// by the first and removed, with the operand of every call, except from an entry function,
// where it stays unused. Every argument that had a slice index is llvm.noalias, unless it
// is xla.not_invariant (written through another argument): then it is not, and
// lower-tensors does not make its loads invariant.

// CHECK-LABEL: func.func private @callee
// CHECK-SAME:    (%[[A:.*]]: !llvm.ptr {llvm.noalias}, %[[I:.*]]: index, %[[B:.*]]: !llvm.ptr {llvm.noalias})
// CHECK-COUNT-2: llvm.getelementptr inbounds %[[A]]
// CHECK:         llvm.getelementptr inbounds %[[B]]
// CHECK-LABEL: func.func @kernel
// CHECK-SAME:    (%[[K0:[a-z0-9_]+]]: !llvm.ptr {llvm.align = 16 : i64, llvm.dereferenceable = 16 : i64, llvm.noalias},
// CHECK-SAME:     %[[K1:[a-z0-9_]+]]: !llvm.ptr {llvm.align = 16 : i64, llvm.dereferenceable = 16 : i64, llvm.noalias},
// CHECK-SAME:     %[[K2:[a-z0-9_]+]]: !llvm.ptr {llvm.align = 16 : i64, llvm.dereferenceable = 16 : i64},
// CHECK-SAME:     %[[KI:[a-z0-9_]+]]: index) -> f32 attributes {xla.entry}
// CHECK:         llvm.getelementptr inbounds %[[K0]]
// CHECK:         %[[C:.*]] = llvm.getelementptr inbounds %[[K2]]
// CHECK:         llvm.load %[[C]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:         call @callee(%[[K0]], %[[KI]], %[[K0]])
// CHECK-NOT:     xla.slice_index
// CHECK-NOT:     xla.not_invariant
func.func private @callee(%a: tensor<4xf32> {xla.slice_index = 0}, %i: index,
                          %a_again: tensor<4xf32> {xla.slice_index = 0},
                          %b: tensor<4xf32> {xla.slice_index = 2}) -> f32 {
  %x = tensor.extract %a[%i] : tensor<4xf32>
  %y = tensor.extract %a_again[%i] : tensor<4xf32>
  %z = tensor.extract %b[%i] : tensor<4xf32>
  %s = arith.addf %x, %y : f32
  %t = arith.addf %s, %z : f32
  return %t : f32
}
func.func @kernel(%a: tensor<4xf32> {xla.slice_index = 0}, %a_again: tensor<4xf32> {xla.slice_index = 0},
                  %c: tensor<4xf32> {xla.slice_index = 1, xla.not_invariant}, %i: index) -> f32
    attributes {xla.entry} {
  %x = tensor.extract %a_again[%i] : tensor<4xf32>
  %y = tensor.extract %c[%i] : tensor<4xf32>
  %r = func.call @callee(%a, %i, %a_again, %a) : (tensor<4xf32>, index, tensor<4xf32>, tensor<4xf32>) -> f32
  %s = arith.addf %x, %y : f32
  %t = arith.addf %s, %r : f32
  return %t : f32
}

// -----

// Calls through xla_gpu.pure_call lose the operand too; a declaration (its signature is
// its definition's, elsewhere) keeps its arguments, without llvm.noalias where two are one
// slice, and its calls keep their operands.

// CHECK-LABEL: func.func private @decl(!llvm.ptr, !llvm.ptr)
// CHECK-LABEL: func.func private @pure
// CHECK-SAME:    (%{{.*}}: !llvm.ptr {llvm.noalias}) -> f32
// CHECK-LABEL: func.func @caller
// CHECK:         xla_gpu.pure_call @pure(%[[P:.*]]) : (!llvm.ptr) -> f32
// CHECK:         call @decl(%[[P]], %[[P]])
func.func private @decl(%a: tensor<4xf32> {xla.slice_index = 0}, %b: tensor<4xf32> {xla.slice_index = 0})
func.func private @pure(%a: tensor<4xf32> {xla.slice_index = 0}, %b: tensor<4xf32> {xla.slice_index = 0}) -> f32 {
  %c0 = arith.constant 0 : index
  %x = tensor.extract %b[%c0] : tensor<4xf32>
  return %x : f32
}
func.func @caller(%a: tensor<4xf32>) -> f32 {
  %r = xla_gpu.pure_call @pure(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> f32
  func.call @decl(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> ()
  return %r : f32
}
