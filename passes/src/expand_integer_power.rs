//! `expand-integer-power`: `math.ipowi` (the elemental emitter's integer `power`) becomes
//! arithmetic, as XLA's `ExpandIntegerPower` lowers it (through mhlo's scalar `pow`):
//! exponentiation by squaring in an `scf.for`, then the answer for a negative exponent.
//!
//! * The loop runs once per bit of the type (`i32`: 32 times): `acc *= base` where the
//!   exponent's bit is set, `base *= base`, the exponent shifted right. XLA's runs 6 times,
//!   which is exact only where the true power does not wrap (an odd base's power wraps to a
//!   value that depends on every bit of the exponent); the wrapped value is the evaluator's,
//!   so every bit is taken here.
//! * A negative exponent gives `1` for a base of 1, `±1` (by the exponent's parity) for a
//!   base of -1, and `0` otherwise (mhlo's rule, and the evaluator's).
//!
//! The emitters write `power` per element, on scalars; a vector or tensor `math.ipowi` (as
//! XLA's test writes them) is expanded the same way, lane by lane: `arith` is elementwise on
//! shaped types, and the constants are splats.

use ir::dialects::{arith, math};
use ir::{Builder, Diagnostic, InsertPoint, Module, OpId, TypeKind};

use crate::pass::{Pass, op_error};

pub struct ExpandIntegerPower;

impl Pass for ExpandIntegerPower {
    crate::pass_names!(
        "expand-integer-power",
        "Lower math.ipowi to exponentiation by squaring (XLA's ExpandIntegerPower)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        for op in m.ops_named(math::IPOWI) {
            expand(m, op)?;
        }
        Ok(())
    }
}

fn expand(m: &mut Module, op: OpId) -> Result<(), Diagnostic> {
    let ty = m.value_type(m.result(op, 0));
    let width = match ty.element_type_or_self().kind() {
        &TypeKind::Int { width, .. } if width > 1 => width,
        _ => {
            return Err(op_error(
                m,
                op,
                format!(
                    "unsupported: math.ipowi of {ty}: only integers of two bits or more (or \
                     vectors and tensors of them) are expanded"
                ),
            ));
        }
    };
    let (x, y) = (m.operand(op, 0), m.operand(op, 1));
    let loc = m.loc(op);
    let mut b = Builder::new(m, InsertPoint::Before(op));
    b.set_loc(loc);
    let zero = b.int_like(0, ty);
    let one = b.int_like(1, ty);
    let minus_one = b.int_like(-1, ty);
    let (lb, ub, step) = (b.index(0), b.index(i64::from(width)), b.index(1));
    let squaring = b.scf_for(lb, ub, step, &[one, x, y], |b, _, args| {
        let (acc, base, e) = (args[0], args[1], args[2]);
        let bit = b.binary(arith::ANDI, e, one);
        let set = b.cmpi("ne", bit, zero);
        let product = b.muli(acc, base);
        let acc = b.select(set, product, acc);
        let base = b.muli(base, base);
        let e = b.binary(arith::SHRUI, e, one);
        vec![acc, base, e]
    });
    let power = b.module.result(squaring, 0);
    let negative = b.cmpi("slt", y, zero);
    let base_is_one = b.cmpi("eq", x, one);
    let base_is_minus_one = b.cmpi("eq", x, minus_one);
    let y_bit = b.binary(arith::ANDI, y, one);
    let y_odd = b.cmpi("ne", y_bit, zero);
    let minus_one_power = b.select(y_odd, minus_one, one);
    let otherwise = b.select(base_is_minus_one, minus_one_power, zero);
    let of_negative = b.select(base_is_one, one, otherwise);
    let result = b.select(negative, of_negative, power);
    m.replace_all_uses(m.result(op, 0), result);
    m.erase_op(op);
    Ok(())
}
