//! 128-bit integers: XLA's `c128` as its bit pattern (the real part's f64 bits low, the
//! imaginary part's high; `emitters::elemental::complex`).
//!
//! Every other scalar lives in a `u64` ([`crate::scalar`]); an `i128` is a
//! [`Val::W`](crate::value::Val::W) of two words instead, so the 64-bit paths stay as they
//! are, and tensors hold it as two 64-bit words (see [`crate::layout::TensorTy::words`]).
//! Only what a complex number needs is executed on it: moving it whole, taking it apart
//! (`trunci`, `shrui`), putting it together (`extui`, `shli`, `ori`), the bit ops, `addi`
//! and `subi`, and comparisons. Other ops on `i128` are refused at the op.

use crate::ops::{Fault, IntOp, Overflow, int_predicate};

/// An op on `i128` operands or with an `i128` result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WideOp {
    /// An integer op of two `i128`s, with its `nsw`/`nuw` flags (a result they rule out is
    /// poison).
    Int(WideInt, Overflow),
    /// `cmpi` with a predicate numbered as `arith.cmpi`'s.
    Cmp(u8),
    /// The low bits of an `i128` (`trunci`) to an integer of this width.
    Trunc(u32),
    /// An integer of this width zero- or sign-extended to `i128`.
    ZExt(u32),
    SExt(u32),
}

impl WideOp {
    /// Whether the result is an `i128` (else an integer of at most 64 bits).
    pub(crate) fn gives_wide(self) -> bool {
        matches!(self, WideOp::Int(..) | WideOp::ZExt(_) | WideOp::SExt(_))
    }
}

/// The integer ops executed on `i128`: `addi`, `subi`, `andi`, `ori`, `xori`, `shli`,
/// `shrui`, `shrsi` and their `llvm` forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WideInt {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
}

impl WideInt {
    /// The wide form of `op`, if `i128` has one here.
    pub(crate) fn of(op: IntOp) -> Option<WideInt> {
        Some(match op {
            IntOp::Add => WideInt::Add,
            IntOp::Sub => WideInt::Sub,
            IntOp::And => WideInt::And,
            IntOp::Or => WideInt::Or,
            IntOp::Xor => WideInt::Xor,
            IntOp::Shl => WideInt::Shl,
            IntOp::ShrU => WideInt::ShrU,
            IntOp::ShrS => WideInt::ShrS,
            _ => return None,
        })
    }
}

/// The 128-bit result of `op` (in the low bits for narrower results).
pub(crate) fn eval(op: WideOp, a: u128, b: u128) -> Result<u128, Fault> {
    Ok(match op {
        WideOp::Int(int, flags) => {
            let shift = || -> Result<u32, Fault> {
                u32::try_from(b)
                    .ok()
                    .filter(|&s| s < 128)
                    .ok_or(Fault::Poison)
            };
            let (sa, sb) = (a as i128, b as i128);
            // Whether the unsigned and signed results are exact.
            let exact = |unsigned: bool, signed: bool| {
                if (flags.nuw && !unsigned) || (flags.nsw && !signed) {
                    Err(Fault::Poison)
                } else {
                    Ok(())
                }
            };
            match int {
                WideInt::Add => {
                    exact(a.checked_add(b).is_some(), sa.checked_add(sb).is_some())?;
                    a.wrapping_add(b)
                }
                WideInt::Sub => {
                    exact(a.checked_sub(b).is_some(), sa.checked_sub(sb).is_some())?;
                    a.wrapping_sub(b)
                }
                WideInt::And => a & b,
                WideInt::Or => a | b,
                WideInt::Xor => a ^ b,
                WideInt::Shl => {
                    let s = shift()?;
                    let r = a << s;
                    exact(r >> s == a, (r as i128) >> s == sa)?;
                    r
                }
                WideInt::ShrU => a >> shift()?,
                WideInt::ShrS => (sa >> shift()?) as u128,
            }
        }
        WideOp::Cmp(pred) => u128::from(int_predicate(pred, (a, b), (a as i128, b as i128))),
        WideOp::Trunc(to) => a & low_bits(to),
        WideOp::ZExt(from) => a & low_bits(from),
        WideOp::SExt(from) => {
            let shift = 128 - from;
            (((a << shift) as i128) >> shift) as u128
        }
    })
}

fn low_bits(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// The two words of a 128-bit pattern, low first.
pub(crate) fn words(bits: u128) -> [u64; 2] {
    [bits as u64, (bits >> 64) as u64]
}

/// The 128-bit pattern of two words, low first.
pub(crate) fn join(words: [u64; 2]) -> u128 {
    u128::from(words[0]) | u128::from(words[1]) << 64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_complex_pattern_is_taken_apart_and_put_together() {
        let (re, im) = (1.5f64.to_bits(), (-2.25f64).to_bits());
        let z = eval(WideOp::ZExt(64), u128::from(re), 0).unwrap()
            | eval(
                WideOp::Int(WideInt::Shl, Overflow::default()),
                u128::from(im),
                64,
            )
            .unwrap();
        assert_eq!(words(z), [re, im]);
        assert_eq!(join(words(z)), z);
        assert_eq!(eval(WideOp::Trunc(64), z, 0).unwrap(), u128::from(re));
        let high = eval(WideOp::Int(WideInt::ShrU, Overflow::default()), z, 64).unwrap();
        assert_eq!(
            eval(WideOp::Trunc(32), high, 0).unwrap(),
            u128::from(im as u32)
        );
        assert_eq!(
            eval(WideOp::Int(WideInt::Shl, Overflow::default()), z, 128),
            Err(Fault::Poison)
        );
        assert_eq!(eval(WideOp::SExt(8), 0x80, 0).unwrap(), u128::MAX - 0x7f);
        assert_eq!(
            eval(WideOp::Cmp(2), u128::MAX, 0).unwrap(),
            1,
            "-1 < 0 signed"
        );
        assert_eq!(
            eval(WideOp::Cmp(6), u128::MAX, 0).unwrap(),
            0,
            "not unsigned"
        );
    }
}
