// RUN: not hlo-opt --split-input-file %s 2>&1 | FileCheck %s

// Invalid IR, one case per chunk: each error names the op (where there is one) and points
// at the line and column of the offending text in this file. A failing chunk does not stop
// the next one.

func.func @addf_result_type(%a: f32, %b: f32) -> f64 {
  %0 = "arith.addf"(%a, %b) : (f32, f32) -> f64
  // CHECK:      invalid.mlir:[[@LINE-1]]:3: error: 'arith.addf' op requires the same type for all operands and results
  // CHECK-NEXT: %0 = "arith.addf"(%a, %b) : (f32, f32) -> f64
  // CHECK-NEXT: {{^  \^$}}
  return %0 : f64
}

// -----

func.func @addi_on_floats(%a: f32, %b: f32) -> f32 {
  %0 = arith.addi %a, %b : f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'arith.addi' op operand #0 must be signless-integer-like, but got 'f32'
  return %0 : f32
}

// -----

func.func @addf_operand_count(%a: f32) -> f32 {
  %0 = "arith.addf"(%a) : (f32) -> f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'arith.addf' op expected 2 operands, but found 1
  return %0 : f32
}

// -----

func.func @tanh_on_integer(%a: i32) -> i32 {
  %0 = math.tanh %a : i32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'math.tanh' op operand #0 must be floating-point-like, but got 'i32'
  return %0 : i32
}

// -----

func.func @fma_operand_count(%a: f32) -> f32 {
  %0 = "math.fma"(%a, %a) : (f32, f32) -> f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'math.fma' op expected 3 operands, but found 2
  return %0 : f32
}

// -----

func.func @extract_index_count(%t: tensor<4x4xf32>, %i: index) -> f32 {
  %0 = "tensor.extract"(%t, %i) : (tensor<4x4xf32>, index) -> f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'tensor.extract' op incorrect number of indices: expected 2, but found 1
  return %0 : f32
}

// -----

func.func @insert_element_type(%t: tensor<4xf32>, %v: f16, %i: index) -> tensor<4xf32> {
  %0 = "tensor.insert"(%v, %t, %i) : (f16, tensor<4xf32>, index) -> tensor<4xf32>
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'tensor.insert' op scalar type 'f16' does not match the element type of 'tensor<4xf32>'
  return %0 : tensor<4xf32>
}

// -----

func.func @for_yield_type(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %r = scf.for %i = %c0 to %n step %n iter_args(%a = %x) -> (f32) {
    %t = arith.fptosi %a : f32 to i32
    scf.yield %t : i32
    // CHECK: invalid.mlir:[[@LINE-1]]:5: error: 'scf.yield' op type of operand #0 ('i32') doesn't match the result type of the parent 'scf.for' ('f32')
  }
  return %r : f32
}

// -----

func.func @for_iter_arg_count(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %r = "scf.for"(%c0, %n, %n, %x) ({
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'scf.for' op expects the body to have 2 arguments (the induction variable and 1 iter_args), but it has 1
  ^bb0(%i: index):
    "scf.yield"(%x) : (f32) -> ()
  }) : (index, index, index, f32) -> f32
  return %r : f32
}

// -----

func.func @for_iter_args_results(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %r = scf.for %i = %c0 to %n step %n iter_args(%a = %x, %b = %x) -> (f32) {
  // CHECK: invalid.mlir:[[@LINE-1]]:67: error: mismatch in number of loop-carried values and defined values
    scf.yield %a : f32
  }
  return
}

// -----

func.func @for_bound_types(%n: i32) {
  %c0 = arith.constant 0 : index
  "scf.for"(%c0, %n, %c0) ({
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'scf.for' op requires the same type for the lower bound, upper bound and step
  ^bb0(%i: index):
    "scf.yield"() : () -> ()
  }) : (index, i32, index) -> ()
  return
}

// -----

func.func @if_needs_else(%c: i1, %x: f32) -> f32 {
  %r = scf.if %c -> (f32) {
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'scf.if' op must have an else block if defining values
    scf.yield %x : f32
  }
  return %r : f32
}

// -----

func.func @if_condition_type(%c: i32) {
  "scf.if"(%c) ({
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'scf.if' op operand #0 must be 1-bit signless integer, but got 'i32'
    "scf.yield"() : () -> ()
  }, {
  }) : (i32) -> ()
  return
}

// -----

func.func @return_type(%a: i32) -> f32 {
  return %a : i32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'func.return' op type of return operand 0 ('i32') doesn't match function result type ('f32') in function @return_type
}

// -----

func.func @return_count(%a: f32) -> f32 {
  return %a, %a : f32, f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'func.return' op has 2 operands, but enclosing function (@return_count) returns 1
}

// -----

func.func @undefined_callee(%a: f32) -> f32 {
  %0 = func.call @nowhere(%a) : (f32) -> f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'func.call' op 'nowhere' does not reference a valid function
  return %0 : f32
}

// -----

func.func private @callee(f32, f32) -> f32

func.func @call_arity(%a: f32) -> f32 {
  %0 = func.call @callee(%a) : (f32) -> f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'func.call' op incorrect number of operands for callee
  return %0 : f32
}

// -----

func.func private @callee(f32) -> f32

func.func @call_result_type(%a: f32) -> i32 {
  %0 = func.call @callee(%a) : (f32) -> i32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'func.call' op result type mismatch at index 0: expected 'f32', but found 'i32'
  return %0 : i32
}

// -----

func.func @missing_terminator(%a: f32, %b: f32) -> f32 {
  %0 = arith.addf %a, %b : f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: block with no terminator, has 'arith.addf'
}

// -----

func.func @terminator_in_the_middle(%a: f32) -> f32 {
  return %a : f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'func.return' op must be the last operation in the parent block
  %0 = arith.addf %a, %a : f32
}

// -----

func.func @use_before_def(%a: f32) -> f32 {
  %0 = arith.addf %1, %a : f32
  %1 = arith.addf %a, %a : f32
  // CHECK:      invalid.mlir:[[@LINE-2]]:3: error: operand #0 does not dominate this use
  // CHECK-NEXT: %0 = arith.addf %1, %a : f32
  // CHECK-NEXT: ^
  // CHECK-NEXT: invalid.mlir:[[@LINE-4]]:3: note: operand defined here
  return %0 : f32
}

// -----

func.func @value_of_a_loop_body(%n: index, %a: f32) -> f32 {
  %c0 = arith.constant 0 : index
  scf.for %i = %c0 to %n step %n {
    %inner = arith.addf %a, %a : f32
  }
  %0 = arith.addf %inner, %a : f32
  // CHECK: invalid.mlir:[[@LINE-1]]:19: error: use of undeclared SSA value name
  return %0 : f32
}

// -----

// A function is isolated from above: values of the enclosing module are out of reach.
"builtin.module"() ({
  %outer = "arith.constant"() <{value = 1.0 : f32}> : () -> f32
  "func.func"() <{function_type = () -> f32, sym_name = "isolated"}> ({
    "func.return"(%outer) : (f32) -> ()
    // CHECK: invalid.mlir:[[@LINE-1]]:19: error: use of undeclared SSA value name
  }) : () -> ()
}) : () -> ()

// -----

func.func @unknown_type(%a: f33) {
  // CHECK: invalid.mlir:[[@LINE-1]]:29: error: unknown type 'f33'
  return
}

// -----

func.func @unterminated_region(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  return %0 : f32
// The chunk ends at the next marker line, where the '}' is missing.
// CHECK: invalid.mlir:[[@LINE+2]]:1: error: expected '}', found end of file

// -----

func.func @duplicate_name(%a: f32) -> f32 {
  %x = arith.addf %a, %a : f32
  %x = arith.mulf %a, %a : f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: redefinition of SSA value '%x'
  return %x : f32
}

// -----

func.func @extf_narrows(%a: f32) -> f16 {
  %0 = arith.extf %a : f32 to f16
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'arith.extf' op operand type 'f32' and result type 'f16' are cast incompatible
  return %0 : f16
}

// -----

func.func @cmpi_predicate(%a: i32) -> i1 {
  %0 = arith.cmpi less, %a, %a : i32
  // CHECK: invalid.mlir:[[@LINE-1]]:19: error: invalid predicate 'less'
  return %0 : i1
}

// -----

func.func @select_branch_types(%c: i1, %a: f32, %b: f16) -> f32 {
  %0 = "arith.select"(%c, %a, %b) : (i1, f32, f16) -> f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'arith.select' op requires the same type for true value, false value and result
  return %0 : f32
}

// -----

func.func @constant_type() -> i64 {
  %0 = "arith.constant"() <{value = 1 : i32}> : () -> i64
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'arith.constant' op value type 'i32' does not match the result type 'i64'
  return %0 : i64
}

// -----

func.func @yield_outside_scf() {
  scf.yield
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'scf.yield' op expects parent op to be one of 'scf.for, scf.if, scf.while, scf.execute_region, scf.index_switch'
}

// -----

func.func @unknown_op(%a: f32) -> f32 {
  %0 = arith.frobnicate %a : f32
  // CHECK: invalid.mlir:[[@LINE-1]]:8: error: custom op 'arith.frobnicate' is unknown
  return %0 : f32
}

// -----

func.func @operand_type_disagrees(%a: f32) -> f64 {
  %0 = arith.addf %a, %a : f64
  // CHECK: invalid.mlir:[[@LINE-1]]:19: error: use of value '%a' expects different type than prior uses: 'f64' vs 'f32'
  return %0 : f64
}

// -----

func.func @reduction_of_the_wrong_type(%v: vector<2x4xf32>, %a: vector<2xf32>) -> vector<2xf32> {
  %0 = vector.multi_reduction <add>, %v, %a [0] : vector<2x4xf32> to vector<2xf32>
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'vector.multi_reduction' op acc type 'vector<2xf32>' is not the reduced type 'vector<4xf32>'
  return %0 : vector<2xf32>
}

// -----

func.func @integer_kind_on_floats(%v: vector<4xf32>, %a: f32) -> f32 {
  %0 = vector.multi_reduction <maxsi>, %v, %a [0] : vector<4xf32> to f32
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'vector.multi_reduction' op unsupported reduction kind 'maxsi' for 'f32'
  return %0 : f32
}

// -----

func.func @transpose_not_a_permutation(%v: vector<2x4xf32>) -> vector<4x2xf32> {
  %0 = vector.transpose %v, [1, 1] : vector<2x4xf32> to vector<4x2xf32>
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'vector.transpose' op permutation entry 1 appears twice
  return %0 : vector<4x2xf32>
}

// -----

func.func @reduction_dims_not_an_array(%v: vector<4x8xf32>, %a: vector<4x8xf32>) -> vector<4x8xf32> {
  %0 = "vector.multi_reduction"(%v, %a) <{kind = #vector.kind<add>, reduction_dims = "foo"}> : (vector<4x8xf32>, vector<4x8xf32>) -> vector<4x8xf32>
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'vector.multi_reduction' op requires a 'reduction_dims' property of i64 integers (array<i64: ..>)
  return %0 : vector<4x8xf32>
}

// -----

func.func @transpose_of_two(%v: vector<2x4xf32>) -> vector<4x2xf32> {
  %0 = "vector.transpose"(%v, %v) <{permutation = array<i64: 1, 0>}> : (vector<2x4xf32>, vector<2x4xf32>) -> vector<4x2xf32>
  // CHECK: invalid.mlir:[[@LINE-1]]:3: error: 'vector.transpose' op expected 1 operand, but found 2
  return %0 : vector<4x2xf32>
}

// Failed chunks print nothing but the separators.
// CHECK-NOT: module
