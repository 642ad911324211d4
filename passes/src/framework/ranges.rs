//! What is known about the range of an `index` (or `i32` register) value: constants,
//! `xla.range` on launch ids and function arguments, `upper_bound`, special-register
//! `range`s, casts of those, `scf.for` induction variables with known bounds, and the values
//! a pass has computed itself ([`Facts`]). Shared by `simplify-arith` and `simplify-affine`.

use indexing::Interval;
use ir::dialects::arith;
use ir::dialects::func;
use ir::dialects::gpu;
use ir::dialects::scf;
use ir::intern::FxHashMap;
use ir::{BlockId, Module, OpId, Value, ValueDef};

use crate::rewrite::xla_range;

/// Ranges of values a pass has computed (e.g. the results of lowered `apply_indexing`s).
#[derive(Default)]
pub struct Facts {
    pub ranges: FxHashMap<Value, Interval>,
}

/// What is known about the values of an `index` (or `i32` register) value.
pub fn known_range(m: &Module, v: Value, facts: &Facts) -> Option<Interval> {
    if let Some(&r) = facts.ranges.get(&v) {
        return Some(r);
    }
    match m.value_def(v) {
        ValueDef::Result { op, .. } => op_range(m, op, facts),
        ValueDef::Arg { block, index } => block_arg_range(m, block, index as usize, facts),
        ValueDef::Detached => None,
    }
}

fn op_range(m: &Module, op: OpId, facts: &Facts) -> Option<Interval> {
    let name = m.name(op);
    match name.as_str() {
        arith::CONSTANT => {
            let c = m.prop(op, "value")?.as_i64()?;
            Some(Interval::new(c, c))
        }
        arith::INDEX_CAST => known_range(m, m.operand(op, 0), facts),
        // Zero extension keeps non-negative values.
        arith::INDEX_CASTUI => known_range(m, m.operand(op, 0), facts).filter(|r| r.lo >= 0),
        gpu::THREAD_ID | gpu::BLOCK_ID | gpu::BLOCK_DIM | gpu::GRID_DIM | gpu::LANE_ID => {
            if let Some((lo, hi)) = m.attr(op, "xla.range").and_then(xla_range) {
                return Some(Interval::new(lo, hi));
            }
            let bound = match m.prop(op, "upper_bound") {
                Some(bound) => bound.as_i64()?,
                None if m.is(op, gpu::LANE_ID) => gpu::WARP_SIZE,
                None => return None,
            };
            Some(Interval::new(0, bound - 1))
        }
        n if n.starts_with("nvvm.read.ptx.sreg.") => {
            let (lo, hi) = ir::dialects::nvvm::range_parts(m.prop(op, "range")?)
                .map(|(_, lo, hi)| (i64::try_from(lo).ok(), i64::try_from(hi).ok()))?;
            let (lo, hi) = (lo?, hi?);
            // `[lo, hi)`; `lo >= hi` is a wrapped or full range.
            (lo < hi).then(|| Interval::new(lo, hi - 1))
        }
        _ => None,
    }
}

/// `xla.range` of a function argument, or the values of an `scf.for` induction variable.
fn block_arg_range(m: &Module, block: BlockId, index: usize, facts: &Facts) -> Option<Interval> {
    let owner = m.block_parent_op(block)?;
    match m.name(owner).as_str() {
        func::FUNC => {
            let attrs = m
                .prop(owner, "arg_attrs")?
                .as_array()?
                .get(index)?
                .as_dict()?;
            let range = attrs.iter().find(|a| a.name.as_str() == "xla.range")?;
            let (lo, hi) = xla_range(&range.value)?;
            Some(Interval::new(lo, hi))
        }
        scf::FOR if index == 0 => {
            let lb = known_range(m, m.operand(owner, 0), facts)?;
            let ub = known_range(m, m.operand(owner, 1), facts)?;
            let bounds = Interval::new(lb.lo, ub.hi.checked_sub(1)?);
            (!bounds.is_empty()).then_some(bounds)
        }
        _ => None,
    }
}
