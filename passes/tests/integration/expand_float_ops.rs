//! The approximations `expand-float-ops` emits, measured. The pass rewrites `math.tanh` /
//! `math.erf` in a one-op function; a small interpreter runs the emitted ops in `f32` (FMA as
//! a true fused multiply-add, division correctly rounded — what the GPU does for them) over
//! a dense sample of inputs, and the error against an `f64` reference must stay within the
//! bounds the pass documents. Special values (NaN, ±∞, ±0, tiny) are checked exactly; `bf16`
//! tanh (through `f32`) is checked on every `bf16`. The lit cases' output also parses in
//! MLIR 22.

use crate::common;
use ir::dialects::arith;
use ir::dialects::func;
use ir::dialects::math;
use ir::{Attribute, Module, OpId, Value};
use passes::expand_float_ops::{ERF_MAX_ULP, TANH_MAX_ABS, TANH_MAX_ULP};
use passes::{ExpandFloatOps, Pass};
use std::collections::HashMap;

/// A value of the interpreted function.
#[derive(Clone, Copy, Debug)]
enum V {
    F(f32),
    B(bool),
}

impl V {
    fn f(self) -> f32 {
        match self {
            V::F(x) => x,
            V::B(_) => panic!("expected a float"),
        }
    }
}

/// One emitted op, decoded once.
enum Inst {
    Const(f32),
    Unary(fn(f32) -> f32, usize),
    Binary(fn(f32, f32) -> f32, usize, usize),
    Fma(usize, usize, usize),
    Cmp(fn(f32, f32) -> bool, usize, usize),
    Select(usize, usize, usize),
    Return(usize),
}

/// `f32` ops as the GPU computes them (and as `arith`/`math` define them).
fn maximum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a == b {
        if a.is_sign_negative() { b } else { a }
    } else {
        a.max(b)
    }
}

fn minimum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a == b {
        if a.is_sign_negative() { a } else { b }
    } else {
        a.min(b)
    }
}

/// The function `pass(math.<op> %x : f32)`, decoded.
fn compile(op: &str) -> Vec<Inst> {
    let mut m = ir::parse_module(&format!(
        "func.func @f(%x: f32) -> f32 {{\n  %0 = {op} %x : f32\n  return %0 : f32\n}}"
    ))
    .unwrap();
    ExpandFloatOps.run(&mut m).unwrap();
    m.verify().unwrap();
    decode(&m)
}

fn decode(m: &Module) -> Vec<Inst> {
    let f = m.first_op(m.body()).unwrap();
    let entry = m.entry_block(m.region(f, 0)).unwrap();
    let mut slots: HashMap<Value, usize> = HashMap::new();
    slots.insert(m.block_arg(entry, 0), 0);
    let mut insts = Vec::new();
    for op in m.block_ops(entry) {
        let arg = |i: usize| slots[&m.operand(op, i)];
        insts.push(decode_op(m, op, &arg));
        if m.num_results(op) == 1 {
            slots.insert(m.result(op, 0), insts.len());
        }
    }
    insts
}

fn decode_op(m: &Module, op: OpId, arg: &dyn Fn(usize) -> usize) -> Inst {
    match m.name(op).as_str() {
        arith::CONSTANT => {
            Inst::Const(m.prop(op, "value").and_then(Attribute::as_f64).unwrap() as f32)
        }
        math::ABSF => Inst::Unary(f32::abs, arg(0)),
        arith::MULF => Inst::Binary(|a, b| a * b, arg(0), arg(1)),
        arith::DIVF => Inst::Binary(|a, b| a / b, arg(0), arg(1)),
        arith::MAXIMUMF => Inst::Binary(maximum, arg(0), arg(1)),
        arith::MINIMUMF => Inst::Binary(minimum, arg(0), arg(1)),
        math::COPYSIGN => Inst::Binary(f32::copysign, arg(0), arg(1)),
        math::FMA => Inst::Fma(arg(0), arg(1), arg(2)),
        arith::CMPF => {
            let predicate = ir::dialects::arith::CMPF_PREDICATES
                [m.prop(op, "predicate").and_then(Attribute::as_i64).unwrap() as usize];
            let cmp: fn(f32, f32) -> bool = match predicate {
                "olt" => |a, b| a < b,
                "oge" => |a, b| a >= b,
                p => panic!("unexpected predicate {p}"),
            };
            Inst::Cmp(cmp, arg(0), arg(1))
        }
        arith::SELECT => Inst::Select(arg(0), arg(1), arg(2)),
        func::RETURN => Inst::Return(arg(0)),
        other => panic!("unexpected op {other}"),
    }
}

fn run(insts: &[Inst], x: f32) -> f32 {
    let mut values = vec![V::F(x)];
    for inst in insts {
        let v = match *inst {
            Inst::Const(c) => V::F(c),
            Inst::Unary(f, a) => V::F(f(values[a].f())),
            Inst::Binary(f, a, b) => V::F(f(values[a].f(), values[b].f())),
            Inst::Fma(a, b, c) => V::F(values[a].f().mul_add(values[b].f(), values[c].f())),
            Inst::Cmp(f, a, b) => V::B(f(values[a].f(), values[b].f())),
            Inst::Select(c, a, b) => match values[c] {
                V::B(true) => values[a],
                _ => values[b],
            },
            Inst::Return(a) => return values[a].f(),
        };
        values.push(v);
    }
    panic!("no return")
}

/// `|got - want|` in units of the `f32` spacing at `want`.
fn ulp_error(got: f32, want: f64) -> f64 {
    let spacing = f64::from(f32::EPSILON) * 2f64.powi(want.abs().log2().floor() as i32);
    let spacing = spacing.max(f64::from(f32::from_bits(1)));
    (f64::from(got) - want).abs() / spacing
}

/// Every `step`-th `f32` in `[-limit, limit]`.
fn sample(limit: f32, step: u32) -> impl Iterator<Item = f32> {
    (0..limit.to_bits())
        .step_by(step as usize)
        .map(f32::from_bits)
        .flat_map(|x| [x, -x])
}

/// The worst ulp and absolute errors of `insts` against `reference` over the sample.
fn worst(insts: &[Inst], reference: fn(f64) -> f64, limit: f32) -> (f64, f64) {
    let (mut ulp, mut abs) = (0f64, 0f64);
    for x in sample(limit, 97) {
        let got = run(insts, x);
        let want = reference(f64::from(x));
        ulp = ulp.max(ulp_error(got, want));
        abs = abs.max((f64::from(got) - want).abs());
    }
    (ulp, abs)
}

#[test]
fn tanh_stays_within_its_documented_error() {
    let tanh = compile(math::TANH);
    let (ulp, abs) = worst(&tanh, f64::tanh, 10.0);
    assert!(ulp <= TANH_MAX_ULP, "tanh: {ulp} ulp");
    assert!(abs <= TANH_MAX_ABS, "tanh: {abs} absolute");
    // The bound is tight enough to mean something: the approximation is not exact.
    assert!(ulp > 1.0, "tanh: only {ulp} ulp");
}

#[test]
fn tanh_special_values() {
    let tanh = compile(math::TANH);
    assert!(run(&tanh, f32::NAN).is_nan());
    assert_eq!(run(&tanh, f32::INFINITY), 1.0);
    assert_eq!(run(&tanh, f32::NEG_INFINITY), -1.0);
    assert_eq!(run(&tanh, 1e30), 1.0);
    assert_eq!(run(&tanh, -9.0), -1.0);
    assert!(run(&tanh, -0.0).is_sign_negative());
    assert_eq!(run(&tanh, 1e-30), 1e-30);
    // Never beyond ±1, and odd.
    for x in sample(20.0, 4099) {
        let y = run(&tanh, x);
        assert!(y.abs() <= 1.0, "tanh({x}) = {y}");
        assert_eq!(run(&tanh, -x), -y, "tanh is odd at {x}");
    }
}

/// Rounds to the nearest `bf16` (ties to even) and back.
fn round_bf16(x: f32) -> f32 {
    let bits = x.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1));
    f32::from_bits(rounded & 0xffff_0000)
}

#[test]
fn bf16_tanh_is_within_one_bf16_ulp_everywhere() {
    let tanh = compile(math::TANH);
    for bits in 0..=u16::MAX {
        let x = f32::from_bits(u32::from(bits) << 16);
        if x.is_nan() {
            continue;
        }
        let got = round_bf16(run(&tanh, x));
        let want = f64::from(x).tanh();
        // One bf16 ulp is 2^16 f32 ulps.
        let error = ulp_error(got, want) / 65536.0;
        assert!(
            error <= 1.0,
            "bf16 tanh({x}) = {got}, want {want}: {error} ulp"
        );
    }
}

/// erf by its Maclaurin series (converges for all x; |x| <= 4 keeps cancellation far below
/// `f32` precision).
fn erf_reference(x: f64) -> f64 {
    if x.abs() > 4.0 {
        return x.signum();
    }
    let (mut term, mut sum) = (x, x);
    for n in 1..200 {
        term *= -x * x / f64::from(n);
        let add = term / f64::from(2 * n + 1);
        sum += add;
        if add.abs() < 1e-18 {
            break;
        }
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}

#[test]
fn erf_stays_within_its_documented_error() {
    let erf = compile(math::ERF);
    let (ulp, _) = worst(&erf, erf_reference, 6.0);
    assert!(ulp <= ERF_MAX_ULP, "erf: {ulp} ulp");
    assert!(ulp > 0.5, "erf: only {ulp} ulp");
    assert!(run(&erf, f32::NAN).is_nan());
    assert_eq!(run(&erf, f32::INFINITY), 1.0);
    assert_eq!(run(&erf, -5.0), -1.0);
}

#[test]
fn lit_cases_agree_with_mlir() {
    common::assert_lit_cases_agree_with_mlir("expand-float-ops.mlir", &ExpandFloatOps);
}

/// `text` after `expand-float-ops`, verified, as a kernel for the interpreter (its function
/// `@main`), and the module to look at.
fn expanded_kernel(text: &str) -> (Module, interp::Kernel) {
    let mut m = ir::parse_module_with(text, "test.mlir", ir::Registry::standard()).unwrap();
    ExpandFloatOps.run(&mut m).unwrap();
    m.verify().unwrap();
    let kernel = interp::Kernel::compile(&m, "main").unwrap();
    (m, kernel)
}

/// The output buffer after one thread of `kernel` ran on `input`.
fn run_one_thread(kernel: &interp::Kernel, input: Vec<u8>, output_bytes: usize) -> Vec<u8> {
    let launch = interp::Launch {
        blocks: 1,
        threads: 1,
    };
    let buffers = vec![
        interp::Buffer::new(input),
        interp::Buffer::new(vec![0; output_bytes]),
    ];
    kernel.run(launch, buffers).unwrap().buffers[1]
        .bytes()
        .to_vec()
}

/// Divisions sharing a divisor, rewritten into `div.full.f32`'s steps (`(x·k)·rcp(d·k)`),
/// keep IEEE division's special values and stay within an ulp of the quotient for divisors
/// at and past the scaled ranges' edges (2^126, 2^-126), subnormal divisors, zeros,
/// infinities and NaN. The interpreter runs `rcp.approx` exactly (subnormals kept), so
/// this checks the rewrite's arithmetic and special values, not the hardware's flushing
/// `rcp`, which the scaling keeps away from subnormals (the GPU bundles compare that).
#[test]
fn shared_divisor_division_keeps_ieee_special_values() {
    let text = r#"
func.func @main(%in: tensor<3xf32>, %out: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = tensor.extract %in[%c0] : tensor<3xf32>
  %b = tensor.extract %in[%c1] : tensor<3xf32>
  %d = tensor.extract %in[%c2] : tensor<3xf32>
  %qa = arith.divf %a, %d : f32
  %qb = arith.divf %b, %d : f32
  %o = tensor.insert %qa into %out[%c0] : tensor<2xf32>
  %p = tensor.insert %qb into %o[%c1] : tensor<2xf32>
  return %p : tensor<2xf32>
}"#;
    let (m, kernel) = expanded_kernel(text);
    assert!(m.ops_named(arith::DIVF).is_empty(), "{}", m.print());
    let sub = f32::from_bits(1);
    let divisors = [
        1.0,
        -3.0,
        8.5e37,
        8.6e37,
        1e38,
        -3.4e38,
        f32::MAX,
        f32::MIN_POSITIVE,
        1.1e-38,
        sub,
        -sub * 7.0,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let dividends = [1.0, -2.5, 0.0, 3e38, 1e-38, sub, f32::INFINITY, f32::NAN];
    for d in divisors {
        for pair in dividends.chunks(2) {
            let bytes = [pair[0], pair[1], d]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            let out = run_one_thread(&kernel, bytes, 8);
            for (k, &x) in pair.iter().enumerate() {
                let got = f32::from_le_bytes(out[4 * k..4 * k + 4].try_into().unwrap());
                let want = x / d;
                let close = if want.is_nan() || want.is_infinite() || want == 0.0 {
                    got.to_bits() == want.to_bits() || (want.is_nan() && got.is_nan())
                } else {
                    (f64::from(got) - f64::from(want)).abs()
                        <= f64::from(want.abs()) * 2f64.powi(-22)
                };
                assert!(close, "{x} / {d}: {got}, IEEE {want}");
            }
        }
    }
}

/// `math.exp fastmath<afn>` (set by the emitters where the HLO proves the argument is at
/// most 0) runs as `exp2(x · log2 e)`: on every 9973rd `f32` bit pattern from 0 down to -103
/// (where `exp` is subnormal and below) it is within `6.4e-6` of `exp` relatively while
/// the result is normal, and within the smallest normal absolutely below (the interpreter
/// runs `exp2` exactly: this checks the rounding of `x · log2 e`, which grows with `|x|`;
/// `ex2.approx`'s 2 ulp come on top on the GPU). `-0`, `-inf` and NaN keep `exp`'s results;
/// `exp` without the flag is left alone.
#[test]
fn exp_of_a_non_positive_argument_is_exp2_within_the_f32_bound() {
    let text = r#"
func.func @main(%in: tensor<1xf32>, %out: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = tensor.extract %in[%c0] : tensor<1xf32>
  %fast = math.exp %x fastmath<afn> : f32
  %exact = math.exp %x : f32
  %o = tensor.insert %fast into %out[%c0] : tensor<2xf32>
  %p = tensor.insert %exact into %o[%c1] : tensor<2xf32>
  return %p : tensor<2xf32>
}"#;
    let (m, kernel) = expanded_kernel(text);
    assert_eq!(m.ops_named(math::EXP2).len(), 1, "{}", m.print());
    assert_eq!(m.ops_named(math::EXP).len(), 1, "{}", m.print());
    let run = |x: f32| {
        let out = run_one_thread(&kernel, x.to_le_bytes().to_vec(), 8);
        f32::from_le_bytes(out[0..4].try_into().unwrap())
    };
    let mut worst: f64 = 0.0;
    let lowest = (-103.0f32).to_bits();
    for bits in ((-0.0f32).to_bits()..=lowest).step_by(9973) {
        let x = f32::from_bits(bits);
        let got = f64::from(run(x));
        let want = f64::from(x).exp();
        if want >= f64::from(f32::MIN_POSITIVE) {
            worst = worst.max((got - want).abs() / want);
        } else {
            assert!(
                (got - want).abs() <= f64::from(f32::MIN_POSITIVE),
                "exp({x}): {got}"
            );
        }
    }
    assert!(worst <= 6.4e-6, "worst relative error {worst:e}");
    assert!(
        worst > 1e-6,
        "{worst:e}: the rounding of x · log2 e should show near -87"
    );
    assert_eq!(run(-0.0), 1.0);
    assert_eq!(run(0.0), 1.0);
    assert_eq!(run(f32::NEG_INFINITY), 0.0);
    assert!(run(f32::NAN).is_nan());
}
