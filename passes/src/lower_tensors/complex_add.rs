//! Recognizes the body of an `xla_gpu.atomic_rmw` that adds a complex number to the
//! current one, op for op as the emitters write it (`emitters::elemental::complex`): the
//! pattern (`i64`: c64, `i128`: c128, the real part's bits low) taken apart, the parts
//! added, the sum put together again:
//!
//! ```text
//! re(v) = bitcast(trunci v)           im(v) = bitcast(trunci(shrui v, half))
//! yield ori(extui(bitcast(addf(re current, re update))),
//!           shli(extui(bitcast(addf(im current, im update))), half))
//! ```
//!
//! (each `addf` and the `ori` in either operand order). Only then is the update two float
//! atomic adds, one per part: anything else, however close, keeps the general lowering.

use ir::dialects::arith;
use ir::{Attribute, BlockId, ComplexPattern, Module, OpId, Value, ValueDef};

/// The value from outside `body` that it adds to its current value as complex numbers, if
/// the body is exactly that add.
pub(super) fn update(m: &Module, body: BlockId) -> Option<Value> {
    let current = m.block_arg(body, 0);
    let layout = ComplexPattern::of_pattern(m.value_type(current))?;
    let (pattern, half, part) = (layout.pattern, layout.half_bits(), layout.part);
    let yield_op = m.last_op(body)?;
    let sum = m.operands(yield_op).next()?;
    let (re_sum, im_sum) = assembled(m, sum, half)?;
    // Sums of the parts' own type (not of narrower halves of them).
    if m.value_type(re_sum) != part || m.value_type(im_sum) != part {
        return None;
    }
    let update = added(m, re_sum, current, real_part)?;
    let same = added(m, im_sum, current, |m, v| imaginary_part(m, v, half))?;
    let outside = match m.value_def(update) {
        ValueDef::Arg { block, .. } => block != body,
        ValueDef::Result { op, .. } => m.parent_block(op) != Some(body),
        ValueDef::Detached => false,
    };
    (same == update && outside && m.value_type(update) == pattern).then_some(update)
}

/// The op defining `v`, if it is named `name`.
fn defined_by(m: &Module, v: Value, name: &str) -> Option<OpId> {
    m.defining_op(v).filter(|&op| m.is(op, name))
}

/// The single operand of the op named `name` that defines `v`.
fn through(m: &Module, v: Value, name: &str) -> Option<Value> {
    defined_by(m, v, name).map(|op| m.operand(op, 0))
}

/// Whether `v` is the integer constant `c`.
fn is_constant(m: &Module, v: Value, c: i64) -> bool {
    defined_by(m, v, arith::CONSTANT)
        .and_then(|op| m.prop(op, "value"))
        .and_then(Attribute::as_i64)
        == Some(c)
}

/// `x` for `v = bitcast(trunci x)`: the real part of the pattern `x`.
fn real_part(m: &Module, v: Value) -> Option<Value> {
    through(m, through(m, v, arith::BITCAST)?, arith::TRUNCI)
}

/// `x` for `v = bitcast(trunci(shrui x, half))`: the imaginary part of the pattern `x`.
fn imaginary_part(m: &Module, v: Value, half: i64) -> Option<Value> {
    let shifted = through(m, through(m, v, arith::BITCAST)?, arith::TRUNCI)?;
    let shift = defined_by(m, shifted, arith::SHRUI)?;
    is_constant(m, m.operand(shift, 1), half).then(|| m.operand(shift, 0))
}

/// The two part sums of `v = ori(extui(bitcast re), shli(extui(bitcast im), half))` (either
/// operand order of the `ori`).
fn assembled(m: &Module, v: Value, half: i64) -> Option<(Value, Value)> {
    let or = defined_by(m, v, arith::ORI)?;
    let (a, b) = (m.operand(or, 0), m.operand(or, 1));
    let low = |x: Value| through(m, through(m, x, arith::EXTUI)?, arith::BITCAST);
    let high = |x: Value| {
        let shl = defined_by(m, x, arith::SHLI)?;
        is_constant(m, m.operand(shl, 1), half).then_some(())?;
        low(m.operand(shl, 0))
    };
    match (low(a), high(b)) {
        (Some(re), Some(im)) => Some((re, im)),
        _ => Some((low(b)?, high(a)?)),
    }
}

/// The pattern `other` of `sum = addf(part(current), part(other))` (either order), where
/// `part` recognizes one part of a pattern.
fn added(
    m: &Module,
    sum: Value,
    current: Value,
    part: impl Fn(&Module, Value) -> Option<Value>,
) -> Option<Value> {
    let add = defined_by(m, sum, arith::ADDF)?;
    let (a, b) = (part(m, m.operand(add, 0))?, part(m, m.operand(add, 1))?);
    match (a == current, b == current) {
        (true, false) => Some(b),
        (false, true) => Some(a),
        _ => None,
    }
}
