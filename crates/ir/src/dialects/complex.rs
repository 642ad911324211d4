//! MLIR's `complex` dialect, the ops of it XLA's IR writes: complex numbers as values of
//! `complex<f32>`/`complex<f64>`. Read, verified and printed so that XLA's tests are read;
//! our emitters hold c64 and c128 as integer patterns ([`crate::ComplexPattern`]) and take
//! them apart themselves, so no pass computes on these ops: `lower-to-llvm` and the
//! interpreter refuse them at the op.

use super::arith::FASTMATH;
use crate::attrs::Attribute;
use crate::dialects::prelude::*;
use crate::module::OpId;
use crate::ods::Constraint;
use crate::types::Type;
use crate::verifier::VerifyCx;

pub const ADD: &str = "complex.add";
pub const CONSTANT: &str = "complex.constant";
pub const CREATE: &str = "complex.create";
pub const IM: &str = "complex.im";
pub const RE: &str = "complex.re";

/// `complex<...>`.
pub const COMPLEX: Constraint = Constraint::new("complex type with floating-point elements", |t| {
    t.complex_part().is_some()
});

/// The part type of a complex type.
fn part(t: Type) -> Option<Type> {
    t.complex_part()
}

/// `complex.create %re, %im : complex<f32>`.
const CREATE_OP: OpDef = OpDef::pure(CREATE)
    .operands(&[one("real", &FLOAT_LIKE), one("imaginary", &FLOAT_LIKE)])
    .results(&[one("complex", &COMPLEX)])
    .rules(&[
        TypeRule::Derived {
            from: "complex",
            to: "real",
            derive: part,
            message: "'complex.create' op failed to verify that complex element type matches real operand type",
        },
        TypeRule::Derived {
            from: "complex",
            to: "imaginary",
            derive: part,
            message: "'complex.create' op failed to verify that complex element type matches imaginary operand type",
        },
    ])
    .format("$real `,` $imaginary attr-dict `:` type($complex)");

/// `complex.re %c : complex<f32>` (and `complex.im`).
const PART_OP: OpDef = OpDef::pure("")
    .operands(&[one("complex", &COMPLEX)])
    .results(&[one("real", &FLOAT_LIKE)])
    .props(&[optional("fastmath", FASTMATH)])
    .rules(&[TypeRule::Derived {
        from: "complex",
        to: "real",
        derive: part,
        message: "op failed to verify that complex element type matches result type",
    }])
    .format("$complex (`fastmath` `` $fastmath^)? attr-dict `:` type($complex)");

/// `complex.add %a, %b : complex<f32>`.
const ADD_OP: OpDef = OpDef::pure(ADD)
    .operands(&[one("lhs", &COMPLEX), one("rhs", &COMPLEX)])
    .results(&[one("result", &COMPLEX)])
    .props(&[optional("fastmath", FASTMATH)])
    .rules(&[ALL_TYPES_SAME])
    .format("$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($result)");

/// `complex.constant [1.0 : f32, 2.0 : f32] : complex<f32>`.
const CONSTANT_OP: OpDef = OpDef::pure(CONSTANT)
    .operands(&[])
    .results(&[one("complex", &COMPLEX)])
    .props(&[required("value", PropKind::Attr)])
    .format("$value attr-dict `:` type($complex)")
    .verify(verify_constant);

/// MLIR's rule: the value is the real and the imaginary part, each a float of the part type.
fn verify_constant(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let ty = m.value_type(m.result(op, 0));
    let part = ty.complex_part().expect("the result constraint holds");
    let parts = m.prop(op, "value").and_then(|v| v.as_array());
    let ok = parts.is_some_and(|parts| {
        parts.len() == 2
            && parts
                .iter()
                .all(|p| matches!(p, Attribute::Float(_, t) if *t == part))
    });
    match ok {
        true => Ok(()),
        false => Err(format!(
            "requires 'value' to be a complex constant, represented as array of two {part} \
             values"
        )),
    }
}

pub fn register(r: &mut Registry) {
    r.register(CREATE_OP);
    r.register(PART_OP.named(RE));
    r.register(PART_OP.named(IM));
    r.register(ADD_OP);
    r.register(CONSTANT_OP);
}
