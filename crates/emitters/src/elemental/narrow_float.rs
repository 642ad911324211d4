//! `f4e2m1fn` in the IR: each value is its 4-bit encoding (an `i4`), so what reads one as a
//! number goes through f32. `convert` decodes and encodes exactly as XLA's
//! `expand_float_ops` does on GPUs without an f4 instruction (sm_90; `cvt...e2m1x2` is
//! sm_100's): round to nearest, ties to even; ±6 past the range, infinities included; a NaN
//! becomes `0b1000` (the evaluator's `hlo::evaluate::F4E2M1FN` holds the same table). The
//! type has eight magnitudes, so rounding is seven comparisons with the midpoints. Other
//! arithmetic on it is refused: XLA normalizes it to f32 around such ops first.

use super::arith::{cmpf, convert};
use super::*;

/// The midpoints between consecutive magnitudes (0, 0.5, 1, 1.5, 2, 3, 4, 6), each with
/// whether a tie rounds up (to the even encoding above it).
const MIDPOINTS: [(f64, bool); 7] = [
    (0.25, false),
    (0.75, true),
    (1.25, false),
    (1.75, true),
    (2.5, false),
    (3.5, true),
    (5.0, false),
];

impl ElementalEmitter<'_, '_> {
    /// An elementwise op with an `f4e2m1fn` operand or result.
    pub(super) fn narrow_float_op(
        &mut self,
        instr: &Instruction,
        args: &[Value],
        operand_types: &[PrimitiveType],
        ty: Type,
    ) -> R<Value> {
        let to = instr
            .shape
            .as_array()
            .map_or(PrimitiveType::F32, |a| a.element_type);
        let from = operand_types[0];
        let b = &mut self.b;
        match instr.opcode {
            Opcode::Convert if from == to => Ok(args[0]),
            Opcode::Convert if from == PrimitiveType::F4E2M1FN => {
                let wide = decode_f4(b, args[0]);
                Ok(convert(b, wide, PrimitiveType::F32, to, ty))
            }
            Opcode::Convert => {
                let wide = convert(b, args[0], from, PrimitiveType::F32, Type::F32);
                Ok(encode_f4(b, wide))
            }
            Opcode::BitcastConvert if b.module.value_type(args[0]) == ty => Ok(args[0]),
            Opcode::Select => Ok(b.select(args[0], args[1], args[2])),
            op => Err(unsupported(
                instr.spans.whole,
                format!(
                    "{op} on f4e2m1fn in '{}' (convert to f32 first, as XLA does)",
                    instr.name
                ),
            )),
        }
    }
}

/// The f32 value of an `i4` encoding: `±(1 + m/2) * 2^(e-1)`, or `±m/2` when `e` is 0.
fn decode_f4(b: &mut Builder<'_>, code: Value) -> Value {
    let c = b.cast("arith.extui", code, Type::I32);
    let seven = b.int(7, Type::I32);
    let magnitude = b.binary("arith.andi", c, seven);
    let one = b.int(1, Type::I32);
    let exponent = b.binary("arith.shrui", magnitude, one);
    let mantissa = b.binary("arith.andi", magnitude, one);
    // Normal: exponent e + 126 in f32's bias, the mantissa bit as f32's top mantissa bit.
    let bias = b.int(126, Type::I32);
    let f32_exponent = b.binary("arith.addi", exponent, bias);
    let shift = b.int(23, Type::I32);
    let exponent_bits = b.binary("arith.shli", f32_exponent, shift);
    let top = b.int(22, Type::I32);
    let mantissa_bits = b.binary("arith.shli", mantissa, top);
    let normal = b.binary("arith.ori", exponent_bits, mantissa_bits);
    // Subnormal: 0.5 (0x3F000000) or 0.
    let half = b.int(0x3F00_0000, Type::I32);
    let zero = b.int(0, Type::I32);
    let has_mantissa = b.cmpi("ne", mantissa, zero);
    let subnormal = b.select(has_mantissa, half, zero);
    let is_subnormal = b.cmpi("eq", exponent, zero);
    let unsigned = b.select(is_subnormal, subnormal, normal);
    let sign_shift = b.int(28, Type::I32);
    let shifted = b.binary("arith.shli", c, sign_shift);
    let sign_mask = b.int(i128::from(i32::MIN), Type::I32);
    let sign = b.binary("arith.andi", shifted, sign_mask);
    let bits = b.binary("arith.ori", unsigned, sign);
    b.cast("arith.bitcast", bits, Type::F32)
}

/// The `i4` encoding of an f32 value (see the module documentation).
fn encode_f4(b: &mut Builder<'_>, x: Value) -> Value {
    let magnitude = b.unary("math.absf", x);
    let mut code = b.int(0, Type::I8);
    for (edge, tie_up) in MIDPOINTS {
        let edge = b.float(edge, Type::F32);
        let past = cmpf(b, if tie_up { "oge" } else { "ogt" }, magnitude, edge);
        let step = b.cast("arith.extui", past, Type::I8);
        code = b.binary("arith.addi", code, step);
    }
    let bits = b.cast("arith.bitcast", x, Type::I32);
    let zero = b.int(0, Type::I32);
    let negative = b.cmpi("slt", bits, zero);
    let sign_bit = b.int(8, Type::I8);
    let none = b.int(0, Type::I8);
    let sign = b.select(negative, sign_bit, none);
    let signed = b.binary("arith.ori", code, sign);
    let is_nan = cmpf(b, "uno", x, x);
    let encoded = b.select(is_nan, sign_bit, signed);
    b.cast("arith.trunci", encoded, Type::int(4))
}
