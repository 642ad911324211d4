// `scf.index_switch` refused where MLIR refuses it, located.
// RUN: not hlo-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: scf-index-switch-invalid.mlir:[[# @LINE + 2]]:3: error: 'scf.index_switch' op has duplicate case value: 1
func.func @duplicate(%i: index) {
  scf.index_switch %i
  case 1 {
    scf.yield
  }
  case 1 {
    scf.yield
  }
  default {
    scf.yield
  }
  return
}

// -----

// CHECK: scf-index-switch-invalid.mlir:[[# @LINE + 4]]:5: error: 'scf.yield' op expects 1 operands to match the results of the parent 'scf.index_switch', but found 0
func.func @wrong_yield(%i: index) -> f32 {
  %r = scf.index_switch %i -> f32
  default {
    scf.yield
  }
  return %r : f32
}

// -----

// CHECK: scf-index-switch-invalid.mlir:[[# @LINE + 6]]:3: error: expected 'default', found 'return'
func.func @no_default(%i: index) {
  scf.index_switch %i
  case 1 {
    scf.yield
  }
  return
}

// -----

// CHECK: scf-index-switch-invalid.mlir:[[# @LINE + 2]]:28: error: case value does not fit in 64 bits
func.func @huge(%i: index) {
  scf.index_switch %i case 99999999999999999999 {
    scf.yield
  }
  default {
    scf.yield
  }
  return
}

// -----

// CHECK: scf-index-switch-invalid.mlir:[[# @LINE + 2]]:20: error: use of value '%x' expects different type than prior uses: 'index' vs 'i32'
func.func @not_an_index(%x: i32) {
  scf.index_switch %x
  default {
    scf.yield
  }
  return
}
