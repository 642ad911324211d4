//! Values of MLIR's float formats of 8 bits or fewer ([`NarrowFloat`]): decoding a bit
//! pattern, rounding a literal to the nearest value, encoding it back.
//!
//! The IR holds these formats as storage only (no pass computes on them), but XLA's IR
//! writes literals in them (`arith.constant 1.0 : f8E4M3`, `dense<[0.5, -0.5]> :
//! tensor<2xf4E2M1FN>`), so the reader must know their values. A format has at most 256
//! bit patterns, so rounding compares the literal with every finite value of the format
//! (the nearest wins, a tie goes to the even significand, as IEEE's round-to-nearest-even
//! and LLVM's `APFloat` do) —
//! simple enough to check against the formats' definitions by reading, and no literal of
//! these types is long.
//!
//! The formats (`FN`: finite, no infinities; `UZ`: unsigned zero, the pattern of `-0` is
//! the NaN; `FNU`: no sign bit):
//!
//! | format | exponent, mantissa bits | bias | infinities, NaN |
//! |---|---|---|---|
//! | `f8E5M2`, `f8E4M3`, `f8E3M4` | 5,2 / 4,3 / 3,4 | 15 / 7 / 3 | IEEE: the top exponent |
//! | `f8E4M3FN` | 4,3 | 7 | no infinities; NaN is `S.1111.111` |
//! | `f8E5M2FNUZ`, `f8E4M3FNUZ`, `f8E4M3B11FNUZ` | 5,2 / 4,3 / 4,3 | 16 / 8 / 11 | no infinities; NaN is `0x80` |
//! | `f8E8M0FNU` | 8,0 | 127 | no sign, no zero: `2^(e - 127)`; NaN is `0xFF` |
//! | `f6E2M3FN`, `f6E3M2FN`, `f4E2M1FN` | 2,3 / 3,2 / 2,1 | 1 / 3 / 1 | none: every pattern is finite |

use crate::types::NarrowFloat;

/// How a format encodes its special values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Specials {
    /// IEEE 754: the all-ones exponent holds the infinities (mantissa 0) and NaNs.
    Ieee,
    /// Only the all-ones pattern (either sign) is NaN.
    NanAllOnes,
    /// Only the negative-zero pattern is NaN (there is no `-0`).
    NanNegativeZero,
    /// Every pattern is a finite number.
    FiniteOnly,
    /// No sign bit; the exponent is the value (`2^(e - bias)`), all ones is NaN.
    ExponentOnly,
}

struct Encoding {
    exponent_bits: u32,
    mantissa_bits: u32,
    bias: i32,
    specials: Specials,
}

fn encoding(format: NarrowFloat) -> Encoding {
    use NarrowFloat::*;
    use Specials::*;
    let (exponent_bits, mantissa_bits, bias, specials) = match format {
        F8E5M2 => (5, 2, 15, Ieee),
        F8E4M3 => (4, 3, 7, Ieee),
        F8E3M4 => (3, 4, 3, Ieee),
        F8E4M3FN => (4, 3, 7, NanAllOnes),
        F8E5M2FNUZ => (5, 2, 16, NanNegativeZero),
        F8E4M3FNUZ => (4, 3, 8, NanNegativeZero),
        F8E4M3B11FNUZ => (4, 3, 11, NanNegativeZero),
        F8E8M0FNU => (8, 0, 127, ExponentOnly),
        F6E2M3FN => (2, 3, 1, FiniteOnly),
        F6E3M2FN => (3, 2, 3, FiniteOnly),
        F4E2M1FN => (2, 1, 1, FiniteOnly),
    };
    Encoding {
        exponent_bits,
        mantissa_bits,
        bias,
        specials,
    }
}

impl NarrowFloat {
    /// The value of bit pattern `bits` (its low [`NarrowFloat::width`] bits).
    pub fn value_of_bits(self, bits: u64) -> f64 {
        let e = encoding(self);
        let bits = bits & ((1 << self.width()) - 1);
        let max_exponent = (1u64 << e.exponent_bits) - 1;
        if e.specials == Specials::ExponentOnly {
            return if bits == max_exponent {
                f64::NAN
            } else {
                2f64.powi(bits as i32 - e.bias)
            };
        }
        let sign_bit = 1u64 << (self.width() - 1);
        let sign = if bits & sign_bit != 0 { -1.0 } else { 1.0 };
        let exponent = (bits >> e.mantissa_bits) & max_exponent;
        let mantissa = bits & ((1 << e.mantissa_bits) - 1);
        let all_ones = (1u64 << e.mantissa_bits) - 1;
        match e.specials {
            Specials::Ieee if exponent == max_exponent && mantissa == 0 => {
                return sign * f64::INFINITY;
            }
            Specials::Ieee if exponent == max_exponent => return f64::NAN,
            Specials::NanAllOnes if exponent == max_exponent && mantissa == all_ones => {
                return f64::NAN;
            }
            Specials::NanNegativeZero if bits == sign_bit => return f64::NAN,
            _ => {}
        }
        let scale = |exp: i32| 2f64.powi(exp - e.bias - e.mantissa_bits as i32);
        if exponent == 0 {
            sign * mantissa as f64 * scale(1)
        } else {
            sign * (mantissa + (1 << e.mantissa_bits)) as f64 * scale(exponent as i32)
        }
    }

    /// The bit pattern of `v`, a value of this format (as [`NarrowFloat::round`] returns).
    pub fn bits_of_value(self, v: f64) -> u64 {
        if v.is_nan() {
            return self
                .patterns()
                .find(|&b| self.value_of_bits(b).is_nan())
                .unwrap_or(0);
        }
        self.patterns()
            .find(|&b| {
                let x = self.value_of_bits(b);
                x == v && x.is_sign_negative() == v.is_sign_negative()
            })
            .or_else(|| self.patterns().find(|&b| self.value_of_bits(b) == v))
            .unwrap_or(0)
    }

    /// The value of this format nearest to `v`, ties to the even pattern; `±∞` beyond the
    /// largest finite value by half a step or more when the format has infinities. `None`
    /// when `v` lies beyond the format's range (no infinities to round to), or is negative
    /// or zero for `f8E8M0FNU`.
    pub fn round(self, v: f64) -> Option<f64> {
        if v.is_nan() {
            return self
                .patterns()
                .any(|b| self.value_of_bits(b).is_nan())
                .then_some(v);
        }
        let e = encoding(self);
        if e.specials == Specials::ExponentOnly && v <= 0.0 {
            return None;
        }
        let finite: Vec<(u64, f64)> = self
            .patterns()
            .map(|b| (b, self.value_of_bits(b)))
            .filter(|(_, x)| x.is_finite())
            .collect();
        let max = finite.iter().map(|&(_, x)| x).fold(0.0, f64::max);
        if v.abs() > max {
            // The step above the largest value: that of its binade.
            let step = 2f64.powi(max.log2().floor() as i32 - e.mantissa_bits as i32);
            return match e.specials {
                Specials::Ieee if v.abs() >= max + step / 2.0 => Some(v.signum() * f64::INFINITY),
                _ if v.abs() < max + step / 2.0 => Some(v.signum() * max),
                _ => None,
            };
        }
        let distance = |x: f64| (x - v).abs();
        let wrong_sign = |x: f64| x.is_sign_negative() != v.is_sign_negative();
        // A tie goes to the pattern whose significand is even; `f8E8M0FNU`'s significand is
        // its implicit 1 alone, odd, so its ties go away from zero (as LLVM's APFloat does).
        let odd = |(bits, x): (u64, f64)| match e.specials {
            Specials::ExponentOnly => u64::from(x.abs() < v.abs()),
            _ => bits & 1,
        };
        finite
            .iter()
            .min_by(|a, b| {
                distance(a.1)
                    .total_cmp(&distance(b.1))
                    .then(odd(**a).cmp(&odd(**b)))
                    // A negative literal that rounds to zero keeps its sign where `-0` exists.
                    .then(wrong_sign(a.1).cmp(&wrong_sign(b.1)))
            })
            .map(|&(_, x)| x)
    }

    fn patterns(self) -> impl Iterator<Item = u64> {
        0..1u64 << self.width()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use NarrowFloat::*;

    #[test]
    fn known_values_decode() {
        // Largest finite values and a few patterns, from the formats' definitions.
        assert_eq!(F8E4M3FN.value_of_bits(0x7E), 448.0);
        assert!(F8E4M3FN.value_of_bits(0x7F).is_nan());
        assert_eq!(F8E5M2.value_of_bits(0x7B), 57344.0);
        assert_eq!(F8E5M2.value_of_bits(0x7C), f64::INFINITY);
        assert_eq!(F8E4M3.value_of_bits(0x77), 240.0);
        assert_eq!(F8E4M3.value_of_bits(0x38), 1.0);
        assert_eq!(F8E4M3FNUZ.value_of_bits(0x7F), 240.0);
        assert!(F8E4M3FNUZ.value_of_bits(0x80).is_nan());
        assert_eq!(F8E5M2FNUZ.value_of_bits(0x7F), 57344.0);
        assert_eq!(F8E4M3B11FNUZ.value_of_bits(0x7F), 30.0);
        assert_eq!(F8E3M4.value_of_bits(0x6F), 15.5);
        assert_eq!(F8E8M0FNU.value_of_bits(127), 1.0);
        assert!(F8E8M0FNU.value_of_bits(0xFF).is_nan());
        assert_eq!(F6E2M3FN.value_of_bits(0x1F), 7.5);
        assert_eq!(F6E3M2FN.value_of_bits(0x1F), 28.0);
        assert_eq!(F4E2M1FN.value_of_bits(0x7), 6.0);
        assert_eq!(F4E2M1FN.value_of_bits(0x1), 0.5);
        assert_eq!(F4E2M1FN.value_of_bits(0xF), -6.0);
        // Subnormals: the smallest positive value of f8E4M3FN is 2^-9.
        assert_eq!(F8E4M3FN.value_of_bits(0x01), 2f64.powi(-9));
    }

    #[test]
    fn literals_round_to_nearest_even() {
        assert_eq!(F4E2M1FN.round(2.5), Some(2.0)); // between 2 and 3: to even
        assert_eq!(F4E2M1FN.round(2.6), Some(3.0));
        assert_eq!(F4E2M1FN.round(-0.5), Some(-0.5));
        assert_eq!(F4E2M1FN.round(6.9), Some(6.0));
        assert_eq!(F4E2M1FN.round(7.0), None); // past the last step: no infinity
        assert_eq!(F8E4M3.round(1.0), Some(1.0));
        assert_eq!(F8E4M3.round(247.0), Some(240.0));
        assert_eq!(F8E4M3.round(248.0), Some(f64::INFINITY));
        assert_eq!(F8E4M3FN.round(1000.0), None);
        assert_eq!(F8E8M0FNU.round(3.0), Some(4.0)); // tie: away from zero (odd significand)
        assert_eq!(F8E8M0FNU.round(0.0), None);
        assert!(
            F8E4M3FN
                .round(-0.0)
                .is_some_and(|z| z == 0.0 && z.is_sign_negative())
        );
    }

    #[test]
    fn every_value_encodes_back_to_its_pattern() {
        for (format, _, _) in NarrowFloat::ALL {
            for bits in format.patterns() {
                let v = format.value_of_bits(bits);
                if v.is_nan() {
                    continue;
                }
                assert_eq!(format.round(v), Some(v), "{format:?} {bits:#x}");
                assert_eq!(format.bits_of_value(v), bits, "{format:?} {bits:#x}");
            }
        }
    }
}
