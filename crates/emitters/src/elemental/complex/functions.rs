//! The functions of a complex number, on its parts (f32 for `c64`, f64 for `c128`; the
//! thresholds below are the part type's, see [`Limits`]). Each is scaled where a result that
//! fits in the part type would otherwise pass through an overflow (`|z|` in `abs`, `log`, `sqrt`,
//! `cbrt`, `sign`; `e^re` in `exp`; `cosh im` in `sin` and `cos`), and keeps a zero part on
//! the axes where `inf * 0` would make it NaN (C99 Annex G), as the evaluator's f64
//! reference does (`hlo::evaluate::complex`).

use super::super::arith::cmpf;
use super::{add, b_zero, mul, multiply, part_type};
use ir::dialects::arith;
use ir::dialects::math;
use ir::{Builder, Type, Value};

/// A complex number's real and imaginary parts.
pub(super) type Parts = (Value, Value);

/// Where the formulas change for a part type: past these, a plain formula would overflow or
/// lose the result, as the functions below explain. f32's first, then f64's.
struct Limits {
    /// Where `expm1` overflows and the 1 is below the rounding: 88 (f32), 709 (f64).
    exp_m1: f64,
    /// Past this |im|, cosh and sinh are ±e^|im| / 2 to the type's precision: 80, 700.
    hyperbolic: f64,
    /// Past this |re|, tanh re is ±1 in the type: 9, 22.
    tanh_one: f64,
    /// `sqrt`'s scaling: above `huge` by 1/4, below `tiny` by `up` (then `down` after).
    huge: f64,
    tiny: f64,
    up: f64,
    down: f64,
}

fn limits(part: Type) -> Limits {
    if part == Type::F64 {
        Limits {
            exp_m1: 709.0,
            hyperbolic: 700.0,
            tanh_one: 22.0,
            huge: 2f64.powi(1022),
            tiny: 2f64.powi(-1000),
            up: 2f64.powi(1000),
            down: 2f64.powi(-500),
        }
    } else {
        Limits {
            exp_m1: 88.0,
            hyperbolic: 80.0,
            tanh_one: 9.0,
            huge: 2f64.powi(126),
            tiny: 2f64.powi(-100),
            up: 2f64.powi(100),
            down: 2f64.powi(-50),
        }
    }
}

fn float(b: &mut Builder<'_>, part: Type, value: f64) -> Value {
    b.float(value, part)
}

fn sub(b: &mut Builder<'_>, x: Value, y: Value) -> Value {
    b.binary(arith::SUBF, x, y)
}

/// `e^z`: e^re as e^(re/2) twice, multiplied in after cos and sin: the result is finite
/// wherever it fits in f32, also where e^re alone does not (re past 88.7, e^89 cos 1 =
/// 2.4e38). On the real axis the imaginary part stays the input's zero (C99's `cexp(x +
/// i0) = e^x + i0`), not `inf * 0 = NaN`.
pub(super) fn exp(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let pt = part_type(b, re);
    let one_half = float(b, pt, 0.5);
    let half_re = mul(b, re, one_half);
    let half = b.unary(math::EXP, half_re);
    let (cos, sin) = (b.unary(math::COS, im), b.unary(math::SIN, im));
    let (out_re, out_im) = (mul(b, half, cos), mul(b, half, sin));
    let (out_re, out_im) = (mul(b, out_re, half), mul(b, out_im, half));
    let zero = b_zero(b, pt);
    // Where e^(re/2) is 0 the result is 0, also when `im` is infinite (0 · cos ∞ is NaN).
    let vanishes = cmpf(b, "oeq", half, zero);
    let (out_re, out_im) = (
        b.select(vanishes, zero, out_re),
        b.select(vanishes, zero, out_im),
    );
    let real_axis = cmpf(b, "oeq", im, zero);
    (out_re, b.select(real_axis, im, out_im))
}

/// `e^z - 1`: the real part as `expm1(re) cos im - 2 sin^2(im/2)`, which keeps the bits
/// that `e^re cos im - 1` cancels near zero; past re = 88, where expm1 overflows f32 and
/// the 1 is below the rounding, `e^z`'s own real part.
pub(super) fn exp_m1(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let pt = part_type(b, re);
    let (exp_re, exp_im) = exp(b, (re, im));
    let expm1 = b.unary(math::EXPM1, re);
    let cos = b.unary(math::COS, im);
    let scaled = mul(b, expm1, cos);
    let one_half = float(b, pt, 0.5);
    let half_im = mul(b, im, one_half);
    let half_sin = b.unary(math::SIN, half_im);
    let square = mul(b, half_sin, half_sin);
    let twice = add(b, square, square);
    let near = sub(b, scaled, twice);
    let limit = float(b, pt, limits(pt).exp_m1);
    let far = cmpf(b, "ogt", re, limit);
    (b.select(far, exp_re, near), exp_im)
}

/// `log|z|` as `log m + log1p((n/m)^2) / 2` for `m`, `n` the larger and smaller part
/// magnitude: finite where |z| itself overflows f32 (3e38 + 3e38i); -inf at zero.
fn log_magnitude(b: &mut Builder<'_>, re: Value, im: Value) -> Value {
    let pt = part_type(b, re);
    let (larger, square) = larger_and_squared_ratio(b, re, im);
    let log1p = b.unary(math::LOG1P, square);
    let half = float(b, pt, 0.5);
    let correction = mul(b, log1p, half);
    let log_larger = b.unary(math::LOG, larger);
    let sum = add(b, log_larger, correction);
    let zero = b_zero(b, pt);
    let at_zero = cmpf(b, "oeq", larger, zero);
    b.select(at_zero, log_larger, sum)
}

/// `log z = log|z| + i atan2(im, re)` (the argument ±π on the negative real axis, by the
/// zero's sign).
pub(super) fn log(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    (log_magnitude(b, re, im), b.binary(math::ATAN2, im, re))
}

/// `log(1 + z)`: for |re|, |im| < 0.5 the real part is `log1p(re (2 + re) + im^2) / 2`,
/// which keeps the bits that `1 + re` rounds away; elsewhere `log|1 + z|`.
pub(super) fn log_1p(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let pt = part_type(b, re);
    let one = float(b, pt, 1.0);
    let shifted = add(b, re, one);
    let far_re = log_magnitude(b, shifted, im);
    let two = float(b, pt, 2.0);
    let two_plus = add(b, re, two);
    let product = mul(b, re, two_plus);
    let im_squared = mul(b, im, im);
    let sum = add(b, product, im_squared);
    let log1p = b.unary(math::LOG1P, sum);
    let half = float(b, pt, 0.5);
    let near_re = mul(b, log1p, half);
    let small = {
        let (abs_re, abs_im) = (b.unary(math::ABSF, re), b.unary(math::ABSF, im));
        let larger = b.binary(arith::MAXIMUMF, abs_re, abs_im);
        cmpf(b, "olt", larger, half)
    };
    (
        b.select(small, near_re, far_re),
        b.binary(math::ATAN2, im, shifted),
    )
}

/// The principal cube root `|z|^(1/3) e^(i arg(z)/3)`, with `|z|^(1/3)` as `cbrt(m) ·
/// cbrt(sqrt(1 + (n/m)^2))` so that |z| never overflows; 0 at zero.
pub(super) fn cube_root(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let pt = part_type(b, re);
    let (larger, root) = larger_and_root(b, re, im);
    let (cbrt_larger, cbrt_root) = (b.unary(math::CBRT, larger), b.unary(math::CBRT, root));
    let size = mul(b, cbrt_larger, cbrt_root);
    let zero = b_zero(b, pt);
    let at_zero = cmpf(b, "oeq", larger, zero);
    let size = b.select(at_zero, zero, size);
    let argument = b.binary(math::ATAN2, im, re);
    let three = float(b, pt, 3.0);
    let angle = b.binary(arith::DIVF, argument, three);
    let (cos, sin) = (b.unary(math::COS, angle), b.unary(math::SIN, angle));
    (mul(b, size, cos), mul(b, size, sin))
}

/// `sin re · cosh im`, `cos re · sinh im`, `cos re · cosh im` and `sin re · sinh im`. Past
/// |im| = 80, cosh and sinh are ±e^|im| / 2 to f32's precision and overflow it at 89.4
/// where the products may not: there e^(|im|/2) is multiplied in twice, after the halving.
fn trig_times_hyperbolic(b: &mut Builder<'_>, (re, im): Parts) -> [Value; 4] {
    let pt = part_type(b, re);
    let (sin, cos) = (b.unary(math::SIN, re), b.unary(math::COS, re));
    let (cosh, sinh) = (b.unary(math::COSH, im), b.unary(math::SINH, im));
    let abs_im = b.unary(math::ABSF, im);
    let half = float(b, pt, 0.5);
    let half_abs = mul(b, abs_im, half);
    let root = b.unary(math::EXP, half_abs);
    let signed_half = b.binary(math::COPYSIGN, half, im);
    let limit = float(b, pt, limits(pt).hyperbolic);
    let far = cmpf(b, "ogt", abs_im, limit);
    // `root` first: a tiny `trig` (sin of a subnormal) halved first would round to 0, and
    // 0 · ∞ is NaN where `root` overflows.
    let mut product = |trig: Value, hyperbolic: Value, halving: Value| {
        let near = mul(b, trig, hyperbolic);
        let once = mul(b, trig, root);
        let halved = mul(b, once, halving);
        let twice = mul(b, halved, root);
        b.select(far, twice, near)
    };
    [
        product(sin, cosh, half),
        product(cos, sinh, signed_half),
        product(cos, cosh, half),
        product(sin, sinh, signed_half),
    ]
}

/// `sin z = sin re cosh im + i cos re sinh im`; a zero real part stays zero (`0 · cosh ∞`
/// is NaN).
pub(super) fn sin(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let pt = part_type(b, re);
    let [sin_cosh, cos_sinh, _, _] = trig_times_hyperbolic(b, (re, im));
    let zero = b_zero(b, pt);
    let on_axis = cmpf(b, "oeq", re, zero);
    (b.select(on_axis, re, sin_cosh), cos_sinh)
}

/// `cos z = cos re cosh im - i sin re sinh im`; a zero real part gives a zero imaginary one.
pub(super) fn cos(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let pt = part_type(b, re);
    let [_, _, cos_cosh, sin_sinh] = trig_times_hyperbolic(b, (re, im));
    let negated = b.unary(arith::NEGF, sin_sinh);
    let zero = b_zero(b, pt);
    let on_axis = cmpf(b, "oeq", re, zero);
    let neg_re = b.unary(arith::NEGF, re);
    (cos_cosh, b.select(on_axis, neg_re, negated))
}

/// Kahan's `tanh z`: with `t = tan im`, `β = 1 + t²`, `s = sinh re`, `ρ = sqrt(1 + s²)`,
/// `(β ρ s + i t) / (1 + β s²)`, where nothing overflows for |re| <= 9 (|t| is at most
/// 2.3e7 at f32's nearest value to π/2); past it, `±1 + i 4 sin im cos im e^(-2|re|)` (tanh 9
/// is 1 in f32).
pub(super) fn tanh(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let pt = part_type(b, re);
    let t = b.unary(math::TAN, im);
    let s = b.unary(math::SINH, re);
    let one = float(b, pt, 1.0);
    let t_squared = mul(b, t, t);
    let beta = add(b, one, t_squared);
    let s_squared = mul(b, s, s);
    let rho_squared = add(b, one, s_squared);
    let rho = b.unary(math::SQRT, rho_squared);
    let beta_s_squared = mul(b, beta, s_squared);
    let denominator = add(b, one, beta_s_squared);
    let beta_rho = mul(b, beta, rho);
    let numerator = mul(b, beta_rho, s);
    let near_re = b.binary(arith::DIVF, numerator, denominator);
    let near_im = b.binary(arith::DIVF, t, denominator);
    let abs_re = b.unary(math::ABSF, re);
    let far_re = b.binary(math::COPYSIGN, one, re);
    let far_im = {
        let (sin, cos) = (b.unary(math::SIN, im), b.unary(math::COS, im));
        let four = float(b, pt, 4.0);
        let product = mul(b, sin, cos);
        let product = mul(b, product, four);
        let minus_two = float(b, pt, -2.0);
        let exponent = mul(b, abs_re, minus_two);
        let decay = b.unary(math::EXP, exponent);
        mul(b, product, decay)
    };
    let limit = float(b, pt, limits(pt).tanh_one);
    let far = cmpf(b, "ogt", abs_re, limit);
    (
        b.select(far, far_re, near_re),
        b.select(far, far_im, near_im),
    )
}

/// `tan z = -i tanh(i z)`.
pub(super) fn tan(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let neg_im = b.unary(arith::NEGF, im);
    let (x, y) = tanh(b, (neg_im, re));
    (y, b.unary(arith::NEGF, x))
}

/// `z / |z|` as `(z / m) / sqrt(1 + (n/m)^2)`, so that |z| never overflows; zero at zero.
pub(super) fn sign(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let pt = part_type(b, re);
    let (larger, root) = larger_and_root(b, re, im);
    let mut unit = |part: Value| {
        let scaled = b.binary(arith::DIVF, part, larger);
        b.binary(arith::DIVF, scaled, root)
    };
    let (unit_re, unit_im) = (unit(re), unit(im));
    let zero = b_zero(b, pt);
    let at_zero = cmpf(b, "oeq", larger, zero);
    (
        b.select(at_zero, re, unit_re),
        b.select(at_zero, im, unit_im),
    )
}

/// `z^w = e^(w log z)`; `0^w` is 1 for `w = 0`, 0 where `re w > 0`, NaN otherwise (the
/// evaluator's rule: `w log 0` is an infinity times a zero).
pub(super) fn power(b: &mut Builder<'_>, z: Parts, w: Parts) -> Parts {
    let pt = part_type(b, z.0);
    let log_z = log(b, z);
    let product = multiply(b, w, log_z);
    let (re, im) = exp(b, product);
    let zero = b_zero(b, pt);
    let is_zero = |b: &mut Builder<'_>, (x, y): Parts| {
        let (x0, y0) = (cmpf(b, "oeq", x, zero), cmpf(b, "oeq", y, zero));
        b.binary(arith::ANDI, x0, y0)
    };
    let (z_zero, w_zero) = (is_zero(b, z), is_zero(b, w));
    let w_right = cmpf(b, "ogt", w.0, zero);
    let (one, nan) = (float(b, pt, 1.0), float(b, pt, f64::NAN));
    let vanishing = b.select(w_right, zero, nan);
    let zero_re = b.select(w_zero, one, vanishing);
    let zero_im = b.select(w_zero, zero, vanishing);
    (b.select(z_zero, zero_re, re), b.select(z_zero, zero_im, im))
}

/// The principal square root: `t = sqrt(|z|/2 + |re|/2)`, then `(t, im / 2t)` for
/// `re >= 0` and `(|im| / 2t, ±t)` with `im`'s sign otherwise; `(0, im)` at zero, where `t`
/// is 0. Past 2^126 the parts are scaled by 1/4 first and `t` by 2 after, so |z| stays in
/// f32's range (3e38 + 3e38i); below 2^-100 by 2^100 and 2^-50 (see the code).
pub(super) fn square_root(b: &mut Builder<'_>, (re, im): Parts) -> Parts {
    let pt = part_type(b, re);
    let larger = {
        let (a, c) = (b.unary(math::ABSF, re), b.unary(math::ABSF, im));
        b.binary(arith::MAXIMUMF, a, c)
    };
    let huge = {
        let limit = b.float(limits(pt).huge, pt);
        cmpf(b, "ogt", larger, limit)
    };
    // Below 2^-100 (subnormals have a few bits only, and `(|z| + |re|) / 2` of one rounds to
    // 0) the parts are scaled by 2^100, exactly, and `t` by 2^-50 after.
    let tiny = {
        let limit = b.float(limits(pt).tiny, pt);
        cmpf(b, "olt", larger, limit)
    };
    let (quarter, one, two) = (b.float(0.25, pt), b.float(1.0, pt), b.float(2.0, pt));
    let (up, down) = (float(b, pt, limits(pt).up), float(b, pt, limits(pt).down));
    let scale = b.select(huge, quarter, one);
    let scale = b.select(tiny, up, scale);
    let unscale = b.select(huge, two, one);
    let unscale = b.select(tiny, down, unscale);
    let (re_s, im_s) = (mul(b, re, scale), mul(b, im, scale));
    let size = magnitude(b, re_s, im_s);
    let abs_re = b.unary(math::ABSF, re_s);
    let sum = add(b, size, abs_re);
    let half = b.float(0.5, pt);
    let halved = mul(b, sum, half);
    let root = b.unary(math::SQRT, halved);
    let t = mul(b, root, unscale);
    let two_t = add(b, t, t);
    let other = {
        let abs_im = b.unary(math::ABSF, im);
        b.binary(arith::DIVF, abs_im, two_t)
    };
    let im_over = b.binary(arith::DIVF, im, two_t);
    let signed_t = b.binary(math::COPYSIGN, t, im);
    let zero = b_zero(b, pt);
    let right = cmpf(b, "oge", re, zero);
    let out_re = b.select(right, t, other);
    let out_im = b.select(right, im_over, signed_t);
    let at_zero = cmpf(b, "oeq", larger, zero);
    (
        b.select(at_zero, zero, out_re),
        b.select(at_zero, im, out_im),
    )
}

/// `m` and `(n/m)^2` for `m`, `n` the larger and smaller of `|re|`, `|im|`: what `|z|` and
/// `log|z|` are computed from without squaring a part (NaN ratio when both are 0; the
/// callers select their zero case on `m`).
fn larger_and_squared_ratio(b: &mut Builder<'_>, re: Value, im: Value) -> (Value, Value) {
    let pt = part_type(b, re);
    let (a, c) = (b.unary(math::ABSF, re), b.unary(math::ABSF, im));
    let larger = b.binary(arith::MAXIMUMF, a, c);
    let smaller = b.binary(arith::MINIMUMF, a, c);
    let ratio = b.binary(arith::DIVF, smaller, larger);
    // An infinite part makes |z| infinite whatever the other, NaN included (IEEE's hypot;
    // ∞/∞ and the NaN would make it NaN).
    let infinity = float(b, pt, f64::INFINITY);
    let infinite = {
        let (x, y) = (cmpf(b, "oeq", a, infinity), cmpf(b, "oeq", c, infinity));
        b.binary(arith::ORI, x, y)
    };
    let zero = b_zero(b, pt);
    let ratio = b.select(infinite, zero, ratio);
    let larger = b.select(infinite, infinity, larger);
    (larger, mul(b, ratio, ratio))
}

/// `|re + i im|` without overflow or underflow in the squares, as `complex-to-standard`'s
/// `complex.abs`: `m * sqrt(1 + (n/m)^2)` for `m`, `n` the larger and smaller magnitude;
/// 0 when both are 0.
pub(super) fn magnitude(b: &mut Builder<'_>, re: Value, im: Value) -> Value {
    let pt = part_type(b, re);
    let (larger, root) = larger_and_root(b, re, im);
    let scaled = mul(b, larger, root);
    let zero = b_zero(b, pt);
    let both_zero = cmpf(b, "oeq", larger, zero);
    b.select(both_zero, zero, scaled)
}

/// `m` and `sqrt(1 + (n/m)^2)` (which is `|z| / m`): what `|z|`, `z / |z|` and `|z|^(1/3)`
/// are computed from without forming `|z|` where it would overflow.
fn larger_and_root(b: &mut Builder<'_>, re: Value, im: Value) -> (Value, Value) {
    let pt = part_type(b, re);
    let (larger, square) = larger_and_squared_ratio(b, re, im);
    let one = float(b, pt, 1.0);
    let sum = add(b, one, square);
    (larger, b.unary(math::SQRT, sum))
}
