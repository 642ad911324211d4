//! Declared ops (`ir::ods`): a test dialect declared through the public API alone prints and
//! parses by its format with MLIR's spacing, infers the types its text leaves out, verifies
//! its declarations with MLIR's messages, falls back to the generic form when an op breaks
//! them, and malformed formats are refused when read.

use ir::dialects::prelude::*;
use ir::ods::format::compile;
use ir::ods::{OpSpec, PropKind, same_type};
use ir::{Registry, parse_module_with};
use std::sync::Arc;

/// `test.pair %a, %b : f32`: two operands and a result of one type.
const PAIR: OpDef = OpDef::pure("test.pair")
    .operands(&[one("lhs", &FLOAT_LIKE), one("rhs", &FLOAT_LIKE)])
    .results(&[one("result", &FLOAT_LIKE)])
    .rules(&[ALL_TYPES_SAME])
    .format("$lhs `,` $rhs attr-dict `:` type($result)");

/// Brackets, the empty literal, an arrow, buildable index operands and an enum case.
const SPACED: OpDef = OpDef::new("test.spaced")
    .operands(&[one("source", &ANY), variadic("indices", &INDEX)])
    .results(&[one("result", &ANY)])
    .props(&[required(
        "kind",
        PropKind::EnumCase {
            open: "#test<kind ",
            cases: &["near", "far"],
            cpp_name: "::test::Kind",
        },
    )])
    .rules(&[same_type(
        "source",
        "result",
        "result type '{to}' is not '{from}'",
    )])
    .format("$kind `(` $source `)` `[` $indices `]` `` `<` type($source) `>` attr-dict `->` `x`");

/// An optional group anchored on a property: `test.flag %a unit<u> : i32`.
const FLAGGED: OpDef = OpDef::new("test.flagged")
    .operands(&[one("input", &INT_LIKE)])
    .results(&[])
    .props(&[
        optional(
            "flag",
            PropKind::EnumBody {
                prefix: "#test.flag",
                default: "<none>",
            },
        ),
        optional(
            "order",
            PropKind::IntEnum {
                cases: &["first", "second"],
            },
        ),
    ])
    .format("$input (`unit` `` $flag^)? (`order` $order^)? attr-dict `:` type($input)");

fn registry() -> Arc<Registry> {
    let mut r = Registry::with_standard_dialects();
    r.register_all(&[PAIR, SPACED, FLAGGED]);
    Arc::new(r)
}

fn roundtrip(text: &str) -> String {
    let m = parse_module_with(text, "t.mlir", registry())
        .unwrap_or_else(|e| panic!("{}", e.render(text)));
    m.verify().unwrap_or_else(|e| panic!("{}", e.render(text)));
    let printed = m.print();
    let again = parse_module_with(&printed, "printed", registry()).unwrap();
    assert_eq!(again.print(), printed, "a fixed point");
    printed
}

fn body(printed: &str) -> Vec<&str> {
    printed
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('%') || l.starts_with("test."))
        .collect()
}

fn error(text: &str) -> String {
    let r = parse_module_with(text, "t.mlir", registry()).and_then(|m| m.verify().map(|_| m));
    match r {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const FUNC_HEAD: &str = "func.func @f(%a: f32, %b: f32, %i: index, %n: i32, %t: tensor<4xf32>) {";

fn in_func(ops: &str) -> String {
    format!("{FUNC_HEAD}\n{ops}\n  return\n}}\n")
}

#[test]
fn prints_with_mlir_spacing_and_infers_types() {
    let printed = roundtrip(&in_func(
        "%0 = test.pair %a,%b : f32
         %1 = test.spaced far (%t)[%i, %i]<tensor<4xf32>> -> x
         %2 = test.spaced near (%a)[]<f32> {tag} -> x
         test.flagged %n unit<u> order second : i32
         test.flagged %n : i32",
    ));
    assert_eq!(
        body(&printed),
        [
            "%0 = test.pair %a, %b : f32",
            // The enum case prints after a space of its own, as MLIR's enum attributes do;
            // none after `(` and `[`, none before `)` and `]`, one between `)` and `[`
            // (punctuation after punctuation), none before `<` after the empty literal.
            "%1 = test.spaced  far(%t) [%i, %i]<tensor<4xf32>> -> x",
            "%2 = test.spaced  near(%a) []<f32> {tag} -> x",
            "test.flagged %n unit<u> order second : i32",
            "test.flagged %n : i32",
        ]
    );
}

#[test]
fn an_op_that_breaks_its_declaration_prints_generic() {
    let text = in_func(r#"%0 = "test.pair"(%a) : (f32) -> f32"#);
    let m = parse_module_with(&text, "t.mlir", registry()).unwrap();
    assert!(m.print().contains(r#"%0 = "test.pair"(%a) : (f32) -> f32"#));
    let e = m.verify().unwrap_err().to_string();
    assert!(
        e.contains("'test.pair' op expected 2 operands, but found 1"),
        "{e}"
    );
}

#[test]
fn declared_checks_have_mlir_messages() {
    let cases = [
        (
            r#"%0 = "test.pair"(%a, %b) : (f32, f32) -> i32"#,
            "result #0 must be floating-point-like, but got 'i32'",
        ),
        (
            r#"%0 = "test.pair"(%a, %n) : (f32, i32) -> f32"#,
            "operand #1 must be floating-point-like, but got 'i32'",
        ),
        (
            r#"%0 = "test.pair"(%a, %b) : (f32, f32) -> f64"#,
            "requires the same type for all operands and results",
        ),
        (
            r#"%0 = "test.spaced"(%a, %n) <{kind = #test<kind far>}> : (f32, i32) -> f32"#,
            "operand #1 must be variadic of index, but got 'i32'",
        ),
        (
            r#"%0 = "test.spaced"() <{kind = #test<kind far>}> : () -> f32"#,
            "expected 1 or more operands, but found 0",
        ),
        (
            r#"%0 = "test.spaced"(%a) <{kind = #test<kind up>}> : (f32) -> f32"#,
            "attribute 'kind' must be one of: near, far",
        ),
        (
            r#"%0 = "test.spaced"(%a) : (f32) -> f32"#,
            "requires attribute 'kind'",
        ),
        (
            r#"%0 = "test.spaced"(%a) <{kind = #test<kind far>}> : (f32) -> f64"#,
            "result type 'f64' is not 'f32'",
        ),
        (
            r#""test.flagged"(%n) <{order = 2 : i64}> : (i32) -> ()"#,
            "requires a valid 'order' attribute",
        ),
        (
            r#""test.flagged"(%n) <{flag = 1 : i64}> : (i32) -> ()"#,
            "attribute 'flag' failed to satisfy constraint: #test.flag attribute",
        ),
        (
            r#"%0 = "test.flagged"(%n) : (i32) -> i32"#,
            "requires zero results",
        ),
    ];
    for (op, message) in cases {
        let e = error(&in_func(op));
        assert!(e.contains(message), "{op}\n  wanted: {message}\n  got: {e}");
    }
}

#[test]
fn parse_errors_are_located() {
    let cases = [
        (
            "%0 = test.pair %a : f32",
            "2:19: error: expected ',', found ':'",
        ),
        (
            "%0 = test.pair %a, %b : i32",
            "2:16: error: use of value '%a' expects different type",
        ),
        (
            "%0 = test.spaced up (%a)[]<f32> -> x",
            "2:18: error: expected ::test::Kind to be one of: near, far",
        ),
        (
            "test.flagged %n order third : i32",
            "2:23: error: invalid order 'third'",
        ),
        (
            "%0 = test.spaced far (%a)[] <f32> -> y",
            "error: expected 'x'",
        ),
    ];
    for (op, message) in cases {
        let e = error(&in_func(op));
        assert!(e.contains(message), "{op}\n  wanted: {message}\n  got: {e}");
    }
}

#[test]
fn malformed_formats_are_refused_when_read() {
    const SPEC: OpSpec = OpSpec {
        operands: &[one("a", &ANY)],
        ..OpSpec::NONE
    };
    for (format, message) in [
        ("$a `,", "unclosed literal"),
        ("$b", "no operand or property 'b'"),
        ("($a)?", "a group needs an anchor"),
        ("$a^", "an anchor outside an optional group"),
        ("($a^ type($a)^)?", "a group has one anchor"),
        ("($a^", "unclosed optional group"),
        ("$a)", "unmatched ')'"),
        ("type($c)", "no operand or result 'c'"),
        ("%a", "unknown element"),
    ] {
        let e = compile(format, SPEC).unwrap_err();
        assert!(e.contains(message), "{format}: {e}");
    }
}
