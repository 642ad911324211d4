//! `f4e2m1fn`, the OCP microscaling 4-bit float: a sign, two exponent bits (bias 1) and one
//! mantissa bit, so the magnitudes 0, 0.5, 1, 1.5, 2, 3, 4 and 6; no infinity, no NaN.
//! Conversions to it round to nearest, ties to even, as `ml_dtypes` and XLA's
//! `expand_float_ops` do: magnitudes past 6 (infinities included) saturate to ±6 and a
//! NaN becomes `0b1000` (-0), XLA's stand-in for the NaN the type lacks. Ops compute in
//! f32 and round the result, as for f16 and bf16. Stored packed, two to a byte.

use super::elementwise::{F32Binary, F32Unary, F64Binary, F64Unary, Float};
use super::value::{Element, Elements, Num};
use crate::primitive::PrimitiveType;

/// An `f4e2m1fn` element: its 4-bit encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct F4E2M1FN(u8);

/// The magnitude of each encoding without its sign bit.
const MAGNITUDES: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];

/// The magnitude from which each encoding (after 0) is the nearest, ties to even: a tie
/// goes up only to an even encoding.
const FROM: [(f64, bool); 7] = [
    (0.25, false), // 0 | 0.5: a tie stays at 0 (even)
    (0.75, true),  // 0.5 | 1: a tie goes to 1 (even)
    (1.25, false),
    (1.75, true),
    (2.5, false),
    (3.5, true),
    (5.0, false),
];

impl F4E2M1FN {
    /// The 4-bit encoding.
    pub fn bits(self) -> u8 {
        self.0
    }

    pub fn from_f32(x: f32) -> F4E2M1FN {
        F4E2M1FN::from_f64(f64::from(x))
    }

    /// Rounded once, from the exact value (no double rounding through f32).
    pub fn from_f64(x: f64) -> F4E2M1FN {
        if x.is_nan() {
            return F4E2M1FN(0b1000);
        }
        let m = x.abs();
        let code = FROM
            .iter()
            .filter(|&&(edge, tie_up)| m > edge || (tie_up && m == edge))
            .count() as u8;
        F4E2M1FN(code | if x.is_sign_negative() { 0b1000 } else { 0 })
    }

    pub fn to_f32(self) -> f32 {
        let m = MAGNITUDES[usize::from(self.0 & 0b111)];
        if self.0 & 0b1000 != 0 { -m } else { m }
    }
}

impl Element for F4E2M1FN {
    const TYPE: PrimitiveType = PrimitiveType::F4E2M1FN;
    fn to_num(self) -> Num {
        Num::Float(f64::from(self.to_f32()))
    }
    fn from_num(n: Num) -> F4E2M1FN {
        match n {
            Num::Int(i) => F4E2M1FN::from_f64(i as f64),
            Num::Float(f) => F4E2M1FN::from_f64(f),
        }
    }
    fn pattern(self) -> u64 {
        u64::from(self.0)
    }
    fn from_pattern(bits: u64) -> F4E2M1FN {
        F4E2M1FN(bits as u8 & 0b1111)
    }
    fn wrap(v: Vec<F4E2M1FN>) -> Elements {
        Elements::F4E2M1FN(v)
    }
    fn slice(e: &Elements) -> Option<&[F4E2M1FN]> {
        match e {
            Elements::F4E2M1FN(v) => Some(v),
            _ => None,
        }
    }
}

impl Float for F4E2M1FN {
    fn apply1(self, f: F32Unary, _: F64Unary) -> F4E2M1FN {
        F4E2M1FN::from_f32(f(self.to_f32()))
    }
    fn apply2(self, other: F4E2M1FN, f: F32Binary, _: F64Binary) -> F4E2M1FN {
        F4E2M1FN::from_f32(f(self.to_f32(), other.to_f32()))
    }
    fn to_f64(self) -> f64 {
        f64::from(self.to_f32())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ml_dtypes`' conversions (`testdata/tables/f4e2m1fn.txt`), except -NaN: ml_dtypes
    /// gives +0 (its NaN stand-in with the sign flipped), XLA's kernels `0b1000`.
    #[test]
    fn conversions_match_ml_dtypes() {
        let table = include_str!("../../../../testdata/tables/f4e2m1fn.txt");
        let mut rows = 0;
        for line in table.lines().filter(|l| !l.starts_with('#')) {
            let (x, code) = line.split_once(' ').expect("'<f32 bits> <code>'");
            let x = f32::from_bits(u32::from_str_radix(x, 16).unwrap());
            let code = u8::from_str_radix(code, 16).unwrap();
            if x.is_nan() && x.is_sign_negative() {
                continue;
            }
            assert_eq!(
                F4E2M1FN::from_f32(x).bits(),
                code,
                "{x:e} ({:#010x})",
                x.to_bits()
            );
            rows += 1;
        }
        assert_eq!(rows, 134);
    }

    #[test]
    fn every_encoding_round_trips_and_rounding_ties_go_to_even() {
        for bits in 0..16u8 {
            let x = F4E2M1FN(bits);
            assert_eq!(
                F4E2M1FN::from_f32(x.to_f32()).to_f32(),
                x.to_f32(),
                "{bits:#06b}"
            );
        }
        let code = |x: f32| F4E2M1FN::from_f32(x).bits();
        assert_eq!(code(0.25), 0b0000);
        assert_eq!(code(0.2500001), 0b0001);
        assert_eq!(code(0.75), 0b0010);
        assert_eq!(code(1.25), 0b0010);
        assert_eq!(code(1.75), 0b0100);
        assert_eq!(code(2.5), 0b0100);
        assert_eq!(code(3.5), 0b0110);
        assert_eq!(code(5.0), 0b0110);
        assert_eq!(code(5.5), 0b0111);
        assert_eq!(code(-1e30), 0b1111);
        assert_eq!(code(f32::INFINITY), 0b0111);
        assert_eq!(code(f32::NAN), 0b1000);
        assert_eq!(code(-0.0), 0b1000);
        assert_eq!(code(-0.1), 0b1000);
    }
}
