//! Elementwise ops as arith/math IR: HLO's semantics for each op and element type
//! (integer division and shifts with XLA's results for every input, comparisons with NaN and
//! total order, conversions with saturation and rounding).

use super::*;
use ir::dialects::arith;
use ir::dialects::math;

impl ElementalEmitter<'_, '_> {
    /// Elementwise ops on scalars `args` producing a value of `ty`.
    pub(super) fn elementwise(
        &mut self,
        instr: &Instruction,
        args: &[Value],
        ty: Type,
    ) -> R<Value> {
        let span = instr.spans.whole;
        let operand_types: Vec<PrimitiveType> = instr
            .operands
            .iter()
            .map(|&o| {
                self.instr(o)
                    .shape
                    .as_array()
                    .map_or(PrimitiveType::F32, |a| a.element_type)
            })
            .collect();
        let t0 = operand_types[0];
        let result_type = instr.shape.as_array().map(|a| a.element_type);
        // Types the IR holds as their bits: ops on them are spelled out by type.
        let to = result_type.unwrap_or(PrimitiveType::F32);
        // Complex first: its conversions from and to narrow floats go through the part type.
        if operand_types.iter().any(|t| t.is_complex())
            || to.is_complex()
            || matches!(instr.opcode, Opcode::Real | Opcode::Imag | Opcode::Complex)
        {
            return self.complex_op(instr, args, (t0, to), ty);
        }
        let narrow = |t: &PrimitiveType| hlo::narrow_float::Format::of(*t).is_some();
        if operand_types.iter().any(narrow) || narrow(&to) {
            return self.narrow_float_op(instr, args, (t0, to), ty);
        }
        let float = t0.is_float();
        let unsigned = t0.is_unsigned_int() || t0 == PrimitiveType::Pred;
        // For the range facts that allow cheaper f32 math (`range`).
        let (module, c, f32) = (self.cx.module, self.computation, t0 == PrimitiveType::F32);
        let b = &mut self.b;
        let x = args[0];
        use Opcode::*;
        let pick = |f: &'static str, i: &'static str| if float { f } else { i };
        Ok(match instr.opcode {
            Add if t0 == PrimitiveType::Pred => b.binary(arith::ORI, x, args[1]),
            Multiply if t0 == PrimitiveType::Pred => b.binary(arith::ANDI, x, args[1]),
            Add => b.binary(pick(arith::ADDF, arith::ADDI), x, args[1]),
            Subtract => b.binary(pick(arith::SUBF, arith::SUBI), x, args[1]),
            Multiply => b.binary(pick(arith::MULF, arith::MULI), x, args[1]),
            Divide if float => {
                let q = b.binary(arith::DIVF, x, args[1]);
                // A divisor in [1, n]: `div.full` would not scale, `x · rcp(d)` is the same.
                let divisor = instr.operands[1];
                let proven = f32 && range::is_sum_of_exp_minus_group_maximum(module, c, divisor);
                with_fastmath_if(b, q, "arcp", proven)
            }
            Divide => b.guarded_division(
                if unsigned { arith::DIVUI } else { arith::DIVSI },
                x,
                args[1],
            ),
            Remainder if float => b.binary(arith::REMF, x, args[1]),
            Remainder => b.guarded_division(
                if unsigned { arith::REMUI } else { arith::REMSI },
                x,
                args[1],
            ),
            Maximum if float => b.binary(arith::MAXIMUMF, x, args[1]),
            Minimum if float => b.binary(arith::MINIMUMF, x, args[1]),
            Maximum => b.binary(
                if unsigned { arith::MAXUI } else { arith::MAXSI },
                x,
                args[1],
            ),
            Minimum => b.binary(
                if unsigned { arith::MINUI } else { arith::MINSI },
                x,
                args[1],
            ),
            And => b.binary(arith::ANDI, x, args[1]),
            Or => b.binary(arith::ORI, x, args[1]),
            Xor => b.binary(arith::XORI, x, args[1]),
            Not => {
                let ones = b.int(-1, ty);
                b.binary(arith::XORI, x, ones)
            }
            ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => {
                shift(b, instr.opcode, x, args[1], ty)
            }
            Power if float => b.binary(math::POWF, x, args[1]),
            Power if unsigned => unsigned_power(b, x, args[1], ty),
            Power => b.binary(math::IPOWI, x, args[1]),
            Atan2 if float => b.binary(math::ATAN2, x, args[1]),
            Negate if float => b.unary(arith::NEGF, x),
            Negate => {
                let zero = b.int(0, ty);
                b.binary(arith::SUBI, zero, x)
            }
            Abs if float => b.unary(math::ABSF, x),
            Abs => b.unary(math::ABSI, x),
            Sign => sign(b, x, ty, float),
            Exp if float => {
                let e = b.unary(math::EXP, x);
                // `expand-float-ops` may approximate it: within f32's bound on x <= 0.
                let proven = f32 && range::is_minus_its_group_maximum(module, c, instr.operands[0]);
                with_fastmath_if(b, e, "afn", proven)
            }
            Expm1 if float => b.unary(math::EXPM1, x),
            Log if float => b.unary(math::LOG, x),
            Log1p if float => b.unary(math::LOG1P, x),
            Sqrt if float => b.unary(math::SQRT, x),
            Rsqrt if float => b.unary(math::RSQRT, x),
            Cbrt if float => b.unary(math::CBRT, x),
            Tanh if float => b.unary(math::TANH, x),
            Sin if float => b.unary(math::SIN, x),
            Cos if float => b.unary(math::COS, x),
            Tan if float => b.unary(math::TAN, x),
            Erf if float => b.unary(math::ERF, x),
            Atan if float => b.unary(math::ATAN, x),
            Acos if float => b.unary(math::ACOS, x),
            Asin if float => b.unary(math::ASIN, x),
            Acosh if float => b.unary(math::ACOSH, x),
            Asinh if float => b.unary(math::ASINH, x),
            Atanh if float => b.unary(math::ATANH, x),
            Cosh if float => b.unary(math::COSH, x),
            Sinh if float => b.unary(math::SINH, x),
            Floor if float => b.unary(math::FLOOR, x),
            Ceil if float => b.unary(math::CEIL, x),
            RoundNearestAfz if float => b.unary(math::ROUND, x),
            RoundNearestEven if float => b.unary(math::ROUNDEVEN, x),
            Logistic if float => {
                // 1 / (1 + exp(-x)).
                let neg = b.unary(arith::NEGF, x);
                let e = b.unary(math::EXP, neg);
                let one = b.float(1.0, ty);
                let d = b.addf(one, e);
                b.binary(arith::DIVF, one, d)
            }
            IsFinite => {
                let a = b.unary(math::ABSF, x);
                let inf = b.float(f64::INFINITY, b.module.value_type(x));
                cmpf(b, "one", a, inf)
            }
            PopulationCount if !float => b.unary(math::CTPOP, x),
            Clz if !float => b.unary(math::CTLZ, x),
            Compare => compare(b, instr, x, args[1], t0).map_err(|e| unsupported(span, e))?,
            Select => b.select(x, args[1], args[2]),
            Clamp => {
                // clamp(lo, x, hi) = min(max(x, lo), hi).
                let (lo, v, hi) = (args[0], args[1], args[2]);
                let t1 = operand_types[1];
                let (max, min) = if t1.is_float() {
                    (arith::MAXIMUMF, arith::MINIMUMF)
                } else if t1.is_unsigned_int() || t1 == PrimitiveType::Pred {
                    (arith::MAXUI, arith::MINUI)
                } else {
                    (arith::MAXSI, arith::MINSI)
                };
                let m = b.binary(max, v, lo);
                b.binary(min, m, hi)
            }
            Convert => {
                let to = instr
                    .shape
                    .as_array()
                    .map_or(PrimitiveType::F32, |a| a.element_type);
                convert(b, x, t0, to, ty)
            }
            BitcastConvert => {
                let from = b.module.value_type(x);
                if from == ty {
                    x
                } else if from.bit_width() == ty.bit_width() && t0 != PrimitiveType::Pred {
                    b.cast(arith::BITCAST, x, ty)
                } else {
                    return Err(unsupported(
                        span,
                        format!("bitcast-convert from {from} to {ty}"),
                    ));
                }
            }
            op => {
                return Err(unsupported(
                    span,
                    format!("{op} on {} in '{}'", t0.name(), instr.name),
                ));
            }
        })
    }
}

pub(super) fn cmpf(b: &mut Builder<'_>, predicate: &str, x: Value, y: Value) -> Value {
    let p = ir::dialects::arith::CMPF_PREDICATES
        .iter()
        .position(|&n| n == predicate)
        .expect("cmpf predicate");
    let op = b.insert(
        OpState::new(arith::CMPF)
            .operands(&[x, y])
            .results(&[Type::I1])
            .prop("predicate", Attribute::i64(p as i64)),
    );
    b.module.result(op, 0)
}

/// `x` to the power `y` of unsigned integers: `math.ipowi` reads its exponent as signed, so
/// it takes `y >> 1` (never negative) and the last bit is applied after squaring.
fn unsigned_power(b: &mut Builder<'_>, x: Value, y: Value, ty: Type) -> Value {
    let one = b.int(1, ty);
    let half = b.binary(arith::SHRUI, y, one);
    let root = b.binary(math::IPOWI, x, half);
    let square = b.muli(root, root);
    let bit = b.binary(arith::ANDI, y, one);
    let zero = b.int(0, ty);
    let odd = b.cmpi("ne", bit, zero);
    let times_x = b.muli(square, x);
    b.select(odd, times_x, square)
}

/// Shifts by `y` interpreted as unsigned; out-of-range amounts give 0, or the sign for an
/// arithmetic right shift.
fn shift(b: &mut Builder<'_>, op: Opcode, x: Value, y: Value, ty: Type) -> Value {
    let width = ty.int_width().unwrap_or(64) as i128;
    let w = b.int(width, ty);
    let in_range = b.cmpi("ult", y, w);
    match op {
        Opcode::ShiftRightArithmetic => {
            let max = b.int(width - 1, ty);
            let amount = b.select(in_range, y, max);
            b.binary(arith::SHRSI, x, amount)
        }
        _ => {
            let name = if op == Opcode::ShiftLeft {
                arith::SHLI
            } else {
                arith::SHRUI
            };
            let shifted = b.binary(name, x, y);
            let zero = b.int(0, ty);
            b.select(in_range, shifted, zero)
        }
    }
}

/// `sign`: -1, 0 or 1 for (signed) integers; for floats ±1 with x's sign, except that ±0
/// and NaN are returned unchanged.
fn sign(b: &mut Builder<'_>, x: Value, ty: Type, float: bool) -> Value {
    if float {
        let zero = b.float(0.0, ty);
        let one = b.float(1.0, ty);
        let nonzero = cmpf(b, "one", x, zero);
        let s = b.binary(math::COPYSIGN, one, x);
        return b.select(nonzero, s, x);
    }
    let zero = b.int(0, ty);
    let one = b.int(1, ty);
    let minus_one = b.int(-1, ty);
    let neg = b.cmpi("slt", x, zero);
    let pos = b.cmpi("sgt", x, zero);
    let p = b.select(pos, one, zero);
    b.select(neg, minus_one, p)
}

fn compare(
    b: &mut Builder<'_>,
    instr: &Instruction,
    x: Value,
    y: Value,
    t: PrimitiveType,
) -> Result<Value, String> {
    let direction = instr
        .enum_value("direction")
        .ok_or("compare without direction=")?;
    let total_order = instr.enum_value("type") == Some("TOTALORDER");
    if t.is_float() && !total_order {
        let p = match direction {
            "EQ" => "oeq",
            "NE" => "une",
            "LT" => "olt",
            "LE" => "ole",
            "GT" => "ogt",
            "GE" => "oge",
            d => return Err(format!("compare direction {d}")),
        };
        return Ok(cmpf(b, p, x, y));
    }
    let (x, y, signed) = if t.is_float() {
        // Total order: compare the bits as sign-magnitude integers mapped to two's complement.
        (total_order_key(b, x), total_order_key(b, y), true)
    } else {
        (x, y, t.is_signed_int())
    };
    let p = match (direction, signed) {
        ("EQ", _) => "eq",
        ("NE", _) => "ne",
        ("LT", true) => "slt",
        ("LE", true) => "sle",
        ("GT", true) => "sgt",
        ("GE", true) => "sge",
        ("LT", false) => "ult",
        ("LE", false) => "ule",
        ("GT", false) => "ugt",
        ("GE", false) => "uge",
        (d, _) => return Err(format!("compare direction {d}")),
    };
    Ok(b.cmpi(p, x, y))
}

/// The float's bits as a signed integer ordered like XLA's total order: negative values
/// have their magnitude bits flipped.
fn total_order_key(b: &mut Builder<'_>, x: Value) -> Value {
    let ty = b.module.value_type(x);
    let width = ty.bit_width().unwrap_or(32);
    let int = Type::int(width);
    let bits = b.cast(arith::BITCAST, x, int);
    let zero = b.int(0, int);
    let magnitude = b.int((1i128 << (width - 1)) - 1, int);
    let negative = b.cmpi("slt", bits, zero);
    let flipped = b.binary(arith::XORI, bits, magnitude);
    b.select(negative, flipped, bits)
}

/// `convert` from `from` to `to` (IR type `ty`), with XLA's saturating float→int rule.
pub(super) fn convert(
    b: &mut Builder<'_>,
    x: Value,
    from: PrimitiveType,
    to: PrimitiveType,
    ty: Type,
) -> Value {
    use PrimitiveType::Pred;
    let src = b.module.value_type(x);
    if src == ty && (from.is_float() == to.is_float()) {
        return x;
    }
    if to == Pred {
        return if from.is_float() {
            let zero = b.float(0.0, src);
            cmpf(b, "une", x, zero)
        } else {
            let zero = b.int(0, src);
            b.cmpi("ne", x, zero)
        };
    }
    let unsigned_src = from.is_unsigned_int() || from == Pred;
    match (from.is_float(), to.is_float()) {
        (true, true) => {
            let (sw, dw) = (src.bit_width().unwrap_or(0), ty.bit_width().unwrap_or(0));
            if sw < dw {
                b.cast(arith::EXTF, x, ty)
            } else if sw > dw {
                b.cast(arith::TRUNCF, x, ty)
            } else {
                // f16 <-> bf16: through f32, exact on the way up.
                let wide = b.cast(arith::EXTF, x, Type::F32);
                b.cast(arith::TRUNCF, wide, ty)
            }
        }
        (false, true) => b.cast(
            if unsigned_src {
                arith::UITOFP
            } else {
                arith::SITOFP
            },
            x,
            ty,
        ),
        (false, false) => {
            let (sw, dw) = (src.int_width().unwrap_or(0), ty.int_width().unwrap_or(0));
            if sw < dw {
                b.cast(
                    if unsigned_src {
                        arith::EXTUI
                    } else {
                        arith::EXTSI
                    },
                    x,
                    ty,
                )
            } else if sw > dw {
                b.cast(arith::TRUNCI, x, ty)
            } else {
                x
            }
        }
        (true, false) => float_to_int(b, x, to, ty),
    }
}

/// Saturating float→int: NaN gives 0, values beyond the target's range its min or max.
fn float_to_int(b: &mut Builder<'_>, x: Value, to: PrimitiveType, ty: Type) -> Value {
    let src = b.module.value_type(x);
    let width = ty.int_width().unwrap_or(32);
    let zero_i = b.int(0, ty);
    if to.is_unsigned_int() {
        let zero = b.float(0.0, src);
        let limit = b.float(2f64.powi(width as i32), src);
        let max = b.int(-1, ty);
        let converted = b.cast(arith::FPTOUI, x, ty);
        let too_big = cmpf(b, "oge", x, limit);
        let positive = cmpf(b, "ogt", x, zero);
        let clamped = b.select(too_big, max, converted);
        return b.select(positive, clamped, zero_i);
    }
    let limit = b.float(2f64.powi(width as i32 - 1), src);
    let neg_limit = b.float(-(2f64.powi(width as i32 - 1)), src);
    let max = b.int((1i128 << (width - 1)) - 1, ty);
    let min = b.int(-(1i128 << (width - 1)), ty);
    let converted = b.cast(arith::FPTOSI, x, ty);
    let too_big = cmpf(b, "oge", x, limit);
    let too_small = cmpf(b, "ole", x, neg_limit);
    let is_nan = cmpf(b, "uno", x, x);
    let hi = b.select(too_big, max, converted);
    let lo = b.select(too_small, min, hi);
    b.select(is_nan, zero_i, lo)
}

/// `v`, its defining op given the fast-math flag `flag` (`arith.divf ... fastmath<arcp>`)
/// where `proven`: the HLO proves the rewrite the flag allows stays within the type's bound
/// ([`super::range`]).
fn with_fastmath_if(b: &mut Builder<'_>, v: Value, flag: &str, proven: bool) -> Value {
    if proven {
        let op = b.module.defining_op(v).expect("an op's result");
        let flags = Attribute::Opaque(format!("#arith.fastmath<{flag}>"));
        b.module.set_prop(op, "fastmath", flags);
    }
    v
}
