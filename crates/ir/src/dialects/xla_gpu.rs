//! The `xla_gpu` dialect: what the emitters write (DESIGN §5–§6) and the pipeline lowers
//! (DESIGN §7). `xla_gpu.loop`, `xla_gpu.yield`, `xla_gpu.apply_indexing`,
//! `xla_gpu.pure_call`, `xla_gpu.allocate_shared`, `xla_gpu.sync_threads`,
//! `xla_gpu.shuffle_reduce`, `xla_gpu.predicated_insert`, `xla_gpu.predicated_extract`.
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

use super::{
    expect_operand_types, expect_operands, expect_results, parse_operands_with_types,
    print_operands_with_types,
};
use crate::Ident;
use crate::attrs::{self, Attribute, Scalar};
use crate::diag::DResult;
use crate::lexer::Token;
use crate::module::{BlockId, InsertPoint, Loc, Module, OpId, OpState, Value};
use crate::parser::{Argument, Parser, UnresolvedOperand};
use crate::printer::Printer;
use crate::registry::{OpDef, Registry, Traits};
use crate::types::{DYNAMIC, Type};
use crate::verifier::VerifyCx;
use indexing::IndexingMap;
use std::sync::Arc;

/// The property holding the map of `xla_gpu.loop` and `xla_gpu.apply_indexing`.
pub const MAP_ATTR: &str = "indexing_map_attr";
/// The property splitting `xla_gpu.loop`'s operands into dims and inits.
pub const SEGMENTS_ATTR: &str = "operandSegmentSizes";

pub fn register(r: &mut Registry) {
    r.register(
        OpDef::new("xla_gpu.loop")
            .traits(Traits::PURE.union(Traits::SINGLE_BLOCK))
            .inherent(&[MAP_ATTR, SEGMENTS_ATTR])
            .regions(1)
            .syntax(print_loop, parse_loop)
            .verify(verify_loop)
            .name_hint(|_, _| Some("xla_loop".into())),
    );
    r.register(
        OpDef::new("xla_gpu.yield")
            .traits(Traits::TERMINATOR.union(Traits::RETURN_LIKE))
            .regions(0)
            .parents(&["xla_gpu.loop"])
            .syntax(print_operands_with_types, parse_operands_with_types)
            .verify(verify_yield),
    );
    r.register(
        OpDef::new("xla_gpu.apply_indexing")
            .traits(Traits::PURE)
            .inherent(&[MAP_ATTR])
            .regions(0)
            .syntax(print_apply_indexing, parse_apply_indexing)
            .verify(verify_apply_indexing),
    );
    r.register(
        OpDef::new("xla_gpu.pure_call")
            .traits(Traits::PURE)
            .inherent(&["callee"])
            .regions(0)
            .syntax(print_pure_call, parse_pure_call)
            .verify(verify_pure_call)
            .name_hint(|_, _| Some("pure_call".into())),
    );
    r.register(
        OpDef::new("xla_gpu.allocate_shared")
            .regions(0)
            .syntax(print_allocate_shared, parse_allocate_shared)
            .verify(verify_allocate_shared)
            .name_hint(|_, _| Some("shmem".into())),
    );
    r.register(
        OpDef::new("xla_gpu.sync_threads")
            .regions(0)
            .syntax(print_sync_threads, parse_sync_threads)
            .verify(verify_sync_threads)
            .name_hint(|_, _| Some("synced_tensor".into())),
    );
    r.register(
        OpDef::new("xla_gpu.shuffle_reduce")
            .traits(Traits::PURE)
            .inherent(&["combiner", "max_distance"])
            .regions(0)
            .syntax(print_shuffle_reduce, parse_shuffle_reduce)
            .verify(verify_shuffle_reduce),
    );
    r.register(
        OpDef::new("xla_gpu.predicated_insert")
            .traits(Traits::PURE)
            .regions(0)
            .syntax(print_predicated_insert, parse_predicated_insert)
            .verify(verify_predicated_insert),
    );
    r.register(
        OpDef::new("xla_gpu.predicated_extract")
            .traits(Traits::PURE)
            .regions(0)
            .syntax(print_predicated_extract, parse_predicated_extract)
            .verify(verify_predicated_extract),
    );
}

// ----- accessors -----

/// The indexing map of an `xla_gpu.loop` or `xla_gpu.apply_indexing`.
pub fn indexing_map(m: &Module, op: OpId) -> Option<&IndexingMap> {
    m.prop(op, MAP_ATTR).and_then(Attribute::as_indexing_map)
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
        OpState::new("xla_gpu.loop")
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
        OpState::new("xla_gpu.yield").operands(values),
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
        OpState::new("xla_gpu.apply_indexing")
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
    m.create_op_at(
        OpState::new("xla_gpu.pure_call")
            .operands(args)
            .results(results)
            .prop("callee", Attribute::symbol(callee)),
        at,
    )
}

/// `xla_gpu.allocate_shared : ty`.
pub fn build_allocate_shared(m: &mut Module, at: InsertPoint, ty: Type) -> Value {
    let op = m.create_op_at(OpState::new("xla_gpu.allocate_shared").results(&[ty]), at);
    m.result(op, 0)
}

/// `xla_gpu.sync_threads %tensors`: the synchronized tensors, one per operand.
pub fn build_sync_threads(m: &mut Module, at: InsertPoint, tensors: &[Value]) -> Vec<Value> {
    let types: Vec<Type> = tensors.iter().map(|&v| m.value_type(v)).collect();
    let op = m.create_op_at(
        OpState::new("xla_gpu.sync_threads")
            .operands(tensors)
            .results(&types),
        at,
    );
    m.results(op).collect()
}

/// `xla_gpu.shuffle_reduce(operands) to max_distance combiner=@combiner`: the values reduced
/// across the warp, one per operand.
pub fn build_shuffle_reduce(
    m: &mut Module,
    at: InsertPoint,
    combiner: &str,
    operands: &[Value],
    max_distance: i64,
) -> Vec<Value> {
    let types: Vec<Type> = operands.iter().map(|&v| m.value_type(v)).collect();
    let op = m.create_op_at(
        OpState::new("xla_gpu.shuffle_reduce")
            .operands(operands)
            .results(&types)
            .prop("combiner", Attribute::symbol(combiner))
            .prop("max_distance", Attribute::i64(max_distance)),
        at,
    );
    m.results(op).collect()
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
    let mut operands = vec![cond, value, dest];
    operands.extend_from_slice(indices);
    let op = m.create_op_at(
        OpState::new("xla_gpu.predicated_insert")
            .operands(&operands)
            .results(&[ty]),
        at,
    );
    m.result(op, 0)
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
    let mut operands = vec![cond, fallback, src];
    operands.extend_from_slice(indices);
    let op = m.create_op_at(
        OpState::new("xla_gpu.predicated_extract")
            .operands(&operands)
            .results(&[ty]),
        at,
    );
    m.result(op, 0)
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

/// Parses `open %a, %b close` (possibly empty) as operand uses.
fn parse_operand_group<'a>(
    p: &mut Parser<'a>,
    open: u8,
    close: u8,
) -> DResult<Vec<UnresolvedOperand<'a>>> {
    p.parse_punct(open)?;
    let operands = p.parse_operand_list()?;
    p.parse_punct(close)?;
    Ok(operands)
}

/// Resolves uses that all have type `index`.
fn resolve_indices<'a>(
    p: &mut Parser<'a>,
    operands: &[UnresolvedOperand<'a>],
    loc: Loc,
) -> DResult<Vec<Value>> {
    p.resolve_operands(operands, &vec![Type::INDEX; operands.len()], loc)
}

/// Writes `open %a, %b close`.
fn print_group(p: &mut Printer<'_>, open: &str, values: &[Value], close: &str) {
    p.write(open);
    p.values(values.iter().copied());
    p.write(close);
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
        .filter(|&f| m.is(f, "func.func"));
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

// ----- xla_gpu.loop -----

fn print_loop(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let (Some(args), Ok((num_dims, _)), Some(map)) =
        (loop_args(m, op), loop_segments(m, op), m.prop(op, MAP_ATTR))
    else {
        p.write(" <<invalid xla_gpu.loop>>");
        return;
    };
    let operands = m.operand_vec(op);
    let (dims, inits) = operands.split_at(num_dims);
    print_group(p, " (", dims, ")");
    print_group(p, "[", args.induction_vars, "]");
    print_group(p, " -> (", args.map_results, ")");
    p.write(" in ");
    p.attr(map);
    p.write(" iter_args(");
    for (i, (&arg, &init)) in args.iter_args.iter().zip(inits).enumerate() {
        if i > 0 {
            p.write(", ");
        }
        p.value(arg);
        p.write(" = ");
        p.value(init);
    }
    p.write(") -> (");
    p.types(inits.iter().map(|&v| m.value_type(v)));
    p.write(") ");
    p.region(m.region(op, 0), false, true);
    p.attr_dict(op, &[MAP_ATTR, SEGMENTS_ATTR]);
}

/// `iter_args(%a = %x, %b = %y)`: the region arguments and the inits.
fn parse_iter_args<'a>(
    p: &mut Parser<'a>,
) -> DResult<(Vec<Argument<'a>>, Vec<UnresolvedOperand<'a>>)> {
    p.parse_keyword("iter_args")?;
    p.parse_punct(b'(')?;
    let mut args = Vec::new();
    let mut inits = Vec::new();
    if !p.parse_optional_punct(b')') {
        loop {
            args.push(p.parse_argument(false)?);
            p.parse_punct(b'=')?;
            inits.push(p.parse_operand()?);
            if !p.parse_optional_punct(b',') {
                break;
            }
        }
        p.parse_punct(b')')?;
    }
    Ok((args, inits))
}

fn parse_loop(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let dims = parse_operand_group(p, b'(', b')')?;
    let mut args = parse_index_args(p, b'[', b']')?;
    p.parse_arrow()?;
    args.extend(parse_index_args(p, b'(', b')')?);
    p.parse_keyword("in")?;
    let map = parse_map_attr(p)?;
    let (mut iter_args, inits) = parse_iter_args(p)?;
    let tloc = p.loc();
    p.parse_arrow()?;
    let iter_types = p.parse_function_result_types()?;
    if iter_types.len() != iter_args.len() {
        return Err(p.error_at(
            tloc,
            "mismatch in number of loop-carried values and defined values",
        ));
    }
    for (a, &t) in iter_args.iter_mut().zip(&iter_types) {
        a.ty = t;
    }
    let mut operands = resolve_indices(p, &dims, loc)?;
    operands.extend(p.resolve_operands(&inits, &iter_types, loc)?);
    args.extend(iter_args);
    let region = p.parse_region(&args)?;
    p.ensure_terminator(region, "xla_gpu.yield", state.loc);
    p.parse_optional_attr_dict(&mut state.attrs)?;
    attrs::set_named(&mut state.props, Ident::new(MAP_ATTR), map);
    attrs::set_named(
        &mut state.props,
        Ident::new(SEGMENTS_ATTR),
        segments_attr(dims.len(), inits.len()),
    );
    state.operands = operands;
    state.result_types = iter_types;
    state.regions.push(region);
    Ok(())
}

fn verify_loop(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let map = require_map(m, op)?;
    let (num_dims, num_inits) = loop_segments(m, op)?;
    if !map.rt_vars.is_empty() {
        return Err("the indexing map of a loop cannot have runtime variables".into());
    }
    if num_dims != map.dims.len() {
        return Err(format!(
            "mismatch in number of dims operands {num_dims} and DimVars in the indexing map {}",
            map.dims.len()
        ));
    }
    check_index_operands(m, op, 0..num_dims)?;
    if num_inits != m.num_results(op) {
        return Err("mismatch in number of loop-carried values and results".into());
    }
    let Some(body) = m.entry_block(m.region(op, 0)) else {
        return Err("expects a non-empty body region".into());
    };
    let found = m.block_args(body).len();
    let (ivs, results) = (map.range_vars.len(), map.results.len());
    if found != ivs + results + num_inits {
        return Err(format!(
            "expects the body to have {} arguments ({ivs} induction variables, {results} map results and {num_inits} iter_args), but it has {found}",
            ivs + results + num_inits
        ));
    }
    let args = loop_args(m, op).ok_or("expects a non-empty body region")?;
    for (i, &a) in args
        .induction_vars
        .iter()
        .chain(args.map_results)
        .enumerate()
    {
        let t = m.value_type(a);
        if !t.is_index() {
            return Err(format!("body argument #{i} must be index, but got '{t}'"));
        }
    }
    for (i, &arg) in args.iter_args.iter().enumerate() {
        let (arg_ty, init_ty) = (m.value_type(arg), m.value_type(m.operand(op, num_dims + i)));
        let result_ty = m.value_type(m.result(op, i));
        if arg_ty != result_ty || init_ty != result_ty {
            return Err(format!(
                "block iter arg type = '{arg_ty}', result type = '{result_ty}' and init operand type = '{init_ty}' should match"
            ));
        }
    }
    Ok(())
}

// ----- xla_gpu.yield -----

fn verify_yield(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 0)?;
    let Some(parent) = m.parent_op(op) else {
        return Ok(());
    };
    let expected = m.result_types(parent);
    let found = m.num_operands(op);
    if found != expected.len() {
        return Err(format!(
            "expects {} operands to match the results of the parent '{}', but found {found}",
            expected.len(),
            m.name(parent)
        ));
    }
    for (i, (v, t)) in m.operands(op).zip(expected).enumerate() {
        let vt = m.value_type(v);
        if vt != t {
            return Err(format!(
                "type of operand #{i} ('{vt}') doesn't match the result type of the parent '{}' ('{t}')",
                m.name(parent)
            ));
        }
    }
    Ok(())
}

// ----- xla_gpu.apply_indexing -----

fn print_apply_indexing(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let (Some(attr), Some(map)) = (m.prop(op, MAP_ATTR), indexing_map(m, op)) else {
        p.write(" <<invalid xla_gpu.apply_indexing>>");
        return;
    };
    p.write(" ");
    p.attr(attr);
    let operands = m.operand_vec(op);
    let (dims, symbols) = operands.split_at(map.dims.len().min(operands.len()));
    if !dims.is_empty() {
        print_group(p, "(", dims, ")");
    }
    if !symbols.is_empty() {
        print_group(p, "[", symbols, "]");
    }
    p.attr_dict(op, &[MAP_ATTR]);
}

fn parse_apply_indexing(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let map = parse_map_attr(p)?;
    let loc = p.loc();
    let mut operands = Vec::new();
    if p.peek() == Token::Punct(b'(') {
        operands = parse_operand_group(p, b'(', b')')?;
    }
    if p.peek() == Token::Punct(b'[') {
        operands.extend(parse_operand_group(p, b'[', b']')?);
    }
    state.operands = resolve_indices(p, &operands, loc)?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let results = map.as_indexing_map().map_or(0, |m| m.results.len());
    state.result_types = vec![Type::INDEX; results];
    attrs::set_named(&mut state.props, Ident::new(MAP_ATTR), map);
    Ok(())
}

fn verify_apply_indexing(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let map = require_map(m, op)?;
    let (n, expected) = (m.num_operands(op), map.dims.len() + map.num_symbols());
    if n != expected {
        return Err(format!(
            "operand count ({n}) must match the number of dimensions and symbols in the indexing map ({expected})"
        ));
    }
    check_index_operands(m, op, 0..n)?;
    let results = m.num_results(op);
    if results != map.results.len() {
        return Err(format!(
            "expected {} results (one per map result), but found {results}",
            map.results.len()
        ));
    }
    if let Some(t) = m.result_types(op).into_iter().find(|t| !t.is_index()) {
        return Err(format!("results must be index, but got '{t}'"));
    }
    if !map.constraints.is_empty() {
        return Err("apply indexing op cannot have any constraints".into());
    }
    Ok(())
}

// ----- xla_gpu.pure_call -----

fn print_pure_call(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.symbol(
        m.prop(op, "callee")
            .and_then(Attribute::as_symbol)
            .unwrap_or(""),
    );
    print_group(p, "(", &m.operand_vec(op), ")");
    p.attr_dict(op, &["callee"]);
    p.write(" : (");
    p.types(m.operand_types(op));
    p.write(") -> ");
    p.result_types(&m.result_types(op));
}

fn parse_pure_call(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let callee = p.parse_symbol_name()?;
    let loc = p.loc();
    let args = parse_operand_group(p, b'(', b')')?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let (inputs, results) = p.parse_function_type_lists()?;
    state.operands = p.resolve_operands(&args, &inputs, loc)?;
    state.result_types = results;
    attrs::set_named(
        &mut state.props,
        Ident::new("callee"),
        Attribute::symbol(callee),
    );
    Ok(())
}

fn verify_pure_call(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let callee = require_symbol(m, op, "callee")?;
    let ty = Type::function(&m.operand_types(op), &m.result_types(op));
    check_callee(cx, op, "callee", callee, ty)
}

// ----- xla_gpu.allocate_shared -----

fn print_allocate_shared(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.attr_dict(op, &[]);
    p.write(" : ");
    p.types(m.result_types(op));
}

fn parse_allocate_shared(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    p.parse_optional_attr_dict(&mut state.attrs)?;
    state.result_types.push(p.parse_colon_type()?);
    Ok(())
}

fn verify_allocate_shared(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 0)?;
    expect_results(m, op, 1)?;
    let t = m.value_type(m.result(op, 0));
    if !is_static_tensor(t) {
        return Err(format!(
            "result #0 must be statically shaped tensor, but got '{t}'"
        ));
    }
    Ok(())
}

// ----- xla_gpu.sync_threads -----

fn print_sync_threads(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    if m.num_operands(op) > 0 {
        p.write(" ");
        p.values(m.operands(op));
    }
    p.attr_dict(op, &[]);
    if m.num_operands(op) > 0 {
        p.write(" : ");
        p.types(m.operand_types(op));
    }
}

fn parse_sync_threads(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let operands = p.parse_operand_list()?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    if !operands.is_empty() {
        let types = p.parse_colon_type_list()?;
        state.operands = p.resolve_operands(&operands, &types, loc)?;
        state.result_types = types;
    }
    Ok(())
}

fn verify_sync_threads(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operand_types(m, op, "ranked tensor", |t| {
        t.is_tensor() && t.rank().is_some()
    })?;
    check_results_match_operands(m, op)
}

// ----- xla_gpu.shuffle_reduce -----

fn print_shuffle_reduce(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    print_group(p, "(", &m.operand_vec(op), ")");
    let distance = m.prop(op, "max_distance").and_then(Attribute::as_i64);
    p.write_fmt(format_args!(" to {}", distance.unwrap_or(0)));
    p.write(" combiner=");
    p.symbol(
        m.prop(op, "combiner")
            .and_then(Attribute::as_symbol)
            .unwrap_or(""),
    );
    p.attr_dict(op, &["combiner", "max_distance"]);
    p.write(" : ");
    p.types(m.result_types(op));
}

fn parse_shuffle_reduce(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let operands = parse_operand_group(p, b'(', b')')?;
    p.parse_keyword("to")?;
    let dloc = p.loc();
    let distance = i64::try_from(p.parse_integer()?)
        .map_err(|_| p.error_at(dloc, "integer constant out of range for attribute"))?;
    p.parse_keyword("combiner")?;
    p.parse_punct(b'=')?;
    let combiner = p.parse_symbol_name()?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let types = p.parse_colon_type_list()?;
    state.operands = p.resolve_operands(&operands, &types, loc)?;
    state.result_types = types;
    let props = [
        ("combiner", Attribute::symbol(combiner)),
        ("max_distance", Attribute::i64(distance)),
    ];
    for (name, value) in props {
        attrs::set_named(&mut state.props, Ident::new(name), value);
    }
    Ok(())
}

/// Shuffles halve the distance down to 1, so only a power of two below the warp size (32)
/// combines every lane exactly once.
fn check_max_distance(m: &Module, op: OpId) -> Result<(), String> {
    let Some(Attribute::Int(d, ty)) = m.prop(op, "max_distance") else {
        return Err("requires a 'max_distance' attribute of type i64".into());
    };
    if *ty != Type::I64 {
        return Err("requires a 'max_distance' attribute of type i64".into());
    }
    if !(1..=16).contains(d) || d.count_ones() != 1 {
        return Err(format!(
            "max_distance must be a power of two in [1, 16], but got {d}"
        ));
    }
    Ok(())
}

fn verify_shuffle_reduce(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let combiner = require_symbol(m, op, "combiner")?;
    check_max_distance(m, op)?;
    check_results_match_operands(m, op)?;
    // The combiner takes the low lanes' values, then the high lanes'.
    let types = m.operand_types(op);
    let inputs = [types.as_slice(), types.as_slice()].concat();
    check_callee(
        cx,
        op,
        "combiner",
        combiner,
        Type::function(&inputs, &types),
    )
}

// ----- xla_gpu.predicated_insert / predicated_extract -----

/// `%t[%i, ..] if %cond {attrs} : type`, the tail both predicated ops share, with
/// ` else %fallback` after the condition for extract.
fn print_predicated_tail(p: &mut Printer<'_>, op: OpId, tensor: usize, fallback: Option<Value>) {
    let m = p.module();
    let operands = m.operand_vec(op);
    p.value(operands[tensor]);
    print_group(p, "[", &operands[tensor + 1..], "]");
    p.write(" if ");
    p.value(operands[0]);
    if let Some(v) = fallback {
        p.write(" else ");
        p.value(v);
    }
    p.attr_dict(op, &[]);
    p.write(" : ");
    p.ty(m.value_type(operands[tensor]));
}

fn print_predicated_insert(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.value(m.operand(op, 1));
    p.write(" into ");
    print_predicated_tail(p, op, 2, None);
}

fn print_predicated_extract(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    print_predicated_tail(p, op, 2, Some(m.operand(op, 1)));
}

/// `%t[%i, ..] if %cond`, parsed: what both predicated ops have before their tail.
struct IndexedIf<'a> {
    tensor: UnresolvedOperand<'a>,
    indices: Vec<UnresolvedOperand<'a>>,
    cond: UnresolvedOperand<'a>,
    loc: Loc,
}

fn parse_indexed_if<'a>(p: &mut Parser<'a>) -> DResult<IndexedIf<'a>> {
    let loc = p.loc();
    let tensor = p.parse_operand()?;
    let indices = parse_operand_group(p, b'[', b']')?;
    p.parse_keyword("if")?;
    let cond = p.parse_operand()?;
    Ok(IndexedIf {
        tensor,
        indices,
        cond,
        loc,
    })
}

/// `{attrs} : tensor<..>`: the tensor type and its element type.
fn parse_tensor_tail(p: &mut Parser<'_>, state: &mut OpState) -> DResult<(Type, Type)> {
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let loc = p.loc();
    let ty = p.parse_type()?;
    match ty.element_type().filter(|_| ty.is_tensor()) {
        Some(elem) => Ok((ty, elem)),
        None => Err(p.error_at(loc, format!("expected a tensor type, but got '{ty}'"))),
    }
}

/// Resolves the operands in the predicated ops' order: condition, `scalar` (the value or the
/// fallback, of the element type), tensor, indices.
fn resolve_predicated<'a>(
    p: &mut Parser<'a>,
    indexed: &IndexedIf<'a>,
    scalar: &UnresolvedOperand<'a>,
    (ty, elem): (Type, Type),
) -> DResult<Vec<Value>> {
    let mut operands = vec![
        p.resolve_operand(&indexed.cond, Type::I1)?,
        p.resolve_operand(scalar, elem)?,
        p.resolve_operand(&indexed.tensor, ty)?,
    ];
    operands.extend(resolve_indices(p, &indexed.indices, indexed.loc)?);
    Ok(operands)
}

fn parse_predicated_insert(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let value = p.parse_operand()?;
    p.parse_keyword("into")?;
    let indexed = parse_indexed_if(p)?;
    let types = parse_tensor_tail(p, state)?;
    state.operands = resolve_predicated(p, &indexed, &value, types)?;
    state.result_types.push(types.0);
    Ok(())
}

fn parse_predicated_extract(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let indexed = parse_indexed_if(p)?;
    p.parse_keyword("else")?;
    let fallback = p.parse_operand()?;
    let types = parse_tensor_tail(p, state)?;
    state.operands = resolve_predicated(p, &indexed, &fallback, types)?;
    state.result_types.push(types.1);
    Ok(())
}

/// The checks both predicated ops share: a condition, a scalar of the element type (the value
/// or the fallback), a static tensor and its indices, one result of type `result(tensor,
/// elem)`. `scalar` names operand #1 in messages.
fn verify_predicated(
    m: &Module,
    op: OpId,
    scalar: &str,
    result: impl Fn(Type, Type) -> Type,
) -> Result<(), String> {
    if m.num_operands(op) < 3 {
        return Err(format!(
            "expected a condition, a {scalar} and a tensor operand"
        ));
    }
    expect_results(m, op, 1)?;
    check_condition(m, op)?;
    let elem = check_indexed_tensor(m, op, 2)?;
    let t = m.value_type(m.operand(op, 2));
    let s = m.value_type(m.operand(op, 1));
    if s != elem {
        return Err(format!(
            "{scalar} type '{s}' does not match the element type of '{t}'"
        ));
    }
    let (r, expected) = (m.value_type(m.result(op, 0)), result(t, elem));
    if r != expected {
        return Err(format!(
            "result type '{r}' does not match the expected type '{expected}'"
        ));
    }
    Ok(())
}

fn verify_predicated_insert(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    verify_predicated(cx.module, op, "value", |tensor, _| tensor)
}

fn verify_predicated_extract(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    verify_predicated(cx.module, op, "fallback", |_, elem| elem)
}
