//! What the second source says an element of an elementwise op or a `convert` is.
//!
//! Float functions are musl's algorithms (the `libm` crate) evaluated in f64 on the exact
//! operand values, then rounded to the result type: once for f32 and f64, through f32 for
//! the types that compute in f32 (f16, bf16, the narrow floats), by the oracle's own
//! rounding ([`super::formats`]). The evaluator uses the host's libm (glibc), the `half`
//! crate and `hlo::narrow_float`: a mistake in any of them, or in the evaluator's mapping
//! of an op to a function, shows as a disagreement here.
//!
//! Bounds, in units in the last place of the result type: 0 for the ops IEEE rounds
//! correctly (arithmetic, sqrt, remainder, rounding, min/max, sign, convert: from f32
//! operands f64 has room for both roundings to agree); 2 for the other functions in f32 and
//! f64 (two libms each within an ulp of the truth), 4 for `logistic` and `rsqrt` there
//! (XLA defines them as `1 / (1 + exp(-x))` and `1 / sqrt(x)`, rounded at each step), 32
//! for `erf` in f64 (the evaluator's series is good to about 1e-14), and 1
//! for every function in the types computed through f32 (an f32 result within two f32 ulps
//! rounds to a neighbour at most). Below the smallest normal value relative accuracy ends:
//! two results there agree.

use super::formats::{Format, Num};
use hlo::opcode::Opcode;

/// The second source's result for one element and how far the evaluator's may be from it.
pub(super) struct Expectation {
    pub code: u128,
    pub ulps: u32,
}

/// A float function and its bound in ulps in f32/f64 (through f32 the bound is 1 for every
/// function that is not exact).
type Modeled<F> = Option<(F, u32)>;

/// A float function of one argument.
fn unary(op: Opcode) -> Modeled<fn(f64) -> f64> {
    use Opcode::*;
    Some(match op {
        Abs => (libm::fabs, 0),
        Negate => (|x| -x, 0),
        Sign => (
            |x| {
                if x == 0.0 || x.is_nan() {
                    x
                } else {
                    libm::copysign(1.0, x)
                }
            },
            0,
        ),
        Floor => (libm::floor, 0),
        Ceil => (libm::ceil, 0),
        RoundNearestAfz => (libm::round, 0),
        RoundNearestEven => (libm::rint, 0),
        Sqrt => (libm::sqrt, 0),
        Rsqrt => (|x| 1.0 / libm::sqrt(x), 4),
        Cbrt => (libm::cbrt, 2),
        Exp => (libm::exp, 2),
        Expm1 => (libm::expm1, 2),
        Log => (libm::log, 2),
        Log1p => (libm::log1p, 2),
        Tanh => (libm::tanh, 2),
        Sin => (libm::sin, 2),
        Cos => (libm::cos, 2),
        Tan => (libm::tan, 2),
        Atan => (libm::atan, 2),
        Acos => (libm::acos, 2),
        Asin => (libm::asin, 2),
        Acosh => (libm::acosh, 2),
        Asinh => (libm::asinh, 2),
        Atanh => (libm::atanh, 2),
        Cosh => (libm::cosh, 2),
        Sinh => (libm::sinh, 2),
        Erf => (libm::erf, 2),
        Logistic => (|x| 1.0 / (1.0 + libm::exp(-x)), 4),
        _ => return None,
    })
}

/// A float function of two arguments.
fn binary(op: Opcode) -> Modeled<fn(f64, f64) -> f64> {
    use Opcode::*;
    Some(match op {
        Add => (|x, y| x + y, 0),
        Subtract => (|x, y| x - y, 0),
        Multiply => (|x, y| x * y, 0),
        Divide => (|x, y| x / y, 0),
        Remainder => (libm::fmod, 0),
        Maximum => (|x, y| extremum(x, y, true), 0),
        Minimum => (|x, y| extremum(x, y, false), 0),
        Power => (libm::pow, 2),
        Atan2 => (libm::atan2, 2),
        _ => return None,
    })
}

/// `maximum`/`minimum` as MLIR's `arith.maximumf`/`minimumf`: a NaN operand gives NaN, and
/// -0 is below +0.
fn extremum(x: f64, y: f64, maximum: bool) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    let x_first = match x.total_cmp(&y) {
        std::cmp::Ordering::Greater => maximum,
        _ => !maximum,
    };
    if x_first { x } else { y }
}

/// Whether the second source has a model of `op` on floats.
pub(super) fn models(op: Opcode) -> bool {
    op == Opcode::Convert || unary(op).is_some() || binary(op).is_some()
}

/// The second source's element of float op `op` (of the result format `to`) on `operands`.
pub(super) fn elementwise(op: Opcode, operands: &[f64], to: Format) -> Option<Expectation> {
    let (exact, bound) = match operands {
        [x] => unary(op).map(|(f, bound)| (f(*x), bound))?,
        [x, y] => binary(op).map(|(f, bound)| (f(*x, *y), bound))?,
        _ => return None,
    };
    // The evaluator's f64 erf is a series with a relative error near 1e-14 (its documented
    // bound, `hlo::evaluate::erf`): at most 19 f64 ulps from musl's on a sweep of
    // [-6.5, 6.5] in steps of 1.2e-4, so 32 here. Its f32 result rounds that once.
    let bound = if op == Opcode::Erf && matches!(to, Format::F64) {
        32
    } else {
        bound
    };
    let through_f32 = matches!(to, Format::Ieee { .. } | Format::Table(_));
    let value = if through_f32 {
        f64::from(exact as f32)
    } else {
        exact
    };
    Some(Expectation {
        code: to.round(value),
        ulps: if through_f32 { bound.min(1) } else { bound },
    })
}

/// XLA's `convert` of `x` to `to`: integers wrap, floats to integers saturate toward zero
/// (NaN → 0), anything to pred is `!= 0`, integers to floats round once (to f16 and bf16
/// through f32, as XLA's evaluator does, and so floats of every width).
pub(super) fn convert(x: Num, to: Format) -> Expectation {
    let code = match (x, to) {
        (x, Format::Pred) => u128::from(match x {
            Num::Int(i) => i != 0,
            Num::Float(f) => f != 0.0,
        }),
        (x, Format::Int { bits, signed }) => {
            let value = match x {
                Num::Int(i) => i,
                Num::Float(f) => saturate(f, bits, signed),
            };
            (value as u128) & ((1u128 << bits) - 1)
        }
        (Num::Int(i), Format::F32 | Format::Ieee { .. }) => to.round(f64::from(i as f32)),
        (Num::Int(i), _) => to.round(i as f64),
        (Num::Float(f), _) => to.round(f),
    };
    Expectation { code, ulps: 0 }
}

/// `f` toward zero, clamped into the integer type (NaN → 0).
fn saturate(f: f64, bits: u32, signed: bool) -> i128 {
    let (min, max) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    if f.is_nan() {
        return 0;
    }
    let t = f.trunc();
    if t <= min as f64 {
        min
    } else if t >= max as f64 {
        max
    } else {
        t as i128
    }
}
