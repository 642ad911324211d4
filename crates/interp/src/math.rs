//! The `math` dialect's float functions, and libdevice's names for them.
//!
//! `f32` functions are Rust's `f32` methods and `f64` functions its `f64` methods — the ones
//! the HLO reference evaluator uses, so both agree bit for bit on every platform's libm.
//! `f16` and `bf16` compute in `f32` and round the result, as XLA does. `rsqrt` is
//! `1 / sqrt(x)`; `erf` is the evaluator's algorithm (an f64 series rounded once); `erfc`,
//! which no HLO op produces, is `1 - erf` where that is accurate and a continued fraction in
//! the tail.
//!
//! ## NVVM approximations
//!
//! The NVVM intrinsics (`compile/llvm_ops.rs`) computed exactly here although the GPU
//! approximates them, and the bound PTX's ISA documents for each (f32; `--check`'s f32
//! tolerance, 1e-5 relative, is about 84 ulp, so each is far inside it):
//!
//! | intrinsic | PTX | documented error |
//! |---|---|---|
//! | `ex2.approx` | `ex2.approx.f32` | 2 ulp (full range) |
//! | `lg2.approx` | `lg2.approx.f32` | 2^-22.6 absolute for x in [0.5, 2], 4 ulp elsewhere |
//! | `rcp.approx` | `rcp.approx.f32` | 1 ulp |
//! | `rsqrt.approx` | `rsqrt.approx.f32` | 2^-22.9 relative |
//! | `sqrt.approx` | `sqrt.approx.f32` | 2^-23 relative |
//! | `sin.approx`, `cos.approx` | `sin/cos.approx.f32` | 2^-20.9 absolute in [-pi, pi] |
//! | `tanh.approx` | `tanh.approx.f32` | 2^-10.987 relative |
//! | `fma.rm`, `fma.rp`, `fma.rz` | directed rounding | 1 ulp (computed rounded to nearest) |
//!
//! `tanh.approx` is the one coarse bound (bf16-level); the pipeline does not emit it today,
//! and a kernel using it for f32 results would need a wider bound than `--check` gives. libdevice's bodies build `expf`, `logf`, `tanhf`... from
//! these; the functions' own bounds (libdevice: `expf` 2 ulp, `logf` 1 ulp, `tanhf` 2 ulp)
//! stay within the same tolerance.

use crate::ops::find_op;
use hlo::evaluate::erf;
use ir::dialects::arith;
use ir::dialects::math;
use std::f64::consts::PI;

/// A float function of one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum MathFn {
    Tanh,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log1p,
    Log2,
    Log10,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Tan,
    Atan,
    Acos,
    Asin,
    Acosh,
    Asinh,
    Atanh,
    Cosh,
    Sinh,
    Erf,
    Erfc,
    Absf,
    Floor,
    Ceil,
    Round,
    RoundEven,
    Trunc,
    Cbrt,
    Negf,
    /// `1 / x` (NVVM's `rcp`).
    Rcp,
    /// `x` clamped to `[0, 1]`, NaN to 0 (NVVM's `saturate`, PTX's `cvt.sat`).
    Saturate,
}

/// A float function of two arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum MathFn2 {
    Atan2,
    Powf,
    Copysign,
}

/// Each function of one float argument: the op that computes it (a `math` op, or
/// `arith.negf`) and its libdevice name (`__nv_<name>f` for f32, `__nv_<name>` for f64, for
/// `llvm.call`s to libdevice declarations; `None`: libdevice has none).
const UNARY_NAMES: &[(MathFn, &str, Option<&str>)] = &[
    (MathFn::Tanh, math::TANH, Some("tanh")),
    (MathFn::Exp, math::EXP, Some("exp")),
    (MathFn::Exp2, math::EXP2, Some("exp2")),
    (MathFn::Expm1, math::EXPM1, Some("expm1")),
    (MathFn::Log, math::LOG, Some("log")),
    (MathFn::Log1p, math::LOG1P, Some("log1p")),
    (MathFn::Log2, math::LOG2, Some("log2")),
    (MathFn::Log10, math::LOG10, Some("log10")),
    (MathFn::Sqrt, math::SQRT, Some("sqrt")),
    (MathFn::Rsqrt, math::RSQRT, Some("rsqrt")),
    (MathFn::Sin, math::SIN, Some("sin")),
    (MathFn::Cos, math::COS, Some("cos")),
    (MathFn::Tan, math::TAN, Some("tan")),
    (MathFn::Atan, math::ATAN, Some("atan")),
    (MathFn::Acos, math::ACOS, Some("acos")),
    (MathFn::Asin, math::ASIN, Some("asin")),
    (MathFn::Acosh, math::ACOSH, Some("acosh")),
    (MathFn::Asinh, math::ASINH, Some("asinh")),
    (MathFn::Atanh, math::ATANH, Some("atanh")),
    (MathFn::Cosh, math::COSH, Some("cosh")),
    (MathFn::Sinh, math::SINH, Some("sinh")),
    (MathFn::Erf, math::ERF, Some("erf")),
    (MathFn::Erfc, math::ERFC, Some("erfc")),
    (MathFn::Absf, math::ABSF, Some("fabs")),
    (MathFn::Floor, math::FLOOR, Some("floor")),
    (MathFn::Ceil, math::CEIL, Some("ceil")),
    (MathFn::Round, math::ROUND, Some("round")),
    (MathFn::RoundEven, math::ROUNDEVEN, Some("rint")),
    (MathFn::Trunc, math::TRUNC, Some("trunc")),
    (MathFn::Cbrt, math::CBRT, Some("cbrt")),
    (MathFn::Negf, arith::NEGF, None),
];

/// Each function of two float arguments: its `math` op and its libdevice name.
const BINARY_NAMES: &[(MathFn2, &str, &str)] = &[
    (MathFn2::Atan2, math::ATAN2, "atan2"),
    (MathFn2::Powf, math::POWF, "pow"),
    (MathFn2::Copysign, math::COPYSIGN, "copysign"),
];

impl MathFn {
    /// The function an op of one float argument computes, by op name.
    pub(crate) fn of_op(name: &str) -> Option<MathFn> {
        find_op(UNARY_NAMES, |&(_, op, _)| op == name)
    }
}

impl MathFn2 {
    /// The function an op of two float arguments computes, by op name.
    pub(crate) fn of_op(name: &str) -> Option<MathFn2> {
        find_op(BINARY_NAMES, |&(_, op, _)| op == name)
    }
}

/// A libdevice function: one or two arguments, and whether it is the f32 version.
#[derive(Debug, PartialEq)]
pub(crate) enum Libdevice {
    Unary(MathFn, bool),
    Binary(MathFn2, bool),
}

/// The function a libdevice name stands for (`__nv_tanhf` → tanh on f32).
pub(crate) fn libdevice(name: &str) -> Option<Libdevice> {
    let base = name.strip_prefix("__nv_")?;
    let lookup = |n: &str, f32_version: bool| {
        find_op(UNARY_NAMES, |&(.., libdevice)| libdevice == Some(n))
            .map(|f| Libdevice::Unary(f, f32_version))
            .or_else(|| {
                find_op(BINARY_NAMES, |&(.., libdevice)| libdevice == n)
                    .map(|f| Libdevice::Binary(f, f32_version))
            })
    };
    lookup(base, false).or_else(|| lookup(base.strip_suffix('f')?, true))
}

/// One formula as an `f32` and an `f64` function.
macro_rules! both {
    ($x:ident => $body:expr) => {
        (|$x: f32| -> f32 { $body }, |$x: f64| -> f64 { $body })
    };
}

type Pair = (fn(f32) -> f32, fn(f64) -> f64);

impl MathFn {
    fn pair(self) -> Pair {
        match self {
            MathFn::Tanh => both!(x => x.tanh()),
            MathFn::Exp => both!(x => x.exp()),
            MathFn::Exp2 => both!(x => x.exp2()),
            MathFn::Expm1 => both!(x => x.exp_m1()),
            MathFn::Log => both!(x => x.ln()),
            MathFn::Log1p => both!(x => x.ln_1p()),
            MathFn::Log2 => both!(x => x.log2()),
            MathFn::Log10 => both!(x => x.log10()),
            MathFn::Sqrt => both!(x => x.sqrt()),
            MathFn::Rsqrt => both!(x => 1.0 / x.sqrt()),
            MathFn::Sin => both!(x => x.sin()),
            MathFn::Cos => both!(x => x.cos()),
            MathFn::Tan => both!(x => x.tan()),
            MathFn::Atan => both!(x => x.atan()),
            MathFn::Acos => both!(x => x.acos()),
            MathFn::Asin => both!(x => x.asin()),
            MathFn::Acosh => both!(x => x.acosh()),
            MathFn::Asinh => both!(x => x.asinh()),
            MathFn::Atanh => both!(x => x.atanh()),
            MathFn::Cosh => both!(x => x.cosh()),
            MathFn::Sinh => both!(x => x.sinh()),
            MathFn::Erf => (|x| erf(f64::from(x)) as f32, erf),
            MathFn::Erfc => (|x| erfc(f64::from(x)) as f32, erfc),
            MathFn::Absf => both!(x => x.abs()),
            MathFn::Floor => both!(x => x.floor()),
            MathFn::Ceil => both!(x => x.ceil()),
            MathFn::Round => both!(x => x.round()),
            MathFn::RoundEven => both!(x => x.round_ties_even()),
            MathFn::Trunc => both!(x => x.trunc()),
            MathFn::Cbrt => both!(x => x.cbrt()),
            MathFn::Negf => both!(x => -x),
            MathFn::Rcp => both!(x => 1.0 / x),
            MathFn::Saturate => both!(x => if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }),
        }
    }

    pub(crate) fn f32(self, x: f32) -> f32 {
        (self.pair().0)(x)
    }

    pub(crate) fn f64(self, x: f64) -> f64 {
        (self.pair().1)(x)
    }
}

impl MathFn2 {
    pub(crate) fn f32(self, x: f32, y: f32) -> f32 {
        match self {
            MathFn2::Atan2 => x.atan2(y),
            MathFn2::Powf => x.powf(y),
            MathFn2::Copysign => x.copysign(y),
        }
    }

    pub(crate) fn f64(self, x: f64, y: f64) -> f64 {
        match self {
            MathFn2::Atan2 => x.atan2(y),
            MathFn2::Powf => x.powf(y),
            MathFn2::Copysign => x.copysign(y),
        }
    }
}

/// Below this, `1 - erf(x)` loses little: `erfc(2) ≈ 4.7e-3`, so the series' absolute
/// error (~1e-16) stays ~1e-14 relative.
const ERFC_SERIES_LIMIT: f64 = 2.0;

/// The complementary error function in f64: `1 - erf(x)` near zero, the continued fraction
/// `erfc(x) = e^(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))` (evaluated by Lentz's
/// method) for `x ≥ 2`, and `2 - erfc(-x)` for negative `x`.
pub(crate) fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < -ERFC_SERIES_LIMIT {
        return 2.0 - erfc(-x);
    }
    if x < ERFC_SERIES_LIMIT {
        return 1.0 - erf(x);
    }
    if x > 27.0 {
        return 0.0; // below the smallest f64 subnormal
    }
    const TINY: f64 = 1e-300;
    let mut f = x;
    let (mut c, mut d) = (x, 0.0);
    for k in 1..500 {
        let a = f64::from(k) / 2.0;
        d = x + a * d;
        d = if d == 0.0 { TINY } else { d };
        c = x + a / c;
        c = if c == 0.0 { TINY } else { c };
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / PI.sqrt() / f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_erfc_agree_with_known_values() {
        // Values from Abramowitz & Stegun / mpmath.
        let cases = [
            (0.5, 0.520_499_877_813_046_5, 0.479_500_122_186_953_5),
            (1.0, 0.842_700_792_949_714_9, 0.157_299_207_050_285_1),
            (2.5, 0.999_593_047_982_555, 4.069_520_174_449_59e-4),
            (4.0, 0.999_999_984_582_742_1, 1.541_725_790_028_002e-8),
        ];
        for (x, e, ec) in cases {
            assert!((erf(x) - e).abs() < 1e-14, "erf({x})");
            assert!(
                ((erfc(x) - ec) / ec).abs() < 1e-12,
                "erfc({x}) = {}",
                erfc(x)
            );
            assert!(((erfc(-x) - (2.0 - ec)) / (2.0 - ec)).abs() < 1e-14);
        }
        assert_eq!(erfc(30.0), 0.0);
        assert!(erf(f64::NAN).is_nan());
    }

    #[test]
    fn libdevice_names() {
        for (name, want) in [
            ("__nv_tanhf", Some(Libdevice::Unary(MathFn::Tanh, true))),
            ("__nv_erff", Some(Libdevice::Unary(MathFn::Erf, true))),
            ("__nv_erf", Some(Libdevice::Unary(MathFn::Erf, false))),
            ("__nv_powf", Some(Libdevice::Binary(MathFn2::Powf, true))),
            ("__nv_frobf", None),
            ("tanhf", None),
        ] {
            assert_eq!(libdevice(name), want, "{name}");
        }
    }
}
