//! `c64` in the IR: each value is its 64-bit pattern (an `i64`: the real part's f32 bits
//! low, the imaginary part's high, as in memory), so loads, stores, selects and data
//! movement need nothing new. Each op takes its operands apart into f32s, computes as
//! MLIR's `complex-to-standard` lowering does (what XLA's emitters run; the evaluator's
//! `hlo::evaluate::C64` has the same formulas, or the exact value for `abs`, `exp`, `log`
//! and `sqrt`) and puts the result together again. The functions are scaled where a
//! result that fits in f32 would otherwise pass through an overflow (`|z|` in `abs`,
//! `log` and `sqrt`, `e^re` in `exp`).

use super::arith::{cmpf, convert};
use super::*;

impl ElementalEmitter<'_, '_> {
    /// An elementwise op with a `c64` operand or result, or `real`/`imag`/`complex` (`from`:
    /// the first operand's element type, `to`: the result's).
    pub(super) fn complex_op(
        &mut self,
        instr: &Instruction,
        args: &[Value],
        (from, to): (PrimitiveType, PrimitiveType),
        ty: Type,
    ) -> R<Value> {
        use Opcode::*;
        use PrimitiveType::C64;
        let b = &mut self.b;
        let x = args[0];
        let refused = || {
            let what = format!("{} on {} in '{}'", instr.opcode, from.name(), instr.name);
            Err(unsupported(instr.spans.whole, what))
        };
        Ok(match instr.opcode {
            Complex if from == PrimitiveType::F32 => assemble(b, x, args[1]),
            Real if from == C64 => parts(b, x).0,
            Imag if from == C64 => parts(b, x).1,
            // Of a real number: itself, and zero.
            Real => x,
            Imag => {
                let zero = b_zero(b);
                convert(b, zero, PrimitiveType::F32, to, ty)
            }
            Convert if from == to => x,
            Convert if from == C64 => {
                let re = parts(b, x).0;
                convert(b, re, PrimitiveType::F32, to, ty)
            }
            Convert => {
                let re = convert(b, x, from, PrimitiveType::F32, Type::F32);
                let zero = b_zero(b);
                assemble(b, re, zero)
            }
            Select => b.select(x, args[1], args[2]),
            Negate => {
                let (re, im) = parts(b, x);
                let (re, im) = (b.unary("arith.negf", re), b.unary("arith.negf", im));
                assemble(b, re, im)
            }
            Abs => {
                let (re, im) = parts(b, x);
                magnitude(b, re, im)
            }
            Exp => {
                // e^re as e^(re/2) twice, multiplied in after cos and sin: the result is
                // finite wherever it fits in f32, also where e^re alone does not (re past
                // 88.7, e^89 cos 1 = 2.4e38). On the real axis the imaginary part stays the
                // input's zero (C99's `cexp(x + i0) = e^x + i0`), not `inf * 0 = NaN`.
                let (re, im) = parts(b, x);
                let one_half = b.float(0.5, Type::F32);
                let half_re = mul(b, re, one_half);
                let half = b.unary("math.exp", half_re);
                let (cos, sin) = (b.unary("math.cos", im), b.unary("math.sin", im));
                let (out_re, out_im) = (mul(b, half, cos), mul(b, half, sin));
                let (out_re, out_im) = (mul(b, out_re, half), mul(b, out_im, half));
                let zero = b_zero(b);
                let real_axis = cmpf(b, "oeq", im, zero);
                let out_im = b.select(real_axis, im, out_im);
                assemble(b, out_re, out_im)
            }
            Log => {
                // log|z| + i arg z. log|z| = log m + log1p((n/m)^2) / 2 for m, n the larger
                // and smaller part magnitude: finite where |z| itself overflows f32 (3e38 +
                // 3e38i); -inf at zero. The argument by atan2 (±π on the negative real
                // axis, by the zero's sign).
                let (re, im) = parts(b, x);
                let (larger, square) = larger_and_squared_ratio(b, re, im);
                let log1p = b.unary("math.log1p", square);
                let half = b.float(0.5, Type::F32);
                let correction = mul(b, log1p, half);
                let log_larger = b.unary("math.log", larger);
                let sum = add(b, log_larger, correction);
                let zero = b_zero(b);
                let at_zero = cmpf(b, "oeq", larger, zero);
                let out_re = b.select(at_zero, log_larger, sum);
                let out_im = b.binary("math.atan2", im, re);
                assemble(b, out_re, out_im)
            }
            Sqrt => {
                let (re, im) = parts(b, x);
                let (out_re, out_im) = square_root(b, re, im);
                assemble(b, out_re, out_im)
            }
            Add | Subtract | Multiply | Divide => {
                let (p, q) = (parts(b, x), parts(b, args[1]));
                let (re, im) = match instr.opcode {
                    Add => (add(b, p.0, q.0), add(b, p.1, q.1)),
                    Subtract => (
                        b.binary("arith.subf", p.0, q.0),
                        b.binary("arith.subf", p.1, q.1),
                    ),
                    Multiply => multiply(b, p, q),
                    _ => divide(b, p, q),
                };
                assemble(b, re, im)
            }
            Compare => {
                let direction = instr.enum_value("direction").unwrap_or("");
                if direction != "EQ" && direction != "NE" {
                    return refused();
                }
                let (p, q) = (parts(b, x), parts(b, args[1]));
                let re = cmpf(b, "oeq", p.0, q.0);
                let im = cmpf(b, "oeq", p.1, q.1);
                let equal = b.binary("arith.andi", re, im);
                if direction == "EQ" {
                    equal
                } else {
                    let yes = b.int(1, Type::I1);
                    b.binary("arith.xori", equal, yes)
                }
            }
            _ => return refused(),
        })
    }
}

fn b_zero(b: &mut Builder<'_>) -> Value {
    b.float(0.0, Type::F32)
}

fn add(b: &mut Builder<'_>, x: Value, y: Value) -> Value {
    b.binary("arith.addf", x, y)
}

fn mul(b: &mut Builder<'_>, x: Value, y: Value) -> Value {
    b.binary("arith.mulf", x, y)
}

/// The real and imaginary parts of a `c64` pattern.
fn parts(b: &mut Builder<'_>, z: Value) -> (Value, Value) {
    let low = b.cast("arith.trunci", z, Type::I32);
    let thirty_two = b.int(32, Type::I64);
    let high = b.binary("arith.shrui", z, thirty_two);
    let high = b.cast("arith.trunci", high, Type::I32);
    (
        b.cast("arith.bitcast", low, Type::F32),
        b.cast("arith.bitcast", high, Type::F32),
    )
}

/// The `c64` pattern of two f32 parts.
fn assemble(b: &mut Builder<'_>, re: Value, im: Value) -> Value {
    let re = b.cast("arith.bitcast", re, Type::I32);
    let im = b.cast("arith.bitcast", im, Type::I32);
    let low = b.cast("arith.extui", re, Type::I64);
    let high = b.cast("arith.extui", im, Type::I64);
    let thirty_two = b.int(32, Type::I64);
    let high = b.binary("arith.shli", high, thirty_two);
    b.binary("arith.ori", low, high)
}

/// `(a+bi)(c+di) = (ac-bd) + (ad+bc)i`.
fn multiply(
    b: &mut Builder<'_>,
    (a, bi): (Value, Value),
    (c, d): (Value, Value),
) -> (Value, Value) {
    let (ac, bd) = (mul(b, a, c), mul(b, bi, d));
    let (ad, bc) = (mul(b, a, d), mul(b, bi, c));
    (b.binary("arith.subf", ac, bd), add(b, ad, bc))
}

/// Smith's algorithm (see `hlo::evaluate::complex::divide`): both branches computed, the
/// one for the larger part of the divisor selected.
fn divide(b: &mut Builder<'_>, (a, bi): (Value, Value), (c, d): (Value, Value)) -> (Value, Value) {
    let (abs_c, abs_d) = (b.unary("math.absf", c), b.unary("math.absf", d));
    let c_larger = cmpf(b, "oge", abs_c, abs_d);
    // |c| >= |d|: r = d/c, t = c + d*r, ((a + b*r)/t, (b - a*r)/t).
    let r1 = b.binary("arith.divf", d, c);
    let dr = mul(b, d, r1);
    let t1 = add(b, c, dr);
    let br = mul(b, bi, r1);
    let n_re1 = add(b, a, br);
    let ar = mul(b, a, r1);
    let n_im1 = b.binary("arith.subf", bi, ar);
    let re1 = b.binary("arith.divf", n_re1, t1);
    let im1 = b.binary("arith.divf", n_im1, t1);
    // Otherwise: r = c/d, t = c*r + d, ((a*r + b)/t, (b*r - a)/t).
    let r2 = b.binary("arith.divf", c, d);
    let cr = mul(b, c, r2);
    let t2 = add(b, cr, d);
    let ar2 = mul(b, a, r2);
    let n_re2 = add(b, ar2, bi);
    let br2 = mul(b, bi, r2);
    let n_im2 = b.binary("arith.subf", br2, a);
    let re2 = b.binary("arith.divf", n_re2, t2);
    let im2 = b.binary("arith.divf", n_im2, t2);
    (b.select(c_larger, re1, re2), b.select(c_larger, im1, im2))
}

/// The principal square root: `t = sqrt(|z|/2 + |re|/2)`, then `(t, im / 2t)` for
/// `re >= 0` and `(|im| / 2t, ±t)` with `im`'s sign otherwise; `(0, im)` at zero, where `t`
/// is 0. Past 2^126 the parts are scaled by 1/4 first and `t` by 2 after, so |z| stays in
/// f32's range (3e38 + 3e38i); below it nothing is scaled (no subnormal loses bits).
fn square_root(b: &mut Builder<'_>, re: Value, im: Value) -> (Value, Value) {
    let larger = {
        let (a, c) = (b.unary("math.absf", re), b.unary("math.absf", im));
        b.binary("arith.maximumf", a, c)
    };
    let huge = {
        let limit = b.float(2f64.powi(126), Type::F32);
        cmpf(b, "ogt", larger, limit)
    };
    let (quarter, one, two) = (
        b.float(0.25, Type::F32),
        b.float(1.0, Type::F32),
        b.float(2.0, Type::F32),
    );
    let scale = b.select(huge, quarter, one);
    let unscale = b.select(huge, two, one);
    let (re_s, im_s) = (mul(b, re, scale), mul(b, im, scale));
    let size = magnitude(b, re_s, im_s);
    let abs_re = b.unary("math.absf", re_s);
    let sum = add(b, size, abs_re);
    let half = b.float(0.5, Type::F32);
    let halved = mul(b, sum, half);
    let root = b.unary("math.sqrt", halved);
    let t = mul(b, root, unscale);
    let two_t = add(b, t, t);
    let other = {
        let abs_im = b.unary("math.absf", im);
        b.binary("arith.divf", abs_im, two_t)
    };
    let im_over = b.binary("arith.divf", im, two_t);
    let signed_t = b.binary("math.copysign", t, im);
    let zero = b_zero(b);
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
    let (a, c) = (b.unary("math.absf", re), b.unary("math.absf", im));
    let larger = b.binary("arith.maximumf", a, c);
    let smaller = b.binary("arith.minimumf", a, c);
    let ratio = b.binary("arith.divf", smaller, larger);
    (larger, mul(b, ratio, ratio))
}

/// `|re + i im|` without overflow or underflow in the squares, as `complex-to-standard`'s
/// `complex.abs`: `m * sqrt(1 + (n/m)^2)` for `m`, `n` the larger and smaller magnitude;
/// 0 when both are 0.
fn magnitude(b: &mut Builder<'_>, re: Value, im: Value) -> Value {
    let (larger, square) = larger_and_squared_ratio(b, re, im);
    let one = b.float(1.0, Type::F32);
    let sum = add(b, one, square);
    let root = b.unary("math.sqrt", sum);
    let scaled = mul(b, larger, root);
    let zero = b_zero(b);
    let both_zero = cmpf(b, "oeq", larger, zero);
    b.select(both_zero, zero, scaled)
}
