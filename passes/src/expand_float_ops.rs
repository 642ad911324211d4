//! `expand-float-ops`: float math the GPU has no instruction (or library function) for in the
//! element type at hand, written out in what it has, following XLA's `expand_float_ops.cc`
//! and its GPU elemental emitter.
//!
//! * `math.tanh` on `f32` becomes XLA's `EmitFastTanh` (Eigen's `ptanh_float`, the FMA
//!   variant): `|x| < 0.0004 ? x : p(x²)·x / q(x²)` with `x` clamped to ±7.998811721801758
//!   (where the rational function reaches ±1 exactly), a degree-13/6 rational approximation
//!   evaluated with `math.fma`. `libdevice`'s `__nv_tanhf` branches, which keeps LLVM from
//!   vectorizing around it, as XLA notes. Measured against `f64` tanh on every `f32` in
//!   [-10, 10] (FMA fused, division correctly rounded; `tests/integration/expand_float_ops.rs` checks a
//!   sample): at most 4.90 ulp ([`TANH_MAX_ULP`], at x = ±5.126, where tanh ≈ 0.99993) and
//!   2.92e-7 absolute ([`TANH_MAX_ABS`]); never beyond ±1; odd. Rounded to `bf16` it is
//!   within one `bf16` ulp of tanh for every `bf16`. Clamping with
//!   `arith.maximumf/minimumf` keeps NaN a NaN; ±∞ give ±1; -0 stays -0.
//! * `math.erf` on `f32` becomes XLA's rational approximation (`RewriteErf32Pattern`): odd
//!   degree-9 over even degree-12 polynomial in `x` clamped to ±3.7439211627767994
//!   (erf⁻¹(1 - 2⁻²³)), and `copysign(1, x)` from there on. Measured the same way on every
//!   `f32` in [-6, 6]: at most 5.92 ulp ([`ERF_MAX_ULP`], at x = ±3.739, just before
//!   saturation).
//! * `math.tanh` on `bf16` (scalar) becomes `tanh.approx.f32` between `extf` and `truncf`:
//!   its 2⁻¹¹ relative error is an eighth of a `bf16` ulp (see [`emit_tanh_approx`]).
//! * `f32` divisions that share a divisor (softmax's `e / sum`, a row normalized by its
//!   norm) divide as `div.full.f32` does, with the divisor's part done once: `div.full`
//!   is `(x·k) · rcp(d·k)`, `k` 1/4 where `|d| > 2¹²⁶`, 2²⁴ where `|d| < 2⁻¹²⁶`, else 1
//!   (ptxas's own sequence, so the results are the same bits). ptxas merges the `rcp` of
//!   a shared divisor but keeps the two predicated scalings of every numerator: three
//!   instructions a division, against two here ([`divide_by_shared_divisors`]).
//!   A divisor used once, or a constant one (LLVM multiplies by its reciprocal where that
//!   is exact), keeps `arith.divf`. Divisions marked `fastmath<arcp>` (the emitters' mark
//!   where the HLO proves the divisor is in [1, 2¹²⁵]: softmax's sum of `exp(x - max)`)
//!   need no scale: `x · rcp(d)`, the same bits, one instruction each.
//! * `math.exp` on `f32` with `fastmath<afn>` (which the emitters set only where the HLO
//!   proves the argument is at most 0: softmax's `x - max`) becomes `exp2(x · log2 e)`,
//!   Triton's exponential: 5 SASS instructions instead of libdevice's 8, within `f32`'s
//!   bound for `x <= 0` ([`emit_exp_as_exp2`]).
//! * `f64` tanh and erf stay (`lower-to-llvm` calls libdevice, as XLA does for `f64`).
//! * `bf16` and `f16` math: libdevice has only `f32`/`f64` functions, so every `math` op on
//!   them is computed in `f32` between `arith.extf` and `arith.truncf` — tanh and erf then
//!   use the approximations above. Exceptions: `math.fma` (native on sm_80+, and computing it
//!   in `f32` would round twice), `math.absf` on `f16` (native), and `math.absf` on `bf16`,
//!   which clears the sign bit of the `i16` bits, as XLA does (the NVVM lowering of `fabs`
//!   does not handle `bf16`).
//! * `arith` on `bf16`/`f16` stays: sm_90 adds, multiplies and compares them natively and
//!   LLVM promotes the rest to `f32`; the results are the same because `f32` has more than
//!   twice the significand bits, so rounding twice equals rounding once for +, -, ×, ÷. In
//!   particular `arith.maximumf/minimumf` keep their NaN-propagating, -0 < +0 semantics
//!   (`llvm.maximum/minimum`, `max.NaN` on sm_80+); nothing here rewrites them into
//!   compare-and-select.
//!
//! Vector operands are handled like scalars (constants become splats).

use crate::fold::has_fastmath;
use crate::pass::Pass;
use ir::attrs::{FloatValue, Scalar};
use ir::dialects::arith;
use ir::dialects::{llvm, math, with_element_type};
use ir::intern::FxHashMap;
use ir::{Attribute, Builder, Diagnostic, InsertPoint, Module, OpId, Type, Value};

/// Expands float math (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpandFloatOps;

impl Pass for ExpandFloatOps {
    crate::pass_names!(
        "expand-float-ops",
        "Expand tanh and erf into XLA's rational approximations and compute bf16/f16 math in f32"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        divide_by_shared_divisors(m);
        for op in m.collect_ops(m.top()) {
            expand(m, op);
        }
        Ok(())
    }
}

/// The largest error of the emitted `f32` tanh, in ulp of the result (measured on every
/// `f32` in [-10, 10]: 4.896).
pub const TANH_MAX_ULP: f64 = 4.9;

/// The largest absolute error of the emitted `f32` tanh (measured: 2.918e-7).
pub const TANH_MAX_ABS: f64 = 2.92e-7;

/// The largest error of the emitted `f32` erf, in ulp of the result (measured on every `f32`
/// in [-6, 6]: 5.922).
pub const ERF_MAX_ULP: f64 = 5.93;

/// Above this magnitude `div.full.f32` scales divisor and dividend by 1/4 (2¹²⁶).
const DIV_FULL_LARGE: f32 = 8.507_059e37;

/// Below this magnitude (the smallest normal `f32`, 2⁻¹²⁶) it scales both by 2²⁴.
const DIV_FULL_SMALL: f32 = f32::MIN_POSITIVE;

/// Rewrites the scalar `f32` divisions whose non-constant divisor several of them share
/// into `div.full.f32`'s own steps (see the module documentation): the scale `k` and
/// `rcp(d·k)` once after the divisor, `(x·k) · r` for each division.
fn divide_by_shared_divisors(m: &mut Module) {
    // In the order of the divisors' first divisions, so the output is deterministic.
    let mut by_divisor: Vec<(Value, Vec<OpId>)> = Vec::new();
    let mut group_of: FxHashMap<Value, usize> = FxHashMap::default();
    for op in m.ops_named(arith::DIVF) {
        let d = m.operand(op, 1);
        if m.value_type(d) != Type::F32
            || m.defining_op(d).is_some_and(|c| m.is(c, arith::CONSTANT))
        {
            continue;
        }
        let group = *group_of.entry(d).or_insert_with(|| {
            by_divisor.push((d, Vec::new()));
            by_divisor.len() - 1
        });
        by_divisor[group].1.push(op);
    }
    for (d, divisions) in by_divisor {
        // `arcp`: the emitters proved the divisor is in [1, 2^125], where `div.full` does not
        // scale (`k` = 1): `x · rcp(d)`, the same bits, for one division as for many.
        let normal = divisions.iter().all(|&op| has_fastmath(m, op, &["arcp"]));
        if divisions.len() == 1 && !normal {
            continue;
        }
        let at = match (m.defining_op(d), m.value_block(d)) {
            (Some(def), _) => InsertPoint::After(def),
            (None, Some(block)) => InsertPoint::BlockStart(block),
            (None, None) => continue,
        };
        let mut b = Builder::new(m, at);
        // `k`, where the divisor's range does not make it 1.
        let k = (!normal).then(|| div_full_scale(&mut b, d));
        let scaled = k.map_or(d, |k| b.mulf(d, k));
        // `d·k` is normal, zero, infinite or NaN: flushing subnormals changes nothing.
        let r = emit_ptx_unary(&mut b, "rcp.approx.ftz.f32", scaled);
        for op in divisions {
            let x = m.operand(op, 0);
            let mut b = Builder::before(m, op);
            let x_scaled = k.map_or(x, |k| b.mulf(x, k));
            let q = b.mulf(x_scaled, r);
            m.replace_op(op, &[q]);
        }
    }
}

/// `div.full.f32`'s scale of `d`: 1/4 where `|d| > 2¹²⁶`, 2²⁴ where `|d| < 2⁻¹²⁶` (or NaN),
/// else 1.
fn div_full_scale(b: &mut Builder<'_>, d: Value) -> Value {
    let abs = b.unary(math::ABSF, d);
    let large = float(b, Type::F32, DIV_FULL_LARGE);
    let small = float(b, Type::F32, DIV_FULL_SMALL);
    let is_large = cmpf(b, "ogt", abs, large);
    // Unordered: a NaN divisor is scaled too, as `div.full` does; the result is NaN.
    let is_small = cmpf(b, "ult", abs, small);
    let quarter = float(b, Type::F32, 0.25);
    let up = float(b, Type::F32, 16_777_216.0);
    let one = float(b, Type::F32, 1.0);
    let small_or_one = b.select(is_small, up, one);
    b.select(is_large, quarter, small_or_one)
}

/// What becomes of one op.
fn expand(m: &mut Module, op: OpId) {
    let name = m.name(op);
    let name = name.as_str();
    let Some(&ty) = m.result_types(op).first() else {
        return;
    };
    let elem = ty.element_type_or_self();
    let narrow = elem == Type::BF16 || elem == Type::F16;
    match name {
        math::TANH if elem == Type::BF16 && !ty.is_vector() => {
            replace_in_f32(m, op, |b, args| emit_tanh_approx(b, args[0]));
        }
        math::TANH | math::ERF if elem == Type::F32 || narrow => {
            let approximation = if name == math::TANH {
                emit_tanh
            } else {
                emit_erf
            };
            replace_in_f32(m, op, |b, args| approximation(b, args[0]));
        }
        math::EXP if elem == Type::F32 && has_fastmath(m, op, &["afn"]) => {
            replace_in_f32(m, op, |b, args| emit_exp_as_exp2(b, args[0]));
        }
        math::ABSF if elem == Type::BF16 => clear_sign_bit(m, op),
        math::ABSF | math::FMA => {}
        _ if narrow && is_float_math(name) => {
            let props = m.props(op).to_vec();
            replace_in_f32(m, op, |b, args| {
                let ty = b.module.value_type(args[0]);
                let v = b.create1(name, args, ty);
                let new = b.module.defining_op(v).expect("an op");
                for p in &props {
                    b.module.set_prop(new, p.name.as_str(), p.value.clone());
                }
                v
            });
        }
        _ => {}
    }
}

fn is_float_math(name: &str) -> bool {
    math::FLOAT_UNARY.contains(&name) || math::FLOAT_BINARY.contains(&name)
}

/// Replaces `op` by `compute` applied to its operands extended to `f32` (when narrower),
/// truncated back.
fn replace_in_f32(
    m: &mut Module,
    op: OpId,
    compute: impl FnOnce(&mut Builder<'_>, &[Value]) -> Value,
) {
    let ty = m.value_type(m.result(op, 0));
    let wide = with_element_type(ty, Type::F32);
    let operands = m.operand_vec(op);
    let mut b = Builder::before(m, op);
    let args: Vec<Value> = operands
        .iter()
        .map(|&v| {
            if b.module.value_type(v) == wide {
                v
            } else {
                b.cast(arith::EXTF, v, wide)
            }
        })
        .collect();
    let mut result = compute(&mut b, &args);
    if ty != wide {
        result = b.cast(arith::TRUNCF, result, ty);
    }
    m.replace_op(op, &[result]);
}

/// `|x|` of `bf16` by clearing the sign bit of its bits.
fn clear_sign_bit(m: &mut Module, op: OpId) {
    let x = m.operand(op, 0);
    let ty = m.value_type(x);
    let bits_ty = with_element_type(ty, Type::I16);
    let mut b = Builder::before(m, op);
    let bits = b.cast(arith::BITCAST, x, bits_ty);
    let mask = splat(&mut b, bits_ty, Scalar::Int(0x7fff));
    let cleared = b.binary(arith::ANDI, bits, mask);
    let abs = b.cast(arith::BITCAST, cleared, ty);
    m.replace_op(op, &[abs]);
}

// ----- approximations (on f32 values, scalar or vector) -----

/// Eigen's `ptanh_float` numerator coefficients (odd powers, highest first), as XLA has them
/// (the `f32` values of its literals).
pub const TANH_NUMERATOR: [f32; 7] = [
    -2.7607684e-16,
    2.000188e-13,
    -8.604672e-11,
    5.1222973e-8,
    1.48572235e-5,
    6.3726195e-4,
    4.8935246e-3,
];

/// Denominator coefficients (even powers, highest first).
pub const TANH_DENOMINATOR: [f32; 4] = [1.1982584e-6, 1.1853471e-4, 2.2684347e-3, 4.893525e-3];

/// Inputs are clamped to ±this: the approximation (with FMA) is exactly ±1 there.
pub const TANH_CLAMP: f32 = 7.9988117;

/// Below this magnitude tanh(x) is x in `f32` (and the rational form would lose it).
pub const TANH_LINEAR_BELOW: f32 = 4e-4;

/// XLA's erf numerator coefficients (odd powers, highest first). The last is XLA's
/// `1.128379143519084f`, one `f32` ulp below 2/√π rounded to `f32`; kept as XLA has it.
#[allow(clippy::approx_constant)]
pub const ERF_NUMERATOR: [f32; 5] = [
    2.2905065e-4,
    3.408291e-3,
    5.0955694e-2,
    1.8520832e-1,
    1.1283791,
];

/// Denominator coefficients (even powers, highest first).
pub const ERF_DENOMINATOR: [f32; 7] = [
    -1.1791603e-7,
    2.3547966e-5,
    1.0179626e-3,
    1.407047e-2,
    1.1098505e-1,
    4.9746925e-1,
    1.0,
];

/// erf⁻¹(1 - 2⁻²³): from here on erf(x) rounds to ±1 in `f32`.
pub const ERF_SATURATION: f32 = 3.7439213;

/// sm_75's `tanh.approx.f32` (SASS `MUFU.TANH`), for a `bf16` result: one instruction for
/// the ~25 of [`emit_tanh`]. Its relative error is at most 2⁻¹¹ (PTX ISA), an eighth of a
/// `bf16` ulp (2⁻⁸), so the rounded result is within one `bf16` ulp of tanh, inside the
/// `bf16` tolerance of `--check` (2⁻⁷, `driver::check::Tolerance`). `f16` (ulp 2⁻¹¹) keeps
/// the rational form. The interpreter runs the instruction as the exact tanh; the GPU bundles
/// check the hardware's result against the same tolerance.
fn emit_tanh_approx(b: &mut Builder<'_>, x: Value) -> Value {
    emit_ptx_unary(b, "tanh.approx.f32", x)
}

/// The one-operand `f32` PTX instruction `instruction` (`rcp.approx.ftz.f32`) of `x`, as
/// inline assembly: NVPTX has no intrinsic that keeps it as written.
fn emit_ptx_unary(b: &mut Builder<'_>, instruction: &str, x: Value) -> Value {
    let at = b.insertion_point();
    llvm::build_inline_asm(
        b.module,
        at,
        &format!("{instruction} $0, $1;"),
        "=f,f",
        &[x],
        Type::F32,
    )
}

/// `exp(x)` as `exp2(x · log2 e)`: `ex2.approx.f32` after one multiply (libdevice's
/// `__nv_exp2f`: `MUFU.EX2` and a scaling for subnormal results), 5 SASS instructions
/// where `__nv_expf` takes 8. Rounding `x · log2 e` moves the result by up to
/// `|x| · 2⁻²⁴` relatively, and `ex2.approx` adds 2 ulp (2⁻²²): past `f32`'s bound (1e-5)
/// for `x` above about 70, where `exp` has no room to overflow later. The emitters ask for
/// it (`fastmath<afn>`) only where the HLO proves `x <= 0` (`x - max` of `x`'s row,
/// `emitters::elemental::range`): there the error is below 2⁻²² + 103·2⁻²⁴ = 6.4e-6 of
/// the result down to the smallest normal result (x = -87.3), and below 2.4e-7 absolute
/// everywhere; `-inf` gives 0 and NaN stays NaN.
fn emit_exp_as_exp2(b: &mut Builder<'_>, x: Value) -> Value {
    let ty = b.module.value_type(x);
    let log2_e = float(b, ty, std::f32::consts::LOG2_E);
    let scaled = b.mulf(x, log2_e);
    b.unary(math::EXP2, scaled)
}

fn emit_tanh(b: &mut Builder<'_>, x: Value) -> Value {
    let ty = b.module.value_type(x);
    let abs = b.unary(math::ABSF, x);
    let linear_below = float(b, ty, TANH_LINEAR_BELOW);
    let linear = cmpf(b, "olt", abs, linear_below);
    let clamped = clamp(b, x, TANH_CLAMP);
    let quotient = odd_rational(b, clamped, &TANH_NUMERATOR, &TANH_DENOMINATOR);
    b.select(linear, x, quotient)
}

/// `x · P(x²) / Q(x²)`: the odd rational approximation tanh and erf share.
fn odd_rational(b: &mut Builder<'_>, x: Value, numerator: &[f32], denominator: &[f32]) -> Value {
    let x2 = b.mulf(x, x);
    let p = polynomial(b, x2, numerator);
    let numerator = b.mulf(x, p);
    let denominator = polynomial(b, x2, denominator);
    b.binary(arith::DIVF, numerator, denominator)
}

fn emit_erf(b: &mut Builder<'_>, x: Value) -> Value {
    let ty = b.module.value_type(x);
    let abs = b.unary(math::ABSF, x);
    let saturation = float(b, ty, ERF_SATURATION);
    let saturates = cmpf(b, "oge", abs, saturation);
    let one = float(b, ty, 1.0);
    let saturated = b.binary(math::COPYSIGN, one, x);
    let clamped = clamp(b, x, ERF_SATURATION);
    let quotient = odd_rational(b, clamped, &ERF_NUMERATOR, &ERF_DENOMINATOR);
    b.select(saturates, saturated, quotient)
}

/// `min(max(x, -bound), bound)` with NaN-propagating `arith.maximumf/minimumf`.
fn clamp(b: &mut Builder<'_>, x: Value, bound: f32) -> Value {
    let ty = b.module.value_type(x);
    let low = float(b, ty, -bound);
    let high = float(b, ty, bound);
    let above = b.binary(arith::MAXIMUMF, x, low);
    b.binary(arith::MINIMUMF, above, high)
}

/// Horner's rule with `math.fma`: `((c0·x + c1)·x + c2)...`.
fn polynomial(b: &mut Builder<'_>, x: Value, coefficients: &[f32]) -> Value {
    let ty = b.module.value_type(x);
    let mut acc = float(b, ty, coefficients[0]);
    for &c in &coefficients[1..] {
        let c = float(b, ty, c);
        acc = b.create1(math::FMA, &[acc, x, c], ty);
    }
    acc
}

fn cmpf(b: &mut Builder<'_>, predicate: &str, lhs: Value, rhs: Value) -> Value {
    let index = ir::dialects::arith::CMPF_PREDICATES
        .iter()
        .position(|&p| p == predicate)
        .expect("a cmpf predicate");
    let ty = with_element_type(b.module.value_type(lhs), Type::I1);
    let op = b.insert(
        ir::OpState::new(arith::CMPF)
            .operands(&[lhs, rhs])
            .results(&[ty])
            .prop("predicate", Attribute::i64(index as i64)),
    );
    b.module.result(op, 0)
}

/// A float constant of `ty` (a splat for vectors).
fn float(b: &mut Builder<'_>, ty: Type, v: f32) -> Value {
    splat(b, ty, Scalar::Float(FloatValue(f64::from(v))))
}

/// A constant of `ty` with every element `v`.
fn splat(b: &mut Builder<'_>, ty: Type, v: Scalar) -> Value {
    if ty.is_vector() {
        return b.constant(Attribute::dense_splat(ty, v));
    }
    match v {
        Scalar::Int(i) => b.int(i, ty),
        Scalar::Float(f) => b.float(f.0, ty),
    }
}
