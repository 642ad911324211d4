//! What the HLO proves about a value's range, for math the bound allows to approximate or
//! the range makes simpler.
//!
//! * `a - m` where `m`, at each element, is at least the maximum of a group of `a`'s
//!   elements that holds that element (softmax's `x - max(x)` along the row) is at most 0,
//!   or NaN. `exp` of it is at most 1, never overflows, and `exp2(x · log2 e)` is within
//!   `f32`'s bound there (`expand-float-ops`).
//! * The sum of those `exp`s over the same groups as the maximum is at least 1 (the group's
//!   maximum contributes `exp(0)`) and at most the group's size (or NaN): a divisor
//!   `div.full.f32` never scales, so dividing by it is `x · rcp(d)`, the same bits.

use hlo::{Computation, HloModule, InstrId, Opcode};
use indexing::hlo_indexing::output_to_input;
use indexing::{AffineExpr, IndexingMap};

/// Instructions the search for the group maximum looks at, at most: a bound on the work for
/// chains of `maximum`s (each of which has two operands to follow).
const SEARCH_LIMIT: usize = 64;

/// Whether every element of `id` is `a - m` with `m` there at least the maximum over
/// `a`'s elements that a `reduce` with a `maximum` reducer combines into the value broadcast
/// back to that element (see [`group_maximum`]).
pub(super) fn is_minus_its_group_maximum(module: &HloModule, c: &Computation, id: InstrId) -> bool {
    group_maximum(module, c, id).is_some()
}

/// Whether every element of `id` is the sum, over a group, of `exp(a - m)` as in
/// [`is_minus_its_group_maximum`] with the maximum taken over the same groups (so the
/// group's maximum element adds `exp(0) = 1`): at least 1 and at most the group's size, or
/// NaN. `id` may reach that sum through index-only ops; any group's sum will do.
pub(super) fn is_sum_of_exp_minus_group_maximum(
    module: &HloModule,
    c: &Computation,
    mut id: InstrId,
) -> bool {
    for _ in 0..SEARCH_LIMIT {
        let instr = c.instruction(id);
        match instr.opcode {
            Opcode::Broadcast | Opcode::Reshape | Opcode::Bitcast | Opcode::Copy => {
                id = instr.operands[0];
            }
            Opcode::Reduce => return sums_exp_minus_group_maximum(module, c, id),
            _ => return false,
        }
    }
    false
}

/// Whether `reduce` adds, from a zero, `exp(a - m)` whose maximum reduces the same
/// dimensions of an array of the same shape.
fn sums_exp_minus_group_maximum(module: &HloModule, c: &Computation, reduce: InstrId) -> bool {
    let instr = c.instruction(reduce);
    if instr.operands.len() != 2 || reducer_root(module, instr) != Some(Opcode::Add) {
        return false;
    }
    let init = c.instruction(instr.operands[1]);
    let zero_init = matches!(
        init.literal(),
        Some(hlo::Literal::Array(a)) if a.values == [hlo::Value::Float(0.0)]
    );
    let exp = c.instruction(instr.operands[0]);
    if !zero_init || exp.opcode != Opcode::Exp {
        return false;
    }
    let Some(maximum) = group_maximum(module, c, exp.operands[0]) else {
        return false;
    };
    let maximum = c.instruction(maximum);
    maximum.int_list("dimensions") == instr.int_list("dimensions")
        && c.instruction(maximum.operands[0]).shape == exp.shape
}

/// The max-`reduce` that makes `id` `a - m` as in [`is_minus_its_group_maximum`]: `m`
/// reaches it through index-only ops (broadcast, reshape, bitcast, copy) and `maximum`s
/// with anything, it folds `a`, and the composed indexing map from `id`'s index to its
/// output index drops exactly the reduced dimensions.
fn group_maximum(module: &HloModule, c: &Computation, id: InstrId) -> Option<InstrId> {
    let instr = c.instruction(id);
    let dims = instr.shape.as_array()?.dims.clone();
    if instr.opcode != Opcode::Subtract {
        return None;
    }
    let (a, m) = (instr.operands[0], instr.operands[1]);
    let mut pending = vec![(m, IndexingMap::identity(&dims))];
    let mut visited = 0;
    while let Some((at, map)) = pending.pop() {
        visited += 1;
        if visited > SEARCH_LIMIT {
            return None;
        }
        let here = c.instruction(at);
        match here.opcode {
            Opcode::Broadcast | Opcode::Reshape | Opcode::Bitcast | Opcode::Copy => {
                let maps = output_to_input(here, c).ok()?;
                pending.push((here.operands[0], map.compose(&maps[0]).simplified()));
            }
            Opcode::Maximum => {
                for &operand in &here.operands {
                    pending.push((operand, map.clone()));
                }
            }
            Opcode::Reduce if reduces_maximum_of(module, c, at, a) => {
                let reduced = here.int_list("dimensions").unwrap_or(&[]);
                let kept: Vec<AffineExpr> = (0..dims.len())
                    .filter(|d| !reduced.contains(&(*d as i64)))
                    .map(AffineExpr::Dim)
                    .collect();
                if map.results == kept && map.constraints.is_empty() {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether `reduce` folds `a` alone (one operand and one init) with a reducer whose root is
/// `maximum` of its two parameters.
fn reduces_maximum_of(module: &HloModule, c: &Computation, reduce: InstrId, a: InstrId) -> bool {
    let instr = c.instruction(reduce);
    instr.operands.len() == 2
        && instr.operands[0] == a
        && reducer_root(module, instr) == Some(Opcode::Maximum)
}

/// The kind of `reduce`'s reducer: its root's opcode when that combines its two
/// parameters.
fn reducer_root(module: &HloModule, reduce: &hlo::Instruction) -> Option<Opcode> {
    module
        .computation(reduce.called("to_apply")?.id)
        .binary_op_of_parameters()
}
