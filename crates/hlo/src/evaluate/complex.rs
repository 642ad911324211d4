//! `c64` and `c128`: a complex number of two f32 or two f64, stored as the real part then
//! the imaginary part (little-endian: the real part in the low half of its 64- or 128-bit
//! pattern). The arithmetic is MLIR's `complex` dialect lowered by `complex-to-standard`,
//! what XLA's emitters run: `(a+bi)(c+di) = (ac-bd) + (ad+bc)i` and Smith's division, each
//! step rounded to the part type.
//! `convert` to a real type takes the real part and from one gives a zero imaginary part,
//! as XLA's does; `real`, `imag` and `complex` take numbers apart and put them together.
//!
//! The functions (`abs`, `exp`, `expm1`, `log`, `log1p`, `sqrt`, `rsqrt`, `cbrt`, `sin`,
//! `cos`, `tan`, `tanh`, `sign`, `power`) are computed in f64 ([`Z`]) and rounded once: the
//! kernels' f32 formulas are checked against them within f32's bound. For `c128` the
//! reference has no more precision than the kernel: it checks the formulas and their edges,
//! within f64's bound, on inputs where the f64 intermediates do not overflow. Their edges follow
//! C99's Annex G where it speaks (`exp`, `sin`, `cos` keep a zero part on the axes instead
//! of `inf * 0 = NaN`); `rsqrt(0)` is `1/0` by Smith's division, NaN in both parts; `0^w`
//! is 1 for `w = 0`, 0 where `re w > 0`, NaN otherwise.

use super::value::{Element, Elements, Num, elements_storage};
use crate::literal;
use crate::opcode::Opcode;
use crate::primitive::PrimitiveType;

/// A complex number of two parts of type `T` (`f32` for `c64`, `f64` for `c128`), stored
/// as the real part then the imaginary part.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex<T> {
    pub re: T,
    pub im: T,
}

/// A `c64` element.
pub type C64 = Complex<f32>;
/// A `c128` element.
pub type C128 = Complex<f64>;

/// A part type: the float arithmetic the textbook formulas need, and the part's bits.
pub(super) trait Part:
    Element
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// The part's width in bits (the imaginary part's shift in the pattern).
    const BITS: u32;
    fn abs(self) -> Self;
    fn to_f64(self) -> f64;
    /// `x` rounded to the part type.
    fn from_f64(x: f64) -> Self;
}

impl Part for f32 {
    const BITS: u32 = 32;
    fn abs(self) -> f32 {
        f32::abs(self)
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}

impl Part for f64 {
    const BITS: u32 = 64;
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
}

/// Each part of `c` rounded to `T` (`convert` between complex types).
fn rounded<T: Part, U: Part>(c: Complex<U>) -> Complex<T> {
    Complex {
        re: T::from_f64(c.re.to_f64()),
        im: T::from_f64(c.im.to_f64()),
    }
}

/// `Element` for a complex type: converting from a real number gives a zero imaginary
/// part, and to one keeps the real part (XLA's `convert`).
macro_rules! complex_element {
    ($part:ty, $variant:ident) => {
        impl Complex<$part> {
            /// The pattern in memory: the real part's bits low, the imaginary part's high.
            pub fn bits(self) -> u128 {
                self.re.pattern() | self.im.pattern() << <$part as Part>::BITS
            }
        }

        impl Element for Complex<$part> {
            const TYPE: PrimitiveType = PrimitiveType::$variant;
            fn to_num(self) -> Num {
                Num::Float(self.re.to_f64())
            }
            fn from_num(n: Num) -> Self {
                Complex {
                    re: <$part>::from_num(n),
                    im: 0.0,
                }
            }
            fn pattern(self) -> u128 {
                self.bits()
            }
            fn from_pattern(bits: u128) -> Self {
                Complex {
                    re: <$part>::from_pattern(bits),
                    im: <$part>::from_pattern(bits >> <$part as Part>::BITS),
                }
            }
            elements_storage!($variant, Complex<$part>);
            fn to_value(self) -> literal::Value {
                literal::Value::Complex(self.re.to_f64(), self.im.to_f64())
            }
        }
    };
}

complex_element!(f32, C64);
complex_element!(f64, C128);

/// A unary op on complex elements: `real`/`imag` take them apart, `abs` and the functions
/// are computed in f64 and rounded once to the part type.
pub(super) fn unary<T: Part>(op: Opcode, x: &[Complex<T>]) -> Option<Elements>
where
    Complex<T>: Element,
{
    Some(match op {
        Opcode::Negate => Element::wrap(
            x.iter()
                .map(|&c| Complex {
                    re: -c.re,
                    im: -c.im,
                })
                .collect::<Vec<Complex<T>>>(),
        ),
        Opcode::Real => T::wrap(x.iter().map(|c| c.re).collect()),
        Opcode::Imag => T::wrap(x.iter().map(|c| c.im).collect()),
        Opcode::Abs => T::wrap(
            x.iter()
                .map(|c| T::from_f64(c.re.to_f64().hypot(c.im.to_f64())))
                .collect(),
        ),
        _ => {
            let f: fn(Z) -> Z = match op {
                Opcode::Exp => Z::exp,
                Opcode::Expm1 => Z::exp_m1,
                Opcode::Log => Z::ln,
                Opcode::Log1p => Z::ln_1p,
                Opcode::Sqrt => Z::sqrt,
                Opcode::Rsqrt => |z| Z::ONE.div(z.sqrt()),
                Opcode::Cbrt => Z::cbrt,
                Opcode::Sin => Z::sin,
                Opcode::Cos => Z::cos,
                Opcode::Tan => Z::tan,
                Opcode::Tanh => Z::tanh,
                Opcode::Sign => Z::sign,
                _ => return None,
            };
            Element::wrap(
                x.iter()
                    .map(|&c| f(Z::of(c)).round())
                    .collect::<Vec<Complex<T>>>(),
            )
        }
    })
}

/// A binary op on two complex numbers of one type.
type Binary<T> = fn(Complex<T>, Complex<T>) -> Complex<T>;

pub(super) fn binary<T: Part>(op: Opcode) -> Option<Binary<T>> {
    Some(match op {
        Opcode::Add => |x, y| Complex {
            re: x.re + y.re,
            im: x.im + y.im,
        },
        Opcode::Subtract => |x, y| Complex {
            re: x.re - y.re,
            im: x.im - y.im,
        },
        Opcode::Multiply => multiply,
        Opcode::Divide => divide,
        Opcode::Power => |x, y| Z::of(x).pow(Z::of(y)).round(),
        _ => return None,
    })
}

/// `(a+bi)(c+di) = (ac-bd) + (ad+bc)i`.
pub(super) fn multiply<T: Part>(x: Complex<T>, y: Complex<T>) -> Complex<T> {
    Complex {
        re: x.re * y.re - x.im * y.im,
        im: x.re * y.im + x.im * y.re,
    }
}

/// Smith's algorithm: divides by the larger of the divisor's parts first, so that no
/// intermediate overflows where the quotient does not.
pub(super) fn divide<T: Part>(x: Complex<T>, y: Complex<T>) -> Complex<T> {
    let (a, b, c, d) = (x.re, x.im, y.re, y.im);
    if c.abs() >= d.abs() {
        let r = d / c;
        let t = c + d * r;
        Complex {
            re: (a + b * r) / t,
            im: (b - a * r) / t,
        }
    } else {
        let r = c / d;
        let t = c * r + d;
        Complex {
            re: (a * r + b) / t,
            im: (b * r - a) / t,
        }
    }
}

/// `complex(re, im)` from two f32 or two f64 arrays of one length.
pub(super) fn from_parts(re: &Elements, im: &Elements) -> Result<Elements, String> {
    fn zip<T: Part>(re: &[T], im: &[T]) -> Vec<Complex<T>> {
        re.iter()
            .zip(im)
            .map(|(&re, &im)| Complex { re, im })
            .collect()
    }
    match (re, im) {
        (Elements::F32(re), Elements::F32(im)) => Ok(Elements::C64(zip(re, im))),
        (Elements::F64(re), Elements::F64(im)) => Ok(Elements::C128(zip(re, im))),
        _ => Err(format!(
            "unsupported: complex of {} and {}",
            re.element_type(),
            im.element_type()
        )),
    }
}

/// `convert` from one complex type to another: each part rounded.
pub(super) fn convert_complex(x: &Elements, to: PrimitiveType) -> Option<Elements> {
    Some(match (x, to) {
        (Elements::C64(_), PrimitiveType::C64) | (Elements::C128(_), PrimitiveType::C128) => {
            x.clone()
        }
        (Elements::C64(v), PrimitiveType::C128) => {
            Elements::C128(v.iter().map(|&c| rounded(c)).collect())
        }
        (Elements::C128(v), PrimitiveType::C64) => {
            Elements::C64(v.iter().map(|&c| rounded(c)).collect())
        }
        _ => return None,
    })
}

/// A complex number in f64: where the functions are computed before their one rounding.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Z {
    re: f64,
    im: f64,
}

impl Z {
    const ONE: Z = Z { re: 1.0, im: 0.0 };

    fn of<T: Part>(c: Complex<T>) -> Z {
        Z {
            re: c.re.to_f64(),
            im: c.im.to_f64(),
        }
    }

    fn round<T: Part>(self) -> Complex<T> {
        Complex {
            re: T::from_f64(self.re),
            im: T::from_f64(self.im),
        }
    }

    fn mul(self, w: Z) -> Z {
        Z {
            re: self.re * w.re - self.im * w.im,
            im: self.re * w.im + self.im * w.re,
        }
    }

    /// Smith's division (as [`divide`]).
    fn div(self, w: Z) -> Z {
        let (a, b, c, d) = (self.re, self.im, w.re, w.im);
        if c.abs() >= d.abs() {
            let (r, t) = (d / c, c + d * (d / c));
            Z {
                re: (a + b * r) / t,
                im: (b - a * r) / t,
            }
        } else {
            let (r, t) = (c / d, c * (c / d) + d);
            Z {
                re: (a * r + b) / t,
                im: (b * r - a) / t,
            }
        }
    }

    fn abs(self) -> f64 {
        self.re.hypot(self.im)
    }

    /// Whether a part is past 2^1020 (and finite), where `|z|` and the sums of the formulas
    /// below may overflow f64 (for `c128`; `c64`'s parts never get there): those are
    /// computed on `z / 4` or `z / 8` and scaled back.
    fn huge(self) -> bool {
        let m = self.re.abs().max(self.im.abs());
        m > 2f64.powi(1020) && m.is_finite()
    }

    /// Whether both parts are below 2^-1000 and one is not zero: `|z|` of subnormal parts
    /// would round to a few bits (`c128`'s (5e-324, -5e-324)), so those are computed on
    /// `z · 2^1000` and scaled back.
    fn tiny(self) -> bool {
        let m = self.re.abs().max(self.im.abs());
        m < 2f64.powi(-1000) && m > 0.0
    }

    fn scaled(self, by: f64) -> Z {
        Z {
            re: self.re * by,
            im: self.im * by,
        }
    }

    /// `log|z|`, also where `|z|` overflows f64: `log m + log1p((n/m)^2) / 2` for the larger
    /// and smaller part magnitudes `m`, `n`.
    fn log_abs(self) -> f64 {
        if self.tiny() {
            return self.scaled(2f64.powi(1000)).log_abs() - 1000.0 * std::f64::consts::LN_2;
        }
        let size = self.abs();
        if size.is_finite() || !self.re.is_finite() || !self.im.is_finite() {
            return size.ln();
        }
        let (m, n) = (
            self.re.abs().max(self.im.abs()),
            self.re.abs().min(self.im.abs()),
        );
        m.ln() + ((n / m) * (n / m)).ln_1p() / 2.0
    }

    /// `cosh x` and `sinh x` as the two factors `(e^(|x|/2), ±e^(|x|/2) / 2)` whose product
    /// they are past |x| = 700, where they overflow f64 before a small factor multiplies
    /// them; `None` below.
    fn hyperbolic_halves(x: f64) -> Option<(f64, f64, f64)> {
        (x.abs() > 700.0).then(|| {
            let root = (x.abs() / 2.0).exp();
            (root, 0.5 * root, 0.5f64.copysign(x) * root)
        })
    }

    /// `e^re (cos im + i sin im)`; on the real axis the imaginary part is the input's zero
    /// (C99's `cexp(x + i0) = e^x + i0`), not `inf * 0`.
    fn exp(self) -> Z {
        if self.re.exp().is_infinite() && self.re.is_finite() {
            // e^re overflows f64; e^(re/2) twice may not (c128's e^710 cos 1).
            let half = (self.re / 2.0).exp();
            return Z {
                re: half * self.im.cos() * half,
                im: if self.im == 0.0 {
                    self.im
                } else {
                    half * self.im.sin() * half
                },
            };
        }
        let e = self.re.exp();
        if e == 0.0 {
            // |e^z| is 0: the result is 0, also where `im` is infinite.
            return Z {
                re: 0.0,
                im: if self.im == 0.0 { self.im } else { 0.0 },
            };
        }
        Z {
            re: e * self.im.cos(),
            im: if self.im == 0.0 {
                self.im
            } else {
                e * self.im.sin()
            },
        }
    }

    /// `e^z - 1`: the real part as `expm1(re) cos im - 2 sin^2(im/2)`, exact near zero.
    fn exp_m1(self) -> Z {
        let half_sin = (self.im / 2.0).sin();
        let e = self.exp();
        let expm1 = self.re.exp_m1();
        Z {
            re: if expm1.is_infinite() {
                e.re
            } else {
                expm1 * self.im.cos() - 2.0 * half_sin * half_sin
            },
            im: e.im,
        }
    }

    /// `log|z| + i atan2(im, re)`.
    fn ln(self) -> Z {
        Z {
            re: self.log_abs(),
            im: self.im.atan2(self.re),
        }
    }

    /// `log(1 + z)`: near zero the real part is `log1p(re (2 + re) + im^2) / 2`, which
    /// keeps the bits that `1 + re` would round away.
    fn ln_1p(self) -> Z {
        let (a, b) = (self.re, self.im);
        let re = if a.abs() < 0.5 && b.abs() < 0.5 {
            (a * (2.0 + a) + b * b).ln_1p() / 2.0
        } else {
            Z { re: 1.0 + a, im: b }.log_abs()
        };
        Z {
            re,
            im: b.atan2(1.0 + a),
        }
    }

    /// The principal square root: `t = sqrt((|z| + |re|) / 2)`, then `(t, im / 2t)` for
    /// `re >= 0`, else `(|im| / 2t, ±t)` with `im`'s sign; `(0, im)` at 0.
    fn sqrt(self) -> Z {
        if self.huge() {
            return self.scaled(0.25).sqrt().scaled(2.0);
        }
        if self.tiny() {
            return self.scaled(2f64.powi(1000)).sqrt().scaled(2f64.powi(-500));
        }
        let (re, im) = (self.re, self.im);
        let size = self.abs();
        if size == 0.0 {
            return Z { re: 0.0, im };
        }
        let t = ((size + re.abs()) / 2.0).sqrt();
        if re >= 0.0 {
            Z {
                re: t,
                im: im / (2.0 * t),
            }
        } else {
            Z {
                re: im.abs() / (2.0 * t),
                im: t.copysign(im),
            }
        }
    }

    /// The principal cube root: `|z|^(1/3) e^(i arg(z)/3)`.
    fn cbrt(self) -> Z {
        if self.huge() {
            return self.scaled(0.125).cbrt().scaled(2.0);
        }
        if self.tiny() {
            return self.scaled(2f64.powi(999)).cbrt().scaled(2f64.powi(-333));
        }
        let (r, angle) = (self.abs().cbrt(), self.im.atan2(self.re) / 3.0);
        Z {
            re: r * angle.cos(),
            im: r * angle.sin(),
        }
    }

    /// `sin re cosh im + i cos re sinh im`; a zero real part stays zero (`0 · cosh ∞`).
    fn sin(self) -> Z {
        let (a, b) = (self.re, self.im);
        if let Some((root, cosh_half, sinh_half)) = Z::hyperbolic_halves(b) {
            return Z {
                re: if a == 0.0 {
                    a
                } else {
                    a.sin() * root * cosh_half
                },
                im: a.cos() * root * sinh_half,
            };
        }
        Z {
            re: if a == 0.0 { a } else { a.sin() * b.cosh() },
            im: a.cos() * b.sinh(),
        }
    }

    /// `cos re cosh im - i sin re sinh im`; a zero real part gives a zero imaginary one.
    fn cos(self) -> Z {
        let (a, b) = (self.re, self.im);
        if let Some((root, cosh_half, sinh_half)) = Z::hyperbolic_halves(b) {
            return Z {
                re: a.cos() * root * cosh_half,
                im: if a == 0.0 {
                    -a
                } else {
                    -(a.sin() * root * sinh_half)
                },
            };
        }
        Z {
            re: a.cos() * b.cosh(),
            im: if a == 0.0 { -a } else { -(a.sin() * b.sinh()) },
        }
    }

    /// Kahan's formula: with `t = tan im`, `β = 1 + t²`, `s = sinh re`, `ρ = sqrt(1 + s²)`,
    /// `tanh z = (β ρ s + i t) / (1 + β s²)`; past |re| = 22, `±1 + i 4 sin im cos im
    /// e^(-2|re|)` (f64 rounds the rest away).
    fn tanh(self) -> Z {
        let (a, b) = (self.re, self.im);
        if a.abs() > 22.0 {
            return Z {
                re: 1f64.copysign(a),
                im: 4.0 * b.sin() * b.cos() * (-2.0 * a.abs()).exp(),
            };
        }
        let (t, s) = (b.tan(), a.sinh());
        let beta = 1.0 + t * t;
        let denominator = 1.0 + beta * s * s;
        Z {
            re: beta * (1.0 + s * s).sqrt() * s / denominator,
            im: t / denominator,
        }
    }

    /// `tan z = -i tanh(i z)`.
    fn tan(self) -> Z {
        let t = Z {
            re: -self.im,
            im: self.re,
        }
        .tanh();
        Z {
            re: t.im,
            im: -t.re,
        }
    }

    /// `z / |z|`, and zero at zero.
    fn sign(self) -> Z {
        if self.huge() {
            return self.scaled(0.25).sign();
        }
        if self.tiny() {
            return self.scaled(2f64.powi(1000)).sign();
        }
        let size = self.abs();
        if size == 0.0 {
            return self;
        }
        Z {
            re: self.re / size,
            im: self.im / size,
        }
    }

    /// `z^w = e^(w log z)`; `0^w` is 1 for `w = 0`, 0 where `re w > 0`, NaN otherwise.
    fn pow(self, w: Z) -> Z {
        if self.re == 0.0 && self.im == 0.0 {
            return match (w.re, w.im) {
                (0.0, 0.0) => Z::ONE,
                (re, _) if re > 0.0 => Z { re: 0.0, im: 0.0 },
                _ => Z {
                    re: f64::NAN,
                    im: f64::NAN,
                },
            };
        }
        w.mul(self.ln()).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_follows_the_textbook_formulas() {
        let (x, y) = (C64 { re: 1.0, im: 2.0 }, C64 { re: 3.0, im: -4.0 });
        assert_eq!(multiply(x, y), C64 { re: 11.0, im: 2.0 });
        let q = divide(C64 { re: 11.0, im: 2.0 }, y);
        assert!(
            (q.re - 1.0).abs() < 1e-6 && (q.im - 2.0).abs() < 1e-6,
            "{q:?}"
        );
        // Smith's algorithm keeps the huge divisor from overflowing c*c + d*d.
        let big = divide(C64 { re: 1e30, im: 0.0 }, C64 { re: 1e30, im: 1e30 });
        assert!(
            (big.re - 0.5).abs() < 1e-6 && (big.im + 0.5).abs() < 1e-6,
            "{big:?}"
        );
        assert_eq!(C64::from_pattern(x.pattern()), x);
        assert_eq!(x.pattern() as u32, 1f32.to_bits());
    }

    /// The reference functions against identities that tie them to each other and to the
    /// textbook formulas, on a grid that crosses the axes and both sides of the cuts.
    #[test]
    fn the_functions_satisfy_their_identities() {
        let close = |x: Z, y: Z, what: &str| {
            let scale = 1.0 + y.abs();
            let near = |a: f64, b: f64| a == b || (a - b).abs() < 1e-9 * scale;
            assert!(
                near(x.re, y.re) && near(x.im, y.im),
                "{what}: {x:?} vs {y:?}"
            );
        };
        let grid = [-2.5, -1.0, -0.3, -1e-9, 0.0, 1e-9, 0.7, 1.9, 3.0];
        for re in grid {
            for im in grid {
                let z = Z { re, im };
                let two = Z { re: 2.0, im: 0.0 };
                let i_z = Z { re: -im, im: re };
                // e^{iz} = cos z + i sin z.
                let (c, s) = (z.cos(), z.sin());
                close(
                    Z {
                        re: c.re - s.im,
                        im: c.im + s.re,
                    },
                    i_z.exp(),
                    "euler",
                );
                close(z.tan(), s.div(c), "tan = sin / cos");
                let e2 = two.mul(z).exp();
                let tanh = Z {
                    re: e2.re - 1.0,
                    im: e2.im,
                }
                .div(Z {
                    re: e2.re + 1.0,
                    im: e2.im,
                });
                close(z.tanh(), tanh, "tanh");
                let e = z.exp();
                close(
                    z.exp_m1(),
                    Z {
                        re: e.re - 1.0,
                        im: e.im,
                    },
                    "expm1",
                );
                close(z.ln_1p(), Z { re: 1.0 + re, im }.ln(), "log1p");
                if re != 0.0 || im != 0.0 {
                    let r = z.sqrt();
                    close(r.mul(r), z, "sqrt");
                    let c = z.cbrt();
                    close(c.mul(c).mul(c), z, "cbrt");
                    let q = z.div(z.sqrt()).div(z.sqrt());
                    close(
                        z.mul(Z::ONE.div(z.sqrt())).mul(Z::ONE.div(z.sqrt())),
                        Z::ONE,
                        "rsqrt",
                    );
                    close(q, Z::ONE, "z / sqrt z / sqrt z");
                    close(z.pow(two), z.mul(z), "z^2");
                    assert!((z.sign().abs() - 1.0).abs() < 1e-12, "sign of {z:?}");
                }
            }
        }
        // Where the textbook formulas overflow or cancel.
        assert_eq!(
            Z { re: 0.0, im: 800.0 }.sin().re,
            0.0,
            "sin(0 + 800i) keeps its zero"
        );
        assert_eq!(Z { re: 30.0, im: 1.0 }.tanh().re, 1.0);
        let tiny = Z {
            re: 1e-12,
            im: 1e-12,
        };
        close(tiny.exp_m1(), tiny, "expm1 near zero");
        close(tiny.ln_1p(), tiny, "log1p near zero");
        let zero = Z { re: 0.0, im: 0.0 };
        assert_eq!(zero.pow(zero), Z::ONE);
        assert_eq!(zero.pow(Z { re: 0.5, im: 3.0 }), zero);
        assert!(zero.pow(Z { re: -1.0, im: 0.0 }).re.is_nan());
    }
}
