//! The hot scalar ops as plain functions, chosen once when a program is compiled.
//!
//! [`Op1::eval`], [`Op2::eval`] and [`Fma::eval`] match on the op, the element type and
//! the fast-math flags for every element they compute. Most of what a kernel executes is a
//! few float ops without fast-math flags (`+ - * /`, min/max, `fma`, the `bf16`/`f16` ⇄
//! `f32` casts); for those the compiler picks a function specialized for the op and the
//! type, so evaluating one is an indirect call of a few instructions (GELU's `--check`
//! spent a fifth of its time in the matching). Everything else keeps the general path.
//! Both paths are one implementation: [`float_binary`] itself goes through the table.

use crate::ops::{Cast, FastMath, Fault, FloatOp, Fma, Op1, Op2};
use crate::scalar::{from_f32, from_f64, to_f32, to_f64};
use ir::FloatKind;

type R = Result<u64, Fault>;

/// An op of one operand as the compiled program evaluates it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Eval1 {
    Plain(fn(u64) -> u64),
    General(Op1),
}

/// An op of two operands as the compiled program evaluates it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Eval2 {
    Plain(fn(u64, u64) -> u64),
    General(Op2),
}

/// A fused multiply-add as the compiled program evaluates it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Eval3 {
    Plain(fn(u64, u64, u64) -> u64),
    General(Fma),
}

impl Eval1 {
    #[inline(always)]
    pub(crate) fn eval(self, a: u64) -> R {
        match self {
            Eval1::Plain(f) => Ok(f(a)),
            Eval1::General(op) => op.eval(a),
        }
    }
}

impl Eval2 {
    #[inline(always)]
    pub(crate) fn eval(self, a: u64, b: u64) -> R {
        match self {
            Eval2::Plain(f) => Ok(f(a, b)),
            Eval2::General(op) => op.eval(a, b),
        }
    }
}

impl Eval3 {
    #[inline(always)]
    pub(crate) fn eval(self, a: u64, b: u64, c: u64) -> R {
        match self {
            Eval3::Plain(f) => Ok(f(a, b, c)),
            Eval3::General(op) => op.eval(a, b, c),
        }
    }
}

impl From<Op1> for Eval1 {
    fn from(op: Op1) -> Eval1 {
        match op {
            Op1::Cast(Cast::ExtF(from, to) | Cast::TruncF(from, to)) => {
                Eval1::Plain(float_cast(from, to))
            }
            op => Eval1::General(op),
        }
    }
}

impl From<Op2> for Eval2 {
    fn from(op: Op2) -> Eval2 {
        match op {
            Op2::Float(
                f,
                kind,
                FastMath {
                    nnan: false,
                    ninf: false,
                },
            ) => Eval2::Plain(float_fn(f, kind)),
            op => Eval2::General(op),
        }
    }
}

impl From<Fma> for Eval3 {
    fn from(op: Fma) -> Eval3 {
        match op {
            Fma(
                kind,
                FastMath {
                    nnan: false,
                    ninf: false,
                },
            ) => Eval3::Plain(fma_fn(kind)),
            op => Eval3::General(op),
        }
    }
}

/// Applies a float formula written once for `f32` and `f64` (`$x`, `$y` bound to the
/// decoded operands): `f16`/`bf16` go through `f32` and round.
macro_rules! float2 {
    ($kind:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {
        match $kind {
            FloatKind::F64 => {
                let ($x, $y) = (f64::from_bits($a), f64::from_bits($b));
                ($body).to_bits()
            }
            k => {
                let ($x, $y) = (to_f32(k, $a), to_f32(k, $b));
                from_f32(k, $body)
            }
        }
    };
}
pub(crate) use float2;

/// `float2!` specialized for `$kind` as a function pointer: the kind is a constant in
/// each arm, so the decoding and rounding fold into straight-line code.
macro_rules! per_kind {
    ($kind:expr, |$x:ident, $y:ident| $body:expr) => {
        match $kind {
            FloatKind::F64 => {
                (|a, b| float2!(FloatKind::F64, a, b, |$x, $y| $body)) as fn(u64, u64) -> u64
            }
            FloatKind::F32 => |a, b| float2!(FloatKind::F32, a, b, |$x, $y| $body),
            FloatKind::F16 => |a, b| float2!(FloatKind::F16, a, b, |$x, $y| $body),
            FloatKind::BF16 => |a, b| float2!(FloatKind::BF16, a, b, |$x, $y| $body),
        }
    };
}

/// The function computing `op` on `kind` (without fast-math flags).
pub(crate) fn float_fn(op: FloatOp, kind: FloatKind) -> fn(u64, u64) -> u64 {
    match op {
        FloatOp::Add => per_kind!(kind, |x, y| x + y),
        FloatOp::Sub => per_kind!(kind, |x, y| x - y),
        FloatOp::Mul => per_kind!(kind, |x, y| x * y),
        FloatOp::Div => per_kind!(kind, |x, y| x / y),
        FloatOp::Rem => per_kind!(kind, |x, y| x % y),
        // NaN-propagating, -0 below +0 (the HLO evaluator's `maximum`/`minimum`).
        FloatOp::Maximum => per_kind!(kind, |x, y| if x.is_nan() || y.is_nan() {
            x + y
        } else if x == y {
            if x.is_sign_negative() { y } else { x }
        } else if x > y {
            x
        } else {
            y
        }),
        FloatOp::Minimum => per_kind!(kind, |x, y| if x.is_nan() || y.is_nan() {
            x + y
        } else if x == y {
            if x.is_sign_negative() { x } else { y }
        } else if x < y {
            x
        } else {
            y
        }),
        // IEEE maxNum/minNum: a NaN operand is ignored; zeros ordered as above.
        FloatOp::MaxNum => per_kind!(kind, |x, y| if x.is_nan() {
            y
        } else if y.is_nan() || (x == y && y.is_sign_negative()) || x > y {
            x
        } else {
            y
        }),
        FloatOp::MinNum => per_kind!(kind, |x, y| if x.is_nan() {
            y
        } else if y.is_nan() || (x == y && x.is_sign_negative()) || x < y {
            x
        } else {
            y
        }),
    }
}

/// `op` on `kind` (without fast-math flags).
pub(crate) fn float_binary(op: FloatOp, kind: FloatKind, a: u64, b: u64) -> u64 {
    float_fn(op, kind)(a, b)
}

/// The correctly rounded fused multiply-add on `kind`.
#[inline(always)]
pub(crate) fn fma(kind: FloatKind, a: u64, b: u64, c: u64) -> u64 {
    match kind {
        FloatKind::F64 => f64::from_bits(a)
            .mul_add(f64::from_bits(b), f64::from_bits(c))
            .to_bits(),
        FloatKind::F32 => u64::from(
            f32::from_bits(a as u32)
                .mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32))
                .to_bits(),
        ),
        // f64 holds more than twice the precision plus two bits: rounding the f64 fma
        // again is the correctly rounded result.
        k => from_f64(k, to_f64(k, a).mul_add(to_f64(k, b), to_f64(k, c))),
    }
}

fn fma_fn(kind: FloatKind) -> fn(u64, u64, u64) -> u64 {
    match kind {
        FloatKind::F64 => |a, b, c| fma(FloatKind::F64, a, b, c),
        FloatKind::F32 => |a, b, c| fma(FloatKind::F32, a, b, c),
        FloatKind::F16 => |a, b, c| fma(FloatKind::F16, a, b, c),
        FloatKind::BF16 => |a, b, c| fma(FloatKind::BF16, a, b, c),
    }
}

/// A float extension or truncation from `from` to `to` (rounding once, ties to even).
#[inline(always)]
pub(crate) fn convert(from: FloatKind, to: FloatKind, a: u64) -> u64 {
    from_f64(to, to_f64(from, a))
}

fn float_cast(from: FloatKind, to: FloatKind) -> fn(u64) -> u64 {
    macro_rules! to_each {
        ($from:expr) => {
            match to {
                FloatKind::F64 => (|a| convert($from, FloatKind::F64, a)) as fn(u64) -> u64,
                FloatKind::F32 => |a| convert($from, FloatKind::F32, a),
                FloatKind::F16 => |a| convert($from, FloatKind::F16, a),
                FloatKind::BF16 => |a| convert($from, FloatKind::BF16, a),
            }
        };
    }
    match from {
        FloatKind::F64 => to_each!(FloatKind::F64),
        FloatKind::F32 => to_each!(FloatKind::F32),
        FloatKind::F16 => to_each!(FloatKind::F16),
        FloatKind::BF16 => to_each!(FloatKind::BF16),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [FloatKind; 4] = [
        FloatKind::F64,
        FloatKind::F32,
        FloatKind::F16,
        FloatKind::BF16,
    ];

    /// Bits equal, or both NaN.
    fn same(kind: FloatKind, a: u64, b: u64) -> bool {
        a == b || (to_f64(kind, a).is_nan() && to_f64(kind, b).is_nan())
    }

    /// Each specialized function computes its own op on its own type: `+ - * /` against
    /// the same op in `f64` rounded once to the type (exact for these ops: `f64` has more
    /// than twice the precision of `f32` plus two bits), casts against `f64`.
    #[test]
    fn plain_functions_compute_their_op_on_their_type() {
        let samples = [
            0.0,
            -0.0,
            1.5,
            -2.25,
            0.1,
            1e-30,
            3.4e38,
            f64::INFINITY,
            f64::NAN,
        ];
        type Reference = fn(f64, f64) -> f64;
        let ops: [(FloatOp, Reference); 4] = [
            (FloatOp::Add, |x, y| x + y),
            (FloatOp::Sub, |x, y| x - y),
            (FloatOp::Mul, |x, y| x * y),
            (FloatOp::Div, |x, y| x / y),
        ];
        for kind in KINDS {
            for &x in &samples {
                let a = from_f64(kind, x);
                let Eval1::Plain(widen) = Eval1::from(Op1::Cast(Cast::ExtF(kind, FloatKind::F64)))
                else {
                    panic!("float casts are plain");
                };
                assert!(same(FloatKind::F64, widen(a), to_f64(kind, a).to_bits()));
                for &y in &samples {
                    let b = from_f64(kind, y);
                    for (op, reference) in ops {
                        let Eval2::Plain(f) =
                            Eval2::from(Op2::Float(op, kind, FastMath::default()))
                        else {
                            panic!("float ops without fast-math flags are plain");
                        };
                        let expected = from_f64(kind, reference(to_f64(kind, a), to_f64(kind, b)));
                        assert!(same(kind, f(a, b), expected), "{op:?} {kind:?} {x} {y}");
                    }
                }
            }
        }
    }

    #[test]
    fn fast_math_keeps_the_general_path() {
        let fm = FastMath {
            nnan: true,
            ninf: false,
        };
        let nan = from_f64(FloatKind::F32, f64::NAN);
        let op = Eval2::from(Op2::Float(FloatOp::Add, FloatKind::F32, fm));
        assert_eq!(op.eval(nan, 0), Err(Fault::Poison));
        let op = Eval3::from(Fma(FloatKind::F32, fm));
        assert_eq!(op.eval(nan, 0, 0), Err(Fault::Poison));
    }
}
