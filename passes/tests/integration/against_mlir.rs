//! `canonicalize` folds like MLIR 22's canonicalizer: seeded random functions, each
//! returning one arith op applied to constants and arguments, are canonicalized by us and by
//! real MLIR (through melior); both must return the same thing — the same constant (bit for
//! bit, NaN payloads included), the same argument, or an unfolded op of the same name.

use ir::dialects::arith;
use ir::dialects::func;
use ir::{Attribute, Module, OpId, Registry, ValueDef, parse_module_with};
use passes::{Canonicalize, Pass};

const INT_TYPES: &[&str] = &["i1", "i8", "i16", "i32", "i64", "index"];
const FLOAT_TYPES: &[&str] = &["f16", "bf16", "f32", "f64"];
const INT_OPS: &[&str] = &[
    "addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori", "xori", "shli",
    "shrsi", "shrui", "maxsi", "maxui", "minsi", "minui",
];
const FLOAT_OPS: &[&str] = &[
    "addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf",
];
const CMPI: &[&str] = &[
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];
const CMPF: &[&str] = &[
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
    "une", "uno", "true",
];
/// Casts with operand and result types.
const CASTS: &[(&str, &str, &str)] = &[
    ("sitofp", "i8", "f16"),
    ("sitofp", "i64", "bf16"),
    ("sitofp", "i32", "f32"),
    ("uitofp", "i8", "f32"),
    ("uitofp", "i64", "f16"),
    ("fptosi", "f32", "i8"),
    ("fptosi", "f64", "i32"),
    ("fptoui", "bf16", "i16"),
    ("fptoui", "f32", "i64"),
    ("extf", "bf16", "f32"),
    ("extf", "f16", "f64"),
    ("truncf", "f32", "bf16"),
    ("truncf", "f64", "f16"),
    ("truncf", "f64", "f32"),
    ("bitcast", "f32", "i32"),
    ("bitcast", "i16", "bf16"),
    ("extsi", "i8", "i32"),
    ("extui", "i1", "i64"),
    ("trunci", "i64", "i8"),
    ("index_cast", "index", "i16"),
    ("index_castui", "i8", "index"),
];

fn pick<'a>(rng: &mut fastrand::Rng, items: &[&'a str]) -> &'a str {
    items[rng.usize(..items.len())]
}

/// An integer constant of `ty` (edge values often), as an `arith.constant` operand text.
fn int_literal(rng: &mut fastrand::Rng, ty: &str) -> String {
    if ty == "i1" {
        return if rng.bool() { "true" } else { "false" }.into();
    }
    let width: u32 = if ty == "index" {
        64
    } else {
        ty[1..].parse().unwrap()
    };
    let (min, max) = (-(1i128 << (width - 1)), (1i128 << (width - 1)) - 1);
    let v = match rng.u32(..8) {
        0 => min,
        1 => max,
        2 => i128::from(width),
        3 => rng.i128(min..=max),
        _ => i128::from(rng.i8(-8..=8)),
    };
    format!("{v} : {ty}")
}

/// A float constant of `ty`: signed zeros, ones, infinities, NaNs, ties and random values.
fn float_literal(rng: &mut fastrand::Rng, ty: &str) -> String {
    let special = match ty {
        "f16" => ["0x7C00", "0xFC00", "0x7E00", "0xFE01"],
        "bf16" => ["0x7F80", "0xFF80", "0x7FC0", "0xFFC1"],
        "f32" => ["0x7F800000", "0xFF800000", "0x7FC00000", "0xFFC00001"],
        _ => [
            "0x7FF0000000000000",
            "0xFFF0000000000000",
            "0x7FF8000000000000",
            "0xFFF8000000000001",
        ],
    };
    let text = match rng.u32(..10) {
        0 => special[rng.usize(..4)].to_owned(),
        1 => pick(rng, &["0.0", "-0.0", "1.0", "-1.0", "0.5"]).to_owned(),
        2 => pick(rng, &["65504.0", "65520.0", "1.0e-8", "3.0e-5", "0.1"]).to_owned(),
        3 if ty != "f16" => "1.0e30".to_owned(),
        4 => format!("{:e}", (rng.f64() - 0.5) * 1e-3),
        _ => format!("{:e}", (rng.f64() - 0.5) * 200.0),
    };
    format!("{text} : {ty}")
}

fn literal(rng: &mut fastrand::Rng, ty: &str) -> String {
    if FLOAT_TYPES.contains(&ty) {
        float_literal(rng, ty)
    } else {
        int_literal(rng, ty)
    }
}

/// `%a` and `%b` for a binary op on `ty`: both constants, or the argument on one side.
fn operands(rng: &mut fastrand::Rng, ty: &str, body: &mut String) -> (&'static str, &'static str) {
    body.push_str(&format!("  %ca = arith.constant {}\n", literal(rng, ty)));
    body.push_str(&format!("  %cb = arith.constant {}\n", literal(rng, ty)));
    match rng.u32(..4) {
        0 => ("%x", "%cb"),
        1 => ("%ca", "%x"),
        2 => ("%x", "%x"),
        _ => ("%ca", "%cb"),
    }
}

/// Function `@f<n>(%x: T) -> R` computing one random op.
fn case(rng: &mut fastrand::Rng, n: usize) -> String {
    let mut body = String::new();
    let (arg, result) = match rng.u32(..10) {
        0..=2 => {
            let op = pick(rng, INT_OPS);
            let ty = match pick(rng, INT_TYPES) {
                "i1" if op.starts_with("sh") => "i8",
                t => t,
            };
            let (a, b) = operands(rng, ty, &mut body);
            body.push_str(&format!("  %r = arith.{op} {a}, {b} : {ty}\n"));
            (ty, ty)
        }
        3..=5 => {
            let (op, ty) = (pick(rng, FLOAT_OPS), pick(rng, FLOAT_TYPES));
            let (a, b) = operands(rng, ty, &mut body);
            body.push_str(&format!("  %r = arith.{op} {a}, {b} : {ty}\n"));
            (ty, ty)
        }
        6 => {
            let (p, ty) = (pick(rng, CMPI), pick(rng, INT_TYPES));
            let (a, b) = operands(rng, ty, &mut body);
            body.push_str(&format!("  %r = arith.cmpi {p}, {a}, {b} : {ty}\n"));
            (ty, "i1")
        }
        7 => {
            let (p, ty) = (pick(rng, CMPF), pick(rng, FLOAT_TYPES));
            let (a, b) = operands(rng, ty, &mut body);
            body.push_str(&format!("  %r = arith.cmpf {p}, {a}, {b} : {ty}\n"));
            (ty, "i1")
        }
        8 => {
            let ty = pick(rng, &["i8", "f32"]);
            let (a, b) = operands(rng, ty, &mut body);
            let cond = match pick(rng, &["true", "false", "%c"]) {
                "%c" => "%c",
                value => {
                    body.push_str(&format!("  %k = arith.constant {value}\n"));
                    "%k"
                }
            };
            body.push_str(&format!("  %r = arith.select {cond}, {a}, {b} : {ty}\n"));
            (ty, ty)
        }
        _ => {
            let &(op, from, to) = &CASTS[rng.usize(..CASTS.len())];
            let input = if rng.u32(..4) == 0 { "%x" } else { "%ca" };
            body.push_str(&format!("  %ca = arith.constant {}\n", literal(rng, from)));
            body.push_str(&format!("  %r = arith.{op} {input} : {from} to {to}\n"));
            (from, to)
        }
    };
    format!("func.func @f{n}(%x: {arg}, %c: i1) -> {result} {{\n{body}  return %r : {result}\n}}\n")
}

/// What a function returns after canonicalization.
#[derive(Debug, PartialEq)]
enum Returned {
    Argument(u32),
    Constant(Attribute),
    Op(&'static str),
}

fn returned(m: &Module, f: OpId) -> Returned {
    let ret = m
        .collect_ops(f)
        .into_iter()
        .find(|&o| m.is(o, func::RETURN))
        .expect("a return");
    let v = m.operand(ret, 0);
    match m.value_def(v) {
        ValueDef::Arg { index, .. } => Returned::Argument(index),
        ValueDef::Result { op, .. } if m.is(op, arith::CONSTANT) => {
            Returned::Constant(m.prop(op, "value").expect("a value").clone())
        }
        ValueDef::Result { op, .. } => Returned::Op(m.name(op).as_str()),
        ValueDef::Detached => panic!("detached return operand"),
    }
}

fn functions(m: &Module) -> Vec<(String, OpId)> {
    m.block_ops(m.body())
        .filter_map(|f| m.symbol_name(f).map(|n| (n.to_owned(), f)))
        .collect()
}

#[test]
fn folds_agree_with_mlir() {
    let mut rng = fastrand::Rng::with_seed(0x5eed_f01d);
    let cases: Vec<String> = (0..3000).map(|n| case(&mut rng, n)).collect();
    let text = cases.concat();

    let mut ours = parse_module_with(&text, "cases.mlir", Registry::standard()).unwrap();
    ours.verify().unwrap();
    Canonicalize::default().run(&mut ours).unwrap();
    ours.verify().unwrap();

    let mlir = codegen::mlir::run_pipeline(&text, "builtin.module(canonicalize)")
        .unwrap_or_else(|e| panic!("mlir-opt failed: {e}"));
    let theirs = parse_module_with(&mlir, "mlir.mlir", Registry::standard()).unwrap();

    let (a, b) = (functions(&ours), functions(&theirs));
    assert_eq!(a.len(), cases.len());
    assert_eq!(b.len(), cases.len());
    let mut mismatches = Vec::new();
    for (((name, f), (_, g)), case) in a.iter().zip(&b).zip(&cases) {
        let (x, y) = (returned(&ours, *f), returned(&theirs, *g));
        if x != y {
            mismatches.push(format!("{name}: ours {x:?}, MLIR {y:?}\n{case}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches[..mismatches.len().min(10)].join("\n")
    );
}
