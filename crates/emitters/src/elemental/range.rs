//! What the HLO proves about a value's range, for math the bound allows to approximate.
//!
//! One fact so far: `a - m` where `m`, at each element, is at least the maximum of a group
//! of `a`'s elements that holds that element (softmax's `x - max(x)` along the row) is at
//! most 0, or NaN. `exp` of it is at most 1, never overflows, and `exp2(x · log2 e)` is
//! within `f32`'s bound there (`expand-float-ops`).

use hlo::{Computation, HloModule, InstrId, Opcode};
use indexing::hlo_indexing::output_to_input;
use indexing::{AffineExpr, IndexingMap};

/// Instructions the search for the group maximum looks at, at most: a bound on the work for
/// chains of `maximum`s (each of which has two operands to follow).
const SEARCH_LIMIT: usize = 64;

/// Whether every element of `id` is `a - m` with `m` there at least the maximum over
/// `a`'s elements that a `reduce` with a `maximum` reducer combines into the value broadcast
/// back to that element: `m` reaches the reduce through index-only ops (broadcast, reshape,
/// bitcast, copy) and `maximum`s with anything, and the composed indexing map from `id`'s
/// index to the reduce's output index drops exactly the reduced dimensions.
pub(super) fn is_minus_its_group_maximum(module: &HloModule, c: &Computation, id: InstrId) -> bool {
    let instr = c.instruction(id);
    let Some(dims) = instr.shape.as_array().map(|a| a.dims.clone()) else {
        return false;
    };
    if instr.opcode != Opcode::Subtract {
        return false;
    }
    let (a, m) = (instr.operands[0], instr.operands[1]);
    let mut pending = vec![(m, IndexingMap::identity(&dims))];
    let mut visited = 0;
    while let Some((at, map)) = pending.pop() {
        visited += 1;
        if visited > SEARCH_LIMIT {
            return false;
        }
        let here = c.instruction(at);
        match here.opcode {
            Opcode::Broadcast | Opcode::Reshape | Opcode::Bitcast | Opcode::Copy => {
                let Ok(maps) = output_to_input(here, c) else {
                    return false;
                };
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
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether `reduce` folds `a` alone (one operand and one init) with a reducer whose root is
/// `maximum` of its two parameters.
fn reduces_maximum_of(module: &HloModule, c: &Computation, reduce: InstrId, a: InstrId) -> bool {
    let instr = c.instruction(reduce);
    if instr.operands.len() != 2 || instr.operands[0] != a {
        return false;
    }
    let Some(reducer) = instr.called("to_apply") else {
        return false;
    };
    let reducer = module.computation(reducer.id);
    let root = reducer.root_instruction();
    let parameters = reducer.parameters();
    root.opcode == Opcode::Maximum
        && parameters.len() == 2
        && root.operands.iter().all(|o| parameters.contains(o))
        && root.operands[0] != root.operands[1]
}
