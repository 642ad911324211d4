//! The float types narrower than f16: `f4e2m1fn` and the f8 family. Each is a sign bit,
//! `exponent_bits` and `mantissa_bits`, with subnormals, and one of four conventions for
//! what IEEE spends on infinities and NaN ([`Specials`]) — or, for `f8e8m0fnu` (the
//! microscaling scale type), an unsigned power of two ([`Specials::ExponentOnly`]). Conversions to
//! them round to nearest, ties to even, as `ml_dtypes` and XLA's `expand_float_ops` do;
//! what happens past the largest finite value depends on the convention. The evaluator
//! ([`crate::evaluate`]) and the emitters (`emitters::elemental::narrow_float`) both read
//! these descriptions, and `testdata/tables` holds `ml_dtypes`' results they are tested
//! against.

use crate::primitive::PrimitiveType;

/// What a format does with the encodings IEEE gives to infinities and NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Specials {
    /// IEEE's: the all-ones exponent holds ±infinity (mantissa 0) and NaN (`f8e5m2`,
    /// `f8e4m3`, `f8e3m4`). Past the range: infinity.
    Ieee,
    /// No infinity; only all-ones exponent and mantissa is NaN (`f8e4m3fn`). Past the range:
    /// NaN, with the sign.
    FiniteNan,
    /// No infinity, no negative zero; NaN is `0b1000_0000` (`f8e4m3fnuz`, `f8e5m2fnuz`,
    /// `f8e4m3b11fnuz`). Past the range: NaN; a zero result is +0.
    Fnuz,
    /// Neither infinity nor NaN (`f4e2m1fn`, the microscaling element type). Past the range:
    /// the largest value, with the sign; NaN becomes the sign bit alone (XLA's stand-in).
    Saturating,
    /// `f8e8m0fnu`: no sign, no mantissa, no zero; code `c` is `2^(c - 127)` and `0xff` is
    /// NaN, which zero, negative values, infinities and values past `2^127` become. A
    /// value rounds up from 1.5 times a power of two; below f32's normal range `ml_dtypes`
    /// (whose table this follows row for row) gives `2^-126` to anything above `2^-127`.
    ExponentOnly,
}

/// One narrow float format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
    pub bias: i32,
    pub specials: Specials,
}

impl Format {
    /// The format of `ty`, if it is one of these types.
    pub fn of(ty: PrimitiveType) -> Option<Format> {
        use PrimitiveType::*;
        use Specials::*;
        let f = |exponent_bits, mantissa_bits, bias, specials| {
            Some(Format {
                exponent_bits,
                mantissa_bits,
                bias,
                specials,
            })
        };
        match ty {
            F4E2M1FN => f(2, 1, 1, Saturating),
            F8E3M4 => f(3, 4, 3, Ieee),
            F8E4M3 => f(4, 3, 7, Ieee),
            F8E4M3FN => f(4, 3, 7, FiniteNan),
            F8E4M3B11FNUZ => f(4, 3, 11, Fnuz),
            F8E4M3FNUZ => f(4, 3, 8, Fnuz),
            F8E5M2 => f(5, 2, 15, Ieee),
            F8E5M2FNUZ => f(5, 2, 16, Fnuz),
            F8E8M0FNU => f(8, 0, 127, ExponentOnly),
            _ => None,
        }
    }

    /// Bits of an encoding: the sign, the exponent and the mantissa.
    pub fn width(self) -> u32 {
        let sign = u32::from(self.specials != Specials::ExponentOnly);
        sign + self.exponent_bits + self.mantissa_bits
    }

    /// The sign bit (for `f8e8m0fnu`, which has none, its top bit).
    pub fn sign_bit(self) -> u32 {
        1 << (self.width() - 1)
    }

    /// The exponent of the smallest normal value (subnormals share it).
    pub fn min_exponent(self) -> i32 {
        1 - self.bias
    }

    /// The encoding of the largest finite magnitude.
    pub fn max_finite(self) -> u32 {
        let all = (1 << (self.width() - 1)) - 1;
        match self.specials {
            // The all-ones exponent is not finite.
            Specials::Ieee => all - (1 << self.mantissa_bits),
            // All ones is NaN.
            Specials::FiniteNan => all - 1,
            Specials::Fnuz | Specials::Saturating => all,
            Specials::ExponentOnly => 0xfe,
        }
    }

    /// The encoding a NaN becomes (`negative`: the input's sign).
    pub fn nan(self, negative: bool) -> u32 {
        let sign = if negative { self.sign_bit() } else { 0 };
        match self.specials {
            // The quiet NaN: the top mantissa bit.
            Specials::Ieee => {
                let exponent = ((1 << self.exponent_bits) - 1) << self.mantissa_bits;
                sign | exponent | 1 << (self.mantissa_bits - 1)
            }
            Specials::FiniteNan => sign | (self.sign_bit() - 1),
            Specials::Fnuz | Specials::Saturating => self.sign_bit(),
            Specials::ExponentOnly => 0xff,
        }
    }

    /// The encoding a magnitude past the range becomes, before the sign is added.
    pub fn overflow(self) -> u32 {
        match self.specials {
            Specials::Ieee => ((1 << self.exponent_bits) - 1) << self.mantissa_bits,
            Specials::FiniteNan => self.sign_bit() - 1,
            Specials::Fnuz => self.sign_bit(),
            Specials::Saturating => self.max_finite(),
            Specials::ExponentOnly => 0xff,
        }
    }

    /// Whether the sign goes on a result of this magnitude encoding (`fnuz` formats have no
    /// negative zero and one NaN).
    fn signed(self, magnitude: u32) -> bool {
        !(self.specials == Specials::Fnuz && (magnitude == 0 || magnitude == self.sign_bit()))
    }

    /// The encoding of `x`: rounded to nearest, ties to even.
    pub fn encode(self, x: f64) -> u32 {
        if self.specials == Specials::ExponentOnly {
            return encode_exponent_only(x);
        }
        let negative = x.is_sign_negative();
        if x.is_nan() {
            return self.nan(negative);
        }
        let a = x.abs();
        let m = self.mantissa_bits as i32;
        let magnitude = if a.is_infinite() {
            self.overflow()
        } else if a == 0.0 {
            0
        } else {
            // a = 2^e * 1.f; below the normal range the exponent stays the smallest, and the
            // scaled value then rounds to a subnormal's mantissa (or to the smallest normal).
            let e = exponent_of(a).max(self.min_exponent());
            let q = (a * 2f64.powi(m - e)).round_ties_even();
            let code = ((e + self.bias - 1) as f64) * 2f64.powi(m) + q;
            if code > f64::from(self.max_finite()) {
                self.overflow()
            } else {
                code as u32
            }
        };
        if negative && self.signed(magnitude) {
            magnitude | self.sign_bit()
        } else {
            magnitude
        }
    }

    /// The value of an encoding (NaN for the NaN encodings).
    pub fn decode(self, code: u32) -> f64 {
        if self.specials == Specials::ExponentOnly {
            return if code == 0xff {
                f64::NAN
            } else {
                2f64.powi(code as i32 - 127)
            };
        }
        let m = self.mantissa_bits;
        let magnitude = code & (self.sign_bit() - 1);
        let negative = code & self.sign_bit() != 0;
        let exponent = magnitude >> m;
        let mantissa = f64::from(magnitude & ((1 << m) - 1));
        let all_ones = (1 << self.exponent_bits) - 1;
        let value = match self.specials {
            Specials::Ieee if exponent == all_ones && mantissa == 0.0 => f64::INFINITY,
            Specials::Ieee if exponent == all_ones => return f64::NAN,
            Specials::FiniteNan if magnitude == self.sign_bit() - 1 => return f64::NAN,
            Specials::Fnuz if code == self.sign_bit() => return f64::NAN,
            _ if exponent == 0 => mantissa * 2f64.powi(self.min_exponent() - m as i32),
            _ => {
                (2f64.powi(m as i32) + mantissa) * 2f64.powi(exponent as i32 - self.bias - m as i32)
            }
        };
        if negative { -value } else { value }
    }
}

/// The hardware conversion: sm_89 and later convert f32 to `f8e4m3fn` and `f8e5m2` in one
/// instruction, PTX's `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` (LLVM's
/// `llvm.nvvm.ff.to.{e4m3,e5m2}x2.rn`). It rounds to nearest, ties to even, but saturates:
/// past the range, infinities included, it gives the largest finite value with the sign, and
/// every NaN gives `0x7f`. XLA (its `convert-float-nvidia` pass) uses it and then puts back
/// what the type says past the range ([`HardwareConversion::overflow_threshold`]); the
/// interpreter executes the instruction with [`HardwareConversion::convert`].
///
/// The way back is one instruction too, `cvt.rn.f16x2.{e4m3,e5m2}x2` (LLVM's
/// `llvm.nvvm.{e4m3,e5m2}x2.to.f16x2.rn`): two codes to two f16, exact (every value of both
/// types is an f16), what XLA's pass emits before widening the f16 to f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HardwareConversion {
    pub format: Format,
    /// The LLVM intrinsic: two f32 in, the two codes in an `i16` (the first operand's in the
    /// high byte).
    pub intrinsic: &'static str,
    /// The LLVM intrinsic back: the two codes of an `i16` to a `<2 x half>` (the low byte's
    /// value is element 0).
    pub widening: &'static str,
}

impl HardwareConversion {
    /// The instruction converting f32 to `ty`, where sm_90 has one.
    pub fn to(ty: PrimitiveType) -> Option<HardwareConversion> {
        let (intrinsic, widening) = match ty {
            PrimitiveType::F8E4M3FN => {
                ("llvm.nvvm.ff.to.e4m3x2.rn", "llvm.nvvm.e4m3x2.to.f16x2.rn")
            }
            PrimitiveType::F8E5M2 => ("llvm.nvvm.ff.to.e5m2x2.rn", "llvm.nvvm.e5m2x2.to.f16x2.rn"),
            _ => return None,
        };
        Some(HardwareConversion {
            format: Format::of(ty)?,
            intrinsic,
            widening,
        })
    }

    fn all() -> impl Iterator<Item = HardwareConversion> {
        [PrimitiveType::F8E4M3FN, PrimitiveType::F8E5M2]
            .into_iter()
            .filter_map(HardwareConversion::to)
    }

    /// The conversion named by an intrinsic.
    pub fn by_intrinsic(name: &str) -> Option<HardwareConversion> {
        HardwareConversion::all().find(|c| c.intrinsic == name)
    }

    /// The conversion whose way back ([`Self::widening`]) an intrinsic is.
    pub fn by_widening(name: &str) -> Option<HardwareConversion> {
        HardwareConversion::all().find(|c| c.widening == name)
    }

    /// The f16 bits the widening instruction gives for `code` (NaN as `0x7fff`).
    pub fn widen(self, code: u32) -> u16 {
        let value = self.format.decode(code & 0xff);
        if value.is_nan() {
            0x7fff
        } else {
            half::f16::from_f64(value).to_bits()
        }
    }

    /// The instruction's code for `x`.
    pub fn convert(self, x: f32) -> u32 {
        if x.is_nan() {
            return 0x7f;
        }
        let f = self.format;
        let code = f.encode(f64::from(x));
        if code & (f.sign_bit() - 1) > f.max_finite() {
            (code & f.sign_bit()) | f.max_finite()
        } else {
            code
        }
    }

    /// The largest f32 magnitude, as bits, that still rounds to a finite value: the
    /// midpoint between the largest finite value and the next power of its step, or the
    /// f32 just below it when ties go up there (the largest code's mantissa is odd).
    /// Magnitudes above it, up to infinity, take the format's overflow code.
    pub fn overflow_threshold(self) -> u32 {
        let f = self.format;
        let largest = f.max_finite();
        let value = f.decode(largest);
        let step = 2f64.powi(exponent_of(value) - f.mantissa_bits as i32);
        let midpoint = (value + step / 2.0) as f32;
        midpoint.to_bits() - (largest & 1)
    }

    /// What XLA's kernels compute: the instruction's code, with the format's overflow code
    /// (and the sign) for magnitudes past [`Self::overflow_threshold`].
    pub fn convert_as_xla(self, x: f32) -> u32 {
        let magnitude = x.to_bits() & 0x7fff_ffff;
        if magnitude > self.overflow_threshold() && magnitude <= f32::INFINITY.to_bits() {
            let sign = if x.is_sign_negative() {
                self.format.sign_bit()
            } else {
                0
            };
            self.format.overflow() | sign
        } else {
            self.convert(x)
        }
    }
}

/// `f8e8m0fnu`'s encoding (see [`Specials::ExponentOnly`]).
fn encode_exponent_only(x: f64) -> u32 {
    if !(x.is_finite() && x > 0.0) {
        return 0xff;
    }
    if x < 2f64.powi(-126) {
        return u32::from(x > 2f64.powi(-127));
    }
    let e = exponent_of(x);
    let up = x / 2f64.powi(e) >= 1.5;
    let code = e + 127 + i32::from(up);
    if code > 254 { 0xff } else { code as u32 }
}

/// `floor(log2(a))` of a positive finite `a`, exactly.
fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    if field == 0 {
        // An f64 subnormal: far below every narrow format's range.
        -1075
    } else {
        field - 1023
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of `testdata/tables/<name>.txt`: `e <f32 bits> <code>` (conversion) and
    /// `d <code> <f32 bits>` (value); `skip` leaves out inputs where XLA's kernels and
    /// ml_dtypes differ.
    fn check_table(ty: PrimitiveType, table: &str, skip: impl Fn(f32) -> bool) -> usize {
        let format = Format::of(ty).unwrap();
        let mut rows = 0;
        for line in table.lines().filter(|l| !l.starts_with('#')) {
            let fields: Vec<&str> = line.split(' ').collect();
            let hex = |s: &str| u32::from_str_radix(s, 16).unwrap();
            match fields[..] {
                ["e", x, code] => {
                    let x = f32::from_bits(hex(x));
                    if skip(x) {
                        continue;
                    }
                    let got = format.encode(f64::from(x));
                    assert_eq!(got, hex(code), "{ty}: {x:e} ({:#010x})", x.to_bits());
                }
                ["d", code, value] => {
                    let (got, want) = (format.decode(hex(code)), f32::from_bits(hex(value)));
                    assert!(
                        got.is_nan() && want.is_nan() || got == f64::from(want),
                        "{ty}: code {code}: {got} vs {want}"
                    );
                }
                _ => panic!("bad row '{line}'"),
            }
            rows += 1;
        }
        rows
    }

    /// The hardware instruction plus XLA's overflow fix gives the type's own conversion
    /// (ml_dtypes') for every f32 but NaN, which the instruction makes `0x7f` whatever its
    /// sign and payload: a sweep over the f32 bit patterns, and every pattern near the
    /// overflow threshold.
    #[test]
    fn the_hardware_conversion_with_xla_s_fix_is_the_type_s() {
        for ty in [PrimitiveType::F8E4M3FN, PrimitiveType::F8E5M2] {
            let hw = HardwareConversion::to(ty).unwrap();
            let threshold = hw.overflow_threshold();
            let near = (threshold - 64..threshold + 64).flat_map(|b| [b, b | 0x8000_0000]);
            let specials = [0x7f80_0000, 0xff80_0000, 0x0000_0001, 0x8000_0000, 0];
            for bits in (0..=u32::MAX).step_by(4099).chain(near).chain(specials) {
                let x = f32::from_bits(bits);
                let got = hw.convert_as_xla(x);
                if x.is_nan() {
                    assert_eq!(got, 0x7f, "{ty}: {bits:#010x}");
                } else {
                    let want = hw.format.encode(f64::from(x));
                    assert_eq!(got, want, "{ty}: {x:e} ({bits:#010x})");
                }
            }
        }
        // The thresholds XLA's formula gives: 464 (ties to 448, even) and just below 61440
        // (ties to infinity from 57344, odd).
        let e4m3 = HardwareConversion::to(PrimitiveType::F8E4M3FN).unwrap();
        assert_eq!(f32::from_bits(e4m3.overflow_threshold()), 464.0);
        let e5m2 = HardwareConversion::to(PrimitiveType::F8E5M2).unwrap();
        assert_eq!(e5m2.overflow_threshold(), 61440f32.to_bits() - 1);
        assert_eq!(e4m3.convert(1e9), 0x7e);
        assert_eq!(e4m3.convert(f32::NEG_INFINITY), 0xfe);
        assert_eq!(e5m2.convert(-f32::NAN), 0x7f);
    }

    /// The widening instruction is exact: every code's f16 is the type's value (NaN for
    /// the NaN codes), so the kernels' `cvt` decode and the evaluator's arithmetic agree.
    #[test]
    fn the_hardware_widening_is_exact() {
        for ty in [PrimitiveType::F8E4M3FN, PrimitiveType::F8E5M2] {
            let hw = HardwareConversion::to(ty).unwrap();
            assert_eq!(HardwareConversion::by_widening(hw.widening), Some(hw));
            for code in 0..=255 {
                let want = hw.format.decode(code);
                let got = half::f16::from_bits(hw.widen(code)).to_f64();
                assert!(
                    got == want || got.is_nan() && want.is_nan(),
                    "{ty} {code:#04x}"
                );
            }
        }
    }

    macro_rules! table {
        ($name:literal) => {
            include_str!(concat!("../../../testdata/tables/", $name, ".txt"))
        };
    }

    #[test]
    fn conversions_match_ml_dtypes() {
        use PrimitiveType::*;
        let none = |_: f32| false;
        for (ty, table) in [
            (F8E3M4, table!("f8e3m4")),
            (F8E4M3, table!("f8e4m3")),
            (F8E4M3FN, table!("f8e4m3fn")),
            (F8E4M3B11FNUZ, table!("f8e4m3b11fnuz")),
            (F8E4M3FNUZ, table!("f8e4m3fnuz")),
            (F8E5M2, table!("f8e5m2")),
            (F8E5M2FNUZ, table!("f8e5m2fnuz")),
            (F8E8M0FNU, table!("f8e8m0fnu")),
        ] {
            assert!(check_table(ty, table, none) > 1500, "{ty}");
        }
        // -NaN: ml_dtypes gives +0 (its NaN stand-in with the sign flipped), XLA's kernels
        // the sign bit alone.
        let negative_nan = |x: f32| x.is_nan() && x.is_sign_negative();
        assert_eq!(
            check_table(F4E2M1FN, table!("f4e2m1fn"), negative_nan),
            134 + 16
        );
    }
}
