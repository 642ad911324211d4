//! `lower-xla-gpu-to-scf`: lowers the `xla_gpu` ops that stand for control flow to `scf`,
//! `arith` and `gpu` (XLA's `lower_xla_gpu_to_scf.cc`).
//!
//! * `xla_gpu.loop (dims)[ivs] -> (results) in #map iter_args(..)` becomes one `scf.for` per
//!   range variable of the map (outermost first, from its lower bound to its upper bound + 1,
//!   step 1, the iter args threaded through every level). The nest checks that the point
//!   lies in the map's domain — every constraint `expr in [lo, hi]`, then every dimension in
//!   its range, as XLA's `CheckConstraints` does — and runs the rest in an `scf.if` on that
//!   condition; the else branch yields the iter args unchanged. XLA checks in the innermost
//!   body; here the check goes up to the outermost level that defines every range variable
//!   the constraints use, with the inner loops inside the `scf.if` (skipping all their
//!   iterations is what failing the check in each would do). A thread's vector loop whose
//!   symbol no constraint names — the packed transpose's, a masked tile's — is then a bare
//!   loop that `vectorize-loads-stores` can turn into one vector access. Each
//!   constraint expression is computed by an `xla_gpu.apply_indexing` of a single-result map
//!   without constraints (the verifier rejects constrained maps there), before the `scf.if`.
//!   Inside it, each map result becomes one such `apply_indexing`, or the value itself when
//!   the result is a plain dimension or range variable (XLA's folder does the same), or an
//!   index constant. A loop whose map has neither dimensions nor constraints needs no check
//!   and gets no `scf.if`. The seed's GELU loop becomes its lines 200–225.
//! * `xla_gpu.predicated_insert` / `predicated_extract` become an `scf.if` around a
//!   `tensor.insert` / `tensor.extract`, yielding the destination / the fallback otherwise.
//! * `xla_gpu.shuffle_reduce(values) to D combiner=@f` becomes a ladder of warp shuffles at
//!   distances D, D/2, .., 1 (width 32), each followed by `func.call @f(values, shuffled)`.
//!   XLA shuffles `down`; this pass shuffles `xor`, the op's semantics here (every lane gets
//!   its group's reduction, `ir::dialects::xla_gpu`). For lane 0, the only lane XLA's
//!   reduction reads, both are the same: at every step lane `l < distance` reads lane
//!   `l ^ distance = l + distance`, and the combiner gets its own values first as with `down`.
//!   `gpu.shuffle` moves 32 bits: `i32` and `f32` go as they are; other signless integers and
//!   floats are bitcast to an integer, zero-extended to a multiple of 32 bits, shuffled in
//!   32-bit pieces (`trunci`/`shrui` out, `extui`/`shli`/`ori` back) and converted back, as
//!   XLA does with `llvm` vector bitcasts, here in `arith` so the result stays in standard
//!   dialects. `index`, signed/unsigned integers, vectors and other types are refused with an
//!   error at the op.

use crate::pass::{Pass, op_error};
use crate::rewrite::inline_block_before;
use indexing::{AffineExpr, IndexingMap, Interval};
use ir::dialects::xla_gpu::{self, MAP_ATTR};
use ir::dialects::{arith, gpu, scf, tensor};
use ir::intern::FxHashMap;
use ir::{Attribute, BlockId, Builder, Diagnostic, InsertPoint, Module, OpId, Type, Value};
use std::ops::Range;
use std::sync::Arc;

pub use ir::dialects::gpu::WARP_SIZE;

/// The pass (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct LowerXlaGpuToScf;

impl Pass for LowerXlaGpuToScf {
    crate::pass_names!(
        "lower-xla-gpu-to-scf",
        "Lower xla_gpu.loop to scf.for + scf.if, predicated insert/extract to scf.if and \
         shuffle_reduce to a gpu.shuffle ladder"
    );

    fn run(&self, module: &mut Module) -> Result<(), Diagnostic> {
        for op in module.collect_ops(module.top()) {
            if !module.is_alive(op) {
                continue;
            }
            match module.name(op).as_str() {
                xla_gpu::LOOP => lower_loop(module, op)?,
                xla_gpu::PREDICATED_INSERT => lower_predicated(module, op, Predicated::Insert),
                xla_gpu::PREDICATED_EXTRACT => lower_predicated(module, op, Predicated::Extract),
                xla_gpu::SHUFFLE_REDUCE => lower_shuffle_reduce(module, op)?,
                _ => {}
            }
        }
        Ok(())
    }
}

// ----- xla_gpu.loop -----

/// Index constants created once each, in one run before the ops of the lowered loop: the
/// first goes before the loop, the others after it, so all of them dominate the nest.
struct IndexConstants {
    at: InsertPoint,
    values: FxHashMap<i64, Value>,
}

impl IndexConstants {
    fn new(op: OpId) -> IndexConstants {
        IndexConstants {
            at: InsertPoint::Before(op),
            values: FxHashMap::default(),
        }
    }

    fn get(&mut self, m: &mut Module, v: i64) -> Value {
        if let Some(&c) = self.values.get(&v) {
            return c;
        }
        let c = arith::build_index_constant(m, self.at, v);
        if let Some(op) = m.defining_op(c) {
            self.at = InsertPoint::After(op);
        }
        self.values.insert(v, c);
        c
    }
}

/// The `scf.for` nest of a loop: one `scf.for` per range variable, outermost first.
#[derive(Clone)]
struct Nest {
    /// One per range variable.
    ivs: Vec<Value>,
    /// The loop-carried values inside the innermost `scf.for` (the inits without loops).
    iters: Vec<Value>,
    /// The op the innermost body goes before: the innermost `scf.yield` (its operands are set
    /// once the body is built), or the `xla_gpu.loop` itself when it has no range variables.
    anchor: OpId,
    /// The outermost loop's results, when there are loops.
    results: Option<Vec<Value>>,
}

/// The parts of an `xla_gpu.loop` the lowering reads.
struct LoopParts {
    map: Arc<IndexingMap>,
    dims: Vec<Value>,
    inits: Vec<Value>,
    body: BlockId,
    /// The body's arguments, for their names: induction variables, map results, iter args.
    old_args: Vec<Value>,
    /// The loop's [`xla_gpu::UNROLL_ATTR`], which every `scf.for` of its nest keeps.
    unroll: Option<Attribute>,
}

fn loop_parts(m: &Module, op: OpId) -> Result<LoopParts, Diagnostic> {
    let Some(Attribute::IndexingMap(map)) = m.prop(op, MAP_ATTR) else {
        return Err(op_error(m, op, "has no indexing map"));
    };
    let (num_dims, _) = xla_gpu::loop_segments(m, op).map_err(|e| op_error(m, op, e))?;
    let body = m
        .regions(op)
        .first()
        .and_then(|&r| m.entry_block(r))
        .filter(|_| xla_gpu::loop_args(m, op).is_some())
        .ok_or_else(|| op_error(m, op, "has a body that does not match its map"))?;
    let operands = m.operand_vec(op);
    Ok(LoopParts {
        map: map.clone(),
        dims: operands[..num_dims].to_vec(),
        inits: operands[num_dims..].to_vec(),
        body,
        old_args: m.block_args(body).to_vec(),
        unroll: m.attr(op, xla_gpu::UNROLL_ATTR).cloned(),
    })
}

fn lower_loop(m: &mut Module, op: OpId) -> Result<(), Diagnostic> {
    let parts = loop_parts(m, op)?;
    let mut constants = IndexConstants::new(op);
    let num_vars = parts.map.range_vars.len();
    let checked_at = check_depth(&parts.map);
    let start = Nest {
        ivs: Vec::new(),
        iters: parts.inits.clone(),
        anchor: op,
        results: None,
    };
    let outer = build_nest(m, &parts, start, 0..checked_at, &mut constants);
    let values = match domain_check(m, &parts, &outer, &mut constants) {
        None => lower_inner(m, &parts, &outer, checked_at..num_vars, &mut constants),
        Some(in_domain) => {
            let types: Vec<Type> = outer.iters.iter().map(|&v| m.value_type(v)).collect();
            let at = InsertPoint::Before(outer.anchor);
            let (if_op, then_block, else_block) = scf::build_if(m, at, in_domain, &types, true);
            let then_yield = scf::build_yield(m, then_block, &outer.iters);
            let inside = Nest {
                anchor: then_yield,
                results: None,
                ..outer.clone()
            };
            let values = lower_inner(m, &parts, &inside, checked_at..num_vars, &mut constants);
            m.set_operands(then_yield, &values);
            if let Some(else_block) = else_block {
                scf::build_yield(m, else_block, &outer.iters);
            }
            m.results(if_op).collect()
        }
    };
    let results = match outer.results {
        Some(results) => {
            m.set_operands(outer.anchor, &values);
            results
        }
        None => values,
    };
    for (i, v) in results.into_iter().enumerate() {
        let r = m.result(op, i);
        m.replace_all_uses(r, v);
    }
    m.erase_op(op);
    Ok(())
}

/// How many of the map's range variables (outermost first) the domain check needs: one past
/// the last that a constraint uses.
fn check_depth(map: &IndexingMap) -> usize {
    (0..map.range_vars.len())
        .rev()
        .find(|&s| map.constraints.iter().any(|(e, _)| e.uses_symbol(s)))
        .map_or(0, |s| s + 1)
}

/// The loops of range variables `vars` inside `at` (whose anchor they go before) and the
/// loop body in the innermost; returns the values that replace `at`'s anchor's operands:
/// the outermost new loop's results, or the body's values when there are no loops.
fn lower_inner(
    m: &mut Module,
    parts: &LoopParts,
    at: &Nest,
    vars: Range<usize>,
    constants: &mut IndexConstants,
) -> Vec<Value> {
    let start = Nest {
        results: None,
        ..at.clone()
    };
    let inner = build_nest(m, parts, start, vars, constants);
    let values = move_body(m, inner.anchor, parts, &inner, constants);
    match inner.results {
        Some(results) => {
            m.set_operands(inner.anchor, &values);
            results
        }
        None => values,
    }
}

/// Adds one `scf.for` per range variable in `vars` to `nest`, before its anchor, each loop
/// yielding the results of the next; the innermost `scf.yield` waits for the body's values.
fn build_nest(
    m: &mut Module,
    parts: &LoopParts,
    mut nest: Nest,
    vars: Range<usize>,
    constants: &mut IndexConstants,
) -> Nest {
    let iter_names = &parts.old_args[parts.old_args.len() - parts.inits.len()..];
    for v in vars {
        let var = &parts.map.range_vars[v];
        let lb = constants.get(m, var.bounds.lo);
        let ub = constants.get(m, var.bounds.hi.saturating_add(1));
        let step = constants.get(m, 1);
        let at = InsertPoint::Before(nest.anchor);
        let (for_op, block) = scf::build_for(m, at, lb, ub, step, &nest.iters);
        if let Some(unroll) = &parts.unroll {
            m.set_attr(for_op, xla_gpu::UNROLL_ATTR, unroll.clone());
        }
        let for_results: Vec<Value> = m.results(for_op).collect();
        match nest.results {
            None => nest.results = Some(for_results),
            Some(_) => m.set_operands(nest.anchor, &for_results),
        }
        let args = m.block_args(block).to_vec();
        copy_names(m, &[parts.old_args[v]], &args[..1]);
        copy_names(m, iter_names, &args[1..]);
        nest.ivs.push(args[0]);
        nest.iters = args[1..].to_vec();
        nest.anchor = scf::build_yield(m, block, &nest.iters);
    }
    nest
}

/// Moves the loop body before `before`, its arguments replaced by the induction variables,
/// the map's results at the current point and the iter args; returns the yielded values.
fn move_body(
    m: &mut Module,
    before: OpId,
    parts: &LoopParts,
    nest: &Nest,
    constants: &mut IndexConstants,
) -> Vec<Value> {
    let mut args = nest.ivs.clone();
    let result_names = &parts.old_args[nest.ivs.len()..nest.ivs.len() + parts.map.results.len()];
    for (expr, &name) in parts.map.results.iter().zip(result_names) {
        let (v, fresh) = materialize(m, before, parts, expr, &nest.ivs, constants);
        if fresh {
            copy_names(m, &[name], &[v]);
        }
        args.push(v);
    }
    args.extend_from_slice(&nest.iters);
    inline_block_before(m, parts.body, before, &args)
}

/// The value of `expr` at the current point: a dimension or induction variable as it is, an
/// index constant, or an `xla_gpu.apply_indexing` (then `fresh` is true) of a map with the
/// loop map's domain, `expr` as its only result and no constraints.
fn materialize(
    m: &mut Module,
    before: OpId,
    parts: &LoopParts,
    expr: &AffineExpr,
    ivs: &[Value],
    constants: &mut IndexConstants,
) -> (Value, bool) {
    match expr {
        AffineExpr::Dim(i) => (parts.dims[*i], false),
        AffineExpr::Symbol(s) => (ivs[*s], false),
        AffineExpr::Constant(c) => (constants.get(m, *c), false),
        _ => {
            // Only the loops built so far: a domain check above inner loops sees the outer
            // range variables, which are all its constraints use.
            let map = IndexingMap::new(
                parts.map.dims.clone(),
                parts.map.range_vars[..ivs.len()].to_vec(),
                Vec::new(),
                vec![expr.clone()],
            );
            let at = InsertPoint::Before(before);
            let v = xla_gpu::build_apply_indexing(m, at, map, &parts.dims, ivs)[0];
            (v, true)
        }
    }
}

/// The `i1` that holds when the current point is in the map's domain: every constraint, then
/// every dimension, in its range (None when the map has neither).
fn domain_check(
    m: &mut Module,
    parts: &LoopParts,
    nest: &Nest,
    constants: &mut IndexConstants,
) -> Option<Value> {
    let mut checks = Vec::new();
    for (expr, bounds) in &parts.map.constraints {
        let (v, _) = materialize(m, nest.anchor, parts, expr, &nest.ivs, constants);
        checks.push(in_range(m, nest.anchor, v, *bounds, constants));
    }
    for (var, &dim) in parts.map.dims.iter().zip(&parts.dims) {
        checks.push(in_range(m, nest.anchor, dim, var.bounds, constants));
    }
    let mut b = Builder::before(m, nest.anchor);
    let in_domain = checks
        .into_iter()
        .reduce(|a, c| b.binary(ir::dialects::arith::ANDI, a, c))?;
    m.set_value_name(in_domain, Some("inbounds"));
    Some(in_domain)
}

/// `v == lo` for a point, `v >= lo && v <= hi` otherwise (XLA's `CheckConstraint`).
fn in_range(
    m: &mut Module,
    before: OpId,
    v: Value,
    bounds: Interval,
    constants: &mut IndexConstants,
) -> Value {
    let lo = constants.get(m, bounds.lo);
    if bounds.is_point() {
        return Builder::before(m, before).cmpi("eq", v, lo);
    }
    let hi = constants.get(m, bounds.hi);
    let mut b = Builder::before(m, before);
    let above = b.cmpi("sge", v, lo);
    let below = b.cmpi("sle", v, hi);
    b.binary(ir::dialects::arith::ANDI, above, below)
}

/// Gives each value in `to` the name of the value at the same place in `from`.
fn copy_names(m: &mut Module, from: &[Value], to: &[Value]) {
    for (&old, &new) in from.iter().zip(to) {
        let name = m.value_name(old).map(str::to_owned);
        m.set_value_name(new, name.as_deref());
    }
}

// ----- predicated insert / extract -----

#[derive(Clone, Copy, PartialEq, Eq)]
enum Predicated {
    Insert,
    Extract,
}

/// `scf.if %cond { tensor.insert/extract } else { dest / fallback }` (operands: condition,
/// value or fallback, tensor, indices).
fn lower_predicated(m: &mut Module, op: OpId, kind: Predicated) {
    let operands = m.operand_vec(op);
    let (cond, scalar, tensor, indices) = (operands[0], operands[1], operands[2], &operands[3..]);
    let ty = m.value_type(m.result(op, 0));
    let (if_op, then_block, else_block) =
        scf::build_if(m, InsertPoint::Before(op), cond, &[ty], true);
    let at = InsertPoint::BlockEnd(then_block);
    let (value, otherwise) = match kind {
        Predicated::Insert => (tensor::build_insert(m, at, scalar, tensor, indices), tensor),
        Predicated::Extract => (tensor::build_extract(m, at, tensor, indices), scalar),
    };
    scf::build_yield(m, then_block, &[value]);
    if let Some(else_block) = else_block {
        scf::build_yield(m, else_block, &[otherwise]);
    }
    let result = m.result(if_op, 0);
    m.replace_op(op, &[result]);
}

// ----- xla_gpu.shuffle_reduce -----

fn lower_shuffle_reduce(m: &mut Module, op: OpId) -> Result<(), Diagnostic> {
    let distance = m
        .prop(op, "max_distance")
        .and_then(Attribute::as_i64)
        .filter(|&d| d > 0 && d < WARP_SIZE && d.count_ones() == 1)
        .ok_or_else(|| op_error(m, op, "max_distance must be a power of 2 < warp size (32)"))?;
    let combiner = m
        .prop(op, "combiner")
        .and_then(Attribute::as_symbol)
        .ok_or_else(|| op_error(m, op, "has no combiner"))?
        .to_owned();
    let types = m.operand_types(op);
    if let Some(t) = types.iter().find(|t| !is_shuffleable(**t)) {
        return Err(op_error(
            m,
            op,
            format!("cannot shuffle a value of type '{t}' (signless integers and floats only)"),
        ));
    }
    let mut values = m.operand_vec(op);
    let mut b = Builder::before(m, op);
    let width = b.int(WARP_SIZE.into(), Type::I32);
    let mut d = distance;
    while d > 0 {
        let offset = b.int(d.into(), Type::I32);
        let shuffled: Vec<Value> = values
            .iter()
            .map(|&v| shuffle_xor(&mut b, v, offset, width))
            .collect();
        let call = b.call(&combiner, &[values, shuffled].concat(), &types);
        values = b.module.results(call).collect();
        d /= 2;
    }
    m.replace_op(op, &values);
    Ok(())
}

/// Types [`shuffle_xor`] handles.
fn is_shuffleable(t: Type) -> bool {
    t.is_signless_integer() || t.is_float()
}

/// `gpu.shuffle xor` of any signless integer or float, in 32-bit pieces.
fn shuffle_xor(b: &mut Builder<'_>, v: Value, offset: Value, width: Value) -> Value {
    let ty = b.module.value_type(v);
    if ty == Type::I32 || ty == Type::F32 {
        return shuffle_32(b, v, offset, width);
    }
    let bits = ty.bit_width().unwrap_or(32);
    let int_ty = Type::int(bits);
    let as_int = if ty.is_float() {
        b.cast(ir::dialects::arith::BITCAST, v, int_ty)
    } else {
        v
    };
    let pieces = bits.div_ceil(32);
    let padded_ty = Type::int(pieces * 32);
    let padded = if pieces * 32 > bits {
        b.cast(ir::dialects::arith::EXTUI, as_int, padded_ty)
    } else {
        as_int
    };
    let shuffled = if pieces == 1 {
        shuffle_32(b, padded, offset, width)
    } else {
        shuffle_pieces(b, padded, pieces, offset, width)
    };
    let narrowed = if pieces * 32 > bits {
        b.cast(ir::dialects::arith::TRUNCI, shuffled, int_ty)
    } else {
        shuffled
    };
    if ty.is_float() {
        b.cast(ir::dialects::arith::BITCAST, narrowed, ty)
    } else {
        narrowed
    }
}

/// Shuffles an `i(32 * pieces)` as `pieces` 32-bit shuffles, low piece first.
fn shuffle_pieces(
    b: &mut Builder<'_>,
    wide: Value,
    pieces: u32,
    offset: Value,
    width: Value,
) -> Value {
    let ty = b.module.value_type(wide);
    let mut joined: Option<Value> = None;
    for k in 0..pieces {
        let shift = (k > 0).then(|| b.int((32 * k).into(), ty));
        let shifted = match shift {
            Some(s) => b.binary(ir::dialects::arith::SHRUI, wide, s),
            None => wide,
        };
        let piece = b.cast(ir::dialects::arith::TRUNCI, shifted, Type::I32);
        let moved = shuffle_32(b, piece, offset, width);
        let extended = b.cast(ir::dialects::arith::EXTUI, moved, ty);
        let placed = match shift {
            Some(s) => b.binary(ir::dialects::arith::SHLI, extended, s),
            None => extended,
        };
        joined = Some(match joined {
            Some(acc) => b.binary(ir::dialects::arith::ORI, acc, placed),
            None => placed,
        });
    }
    joined.unwrap_or(wide)
}

fn shuffle_32(b: &mut Builder<'_>, v: Value, offset: Value, width: Value) -> Value {
    let at = b.insertion_point();
    gpu::build_shuffle(b.module, at, "xor", v, offset, width).0
}
