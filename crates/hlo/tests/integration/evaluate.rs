//! Reference evaluator tests: hand-checked values for every op family, the corner cases of
//! XLA's integer, conversion and NaN rules, bf16 rounding after each op, the documented
//! reduction order, layout-aware bitcasts, the seed's GELU against a per-op f32 formula,
//! seeded random inputs, and the errors for what the evaluator refuses.

use half::{bf16, f16};
use hlo::evaluate::Elements::{BF16, F16, F32, F64, Pred, S8, S32, S64, U8, U16, U32, U64};
use hlo::evaluate::{
    Elements, HostArray, HostValue, RandomRange, evaluate, evaluate_fusion,
    evaluate_fusion_with_sums_pushed, random_arguments, random_array, random_value,
};
use hlo::{ArrayShape, HloModule, PrimitiveType, Shape, SourceFile, parse_module, verify_module};

// ---- helpers ----------------------------------------------------------------------------

const SOURCE_NAME: &str = "t.hlo";

fn module(text: &str) -> HloModule {
    let source = SourceFile::new(SOURCE_NAME, text);
    let module = parse_module(&source)
        .unwrap_or_else(|d| panic!("snippet must parse:\n{}", d.render(&source)));
    if let Err(d) = verify_module(&module) {
        panic!("snippet must verify:\n{}", d.render(&source));
    }
    module
}

/// Evaluates the entry computation (the last one of a bare snippet).
fn run(text: &str, args: Vec<HostValue>) -> HostValue {
    let m = module(text);
    let source = SourceFile::new(SOURCE_NAME, text);
    evaluate(&m, m.entry, &args).unwrap_or_else(|d| panic!("{}", d.render(&source)))
}

/// The first line of the rendered error of evaluating `text` on `args`.
fn error(text: &str, args: Vec<HostValue>) -> String {
    let m = module(text);
    let source = SourceFile::new(SOURCE_NAME, text);
    let d = evaluate(&m, m.entry, &args).expect_err("evaluation must fail");
    d.render(&source)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

fn array(dims: &[i64], elements: Elements) -> HostValue {
    HostValue::Array(HostArray::new(dims.to_vec(), elements).expect("consistent test array"))
}

fn vector(elements: Elements) -> HostValue {
    let n = elements.len() as i64;
    array(&[n], elements)
}

fn elements(v: &HostValue) -> &Elements {
    v.as_array().expect("an array result").elements()
}

fn tuple(v: &HostValue) -> &[HostValue] {
    match v {
        HostValue::Tuple(vs) => vs,
        HostValue::Array(_) => panic!("expected a tuple, got {v}"),
    }
}

fn f32s(v: &HostValue) -> &[f32] {
    match elements(v) {
        F32(x) => x,
        other => panic!("expected f32 elements, got {other:?}"),
    }
}

fn s32s(v: &HostValue) -> Vec<i32> {
    match elements(v) {
        S32(v) => v.clone(),
        other => panic!("expected s32, got {other:?}"),
    }
}

fn bf16s(values: &[f32]) -> Elements {
    BF16(values.iter().map(|&x| bf16::from_f32(x)).collect())
}

/// One op applied to vectors of one element type, the first operand's:
/// `c { ... ROOT r = TY[n] OP(...) ATTRS }`.
fn elementwise(op: &str, attrs: &str, args: Vec<Elements>) -> HostValue {
    let ty = args[0].element_type();
    let n = args[0].len();
    let params: String = (0..args.len())
        .map(|i| format!("p{i} = {ty}[{n}] parameter({i})\n"))
        .collect();
    let operands: Vec<String> = (0..args.len()).map(|i| format!("p{i}")).collect();
    let result_ty = if op == "compare" || op == "is-finite" {
        "pred".to_string()
    } else {
        ty.to_string()
    };
    let text = format!(
        "c {{\n{params}ROOT r = {result_ty}[{n}] {op}({}){attrs}\n}}",
        operands.join(", ")
    );
    run(&text, args.into_iter().map(vector).collect())
}

/// Elementwise cases, `(op, operands, result)`, each checked on its own; a failure names the
/// op and its operand type.
fn assert_ops(cases: Vec<(&str, Vec<Elements>, Elements)>) {
    for (op, args, want) in cases {
        let ty = args[0].element_type();
        let out = elementwise(op, "", args);
        assert_eq!(elements(&out), &want, "{op} on {ty}");
    }
}

/// `x` compared with `y` under `attrs` (`direction=.., type=..`).
fn compare(attrs: &str, x: &Elements, y: &Elements) -> Elements {
    let out = elementwise("compare", &format!(", {attrs}"), vec![x.clone(), y.clone()]);
    elements(&out).clone()
}

// ---- integers ---------------------------------------------------------------------------

#[test]
fn integer_division_and_remainder_corner_cases() {
    let min = i32::MIN;
    let (x, y) = (
        S32(vec![7, -7, 7, 5, min, min]),
        S32(vec![2, 2, -2, 0, -1, 0]),
    );
    let (ux, uy) = (U8(vec![200, 7]), U8(vec![0, 2]));
    let (big, minus) = (S64(vec![i64::MIN, -9]), S64(vec![-1, 4]));
    assert_ops(vec![
        (
            "divide",
            vec![x.clone(), y.clone()],
            S32(vec![3, -3, -3, -1, min, -1]),
        ),
        ("remainder", vec![x, y], S32(vec![1, -1, 1, 5, 0, min])),
        ("divide", vec![ux.clone(), uy.clone()], U8(vec![255, 3])),
        ("remainder", vec![ux, uy], U8(vec![200, 1])),
        ("divide", vec![big, minus], S64(vec![i64::MIN, -2])),
    ]);
}

#[test]
fn integer_arithmetic_wraps_around() {
    let x = S32(vec![i32::MIN, -3, 0, 5]);
    assert_ops(vec![
        (
            "add",
            vec![S8(vec![127, -128]), S8(vec![1, -1])],
            S8(vec![-128, 127]),
        ),
        (
            "multiply",
            vec![U8(vec![16, 255]), U8(vec![16, 255])],
            U8(vec![0, 1]),
        ),
        (
            "subtract",
            vec![U16(vec![0]), U16(vec![1])],
            U16(vec![65535]),
        ),
        (
            "multiply",
            vec![S64(vec![i64::MAX]), S64(vec![2])],
            S64(vec![-2]),
        ),
        ("negate", vec![x.clone()], S32(vec![i32::MIN, 3, 0, -5])),
        ("abs", vec![x.clone()], S32(vec![i32::MIN, 3, 0, 5])),
        ("sign", vec![x], S32(vec![-1, -1, 0, 1])),
        ("maximum", vec![U8(vec![200]), U8(vec![100])], U8(vec![200])),
        ("minimum", vec![S8(vec![-56]), S8(vec![100])], S8(vec![-56])),
    ]);
}

#[test]
fn shifts_by_the_bit_width_or_more() {
    let x = S8(vec![1, 1, -128, 64, -128, 1]);
    // -1 as a shift amount reads as 255.
    let y = S8(vec![7, 8, 1, -1, 9, 3]);
    let xy = vec![x, y];
    // Arithmetic shifts replicate the top bit of unsigned values too.
    let unsigned = vec![U8(vec![0x80, 0x80]), U8(vec![1, 200])];
    assert_ops(vec![
        ("shift-left", xy.clone(), S8(vec![-128, 0, 0, 0, 0, 8])),
        (
            "shift-right-logical",
            xy.clone(),
            S8(vec![0, 0, 64, 0, 0, 0]),
        ),
        ("shift-right-arithmetic", xy, S8(vec![0, 0, -64, 0, -1, 0])),
        ("shift-right-arithmetic", unsigned, U8(vec![0xC0, 0xFF])),
    ]);
}

#[test]
fn bit_operations() {
    let p = Pred(vec![false, false, true, true]);
    let q = Pred(vec![false, true, false, true]);
    let pq = vec![p.clone(), q];
    assert_ops(vec![
        (
            "count-leading-zeros",
            vec![S32(vec![1, 0, -1, 65536])],
            S32(vec![31, 32, 0, 15]),
        ),
        (
            "popcnt",
            vec![S8(vec![-1, 0, 7, -128])],
            S8(vec![8, 0, 3, 1]),
        ),
        ("not", vec![U8(vec![0, 0x0F])], U8(vec![255, 0xF0])),
        (
            "xor",
            vec![S32(vec![0b1100]), S32(vec![0b1010])],
            S32(vec![0b0110]),
        ),
        ("and", pq.clone(), Pred(vec![false, false, false, true])),
        // pred add is or, multiply is and.
        ("add", pq.clone(), Pred(vec![false, true, true, true])),
        ("multiply", pq, Pred(vec![false, false, false, true])),
        ("not", vec![p], Pred(vec![true, true, false, false])),
    ]);
}

// ---- conversions ------------------------------------------------------------------------

fn convert(to: &str, x: Elements) -> HostValue {
    let from = x.element_type();
    let n = x.len();
    run(
        &format!("c {{ p = {from}[{n}] parameter(0) ROOT c = {to}[{n}] convert(p) }}"),
        vec![vector(x)],
    )
}

/// Conversion cases, `(operand, result type, result)`, each checked on its own; a failure
/// names both types.
fn assert_converts(cases: Vec<(Elements, &str, Elements)>) {
    for (x, to, want) in cases {
        let from = x.element_type();
        assert_eq!(elements(&convert(to, x)), &want, "{from} to {to}");
    }
}

#[test]
fn float_to_int_converts_saturate_and_map_nan_to_zero() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let x = F32(vec![
        nan,
        1e10,
        -1e10,
        3.9,
        -3.9,
        inf,
        -inf,
        2147483520.0,
        2147483648.0,
    ]);
    let (max, min) = (i32::MAX, i32::MIN);
    assert_converts(vec![
        (
            x.clone(),
            "s32",
            S32(vec![0, max, min, 3, -3, max, min, 2147483520, max]),
        ),
        (x, "u8", U8(vec![0, 255, 0, 3, 0, 255, 0, 255, 255])),
        // bf16 sources saturate the same way.
        (
            bf16s(&[nan, -300.0, 300.0, 127.5]),
            "s8",
            S8(vec![0, -128, 127, 127]),
        ),
    ]);
}

#[test]
fn converts_to_and_from_pred() {
    let p = Pred(vec![true, false]);
    assert_converts(vec![
        (
            F32(vec![0.0, -0.0, f32::NAN, 0.5]),
            "pred",
            Pred(vec![false, false, true, true]),
        ),
        (S32(vec![0, -7]), "pred", Pred(vec![false, true])),
        (p.clone(), "f32", F32(vec![1.0, 0.0])),
        (p, "s32", S32(vec![1, 0])),
    ]);
}

#[test]
fn integer_converts_truncate_or_extend_by_source_signedness() {
    assert_converts(vec![
        (S32(vec![300, -1, 128]), "s8", S8(vec![44, -1, -128])),
        (S8(vec![-1, 5]), "u32", U32(vec![u32::MAX, 5])),
        (U8(vec![255]), "s32", S32(vec![255])),
        (S32(vec![-1]), "u64", U64(vec![u64::MAX])),
    ]);
}

#[test]
fn float_converts_round_to_nearest_even() {
    // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even is 1. 1 + 3·2^-8 ties to 1 + 2^-6.
    // One more f32 ulp above the tie rounds up.
    let above_tie = f32::from_bits(0x3F80_8001);
    let ulp = 2f32.powi(-8);
    let ties = F32(vec![1.0 + ulp, 1.0 + 3.0 * ulp, above_tie]);
    // f16 ↔ bf16 go through f32: 65504 needs 11 significant bits and rounds up to 2^16,
    // which f16 cannot hold.
    let f16_max = F16(vec![f16::from_f32(65504.0)]);
    assert_converts(vec![
        (ties, "bf16", bf16s(&[1.0, 1.015625, 1.0078125])),
        (f16_max, "bf16", bf16s(&[65536.0])),
        (bf16s(&[65536.0]), "f16", F16(vec![f16::INFINITY])),
        // Integers reach bf16 through f32 (257 ties to 256); f32 rounds 2^24 + 1 to 2^24.
        (S32(vec![257, -3]), "bf16", bf16s(&[256.0, -3.0])),
        (S32(vec![16777217]), "f32", F32(vec![16777216.0])),
        (U32(vec![u32::MAX]), "f64", F64(vec![4294967295.0])),
    ]);
}

#[test]
fn bitcast_convert_reinterprets_bits() {
    let text = "c { p = f32[2] parameter(0) ROOT b = s32[2] bitcast-convert(p) }";
    let out = run(text, vec![vector(F32(vec![1.0, -0.0]))]);
    assert_eq!(elements(&out), &S32(vec![0x3F80_0000, i32::MIN]));
    let text = "c { p = u16[1] parameter(0) ROOT b = bf16[1] bitcast-convert(p) }";
    let out = run(text, vec![vector(U16(vec![0x3FC0]))]);
    assert_eq!(elements(&out), &bf16s(&[1.5]));
}

// ---- floats -----------------------------------------------------------------------------

#[test]
fn bf16_rounds_after_every_op() {
    // In f32, (1 + 2^-8) + 2^-8 = 1 + 2^-7, a bf16 value; rounded after each add it stays 1.
    // Likewise 256 + 1 + 1 is 258 in f32 but 256 in bf16.
    let text = "c {
      a = bf16[2] parameter(0)
      b = bf16[2] parameter(1)
      s = bf16[2] add(a, b)
      ROOT t = bf16[2] add(s, b)
    }";
    let out = run(
        text,
        vec![
            vector(bf16s(&[1.0, 256.0])),
            vector(bf16s(&[0.00390625, 1.0])),
        ],
    );
    assert_eq!(elements(&out), &bf16s(&[1.0, 256.0]));
    // f16 likewise: 2048 + 1 rounds to 2048 each time.
    let text = "c { a = f16[1] parameter(0) s = f16[1] add(a, a) ROOT t = f16[1] subtract(s, a) }";
    let out = run(text, vec![vector(F16(vec![f16::from_f32(2049.0)]))]);
    assert_eq!(elements(&out), &F16(vec![f16::from_f32(2048.0)]));
}

#[test]
fn bf16_transcendentals_are_f32_functions_rounded_once() {
    let xs = [0.5f32, -1.25, 1.75];
    let expected: Vec<f32> = xs
        .iter()
        .map(|&x| bf16::from_f32(x).to_f32().tanh())
        .collect();
    assert_ops(vec![("tanh", vec![bf16s(&xs)], bf16s(&expected))]);
}

#[test]
fn bf16_reductions_round_after_every_step() {
    let text = "add { a = bf16[] parameter(0) b = bf16[] parameter(1) ROOT s = bf16[] add(a, b) }
    c {
      x = bf16[5] parameter(0)
      zero = bf16[] constant(0)
      ROOT r = bf16[] reduce(x, zero), dimensions={0}, to_apply=add
    }";
    // Each 256 + 1 ties back to 256; a sum kept in f32 would give 260.
    let out = run(text, vec![vector(bf16s(&[256.0, 1.0, 1.0, 1.0, 1.0]))]);
    assert_eq!(elements(&out), &bf16s(&[256.0]));
}

#[test]
fn float_compare_is_ordered_except_ne() {
    let x = F32(vec![f32::NAN, 1.0, f32::NAN, -0.0, 1.0]);
    let y = F32(vec![1.0, f32::NAN, f32::NAN, 0.0, 2.0]);
    for (direction, want) in [
        ("EQ", [false, false, false, true, false]),
        ("NE", [true, true, true, false, true]),
        ("LT", [false, false, false, false, true]),
        ("LE", [false, false, false, true, true]),
        ("GT", [false, false, false, false, false]),
        ("GE", [false, false, false, true, false]),
    ] {
        let attrs = format!("direction={direction}");
        assert_eq!(compare(&attrs, &x, &y), Pred(want.to_vec()), "{direction}");
    }
}

#[test]
fn total_order_compare() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let x = F32(vec![-nan, -inf, -0.0, 1.0, inf, nan, -0.0]);
    let y = F32(vec![-inf, -1.0, 0.0, nan, nan, nan, -0.0]);
    assert_eq!(
        compare("direction=LT, type=TOTALORDER", &x, &y),
        Pred(vec![true, true, true, true, true, false, false])
    );
    assert_eq!(
        compare("direction=EQ, type=TOTALORDER", &x, &y),
        Pred(vec![false, false, false, false, false, true, true])
    );
}

#[test]
fn integer_compare_follows_signedness() {
    let u = compare("direction=GT", &U8(vec![200]), &U8(vec![100]));
    assert_eq!(u, Pred(vec![true]));
    let s = compare("direction=GT", &S8(vec![-56]), &S8(vec![100]));
    assert_eq!(s, Pred(vec![false]));
}

#[test]
fn float_minimum_and_maximum_propagate_nan_and_order_signed_zeros() {
    let x = F32(vec![f32::NAN, 1.0, -0.0, 0.0, 2.0]);
    let y = F32(vec![1.0, f32::NAN, 0.0, -0.0, 3.0]);
    for (op, zero, larger) in [("maximum", 0.0f32, 3.0), ("minimum", -0.0, 2.0)] {
        let out = elementwise(op, "", vec![x.clone(), y.clone()]);
        let out = f32s(&out);
        assert!(out[0].is_nan() && out[1].is_nan(), "{op}: {out:?}");
        assert_eq!(out[2].to_bits(), zero.to_bits(), "{op}");
        assert_eq!(out[3].to_bits(), zero.to_bits(), "{op}");
        assert_eq!(out[4], larger, "{op}");
    }
}

#[test]
fn rounding_sign_logistic_and_is_finite() {
    let x = || vec![F32(vec![2.5, -2.5, 0.5, -0.0, f32::NAN])];
    let afz = elementwise("round-nearest-afz", "", x());
    assert_eq!(&f32s(&afz)[..4], &[3.0, -3.0, 1.0, -0.0]);
    let even = elementwise("round-nearest-even", "", x());
    assert_eq!(&f32s(&even)[..4], &[2.0, -2.0, 0.0, -0.0]);
    let sign = elementwise("sign", "", x());
    let sign = f32s(&sign);
    assert_eq!(&sign[..3], &[1.0, -1.0, 1.0]);
    assert_eq!(sign[3].to_bits(), (-0.0f32).to_bits());
    assert!(sign[4].is_nan());
    let floor = elementwise("floor", "", x());
    assert_eq!(&f32s(&floor)[..3], &[2.0, -3.0, 0.0]);
    let power = elementwise(
        "power",
        "",
        vec![F32(vec![2.0, f32::NAN, -8.0]), F32(vec![10.0, 0.0, 0.5])],
    );
    let power = f32s(&power);
    assert_eq!(&power[..2], &[1024.0, 1.0]);
    assert!(power[2].is_nan());
    let finite = F32(vec![1.0, f32::INFINITY, f32::NAN, -f32::MAX]);
    assert_ops(vec![
        (
            "logistic",
            vec![F32(vec![0.0, 2.0])],
            F32(vec![0.5, 1.0 / (1.0 + (-2.0f32).exp())]),
        ),
        (
            "is-finite",
            vec![finite],
            Pred(vec![true, false, false, true]),
        ),
        (
            "rsqrt",
            vec![F32(vec![4.0, 3.0])],
            F32(vec![0.5, 1.0 / 3.0f32.sqrt()]),
        ),
        (
            "remainder",
            vec![F32(vec![5.5, -5.5]), F32(vec![2.0, 2.0])],
            F32(vec![1.5, -1.5]),
        ),
    ]);
}

#[test]
fn erf_is_accurate_in_f64_and_rounds_once_to_f32() {
    // erf to 16 digits.
    let table = [
        (0.0, 0.0),
        (1e-10, 1.1283791670955126e-10),
        (0.5, 0.5204998778130465),
        (1.0, 0.8427007929497149),
        (-1.0, -0.8427007929497149),
        (2.0, 0.9953222650189527),
        (3.0, 0.9999779095030014),
        (4.5, 0.9999999998033839),
        (6.5, 1.0),
    ];
    let xs: Vec<f64> = table.iter().map(|&(x, _)| x).collect();
    let out = elementwise("erf", "", vec![F64(xs.clone())]);
    let F64(got) = elements(&out) else {
        panic!("f64 result expected");
    };
    for (&(x, want), &got) in table.iter().zip(got) {
        assert!(
            (got - want).abs() <= 1e-14 * want.abs(),
            "erf({x}) = {got}, expected {want}"
        );
    }
    let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let want32: Vec<f32> = table.iter().map(|&(_, e)| e as f32).collect();
    assert_ops(vec![("erf", vec![F32(xs32)], F32(want32))]);
}

/// The evaluator's `erf` (an f64 series of positive terms, which the interpreter shares, so
/// a mistake in it would pass `--check`) against two other algorithms written here: the
/// alternating Maclaurin series up to |x| = 2, and `1 - erfc` with `erfc` from its continued
/// fraction evaluated bottom up from 2 on; 26,001 points over [-6.5, 6.5].
#[test]
fn erf_agrees_with_two_independent_algorithms() {
    let two_over_sqrt_pi = 2.0 / std::f64::consts::PI.sqrt();
    let maclaurin = |x: f64| {
        // Σ (-1)^n x^(2n+1) / (n! (2n+1)); the terms' size grows to e^(x²), so f64 keeps
        // about 14 digits at |x| = 2.
        let (mut term, mut sum) = (x, x);
        for n in 1..200 {
            let n = f64::from(n);
            term *= -x * x / n;
            sum += term / (2.0 * n + 1.0);
        }
        two_over_sqrt_pi * sum
    };
    let by_erfc = |x: f64| {
        // erfc(a) = e^(-a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))), 400 levels.
        let a = x.abs();
        let mut tail = a;
        for k in (1..400).rev() {
            tail = a + f64::from(k) / 2.0 / tail;
        }
        let erfc = (-a * a).exp() / std::f64::consts::PI.sqrt() / tail;
        (1.0 - erfc).copysign(x)
    };
    for i in -13_000..=13_000 {
        let x = f64::from(i) / 2000.0;
        let want = if x.abs() <= 2.0 {
            maclaurin(x)
        } else {
            by_erfc(x)
        };
        let got = hlo::evaluate::erf(x);
        assert!(
            (got - want).abs() <= 1e-13 * want.abs().max(1e-300),
            "erf({x}) = {got:e}, independently {want:e}"
        );
    }
}

// ---- select, clamp, map -----------------------------------------------------------------

#[test]
fn select_with_array_and_scalar_predicates() {
    for (predicate, want) in [
        (vector(Pred(vec![true, false, true])), S32(vec![1, 5, 3])),
        (array(&[], Pred(vec![false])), S32(vec![4, 5, 6])),
    ] {
        let p = predicate.shape();
        let text = format!(
            "c {{
      p = {p} parameter(0)
      a = s32[3] parameter(1)
      b = s32[3] parameter(2)
      ROOT s = s32[3] select(p, a, b)
    }}"
        );
        let out = run(
            &text,
            vec![
                predicate,
                vector(S32(vec![1, 2, 3])),
                vector(S32(vec![4, 5, 6])),
            ],
        );
        assert_eq!(elements(&out), &want, "predicate {p}");
    }
}

#[test]
fn clamp_with_scalar_and_array_bounds() {
    let text = "c {
      lo = s32[] constant(0)
      hi = s32[] constant(10)
      x = s32[3] parameter(0)
      ROOT c = s32[3] clamp(lo, x, hi)
    }";
    let out = run(text, vec![vector(S32(vec![-5, 5, 15]))]);
    assert_eq!(elements(&out), &S32(vec![0, 5, 10]));
    let text = "c {
      lo = f32[3] parameter(0)
      x = f32[3] parameter(1)
      hi = f32[3] parameter(2)
      ROOT c = f32[3] clamp(lo, x, hi)
    }";
    let out = run(
        text,
        vec![
            vector(F32(vec![0.0, 0.0, 1.0])),
            vector(F32(vec![f32::NAN, -1.0, 7.0])),
            vector(F32(vec![1.0, 1.0, 2.0])),
        ],
    );
    let out = f32s(&out);
    assert!(out[0].is_nan());
    assert_eq!(&out[1..], &[0.0, 2.0]);
}

#[test]
fn map_applies_the_computation_per_element() {
    let text = "fma {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      m = f32[] multiply(a, b)
      one = f32[] constant(1)
      ROOT s = f32[] add(m, one)
    }
    c {
      x = f32[2,2] parameter(0)
      y = f32[2,2] parameter(1)
      ROOT r = f32[2,2] map(x, y), dimensions={0,1}, to_apply=fma
    }";
    let out = run(
        text,
        vec![
            array(&[2, 2], F32(vec![1.0, 2.0, 3.0, 4.0])),
            array(&[2, 2], F32(vec![5.0, 6.0, 7.0, 8.0])),
        ],
    );
    assert_eq!(out.as_array().map(HostArray::dims), Some(&[2i64, 2][..]));
    assert_eq!(f32s(&out), &[6.0, 13.0, 22.0, 33.0]);
}

// ---- data movement ----------------------------------------------------------------------

#[test]
fn broadcast_transpose_reshape_reverse_and_iota() {
    let text = "c {
      p = s32[2] parameter(0)
      b = s32[2,3] broadcast(p), dimensions={0}
      t = s32[3,2] transpose(b), dimensions={1,0}
      i = s32[3,2] iota(), iota_dimension=0
      a = s32[3,2] add(t, i)
      r = s32[6] reshape(a)
      v = s32[6] reverse(r), dimensions={0}
      ROOT out = (s32[2,3], s32[6]) tuple(b, v)
    }";
    let out = run(text, vec![vector(S32(vec![10, 20]))]);
    let parts = tuple(&out);
    assert_eq!(elements(&parts[0]), &S32(vec![10, 10, 10, 20, 20, 20]));
    // t = [[10,20],[10,20],[10,20]], i = [[0,0],[1,1],[2,2]].
    assert_eq!(elements(&parts[1]), &S32(vec![22, 12, 21, 11, 20, 10]));
    let text = "c { ROOT i = bf16[2,3] iota(), iota_dimension=1 }";
    assert_eq!(
        elements(&run(text, vec![])),
        &bf16s(&[0.0, 1.0, 2.0, 0.0, 1.0, 2.0])
    );
}

#[test]
fn strided_slices() {
    let text = "c {
      p = s32[3,10] parameter(0)
      ROOT s = s32[2,3] slice(p), slice={[1:3:1], [1:8:3]}
    }";
    let out = run(text, vec![array(&[3, 10], S32((0..30).collect()))]);
    assert_eq!(elements(&out), &S32(vec![11, 14, 17, 21, 24, 27]));
}

#[test]
fn pad_with_negative_low_and_interior() {
    let text = "c {
      p = s32[4] parameter(0)
      z = s32[] constant(0)
      ROOT q = s32[7] pad(p, z), padding=-1_1_1
    }";
    // Interior: 1 0 2 0 3 0 4; low -1 drops the 1; high 1 appends a 0.
    let out = run(text, vec![vector(S32(vec![1, 2, 3, 4]))]);
    assert_eq!(elements(&out), &S32(vec![0, 2, 0, 3, 0, 4, 0]));
    let text = "c {
      p = f32[2,2] parameter(0)
      nine = f32[] constant(9)
      ROOT q = f32[3,2] pad(p, nine), padding=1_0_0x0_-1_1
    }";
    let out = run(text, vec![array(&[2, 2], F32(vec![1.0, 2.0, 3.0, 4.0]))]);
    assert_eq!(f32s(&out), &[9.0, 9.0, 1.0, 9.0, 3.0, 9.0]);
}

#[test]
fn concatenate_along_either_dimension() {
    let concatenate = |dimension: usize, result: &str, a: HostValue, b: HostValue| {
        let (a_shape, b_shape) = (a.shape(), b.shape());
        let text = format!(
            "c {{ a = {a_shape} parameter(0) b = {b_shape} parameter(1)
              ROOT c = {result} concatenate(a, b), dimensions={{{dimension}}} }}"
        );
        s32s(&run(&text, vec![a, b]))
    };
    let columns = concatenate(
        1,
        "s32[2,3]",
        array(&[2, 2], S32(vec![1, 2, 3, 4])),
        array(&[2, 1], S32(vec![5, 6])),
    );
    assert_eq!(columns, [1, 2, 5, 3, 4, 6]);
    let rows = concatenate(
        0,
        "s32[3,2]",
        array(&[1, 2], S32(vec![1, 2])),
        array(&[2, 2], S32(vec![3, 4, 5, 6])),
    );
    assert_eq!(rows, [1, 2, 3, 4, 5, 6]);
}

#[test]
fn dynamic_slice_clamps_start_indices() {
    let text = "c {
      p = s32[5] parameter(0)
      i = s32[] parameter(1)
      ROOT d = s32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}
    }";
    let slice_at = |start: i32| {
        let out = run(
            text,
            vec![
                vector(S32(vec![10, 11, 12, 13, 14])),
                array(&[], S32(vec![start])),
            ],
        );
        elements(&out).clone()
    };
    assert_eq!(slice_at(1), S32(vec![11, 12]));
    assert_eq!(slice_at(4), S32(vec![13, 14]));
    assert_eq!(slice_at(-3), S32(vec![10, 11]));
    // Unsigned starts are read unsigned: 4e9 is far past the end.
    let text = "c {
      p = s32[3,3] parameter(0)
      i = u32[] parameter(1)
      j = u32[] parameter(2)
      ROOT d = s32[2,2] dynamic-slice(p, i, j), dynamic_slice_sizes={2,2}
    }";
    let out = run(
        text,
        vec![
            array(&[3, 3], S32((0..9).collect())),
            array(&[], U32(vec![4_000_000_000])),
            array(&[], U32(vec![0])),
        ],
    );
    assert_eq!(elements(&out), &S32(vec![3, 4, 6, 7]));
}

#[test]
fn dynamic_update_slice_clamps_start_indices() {
    let text = "c {
      p = s32[3,4] parameter(0)
      u = s32[2,2] parameter(1)
      i = s32[] parameter(2)
      j = s32[] parameter(3)
      ROOT d = s32[3,4] dynamic-update-slice(p, u, i, j)
    }";
    let update_at = |i: i32, j: i32| {
        let out = run(
            text,
            vec![
                array(&[3, 4], S32((0..12).collect())),
                array(&[2, 2], S32(vec![-1, -2, -3, -4])),
                array(&[], S32(vec![i])),
                array(&[], S32(vec![j])),
            ],
        );
        elements(&out).clone()
    };
    #[rustfmt::skip]
    let inside = vec![
        0, 1, 2, 3,
        4, -1, -2, 7,
        8, -3, -4, 11,
    ];
    assert_eq!(update_at(1, 1), S32(inside));
    // Row start -5 clamps to 0, column start 7 to 4 - 2 = 2.
    #[rustfmt::skip]
    let clamped = vec![
        0, 1, -1, -2,
        4, 5, -3, -4,
        8, 9, 10, 11,
    ];
    assert_eq!(update_at(-5, 7), S32(clamped));
}

#[test]
fn canonical_gather_with_permuted_start_index_map() {
    let text = "c {
      operand = s32[3,4] parameter(0)
      indices = s32[2,2] parameter(1)
      ROOT g = s32[2,2,2] gather(operand, indices), offset_dims={1,2},
        collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1,
        slice_sizes={2,2}
    }";
    let operand: Vec<i32> = (0..3)
        .flat_map(|r| (0..4).map(move |c| 10 * r + c))
        .collect();
    let out = run(
        text,
        vec![
            array(&[3, 4], S32(operand)),
            array(&[2, 2], S32(vec![1, 2, 5, -1])),
        ],
    );
    // Row 0: column start 1, row start 2 clamped to 1. Row 1: column start 5 clamped to 2,
    // row start -1 clamped to 0.
    assert_eq!(elements(&out), &S32(vec![11, 12, 21, 22, 2, 3, 12, 13]));
}

#[test]
fn bitcast_reads_the_physical_buffer_through_both_layouts() {
    let logical = || array(&[2, 3], F32(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    for (from, to, want) in [
        // Column-major: the buffer is 1 4 2 5 3 6.
        ("f32[2,3]{0,1}", "f32[6]{0}", [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]),
        (
            "f32[2,3]{0,1}",
            "f32[3,2]{1,0}",
            [1.0, 4.0, 2.0, 5.0, 3.0, 6.0],
        ),
        // Default layouts: a reshape.
        ("f32[2,3]", "f32[3,2]", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    ] {
        let text = format!("c {{ p = {from} parameter(0) ROOT b = {to} bitcast(p) }}");
        let out = run(&text, vec![logical()]);
        assert_eq!(f32s(&out), &want, "{from} to {to}");
    }
    // 2x2 tiles: tile 0 holds 0 1 4 5, tile 1 holds 2 3 6 7.
    let tiled = run(
        "c { p = s32[2,4]{1,0:T(2,2)} parameter(0) ROOT b = s32[8]{0} bitcast(p) }",
        vec![array(&[2, 4], S32((0..8).collect()))],
    );
    assert_eq!(elements(&tiled), &S32(vec![0, 1, 4, 5, 2, 3, 6, 7]));
    // The element type may change with the layout.
    let bits = run(
        "c { p = f32[2,1]{0,1} parameter(0) ROOT b = u32[2]{0} bitcast(p) }",
        vec![array(&[2, 1], F32(vec![1.0, 2.0]))],
    );
    assert_eq!(elements(&bits), &U32(vec![0x3F80_0000, 0x4000_0000]));
}

// ---- reduce -----------------------------------------------------------------------------

/// The reducer `max` of f32 reductions.
const MAX_F32: &str = "max {
      a = f32[] parameter(0)
      b = f32[] parameter(1)
      ROOT m = f32[] maximum(a, b)
    }
    ";

#[test]
fn reduce_combines_in_row_major_order_from_the_init_value() {
    // acc * 10 + x spells the order the elements were combined in.
    let text = [
        testkit::horner!(),
        "c {
      x = s32[2,3,2] parameter(0)
      init = s32[] constant(7)
      ROOT r = s32[3] reduce(x, init), dimensions={2,0}, to_apply=horner
    }",
    ]
    .concat();
    // x[i][j][k] = (2i + k + 1 + j) mod 10: reading (i, k) row-major gives j+1, j+2, j+3, j+4.
    let x: Vec<i32> = (0..2)
        .flat_map(|i| (0..3).flat_map(move |j| (0..2).map(move |k| (2 * i + k + 1 + j) % 10)))
        .collect();
    let out = run(&text, vec![array(&[2, 3, 2], S32(x))]);
    assert_eq!(elements(&out), &S32(vec![71234, 72345, 73456]));
}

#[test]
fn variadic_reduce_with_a_tuple_reducer() {
    let text = concat!(
        testkit::argmax!(),
        "c {
      x = f32[2,4] parameter(0)
      idx = s32[2,4] iota(), iota_dimension=1
      init_v = f32[] constant(-inf)
      init_i = s32[] constant(-1)
      ROOT r = (f32[2], s32[2]) reduce(x, idx, init_v, init_i), dimensions={1}, to_apply=argmax
    }"
    );
    let x = F32(vec![1.0, 5.0, 3.0, 5.0, -1.0, -2.0, -0.5, -3.0]);
    let out = run(text, vec![array(&[2, 4], x)]);
    let parts = tuple(&out);
    assert_eq!(f32s(&parts[0]), &[5.0, -0.5]);
    assert_eq!(elements(&parts[1]), &S32(vec![1, 2]));
}

#[test]
fn reduce_window_strides_over_padding_in_row_major_window_order() {
    // acc * 10 + x spells which elements were combined, and in which order.
    let text = [testkit::horner!(), "c {
      x = s32[2,5] parameter(0)
      init = s32[] constant(7)
      ROOT r = s32[2,3] reduce-window(x, init), window={size=1x3 stride=1x2 pad=0_0x1_1}, to_apply=horner
    }"]
    .concat();
    let x = S32(vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 5]);
    let out = run(&text, vec![array(&[2, 5], x)]);
    // Row 0, output 0 reads padding, x0, x1; output 2 reads x3, x4, padding.
    assert_eq!(elements(&out), &S32(vec![712, 7234, 745, 767, 7789, 795]));
    // A 2-d window: the last window dimension fastest.
    let text = text
        .replace("s32[2,3] reduce-window", "s32[1,2] reduce-window")
        .replace("size=1x3 stride=1x2 pad=0_0x1_1", "size=2x2 stride=1x3");
    let x = S32(vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 5]);
    let out = run(&text, vec![array(&[2, 5], x)]);
    assert_eq!(elements(&out), &S32(vec![71267, 74595]));
}

#[test]
fn reduce_window_with_base_and_window_dilation() {
    let text = [testkit::horner!(), "c {
      x = s32[3] parameter(0)
      init = s32[] constant(7)
      ROOT r = s32[3] reduce-window(x, init), window={size=2 lhs_dilate=2 rhs_dilate=2}, to_apply=horner
    }"]
    .concat();
    // The dilated operand is x0 _ x1 _ x2; the window reads positions o and o + 2, so
    // output 1 reads only holes and keeps the init value.
    let out = run(&text, vec![vector(S32(vec![1, 2, 3]))]);
    assert_eq!(elements(&out), &S32(vec![712, 7, 723]));
}

#[test]
fn max_pool_keeps_the_init_value_where_the_window_is_all_padding() {
    let text = [
        MAX_F32,
        "c {
      x = f32[3] parameter(0)
      init = f32[] constant(-inf)
      ROOT r = f32[5] reduce-window(x, init), window={size=2 pad=2_1}, to_apply=max
    }",
    ]
    .concat();
    let out = run(&text, vec![vector(F32(vec![1.0, 5.0, 2.0]))]);
    assert_eq!(f32s(&out), &[f32::NEG_INFINITY, 1.0, 5.0, 5.0, 2.0]);
}

#[test]
fn variadic_reduce_window_and_bf16_rounding_per_step() {
    let text = "sum_and_count {
      a = bf16[] parameter(0)
      n = s32[] parameter(1)
      x = bf16[] parameter(2)
      one = s32[] parameter(3)
      s = bf16[] add(a, x)
      c = s32[] add(n, one)
      ROOT t = (bf16[], s32[]) tuple(s, c)
    }
    c {
      x = bf16[4] parameter(0)
      ones = s32[4] parameter(1)
      zero = bf16[] constant(0)
      none = s32[] constant(0)
      ROOT r = (bf16[3], s32[3]) reduce-window(x, ones, zero, none), window={size=3 pad=1_0}, to_apply=sum_and_count
    }";
    // 256 + 1 rounds back to 256 in bf16 (8 significant bits) before the next + 1, so
    // output 1 is 256, where one rounding at the end would give 258.
    let out = run(
        text,
        vec![
            vector(bf16s(&[256.0, 1.0, 1.0, 3.0])),
            vector(S32(vec![1; 4])),
        ],
    );
    let parts = tuple(&out);
    assert_eq!(elements(&parts[0]), &bf16s(&[256.0, 256.0, 5.0]));
    assert_eq!(elements(&parts[1]), &S32(vec![2, 3, 3]));
}

#[test]
fn reduce_to_a_scalar_and_over_no_dimensions() {
    let text = [
        MAX_F32,
        "c {
      x = f32[2,3] parameter(0)
      init = f32[] constant(0)
      all = f32[] reduce(x, init), dimensions={0,1}, to_apply=max
      none = f32[2,3] reduce(x, init), dimensions={}, to_apply=max
      ROOT t = (f32[], f32[2,3]) tuple(all, none)
    }",
    ]
    .concat();
    let x = F32(vec![-1.0, 4.0, 2.0, -3.0, 3.5, -0.5]);
    let out = run(&text, vec![array(&[2, 3], x)]);
    let parts = tuple(&out);
    assert_eq!(f32s(&parts[0]), &[4.0]);
    assert_eq!(f32s(&parts[1]), &[0.0, 4.0, 2.0, 0.0, 3.5, 0.0]);
}

// ---- calls, fusions and the seed's GELU -------------------------------------------------

#[test]
fn calls_and_fusions_evaluate_their_computations() {
    let text = "double {
      p = s32[2] parameter(0)
      ROOT a = s32[2] add(p, p)
    }
    fused {
      p = s32[2] parameter(0)
      n = s32[2] negate(p)
      ROOT t = (s32[2], s32[2]) tuple(p, n)
    }
    ENTRY main {
      x = s32[2] parameter(0)
      c = s32[2] call(x), to_apply=double
      f = (s32[2], s32[2]) fusion(c), kind=kLoop, calls=fused
      ROOT g = s32[2] get-tuple-element(f), index=1
    }";
    let out = run(text, vec![vector(S32(vec![3, -4]))]);
    assert_eq!(elements(&out), &S32(vec![-6, 8]));
    let m = module(text);
    let fused = m.computation_by_name("fused").expect("fused computation");
    let outputs = evaluate_fusion(&m, fused, &[vector(S32(vec![1, 2]))]).expect("evaluates");
    assert_eq!(outputs.len(), 2);
    assert_eq!(outputs[1].elements(), &S32(vec![-1, -2]));
}

/// The seed's GELU model with a small shape.
fn gelu_module(dims: &str) -> String {
    let model = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/models/gelu.hlo"
    ))
    .expect("testdata/models/gelu.hlo");
    model.replace("6,512,4096", dims)
}

/// GELU as written in the model, in f32 with every result rounded to bf16.
fn gelu_per_op(x: f32) -> f32 {
    let r = |v: f32| bf16::from_f32(v).to_f32();
    let square = r(x * x);
    let cube = r(square * x);
    let scaled_cube = r(cube * r(0.044708));
    let inner = r(x + scaled_cube);
    let scaled = r(inner * r(0.79785));
    let tanh = r(scaled.tanh());
    let one_plus = r(tanh + 1.0);
    let half = r(one_plus * 0.5);
    r(x * half)
}

#[test]
fn seed_gelu_matches_the_per_op_rounded_formula() {
    let text = gelu_module("2,3,8");
    let m = module(&text);
    let fusion = m.computation_by_name("gelu").expect("gelu computation");
    let args = random_arguments(m.computation(fusion), 7).expect("bf16 inputs");
    let outputs = evaluate_fusion(&m, fusion, &args).expect("evaluates");
    let (Some(HostValue::Array(input)), [output]) = (args.first(), outputs.as_slice()) else {
        panic!("one input and one output expected");
    };
    let (BF16(xs), BF16(ys)) = (input.elements(), output.elements()) else {
        panic!("bf16 arrays expected");
    };
    assert_eq!(ys.len(), 48);
    for (x, y) in xs.iter().zip(ys) {
        assert_eq!(y.to_f32(), gelu_per_op(x.to_f32()), "gelu({x})");
    }
    // The ENTRY computation's fusion instruction gives the same result.
    let entry = evaluate(&m, m.entry, &args).expect("entry evaluates");
    assert_eq!(entry.as_array(), Some(output));
}

/// The model's full shape (12.6M elements) is evaluated op by op on whole arrays; it takes
/// about a second, so the generous bound only catches a per-element evaluation sneaking in.
#[test]
fn seed_gelu_at_full_size_is_fast() {
    let m = module(&gelu_module("6,512,4096"));
    let fusion = m.computation_by_name("gelu").expect("gelu computation");
    let args = random_arguments(m.computation(fusion), 11).expect("bf16 inputs");
    let start = std::time::Instant::now();
    let outputs = evaluate_fusion(&m, fusion, &args).expect("evaluates");
    let elapsed = start.elapsed();
    assert!(elapsed.as_secs() < 60, "took {elapsed:?}");
    let (Some(HostValue::Array(input)), [output]) = (args.first(), outputs.as_slice()) else {
        panic!("one input and one output expected");
    };
    let (BF16(xs), BF16(ys)) = (input.elements(), output.elements()) else {
        panic!("bf16 arrays expected");
    };
    assert_eq!(ys.len(), 6 * 512 * 4096);
    for i in (0..ys.len()).step_by(4099) {
        assert_eq!(ys[i].to_f32(), gelu_per_op(xs[i].to_f32()), "element {i}");
    }
}

// ---- random inputs ----------------------------------------------------------------------

/// A seeded random vector of `n` elements of `ty`.
fn random_vector(ty: PrimitiveType, n: i64, seed: u64, range: RandomRange) -> Elements {
    random_array(&ArrayShape::new(ty, vec![n]), seed, range)
        .expect("a random array")
        .into_elements()
}

#[test]
fn random_inputs_are_deterministic_and_in_range() {
    let shape = ArrayShape::new(PrimitiveType::BF16, vec![64, 64]);
    let a = random_array(&shape, 42, RandomRange::Default).expect("bf16 array");
    assert_eq!(
        a,
        random_array(&shape, 42, RandomRange::Default).expect("same")
    );
    assert_ne!(
        a,
        random_array(&shape, 43, RandomRange::Default).expect("other")
    );
    let BF16(values) = a.elements() else {
        panic!("bf16 expected");
    };
    assert!(values.iter().all(|v| (-2.0..=2.0).contains(&v.to_f32())));
    assert!(values.iter().any(|v| v.to_f32() < -1.0) && values.iter().any(|v| v.to_f32() > 1.0));

    let F32(values) = random_vector(PrimitiveType::F32, 1000, 1, RandomRange::UNIT) else {
        panic!("f32 expected");
    };
    assert!(values.iter().all(|v| v.abs() <= 0.875));

    let S8(values) = random_vector(PrimitiveType::S8, 4096, 3, RandomRange::Default) else {
        panic!("s8 expected");
    };
    assert!(values.contains(&i8::MIN) || values.iter().any(|&v| v < -120));
    assert!(values.iter().any(|&v| v > 120));
    let U64(values) = random_vector(PrimitiveType::U64, 256, 3, RandomRange::Default) else {
        panic!("u64 expected");
    };
    assert!(values.iter().all(|&v| v <= 65536));

    let tuple = Shape::Tuple(vec![
        Shape::array(PrimitiveType::Pred, vec![3]),
        Shape::scalar(PrimitiveType::F64),
    ]);
    let value = random_value(&tuple, 9, RandomRange::Default).expect("tuple value");
    assert_eq!(value.shape(), tuple);
}

#[test]
fn parameter_ranges_follow_their_users() {
    let text = "c {
      a = f32[8] parameter(0)
      b = f32[8] parameter(1)
      c = f32[8] parameter(2)
      i = s32[] parameter(3)
      l = f32[8] log(a)
      s = f32[8] acos(b)
      t = f32[8] atanh(b)
      d = f32[2] dynamic-slice(c, i), dynamic_slice_sizes={2}
      ROOT r = (f32[8], f32[8], f32[8], f32[2]) tuple(l, s, t, d)
    }";
    let m = module(text);
    let c = m.entry_computation();
    let params = c.parameters();
    assert_eq!(
        RandomRange::for_parameter(c, params[0]),
        RandomRange::POSITIVE
    );
    assert_eq!(RandomRange::for_parameter(c, params[1]), RandomRange::UNIT);
    assert_eq!(
        RandomRange::for_parameter(c, params[2]),
        RandomRange::Default
    );
    assert_eq!(
        RandomRange::for_parameter(c, params[3]),
        RandomRange::Between(-1.0, 8.0)
    );
    let args = random_arguments(c, 5).expect("arguments");
    let out = evaluate(&m, m.entry, &args).expect("evaluates");
    for part in &tuple(&out)[..3] {
        assert!(f32s(part).iter().all(|v| v.is_finite()), "{part}");
    }
}

// ---- errors -----------------------------------------------------------------------------

#[test]
fn unsupported_ops_are_refused_at_the_instruction() {
    let text = "c {
  p = f32[4] parameter(0)
  ROOT s = f32[4] custom-call(p), custom_call_target=\"my_library_call\"
}";
    let args = vec![vector(F32(vec![0.0; 4]))];
    assert_eq!(
        error(text, args),
        "t.hlo:3:3: error: unsupported: custom-call in 's'"
    );
}

#[test]
fn gather_in_any_form() {
    let operand: Vec<i32> = (0..3)
        .flat_map(|r| (0..4).map(move |c| 10 * r + c))
        .collect();
    // An embedding lookup as JAX writes it: one index per row, the row dimension collapsed,
    // the index vector dimension implicit (equal to the indices' rank).
    let text = "c {
  operand = s32[3,4] parameter(0)
  indices = s32[3] parameter(1)
  ROOT g = s32[3,4] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={0},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}";
    let out = run(
        text,
        vec![
            array(&[3, 4], S32(operand.clone())),
            vector(S32(vec![2, 0, 7])),
        ],
    );
    // Index 7 is clamped to the last row.
    let rows = [20, 21, 22, 23, 0, 1, 2, 3, 20, 21, 22, 23];
    assert_eq!(elements(&out), &S32(rows.to_vec()));
    // Batching dimensions: result[b] = operand[b, indices[b], 1..3], the offset dimension
    // first in the result.
    let text = "c {
  operand = s32[2,3,4] parameter(0)
  indices = s32[2,1] parameter(1)
  ROOT g = s32[2,2] gather(operand, indices), offset_dims={0}, collapsed_slice_dims={1},
    operand_batching_dims={0}, start_indices_batching_dims={0}, start_index_map={1},
    index_vector_dim=1, slice_sizes={1,1,2}
}";
    let batched: Vec<i32> = (0..24).collect();
    let out = run(
        text,
        vec![
            array(&[2, 3, 4], S32(batched)),
            array(&[2, 1], S32(vec![1, 2])),
        ],
    );
    // Batch 0 reads row 1 (4, 5), batch 1 row 2 (20, 21); the result is [offset, batch].
    assert_eq!(elements(&out), &S32(vec![4, 20, 5, 21]));
}

#[test]
fn sub_byte_integers_wrap_and_saturate_to_their_width() {
    let patterns = |ty, patterns: &[u128]| Elements::from_patterns(ty, patterns).unwrap();
    assert_converts(vec![
        (
            S8(vec![7, 8, -9, 100]),
            "s4",
            patterns(PrimitiveType::S4, &[7, 8, 7, 4]),
        ),
        (
            F32(vec![-1.0, 2.5, 9.0]),
            "u2",
            patterns(PrimitiveType::U2, &[0, 2, 3]),
        ),
    ]);
    let out = convert("s4", S8(vec![7, 8, -9, 100]));
    assert_eq!(out.as_array().unwrap().value(1), hlo::Value::Int(-8));
}

#[test]
fn complex_numbers_are_built_combined_and_taken_apart() {
    let text = "c {
  re = f32[2] parameter(0)
  im = f32[2] parameter(1)
  z = c64[2] complex(re, im)
  k = c64[2] constant({(2, 0), (0, 2)})
  p = c64[2] multiply(z, k)
  s = c64[2] subtract(p, z)
  r = f32[2] real(s)
  i = f32[2] imag(s)
  ROOT out = (f32[2], f32[2]) tuple(r, i)
}";
    let out = run(
        text,
        vec![vector(F32(vec![1.0, 3.0])), vector(F32(vec![2.0, 4.0]))],
    );
    // (1+2i)*2 - (1+2i) = 1+2i; (3+4i)*2i - (3+4i) = -11+2i.
    let HostValue::Tuple(parts) = out else {
        panic!("a tuple")
    };
    assert_eq!(elements(&parts[0]), &F32(vec![1.0, -11.0]));
    assert_eq!(elements(&parts[1]), &F32(vec![2.0, 2.0]));
}

#[test]
fn c128_keeps_f64_parts_and_converts_to_c64_part_by_part() {
    let text = "c {
  re = f64[2] parameter(0)
  im = f64[2] parameter(1)
  z = c128[2] complex(re, im)
  k = c128[2] constant({(1, 1e-12), (709.9, 1)})
  p = c128[2] multiply(z, k)
  e = c128[2] exponential(k)
  n = c64[2] convert(p)
  back = c128[2] convert(n)
  r = f64[2] real(p)
  i = f64[2] imag(p)
  ROOT out = (f64[2], f64[2], c128[2], c128[2]) tuple(r, i, e, back)
}";
    let out = run(
        text,
        vec![vector(F64(vec![1.0, 2.0])), vector(F64(vec![1e-12, 0.0]))],
    );
    let HostValue::Tuple(parts) = out else {
        panic!("a tuple")
    };
    // (1 + 1e-12 i)^2 = 1 - 1e-24 + 2e-12 i: the imaginary part needs f64.
    assert_eq!(elements(&parts[1]).value(0), hlo::Value::Float(2e-12));
    assert_eq!(elements(&parts[0]).value(1), hlo::Value::Float(2.0 * 709.9));
    // e^709.9 overflows f64 alone; e^709.9 (cos 1 + i sin 1) does not.
    let hlo::Value::Complex(re, im) = elements(&parts[2]).value(1) else {
        panic!("complex")
    };
    let half = 354.95f64.exp();
    assert!(re.is_finite() && (re / half / half - 1f64.cos()).abs() < 1e-12);
    assert!(im.is_finite());
    // To c64 and back: each part rounded to f32.
    assert_eq!(
        elements(&parts[3]).value(0),
        hlo::Value::Complex(1.0, f64::from(2e-12f32))
    );
}

#[test]
fn unsupported_element_types_are_refused_at_the_instruction() {
    let text = "c {
  p = s8[2] parameter(0)
  ROOT c = u1[2] convert(p)
}";
    assert_eq!(
        error(text, vec![vector(S8(vec![1, 2]))]),
        "t.hlo:3:3: error: unsupported: element type u1 in 'c'"
    );
    let text = "c {
  ROOT k = s1[] constant(0)
}";
    assert!(error(text, vec![]).contains("unsupported: element type s1"));
}

#[test]
fn arguments_must_match_the_parameters() {
    let text = "c {
  p = f32[2] parameter(0)
  ROOT n = f32[2] negate(p)
}";
    assert_eq!(
        error(text, vec![]),
        "t.hlo:1:1: error: computation 'c' has 1 parameters but 0 arguments were given"
    );
    assert_eq!(
        error(text, vec![vector(F32(vec![1.0, 2.0, 3.0]))]),
        "t.hlo:2:3: error: argument 0 has shape f32[3] but parameter 'p' is f32[2]"
    );
    assert!(HostArray::new(vec![2, 2], S32(vec![1, 2, 3])).is_err());
}

/// Float sums pushed by their rounding bound: `(n - 1) u` times the sum of the magnitudes of
/// the `n` terms (init included), up or down; sums of other reducers (here `maximum`) stay.
#[test]
fn float_sums_are_pushed_by_their_rounding_bound() {
    let text = concat!(
        testkit::add_f32!(),
        "max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY c {
  p = f32[2,4] parameter(0)
  z = f32[] constant(0)
  s = f32[2] reduce(p, z), dimensions={1}, to_apply=add
  m = f32[2] reduce(p, z), dimensions={1}, to_apply=max
  ROOT t = (f32[2], f32[2]) tuple(s, m)
}"
    );
    let m = module(text);
    let rows = vec![1.0, -1.0, 0.5, 0.25, 2.0, 2.0, 2.0, 2.0];
    let args = [array(&[2, 4], F32(rows))];
    let exact = evaluate_fusion(&m, m.entry, &args).unwrap();
    let f32s_of = |a: &HostArray| match a.elements() {
        F32(x) => x.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(f32s_of(&exact[0]), [0.75, 8.0]);
    let u = f64::from(f32::EPSILON) / 2.0;
    for sign in [1.0, -1.0] {
        let pushed = evaluate_fusion_with_sums_pushed(&m, m.entry, &args, sign).unwrap();
        // Five terms each (the init 0 and four elements): magnitudes 2.75 and 8.
        let want = [
            (0.75 + sign * 4.0 * u * 2.75) as f32,
            (8.0 + sign * 4.0 * u * 8.0) as f32,
        ];
        assert_eq!(f32s_of(&pushed[0]), want);
        assert_ne!(f32s_of(&pushed[0]), f32s_of(&exact[0]));
        assert_eq!(f32s_of(&pushed[1]), f32s_of(&exact[1]));
    }
}

// ---- scatter ----------------------------------------------------------------------------

/// XLA's combiners for the scatter tests: `add`, `overwrite` (the update wins) and a tuple
/// combiner for two operands.
const SCATTER_COMBINERS: &str = "add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
overwrite {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
pair {
  a0 = s32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = s32[] parameter(2)
  b1 = f32[] parameter(3)
  s = s32[] add(a0, a1)
  m = f32[] multiply(b0, b1)
  ROOT t = (s32[], f32[]) tuple(s, m)
}
";

fn scatter(entry: &str, args: Vec<HostValue>) -> HostValue {
    run(&format!("{SCATTER_COMBINERS}{entry}"), args)
}

/// The s32 scatter `ROOT s = scatter(x, i, u), ATTRIBUTES` (its dimension numbers and
/// combiner) of `updates` into `operand` at `indices`; the parameters' shapes are the arrays'.
fn scatter_s32(
    attributes: &str,
    operand: HostValue,
    indices: HostValue,
    updates: HostValue,
) -> Vec<i32> {
    let (x, i, u) = (operand.shape(), indices.shape(), updates.shape());
    let entry = format!(
        "c {{
  x = {x} parameter(0)
  i = {i} parameter(1)
  u = {u} parameter(2)
  ROOT s = {x} scatter(x, i, u), {attributes}
}}"
    );
    s32s(&scatter(&entry, vec![operand, indices, updates]))
}

/// Rows of a 4x3 operand, addressed by a vector of row starts: duplicates add up, and the
/// window of the out-of-range start 4 (and of -1) is skipped whole.
#[test]
fn scatter_adds_duplicates_and_skips_windows_that_do_not_fit() {
    let out = scatter_s32(
        "update_window_dims={1,2}, inserted_window_dims={},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
        array(&[4, 3], S32(vec![0; 12])),
        array(&[5, 1], S32(vec![1, 3, 1, 4, -1])),
        array(&[5, 1, 3], S32((1..=15).collect())),
    );
    assert_eq!(out, vec![0, 0, 0, 1 + 7, 2 + 8, 3 + 9, 0, 0, 0, 4, 5, 6]);
}

/// A window of two rows that starts on the last row does not fit, so none of it is written,
/// not even the row that would.
#[test]
fn scatter_skips_a_window_that_fits_only_in_part() {
    let out = scatter_s32(
        "update_window_dims={1,2}, inserted_window_dims={},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=overwrite",
        array(&[3, 2], S32(vec![-1; 6])),
        array(&[2], S32(vec![2, 0])),
        array(&[2, 2, 2], S32((1..=8).collect())),
    );
    // The index vector dimension is the indices' rank: each index is one start (an
    // implicit trailing dimension of 1).
    assert_eq!(out, vec![5, 6, 7, 8, -1, -1]);
}

/// Single elements (both operand dimensions inserted) at (row, column) pairs: with
/// `overwrite`, the last update to an element wins.
#[test]
fn scatter_of_single_elements_applies_updates_in_order() {
    // Index components run along dimension 0: column starts, then row starts.
    let out = scatter_s32(
        "update_window_dims={}, inserted_window_dims={0,1},
    scatter_dims_to_operand_dims={1,0}, index_vector_dim=0, to_apply=overwrite",
        array(&[2, 3], S32(vec![0; 6])),
        array(&[2, 4], S32(vec![2, 0, 2, 1, 1, 0, 1, 1])),
        array(&[4], S32(vec![10, 20, 30, 40])),
    );
    assert_eq!(out, vec![20, 0, 0, 0, 40, 30]);
}

/// An operand batching dimension takes its start from the update's scatter coordinate of the
/// paired indices dimension: batch b only ever writes row b.
#[test]
fn scatter_batching_dimensions_pair_operand_and_indices_dimensions() {
    let out = scatter_s32(
        "update_window_dims={}, inserted_window_dims={1},
    input_batching_dims={0}, scatter_indices_batching_dims={0},
    scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=add",
        array(&[2, 4], S32(vec![0; 8])),
        array(&[2, 3, 1], S32(vec![0, 3, 3, 1, 1, 9])),
        array(&[2, 3], S32(vec![1, 2, 3, 4, 5, 6])),
    );
    assert_eq!(out, vec![1, 0, 0, 5, 0, 4 + 5, 0, 0]);
}

/// Two operands with a tuple combiner: both are updated from one index, each by its own
/// updates, and the combiner sees both current values.
#[test]
fn variadic_scatter_combines_both_operands() {
    let entry = "c {
  x = s32[3] parameter(0)
  y = f32[3] parameter(1)
  i = s32[3,1] parameter(2)
  u = s32[3] parameter(3)
  v = f32[3] parameter(4)
  ROOT s = (s32[3], f32[3]) scatter(x, y, i, u, v), update_window_dims={},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    to_apply=pair
}";
    let out = scatter(
        entry,
        vec![
            vector(S32(vec![1, 1, 1])),
            vector(F32(vec![1.0, 1.0, 1.0])),
            array(&[3, 1], S32(vec![2, 0, 2])),
            vector(S32(vec![5, 6, 7])),
            vector(F32(vec![2.0, 3.0, 4.0])),
        ],
    );
    let parts = tuple(&out);
    assert_eq!(s32s(&parts[0]), vec![7, 1, 13]);
    assert_eq!(f32s(&parts[1]), &[3.0, 1.0, 8.0]);
}

/// A strided, padded, dilated, grouped convolution in NHWC agrees with JAX's
/// (`lax.conv_general_dilated`, run in f64 when this test was written: x[n,h,w,c] =
/// (flat index mod 7) - 3, w[h,w,i,o] = (flat index mod 5) - 2, strides (2, 1), padding
/// ((1, 1), (0, 2)), rhs_dilation (1, 2), 2 feature groups; its sum 15, sum of squares 2901,
/// first six elements -2, 1, 9, 6, 1, -4 and element [1, 2, 2, 5] 4).
#[test]
fn a_grouped_dilated_convolution_is_jax_s() {
    let text = "HloModule conv

ENTRY main {
  x = f64[2,5,5,4]{3,2,1,0} parameter(0)
  w = f64[3,3,2,6]{3,2,1,0} parameter(1)
  ROOT y = f64[2,3,3,6]{3,2,1,0} convolution(x, w), window={size=3x3 stride=2x1 pad=1_1x0_2 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f, feature_group_count=2
}
";
    let x: Vec<f64> = (0..200).map(|i| f64::from(i % 7) - 3.0).collect();
    let w: Vec<f64> = (0..108).map(|i| f64::from(i % 5) - 2.0).collect();
    let y = run(
        text,
        vec![array(&[2, 5, 5, 4], F64(x)), array(&[3, 3, 2, 6], F64(w))],
    );
    let F64(y) = elements(&y) else {
        panic!("f64 result expected");
    };
    assert_eq!(y.len(), 2 * 3 * 3 * 6);
    assert_eq!(y.iter().sum::<f64>(), 15.0);
    assert_eq!(y.iter().map(|v| v * v).sum::<f64>(), 2901.0);
    assert_eq!(y[..6], [-2.0, 1.0, 9.0, 6.0, 1.0, -4.0]);
    assert_eq!(y[((3 + 2) * 3 + 2) * 6 + 5], 4.0);
}

/// The comparator `jnp.sort` writes for f32: -0.0 as 0.0, every NaN as one NaN, then a
/// total-order `LT`.
const JAX_F32_LESS: &str = "less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  zero = f32[] constant(0)
  nan = f32[] constant(nan)
  a_nan = pred[] compare(a, a), direction=NE
  a_zero = pred[] compare(a, zero), direction=EQ
  a0 = f32[] select(a_zero, zero, a)
  a1 = f32[] select(a_nan, nan, a0)
  b_nan = pred[] compare(b, b), direction=NE
  b_zero = pred[] compare(b, zero), direction=EQ
  b0 = f32[] select(b_zero, zero, b)
  b1 = f32[] select(b_nan, nan, b0)
  ROOT lt = pred[] compare(a1, b1), direction=LT, type=TOTALORDER
}
";

/// `jnp.argsort` of rows with ties, NaNs and signed zeros: JAX's comparator with a stable
/// sort keeps equal keys (and -0.0 with 0.0) in index order and puts NaNs last; a sort along
/// dimension 0 sorts columns.
#[test]
fn a_key_value_sort_is_stable_and_puts_nan_last() {
    let text = format!(
        "HloModule s\n\n{JAX_F32_LESS}\nENTRY main {{
  x = f32[2,6]{{1,0}} parameter(0)
  i = s32[2,6]{{1,0}} parameter(1)
  ROOT s = (f32[2,6]{{1,0}}, s32[2,6]{{1,0}}) sort(x, i), dimensions={{1}}, is_stable=true, to_apply=less
}}
"
    );
    let nan = f32::NAN;
    let x = vec![3.0, nan, -0.0, 1.0, 0.0, 1.0, 5.0, 4.0, 3.0, 2.0, 1.0, -1.0];
    let i: Vec<i32> = (0..12).map(|k| k % 6).collect();
    let out = run(&text, vec![array(&[2, 6], F32(x)), array(&[2, 6], S32(i))]);
    let parts = tuple(&out);
    let keys = f32s(&parts[0]);
    assert_eq!(s32s(&parts[1]), [2, 4, 3, 5, 0, 1, 5, 4, 3, 2, 1, 0]);
    assert_eq!(
        keys[..4].iter().map(|k| k.to_bits()).collect::<Vec<_>>(),
        [(-0.0f32).to_bits(), 0, 1.0f32.to_bits(), 1.0f32.to_bits()]
    );
    assert!(keys[5].is_nan());

    let columns = "HloModule s

less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=GT
}

ENTRY main {
  x = s32[3,2]{1,0} parameter(0)
  ROOT s = s32[3,2]{1,0} sort(x), dimensions={0}, to_apply=less
}
";
    let out = run(columns, vec![array(&[3, 2], S32(vec![1, 6, 3, 4, 2, 5]))]);
    assert_eq!(s32s(&out), [3, 6, 2, 5, 1, 4]);
}

/// `topk` keeps the k largest (or smallest) of each row of the last dimension, ties in index
/// order, NaN above infinity; the `TopK` custom-call orders rows by its comparator.
#[test]
fn topk_and_the_topk_call_keep_the_first_k_in_order() {
    let topk = |largest: bool| {
        format!(
            "HloModule t\n\nENTRY main {{
  x = f32[2,5]{{1,0}} parameter(0)
  ROOT t = (f32[2,3]{{1,0}}, s32[2,3]{{1,0}}) topk(x), k=3, largest={largest}
}}
"
        )
    };
    let x = || {
        array(
            &[2, 5],
            F32(vec![
                1.0,
                7.0,
                f32::NAN,
                7.0,
                -2.0,
                0.0,
                -1.0,
                4.0,
                f32::INFINITY,
                4.0,
            ]),
        )
    };
    let out = run(&topk(true), vec![x()]);
    let parts = tuple(&out);
    assert!(f32s(&parts[0])[0].is_nan());
    assert_eq!(f32s(&parts[0])[1..], [7.0, 7.0, f32::INFINITY, 4.0, 4.0]);
    assert_eq!(s32s(&parts[1]), [2, 1, 3, 3, 2, 4]);
    let out = run(&topk(false), vec![x()]);
    let parts = tuple(&out);
    assert_eq!(f32s(&parts[0]), [-2.0, 1.0, 7.0, -1.0, 0.0, 4.0]);
    assert_eq!(s32s(&parts[1]), [4, 0, 1, 1, 0, 2]);

    let call = "HloModule t

greater {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}

ENTRY main {
  x = f32[4]{0} parameter(0)
  ROOT t = (f32[2]{0}, s32[2]{0}) custom-call(x), custom_call_target=\"TopK\", called_computations={greater}
}
";
    let out = run(call, vec![vector(F32(vec![2.0, 9.0, 2.0, 5.0]))]);
    let parts = tuple(&out);
    assert_eq!(f32s(&parts[0]), [9.0, 5.0]);
    assert_eq!(s32s(&parts[1]), [1, 3]);
}

/// Integer `power`, wrapped in its type, and the rule for negative exponents (1 for a base
/// of 1, ±1 for -1, else 0), computed by hand.
#[test]
fn integer_power_by_hand() {
    use hlo::evaluate::integer_power;
    // 3^5 = 243: -13 in s8, 243 in u8 (the caller reads the low bits as its type).
    assert_eq!(integer_power(3, 5, 8) as u8, 243);
    assert_eq!(integer_power(3, 5, 8) as u8 as i8, -13);
    assert_eq!(integer_power(-3, 3, 8) as u8 as i8, -27);
    // 255^2 = 65025 = 254 * 256 + 1.
    assert_eq!(integer_power(255, 2, 8), 1);
    assert_eq!(integer_power(2, 31, 32) as u32 as i32, i32::MIN);
    assert_eq!(integer_power(2, 32, 32), 0);
    // 3^40 = 12157665459056928801 < 2^64; its low 32 bits.
    assert_eq!(integer_power(3, 40, 64) as u64, 12_157_665_459_056_928_801);
    assert_eq!(
        integer_power(3, 40, 32) as u32,
        (12_157_665_459_056_928_801u64 % (1 << 32)) as u32
    );
    assert_eq!(integer_power(0, 0, 32), 1);
    assert_eq!(integer_power(7, 0, 32), 1);
    assert_eq!(integer_power(1, -5, 32), 1);
    assert_eq!(integer_power(-1, -3, 32), -1);
    assert_eq!(integer_power(-1, -4, 32), 1);
    assert_eq!(integer_power(2, -1, 32), 0);
    assert_eq!(integer_power(0, -1, 32), 0);
    // And as the evaluator's `power` of s32 (refused before it existed).
    let text = "HloModule p\n\nENTRY main {
  a = s32[3] parameter(0)
  b = s32[3] parameter(1)
  ROOT p = s32[3] power(a, b)
}
";
    let out = run(
        text,
        vec![vector(S32(vec![2, 3, -1])), vector(S32(vec![2, 3, -3]))],
    );
    assert_eq!(s32s(&out), [4, 27, -1]);
}

/// XLA's call of CUB's radix sort: rows of the last dimension stably sorted by the keys,
/// floats in total order (-NaN first, -0 before +0, NaN last), values moved with them;
/// descending reverses the order and keeps ties in order too.
#[test]
fn the_cub_radix_sort_call_sorts_keys_in_total_order_and_stably() {
    let call = |descending: bool| {
        format!(
            "HloModule t\n\nENTRY main {{
  k = f32[2,4]{{1,0}} parameter(0)
  v = s32[2,4]{{1,0}} parameter(1)
  ROOT c = (f32[2,4]{{1,0}}, s32[2,4]{{1,0}}) custom-call(k, v), custom_call_target=\"__cub$DeviceRadixSort\", backend_config={{\"descending\":{descending}}}
}}
"
        )
    };
    let keys = || {
        array(
            &[2, 4],
            F32(vec![
                f32::NAN,
                0.0,
                -0.0,
                -f32::NAN,
                3.0,
                1.0,
                3.0,
                f32::NEG_INFINITY,
            ]),
        )
    };
    let values = || array(&[2, 4], S32(vec![0, 1, 2, 3, 4, 5, 6, 7]));
    let out = run(&call(false), vec![keys(), values()]);
    let parts = tuple(&out);
    let sorted = f32s(&parts[0]);
    assert!(sorted[0].is_nan() && sorted[0].is_sign_negative());
    assert!(sorted[1] == 0.0 && sorted[1].is_sign_negative());
    assert!(sorted[2] == 0.0 && sorted[2].is_sign_positive());
    assert!(sorted[3].is_nan() && sorted[3].is_sign_positive());
    assert_eq!(sorted[4..], [f32::NEG_INFINITY, 1.0, 3.0, 3.0]);
    assert_eq!(s32s(&parts[1]), [3, 2, 1, 0, 7, 5, 4, 6]);
    let out = run(&call(true), vec![keys(), values()]);
    let parts = tuple(&out);
    assert_eq!(f32s(&parts[0])[4..], [3.0, 3.0, 1.0, f32::NEG_INFINITY]);
    assert_eq!(s32s(&parts[1]), [0, 1, 2, 3, 4, 6, 5, 7]);
}
