//! The `gpu` dialect ops the emitters and `lower-xla-gpu-to-scf` use: thread and block ids
//! and sizes (`gpu.thread_id  x`), `gpu.shuffle` (the warp reduction ladder) and
//! `gpu.barrier`.
//!
//! MLIR prints the dimension and the shuffle mode after two spaces (`gpu.thread_id  x`,
//! `gpu.shuffle  xor ...`): its enum attribute printer adds a space of its own. The project's
//! `xla.range` is a discardable attribute and prints after the dimension. MLIR names a
//! shuffle's results `%shuffleResult, %valid`; our printer names a multi-result op as one
//! group (`%0:2`), so shuffles get no name hint.

use super::{enum_attr, enum_case};
use crate::attrs::Attribute;
use crate::dialects::prelude::*;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::ods::Constraint;
use crate::types::Type;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const BARRIER: &str = "gpu.barrier";
pub const BLOCK_DIM: &str = "gpu.block_dim";
pub const BLOCK_ID: &str = "gpu.block_id";
pub const GRID_DIM: &str = "gpu.grid_dim";
pub const LANE_ID: &str = "gpu.lane_id";
pub const SHUFFLE: &str = "gpu.shuffle";
pub const THREAD_ID: &str = "gpu.thread_id";

/// Ops that read one dimension of a launch index or size; all yield `index`.
pub const DIMENSION_OPS: &[&str] = &[THREAD_ID, BLOCK_ID, BLOCK_DIM, GRID_DIM];

/// Lanes in a warp on every NVIDIA GPU: the width of a `gpu.shuffle`, and what the emitters'
/// tiles, reductions and `lower-xla-gpu-to-scf`'s shuffle ladders count in. Defined here
/// once; the emitters and passes import it.
pub const WARP_SIZE: i64 = 32;

/// The dimensions, as MLIR spells them.
pub const DIMENSIONS: &[&str] = &["x", "y", "z"];

/// The `gpu.shuffle` modes.
pub const SHUFFLE_MODES: &[&str] = &["xor", "up", "down", "idx"];

/// Text before the case of a dimension attribute (`#gpu<dim x>`).
const DIM: &str = "#gpu<dim ";
/// Text before the case of a shuffle mode attribute (`#gpu<shuffle_mode xor>`).
const SHUFFLE_MODE: &str = "#gpu<shuffle_mode ";

/// `x` of `gpu.thread_id  x` (`#gpu<dim x>`).
const DIMENSION: PropKind = PropKind::EnumCase {
    open: DIM,
    cases: DIMENSIONS,
    cpp_name: "::mlir::gpu::Dimension",
};

/// `integer or float or a 1-d vector of them`: what `gpu.shuffle` moves.
const SHUFFLE_VALUE: Constraint = Constraint::new(
    "Integer or Float or fixed-length vector of Integer or Float values of ranks 1",
    is_shuffle_value,
);

/// `gpu.thread_id  x upper_bound 128`: one dimension of a launch index or size.
const DIMENSION_OP: OpDef = OpDef::pure("")
    .operands(&[])
    .results(&[one("result", &INDEX)])
    .props(&[
        required("dimension", DIMENSION),
        optional("upper_bound", PropKind::Index),
    ])
    .format("$dimension (`upper_bound` $upper_bound^)? attr-dict")
    .name_hint(dimension_name);

/// `gpu.shuffle  xor %v, %offset, %width : f32`: the shuffled value and whether it is valid.
const SHUFFLE_OP: OpDef = OpDef::pure(SHUFFLE)
    .operands(&[
        one("value", &SHUFFLE_VALUE),
        one("offset", &I32),
        one("width", &I32),
    ])
    .results(&[one("shuffleResult", &ANY), one("valid", &I1)])
    .props(&[required(
        "mode",
        PropKind::EnumCase {
            open: SHUFFLE_MODE,
            cases: SHUFFLE_MODES,
            cpp_name: "::mlir::gpu::ShuffleMode",
        },
    )])
    .rules(&[same_type(
        "value",
        "shuffleResult",
        "failed to verify that all of {value, shuffleResult} have same type",
    )])
    .format("$mode $value `,` $offset `,` $width attr-dict `:` type($value)");

/// `gpu.lane_id upper_bound 32`: the thread's lane in its warp.
const LANE_ID_OP: OpDef = OpDef::pure(LANE_ID)
    .operands(&[])
    .results(&[one("result", &INDEX)])
    .props(&[optional("upper_bound", PropKind::Index)])
    .format("(`upper_bound` $upper_bound^)? attr-dict")
    .name_hint(|_, _| Some("lane_id".into()));

/// `gpu.barrier`.
const BARRIER_OP: OpDef = OpDef::new(BARRIER)
    .operands(&[])
    .results(&[])
    .format("attr-dict");

pub fn register(r: &mut Registry) {
    for &name in DIMENSION_OPS {
        r.register(DIMENSION_OP.named(name));
    }
    r.register(LANE_ID_OP);
    r.register(SHUFFLE_OP);
    r.register(BARRIER_OP);
}

// ----- builders -----

/// `gpu.thread_id  <dim>` (with `upper_bound` when given).
pub fn build_thread_id(
    m: &mut Module,
    at: InsertPoint,
    dim: &str,
    upper_bound: Option<i64>,
) -> Value {
    build_dimension_op(m, at, THREAD_ID, dim, upper_bound)
}

/// `gpu.block_id  <dim>` (with `upper_bound` when given).
pub fn build_block_id(
    m: &mut Module,
    at: InsertPoint,
    dim: &str,
    upper_bound: Option<i64>,
) -> Value {
    build_dimension_op(m, at, BLOCK_ID, dim, upper_bound)
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
    m.create_result_at(state, at)
}

/// `gpu.thread_id x` (or another id, `name`) with its range `[0, count - 1]` as the
/// `xla.range` attribute, so that later passes know the bounds the launch gives it.
pub fn build_ranged_id(
    m: &mut Module,
    at: InsertPoint,
    name: &str,
    dim: &str,
    count: i64,
) -> Value {
    let v = build_dimension_op(m, at, name, dim, None);
    let op = m.defining_op(v).expect("an op result");
    let range = Attribute::Array(vec![Attribute::index(0), Attribute::index(count - 1)]);
    m.set_attr(op, "xla.range", range);
    v
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
        OpState::new(SHUFFLE)
            .operands(&[value, offset, width])
            .prop("mode", enum_attr(SHUFFLE_MODE, mode))
            .results(&[ty, Type::I1]),
        at,
    );
    (m.result(op, 0), m.result(op, 1))
}

/// `gpu.barrier`.
pub fn build_barrier(m: &mut Module, at: InsertPoint) -> OpId {
    m.create_op_at(OpState::new(BARRIER), at)
}

// ----- thread_id, block_id, block_dim, grid_dim -----

/// `%thread_id_x`, as MLIR names them.
fn dimension_name(m: &Module, op: OpId) -> Option<String> {
    let kind = m.name(op).as_str().strip_prefix("gpu.")?;
    let dim = enum_case(m.prop(op, "dimension"), DIM)?;
    Some(format!("{kind}_{dim}"))
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
