//! The oracle's own reading of every real element type: decoding an element's bits to its
//! exact value and rounding an exact value to the type, written apart from the evaluator's
//! (which goes through `half` for f16/bf16 and `hlo::narrow_float` for the narrow floats).
//!
//! f16 and bf16 are decoded and rounded by formula from their exponent and mantissa widths;
//! the f8 family and f4e2m1fn by the `ml_dtypes` tables in `testdata/tables`: an element's
//! value is the table's, and rounding picks the nearest value the table lists (ties to the
//! even encoding, past the largest finite value infinity where the type has one and NaN
//! where it has not), which the tests hold against every conversion the tables record.

use hlo::primitive::PrimitiveType;

/// How the oracle reads and writes one element type.
#[derive(Clone, Copy, Debug)]
pub(super) enum Format {
    Pred,
    /// An integer of this many bits.
    Int {
        bits: u32,
        signed: bool,
    },
    F32,
    F64,
    /// An IEEE binary format narrower than f32 (f16, bf16).
    Ieee {
        exponent_bits: u32,
        mantissa_bits: u32,
    },
    /// A narrow float read through its `ml_dtypes` table.
    Table(&'static Table),
}

/// An element's value: integers exactly, floats as f64 (every real type's values are f64s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    pub(super) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

impl Format {
    /// The format of `ty`; `None` for complex, token and opaque types.
    pub(super) fn of(ty: PrimitiveType) -> Option<Format> {
        use PrimitiveType::*;
        Some(match ty {
            Pred => Format::Pred,
            F32 => Format::F32,
            F64 => Format::F64,
            F16 => Format::Ieee {
                exponent_bits: 5,
                mantissa_bits: 10,
            },
            BF16 => Format::Ieee {
                exponent_bits: 8,
                mantissa_bits: 7,
            },
            t if t.is_int() => Format::Int {
                bits: t.bit_width(),
                signed: t.is_signed_int(),
            },
            t => Format::Table(Table::of(t)?),
        })
    }

    /// Whether values of the format are floats.
    pub(super) fn is_float(self) -> bool {
        !matches!(self, Format::Pred | Format::Int { .. })
    }

    /// The value of the element with bit pattern `code`.
    pub(super) fn decode(self, code: u128) -> Num {
        match self {
            Format::Pred => Num::Int((code & 1) as i128),
            Format::Int { bits, signed } => {
                let low = code & ((1u128 << bits) - 1);
                if signed && low >> (bits - 1) == 1 {
                    Num::Int(low as i128 - (1i128 << bits))
                } else {
                    Num::Int(low as i128)
                }
            }
            Format::F32 => Num::Float(f64::from(f32::from_bits(code as u32))),
            Format::F64 => Num::Float(f64::from_bits(code as u64)),
            Format::Ieee {
                exponent_bits,
                mantissa_bits,
            } => Num::Float(decode_ieee(code as u32, exponent_bits, mantissa_bits)),
            Format::Table(table) => Num::Float(table.decode(code as u32)),
        }
    }

    /// The float `x` rounded to the format, as an encoding (to nearest, ties to even). f16 and
    /// bf16 are reached through f32, as XLA's `convert` and the f32 arithmetic of the narrow
    /// types do; the table formats from `x` itself.
    pub(super) fn round(self, x: f64) -> u128 {
        match self {
            Format::Pred => u128::from(x != 0.0),
            Format::Int { .. } => unreachable!("integers are not rounded to"),
            Format::F32 => u128::from((x as f32).to_bits()),
            Format::F64 => u128::from(x.to_bits()),
            Format::Ieee {
                exponent_bits,
                mantissa_bits,
            } => u128::from(round_ieee(
                f64::from(x as f32),
                exponent_bits,
                mantissa_bits,
            )),
            Format::Table(table) => u128::from(table.round(x)),
        }
    }

    /// Whether the element `code` is a NaN.
    pub(super) fn is_nan(self, code: u128) -> bool {
        matches!(self.decode(code), Num::Float(f) if f.is_nan())
    }

    /// The position of `code` on the number line, counted in steps of the format (so the
    /// distance of two finite elements in units in the last place; -0 and +0 are one apart).
    pub(super) fn ordinal(self, code: u128) -> i128 {
        let (width, signed) = match self {
            Format::Pred => return (code & 1) as i128,
            Format::Int { .. } => unreachable!("integers have no ulps"),
            Format::F32 => (32, true),
            Format::F64 => (64, true),
            Format::Ieee {
                exponent_bits,
                mantissa_bits,
            } => (1 + exponent_bits + mantissa_bits, true),
            Format::Table(table) => (table.width, table.signed),
        };
        if !signed {
            return code as i128;
        }
        let magnitude = (code & ((1u128 << (width - 1)) - 1)) as i128;
        if code >> (width - 1) & 1 == 1 {
            -magnitude - 1
        } else {
            magnitude
        }
    }

    /// The smallest positive normal value (where relative accuracy ends).
    pub(super) fn smallest_normal(self) -> f64 {
        match self {
            Format::F32 => f64::from(f32::MIN_POSITIVE),
            Format::F64 => f64::MIN_POSITIVE,
            Format::Ieee { exponent_bits, .. } => 2f64.powi(2 - (1 << (exponent_bits - 1))),
            Format::Table(table) => table.smallest_normal,
            Format::Pred | Format::Int { .. } => 0.0,
        }
    }
}

/// The value of IEEE binary element `code` with the given field widths.
fn decode_ieee(code: u32, exponent_bits: u32, mantissa_bits: u32) -> f64 {
    let sign = if code >> (exponent_bits + mantissa_bits) & 1 == 1 {
        -1.0
    } else {
        1.0
    };
    let exponent = (code >> mantissa_bits) & ((1 << exponent_bits) - 1);
    let mantissa = f64::from(code & ((1 << mantissa_bits) - 1));
    let bias = (1 << (exponent_bits - 1)) - 1;
    let scale = 2f64.powi(mantissa_bits as i32);
    if exponent == (1 << exponent_bits) - 1 {
        return if mantissa == 0.0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if exponent == 0 {
        return sign * mantissa / scale * 2f64.powi(1 - bias);
    }
    sign * (1.0 + mantissa / scale) * 2f64.powi(exponent as i32 - bias)
}

/// `x` rounded to the IEEE binary format with the given field widths, to nearest with ties
/// to even, overflowing to infinity: scaled so that the format's last place is 1, rounded by
/// std's `round_ties_even`, and encoded field by field.
fn round_ieee(x: f64, exponent_bits: u32, mantissa_bits: u32) -> u32 {
    let sign = u32::from(x.is_sign_negative()) << (exponent_bits + mantissa_bits);
    let all_ones = (1 << exponent_bits) - 1;
    if x.is_nan() {
        return (all_ones << mantissa_bits) | (1 << (mantissa_bits - 1));
    }
    let bias = (1 << (exponent_bits - 1)) - 1;
    let min_exponent = 1 - bias;
    let a = x.abs();
    if a == 0.0 {
        return sign;
    }
    // The exponent of the last place: the binade's, or the subnormals' below the normals.
    let binade = if a.is_infinite() {
        i32::MAX
    } else {
        a.log2().floor() as i32
    };
    let last_place = binade.max(min_exponent) - mantissa_bits as i32;
    let units = if a.is_infinite() {
        f64::INFINITY
    } else {
        (a * 2f64.powi(-last_place)).round_ties_even()
    };
    let rounded = units * 2f64.powi(last_place);
    let largest = (2.0 - 2f64.powi(-(mantissa_bits as i32))) * 2f64.powi(bias);
    if rounded > largest {
        return sign | (all_ones << mantissa_bits);
    }
    let binade = rounded.log2().floor() as i32;
    if binade < min_exponent {
        return sign | (rounded * 2f64.powi(mantissa_bits as i32 - min_exponent)) as u32;
    }
    let fraction =
        rounded * 2f64.powi(mantissa_bits as i32 - binade) - 2f64.powi(mantissa_bits as i32);
    sign | (((binade + bias) as u32) << mantissa_bits) | fraction as u32
}

/// A narrow float type's `ml_dtypes` table: the value of every encoding.
#[derive(Debug)]
pub(super) struct Table {
    width: u32,
    /// Whether the top bit is a sign (`f8e8m0fnu` is unsigned).
    signed: bool,
    /// The value of each encoding (NaN for the NaN encodings).
    values: Vec<f64>,
    /// The finite values with their encodings, ascending (-0 before +0).
    finite: Vec<(f64, u32)>,
    positive_infinity: Option<u32>,
    negative_infinity: Option<u32>,
    /// What a NaN becomes (a zero in `f4e2m1fn`, which has no NaN).
    nan: u32,
    has_nan: bool,
    smallest_normal: f64,
}

/// The `ml_dtypes` table of each narrow float type.
const TABLE_FILES: [(PrimitiveType, &str); 9] = [
    (
        PrimitiveType::F4E2M1FN,
        include_str!("../../../../testdata/tables/f4e2m1fn.txt"),
    ),
    (
        PrimitiveType::F8E3M4,
        include_str!("../../../../testdata/tables/f8e3m4.txt"),
    ),
    (
        PrimitiveType::F8E4M3,
        include_str!("../../../../testdata/tables/f8e4m3.txt"),
    ),
    (
        PrimitiveType::F8E4M3FN,
        include_str!("../../../../testdata/tables/f8e4m3fn.txt"),
    ),
    (
        PrimitiveType::F8E4M3B11FNUZ,
        include_str!("../../../../testdata/tables/f8e4m3b11fnuz.txt"),
    ),
    (
        PrimitiveType::F8E4M3FNUZ,
        include_str!("../../../../testdata/tables/f8e4m3fnuz.txt"),
    ),
    (
        PrimitiveType::F8E5M2,
        include_str!("../../../../testdata/tables/f8e5m2.txt"),
    ),
    (
        PrimitiveType::F8E5M2FNUZ,
        include_str!("../../../../testdata/tables/f8e5m2fnuz.txt"),
    ),
    (
        PrimitiveType::F8E8M0FNU,
        include_str!("../../../../testdata/tables/f8e8m0fnu.txt"),
    ),
];

impl Table {
    /// The table of `ty`, parsed once; `None` for a type without one.
    fn of(ty: PrimitiveType) -> Option<&'static Table> {
        static TABLES: std::sync::OnceLock<Vec<(PrimitiveType, Table)>> =
            std::sync::OnceLock::new();
        TABLES
            .get_or_init(|| {
                TABLE_FILES
                    .iter()
                    .map(|&(t, text)| (t, Table::parse(text)))
                    .collect()
            })
            .iter()
            .find(|(t, _)| *t == ty)
            .map(|(_, table)| table)
    }
}

impl Table {
    /// The table from the `d <code> <f32 bits>` rows of a file of `testdata/tables`.
    fn parse(text: &str) -> Table {
        let decoded: Vec<(u32, f64)> = rows(text, 'd')
            .map(|(code, bits)| (code, f64::from(f32::from_bits(bits))))
            .collect();
        let values: Vec<f64> = decoded.iter().map(|&(_, v)| v).collect();
        assert!(
            decoded
                .iter()
                .enumerate()
                .all(|(i, &(code, _))| code as usize == i),
            "a table lists every encoding in order"
        );
        let width = values.len().trailing_zeros();
        let signed = values.iter().any(|v| *v < 0.0);
        let mut finite: Vec<(f64, u32)> = decoded
            .iter()
            .filter(|(_, v)| v.is_finite())
            .map(|&(c, v)| (v, c))
            .collect();
        finite.sort_by(|a, b| a.0.total_cmp(&b.0));
        let find = |want: f64| decoded.iter().find(|&&(_, v)| v == want).map(|&(c, _)| c);
        let smallest_normal = smallest_normal(&finite);
        Table {
            width,
            signed,
            positive_infinity: find(f64::INFINITY),
            negative_infinity: find(f64::NEG_INFINITY),
            nan: rows(text, 'e')
                .find(|&(bits, _)| bits == f32::NAN.to_bits())
                .map(|(_, code)| code)
                .expect("every table converts NaN"),
            has_nan: decoded.iter().any(|(_, v)| v.is_nan()),
            values,
            finite,
            smallest_normal,
        }
    }

    fn decode(&self, code: u32) -> f64 {
        self.values[code as usize & (self.values.len() - 1)]
    }

    /// The encoding nearest `x` (ties to the even encoding); past the largest finite value
    /// (by at least half its last place) infinity, or NaN where the type has none, or the
    /// largest value where it has neither.
    fn round(&self, x: f64) -> u32 {
        if x.is_nan() {
            return self.nan;
        }
        if !self.signed {
            return self.round_exponent_only(x);
        }
        let (lowest, low_code) = self.finite[0];
        let (highest, high_code) = *self.finite.last().expect("finite values");
        // Past the range: infinity, else NaN, else (neither exists) the largest value.
        let overflow = |infinity: Option<u32>, largest: u32| match infinity {
            Some(code) => code,
            None if self.has_nan => self.nan,
            None => largest,
        };
        if x > highest {
            let next = 2.0 * highest - self.finite[self.finite.len() - 2].0;
            return match nearer(x, (highest, high_code), (next, high_code + 1)) {
                Some(code) if code == high_code => high_code,
                _ => overflow(self.positive_infinity, high_code),
            };
        }
        if x < lowest {
            let next = 2.0 * lowest - self.finite[1].0;
            return match nearer(x, (lowest, low_code), (next, low_code + 1)) {
                Some(code) if code == low_code => low_code,
                _ => overflow(self.negative_infinity, low_code),
            };
        }
        let above = self.finite.partition_point(|&(v, _)| v < x);
        let (v, code) = self.finite[above];
        if v == x {
            // Zero takes the sign of x where the type has both zeros.
            if v == 0.0 {
                return self.zero(x.is_sign_negative()).unwrap_or(code);
            }
            return code;
        }
        let below = self.finite[above - 1];
        let code = nearer(x, below, (v, code)).expect("a neighbour");
        if self.decode(code) == 0.0 {
            return self.zero(x.is_sign_negative()).unwrap_or(code);
        }
        code
    }

    /// `f8e8m0fnu` (no sign, no zero, no mantissa: powers of two) as its table rounds: NaN
    /// for zero, negative values and infinities; up from 1.5 times a power of two (past the
    /// largest: NaN); anything in f32's subnormal range above the smallest value gives the
    /// next one (`ml_dtypes` rounds through f32's exponent field).
    fn round_exponent_only(&self, x: f64) -> u32 {
        if x <= 0.0 || x.is_infinite() {
            return self.nan;
        }
        let (smallest, smallest_code) = self.finite[0];
        if x <= smallest {
            return smallest_code;
        }
        if x < f64::from(f32::MIN_POSITIVE) {
            return self.finite[1].1;
        }
        let above = self.finite.partition_point(|&(v, _)| v < x);
        let (below, below_code) = self.finite[above - 1];
        match self.finite.get(above) {
            Some(&(v, code)) if v == x || x >= 1.5 * below => code,
            None if x >= 1.5 * below => self.nan,
            _ => below_code,
        }
    }

    /// The encoding of the zero of this sign, if the type has one.
    fn zero(&self, negative: bool) -> Option<u32> {
        self.finite
            .iter()
            .find(|(v, _)| *v == 0.0 && v.is_sign_negative() == negative)
            .map(|&(_, c)| c)
    }
}

/// The encoding of whichever of `a` and `b` (values with encodings, `a` below `b`) is nearer
/// `x`, the even encoding on a tie; `None` when neither is finite.
fn nearer(x: f64, a: (f64, u32), b: (f64, u32)) -> Option<u32> {
    let (low, high) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    let middle = low.0 / 2.0 + high.0 / 2.0;
    Some(if x < middle {
        low.1
    } else if x > middle {
        high.1
    } else if low.1 % 2 == 0 {
        low.1
    } else {
        high.1
    })
}

/// The least positive value after which the spacing doubles no more below it: the smallest
/// normal (the first value whose gap to the next equals its gap to the previous doubled).
fn smallest_normal(finite: &[(f64, u32)]) -> f64 {
    let positive: Vec<f64> = finite.iter().map(|p| p.0).filter(|v| *v > 0.0).collect();
    let first_gap = positive.get(1).map_or(0.0, |v| v - positive[0]);
    positive
        .windows(2)
        .find(|w| w[1] - w[0] > first_gap)
        .map_or(positive[0], |w| w[0])
}

/// The `(code, bits)` or `(bits, code)` pairs of the rows of `kind` (`'d'` or `'e'`).
fn rows(text: &str, kind: char) -> impl Iterator<Item = (u32, u32)> + '_ {
    text.lines().filter_map(move |line| {
        let mut words = line.split_whitespace();
        if words.next()? != kind.to_string() {
            return None;
        }
        let a = u32::from_str_radix(words.next()?, 16).ok()?;
        let b = u32::from_str_radix(words.next()?, 16).ok()?;
        Some((a, b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rounding the oracle does is `ml_dtypes`' for every conversion its tables record.
    #[test]
    fn table_rounding_is_ml_dtypes() {
        for (ty, source) in TABLE_FILES {
            let table = Table::of(ty).unwrap();
            let mut wrong = Vec::new();
            // A NaN-less type's stand-in for a NaN is a zero whose sign HLO leaves open
            // (`ml_dtypes` gives -NaN +0 and NaN -0; XLA and the evaluator -0 for both).
            let negative_nan = |bits: u32| !table.has_nan && bits == (-f32::NAN).to_bits();
            for (bits, code) in rows(source, 'e').filter(|&(bits, _)| !negative_nan(bits)) {
                let x = f64::from(f32::from_bits(bits));
                let got = table.round(x);
                let both_nan = table.decode(got).is_nan() && table.decode(code).is_nan();
                if got != code && !both_nan {
                    wrong.push(format!("{x:e}: {got:#x}, ml_dtypes {code:#x}"));
                }
            }
            assert!(wrong.is_empty(), "{ty}: {}", wrong.join("; "));
        }
    }

    /// f16 and bf16 by formula agree with every f32 input's rounding through `half` on a
    /// sweep of f32 bit patterns (ties, subnormals, overflow, both signs).
    #[test]
    fn ieee_rounding_matches_half_on_a_sweep() {
        for bits in (0..u32::MAX)
            .step_by(4093)
            .chain([0x477f_f000, 0x3380_0000, 0x3380_0001])
        {
            let x = f32::from_bits(bits);
            let f16 = Format::of(PrimitiveType::F16).unwrap();
            let bf16 = Format::of(PrimitiveType::BF16).unwrap();
            let (a, b) = (
                half::f16::from_f32(x).to_bits() as u128,
                half::bf16::from_f32(x).to_bits() as u128,
            );
            let (c, d) = (f16.round(f64::from(x)), bf16.round(f64::from(x)));
            if x.is_nan() {
                assert!(f16.is_nan(c) && bf16.is_nan(d));
                continue;
            }
            assert_eq!(c, a, "f16 of {x:e}");
            assert_eq!(d, b, "bf16 of {x:e}");
            assert_eq!(
                f16.decode(c),
                Num::Float(half::f16::from_bits(a as u16).to_f64())
            );
        }
    }
}
