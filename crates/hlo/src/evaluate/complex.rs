//! `c64`: a complex number of two f32, stored as the real part then the imaginary part
//! (little-endian: the real part in the low 32 bits of its 64-bit pattern). The arithmetic
//! is MLIR's `complex` dialect lowered by `complex-to-standard`, what XLA's emitters run:
//! `(a+bi)(c+di) = (ac-bd) + (ad+bc)i` and Smith's division, each step rounded to f32.
//! `convert` to a real type takes the real part and from one gives a zero imaginary part,
//! as XLA's does; `real`, `imag` and `complex` take numbers apart and put them together;
//! `abs`, `exp`, `log` and `sqrt` (principal) are exact to f64 and rounded once (the
//! kernels' f32 formulas are within f32's bound of them). `c128` and the other
//! transcendental functions are not here yet.

use super::value::{Element, Elements, Num, elements_storage};
use crate::literal;
use crate::opcode::Opcode;
use crate::primitive::PrimitiveType;

/// A `c64` element.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct C64 {
    pub re: f32,
    pub im: f32,
}

impl C64 {
    /// The 64-bit pattern: the real part's bits low, the imaginary part's high.
    pub fn bits(self) -> u64 {
        u64::from(self.re.to_bits()) | u64::from(self.im.to_bits()) << 32
    }
}

impl Element for C64 {
    const TYPE: PrimitiveType = PrimitiveType::C64;
    fn to_num(self) -> Num {
        Num::Float(f64::from(self.re))
    }
    fn from_num(n: Num) -> C64 {
        let re = match n {
            Num::Int(i) => i as f32,
            Num::Float(f) => f as f32,
        };
        C64 { re, im: 0.0 }
    }
    fn pattern(self) -> u64 {
        self.bits()
    }
    fn from_pattern(bits: u64) -> C64 {
        C64 {
            re: f32::from_bits(bits as u32),
            im: f32::from_bits((bits >> 32) as u32),
        }
    }
    elements_storage!(C64, C64);
    fn to_value(self) -> literal::Value {
        literal::Value::Complex(f64::from(self.re), f64::from(self.im))
    }
}

pub(super) fn unary(op: Opcode, x: &[C64]) -> Option<Elements> {
    Some(match op {
        Opcode::Negate => Elements::C64(
            x.iter()
                .map(|c| C64 {
                    re: -c.re,
                    im: -c.im,
                })
                .collect(),
        ),
        Opcode::Real => Elements::F32(x.iter().map(|c| c.re).collect()),
        Opcode::Imag => Elements::F32(x.iter().map(|c| c.im).collect()),
        // |z|, and e^z = e^re (cos im + i sin im), computed in f64 and rounded once.
        Opcode::Abs => Elements::F32(
            x.iter()
                .map(|c| f64::from(c.re).hypot(f64::from(c.im)) as f32)
                .collect(),
        ),
        Opcode::Exp => Elements::C64(
            x.iter()
                .map(|c| {
                    let (e, im) = (f64::from(c.re).exp(), f64::from(c.im));
                    C64 {
                        re: (e * im.cos()) as f32,
                        // C99's `cexp(x + i0) = e^x + i0`: the zero, not `inf * 0`.
                        im: if im == 0.0 {
                            c.im
                        } else {
                            (e * im.sin()) as f32
                        },
                    }
                })
                .collect(),
        ),
        // log|z| + i atan2(im, re), and the principal square root, in f64, rounded once.
        Opcode::Log => Elements::C64(
            x.iter()
                .map(|c| {
                    let (re, im) = (f64::from(c.re), f64::from(c.im));
                    C64 {
                        re: re.hypot(im).ln() as f32,
                        im: im.atan2(re) as f32,
                    }
                })
                .collect(),
        ),
        Opcode::Sqrt => Elements::C64(x.iter().map(|&c| principal_sqrt(c)).collect()),
        _ => return None,
    })
}

pub(super) fn binary(op: Opcode) -> Option<fn(C64, C64) -> C64> {
    Some(match op {
        Opcode::Add => |x, y| C64 {
            re: x.re + y.re,
            im: x.im + y.im,
        },
        Opcode::Subtract => |x, y| C64 {
            re: x.re - y.re,
            im: x.im - y.im,
        },
        Opcode::Multiply => multiply,
        Opcode::Divide => divide,
        _ => return None,
    })
}

/// `(a+bi)(c+di) = (ac-bd) + (ad+bc)i`.
pub fn multiply(x: C64, y: C64) -> C64 {
    C64 {
        re: x.re * y.re - x.im * y.im,
        im: x.re * y.im + x.im * y.re,
    }
}

/// Smith's algorithm: divides by the larger of the divisor's parts first, so that no
/// intermediate overflows where the quotient does not.
pub fn divide(x: C64, y: C64) -> C64 {
    let (a, b, c, d) = (x.re, x.im, y.re, y.im);
    if c.abs() >= d.abs() {
        let r = d / c;
        let t = c + d * r;
        C64 {
            re: (a + b * r) / t,
            im: (b - a * r) / t,
        }
    } else {
        let r = c / d;
        let t = c * r + d;
        C64 {
            re: (a * r + b) / t,
            im: (b * r - a) / t,
        }
    }
}

/// `complex(re, im)` from two f32 arrays of one length.
pub(super) fn from_parts(re: &Elements, im: &Elements) -> Result<Elements, String> {
    match (re, im) {
        (Elements::F32(re), Elements::F32(im)) => Ok(Elements::C64(
            re.iter().zip(im).map(|(&re, &im)| C64 { re, im }).collect(),
        )),
        _ => Err(format!(
            "unsupported: complex of {} and {}",
            re.element_type(),
            im.element_type()
        )),
    }
}

/// The principal square root of `c`, in f64: `t = sqrt((|z| + |re|) / 2)`, then
/// `(t, im / 2t)` for `re >= 0`, else `(|im| / 2t, ±t)` with `im`'s sign; `(0, im)` at 0.
fn principal_sqrt(c: C64) -> C64 {
    let (re, im) = (f64::from(c.re), f64::from(c.im));
    let size = re.hypot(im);
    if size == 0.0 {
        return C64 { re: 0.0, im: c.im };
    }
    let t = ((size + re.abs()) / 2.0).sqrt();
    let (out_re, out_im) = if re >= 0.0 {
        (t, im / (2.0 * t))
    } else {
        (im.abs() / (2.0 * t), t.copysign(im))
    };
    C64 {
        re: out_re as f32,
        im: out_im as f32,
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
}
