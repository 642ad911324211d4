//! Invalid modules are rejected with an exact message and location, by the parser (syntax,
//! undefined names) or by the verifier (types, dominance, terminators, symbols, arity).

use crate::common::{self, check, parse};

fn func(body: &str) -> String {
    format!("func.func @f(%a: f32, %b: f32, %i: index, %n: i32, %c: i1) -> f32 {{\n{body}}}\n")
}

const CASES: &[(&str, &str, &str)] = &[
    (
        "use of an undefined value",
        "  %0 = arith.addf %a, %x : f32\n  return %0 : f32\n",
        "t.mlir:2:23: error: use of undeclared SSA value name",
    ),
    (
        "operand type not float in arith.addf",
        "  %0 = \"arith.addf\"(%a, %n) : (f32, i32) -> f32\n  return %0 : f32\n",
        "t.mlir:2:3: error: 'arith.addf' op operand #1 must be floating-point-like, but got 'i32'",
    ),
    (
        "type mismatch in arith.addf",
        "  %0 = \"arith.addf\"(%a, %b) : (f32, f32) -> f64\n  return %a : f32\n",
        "t.mlir:2:3: error: 'arith.addf' op requires the same type for all operands and results",
    ),
    (
        "missing terminator",
        "  %0 = arith.addf %a, %b : f32\n",
        "t.mlir:2:3: error: block with no terminator, has 'arith.addf'",
    ),
    (
        "dominance violation in a block",
        "  %0 = arith.addf %1, %b : f32\n  %1 = arith.addf %a, %b : f32\n  return %0 : f32\n",
        "t.mlir:2:3: error: operand #0 does not dominate this use\nt.mlir:3:3: note: operand defined here",
    ),
    (
        "dominance violation into a nested region",
        "  %c0 = arith.constant 0 : index\n  scf.for %iv = %c0 to %i step %i {\n    %u = arith.addf %late, %a : f32\n  }\n  %late = arith.addf %a, %b : f32\n  return %late : f32\n",
        "t.mlir:4:5: error: operand #0 does not dominate this use\nt.mlir:6:3: note: operand defined here",
    ),
    (
        "unknown callee",
        "  %0 = call @nope(%a) : (f32) -> f32\n  return %0 : f32\n",
        "t.mlir:2:3: error: 'func.call' op 'nope' does not reference a valid function",
    ),
    (
        "callee arity",
        "  %0 = call @f(%a) : (f32) -> f32\n  return %0 : f32\n",
        "t.mlir:2:3: error: 'func.call' op incorrect number of operands for callee",
    ),
    (
        "wrong block argument count for scf.for",
        "  \"scf.for\"(%i, %i, %i) ({\n  ^bb0(%iv: index, %extra: index):\n    \"scf.yield\"() : () -> ()\n  }) : (index, index, index) -> ()\n  return %a : f32\n",
        "t.mlir:2:3: error: 'scf.for' op expects the body to have 1 arguments (the induction variable and 0 iter_args), but it has 2",
    ),
    (
        "scf.for induction variable type",
        "  \"scf.for\"(%i, %i, %i) ({\n  ^bb0(%iv: i32):\n    \"scf.yield\"() : () -> ()\n  }) : (index, index, index) -> ()\n  return %a : f32\n",
        "t.mlir:2:3: error: 'scf.for' op expected induction variable to be same type as bounds and step",
    ),
    (
        "scf.yield operand count",
        "  %c0 = arith.constant 0 : index\n  %r = scf.for %iv = %c0 to %i step %i iter_args(%x = %a) -> (f32) {\n    scf.yield %x, %x : f32, f32\n  }\n  return %r : f32\n",
        "t.mlir:4:5: error: 'scf.yield' op expects 1 operands to match the results of the parent 'scf.for', but found 2",
    ),
    (
        "scf.if with results needs an else",
        "  %r = \"scf.if\"(%c) ({\n    \"scf.yield\"(%a) : (f32) -> ()\n  }, {\n  }) : (i1) -> f32\n  return %r : f32\n",
        "t.mlir:2:3: error: 'scf.if' op must have an else block if defining values",
    ),
    (
        "return type mismatch",
        "  return %n : i32\n",
        "t.mlir:2:3: error: 'func.return' op type of return operand 0 ('i32') doesn't match function result type ('f32') in function @f",
    ),
    (
        "return operand count",
        "  return %a, %b : f32, f32\n",
        "t.mlir:2:3: error: 'func.return' op has 2 operands, but enclosing function (@f) returns 1",
    ),
    (
        "terminator in the middle of a block",
        "  return %a : f32\n  %0 = arith.addf %a, %b : f32\n",
        "t.mlir:2:3: error: 'func.return' op must be the last operation in the parent block",
    ),
    (
        "scf.yield outside scf",
        "  scf.yield\n",
        "t.mlir:2:3: error: 'scf.yield' op expects parent op to be one of 'scf.for, scf.if, scf.while, scf.execute_region, scf.index_switch'",
    ),
    (
        "redefinition",
        "  %x = arith.addf %a, %b : f32\n  %x = arith.addf %a, %b : f32\n  return %x : f32\n",
        "t.mlir:3:3: error: redefinition of SSA value '%x'",
    ),
    (
        "use with a different type than the definition",
        "  %0 = arith.addf %a, %a : f64\n  return %a : f32\n",
        "t.mlir:2:19: error: use of value '%a' expects different type than prior uses: 'f64' vs 'f32'",
    ),
    (
        "unknown custom op",
        "  %0 = arith.frobnicate %a : f32\n  return %0 : f32\n",
        "t.mlir:2:8: error: custom op 'arith.frobnicate' is unknown",
    ),
    (
        "missing comma",
        "  %0 = arith.addf %a %b : f32\n  return %0 : f32\n",
        "t.mlir:2:22: error: expected ',', found '%b'",
    ),
    (
        "result count binding",
        "  %0, %1 = arith.addf %a, %b : f32\n  return %0 : f32\n",
        "t.mlir:2:3: error: operation defines 1 results but was provided 2 to bind",
    ),
    (
        "incompatible cast",
        "  %0 = arith.extf %a : f32 to f16\n  return %a : f32\n",
        "t.mlir:2:3: error: 'arith.extf' op operand type 'f32' and result type 'f16' are cast incompatible",
    ),
    (
        "tensor.extract index count",
        "  %t = tensor.empty() : tensor<4x4xf32>\n  %0 = \"tensor.extract\"(%t, %i) : (tensor<4x4xf32>, index) -> f32\n  return %0 : f32\n",
        "t.mlir:3:3: error: 'tensor.extract' op incorrect number of indices: expected 2, but found 1",
    ),
    (
        "tensor.empty dynamic sizes",
        "  %t = tensor.empty(%i) : tensor<4x4xf32>\n  return %a : f32\n",
        "t.mlir:2:3: error: 'tensor.empty' op incorrect number of dynamic sizes, has 1, expected 0",
    ),
    (
        "cmpi predicate",
        "  %0 = arith.cmpi lt, %n, %n : i32\n  return %a : f32\n",
        "t.mlir:2:19: error: invalid predicate 'lt'",
    ),
    (
        "constant type",
        "  %0 = \"arith.constant\"() <{value = 1 : i32}> : () -> i64\n  return %a : f32\n",
        "t.mlir:2:3: error: 'arith.constant' op value type 'i32' does not match the result type 'i64'",
    ),
    (
        "dense literal shape",
        "  %0 = arith.constant dense<[1.0, 2.0]> : tensor<3xf32>\n  return %a : f32\n",
        "t.mlir:2:29: error: inferred shape of elements literal ([2]) does not match type ([3])",
    ),
    (
        "undefined block",
        "  \"test.br\"()[^bb9] : () -> ()\n",
        "t.mlir:2:15: error: reference to an undefined block '^bb9'",
    ),
    (
        "scf.if condition type",
        "  \"scf.if\"(%n) ({\n    \"scf.yield\"() : () -> ()\n  }, {\n  }) : (i32) -> ()\n  return %a : f32\n",
        "t.mlir:2:3: error: 'scf.if' op operand #0 must be 1-bit signless integer, but got 'i32'",
    ),
    (
        "empty block in a region that needs a terminator",
        "  \"scf.if\"(%c) ({\n  ^bb0:\n  }, {\n  }) : (i1) -> ()\n  return %a : f32\n",
        "t.mlir:2:3: error: 'scf.if' op empty block: expect at least a terminator",
    ),
    (
        "unterminated string",
        "  %0 = \"arith.addf(%a, %b) : (f32, f32) -> f32\n",
        "t.mlir:2:8: error: unterminated string literal",
    ),
];

#[test]
fn invalid_modules_are_rejected_with_location() {
    common::assert_diagnostics(
        CASES
            .iter()
            .map(|&(what, body, expected)| (what, func(body), expected)),
    );
    assert!(CASES.len() >= 20);
}

#[test]
fn valid_bodies_pass() {
    assert_eq!(
        check(&func("  %0 = arith.addf %a, %b : f32\n  return %0 : f32\n")),
        "ok"
    );
}

/// Malformed input of every kind gives a diagnostic, never a panic (`IR_FUZZ_ITERS` sets the
/// number of random mutations per input; 2000 by default).
#[test]
fn parser_never_panics_on_truncated_or_mutated_input() {
    let ops = common::ops_chunk(0);
    let xla = common::ops_chunk(2);
    let ops_generic = parse("ops.mlir", &ops).print_generic();
    let xla_generic = parse("xla_gpu_ops.mlir", &xla).print_generic();
    let texts = [&ops, &ops_generic, &xla, &xla_generic].map(String::as_str);
    common::assert_never_panics(&texts, 37, 2000);
}
