//! `simplify-arith`: folds integer comparisons and `min`/`max` that the known ranges of
//! their operands decide (XLA's simplify-arith).
//!
//! `lower-xla-gpu-to-scf` guards every loop body with the map's domain check, including
//! `th_x in [0, 127]` on a `gpu.thread_id` whose `xla.range` already says so. Folding such
//! checks to `true` lets `canonicalize` drop the `scf.if`, which `vectorize-loads-stores`
//! needs: it only hoists accesses that sit directly in the loop body.
//!
//! Ranges come from [`crate::ranges::known_range`], and for an `arith.addi` operand of a
//! `min`/`max` from the sum of its operands' (XLA's `maxsi_add` test). A comparison is
//! folded only when every pair of values in the two ranges gives the same answer; a
//! `min`/`max` becomes the operand that wins for every pair.

use indexing::Interval;
use ir::dialects::arith;
use ir::dialects::arith::CMPI_PREDICATES;
use ir::{Attribute, Diagnostic, InsertPoint, Module, OpId, Type};

use crate::fold::predicate;
use crate::pass::Pass;
use crate::ranges::{Facts, known_range};

pub struct SimplifyArith;

impl Pass for SimplifyArith {
    crate::pass_names!(
        "simplify-arith",
        "Fold integer comparisons and min/max decided by the operands' known ranges (xla.range, loop bounds)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        fold_min_max(m);
        let cmps: Vec<OpId> = m.ops_named(arith::CMPI);
        for op in cmps {
            let Some(p) = predicate(m, op).and_then(|p| CMPI_PREDICATES.get(p)) else {
                continue;
            };
            let (a, b) = (m.operand(op, 0), m.operand(op, 1));
            if m.value_type(a) != Type::INDEX {
                continue;
            }
            let facts = Facts::default();
            let (Some(ra), Some(rb)) = (known_range(m, a, &facts), known_range(m, b, &facts))
            else {
                continue;
            };
            let (ra, rb) = ((ra.lo, ra.hi), (rb.lo, rb.hi));
            if let Some(result) = decide(p, ra, rb) {
                let c = ir::dialects::arith::build_constant(
                    m,
                    InsertPoint::Before(op),
                    Attribute::Bool(result),
                );
                m.replace_all_uses(m.result(op, 0), c);
                m.erase_op(op);
            }
        }
        Ok(())
    }
}

/// `arith.minsi`/`maxsi` (and the unsigned ones, on non-negative ranges) whose operands'
/// ranges do not overlap: the operand that wins everywhere.
fn fold_min_max(m: &mut Module) {
    let ops: Vec<OpId> = [arith::MINSI, arith::MAXSI, arith::MINUI, arith::MAXUI]
        .iter()
        .flat_map(|name| m.ops_named(name))
        .collect();
    for op in ops {
        let (a, b) = (m.operand(op, 0), m.operand(op, 1));
        let (Some(ra), Some(rb)) = (operand_range(m, a), operand_range(m, b)) else {
            continue;
        };
        let unsigned = m.is(op, arith::MINUI) || m.is(op, arith::MAXUI);
        if unsigned && (ra.lo < 0 || rb.lo < 0) {
            continue;
        }
        let (a_below, b_below) = (ra.hi <= rb.lo, rb.hi <= ra.lo);
        let min = m.is(op, arith::MINSI) || m.is(op, arith::MINUI);
        let winner = match (min, a_below, b_below) {
            (true, true, _) | (false, _, true) => a,
            (true, _, true) | (false, true, _) => b,
            _ => continue,
        };
        m.replace_all_uses(m.result(op, 0), winner);
        m.erase_op(op);
    }
}

/// The known range of an integer value, or of a sum of two values with known ranges (when
/// the sum cannot leave `i64`).
fn operand_range(m: &Module, v: ir::Value) -> Option<Interval> {
    let facts = Facts::default();
    if let Some(r) = known_range(m, v, &facts) {
        return Some(r);
    }
    let op = m.defining_op(v).filter(|&op| m.is(op, arith::ADDI))?;
    let ra = known_range(m, m.operand(op, 0), &facts)?;
    let rb = known_range(m, m.operand(op, 1), &facts)?;
    Some(Interval::new(
        ra.lo.checked_add(rb.lo)?,
        ra.hi.checked_add(rb.hi)?,
    ))
}

/// The answer of `a <pred> b` for every `a` in `ra` and `b` in `rb`, if they all agree
/// (signed predicates; unsigned ones when both ranges are non-negative).
fn decide(pred: &str, ra: (i64, i64), rb: (i64, i64)) -> Option<bool> {
    let ((alo, ahi), (blo, bhi)) = (ra, rb);
    let non_negative = alo >= 0 && blo >= 0;
    let signed = match pred {
        "slt" | "sle" | "sgt" | "sge" | "eq" | "ne" => pred,
        "ult" if non_negative => "slt",
        "ule" if non_negative => "sle",
        "ugt" if non_negative => "sgt",
        "uge" if non_negative => "sge",
        _ => return None,
    };
    let always_lt = ahi < blo;
    let never_lt = alo >= bhi;
    let (yes, no) = match signed {
        "slt" => (always_lt, never_lt),
        "sle" => (ahi <= blo, alo > bhi),
        "sgt" => (alo > bhi, ahi <= blo),
        "sge" => (alo >= bhi, always_lt),
        "eq" => (
            alo == ahi && blo == bhi && alo == blo,
            ahi < blo || bhi < alo,
        ),
        "ne" => (
            ahi < blo || bhi < alo,
            alo == ahi && blo == bhi && alo == blo,
        ),
        _ => (false, false),
    };
    if yes {
        Some(true)
    } else if no {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::decide;

    #[test]
    fn decides_only_when_every_pair_agrees() {
        assert_eq!(decide("sge", (0, 127), (0, 0)), Some(true));
        assert_eq!(decide("sle", (0, 127), (127, 127)), Some(true));
        assert_eq!(decide("slt", (0, 127), (127, 127)), None);
        assert_eq!(decide("slt", (0, 126), (127, 127)), Some(true));
        assert_eq!(decide("sgt", (0, 5), (5, 9)), Some(false));
        assert_eq!(decide("eq", (3, 3), (3, 3)), Some(true));
        assert_eq!(decide("eq", (0, 2), (3, 9)), Some(false));
        assert_eq!(decide("ult", (-1, 5), (6, 6)), None);
        assert_eq!(decide("ult", (0, 5), (6, 6)), Some(true));
    }
}
