//! `simplify-arith`: folds integer comparisons that the known ranges of their operands
//! decide (XLA's simplify-arith).
//!
//! `lower-xla-gpu-to-scf` guards every loop body with the map's domain check, including
//! `th_x in [0, 127]` on a `gpu.thread_id` whose `xla.range` already says so. Folding such
//! checks to `true` lets `canonicalize` drop the `scf.if`, which `vectorize-loads-stores`
//! needs: it only hoists accesses that sit directly in the loop body.
//!
//! Ranges come from [`crate::ranges::known_range`]. A comparison is folded only when every
//! pair of values in the two ranges gives the same answer.

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
        "Fold integer comparisons decided by the operands' known ranges (xla.range, loop bounds)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
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
