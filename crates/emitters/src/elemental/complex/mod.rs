//! `c64` and `c128` in the IR: each value is its bit pattern (an `i64` or `i128`: the real
//! part's f32 or f64 bits low, the imaginary part's high, as in memory), so loads, stores,
//! selects and data movement need nothing new. Each op takes its operands apart into f32s, computes, and
//! puts the result together again: the arithmetic here as MLIR's `complex-to-standard`
//! lowering does (what XLA's emitters run), the functions in [`functions`]. The evaluator
//! (`hlo::evaluate::complex`) computes the same functions in f64 and rounds once; `--check`
//! holds the kernels to the part type's bound of those values.

mod functions;

use super::arith::{cmpf, convert};
use super::narrow_float::convert_any;
use super::*;
use functions::*;
use ir::ComplexPattern;
use ir::dialects::arith;
use ir::dialects::math;

impl ElementalEmitter<'_, '_> {
    /// An elementwise op with a complex operand or result, or `real`/`imag`/`complex`
    /// (`from`: the first operand's element type, `to`: the result's).
    pub(super) fn complex_op(
        &mut self,
        instr: &Instruction,
        args: &[Value],
        (from, to): (PrimitiveType, PrimitiveType),
        ty: Type,
    ) -> R<Value> {
        use Opcode::*;
        let b = &mut self.b;
        let x = args[0];
        let refused = || {
            let what = format!("{} on {} in '{}'", instr.opcode, from.name(), instr.name);
            Err(unsupported(instr.spans.whole, what))
        };
        Ok(match instr.opcode {
            Complex if from.is_float() => assemble(b, x, args[1]),
            Real if from.is_complex() => parts(b, x).0,
            Imag if from.is_complex() => parts(b, x).1,
            // Of a real number: itself, and zero.
            Real => x,
            Imag => {
                let zero = b_zero(b, Type::F32);
                convert_any(b, zero, PrimitiveType::F32, to, ty, self.cx.target)
            }
            Convert => convert_complex(b, x, from, to, ty, self.cx.target)
                .map_err(|e| unsupported(instr.spans.whole, e))?,
            Select => b.select(x, args[1], args[2]),
            Negate => {
                let (re, im) = parts(b, x);
                let (re, im) = (b.unary(arith::NEGF, re), b.unary(arith::NEGF, im));
                assemble(b, re, im)
            }
            Abs => {
                let (re, im) = parts(b, x);
                magnitude(b, re, im)
            }
            Exp | Expm1 | Log | Log1p | Sqrt | Rsqrt | Cbrt | Sin | Cos | Tan | Tanh | Sign => {
                let z = parts(b, x);
                let (re, im) = match instr.opcode {
                    Exp => exp(b, z),
                    Expm1 => exp_m1(b, z),
                    Log => log(b, z),
                    Log1p => log_1p(b, z),
                    Sqrt => square_root(b, z),
                    Rsqrt => {
                        let root = square_root(b, z);
                        let t = part_type(b, z.0);
                        let one = (b.float(1.0, t), b_zero(b, t));
                        divide(b, one, root)
                    }
                    Cbrt => cube_root(b, z),
                    Sin => sin(b, z),
                    Cos => cos(b, z),
                    Tan => tan(b, z),
                    Tanh => tanh(b, z),
                    _ => sign(b, z),
                };
                assemble(b, re, im)
            }
            Power => {
                let (z, w) = (parts(b, x), parts(b, args[1]));
                let (re, im) = power(b, z, w);
                assemble(b, re, im)
            }
            Add | Subtract | Multiply | Divide => {
                let (p, q) = (parts(b, x), parts(b, args[1]));
                let (re, im) = match instr.opcode {
                    Add => (add(b, p.0, q.0), add(b, p.1, q.1)),
                    Subtract => (
                        b.binary(arith::SUBF, p.0, q.0),
                        b.binary(arith::SUBF, p.1, q.1),
                    ),
                    Multiply => multiply(b, p, q),
                    _ => divide(b, p, q),
                };
                assemble(b, re, im)
            }
            Compare => {
                let direction = instr.enum_value("direction").unwrap_or("");
                if direction != "EQ" && direction != "NE" {
                    return refused();
                }
                let (p, q) = (parts(b, x), parts(b, args[1]));
                let re = cmpf(b, "oeq", p.0, q.0);
                let im = cmpf(b, "oeq", p.1, q.1);
                let equal = b.binary(arith::ANDI, re, im);
                if direction == "EQ" {
                    equal
                } else {
                    let yes = b.int(1, Type::I1);
                    b.binary(arith::XORI, equal, yes)
                }
            }
            _ => return refused(),
        })
    }
}

/// `convert` with a complex side on `target`: between complex types each part is
/// converted, to a real type the real part, from one a zero imaginary part (`ty`: the
/// result's IR type).
pub(super) fn convert_complex(
    b: &mut Builder<'_>,
    x: Value,
    from: PrimitiveType,
    to: PrimitiveType,
    ty: Type,
    target: crate::Target,
) -> Result<Value, String> {
    let part = |t: PrimitiveType| t.complex_component().unwrap_or(t);
    if from == to {
        return Ok(x);
    }
    if !from.is_complex() {
        let to_part = part(to);
        let t = crate::types::element_type(to_part)?;
        let re = convert_any(b, x, from, to_part, t, target);
        return Ok(real_to_complex(b, re));
    }
    let (re, im) = parts(b, x);
    let (from_part, to_part) = (part(from), part(to));
    if !to.is_complex() {
        return Ok(convert_any(b, re, from_part, to, ty, target));
    }
    let t = crate::types::element_type(to_part)?;
    let re = convert(b, re, from_part, to_part, t);
    let im = convert(b, im, from_part, to_part, t);
    Ok(assemble(b, re, im))
}

/// `acc + l · r` of three complex patterns of one type: a dot's step.
pub(super) fn multiply_add(b: &mut Builder<'_>, acc: Value, l: Value, r: Value) -> Value {
    let (p, q) = (parts(b, l), parts(b, r));
    let (re, im) = multiply(b, p, q);
    let (acc_re, acc_im) = parts(b, acc);
    let (re, im) = (add(b, acc_re, re), add(b, acc_im, im));
    assemble(b, re, im)
}

/// The complex number of a real part and a zero imaginary part (f32: `c64`, f64: `c128`).
pub(super) fn real_to_complex(b: &mut Builder<'_>, re: Value) -> Value {
    let zero = b_zero(b, part_type(b, re));
    assemble(b, re, zero)
}

/// The float type of a part value.
fn part_type(b: &Builder<'_>, part: Value) -> Type {
    b.module.value_type(part)
}

fn b_zero(b: &mut Builder<'_>, part: Type) -> Value {
    b.float(0.0, part)
}

fn add(b: &mut Builder<'_>, x: Value, y: Value) -> Value {
    b.binary(arith::ADDF, x, y)
}

fn mul(b: &mut Builder<'_>, x: Value, y: Value) -> Value {
    b.binary(arith::MULF, x, y)
}

/// The layout of a complex pattern or of one whose parts have `v`'s type.
fn layout(b: &Builder<'_>, v: Value) -> ComplexPattern {
    let t = b.module.value_type(v);
    ComplexPattern::of_pattern(t)
        .or_else(|| ComplexPattern::of_part(t))
        .expect("a c64 or c128 pattern, or one of its parts")
}

/// The real and imaginary parts of a complex pattern (`c64`'s `i64`, `c128`'s `i128`).
fn parts(b: &mut Builder<'_>, z: Value) -> (Value, Value) {
    let c = layout(b, z);
    let low = b.cast(arith::TRUNCI, z, c.half);
    let shift = b.int(i128::from(c.half_bits()), c.pattern);
    let high = b.binary(arith::SHRUI, z, shift);
    let high = b.cast(arith::TRUNCI, high, c.half);
    (
        b.cast(arith::BITCAST, low, c.part),
        b.cast(arith::BITCAST, high, c.part),
    )
}

/// The complex pattern of two parts (f32: `c64`'s `i64`; f64: `c128`'s `i128`).
fn assemble(b: &mut Builder<'_>, re: Value, im: Value) -> Value {
    let c = layout(b, re);
    let re = b.cast(arith::BITCAST, re, c.half);
    let im = b.cast(arith::BITCAST, im, c.half);
    let low = b.cast(arith::EXTUI, re, c.pattern);
    let high = b.cast(arith::EXTUI, im, c.pattern);
    let shift = b.int(i128::from(c.half_bits()), c.pattern);
    let high = b.binary(arith::SHLI, high, shift);
    b.binary(arith::ORI, low, high)
}

/// `(a+bi)(c+di) = (ac-bd) + (ad+bc)i`.
fn multiply(
    b: &mut Builder<'_>,
    (a, bi): (Value, Value),
    (c, d): (Value, Value),
) -> (Value, Value) {
    let (ac, bd) = (mul(b, a, c), mul(b, bi, d));
    let (ad, bc) = (mul(b, a, d), mul(b, bi, c));
    (b.binary(arith::SUBF, ac, bd), add(b, ad, bc))
}

/// Smith's algorithm (see `hlo::evaluate::complex::divide`): both branches computed, the
/// one for the larger part of the divisor selected.
fn divide(b: &mut Builder<'_>, (a, bi): (Value, Value), (c, d): (Value, Value)) -> (Value, Value) {
    let (abs_c, abs_d) = (b.unary(math::ABSF, c), b.unary(math::ABSF, d));
    let c_larger = cmpf(b, "oge", abs_c, abs_d);
    // |c| >= |d|: r = d/c, t = c + d*r, ((a + b*r)/t, (b - a*r)/t).
    let r1 = b.binary(arith::DIVF, d, c);
    let dr = mul(b, d, r1);
    let t1 = add(b, c, dr);
    let br = mul(b, bi, r1);
    let n_re1 = add(b, a, br);
    let ar = mul(b, a, r1);
    let n_im1 = b.binary(arith::SUBF, bi, ar);
    let re1 = b.binary(arith::DIVF, n_re1, t1);
    let im1 = b.binary(arith::DIVF, n_im1, t1);
    // Otherwise: r = c/d, t = c*r + d, ((a*r + b)/t, (b*r - a)/t).
    let r2 = b.binary(arith::DIVF, c, d);
    let cr = mul(b, c, r2);
    let t2 = add(b, cr, d);
    let ar2 = mul(b, a, r2);
    let n_re2 = add(b, ar2, bi);
    let br2 = mul(b, bi, r2);
    let n_im2 = b.binary(arith::SUBF, br2, a);
    let re2 = b.binary(arith::DIVF, n_re2, t2);
    let im2 = b.binary(arith::DIVF, n_im2, t2);
    (b.select(c_larger, re1, re2), b.select(c_larger, im1, im2))
}
