//! `arith` and `math` ops through the whole interpreter: each case is a one-thread kernel
//! that extracts three operands `%a`, `%b`, `%c` from an input tensor, runs a few lines of
//! IR defining `%r`, and inserts `%r` into the output tensor.

use crate::common;
use ir::dialects::arith;
use ir::dialects::math;

use common::{expect_error, run};
use half::{bf16, f16};
use interp::{Buffer, Error, ErrorKind};

/// Bytes per element of a scalar type in a buffer.
fn size(ty: &str) -> usize {
    match ty {
        "i1" | "i8" => 1,
        "i16" | "f16" | "bf16" => 2,
        "i32" | "f32" => 4,
        _ => 8,
    }
}

fn buffer(ty: &str, values: &[u64]) -> Buffer {
    let n = size(ty);
    Buffer::new(
        values
            .iter()
            .flat_map(|v| v.to_le_bytes()[..n].to_vec())
            .collect(),
    )
}

/// Runs `body` (IR defining `%r` of type `result` from `%a`, `%b`, `%c` of type `ty`) on
/// the operand bit patterns; returns the bits of `%r`.
fn eval(body: &str, ty: &str, result: &str, operands: &[u64]) -> Result<u64, Error> {
    let text = format!(
        r#"
func.func @main(%in: tensor<3x{ty}>, %out: tensor<1x{result}>) -> tensor<1x{result}> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = tensor.extract %in[%c0] : tensor<3x{ty}>
  %b = tensor.extract %in[%c1] : tensor<3x{ty}>
  %c = tensor.extract %in[%c2] : tensor<3x{ty}>
  {body}
  %o = tensor.insert %r into %out[%c0] : tensor<1x{result}>
  return %o : tensor<1x{result}>
}}"#
    );
    let mut values = operands.to_vec();
    values.resize(3, 0);
    let out = run(&text, 1, 1, vec![buffer(ty, &values), buffer(result, &[0])])?;
    let mut bytes = [0u8; 8];
    bytes[..size(result)].copy_from_slice(out[1].bytes());
    Ok(u64::from_le_bytes(bytes))
}

fn mask(ty: &str) -> u64 {
    match size(ty) * 8 {
        64 => u64::MAX,
        w => (1u64 << w) - 1,
    }
}

/// `op %a, %b` on integers of `ty`, as a signed value.
fn int(op: &str, ty: &str, a: i64, b: i64) -> i64 {
    let body = format!("%r = {op} %a, %b : {ty}");
    let m = mask(ty);
    let bits =
        eval(&body, ty, ty, &[a as u64 & m, b as u64 & m]).unwrap_or_else(|e| panic!("{op}: {e}"));
    let w = size(ty) as u32 * 8;
    ((bits << (64 - w)) as i64) >> (64 - w)
}

#[test]
fn integer_arithmetic_wraps_and_rounds_as_named() {
    let cases: &[(&str, &str, i64, i64, i64)] = &[
        (arith::ADDI, "i8", 127, 1, -128),
        (arith::SUBI, "i8", -128, 1, 127),
        (arith::MULI, "i16", 300, 300, 24464),
        (arith::DIVSI, "i32", -7, 2, -3),
        (arith::DIVUI, "i8", -1, 2, 127),
        (arith::CEILDIVSI, "i32", -7, 2, -3),
        (arith::CEILDIVSI, "i32", 7, 2, 4),
        (arith::CEILDIVUI, "i32", 7, 2, 4),
        (arith::FLOORDIVSI, "i32", -7, 2, -4),
        (arith::REMSI, "i32", -7, 2, -1),
        (arith::REMUI, "i8", -1, 10, 5),
        (arith::ANDI, "i32", 0b1100, 0b1010, 0b1000),
        (arith::ORI, "i32", 0b1100, 0b1010, 0b1110),
        (arith::XORI, "i32", 0b1100, 0b1010, 0b0110),
        (arith::SHLI, "i8", 1, 7, -128),
        (arith::SHRSI, "i8", -128, 7, -1),
        (arith::SHRUI, "i8", -128, 7, 1),
        (arith::MAXSI, "i8", -1, 1, 1),
        (arith::MAXUI, "i8", -1, 1, -1),
        (arith::MINSI, "i8", -1, 1, -1),
        (arith::MINUI, "i8", -1, 1, 1),
        (arith::ADDI, "i64", i64::MAX, 1, i64::MIN),
        (arith::MULI, "index", 1 << 40, 1 << 30, 0),
    ];
    for &(op, ty, a, b, want) in cases {
        assert_eq!(int(op, ty, a, b), want, "{op} {ty} {a} {b}");
    }
}

#[test]
fn division_by_zero_is_reported_and_guarded_division_is_not() {
    let e = expect_error(
        eval("%r = arith.divsi %a, %b : i32", "i32", "i32", &[7, 0]),
        ErrorKind::UndefinedBehavior,
        &[
            "division by zero",
            "'arith.divsi'",
            "test.mlir:9:3:",
            "(block 0, thread 0)",
        ],
    );
    assert!(e.site.is_some());
    expect_error(
        eval("%r = arith.remsi %a, %b : i8", "i8", "i8", &[0x80, 0xFF]),
        ErrorKind::UndefinedBehavior,
        &["signed division overflow"],
    );
    // The elemental emitter's guard: divide by 1 where the divisor is 0, then select -1.
    let guarded = "%zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %m1 = arith.constant -1 : i32
  %z = arith.cmpi eq, %b, %zero : i32
  %safe = arith.select %z, %one, %b : i32
  %q = arith.divsi %a, %safe : i32
  %r = arith.select %z, %m1, %q : i32";
    assert_eq!(eval(guarded, "i32", "i32", &[7, 0]).unwrap() as i32, -1);
}

#[test]
fn poison_is_reported_only_where_used() {
    // An out-of-range shift selected away (as the emitter guards shifts) is fine ...
    let guarded = "%w = arith.constant 8 : i8
  %zero = arith.constant 0 : i8
  %ok = arith.cmpi ult, %b, %w : i8
  %s = arith.shli %a, %b : i8
  %r = arith.select %ok, %s, %zero : i8";
    assert_eq!(eval(guarded, "i8", "i8", &[1, 9]).unwrap(), 0);
    assert_eq!(eval(guarded, "i8", "i8", &[1, 3]).unwrap(), 8);
    // ... but written to a tensor it is an error naming the op that made it.
    expect_error(
        eval("%r = arith.shli %a, %b : i8", "i8", "i8", &[1, 9]),
        ErrorKind::Poison,
        &[
            "produced by 'arith.shli' at test.mlir:9:3)",
            "written to a tensor",
            "'tensor.insert'",
        ],
    );
    // Poison propagates through arithmetic and casts, and through a select's condition.
    expect_error(
        eval(
            "%x = arith.fptosi %a : f32 to i32\n  %y = arith.addi %x, %x : i32\n  %r = arith.sitofp %y : i32 to f32",
            "f32",
            "f32",
            &[u64::from(3e9f32.to_bits())],
        ),
        ErrorKind::Poison,
        &["'arith.fptosi'"],
    );
    expect_error(
        eval(
            "%x = arith.addi %a, %b overflow<nsw> : i8\n  %t = arith.cmpi eq, %x, %a : i8\n  %r = arith.select %t, %a, %b : i8",
            "i8",
            "i8",
            &[127, 1],
        ),
        ErrorKind::Poison,
        &["'arith.addi'"],
    );
    // Branching on poison is immediate undefined behaviour.
    expect_error(
        eval(
            "%s = arith.shrui %a, %b : i8\n  %t = arith.trunci %s : i8 to i1\n  %r = scf.if %t -> (i8) {\n    scf.yield %a : i8\n  } else {\n    scf.yield %b : i8\n  }",
            "i8",
            "i8",
            &[1, 200],
        ),
        ErrorKind::Poison,
        &["used as a condition", "'scf.if'"],
    );
}

#[test]
fn comparisons_and_select() {
    let preds = [
        ("eq", 0),
        ("ne", 1),
        ("slt", 1),
        ("sle", 1),
        ("sgt", 0),
        ("sge", 0),
        ("ult", 0),
        ("ule", 0),
        ("ugt", 1),
        ("uge", 1),
    ];
    for (p, want) in preds {
        let body = format!("%r = arith.cmpi {p}, %a, %b : i8");
        assert_eq!(eval(&body, "i8", "i1", &[0xFF, 1]).unwrap(), want, "{p}");
    }
    let nan = u64::from(f32::NAN.to_bits());
    let one = u64::from(1f32.to_bits());
    let preds = [
        ("false", 0),
        ("oeq", 0),
        ("one", 0),
        ("ord", 0),
        ("olt", 0),
        ("ueq", 1),
        ("une", 1),
        ("uno", 1),
        ("ult", 1),
        ("true", 1),
    ];
    for (p, want) in preds {
        let body = format!("%r = arith.cmpf {p}, %a, %b : f32");
        assert_eq!(eval(&body, "f32", "i1", &[nan, one]).unwrap(), want, "{p}");
    }
    let select = "%lt = arith.cmpi slt, %a, %b : i32\n  %r = arith.select %lt, %a, %b : i32";
    assert_eq!(eval(select, "i32", "i32", &[3, 5]).unwrap(), 3);
    assert_eq!(eval(select, "i32", "i32", &[6, 5]).unwrap(), 5);
}

fn f32_bits(x: f32) -> u64 {
    u64::from(x.to_bits())
}

fn bf16_bits(x: f32) -> u64 {
    u64::from(bf16::from_f32(x).to_bits())
}

#[test]
fn float_arithmetic_rounds_to_the_type_after_each_op() {
    let f = |body: &str, ty: &str, ops: &[u64]| eval(body, ty, ty, ops).unwrap();
    let one = bf16_bits(1.0);
    let half_ulp = bf16_bits(2f32.powi(-8));
    // bf16: (1 + 2^-8) + 2^-8 rounds at each step (ties to even): 1, then 1.
    let body = "%s = arith.addf %a, %b : bf16\n  %r = arith.addf %s, %b : bf16";
    assert_eq!(f(body, "bf16", &[one, half_ulp]), one);
    // In f32 the same sum is exact.
    let body = "%s = arith.addf %a, %b : f32\n  %r = arith.addf %s, %b : f32";
    let got = f(body, "f32", &[f32_bits(1.0), f32_bits(2f32.powi(-8))]);
    assert_eq!(f32::from_bits(got as u32), 1.0 + 2f32.powi(-7));
    let cases: &[(&str, f32, f32, f32)] = &[
        (arith::SUBF, 1.5, 0.25, 1.25),
        (arith::MULF, 1.5, -2.0, -3.0),
        (arith::DIVF, 1.0, 4.0, 0.25),
        (arith::REMF, 7.5, 2.0, 1.5),
        (arith::MAXIMUMF, -0.0, 0.0, 0.0),
        (arith::MINIMUMF, -0.0, 0.0, -0.0),
        (arith::MAXNUMF, f32::NAN, 2.0, 2.0),
        (arith::MINNUMF, 3.0, f32::NAN, 3.0),
    ];
    for &(op, a, b, want) in cases {
        for ty in ["f16", "bf16", "f32", "f64"] {
            let bits = |x: f32| match ty {
                "f16" => u64::from(f16::from_f32(x).to_bits()),
                "bf16" => bf16_bits(x),
                "f32" => f32_bits(x),
                _ => f64::from(x).to_bits(),
            };
            let got = f(&format!("%r = {op} %a, %b : {ty}"), ty, &[bits(a), bits(b)]);
            assert_eq!(got, bits(want), "{op} {ty}");
        }
    }
    let maximum = f(
        "%r = arith.maximumf %a, %b : f32",
        "f32",
        &[f32_bits(f32::NAN), f32_bits(1.0)],
    );
    assert!(f32::from_bits(maximum as u32).is_nan());
    let neg = f("%r = arith.negf %a : bf16", "bf16", &[one]);
    assert_eq!(neg, bf16_bits(-1.0));
    // fastmath<nnan> makes a NaN result poison.
    expect_error(
        eval(
            "%r = arith.subf %a, %a fastmath<nnan> : f32",
            "f32",
            "f32",
            &[f32_bits(f32::INFINITY)],
        ),
        ErrorKind::Poison,
        &["'arith.subf'"],
    );
}

#[test]
fn casts() {
    let cases: &[(&str, &str, &str, u64, u64)] = &[
        (arith::EXTF, "bf16", "f32", bf16_bits(1.5), f32_bits(1.5)),
        (
            arith::TRUNCF,
            "f32",
            "bf16",
            f32_bits(1.0 + 2f32.powi(-8)),
            bf16_bits(1.0),
        ),
        (arith::TRUNCF, "f64", "f32", 0.1f64.to_bits(), f32_bits(0.1)),
        (arith::EXTSI, "i8", "i32", 0xFF, 0xFFFF_FFFF),
        (arith::EXTUI, "i8", "i32", 0xFF, 0xFF),
        (arith::TRUNCI, "i32", "i8", 0x1234, 0x34),
        (arith::SITOFP, "i32", "f32", 0xFFFF_FFFE, f32_bits(-2.0)),
        (
            arith::UITOFP,
            "i32",
            "f32",
            0xFFFF_FFFE,
            f32_bits(4294967294.0),
        ),
        (arith::FPTOSI, "f32", "i32", f32_bits(-2.9), 0xFFFF_FFFE),
        (arith::FPTOUI, "f32", "i8", f32_bits(255.9), 255),
        (arith::INDEX_CAST, "i32", "index", 0xFFFF_FFFF, u64::MAX),
        (arith::INDEX_CAST, "index", "i32", u64::MAX, 0xFFFF_FFFF),
        (
            arith::INDEX_CASTUI,
            "i32",
            "index",
            0xFFFF_FFFF,
            0xFFFF_FFFF,
        ),
        (arith::BITCAST, "f32", "i32", f32_bits(1.0), 0x3F80_0000),
    ];
    for &(op, from, to, a, want) in cases {
        let body = format!("%r = {op} %a : {from} to {to}");
        assert_eq!(
            eval(&body, from, to, &[a]).unwrap(),
            want,
            "{op} {from} to {to}"
        );
    }
}

type Unary = fn(f32) -> f32;
type Binary = fn(f32, f32) -> f32;

#[test]
fn math_functions_match_rust_std_in_f32_and_round_for_bf16() {
    let x = 0.75f32;
    let unary: &[(&str, Unary)] = &[
        (math::TANH, f32::tanh),
        (math::EXP, f32::exp),
        (math::EXP2, f32::exp2),
        (math::EXPM1, f32::exp_m1),
        (math::LOG, f32::ln),
        (math::LOG1P, f32::ln_1p),
        (math::LOG2, f32::log2),
        (math::LOG10, f32::log10),
        (math::SQRT, f32::sqrt),
        (math::RSQRT, |x| 1.0 / x.sqrt()),
        (math::SIN, f32::sin),
        (math::COS, f32::cos),
        (math::TAN, f32::tan),
        (math::ATAN, f32::atan),
        (math::ACOS, f32::acos),
        (math::ASIN, f32::asin),
        (math::ASINH, f32::asinh),
        (math::ATANH, f32::atanh),
        (math::COSH, f32::cosh),
        (math::SINH, f32::sinh),
        (math::ABSF, f32::abs),
        (math::FLOOR, f32::floor),
        (math::CEIL, f32::ceil),
        (math::ROUND, f32::round),
        (math::ROUNDEVEN, f32::round_ties_even),
        (math::TRUNC, f32::trunc),
        (math::CBRT, f32::cbrt),
    ];
    for &(op, f) in unary {
        let got = eval(&format!("%r = {op} %a : f32"), "f32", "f32", &[f32_bits(x)]).unwrap();
        assert_eq!(got, f32_bits(f(x)), "{op}");
        let got = eval(
            &format!("%r = {op} %a : bf16"),
            "bf16",
            "bf16",
            &[bf16_bits(x)],
        )
        .unwrap();
        assert_eq!(got, bf16_bits(f(x)), "{op} on bf16");
    }
    let acosh = eval(
        "%r = math.acosh %a : f64",
        "f64",
        "f64",
        &[2.5f64.to_bits()],
    )
    .unwrap();
    assert_eq!(f64::from_bits(acosh), 2.5f64.acosh());
    let erf = eval("%r = math.erf %a : f32", "f32", "f32", &[f32_bits(0.5)]).unwrap();
    assert_eq!(f32::from_bits(erf as u32), 0.520_499_9);
    let erfc = eval("%r = math.erfc %a : f32", "f32", "f32", &[f32_bits(3.0)]).unwrap();
    assert!((f32::from_bits(erfc as u32) / 2.209_05e-5 - 1.0).abs() < 1e-5);
    let binary: &[(&str, Binary)] = &[
        (math::POWF, f32::powf),
        (math::ATAN2, f32::atan2),
        (math::COPYSIGN, f32::copysign),
    ];
    for &(op, f) in binary {
        let body = format!("%r = {op} %a, %b : f32");
        let got = eval(&body, "f32", "f32", &[f32_bits(x), f32_bits(-1.5)]).unwrap();
        assert_eq!(got, f32_bits(f(x, -1.5)), "{op}");
    }
    let fma = eval(
        "%r = math.fma %a, %b, %c : f32",
        "f32",
        "f32",
        &[
            f32_bits(1.0 + 2f32.powi(-12)),
            f32_bits(1.0 - 2f32.powi(-12)),
            f32_bits(-1.0),
        ],
    )
    .unwrap();
    assert_eq!(f32::from_bits(fma as u32), -(2f32.powi(-24)));
    let ints: &[(&str, u64, u64)] = &[
        (math::ABSI, 0xFFFF_FFFB, 5),
        (math::CTLZ, 1, 31),
        (math::CTTZ, 8, 3),
        (math::CTPOP, 0xF0F0, 8),
    ];
    for &(op, a, want) in ints {
        let got = eval(&format!("%r = {op} %a : i32"), "i32", "i32", &[a]).unwrap();
        assert_eq!(got, want, "{op}");
    }
}

#[test]
fn vectors_compute_lane_by_lane() {
    // Broadcast the operands, add and compare as vectors, select, then reduce the lanes.
    let body = "%va = vector.broadcast %a : f32 to vector<4xf32>
  %k = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
  %sum = arith.addf %va, %k : vector<4xf32>
  %vb = vector.broadcast %b : f32 to vector<4xf32>
  %gt = arith.cmpf ogt, %sum, %vb : vector<4xf32>
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %sel = arith.select %gt, %sum, %zero : vector<4xi1>, vector<4xf32>
  %e0 = vector.extract %sel[0] : f32 from vector<4xf32>
  %e1 = vector.extract %sel[1] : f32 from vector<4xf32>
  %e2 = vector.extract %sel[2] : f32 from vector<4xf32>
  %e3 = vector.extract %sel[3] : f32 from vector<4xf32>
  %s01 = arith.addf %e0, %e1 : f32
  %s23 = arith.addf %e2, %e3 : f32
  %r = arith.addf %s01, %s23 : f32";
    // a = 10: lanes 11, 12, 13, 14; b = 12.5 keeps 13 and 14.
    let got = eval(body, "f32", "f32", &[f32_bits(10.0), f32_bits(12.5)]).unwrap();
    assert_eq!(f32::from_bits(got as u32), 27.0);
}
