//! The `xla_gpu` dialect: what the emitters write and the pipeline lowers.
//! `xla_gpu.loop`, `xla_gpu.yield`, `xla_gpu.apply_indexing`,
//! `xla_gpu.pure_call`, `xla_gpu.allocate_shared`, `xla_gpu.sync_threads`,
//! `xla_gpu.shuffle_reduce`, `xla_gpu.predicated_insert`, `xla_gpu.predicated_extract`,
//! `xla_gpu.atomic_rmw`.
//!
//! The custom syntax, traits and inherent attributes are XLA's (`xla_gpu_ops.td` /
//! `xla_gpu_ops.cc`), and so are the verifier messages of the rules XLA checks; our dumps read
//! like XLA's, and their generic form (properties `indexing_map_attr`, `operandSegmentSizes`,
//! `callee`, `combiner`, `max_distance`) parses in MLIR with unregistered dialects allowed.
//! Where XLA checks less (pure_call's argument and result types, shuffle_reduce's combiner
//! and distance, the loop body's arguments) we check more, with messages of our own.
//! Decisions:
//!
//! * `xla_gpu.loop`'s body arguments are, as in XLA, the induction variables (one per range
//!   variable of the map), then one per map result, then the iter args. `iter_args(...)` and
//!   the `[...]` of induction variables are always printed, even when empty, as XLA does.
//! * `xla_gpu.yield` prints like `func.return` (`{attrs}` before the operands, not after as in
//!   XLA's format); the two agree whenever the yield has no attributes, which is always.
//! * `xla_gpu.apply_indexing` rejects maps with constraints, as XLA does: the bounds check is
//!   the enclosing loop's (`scf.if` after lowering), so passes that lower a loop clear the
//!   constraints of the maps they apply.
//! * `xla_gpu.shuffle_reduce` gives **every lane** the reduction of its group of
//!   `2 * max_distance` lanes (lanes `l` and `l ^ d` combine at each distance `d`, `xor`),
//!   where XLA's shuffles `down` and defines lane 0 only. Lane 0's value is the same either
//!   way (at each step it combines its values with lane `d`'s, its own first), so what XLA's
//!   kernels read means the same; ours may also read any lane, and a combiner that gives the
//!   same bits for `(a, b)` and `(b, a)` (every reducer XLA's reductions have) gives the same
//!   bits in every lane of a group.

use super::{
    dense_ints, expect_operand_types, expect_results, parse_int_list, parse_operand_group,
    print_group, print_int_list,
};
use crate::Ident;
use crate::attrs::{self, Attribute, Scalar};
use crate::diag::DResult;
use crate::dialects::func;
use crate::dialects::prelude::*;
use crate::lexer::Token;
use crate::module::{BlockId, InsertPoint, Module, OpId, OpState, Value};
use crate::parser::{Argument, Parser, UnresolvedOperand};
use crate::printer::Printer;
use crate::registry::{OpDef, Registry};
use crate::traits::Traits;
use crate::types::{DYNAMIC, Type};
use crate::verifier::VerifyCx;
use indexing::IndexingMap;
use std::sync::Arc;

mod ops;

use ops::*;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const ALLOCATE_SHARED: &str = "xla_gpu.allocate_shared";
pub const APPLY_INDEXING: &str = "xla_gpu.apply_indexing";
pub const ATOMIC_RMW: &str = "xla_gpu.atomic_rmw";
pub const LOOP: &str = "xla_gpu.loop";
pub const PREDICATED_EXTRACT: &str = "xla_gpu.predicated_extract";
pub const PREDICATED_INSERT: &str = "xla_gpu.predicated_insert";
pub const PURE_CALL: &str = "xla_gpu.pure_call";
pub const SHUFFLE_REDUCE: &str = "xla_gpu.shuffle_reduce";
pub const REDUCE: &str = "xla_gpu.reduce";
pub const GET_DYNAMIC_DIM_SIZE: &str = "xla_gpu.get_dynamic_dim_size";
pub const INSERT: &str = "xla_gpu.insert";
pub const SYNC_THREADS: &str = "xla_gpu.sync_threads";
pub const YIELD: &str = "xla_gpu.yield";

/// The property holding the map of `xla_gpu.loop` and `xla_gpu.apply_indexing`.
pub const MAP_ATTR: &str = "indexing_map_attr";

/// A discardable attribute of `xla_gpu.loop` (and the `scf.for` loops it becomes): unroll
/// fully, whatever `unroll-loops`' size budget says, because what the iterations compute
/// is meant to stay in registers (a thread's part of a row that several loops read).
pub const UNROLL_ATTR: &str = "xla.unroll";
/// The property splitting `xla_gpu.loop`'s operands into dims and inits.
pub const SEGMENTS_ATTR: &str = "operandSegmentSizes";

/// What `xla_gpu.allocate_shared` yields.
const STATIC_TENSOR: crate::ods::Constraint =
    crate::ods::Constraint::new("statically shaped tensor", is_static_tensor);

/// The dialect's ops, declared.
const OPS: &[OpDef] = &[
    OpDef::new(LOOP)
        .traits(Traits::PURE.union(Traits::SINGLE_BLOCK))
        .inherent(&[MAP_ATTR, SEGMENTS_ATTR])
        .regions(1)
        .syntax(print_loop, parse_loop)
        .verify(verify_loop)
        .name_hint(|_, _| Some("xla_loop".into())),
    super::RETURN_LIKE
        .named(YIELD)
        .traits(Traits::TERMINATOR.union(Traits::RETURN_LIKE))
        .parents(&[LOOP, ATOMIC_RMW])
        .verify(verify_yield),
    OpDef::pure(APPLY_INDEXING)
        .inherent(&[MAP_ATTR])
        .syntax(print_apply_indexing, parse_apply_indexing)
        .verify(verify_apply_indexing),
    OpDef::pure(PURE_CALL)
        .inherent(&["callee"])
        .syntax(print_pure_call, parse_pure_call)
        .verify(verify_pure_call)
        .name_hint(|_, _| Some("pure_call".into())),
    // XLA's size of a dynamic dimension (`%in 1 : tensor<..>`, an i32): `lower-tensors`
    // loads it from after the buffer's data, as XLA lays it out; our emitters never make it
    // (shapes here are static) and the interpreter, whose buffers hold no sizes, refuses it.
    OpDef::pure(GET_DYNAMIC_DIM_SIZE)
        .operands(&[one("tensor", &STATIC_TENSOR)])
        .results(&[one("result", &I32)])
        .props(&[required("dim", PropKind::Index)])
        .format("$tensor $dim attr-dict `:` type($tensor)")
        .verify(verify_get_dynamic_dim_size),
    // XLA's insert of an indexed vector (`!xla_gpu.indexed_vector<..>`, the value of its
    // newer reduction emitters) into a tensor: read, verified and printed; our emitters
    // write elements with `tensor.insert`, and the lowering passes refuse it at the op.
    OpDef::pure(INSERT)
        .inherent(&["map"])
        .syntax(print_insert, parse_insert)
        .verify(verify_insert),
    OpDef::new(ALLOCATE_SHARED)
        .operands(&[])
        .results(&[one("result", &STATIC_TENSOR)])
        .format("attr-dict `:` type($result)")
        .name_hint(|_, _| Some("shmem".into())),
    OpDef::new(SYNC_THREADS)
        .syntax(print_sync_threads, parse_sync_threads)
        .verify(verify_sync_threads)
        .name_hint(|_, _| Some("synced_tensor".into())),
    // XLA's reduction before its emitter lowers it: read, verified and printed; the passes
    // here refuse it (the emitters here write reductions out).
    OpDef::pure(REDUCE)
        .inherent(&["combiner", "dimensions"])
        .syntax(print_reduce, parse_reduce)
        .verify(verify_reduce),
    OpDef::pure(SHUFFLE_REDUCE)
        .inherent(&["combiner", "max_distance"])
        .syntax(print_shuffle_reduce, parse_shuffle_reduce)
        .verify(verify_shuffle_reduce),
    OpDef::pure(PREDICATED_INSERT)
        .syntax(print_predicated_insert, parse_predicated_insert)
        .verify(verify_predicated_insert),
    // Not pure: it writes the element in place, visible to every thread at once.
    OpDef::new(ATOMIC_RMW)
        .traits(Traits::SINGLE_BLOCK)
        .regions(1)
        .syntax(print_atomic_rmw, parse_atomic_rmw)
        .verify(verify_atomic_rmw),
    OpDef::pure(PREDICATED_EXTRACT)
        .syntax(print_predicated_extract, parse_predicated_extract)
        .verify(verify_predicated_extract),
];

pub fn register(r: &mut Registry) {
    r.register_all(OPS);
}

// ----- accessors -----

/// The indexing map of an `xla_gpu.loop` or `xla_gpu.apply_indexing`.
pub fn indexing_map(m: &Module, op: OpId) -> Option<&IndexingMap> {
    m.prop(op, MAP_ATTR).and_then(Attribute::as_indexing_map)
}

/// Whether an `xla_gpu.atomic_rmw` updates a vector of elements at once (XLA's packed
/// form: its body's argument is a vector), which lowering and the interpreter do not write.
pub fn atomic_rmw_is_packed(m: &Module, op: OpId) -> bool {
    m.entry_block(m.region(op, 0)).is_some_and(|body| {
        (m.block_args(body).iter()).any(|&a| m.value_type(a).element_type().is_some())
    })
}

/// The body arguments of an `xla_gpu.loop`, split as XLA's `LoopOp` splits them.
#[derive(Clone, Copy, Debug)]
pub struct LoopArgs<'m> {
    /// One per range variable of the map.
    pub induction_vars: &'m [Value],
    /// One per result of the map, evaluated at the induction variables.
    pub map_results: &'m [Value],
    /// One per init (and result).
    pub iter_args: &'m [Value],
}

/// The body arguments of an `xla_gpu.loop`, or `None` when the body does not match the map.
pub fn loop_args(m: &Module, op: OpId) -> Option<LoopArgs<'_>> {
    let map = indexing_map(m, op)?;
    let body = m.entry_block(*m.regions(op).first()?)?;
    let args = m.block_args(body);
    let (induction_vars, rest) = args.split_at_checked(map.range_vars.len())?;
    let (map_results, iter_args) = rest.split_at_checked(map.results.len())?;
    Some(LoopArgs {
        induction_vars,
        map_results,
        iter_args,
    })
}

/// The number of dim operands and inits of an `xla_gpu.loop` (its `operandSegmentSizes`),
/// checked against its operand count.
pub fn loop_segments(m: &Module, op: OpId) -> Result<(usize, usize), String> {
    let Some(Attribute::DenseArray { values, .. }) = m
        .prop(op, SEGMENTS_ATTR)
        .filter(|a| matches!(a, Attribute::DenseArray { elem, .. } if *elem == Type::I32))
    else {
        return Err(format!(
            "requires a '{SEGMENTS_ATTR}' attribute of type array<i32>"
        ));
    };
    let sizes: Option<Vec<usize>> = values
        .iter()
        .map(|v| v.as_int().and_then(|n| usize::try_from(n).ok()))
        .collect();
    let Some(sizes) = sizes else {
        return Err(format!(
            "'{SEGMENTS_ATTR}' attribute cannot have negative elements"
        ));
    };
    let &[dims, inits] = sizes.as_slice() else {
        return Err(format!(
            "'{SEGMENTS_ATTR}' attribute for specifying operand segments must have 2 elements, but got {}",
            sizes.len()
        ));
    };
    let n = m.num_operands(op);
    if dims + inits != n {
        return Err(format!(
            "operand count ({n}) does not match with the total size ({}) specified in attribute '{SEGMENTS_ATTR}'",
            dims + inits
        ));
    }
    Ok((dims, inits))
}

fn segments_attr(dims: usize, inits: usize) -> Attribute {
    Attribute::DenseArray {
        elem: Type::I32,
        values: vec![Scalar::Int(dims as i128), Scalar::Int(inits as i128)],
    }
}

// ----- builders -----

/// Names XLA prints for a loop's body arguments: `i`, `j`, .. `n` for induction variables,
/// `ra`, `rb`, .. `rz` for map results, `iter` for iter args (the printer makes repeats
/// unique). An emitter's own names replace them.
fn loop_arg_names(ivs: usize, results: usize, iters: usize) -> Vec<String> {
    let iv = (0..ivs).map(|i| char::from(b'i' + i.min(5) as u8).to_string());
    let result = (0..results).map(|i| format!("r{}", char::from(b'a' + i.min(25) as u8)));
    let iter = (0..iters).map(|_| "iter".to_owned());
    iv.chain(result).chain(iter).collect()
}

/// Creates `xla_gpu.loop (dims)[ivs] -> (results) in map iter_args(inits)` with an empty body
/// (no terminator yet); returns the op and its body block (arguments: see [`LoopArgs`]).
pub fn build_loop(
    m: &mut Module,
    at: InsertPoint,
    map: impl Into<Arc<IndexingMap>>,
    dims: &[Value],
    inits: &[Value],
) -> (OpId, BlockId) {
    let map = map.into();
    let iter_types: Vec<Type> = inits.iter().map(|&v| m.value_type(v)).collect();
    let mut arg_types = vec![Type::INDEX; map.range_vars.len() + map.results.len()];
    arg_types.extend(&iter_types);
    let (region, body) = m.create_region_with_block(&arg_types);
    let names = loop_arg_names(map.range_vars.len(), map.results.len(), inits.len());
    for (i, name) in names.iter().enumerate() {
        let arg = m.block_arg(body, i);
        m.set_value_name(arg, Some(name));
    }
    let mut operands = dims.to_vec();
    operands.extend_from_slice(inits);
    let op = m.create_op_at(
        OpState::new(LOOP)
            .operands(&operands)
            .results(&iter_types)
            .prop(MAP_ATTR, Attribute::IndexingMap(map))
            .prop(SEGMENTS_ATTR, segments_attr(dims.len(), inits.len()))
            .region(region),
        at,
    );
    (op, body)
}

/// Appends `xla_gpu.yield %values` to `block`.
pub fn build_yield(m: &mut Module, block: BlockId, values: &[Value]) -> OpId {
    m.create_op_at(
        OpState::new(YIELD).operands(values),
        InsertPoint::BlockEnd(block),
    )
}

/// `xla_gpu.apply_indexing map(dims)[symbols]`: one `index` per map result.
pub fn build_apply_indexing(
    m: &mut Module,
    at: InsertPoint,
    map: impl Into<Arc<IndexingMap>>,
    dims: &[Value],
    symbols: &[Value],
) -> Vec<Value> {
    let map = map.into();
    let results = vec![Type::INDEX; map.results.len()];
    let mut operands = dims.to_vec();
    operands.extend_from_slice(symbols);
    let op = m.create_op_at(
        OpState::new(APPLY_INDEXING)
            .operands(&operands)
            .results(&results)
            .prop(MAP_ATTR, Attribute::IndexingMap(map)),
        at,
    );
    m.results(op).collect()
}

/// `xla_gpu.pure_call @callee(args) : (..) -> results`.
pub fn build_pure_call(
    m: &mut Module,
    at: InsertPoint,
    callee: &str,
    args: &[Value],
    results: &[Type],
) -> OpId {
    m.create_op_at(super::call_state(PURE_CALL, callee, args, results), at)
}

/// `xla_gpu.allocate_shared : ty`.
pub fn build_allocate_shared(m: &mut Module, at: InsertPoint, ty: Type) -> Value {
    m.create_result_at(OpState::new(ALLOCATE_SHARED).results(&[ty]), at)
}

/// `xla_gpu.sync_threads %tensors`: the synchronized tensors, one per operand.
pub fn build_sync_threads(m: &mut Module, at: InsertPoint, tensors: &[Value]) -> Vec<Value> {
    let types: Vec<Type> = tensors.iter().map(|&v| m.value_type(v)).collect();
    let op = m.create_op_at(
        OpState::new(SYNC_THREADS).operands(tensors).results(&types),
        at,
    );
    m.results(op).collect()
}

/// `xla_gpu.shuffle_reduce(operands) to max_distance combiner=@combiner`: the values reduced
/// across each group of `2 * max_distance` lanes, one per operand, in every lane (module
/// documentation).
pub fn build_shuffle_reduce(
    m: &mut Module,
    at: InsertPoint,
    combiner: &str,
    operands: &[Value],
    max_distance: i64,
) -> Vec<Value> {
    let types: Vec<Type> = operands.iter().map(|&v| m.value_type(v)).collect();
    let op = m.create_op_at(
        OpState::new(SHUFFLE_REDUCE)
            .operands(operands)
            .results(&types)
            .prop("combiner", Attribute::symbol(combiner))
            .prop("max_distance", Attribute::i64(max_distance)),
        at,
    );
    m.results(op).collect()
}

/// `xla_gpu.atomic_rmw %tensor[indices]` with an empty body whose argument is the current
/// element (the caller appends the ops and the `xla_gpu.yield` of the new one); returns the
/// op and its body block.
pub fn build_atomic_rmw(
    m: &mut Module,
    at: InsertPoint,
    tensor: Value,
    indices: &[Value],
) -> (OpId, BlockId) {
    let ty = m.value_type(tensor);
    let elem = ty.element_type().expect("a tensor");
    let (region, body) = m.create_region_with_block(&[elem]);
    let current = m.block_arg(body, 0);
    m.set_value_name(current, Some("current"));
    let mut operands = vec![tensor];
    operands.extend_from_slice(indices);
    let op = m.create_op_at(
        OpState::new(ATOMIC_RMW)
            .operands(&operands)
            .results(&[ty])
            .region(region),
        at,
    );
    (op, body)
}

/// `xla_gpu.predicated_insert %value into %dest[indices] if %cond`: the updated tensor.
pub fn build_predicated_insert(
    m: &mut Module,
    at: InsertPoint,
    cond: Value,
    value: Value,
    dest: Value,
    indices: &[Value],
) -> Value {
    let ty = m.value_type(dest);
    let operands = [&[cond, value, dest][..], indices].concat();
    let state = OpState::new(PREDICATED_INSERT).operands(&operands);
    m.create_result_at(state.results(&[ty]), at)
}

/// `xla_gpu.predicated_extract %src[indices] if %cond else %fallback`: the element.
pub fn build_predicated_extract(
    m: &mut Module,
    at: InsertPoint,
    cond: Value,
    fallback: Value,
    src: Value,
    indices: &[Value],
) -> Value {
    let ty = m.value_type(fallback);
    let operands = [&[cond, fallback, src][..], indices].concat();
    let state = OpState::new(PREDICATED_EXTRACT).operands(&operands);
    m.create_result_at(state.results(&[ty]), at)
}

// ----- shared syntax -----

/// Parses an attribute that must be an indexing map (`#map` or `#xla_gpu.indexing_map<..>`).
fn parse_map_attr(p: &mut Parser<'_>) -> DResult<Attribute> {
    let loc = p.loc();
    let attr = p.parse_attribute()?;
    if attr.as_indexing_map().is_none() {
        return Err(p.error_at(
            loc,
            format!("expected an indexing map attribute, but got '{attr}'"),
        ));
    }
    Ok(attr)
}

/// Parses `open %a, %b close` (possibly empty) as region arguments of type `index`.
fn parse_index_args<'a>(p: &mut Parser<'a>, open: u8, close: u8) -> DResult<Vec<Argument<'a>>> {
    p.parse_punct(open)?;
    let mut args = Vec::new();
    if !p.parse_optional_punct(close) {
        loop {
            let mut arg = p.parse_argument(false)?;
            arg.ty = Type::INDEX;
            args.push(arg);
            if !p.parse_optional_punct(b',') {
                break;
            }
        }
        p.parse_punct(close)?;
    }
    Ok(args)
}

// ----- shared verification -----

fn require_map(m: &Module, op: OpId) -> Result<&IndexingMap, String> {
    indexing_map(m, op)
        .ok_or_else(|| format!("requires a '{MAP_ATTR}' attribute holding an indexing map"))
}

fn require_symbol<'m>(m: &'m Module, op: OpId, name: &str) -> Result<&'m str, String> {
    m.prop(op, name)
        .and_then(Attribute::as_symbol)
        .ok_or_else(|| format!("requires a '{name}' symbol reference attribute"))
}

/// The operands in `range` all have type `index`.
fn check_index_operands(m: &Module, op: OpId, range: std::ops::Range<usize>) -> Result<(), String> {
    for i in range {
        let t = m.value_type(m.operand(op, i));
        if !t.is_index() {
            return Err(format!("operand #{i} must be index, but got '{t}'"));
        }
    }
    Ok(())
}

/// The function `callee` names is a `func.func` of type `expected` (`what` is `callee` or
/// `combiner`, for the message).
fn check_callee(
    cx: &VerifyCx<'_>,
    op: OpId,
    what: &str,
    callee: &str,
    expected: Type,
) -> Result<(), String> {
    let m = cx.module;
    let func = cx
        .lookup_symbol(op, callee)
        .filter(|&f| m.is(f, func::FUNC));
    let Some(actual) = func
        .and_then(|f| m.prop(f, "function_type"))
        .and_then(Attribute::as_type)
    else {
        return Err(format!(
            "{what} '@{callee}' does not reference a valid function"
        ));
    };
    if actual != expected {
        return Err(format!(
            "{what} '@{callee}' has type '{actual}', but expected '{expected}'"
        ));
    }
    Ok(())
}

/// As many results as operands, of the same types (XLA's `TypesMatchWith`).
fn check_results_match_operands(m: &Module, op: OpId) -> Result<(), String> {
    if m.operand_types(op) != m.result_types(op) {
        return Err("failed to verify that result type matches type of operands".into());
    }
    Ok(())
}

/// A tensor of static shape.
fn is_static_tensor(t: Type) -> bool {
    t.is_tensor() && t.shape().is_some_and(|s| !s.contains(&DYNAMIC))
}

/// Operand `tensor` is a static tensor indexed by the operands after it; returns its element
/// type.
fn check_indexed_tensor(m: &Module, op: OpId, tensor: usize) -> Result<Type, String> {
    let t = m.value_type(m.operand(op, tensor));
    let Some((elem, rank)) = t
        .element_type()
        .zip(t.rank())
        .filter(|_| is_static_tensor(t))
    else {
        return Err(format!(
            "operand #{tensor} must be statically shaped tensor, but got '{t}'"
        ));
    };
    let n = m.num_operands(op) - tensor - 1;
    if n != rank {
        return Err(format!(
            "incorrect number of indices: expected {rank}, but found {n}"
        ));
    }
    check_index_operands(m, op, tensor + 1..m.num_operands(op))?;
    Ok(elem)
}

/// Operand 0 of the predicated ops is the `i1` condition.
fn check_condition(m: &Module, op: OpId) -> Result<(), String> {
    let t = m.value_type(m.operand(op, 0));
    if t != Type::I1 {
        return Err(format!(
            "operand #0 must be 1-bit signless integer, but got '{t}'"
        ));
    }
    Ok(())
}
