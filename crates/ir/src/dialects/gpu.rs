//! The `gpu` dialect ops the emitters and `lower-xla-gpu-to-scf` use: thread and block ids
//! and sizes (`gpu.thread_id  x`), `gpu.shuffle` (the warp reduction ladder) and
//! `gpu.barrier`.
//!
//! MLIR prints the dimension and the shuffle mode after two spaces (`gpu.thread_id  x`,
//! `gpu.shuffle  xor ...`): its enum attribute printer adds a space of its own. The project's
//! `xla.range` is a discardable attribute and prints after the dimension. MLIR names a
//! shuffle's results `%shuffleResult, %valid`; our printer names a multi-result op as one
//! group (`%0:2`), so shuffles get no name hint.

use super::{enum_attr, enum_case, expect_operands, expect_results};
use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::parser::Parser;
use crate::printer::Printer;
use crate::registry::{OpDef, Registry, Traits};
use crate::types::Type;
use crate::verifier::VerifyCx;

/// Ops that read one dimension of a launch index or size; all yield `index`.
pub const DIMENSION_OPS: &[&str] = &[
    "gpu.thread_id",
    "gpu.block_id",
    "gpu.block_dim",
    "gpu.grid_dim",
];

/// The dimensions, as MLIR spells them.
pub const DIMENSIONS: &[&str] = &["x", "y", "z"];

/// The `gpu.shuffle` modes.
pub const SHUFFLE_MODES: &[&str] = &["xor", "up", "down", "idx"];

/// Text before the case of a dimension attribute (`#gpu<dim x>`).
const DIM: &str = "#gpu<dim ";
/// Text before the case of a shuffle mode attribute (`#gpu<shuffle_mode xor>`).
const SHUFFLE_MODE: &str = "#gpu<shuffle_mode ";

pub fn register(r: &mut Registry) {
    for &name in DIMENSION_OPS {
        r.register(
            OpDef::new(name)
                .traits(Traits::PURE)
                .inherent(&["dimension", "upper_bound"])
                .regions(0)
                .syntax(print_dimension_op, parse_dimension_op)
                .verify(verify_dimension_op)
                .name_hint(dimension_name),
        );
    }
    r.register(
        OpDef::new("gpu.shuffle")
            .traits(Traits::PURE)
            .inherent(&["mode"])
            .regions(0)
            .syntax(print_shuffle, parse_shuffle)
            .verify(verify_shuffle),
    );
    r.register(
        OpDef::new("gpu.barrier")
            .regions(0)
            .syntax(|p, op| p.attr_dict(op, &[]), parse_barrier)
            .verify(verify_barrier),
    );
}

// ----- builders -----

/// `gpu.thread_id  <dim>` (with `upper_bound` when given).
pub fn build_thread_id(
    m: &mut Module,
    at: InsertPoint,
    dim: &str,
    upper_bound: Option<i64>,
) -> Value {
    build_dimension_op(m, at, "gpu.thread_id", dim, upper_bound)
}

/// `gpu.block_id  <dim>` (with `upper_bound` when given).
pub fn build_block_id(
    m: &mut Module,
    at: InsertPoint,
    dim: &str,
    upper_bound: Option<i64>,
) -> Value {
    build_dimension_op(m, at, "gpu.block_id", dim, upper_bound)
}

/// One of [`DIMENSION_OPS`] for dimension `x`, `y` or `z`. Callers add `xla.range` with
/// [`Module::set_attr`].
pub fn build_dimension_op(
    m: &mut Module,
    at: InsertPoint,
    name: &str,
    dim: &str,
    upper_bound: Option<i64>,
) -> Value {
    assert!(DIMENSIONS.contains(&dim), "gpu dimension '{dim}'");
    let mut state = OpState::new(name)
        .prop("dimension", enum_attr(DIM, dim))
        .results(&[Type::INDEX]);
    if let Some(bound) = upper_bound {
        state = state.prop("upper_bound", Attribute::index(bound));
    }
    let op = m.create_op_at(state, at);
    m.result(op, 0)
}

/// `gpu.shuffle  <mode> %value, %offset, %width`; returns the shuffled value and the
/// valid flag.
pub fn build_shuffle(
    m: &mut Module,
    at: InsertPoint,
    mode: &str,
    value: Value,
    offset: Value,
    width: Value,
) -> (Value, Value) {
    assert!(SHUFFLE_MODES.contains(&mode), "gpu.shuffle mode '{mode}'");
    let ty = m.value_type(value);
    let op = m.create_op_at(
        OpState::new("gpu.shuffle")
            .operands(&[value, offset, width])
            .prop("mode", enum_attr(SHUFFLE_MODE, mode))
            .results(&[ty, Type::I1]),
        at,
    );
    (m.result(op, 0), m.result(op, 1))
}

/// `gpu.barrier`.
pub fn build_barrier(m: &mut Module, at: InsertPoint) -> OpId {
    m.create_op_at(OpState::new("gpu.barrier"), at)
}

// ----- enum cases -----

/// Parses one of `cases` into the enum property `prop` (`#gpu<dim x>`); `what` names the C++
/// enum in MLIR's error message.
fn parse_case(
    p: &mut Parser<'_>,
    state: &mut OpState,
    (prop, open): (&str, &str),
    cases: &[&str],
    what: &str,
) -> DResult<()> {
    let loc = p.loc();
    let case = p.parse_optional_any_keyword().filter(|c| cases.contains(c));
    let Some(case) = case else {
        return Err(p.error_at(
            loc,
            format!("expected {what} to be one of: {}", cases.join(", ")),
        ));
    };
    attrs::set_named(&mut state.props, Ident::new(prop), enum_attr(open, case));
    Ok(())
}

/// The case of an enum property that must be one of `cases`.
fn valid_case<'m>(
    m: &'m Module,
    op: OpId,
    (prop, open): (&str, &str),
    cases: &[&str],
) -> Result<&'m str, String> {
    let attr = m.prop(op, prop);
    match enum_case(attr, open) {
        Some(case) if cases.contains(&case) => Ok(case),
        _ if attr.is_none() => Err(format!("requires attribute '{prop}'")),
        _ => Err(format!(
            "attribute '{prop}' must be one of: {}",
            cases.join(", ")
        )),
    }
}

// ----- thread_id, block_id, block_dim, grid_dim -----

fn verify_dimension_op(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 0)?;
    expect_results(m, op, 1)?;
    let r = m.value_type(m.result(op, 0));
    if !r.is_index() {
        return Err(format!("result #0 must be index, but got '{r}'"));
    }
    valid_case(m, op, ("dimension", DIM), DIMENSIONS)?;
    match m.prop(op, "upper_bound") {
        None | Some(Attribute::Int(_, Type::INDEX)) => Ok(()),
        Some(_) => {
            Err("attribute 'upper_bound' failed to satisfy constraint: index attribute".into())
        }
    }
}

/// `%thread_id_x`, as MLIR names them.
fn dimension_name(m: &Module, op: OpId) -> Option<String> {
    let kind = m.name(op).as_str().strip_prefix("gpu.")?;
    let dim = enum_case(m.prop(op, "dimension"), DIM)?;
    Some(format!("{kind}_{dim}"))
}

/// `  x upper_bound 128 {attrs}`
fn print_dimension_op(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let dim = enum_case(m.prop(op, "dimension"), DIM).unwrap_or("");
    p.write("  ");
    p.write(dim);
    if let Some(bound) = m.prop(op, "upper_bound").and_then(Attribute::as_i64) {
        p.write(&format!(" upper_bound {bound}"));
    }
    p.attr_dict(op, &["dimension", "upper_bound"]);
}

fn parse_dimension_op(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    parse_case(
        p,
        state,
        ("dimension", DIM),
        DIMENSIONS,
        "::mlir::gpu::Dimension",
    )?;
    if p.parse_optional_keyword("upper_bound") {
        let loc = p.loc();
        let bound = p.parse_integer()?;
        let bound =
            i64::try_from(bound).map_err(|_| p.error_at(loc, "upper bound out of range"))?;
        let attr = Attribute::index(bound);
        attrs::set_named(&mut state.props, Ident::new("upper_bound"), attr);
    }
    p.parse_optional_attr_dict(&mut state.attrs)?;
    state.result_types.push(Type::INDEX);
    Ok(())
}

// ----- gpu.shuffle -----

/// Integers, floats and 1-d vectors of them (MLIR's shuffle operand constraint).
fn is_shuffle_value(t: Type) -> bool {
    let scalar = |t: Type| t.is_integer() || t.is_float();
    match t.shape() {
        Some(shape) if t.is_vector() => shape.len() == 1 && scalar(t.element_type_or_self()),
        Some(_) => false,
        None => scalar(t),
    }
}

fn verify_shuffle(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 3)?;
    expect_results(m, op, 2)?;
    let value = m.value_type(m.operand(op, 0));
    if !is_shuffle_value(value) {
        return Err(format!(
            "operand #0 must be Integer or Float or fixed-length vector of Integer or Float values of ranks 1, but got '{value}'"
        ));
    }
    for i in 1..3 {
        let t = m.value_type(m.operand(op, i));
        if t != Type::I32 {
            return Err(format!(
                "operand #{i} must be 32-bit signless integer, but got '{t}'"
            ));
        }
    }
    if m.value_type(m.result(op, 0)) != value {
        return Err("failed to verify that all of {value, shuffleResult} have same type".into());
    }
    let valid = m.value_type(m.result(op, 1));
    if valid != Type::I1 {
        return Err(format!(
            "result #1 must be 1-bit signless integer, but got '{valid}'"
        ));
    }
    valid_case(m, op, ("mode", SHUFFLE_MODE), SHUFFLE_MODES)?;
    Ok(())
}

/// `  xor %v, %offset, %width {attrs} : f32`
fn print_shuffle(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write("  ");
    p.write(enum_case(m.prop(op, "mode"), SHUFFLE_MODE).unwrap_or(""));
    p.write(" ");
    p.values(m.operands(op));
    p.attr_dict(op, &["mode"]);
    p.write(" : ");
    p.ty(m.value_type(m.operand(op, 0)));
}

fn parse_shuffle(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    parse_case(
        p,
        state,
        ("mode", SHUFFLE_MODE),
        SHUFFLE_MODES,
        "::mlir::gpu::ShuffleMode",
    )?;
    let loc = p.loc();
    let operands = p.parse_operand_list()?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.operands = p.resolve_operands(&operands, &[ty, Type::I32, Type::I32], loc)?;
    state.result_types = vec![ty, Type::I1];
    Ok(())
}

// ----- gpu.barrier -----

fn verify_barrier(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    expect_operands(cx.module, op, 0)?;
    expect_results(cx.module, op, 0)
}

fn parse_barrier(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    p.parse_optional_attr_dict(&mut state.attrs)
}
