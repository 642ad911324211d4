//! Scalar types and their bit encodings.
//!
//! Every scalar lives in a `u64` holding its bit pattern: integers zero-extended to 64 bits
//! (an `i1` is 0 or 1, an `index` all 64 bits), floats as their IEEE encoding (an `f16` in
//! the low 16 bits). Bit patterns make bitcasts free, keep NaN payloads, and match what
//! loads and stores move; each op decodes its operands by the static type the compiler
//! recorded for it.
//!
//! Rounding helpers here are exact: conversions to `f16`/`bf16` round once, correctly, as
//! LLVM's `fptrunc`/`sitofp` do (the `half` crate's `from_f64` truncates the low bits
//! before rounding, which mis-rounds some ties).

use half::{bf16, f16};
use ir::{FloatKind, Type, TypeKind};

/// The type of a scalar value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ScalarTy {
    /// A signless integer of 1 to 64 bits, or of 128 (`i128`, held as two words: see
    /// [`crate::wide`]).
    Int(u8),
    Index,
    Float(FloatKind),
}

impl ScalarTy {
    /// The scalar type of `t`, if it is an integer of at most 64 bits or of 128, `index` or
    /// a float.
    pub(crate) fn of(t: Type) -> Option<ScalarTy> {
        match t.kind() {
            TypeKind::Index => Some(ScalarTy::Index),
            TypeKind::Int { width, .. } if (1..=64).contains(width) || *width == 128 => {
                Some(ScalarTy::Int(*width as u8))
            }
            TypeKind::Float(k) => Some(ScalarTy::Float(*k)),
            _ => None,
        }
    }

    /// Whether this is `i128`, which only [`crate::wide`]'s ops and whole moves handle.
    pub(crate) fn is_wide(self) -> bool {
        self == ScalarTy::Int(128)
    }

    /// Width in bits (64 for `index`).
    pub(crate) fn width(self) -> u32 {
        match self {
            ScalarTy::Int(w) => u32::from(w),
            ScalarTy::Index => 64,
            ScalarTy::Float(k) => k.width(),
        }
    }

    /// Bytes in memory: LLVM's store size (an `i1` takes a byte).
    pub(crate) fn bytes(self) -> usize {
        self.width().div_ceil(8) as usize
    }

    /// Bits of one element of a tensor in memory: `i2` and `i4` are packed (XLA's `s2`,
    /// `s4`), `i1` takes a byte (XLA's `pred`), the others their bytes.
    pub(crate) fn memory_bits(self) -> usize {
        match self {
            ScalarTy::Int(w @ (2 | 4)) => usize::from(w),
            _ => self.bytes() * 8,
        }
    }

    /// The mask of the bits a value of this type uses.
    pub(crate) fn mask(self) -> u64 {
        mask(self.width())
    }
}

/// The low `width` bits set.
#[inline]
pub(crate) fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// The signed value of a `width`-bit pattern.
#[inline]
pub(crate) fn sext(v: u64, width: u32) -> i64 {
    let shift = 64 - width;
    ((v << shift) as i64) >> shift
}

/// The `width`-bit pattern of the integer `v` (two's complement).
pub(crate) fn int_bits(v: i128, width: u32) -> u64 {
    (v as u64) & mask(width)
}

/// The value of a float bit pattern, exactly.
#[inline]
pub(crate) fn to_f64(kind: FloatKind, bits: u64) -> f64 {
    match kind {
        FloatKind::F64 => f64::from_bits(bits),
        FloatKind::F32 => f64::from(f32::from_bits(bits as u32)),
        FloatKind::F16 => f16::from_bits(bits as u16).to_f64(),
        FloatKind::BF16 => bf16::from_bits(bits as u16).to_f64(),
    }
}

/// The value of an `f16`/`bf16`/`f32` bit pattern as `f32`, exactly.
#[inline]
pub(crate) fn to_f32(kind: FloatKind, bits: u64) -> f32 {
    match kind {
        FloatKind::F32 => f32::from_bits(bits as u32),
        FloatKind::F16 => f16::from_bits(bits as u16).to_f32(),
        FloatKind::BF16 => bf16::from_bits(bits as u16).to_f32(),
        FloatKind::F64 => f64::from_bits(bits) as f32,
    }
}

/// `x` rounded to `kind` (`f16`, `bf16` or `f32`; ties to even), as a bit pattern. The
/// `half` crate's `f32` conversions round correctly.
#[inline]
pub(crate) fn from_f32(kind: FloatKind, x: f32) -> u64 {
    match kind {
        FloatKind::F32 => u64::from(x.to_bits()),
        FloatKind::F16 => u64::from(f16::from_f32(x).to_bits()),
        FloatKind::BF16 => u64::from(bf16::from_f32(x).to_bits()),
        FloatKind::F64 => f64::from(x).to_bits(),
    }
}

/// `x` rounded once to `kind` (ties to even), as a bit pattern.
///
/// `f64 → f32` is Rust's `as`, which rounds correctly. For `f16`/`bf16` the value first goes
/// to `f32` rounding to odd (toward zero, then the last bit set if anything was lost): with
/// at least two more bits than the target, rounding the round-to-odd value again gives the
/// correctly rounded result, subnormals of both targets included.
pub(crate) fn from_f64(kind: FloatKind, x: f64) -> u64 {
    match kind {
        FloatKind::F64 => x.to_bits(),
        FloatKind::F32 => u64::from((x as f32).to_bits()),
        FloatKind::F16 | FloatKind::BF16 => from_f32(kind, f64_to_f32_round_odd(x)),
    }
}

/// `x` as `f32`, rounded to odd.
fn f64_to_f32_round_odd(x: f64) -> f32 {
    let nearest = x as f32;
    if x.is_nan() || f64::from(nearest) == x {
        return nearest;
    }
    // Step toward zero when rounding went away from it (an infinity steps to the maximum).
    let mut bits = nearest.to_bits();
    if f64::from(nearest).abs() > x.abs() {
        bits -= 1;
    }
    f32::from_bits(bits | 1)
}

/// An integer (its magnitude and sign) converted to `kind` with one correct rounding, as
/// LLVM's `sitofp`/`uitofp` do.
pub(crate) fn int_to_float(kind: FloatKind, negative: bool, magnitude: u64) -> u64 {
    let sign = if negative { -1.0 } else { 1.0 };
    match kind {
        FloatKind::F64 => (sign * magnitude as f64).to_bits(),
        FloatKind::F32 => from_f32(kind, sign as f32 * magnitude as f32),
        FloatKind::F16 | FloatKind::BF16 => {
            // Keep 24 significant bits, the last one sticky (round to odd), which f32 holds
            // exactly; rounding that to the 16-bit type is then correct.
            let bits = 64 - magnitude.leading_zeros();
            let odd = if bits <= 24 {
                magnitude as f32
            } else {
                let shift = bits - 24;
                let top = magnitude >> shift;
                let sticky = u64::from(magnitude & mask(shift) != 0);
                (top | sticky) as f32 * (shift as f32).exp2()
            };
            from_f32(kind, sign as f32 * odd)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_from_f64_is_correct_at_ties_with_sticky_bits() {
        // 1 + 2^-8 is a bf16 tie (between 1 and 1 + 2^-7); anything above it rounds up.
        let tie = 1.0 + 2f64.powi(-8);
        assert_eq!(to_f64(FloatKind::BF16, from_f64(FloatKind::BF16, tie)), 1.0);
        let above = tie + 2f64.powi(-40);
        assert_eq!(
            to_f64(FloatKind::BF16, from_f64(FloatKind::BF16, above)),
            1.0 + 2f64.powi(-7)
        );
        // f16: 2048 + 1 is a tie (spacing 2); a hair above rounds to 2050.
        assert_eq!(
            to_f64(FloatKind::F16, from_f64(FloatKind::F16, 2049.0 + 1e-9)),
            2050.0
        );
        assert_eq!(
            to_f64(FloatKind::F16, from_f64(FloatKind::F16, 2049.0)),
            2048.0
        );
        assert!(to_f64(FloatKind::F16, from_f64(FloatKind::F16, 1e6)).is_infinite());
        assert!(to_f64(FloatKind::BF16, from_f64(FloatKind::BF16, f64::NAN)).is_nan());
        // The smallest bf16 subnormal is 2^-133; a bit more than half of it rounds up.
        let tiny = 2f64.powi(-134) * (1.0 + 2f64.powi(-30));
        assert_eq!(
            to_f64(FloatKind::BF16, from_f64(FloatKind::BF16, tiny)),
            2f64.powi(-133)
        );
    }

    #[test]
    fn integers_round_once() {
        // 2^30 + 2^22 + 1 lies just above a bf16 tie: it must round up, not to even.
        let m = (1u64 << 30) + (1 << 22) + 1;
        let v = to_f64(FloatKind::BF16, int_to_float(FloatKind::BF16, false, m));
        assert_eq!(v, ((1u64 << 30) + (1 << 23)) as f64);
        let v = to_f64(FloatKind::F16, int_to_float(FloatKind::F16, true, 3));
        assert_eq!(v, -3.0);
        let v = to_f64(
            FloatKind::F32,
            int_to_float(FloatKind::F32, false, u64::MAX),
        );
        assert_eq!(v, 2f64.powi(64));
    }

    #[test]
    fn sign_extension() {
        assert_eq!(sext(0xFF, 8), -1);
        assert_eq!(sext(1, 1), -1);
        assert_eq!(sext(0x7F, 8), 127);
        assert_eq!(mask(64), u64::MAX);
    }
}
