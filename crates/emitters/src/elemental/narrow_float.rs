//! The narrow floats (`f4e2m1fn` and the f8 family) in the IR: each value is its encoding
//! (an `i4` or `i8`), so what reads one as a number goes through f32.
//! `convert` decodes and encodes with integer and f32 ops, for any
//! [`hlo::narrow_float::Format`]: what XLA's `expand_float_ops` computes on GPUs without a
//! conversion instruction for the type, round to nearest, ties to even, and what is past
//! the range becomes infinity, NaN or the largest value as the format says. The evaluator
//! converts with the same descriptions, tested against `ml_dtypes`' tables. Where sm_90
//! has instructions for the type (`f8e4m3fn`, `f8e5m2`) they are used both ways, as XLA's
//! `convert-float-nvidia` pass does ([`HardwareConversion`]). Other arithmetic on these
//! types is refused: XLA normalizes it to f32 around such ops first. For an older `--arch`
//! (before sm_89) those two types take the arithmetic too, with the instruction's NaN code
//! (`0x7f`), so that every architecture computes the same codes.

use hlo::narrow_float::{Format, HardwareConversion, Specials};
use ir::dialects::arith;
use ir::dialects::math;
use ir::dialects::{llvm, vector};

use super::arith::{cmpf, convert};
use super::*;
use crate::Target;

impl ElementalEmitter<'_, '_> {
    /// An elementwise op with a narrow float operand or result (`from`: the first
    /// operand's element type, `to`: the result's).
    pub(super) fn narrow_float_op(
        &mut self,
        instr: &Instruction,
        args: &[Value],
        (from, to): (PrimitiveType, PrimitiveType),
        ty: Type,
    ) -> R<Value> {
        let b = &mut self.b;
        match (instr.opcode, Format::of(from), Format::of(to)) {
            (Opcode::Convert, _, _) if from == to => Ok(args[0]),
            (Opcode::Convert, _, _) => Ok(convert_any(b, args[0], from, to, ty, self.cx.target)),
            (Opcode::BitcastConvert, _, _) if b.module.value_type(args[0]) == ty => Ok(args[0]),
            (Opcode::Select, _, _) => Ok(b.select(args[0], args[1], args[2])),
            (op, _, _) => Err(unsupported(
                instr.spans.whole,
                format!(
                    "{op} on {} in '{}' (convert to f32 first, as XLA does)",
                    if Format::of(from).is_some() { from } else { to },
                    instr.name
                ),
            )),
        }
    }
}

fn i32c(b: &mut Builder<'_>, v: i64) -> Value {
    b.int(i128::from(v), Type::I32)
}

/// `x` of type `from` converted to `to` (`ty` in the IR) on `target`, where either may be
/// a narrow float: through f32, which holds every narrow value exactly.
pub(super) fn convert_any(
    b: &mut Builder<'_>,
    x: Value,
    from: PrimitiveType,
    to: PrimitiveType,
    ty: Type,
    target: Target,
) -> Value {
    match (Format::of(from), Format::of(to)) {
        (None, None) => convert(b, x, from, to, ty),
        (Some(source), format) => {
            let wide = decode_from(b, x, from, source, target);
            match format {
                Some(format) => encode_to(b, wide, to, format, target),
                None => convert(b, wide, PrimitiveType::F32, to, ty),
            }
        }
        (None, Some(format)) => {
            let wide = convert(b, x, from, PrimitiveType::F32, Type::F32);
            encode_to(b, wide, to, format, target)
        }
    }
}

/// The conversion instruction for `ty`, where `target` has one.
fn instruction(ty: PrimitiveType, target: Target) -> Option<HardwareConversion> {
    HardwareConversion::to(ty).filter(|_| target.has_f8_conversions())
}

/// The f32 value of a `ty` code (of format `f`): one `cvt` instruction to f16 and the
/// f16 widened where `target` has it, as XLA's `convert-float-nvidia` pass emits, else
/// [`decode`]'s arithmetic.
fn decode_from(
    b: &mut Builder<'_>,
    code: Value,
    ty: PrimitiveType,
    f: Format,
    target: Target,
) -> Value {
    let Some(cvt) = instruction(ty, target) else {
        return decode(b, code, f);
    };
    let pair = b.cast(arith::EXTUI, code, Type::int(16));
    let ip = b.insertion_point();
    let halves = Type::vector(&[2], Type::F16);
    let both = llvm::build_call_intrinsic(b.module, ip, cvt.widening, &[pair], halves);
    let ip = b.insertion_point();
    let half = vector::build_extract(b.module, ip, both, &[vector::Position::Static(0)]);
    b.cast(arith::EXTF, half, Type::F32)
}

/// The f32 value of an encoding: `(2^m + mantissa) * 2^(e - bias - m)`, or
/// `mantissa * 2^(1 - bias - m)` when the exponent field is 0; infinities and NaN as the
/// format has them.
fn decode(b: &mut Builder<'_>, code: Value, f: Format) -> Value {
    if f.specials == Specials::ExponentOnly {
        return decode_exponent_only(b, code);
    }
    let m = i64::from(f.mantissa_bits);
    let sign_bit = i64::from(f.sign_bit());
    let c = b.cast(arith::EXTUI, code, Type::I32);
    let low = i32c(b, sign_bit - 1);
    let magnitude = b.binary(arith::ANDI, c, low);
    let shift_m = i32c(b, m);
    let exponent = b.binary(arith::SHRUI, magnitude, shift_m);
    let mantissa_mask = i32c(b, (1 << m) - 1);
    let mantissa = b.binary(arith::ANDI, magnitude, mantissa_mask);
    // Normal: f32's exponent field and the mantissa at the top of f32's.
    let rebias = i32c(b, 127 - i64::from(f.bias));
    let f32_exponent = b.binary(arith::ADDI, exponent, rebias);
    let twenty_three = i32c(b, 23);
    let exponent_bits = b.binary(arith::SHLI, f32_exponent, twenty_three);
    let to_top = i32c(b, 23 - m);
    let mantissa_bits = b.binary(arith::SHLI, mantissa, to_top);
    let normal_bits = b.binary(arith::ORI, exponent_bits, mantissa_bits);
    let normal = b.cast(arith::BITCAST, normal_bits, Type::F32);
    // Subnormal (and zero): the mantissa times the smallest subnormal, exactly.
    let as_float = b.cast(arith::UITOFP, mantissa, Type::F32);
    let unit = b.float(2f64.powi(f.min_exponent() - m as i32), Type::F32);
    let subnormal = b.binary(arith::MULF, as_float, unit);
    let zero = i32c(b, 0);
    let is_subnormal = b.cmpi("eq", exponent, zero);
    let mut value = b.select(is_subnormal, subnormal, normal);
    let nan = b.float(f64::NAN, Type::F32);
    match f.specials {
        Specials::Ieee => {
            let all_ones = i32c(b, (1 << f.exponent_bits) - 1);
            let special = b.cmpi("eq", exponent, all_ones);
            let is_inf = b.cmpi("eq", mantissa, zero);
            let inf = b.float(f64::INFINITY, Type::F32);
            let inf_or_nan = b.select(is_inf, inf, nan);
            value = b.select(special, inf_or_nan, value);
        }
        Specials::FiniteNan => {
            let is_nan = b.cmpi("eq", magnitude, low);
            value = b.select(is_nan, nan, value);
        }
        Specials::Fnuz => {
            let nan_code = i32c(b, sign_bit);
            let is_nan = b.cmpi("eq", c, nan_code);
            value = b.select(is_nan, nan, value);
        }
        Specials::Saturating | Specials::ExponentOnly => {}
    }
    let sign = i32c(b, sign_bit);
    let sign_set = b.binary(arith::ANDI, c, sign);
    let negative = b.cmpi("ne", sign_set, zero);
    let negated = b.unary(arith::NEGF, value);
    b.select(negative, negated, value)
}

/// The encoding of an f32 value as `ty` (of format `f`): one `cvt` instruction where
/// `target` has it, as XLA's `convert-float-nvidia` pass emits, else [`encode`]'s
/// arithmetic. A type that has the instruction on newer GPUs gets its NaN code there too
/// (`0x7f`, whatever the sign), so that the codes do not depend on the GPU.
fn encode_to(b: &mut Builder<'_>, x: Value, ty: PrimitiveType, f: Format, target: Target) -> Value {
    if let Some(cvt) = instruction(ty, target) {
        return encode_with_cvt(b, x, cvt);
    }
    let code = encode(b, x, f);
    match HardwareConversion::to(ty) {
        Some(cvt) => {
            let is_nan = cmpf(b, "uno", x, x);
            let nan = b.int(i128::from(cvt.convert(f32::NAN)), Type::I8);
            b.select(is_nan, nan, code)
        }
        None => code,
    }
}

/// PTX's `cvt.rn.satfinite` (see [`HardwareConversion`]) of `x` paired with itself, the low
/// byte kept; then XLA's fix for what saturates: a magnitude past the last value that rounds
/// to a finite one, up to infinity, becomes the type's overflow code (`f8e4m3fn`: NaN,
/// `f8e5m2`: infinity) with the sign. NaN stays the instruction's `0x7f`.
fn encode_with_cvt(b: &mut Builder<'_>, x: Value, cvt: HardwareConversion) -> Value {
    let ip = b.insertion_point();
    let pair = llvm::build_call_intrinsic(b.module, ip, cvt.intrinsic, &[x, x], Type::int(16));
    let code = b.cast(arith::TRUNCI, pair, Type::I8);
    let bits = b.cast(arith::BITCAST, x, Type::I32);
    let magnitude_mask = i32c(b, 0x7fff_ffff);
    let magnitude = b.binary(arith::ANDI, bits, magnitude_mask);
    let threshold = i32c(b, i64::from(cvt.overflow_threshold()));
    let infinity = i32c(b, i64::from(f32::INFINITY.to_bits()));
    let above = b.cmpi("ugt", magnitude, threshold);
    let not_nan = b.cmpi("ule", magnitude, infinity);
    let past = b.binary(arith::ANDI, above, not_nan);
    let sign_shift = i32c(b, 24);
    let sign_byte = b.binary(arith::SHRUI, bits, sign_shift);
    let sign_byte = b.cast(arith::TRUNCI, sign_byte, Type::I8);
    let sign_mask = b.int(0x80, Type::I8);
    let sign = b.binary(arith::ANDI, sign_byte, sign_mask);
    let overflow_code = b.int(i128::from(cvt.format.overflow()), Type::I8);
    let overflow = b.binary(arith::ORI, overflow_code, sign);
    b.select(past, overflow, code)
}

/// The encoding of an f32 value: `q = roundeven(|x| * 2^(m - e))` for `e` the exponent of
/// `|x|` (at least the smallest normal one), then `((e + bias - 1) << m) + q` (a `q` of
/// `2^(m+1)` carries into the exponent, a subnormal's `2^m` becomes the smallest normal).
fn encode(b: &mut Builder<'_>, x: Value, f: Format) -> Value {
    if f.specials == Specials::ExponentOnly {
        return encode_exponent_only(b, x);
    }
    let m = i64::from(f.mantissa_bits);
    let sign_bit = i64::from(f.sign_bit());
    let magnitude = b.unary(math::ABSF, x);
    let bits = b.cast(arith::BITCAST, x, Type::I32);
    // Infinities and NaN are rounded as 0 (no poison from `fptoui`), then replaced.
    let inf = b.float(f64::INFINITY, Type::F32);
    let finite = cmpf(b, "one", magnitude, inf);
    let no_value = b.float(0.0, Type::F32);
    let magnitude = b.select(finite, magnitude, no_value);
    let magnitude_bits = b.cast(arith::BITCAST, magnitude, Type::I32);
    let twenty_three = i32c(b, 23);
    let field = b.binary(arith::SHRUI, magnitude_bits, twenty_three);
    let byte = i32c(b, 0xff);
    let field = b.binary(arith::ANDI, field, byte);
    let unbias = i32c(b, -127);
    let exponent = b.binary(arith::ADDI, field, unbias);
    let min_exponent = i32c(b, i64::from(f.min_exponent()));
    let e = b.binary(arith::MAXSI, exponent, min_exponent);
    // 2^(m - e) as f32 bits: (127 + m - e) << 23.
    let top = i32c(b, 127 + m);
    let scale_field = b.binary(arith::SUBI, top, e);
    let scale_bits = b.binary(arith::SHLI, scale_field, twenty_three);
    let scale = b.cast(arith::BITCAST, scale_bits, Type::F32);
    let scaled = b.binary(arith::MULF, magnitude, scale);
    let rounded = b.unary(math::ROUNDEVEN, scaled);
    let q = b.cast(arith::FPTOUI, rounded, Type::I32);
    let bias_less_one = i32c(b, i64::from(f.bias) - 1);
    let biased = b.binary(arith::ADDI, e, bias_less_one);
    let shift_m = i32c(b, m);
    let high = b.binary(arith::SHLI, biased, shift_m);
    let code = b.binary(arith::ADDI, high, q);
    let max_finite = i32c(b, i64::from(f.max_finite()));
    let overflow = i32c(b, i64::from(f.overflow()));
    let past = b.cmpi("ugt", code, max_finite);
    let infinite = {
        let original = b.unary(math::ABSF, x);
        cmpf(b, "oeq", original, inf)
    };
    let past = b.binary(arith::ORI, past, infinite);
    let code = b.select(past, overflow, code);
    // The sign, except on an fnuz format's zero and NaN.
    let zero = i32c(b, 0);
    let negative = b.cmpi("slt", bits, zero);
    let signed_code = {
        let sign = i32c(b, sign_bit);
        b.binary(arith::ORI, code, sign)
    };
    let signed = if f.specials == Specials::Fnuz {
        let nonzero = b.cmpi("ne", code, zero);
        let nan_code = i32c(b, sign_bit);
        let not_nan = b.cmpi("ne", code, nan_code);
        let keeps = b.binary(arith::ANDI, nonzero, not_nan);
        b.binary(arith::ANDI, negative, keeps)
    } else {
        negative
    };
    let code = b.select(signed, signed_code, code);
    let is_nan = cmpf(b, "uno", x, x);
    let positive_nan = i32c(b, i64::from(f.nan(false)));
    let negative_nan = i32c(b, i64::from(f.nan(true)));
    let nan = b.select(negative, negative_nan, positive_nan);
    let code = b.select(is_nan, nan, code);
    b.cast(arith::TRUNCI, code, Type::int(f.width()))
}

/// `f8e8m0fnu`'s value: `2^(code - 127)` as f32 bits (`code << 23`; code 0 is the f32
/// subnormal `2^-127`), NaN for `0xff`.
fn decode_exponent_only(b: &mut Builder<'_>, code: Value) -> Value {
    let c = b.cast(arith::EXTUI, code, Type::I32);
    let twenty_three = i32c(b, 23);
    let normal = b.binary(arith::SHLI, c, twenty_three);
    let smallest = i32c(b, 0x0040_0000);
    let zero = i32c(b, 0);
    let is_zero = b.cmpi("eq", c, zero);
    let bits = b.select(is_zero, smallest, normal);
    let value = b.cast(arith::BITCAST, bits, Type::F32);
    let nan_code = i32c(b, 0xff);
    let is_nan = b.cmpi("eq", c, nan_code);
    let nan = b.float(f64::NAN, Type::F32);
    b.select(is_nan, nan, value)
}

/// `f8e8m0fnu`'s encoding of an f32 (see `hlo::narrow_float::Specials::ExponentOnly`): the
/// exponent field, plus one from 1.5 times the power of two; below the normal range 1 for
/// anything above `2^-127`; `0xff` for zero, negative values, infinities, NaN and past 254.
fn encode_exponent_only(b: &mut Builder<'_>, x: Value) -> Value {
    let bits = b.cast(arith::BITCAST, x, Type::I32);
    let twenty_three = i32c(b, 23);
    let shifted = b.binary(arith::SHRUI, bits, twenty_three);
    let byte = i32c(b, 0xff);
    let field = b.binary(arith::ANDI, shifted, byte);
    let mantissa_mask = i32c(b, 0x7f_ffff);
    let mantissa = b.binary(arith::ANDI, bits, mantissa_mask);
    let half = i32c(b, 0x40_0000);
    let rounds_up = b.cmpi("uge", mantissa, half);
    let up = b.cast(arith::EXTUI, rounds_up, Type::I32);
    let normal = b.binary(arith::ADDI, field, up);
    let above_smallest = b.cmpi("ugt", bits, half);
    let subnormal = b.cast(arith::EXTUI, above_smallest, Type::I32);
    let zero = i32c(b, 0);
    let is_subnormal = b.cmpi("eq", field, zero);
    let code = b.select(is_subnormal, subnormal, normal);
    let not_positive = b.cmpi("sle", bits, zero);
    let special = b.cmpi("eq", field, byte);
    let max = i32c(b, 254);
    let past = b.cmpi("ugt", code, max);
    let nan = b.binary(arith::ORI, not_positive, special);
    let nan = b.binary(arith::ORI, nan, past);
    let code = b.select(nan, byte, code);
    b.cast(arith::TRUNCI, code, Type::I8)
}
