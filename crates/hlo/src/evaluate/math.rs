//! The error function, which Rust's standard library lacks.
//!
//! `erf` is computed in f64 from a series whose terms are all positive (no cancellation):
//!
//! ```text
//! erf(a) = 2/√π · e^(-a²) · Σₙ (2a²)ⁿ · a / (1·3·5···(2n+1))
//! ```
//!
//! Each term is the previous one times `2a²/(2n+1)`; the sum stops once a term no longer
//! changes it. For `a < 6` that takes at most ~150 terms and the relative error stays near
//! 1e-14, so rounding the result to f32 gives the correctly rounded f32 `erf` except when
//! the exact value lies within ~1e-14 of a rounding boundary. From `a = 6` on,
//! `1 - erf(a) < 2e-17`, below half an f64 ulp of 1, so the result is ±1.

use std::f64::consts::PI;

/// Where `erf` is ±1 in f64.
const SATURATION: f64 = 6.0;

/// The error function in f64 (relative error around 1e-14); the interpreter uses it too, so
/// both agree exactly.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let magnitude = if a >= SATURATION {
        1.0
    } else {
        positive_series(a)
    };
    magnitude.copysign(x)
}

/// `erf` for f32 values: the f64 result rounded once.
pub(super) fn erf_f32(x: f32) -> f32 {
    erf(f64::from(x)) as f32
}

/// `erf(a)` for `0 <= a < SATURATION` from the positive-term series.
fn positive_series(a: f64) -> f64 {
    let two_a2 = 2.0 * a * a;
    let mut term = a;
    let mut sum = a;
    let mut n = 0.0;
    loop {
        n += 1.0;
        term *= two_a2 / (2.0 * n + 1.0);
        let next = sum + term;
        if next == sum {
            break;
        }
        sum = next;
    }
    2.0 / PI.sqrt() * (-a * a).exp() * sum
}
