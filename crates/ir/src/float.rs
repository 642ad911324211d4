//! Floating-point literals exactly as MLIR prints them.
//!
//! MLIR prints a float attribute with LLVM's `APFloat::toString`: first in scientific notation
//! with 6 digits (`5.000000e-01`), if that reads back to the same value; otherwise in the
//! shortest-ish default notation (`1.23456705`) if it contains a `.`; otherwise as the raw bits
//! in hex (`0x7FC00000`, also for NaN and infinities). This module reproduces that algorithm
//! (with the same truncation and round-half-up steps) on a small bignum, so our printer emits
//! the same text as `mlir-opt` for every value.
//!
//! Values are carried as `f64`, which represents every `f16`, `bf16` and `f32` value exactly.

use crate::types::FloatKind;

/// Rounds `v` to the nearest value of `kind` (ties to even), returned as `f64`.
pub fn round_to(kind: FloatKind, v: f64) -> f64 {
    match kind {
        FloatKind::F64 => v,
        FloatKind::F32 => v as f32 as f64,
        FloatKind::F16 => half::f16::from_f64(v).to_f64(),
        FloatKind::BF16 => half::bf16::from_f64(v).to_f64(),
    }
}

/// The bit pattern of `v` (a value of `kind`) in `kind`'s encoding.
pub fn to_bits(kind: FloatKind, v: f64) -> u64 {
    match kind {
        FloatKind::F64 => v.to_bits(),
        FloatKind::F32 => (v as f32).to_bits() as u64,
        FloatKind::F16 => half::f16::from_f64(v).to_bits() as u64,
        FloatKind::BF16 => half::bf16::from_f64(v).to_bits() as u64,
    }
}

/// The value of the bit pattern `bits` in `kind`'s encoding.
pub fn from_bits(kind: FloatKind, bits: u64) -> f64 {
    match kind {
        FloatKind::F64 => f64::from_bits(bits),
        FloatKind::F32 => f32::from_bits(bits as u32) as f64,
        FloatKind::F16 => half::f16::from_bits(bits as u16).to_f64(),
        FloatKind::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
    }
}

/// Parses a decimal float literal (`1.5`, `-2.0e-3`) into the nearest value of `kind`.
pub fn parse_decimal(kind: FloatKind, text: &str) -> Option<f64> {
    match kind {
        FloatKind::F32 => text.parse::<f32>().ok().map(f64::from),
        _ => text.parse::<f64>().ok().map(|v| round_to(kind, v)),
    }
}

/// Formats `v` (a value of `kind`) the way MLIR prints float attributes.
pub fn format_mlir(kind: FloatKind, v: f64) -> String {
    if v.is_finite() {
        let s = to_string(v, 6, 0, false);
        if parse_decimal(kind, &s).is_some_and(|back| to_bits(kind, back) == to_bits(kind, v)) {
            return s;
        }
        let s = to_string(v, 2 + kind.precision() * 59 / 196, 3, true);
        if s.contains('.') {
            return s;
        }
    }
    format!("0x{:X}", to_bits(kind, v))
}

/// A little-endian unsigned bignum, just big enough for `APFloat::toString`.
#[derive(Clone, Debug)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v as u32, (v >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn active_bits(&self) -> u32 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u32 - 1) * 32 + (32 - top.leading_zeros()),
        }
    }

    fn shl(&mut self, bits: u32) {
        let words = (bits / 32) as usize;
        let bits = bits % 32;
        if bits > 0 {
            let mut carry = 0u32;
            for w in &mut self.0 {
                let next = *w >> (32 - bits);
                *w = (*w << bits) | carry;
                carry = next;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        if words > 0 {
            self.0.splice(0..0, std::iter::repeat_n(0, words));
        }
    }

    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for w in &mut self.0 {
            let p = *w as u64 * m as u64 + carry;
            *w = p as u32;
            carry = p >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    /// Divides in place, returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for w in self.0.iter_mut().rev() {
            let cur = (rem << 32) | *w as u64;
            *w = (cur / d as u64) as u32;
            rem = cur % d as u64;
        }
        self.trim();
        rem as u32
    }
}

/// `APFloat::toString(Str, FormatPrecision, FormatMaxPadding, TruncateZero)` for a finite
/// value; `precision` must be non-zero (the caller picks the default for the semantics).
fn to_string(v: f64, precision: u32, max_padding: u32, truncate_zero: bool) -> String {
    let mut out = String::new();
    if v.is_sign_negative() {
        out.push('-');
    }
    if v == 0.0 {
        if max_padding == 0 {
            if truncate_zero {
                out.push_str("0.0E+0");
            } else {
                out.push_str("0.0");
                for _ in 1..precision {
                    out.push('0');
                }
                out.push_str("e+00");
            }
        } else {
            out.push('0');
        }
        return out;
    }

    // v = mantissa * 2^exp with an odd mantissa.
    let bits = v.abs().to_bits();
    let biased = (bits >> 52) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mut mantissa, mut exp) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    };
    let tz = mantissa.trailing_zeros();
    mantissa >>= tz;
    exp += tz as i32;

    // Make it an integer times a power of ten.
    let mut sig = Big::from_u64(mantissa);
    if exp > 0 {
        sig.shl(exp as u32);
        exp = 0;
    } else {
        for _ in 0..-exp {
            sig.mul_small(5);
        }
    }

    // Drop digits that cannot matter (truncating, as APFloat does).
    let bits = sig.active_bits();
    let bits_required = (precision * 196).div_ceil(59);
    if bits > bits_required {
        let tens = (bits - bits_required) * 59 / 196;
        exp += tens as i32;
        for _ in 0..tens {
            sig.div_small(10);
        }
    }

    // Decimal digits, least significant first, trailing zeros folded into the exponent.
    let mut digits: Vec<u8> = Vec::new();
    while !sig.is_zero() {
        let d = sig.div_small(10) as u8;
        if digits.is_empty() && d == 0 {
            exp += 1;
        } else {
            digits.push(b'0' + d);
        }
    }

    // Round half up to `precision` digits.
    let n = digits.len();
    if n > precision as usize {
        let mut first = n - precision as usize;
        if digits[first - 1] < b'5' {
            while first < n && digits[first] == b'0' {
                first += 1;
            }
            exp += first as i32;
            digits.drain(..first);
        } else {
            let mut carried_out = true;
            let start = first;
            for d in &mut digits[start..] {
                if *d == b'9' {
                    first += 1;
                } else {
                    *d += 1;
                    carried_out = false;
                    break;
                }
            }
            exp += first as i32;
            if carried_out {
                digits.clear();
                digits.push(b'1');
            } else {
                digits.drain(..first);
            }
        }
    }

    let n = digits.len();
    let digit = |i: usize| digits[n - 1 - i] as char; // i-th most significant
    let scientific = if max_padding == 0 {
        true
    } else if exp >= 0 {
        exp as u32 > max_padding || n as u32 + exp as u32 > precision
    } else {
        let msd = exp + n as i32 - 1;
        msd < 0 && (-msd) as u32 > max_padding
    };

    if scientific {
        exp += n as i32 - 1;
        out.push(digit(0));
        out.push('.');
        if n == 1 && truncate_zero {
            out.push('0');
        } else {
            for i in 1..n {
                out.push(digit(i));
            }
        }
        if !truncate_zero && precision as usize > n - 1 {
            for _ in 0..(precision as usize - n + 1) {
                out.push('0');
            }
        }
        out.push(if truncate_zero { 'E' } else { 'e' });
        out.push(if exp >= 0 { '+' } else { '-' });
        let e = exp.unsigned_abs();
        if !truncate_zero && e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
        return out;
    }

    if exp >= 0 {
        for i in 0..n {
            out.push(digit(i));
        }
        for _ in 0..exp {
            out.push('0');
        }
        return out;
    }

    let whole = exp + n as i32;
    let mut i = 0;
    if whole > 0 {
        while i < whole as usize {
            out.push(digit(i));
            i += 1;
        }
        out.push('.');
    } else {
        out.push_str("0.");
        for _ in 0..-whole {
            out.push('0');
        }
    }
    while i < n {
        out.push(digit(i));
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(kind: FloatKind, text: &str) -> String {
        format_mlir(kind, parse_decimal(kind, text).unwrap())
    }

    /// Expected strings are what `mlir-opt` (MLIR 22) prints for these constants.
    #[test]
    fn matches_mlir_opt() {
        use FloatKind::*;
        assert_eq!(f(BF16, "0.5"), "5.000000e-01");
        assert_eq!(f(BF16, "1.0"), "1.000000e+00");
        assert_eq!(f(BF16, "0.79785"), "7.968750e-01");
        assert_eq!(f(BF16, "0.044715"), "4.467770e-02");
        assert_eq!(f(BF16, "3.14159"), "3.140630e+00");
        assert_eq!(f(F32, "0.1"), "1.000000e-01");
        assert_eq!(f(F32, "1.234567"), "1.23456705");
        assert_eq!(f(F32, "1.0e20"), "1.000000e+20");
        assert_eq!(f(F64, "123456789.0"), "0x419D6F3454000000");
        assert_eq!(f(F64, "0.1"), "1.000000e-01");
        assert_eq!(f(F16, "-0.0"), "-0.000000e+00");
        assert_eq!(f(F32, "2.5"), "2.500000e+00");
        assert_eq!(format_mlir(F32, f64::NAN), "0x7FC00000");
        assert_eq!(format_mlir(F32, f64::NEG_INFINITY), "0xFF800000");
        assert_eq!(format_mlir(F16, f64::INFINITY), "0x7C00");
        assert_eq!(format_mlir(BF16, f64::INFINITY), "0x7F80");
    }

    #[test]
    fn printed_values_read_back() {
        let mut rng = 0x1234_5678_9abc_def0u64;
        for _ in 0..20_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            for kind in [FloatKind::F16, FloatKind::BF16, FloatKind::F32] {
                let v = from_bits(kind, rng & ((1u64 << kind.width()) - 1));
                if !v.is_finite() {
                    continue;
                }
                let s = format_mlir(kind, v);
                let back = if let Some(hex) = s.strip_prefix("0x") {
                    from_bits(kind, u64::from_str_radix(hex, 16).unwrap())
                } else {
                    parse_decimal(kind, &s).unwrap()
                };
                assert_eq!(to_bits(kind, back), to_bits(kind, v), "{kind:?} {v} -> {s}");
            }
        }
    }
}
