//! `simplify-affine`: every `xla_gpu.apply_indexing` becomes `arith` on `index`, as XLA's
//! `simplify_affine.cc` lowers it, using what is known about the operands.
//!
//! For each op, the map's domain is first narrowed by the operands' known ranges: constants
//! (a point range, so the simplifier folds them into the expression), `xla.range` on
//! `gpu.thread_id`-like ops and on function arguments, the `range` of NVVM special
//! registers (through `arith.index_cast[ui]`), `scf.for` induction variables (from their
//! bounds), and the results of `apply_indexing` ops lowered before (the range of their
//! expression). A range that contradicts the map's domain is ignored (the map's domain is
//! the emitter's promise; such code is never reached). Then the map is simplified
//! ([`indexing::IndexingMap::simplified`]) and each result is emitted:
//!
//! * sums are flattened and their terms ordered by the distance (in nested blocks) from the
//!   op to the values they use, farthest first, with a constant term last (XLA's
//!   `ExpressionEvaluator`), so that loop-invariant partial sums can be hoisted; a term with a
//!   negative coefficient is subtracted (`a - b * 4`, not `a + b * -4`);
//! * `e floordiv c` and `e mod c` are `arith.divui`/`arith.remui` when `e` is known to be
//!   non-negative on the domain, as in XLA. Otherwise — where XLA falls back to
//!   `affine.apply` — they get floor semantics from signed ops:
//!   `q = divsi(e, c); r = remsi(e, c); r < 0 ? q - 1 : q` and `r < 0 ? r + c : r` (written
//!   out rather than `arith.floordivsi`, which the upstream arith-to-llvm conversion does not
//!   lower). `e ceildiv c` is `(e + c - 1) divui c` for non-negative `e` (when that cannot
//!   overflow), else `r > 0 ? q + 1 : q`;
//! * `addi`, `subi` and `muli` carry `overflow<nsw>` when the ranges prove that the result and
//!   the operands fit in `i32`: then no signed overflow happens at any index width
//!   `lower-to-llvm` may choose (XLA sets `nsw` unconditionally);
//! * equal subexpressions of one op are emitted once, and so are equal ops (the signed
//!   division and remainder serve floordiv, mod and ceildiv of one dividend); `cse` shares
//!   them across ops.
//!
//! The ranges of the results computed here are recorded for later ops (not of results that
//! are operands passed through: those values may also be used where this op's domain does not
//! hold). An op whose map does not match its operands is an error.

use crate::pass::{Pass, op_error};
use crate::ranges::{Facts, known_range};
use indexing::{AffineExpr, IndexingMap};
use ir::dialects::arith;
use ir::dialects::xla_gpu;
use ir::intern::FxHashMap;
use ir::{Attribute, BlockId, Builder, Diagnostic, Module, OpId, Value};

/// Lowers `xla_gpu.apply_indexing` to `arith` (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct SimplifyAffine;

impl Pass for SimplifyAffine {
    crate::pass_names!(
        "simplify-affine",
        "Lower xla_gpu.apply_indexing to index arithmetic, simplified with the operands' ranges \
         (unsigned division where values are non-negative)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let ops: Vec<OpId> = m.ops_named(xla_gpu::APPLY_INDEXING);
        let mut facts = Facts::default();
        for op in ops {
            lower_apply_indexing(m, op, &mut facts)?;
        }
        Ok(())
    }
}

fn lower_apply_indexing(m: &mut Module, op: OpId, facts: &mut Facts) -> Result<(), Diagnostic> {
    let Some(map) = xla_gpu::indexing_map(m, op) else {
        return Err(op_error(m, op, "requires an indexing map"));
    };
    let operands = m.operand_vec(op);
    if operands.len() != map.dims.len() + map.num_symbols() {
        return Err(op_error(
            m,
            op,
            format!(
                "has {} operands for a map with {} dimensions and {} symbols",
                operands.len(),
                map.dims.len(),
                map.num_symbols()
            ),
        ));
    }
    let map = narrowed(m, map.clone(), &operands, facts).simplified();
    let block = m.parent_block(op).expect("an op in a block");
    let distances = operands.iter().map(|&v| distance(m, block, v)).collect();
    let mut emitter = Emitter {
        m,
        at: op,
        map: &map,
        operands,
        distances,
        memo: FxHashMap::default(),
        ops: FxHashMap::default(),
    };
    let results: Vec<Value> = map.results.iter().map(|e| emitter.emit(e)).collect();
    // A result that is an operand may be used where this op's domain does not hold; only the
    // values computed here are known to lie in their ranges wherever they are used.
    let operands = emitter.operands;
    for (&v, e) in results.iter().zip(&map.results) {
        if !operands.contains(&v) {
            facts.ranges.insert(v, map.range_of(e));
        }
    }
    m.replace_op(op, &results);
    Ok(())
}

// ----- operand ranges -----

/// `map` with each variable's range intersected with its operand's known range.
fn narrowed(m: &Module, mut map: IndexingMap, operands: &[Value], facts: &Facts) -> IndexingMap {
    let vars = map
        .dims
        .iter_mut()
        .chain(map.range_vars.iter_mut())
        .chain(map.rt_vars.iter_mut());
    for (var, &v) in vars.zip(operands) {
        if let Some(known) = known_range(m, v, facts) {
            let bounds = var.bounds.intersect(known);
            if !bounds.is_empty() {
                var.bounds = bounds;
            }
        }
    }
    map
}

/// How many blocks up from `from` the value `v` is defined (XLA's `Distance`).
fn distance(m: &Module, from: BlockId, v: Value) -> i32 {
    let target = m.value_block(v);
    let mut block = Some(from);
    let mut d = 0;
    while let Some(b) = block {
        if Some(b) == target {
            break;
        }
        d += 1;
        block = m.block_parent_op(b).and_then(|op| m.parent_block(op));
    }
    d
}

// ----- emission -----

/// The `i32` range: arithmetic whose operands and result stay in it gets `nsw`.
const I32: (i128, i128) = (i32::MIN as i128, i32::MAX as i128);

fn fits_i32(lo: i128, hi: i128) -> bool {
    I32.0 <= lo && hi <= I32.1
}

/// Emits the expressions of one op's map before the op.
struct Emitter<'a> {
    m: &'a mut Module,
    at: OpId,
    map: &'a IndexingMap,
    /// The op's operands: dims, then symbols.
    operands: Vec<Value>,
    /// [`distance`] of each operand.
    distances: Vec<i32>,
    /// Expressions emitted so far.
    memo: FxHashMap<AffineExpr, Value>,
    /// Ops emitted so far, by name (with predicate) and operands: the signed division,
    /// remainder and comparison serve floordiv, mod and ceildiv of the same dividend.
    ops: FxHashMap<(String, Vec<Value>), Value>,
}

impl Emitter<'_> {
    fn emit(&mut self, e: &AffineExpr) -> Value {
        if let Some(&v) = self.memo.get(e) {
            return v;
        }
        let v = match e {
            AffineExpr::Constant(c) => Builder::before(self.m, self.at).index(*c),
            AffineExpr::Dim(i) => self.operands[*i],
            AffineExpr::Symbol(i) => self.operands[self.map.dims.len() + i],
            AffineExpr::Add(..) => self.emit_sum(e),
            AffineExpr::Mul(a, c) => self.emit_mul(a, *c),
            AffineExpr::FloorDiv(a, d) => self.emit_floor_div(a, *d),
            AffineExpr::CeilDiv(a, d) => self.emit_ceil_div(a, *d),
            AffineExpr::Mod(a, c) => self.emit_mod(a, *c),
            AffineExpr::Product(a, b) => self.emit_product(a, b),
            AffineExpr::Max(a, b) => self.emit_extremum(a, b, arith::MAXUI, arith::MAXSI),
            AffineExpr::Min(a, b) => self.emit_extremum(a, b, arith::MINUI, arith::MINSI),
        };
        self.memo.insert(e.clone(), v);
        v
    }

    /// The range of `e`'s value on the (narrowed) domain, widened to `i128`.
    fn range(&self, e: &AffineExpr) -> (i128, i128) {
        let r = self.map.range_of(e);
        (r.lo.into(), r.hi.into())
    }

    fn is_non_negative(&self, e: &AffineExpr) -> bool {
        self.range(e).0 >= 0
    }

    fn constant(&mut self, c: i64) -> Value {
        self.emit(&AffineExpr::Constant(c))
    }

    /// The op `key` names on `operands`, built by `build` unless emitted already.
    fn op(
        &mut self,
        key: &str,
        operands: &[Value],
        build: impl FnOnce(&mut Builder<'_>) -> Value,
    ) -> Value {
        let key = (key.to_owned(), operands.to_vec());
        if let Some(&v) = self.ops.get(&key) {
            return v;
        }
        let v = build(&mut Builder::before(self.m, self.at));
        self.ops.insert(key, v);
        v
    }

    /// `lhs <name> rhs`, with `nsw` when `nsw` says so.
    fn binary(&mut self, name: &str, lhs: Value, rhs: Value, nsw: bool) -> Value {
        self.op(name, &[lhs, rhs], |b| {
            let v = b.binary(name, lhs, rhs);
            if nsw {
                let op = b.module.defining_op(v).expect("a binary op");
                let flags = Attribute::Opaque("#arith.overflow<nsw>".into());
                b.module.set_prop(op, "overflowFlags", flags);
            }
            v
        })
    }

    fn cmpi(&mut self, predicate: &str, lhs: Value, rhs: Value) -> Value {
        let key = format!("arith.cmpi {predicate}");
        self.op(&key, &[lhs, rhs], |b| b.cmpi(predicate, lhs, rhs))
    }

    fn select(&mut self, cond: Value, a: Value, b: Value) -> Value {
        self.op(arith::SELECT, &[cond, a, b], |builder| {
            builder.select(cond, a, b)
        })
    }

    fn emit_mul(&mut self, a: &AffineExpr, c: i64) -> Value {
        let (lo, hi) = self.range(a);
        let products = [lo * i128::from(c), hi * i128::from(c)];
        let nsw = fits_i32(lo, hi)
            && fits_i32(products[0].min(products[1]), products[0].max(products[1]));
        let x = self.emit(a);
        let k = self.constant(c);
        self.binary(arith::MULI, x, k, nsw)
    }

    /// A sum, its terms ordered as the module documentation says.
    fn emit_sum(&mut self, e: &AffineExpr) -> Value {
        let mut terms = e.sum_terms();
        terms.sort_by_key(|t| std::cmp::Reverse(self.term_distance(t)));
        let mut acc: Option<(Value, (i128, i128))> = None;
        for term in terms {
            let (negated, magnitude) = match (&acc, negated_term(term)) {
                (Some(_), Some(m)) => (true, m),
                _ => (false, term.clone()),
            };
            let (tlo, thi) = self.range(&magnitude);
            let v = self.emit(&magnitude);
            acc = Some(match acc {
                None => (v, (tlo, thi)),
                Some((sum, (lo, hi))) => {
                    let (rlo, rhi) = if negated {
                        (lo - thi, hi - tlo)
                    } else {
                        (lo + tlo, hi + thi)
                    };
                    let nsw = fits_i32(lo, hi) && fits_i32(tlo, thi) && fits_i32(rlo, rhi);
                    let name = if negated { arith::SUBI } else { arith::ADDI };
                    (self.binary(name, sum, v, nsw), (rlo, rhi))
                }
            });
        }
        acc.expect("a sum has terms").0
    }

    /// XLA's `ExprDistance`: the nearest operand a term uses; a constant term goes last.
    fn term_distance(&self, term: &AffineExpr) -> i32 {
        match term {
            AffineExpr::Constant(_) => i32::MIN,
            _ => self.expr_distance(term),
        }
    }

    fn expr_distance(&self, e: &AffineExpr) -> i32 {
        match e {
            AffineExpr::Constant(_) => i32::MAX,
            AffineExpr::Dim(i) => self.distances[*i],
            AffineExpr::Symbol(i) => self.distances[self.map.dims.len() + i],
            AffineExpr::Add(a, b)
            | AffineExpr::Product(a, b)
            | AffineExpr::Max(a, b)
            | AffineExpr::Min(a, b) => self.expr_distance(a).min(self.expr_distance(b)),
            AffineExpr::Mul(a, _)
            | AffineExpr::FloorDiv(a, _)
            | AffineExpr::CeilDiv(a, _)
            | AffineExpr::Mod(a, _) => self.expr_distance(a),
        }
    }

    /// `a * b`, `nsw` when the operands and the product fit in 32 bits (as for scalings).
    fn emit_product(&mut self, a: &AffineExpr, b: &AffineExpr) -> Value {
        let ((alo, ahi), (blo, bhi)) = (self.range(a), self.range(b));
        let ends = [alo * blo, alo * bhi, ahi * blo, ahi * bhi];
        let (lo, hi) = (ends.iter().min(), ends.iter().max());
        let nsw = fits_i32(alo, ahi)
            && fits_i32(blo, bhi)
            && lo.zip(hi).is_some_and(|(&lo, &hi)| fits_i32(lo, hi));
        let (x, y) = (self.emit(a), self.emit(b));
        self.binary(arith::MULI, x, y, nsw)
    }

    /// `max`/`min`: XLA's unsigned op when both operands are non-negative (its only form),
    /// the signed one otherwise.
    fn emit_extremum(
        &mut self,
        a: &AffineExpr,
        b: &AffineExpr,
        unsigned: &str,
        signed: &str,
    ) -> Value {
        let name = if self.is_non_negative(a) && self.is_non_negative(b) {
            unsigned
        } else {
            signed
        };
        let (x, y) = (self.emit(a), self.emit(b));
        self.binary(name, x, y, false)
    }

    fn emit_floor_div(&mut self, a: &AffineExpr, d: i64) -> Value {
        let x = self.emit(a);
        let k = self.constant(d);
        if self.is_non_negative(a) {
            return self.binary(arith::DIVUI, x, k, false);
        }
        // Truncating division rounds up for negative quotients; step down when a remainder
        // is left.
        self.stepped_divsi(x, k, "slt", arith::SUBI)
    }

    fn emit_ceil_div(&mut self, a: &AffineExpr, d: i64) -> Value {
        let (lo, hi) = self.range(a);
        let x = self.emit(a);
        if lo >= 0 && hi + i128::from(d) - 1 <= i128::from(i64::MAX) {
            // Both constants first, as XLA emits them.
            let bias = self.constant(d - 1);
            let k = self.constant(d);
            let nsw = fits_i32(lo, hi + i128::from(d) - 1);
            let biased = self.binary(arith::ADDI, x, bias, nsw);
            return self.binary(arith::DIVUI, biased, k, false);
        }
        // Truncating division rounds down for positive quotients; step up when a remainder
        // is left.
        let k = self.constant(d);
        self.stepped_divsi(x, k, "sgt", arith::ADDI)
    }

    /// The truncating quotient `x / k`, stepped by one (`step`: `arith.subi` or
    /// `arith.addi`) where the remainder compares `remainder_predicate` (`slt`, `sgt`) with
    /// zero: the rounding the truncation got wrong, corrected.
    fn stepped_divsi(
        &mut self,
        x: Value,
        k: Value,
        remainder_predicate: &str,
        step: &str,
    ) -> Value {
        let q = self.binary(arith::DIVSI, x, k, false);
        let r = self.binary(arith::REMSI, x, k, false);
        let zero = self.constant(0);
        let one = self.constant(1);
        let wrong_way = self.cmpi(remainder_predicate, r, zero);
        let stepped = self.binary(step, q, one, false);
        self.select(wrong_way, stepped, q)
    }

    fn emit_mod(&mut self, a: &AffineExpr, c: i64) -> Value {
        let x = self.emit(a);
        let k = self.constant(c);
        if self.is_non_negative(a) {
            return self.binary(arith::REMUI, x, k, false);
        }
        // The truncating remainder has the dividend's sign; move a negative one up by `c`.
        let r = self.binary(arith::REMSI, x, k, false);
        let zero = self.constant(0);
        let negative = self.cmpi("slt", r, zero);
        let up = self.binary(arith::ADDI, r, k, false);
        self.select(negative, up, r)
    }
}

/// `x` for a term `x * -1`, `x * c` for `x * -c`, `c` for a constant `-c`: what to subtract
/// instead of adding the term.
fn negated_term(term: &AffineExpr) -> Option<AffineExpr> {
    match term {
        AffineExpr::Mul(x, -1) => Some((**x).clone()),
        AffineExpr::Mul(x, c) if *c < 0 => Some((**x).clone() * c.checked_neg()?),
        AffineExpr::Constant(c) if *c < 0 => Some(AffineExpr::Constant(c.checked_neg()?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexing::{dim, sym};

    #[test]
    fn negative_terms_are_subtracted() {
        assert_eq!(negated_term(&(dim(0) * -1)), Some(dim(0)));
        assert_eq!(negated_term(&(dim(0) * -4)), Some(dim(0) * 4));
        assert_eq!(
            negated_term(&AffineExpr::Constant(-3)),
            Some(AffineExpr::Constant(3))
        );
        assert_eq!(negated_term(&(sym(0) * 4)), None);
        assert_eq!(negated_term(&(dim(0) * i64::MIN)), None);
    }
}
