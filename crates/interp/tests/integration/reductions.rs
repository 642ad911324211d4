//! Kernels of the reduction emitters (row, multi-row, column, small column; variadic,
//! several reduces, epilogues, side outputs), run in the interpreter and compared with the
//! HLO reference evaluator.
//!
//! The kernels reduce in another order than the evaluator (per thread, then across a warp,
//! then across warps), so float sums agree only up to rounding. Two ways to compare:
//!
//! * **Exact**: float inputs are rounded to multiples of 1/8 of magnitude at most a few
//!   units. Every partial sum of fewer than 2^17 such values is a multiple of 1/8 below
//!   2^20, which f32 holds exactly, so a sum in any order gives the evaluator's bits (and
//!   max/min never round). These tests compare bit for bit, epilogues included.
//! * **Bounded**: on the evaluator's unrounded random inputs, a sum of `n` values in any
//!   order lies within `γ = (n − 1)·ε·Σ|x|` of the exact sum (recursive summation's classic
//!   bound, ε = 2^-24 for f32), so two orders differ by at most `2·(n − 1)·ε·Σ|x|`, with
//!   `Σ|x|` taken over the row or column reduced. This is the tolerance of those tests.
//!
//! Integers are compared exactly everywhere.

use emitters::reduction::{ReductionFusion, ReductionKind};
use hlo::evaluate::{Elements, HostArray, HostValue, evaluate_fusion, random_arguments};

use crate::common;

/// Float elements rounded to multiples of 1/8 (see the module documentation).
fn quantized(v: &HostValue) -> HostValue {
    let HostValue::Array(a) = v else {
        return v.clone();
    };
    let q = |x: f64| (x * 8.0).round() / 8.0;
    let elements = match a.clone().into_elements() {
        Elements::F32(e) => Elements::F32(e.into_iter().map(|x| q(x as f64) as f32).collect()),
        Elements::F64(e) => Elements::F64(e.into_iter().map(q).collect()),
        other => other,
    };
    HostValue::Array(HostArray::new(a.dims().to_vec(), elements).unwrap())
}

struct Outcome {
    /// Interpreter and evaluator outputs, per output leaf.
    outputs: Vec<(HostArray, HostArray)>,
    args: Vec<HostValue>,
}

/// Emits the only fusion of `text`, checks that the reduction emitter of `kind` wrote it,
/// and runs it in the interpreter and the evaluator on the same inputs. Failures name
/// `case`.
fn run(case: &str, text: &str, kind: ReductionKind, seed: u64, exact_inputs: bool) -> Outcome {
    let (_, module) = hlo::load("test.hlo", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let fusion = emitters::fusions(&module)[0];
    let computation = module.computation(fusion);
    let plan =
        ReductionFusion::analyze(&emitters::analyze(computation)).expect("a reduction fusion");
    assert_eq!(plan.tiling.kind, kind, "{case}");
    let emitted = emitters::emit_fusion(&module, fusion).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(emitted.emitter, emitters::EmitterKind::Reduction);
    let mut args = random_arguments(computation, seed).unwrap();
    if exact_inputs {
        args = args.iter().map(quantized).collect();
    }
    let expected = evaluate_fusion(&module, fusion, &args).unwrap();
    let got = common::run_emitted(computation, &emitted, &args, 0);
    let outputs = got.into_iter().zip(expected).collect();
    Outcome { outputs, args }
}

/// Runs with exact inputs and asserts every output element equal to the evaluator's.
fn check_exact(case: &str, text: &str, kind: ReductionKind) {
    for seed in 0..2 {
        let outcome = run(case, text, kind, seed, true);
        let (got, want): (Vec<_>, Vec<_>) = outcome.outputs.into_iter().unzip();
        common::assert_bit_identical(&got, &want, &format!("{case}, seed {seed}: "));
    }
}

fn sum_fusion(ty: &str, input: &str, output: &str, dims: &str) -> String {
    format!(
        "add {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  ROOT s = {ty}[] add(a, b)\n}}\n\
         fusion {{\n  p = {ty}[{input}] parameter(0)\n  c = {ty}[] constant(0)\n  \
         ROOT r = {ty}[{output}] reduce(p, c), dimensions={{{dims}}}, to_apply=add\n}}\n"
    )
}

/// Sums of each reduction kind the emitter tiles, over the element type, input shape,
/// output shape and reduced dimensions of each case.
#[test]
fn sums_of_each_reduction_kind() {
    use ReductionKind::{Column, MultiRow, Row, SmallColumn};
    let cases = [
        // 64 threads per row (two warps): partials meet in shared memory.
        ("row across warps", "f32", "8,2048", "8", "1", Row),
        ("row within one warp", "f32", "6,96", "6", "1", Row),
        ("batched row", "f32", "3,5,160", "5", "0,2", Row),
        ("multi-row", "f32", "64,8", "64", "1", MultiRow),
        ("multi-row, partial", "f32", "40,4", "40", "1", MultiRow),
        ("column", "f32", "64,48", "48", "0", Column),
        ("batched column", "f32", "3,70,40", "3,40", "1", Column),
        ("small column", "f32", "4,64,8", "4,8", "1", SmallColumn),
        ("two columns", "f32", "3,256,2", "3,2", "1", SmallColumn),
        ("integer row", "s32", "20,128", "20", "1", Row),
        ("integer column", "s32", "64,40", "40", "0", Column),
    ];
    for (case, ty, input, output, dims, kind) in cases {
        check_exact(case, &sum_fusion(ty, input, output, dims), kind);
    }
}

#[test]
fn variadic_argmax() {
    let text = r#"
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, a, b)
  i = s32[] select(pick, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
fusion {
  p = f32[12,256] parameter(0)
  iota = s32[12,256] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[12], s32[12]) reduce(p, iota, ninf, zero), dimensions={1}, to_apply=argmax
}
"#;
    check_exact("variadic argmax", text, ReductionKind::Row);
}

#[test]
fn several_reduces_with_epilogues_and_a_side_output() {
    let text = concat!(
        testkit::add_f32!(),
        r#"max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
fusion {
  p = f32[6,512] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  neg = f32[6,512] negate(p)
  sum = f32[6] reduce(neg, zero), dimensions={1}, to_apply=add
  n = f32[] constant(512)
  bn = f32[6] broadcast(n), dimensions={}
  mean = f32[6] divide(sum, bn)
  big = f32[6] reduce(p, ninf), dimensions={1}, to_apply=max
  e = f32[6] exponential(big)
  ROOT t = (f32[6], f32[6], f32[6,512], f32[6]) tuple(mean, e, neg, big)
}
"#
    );
    check_exact("several reduces", text, ReductionKind::Row);
}

#[test]
fn column_epilogue_and_side_output() {
    let text = concat!(
        testkit::add_f32!(),
        r#"fusion {
  p = f32[96,40] parameter(0)
  zero = f32[] constant(0)
  a = f32[96,40] abs(p)
  r = f32[40] reduce(a, zero), dimensions={0}, to_apply=add
  s = f32[40] sqrt(r)
  ROOT t = (f32[40], f32[96,40]) tuple(s, a)
}
"#
    );
    check_exact("column epilogue", text, ReductionKind::Column);
}

#[test]
fn bf16_max_row_reduction() {
    let text = r#"
max {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
fusion {
  p = bf16[4,1024] parameter(0)
  c = bf16[] constant(-inf)
  ROOT r = bf16[4] reduce(p, c), dimensions={1}, to_apply=max
}
"#;
    check_exact("bf16 max", text, ReductionKind::Row);
}

/// Unrounded random inputs: each output within `2·(n − 1)·ε·Σ|x|` of the evaluator's.
fn check_bounded(
    case: &str,
    text: &str,
    kind: ReductionKind,
    rows: usize,
    cols: usize,
    reduce_rows: bool,
) {
    let outcome = run(case, text, kind, 7, false);
    let HostValue::Array(input) = &outcome.args[0] else {
        panic!("an array input");
    };
    let x = |r: usize, c: usize| match input.value(r * cols + c) {
        hlo::Value::Float(f) => f.abs(),
        other => panic!("{other:?}"),
    };
    let (got, want) = &outcome.outputs[0];
    let n = if reduce_rows { rows } else { cols };
    for i in 0..want.len() {
        let abs_sum: f64 = (0..n)
            .map(|j| if reduce_rows { x(j, i) } else { x(i, j) })
            .sum();
        let bound = 2.0 * (n as f64 - 1.0) * f64::from(f32::EPSILON / 2.0) * abs_sum;
        let (hlo::Value::Float(g), hlo::Value::Float(w)) = (got.value(i), want.value(i)) else {
            panic!("float outputs");
        };
        assert!(
            (g - w).abs() <= bound,
            "{case}, element {i}: interpreter {g}, evaluator {w}, bound {bound}"
        );
    }
}

#[test]
fn float_sums_within_the_reassociation_bound() {
    check_bounded(
        "rows of 2048",
        &sum_fusion("f32", "8,2048", "8", "1"),
        ReductionKind::Row,
        8,
        2048,
        false,
    );
    check_bounded(
        "columns of 256",
        &sum_fusion("f32", "256,40", "40", "0"),
        ReductionKind::Column,
        256,
        40,
        true,
    );
}
