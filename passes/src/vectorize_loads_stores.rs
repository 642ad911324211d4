//! `vectorize-loads-stores`: element accesses that walk a vector's worth of contiguous,
//! aligned elements in a small loop become one vector load or store outside the loop
//! (XLA's `vectorize_loads_stores.cc`).
//!
//! The loop emitter gives each thread a few consecutive elements (the seed's
//! `vector_index` loop); after `flatten-tensors` their offsets are `base + vector_index`.
//! Reading them as one `vector<4xbf16>` instead of four scalars is what lets the backend
//! emit `ld.global.v2`/`v4` loads. The rules, XLA's with the limits made explicit:
//!
//! * **The loop**: an `scf.for` over `index` with constant lower bound 0, step 1 and a
//!   constant power-of-two trip count `n ≥ 2`.
//! * **The tensor**: 1-d, no layout encoding (run `flatten-tensors` first), a static size that
//!   `n` divides, elements of at least 8 bits (no `i1`, no `index`; packed `i2`/`i4` where
//!   the `n` elements are whole bytes), and `n` elements in at most 128 bits (the widest
//!   vector access a GPU thread makes).
//! * **The index**: the induction variable itself, or the single result of an
//!   `xla_gpu.apply_indexing` that uses the induction variable as exactly one operand (whose
//!   range in the map covers the whole loop), whose other operands are defined outside the
//!   loop, and whose simplified result is `iv + rest` with `rest` free of the induction
//!   variable (stride 1: contiguous). `rest` — the offset at `iv = 0` — must be a provable
//!   multiple of `n` (aligned): the gcd of its terms' known factors, after simplifying with
//!   the map's ranges. With the size divisible by `n`, the vector is then in bounds whenever
//!   the scalar code's first access is, so transfers are marked `in_bounds = [true]`.
//! * **Loads**: a `tensor.extract` directly in the loop body (not nested in an `scf.if`: a
//!   hoisted load must not run where the scalar one would not) from a tensor defined
//!   outside the loop that is not one of the loop's inits (those are being written by the
//!   loop). It becomes a `vector.transfer_read` before the loop at the offset for `iv = 0`
//!   (the same map with the lower bound for the induction variable) and a
//!   `vector.extract %v[%iv]` in place of the element access.
//! * **Stores**: a `tensor.insert` directly in the loop body into iter arg `k`, which only
//!   this insert uses, whose result only the loop's `scf.yield` uses, at position `k`. The
//!   loop gets a vector iter arg (starting as zeros) that a `vector.insert %x, %vec[%iv]`
//!   fills, the tensor passes through the loop unchanged, and one `vector.transfer_write`
//!   after the loop writes the vector into the loop's init `k`; it replaces result `k`.
//!
//! Anything else is left as it is: this pass only ever improves code, never fails.

use crate::fold::constant_int;
use crate::pass::Pass;
use crate::rewrite::{erase_with_dead_operands, replace_op, replace_with_new_op};
use indexing::{AffineExpr, IndexingMap};
use ir::dialects::scf;
use ir::dialects::tensor;
use ir::dialects::vector::{self, Position};
use ir::dialects::{arith, xla_gpu};
use ir::{Attribute, Diagnostic, InsertPoint, Module, OpId, OpState, Scalar, Type, Value};
use std::sync::Arc;

/// The pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct VectorizeLoadsStores;

impl Pass for VectorizeLoadsStores {
    crate::pass_names!(
        "vectorize-loads-stores",
        "Turn contiguous element accesses in small loops into vector transfers outside them"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let loops: Vec<OpId> = m.ops_named(scf::FOR);
        for lp in loops {
            if let Some(n) = trip_count(m, lp) {
                vectorize_loop(m, lp, n);
            }
        }
        Ok(())
    }
}

/// The widest vector access, in bits.
const MAX_VECTOR_BITS: i64 = 128;

/// Vectorizes the loads, then the stores, directly in the body of loop `lp` of `n`
/// iterations.
fn vectorize_loop(m: &mut Module, mut lp: OpId, n: i64) {
    let Some(body) = m.entry_block(m.region(lp, 0)) else {
        return;
    };
    let ops: Vec<OpId> = m.block_ops(body).collect();
    let mut bases = Bases::default();
    for &op in &ops {
        if m.is(op, tensor::EXTRACT) {
            vectorize_load(m, lp, n, op, &mut bases);
        }
    }
    let mut last_write = None;
    for &op in &ops {
        if m.is_alive(op)
            && m.is(op, tensor::INSERT)
            && let Some((new_loop, write)) = vectorize_store(m, lp, n, op, last_write, &mut bases)
        {
            (lp, last_write) = (new_loop, Some(write));
        }
    }
}

/// The trip count of an `scf.for` that runs `0..n` step 1 over `index`, when `n` is a
/// power of two of at least 2.
fn trip_count(m: &Module, lp: OpId) -> Option<i64> {
    let bound = |i| constant_int(m, m.operand(lp, i));
    let iv = m.block_arg(m.entry_block(m.region(lp, 0))?, 0);
    if !m.value_type(iv).is_index() || bound(0)? != 0 || bound(2)? != 1 {
        return None;
    }
    let n = i64::try_from(bound(1)?).ok()?;
    (n >= 2 && n.count_ones() == 1).then_some(n)
}

/// `vector<n x elem>` for accesses to a tensor of type `t` in a loop of `n` iterations, if
/// `t` qualifies (see the module documentation). Packed `i2`/`i4` elements qualify when the
/// vector is whole bytes: the access starts at a multiple of `n`, so at a byte, and a
/// store writes every element of its bytes, which no other thread then shares (a scalar
/// store of them is a compare-and-swap of the byte).
fn vector_type(t: Type, n: i64) -> Option<Type> {
    let (&[size], elem) = (t.shape()?, t.element_type()?) else {
        return None;
    };
    let bits = i64::from(elem.bit_width()?);
    let packed = matches!(bits, 2 | 4) && (n * bits) % 8 == 0;
    let ok = t.tensor_layout().is_none()
        && size > 0
        && size % n == 0
        && (bits >= 8 || packed)
        && n * bits <= MAX_VECTOR_BITS;
    ok.then(|| Type::vector(&[n], elem))
}

/// Whether `v` is defined outside loop `lp` (so it can be used before the loop).
fn defined_outside(m: &Module, v: Value, lp: OpId) -> bool {
    let mut block = m.value_block(v);
    while let Some(b) = block {
        match m.block_parent_op(b) {
            Some(op) if op == lp => return false,
            Some(op) => block = m.parent_block(op),
            None => return true,
        }
    }
    true
}

/// How to compute, before the loop, the offset an access makes at `iv = 0`.
enum Base {
    /// The access is at `iv`: the base is the lower bound.
    InductionVar,
    /// The access is at an `apply_indexing`'s result: the base is `map` applied to its
    /// operands with the lower bound in place of `iv`.
    Apply {
        map: Arc<IndexingMap>,
        operands: Vec<Value>,
    },
}

/// The base of an access at `index` in loop `lp` of `n` iterations, if the access is
/// contiguous in the induction variable and aligned to `n`.
fn base_of(m: &Module, lp: OpId, n: i64, index: Value) -> Option<Base> {
    let iv = m.block_arg(m.entry_block(m.region(lp, 0))?, 0);
    if index == iv {
        return Some(Base::InductionVar);
    }
    let op = m
        .defining_op(index)
        .filter(|&op| m.is(op, xla_gpu::APPLY_INDEXING))?;
    let Some(Attribute::IndexingMap(map)) = m.prop(op, xla_gpu::MAP_ATTR) else {
        return None;
    };
    if map.results.len() != 1 || !map.constraints.is_empty() {
        return None;
    }
    let mut operands = m.operand_vec(op);
    let mut iv_uses = operands.iter().enumerate().filter(|&(_, &v)| v == iv);
    let (iv_operand, _) = iv_uses.next()?;
    if iv_uses.next().is_some()
        || !operands
            .iter()
            .all(|&v| v == iv || defined_outside(m, v, lp))
    {
        return None;
    }
    let (var, range) = if iv_operand < map.dims.len() {
        (AffineExpr::Dim(iv_operand), map.dims[iv_operand].bounds)
    } else {
        let s = iv_operand - map.dims.len();
        (AffineExpr::Symbol(s), map.symbol(s).bounds)
    };
    let covers_loop = range.lo <= 0 && n - 1 <= range.hi;
    if !covers_loop || !contiguous_and_aligned(map, &var, n) {
        return None;
    }
    operands[iv_operand] = m.operand(lp, 0);
    Some(Base::Apply {
        map: map.clone(),
        operands,
    })
}

/// Whether `map`'s result is `var + rest` with `rest` free of `var` and a provable
/// multiple of `n` (after simplification with the map's ranges).
fn contiguous_and_aligned(map: &IndexingMap, var: &AffineExpr, n: i64) -> bool {
    let simplified = map.clone().simplified();
    let mut terms = simplified.results[0].sum_terms();
    let Some(at) = terms.iter().position(|t| *t == var) else {
        return false;
    };
    terms.remove(at);
    if terms.iter().any(|t| mentions(t, var)) {
        return false;
    }
    let rest = terms
        .into_iter()
        .cloned()
        .reduce(|a, b| a + b)
        .unwrap_or(AffineExpr::Constant(0));
    known_multiple(&simplified.simplify_expr(&rest)) % n == 0
}

fn mentions(e: &AffineExpr, var: &AffineExpr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= x == var);
    found
}

/// A number every value of `e` is a multiple of (0 when `e` is always 0): XLA's
/// `GetAlignmentOfRemainder`.
fn known_multiple(e: &AffineExpr) -> i64 {
    match e {
        AffineExpr::Constant(c) => c.abs(),
        AffineExpr::Dim(_) | AffineExpr::Symbol(_) => 1,
        AffineExpr::Add(a, b) | AffineExpr::Max(a, b) | AffineExpr::Min(a, b) => {
            gcd(known_multiple(a), known_multiple(b))
        }
        AffineExpr::Product(a, b) => known_multiple(a).saturating_mul(known_multiple(b)),
        AffineExpr::Mul(a, c) => known_multiple(a).saturating_mul(c.abs()),
        AffineExpr::Mod(a, m) => gcd(known_multiple(a), *m),
        AffineExpr::FloorDiv(..) | AffineExpr::CeilDiv(..) => 1,
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A map and the operands it is applied to.
type BaseKey = (Arc<IndexingMap>, Vec<Value>);

/// The base offsets computed before one loop, by map and operands: a load and a store at
/// the same offsets share one `apply_indexing`.
#[derive(Default)]
struct Bases {
    computed: Vec<(BaseKey, Value)>,
}

impl Bases {
    /// The base offset, computed before loop `lp` unless an equal one already is.
    fn materialize(&mut self, m: &mut Module, lp: OpId, base: Base) -> Value {
        let Base::Apply { map, operands } = base else {
            return m.operand(lp, 0);
        };
        let key = (map, operands);
        if let Some((_, v)) = self.computed.iter().find(|(k, _)| *k == key) {
            return *v;
        }
        let (map, operands) = key;
        let v =
            xla_gpu::build_apply_indexing(m, InsertPoint::Before(lp), map.clone(), &operands, &[])
                [0];
        self.computed.push(((map, operands), v));
        v
    }
}

/// A zero of type `ty` (a scalar or a vector of integers or floats).
fn zero(ty: Type) -> Attribute {
    let elem = ty.element_type_or_self();
    let scalar = if elem.is_float() {
        Scalar::Float(ir::FloatValue(0.0))
    } else {
        Scalar::Int(0)
    };
    match (ty.is_vector(), scalar) {
        (true, s) => Attribute::dense_splat(ty, s),
        (false, Scalar::Float(f)) => Attribute::Float(f, ty),
        (false, Scalar::Int(i)) => Attribute::int(i, ty),
    }
}

/// `tensor.extract %t[%i]` in loop `lp` → `vector.transfer_read` before the loop and
/// `vector.extract` in its place, if the rules allow.
fn vectorize_load(m: &mut Module, lp: OpId, n: i64, op: OpId, bases: &mut Bases) {
    // A rank-0 tensor is read without an index: nothing to vectorize.
    if m.num_operands(op) != 2 {
        return;
    }
    let (tensor, index) = (m.operand(op, 0), m.operand(op, 1));
    let written_by_loop = m.operands(lp).skip(3).any(|init| init == tensor);
    if written_by_loop || !defined_outside(m, tensor, lp) {
        return;
    }
    let Some(vty) = vector_type(m.value_type(tensor), n) else {
        return;
    };
    let Some(base) = base_of(m, lp, n, index) else {
        return;
    };
    let start = bases.materialize(m, lp, base);
    let before = InsertPoint::Before(lp);
    let padding = arith::build_constant(m, before, zero(vty.element_type_or_self()));
    let read = vector::build_transfer_read(m, before, tensor, &[start], padding, vty, &[true]);
    let iv = m.block_arg(m.parent_block(op).expect("op in the loop body"), 0);
    let element = vector::build_extract(m, InsertPoint::Before(op), read, &[Position::Dynamic(iv)]);
    replace_op(m, op, &[element]);
}

/// `tensor.insert` into iter arg `k` of loop `lp` → a vector iter arg filled by
/// `vector.insert` and one `vector.transfer_write` after the loop (after `previous_write`,
/// the write of an earlier store of this loop, if any), if the rules allow. Returns the
/// loop that replaced `lp` and the write.
fn vectorize_store(
    m: &mut Module,
    lp: OpId,
    n: i64,
    op: OpId,
    previous_write: Option<OpId>,
    bases: &mut Bases,
) -> Option<(OpId, OpId)> {
    // A rank-0 tensor is written without an index: nothing to vectorize.
    if m.num_operands(op) != 3 {
        return None;
    }
    let (scalar, dest, index) = (m.operand(op, 0), m.operand(op, 1), m.operand(op, 2));
    let body = m.parent_block(op)?;
    let terminator = m.last_op(body)?;
    let result = m.result(op, 0);
    let [only_use] = m.uses(result).collect::<Vec<_>>()[..] else {
        return None;
    };
    let k = only_use.index as usize;
    let is_iter_arg_k = m.block_args(body).get(k + 1) == Some(&dest);
    if only_use.op != terminator || !is_iter_arg_k || m.num_uses(dest) != 1 {
        return None;
    }
    let vty = vector_type(m.value_type(dest), n)?;
    let base = base_of(m, lp, n, index)?;
    let start = bases.materialize(m, lp, base);
    let init = arith::build_constant(m, InsertPoint::Before(lp), zero(vty));
    let lp = append_iter_arg(m, lp, init);
    let body = m.entry_block(m.region(lp, 0))?;
    let (iv, acc) = (m.block_arg(body, 0), *m.block_args(body).last()?);
    m.set_value_name(acc, Some("iter_vector"));
    let filled = vector::build_insert(
        m,
        InsertPoint::Before(terminator),
        scalar,
        acc,
        &[Position::Dynamic(iv)],
    );
    m.set_operand(terminator, k, dest);
    m.push_operand(terminator, filled);
    erase_with_dead_operands(m, op);
    let tensor_init = m.operand(lp, 3 + k);
    let vector_out = m.result(lp, m.num_results(lp) - 1);
    let write_at = InsertPoint::After(previous_write.unwrap_or(lp));
    let written =
        vector::build_transfer_write(m, write_at, vector_out, tensor_init, &[start], &[true]);
    m.replace_all_uses(m.result(lp, k), written);
    Some((lp, m.defining_op(written)?))
}

/// Replaces `scf.for` `lp` by a copy with one more iter arg starting at `init` (its body
/// gets the argument; the terminator must be given the value to yield). Returns the copy.
fn append_iter_arg(m: &mut Module, lp: OpId, init: Value) -> OpId {
    let ty = m.value_type(init);
    let mut operands = m.operand_vec(lp);
    operands.push(init);
    let mut result_types = m.result_types(lp);
    result_types.push(ty);
    let region = m.create_region();
    m.take_blocks(m.region(lp, 0), region);
    let body = m.entry_block(region).expect("scf.for has a body");
    m.add_block_arg(body, ty);
    let state = OpState {
        name: m.name(lp),
        operands,
        result_types,
        props: m.props(lp).to_vec(),
        attrs: m.attrs(lp).to_vec(),
        regions: vec![region],
        successors: Vec::new(),
        loc: m.loc(lp),
        result_name: None,
    };
    let old_results = m.results(lp).collect();
    replace_with_new_op(m, lp, state, old_results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexing::{cst, dim, sym};

    #[test]
    fn known_multiples_follow_the_terms() {
        assert_eq!(known_multiple(&(dim(0) * 4 + dim(1) * 512)), 4);
        assert_eq!(known_multiple(&(dim(0).modulo(8) * 512 + cst(24))), 8);
        assert_eq!(known_multiple(&(dim(0) * 6).modulo(4)), 2);
        assert_eq!(known_multiple(&dim(0).floor_div(2)), 1);
        assert_eq!(known_multiple(&cst(0)), 0);
        assert_eq!(known_multiple(&(sym(0) * 2 + dim(0) * 4)), 2);
    }
}
