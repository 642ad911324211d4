// RUN: not hlo-opt %s --split-input-file --convert-index-type 2>&1 | FileCheck %s

// An index entry whose width is not a number of bits from 1 to 64, or not a value of its
// integer type, is refused, located.

// CHECK: convert-index-type-invalid.mlir:[[# @LINE + 1]]:1: error: 'builtin.module' op unsupported: data layout #dlti.dl_spec<#dlti.dl_entry<index, 128 : i32>>: expected an index width from 1 to 64 in #dlti.dl_entry<index, W : iK>, or no entry
module attributes {dlti.dl_spec = #dlti.dl_spec<#dlti.dl_entry<index, 128 : i32>>} {
  func.func @f(%arg0: index) -> index {
    %s = arith.addi %arg0, %arg0 : index
    return %s : index
  }
}

// -----

// CHECK: convert-index-type-invalid.mlir:[[# @LINE + 1]]:1: error: 'builtin.module' op unsupported: data layout #dlti.dl_spec<#dlti.dl_entry<index, 32 : i1>>
module attributes {dlti.dl_spec = #dlti.dl_spec<#dlti.dl_entry<index, 32 : i1>>} {
  func.func @f(%arg0: index) -> index {
    %s = arith.addi %arg0, %arg0 : index
    return %s : index
  }
}
