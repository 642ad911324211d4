//! Hero analysis (DESIGN §6): the op of a fusion that decides which emitter fits it.
//!
//! A root's hero is found by walking up from the root through ops that only move or
//! convert elements one to one (elementwise unary ops, `bitcast`, `reshape`, `copy`) while
//! the operand has no other user: `exp(transpose(x))` has the hero `transpose`. A reduce
//! hero picks the reduction emitter; a transpose that moves the most-minor dimension with
//! both swapped dimensions ≥ 16 (or ≥ 8 with at least 8192 elements in their product)
//! picks the transpose emitter; everything else is a loop fusion.

use hlo::graph::ComputationGraph;
use hlo::{Computation, InstrId, Opcode};

/// The emitter a fusion's heroes ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitterKind {
    Loop,
    Transpose,
    Reduction,
}

impl std::fmt::Display for EmitterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EmitterKind::Loop => "loop",
            EmitterKind::Transpose => "transpose",
            EmitterKind::Reduction => "reduction",
        })
    }
}

/// The fusion's roots: the operands of a tuple ROOT, or the ROOT.
pub fn fusion_roots(c: &Computation) -> Vec<InstrId> {
    let root = c.root_instruction();
    if root.opcode == Opcode::Tuple {
        root.operands.clone()
    } else {
        vec![c.root]
    }
}

/// The hero of `root`.
pub fn find_hero(c: &Computation, graph: &ComputationGraph, root: InstrId) -> InstrId {
    let mut hero = root;
    loop {
        let instr = c.instruction(hero);
        let passes_through = instr.operands.len() == 1
            && (instr.opcode.is_elementwise_unary()
                || matches!(
                    instr.opcode,
                    Opcode::Bitcast | Opcode::Reshape | Opcode::Copy | Opcode::Convert
                ));
        if !passes_through {
            return hero;
        }
        let operand = instr.operands[0];
        if graph.users(operand).len() != 1
            || matches!(
                c.instruction(operand).opcode,
                Opcode::Parameter | Opcode::Constant
            )
        {
            return hero;
        }
        hero = operand;
    }
}

/// Whether a transpose hero is worth the shared-memory transpose emitter.
fn is_tiled_transpose(c: &Computation, hero: InstrId) -> bool {
    let instr = c.instruction(hero);
    let (Some(perm), Some(shape)) = (instr.int_list("dimensions"), instr.shape.as_array()) else {
        return false;
    };
    let rank = perm.len();
    if rank < 2 || perm[rank - 1] as usize == rank - 1 {
        // The most-minor dimension stays in place: a plain loop reads and writes coalesced.
        return false;
    }
    // Output dim `rank - 1` comes from input dim `perm[rank - 1]`; the input's minor
    // dimension lands at output position `j`.
    let Some(j) = perm.iter().position(|&p| p as usize == rank - 1) else {
        return false;
    };
    let (a, b) = (shape.dims[rank - 1], shape.dims[j]);
    (a >= 16 && b >= 16) || (a >= 8 && b >= 8 && a * b >= 8192)
}

/// The emitter for a fusion and the heroes that chose it.
pub fn choose_emitter(c: &Computation) -> (EmitterKind, Vec<InstrId>) {
    let graph = ComputationGraph::new(c);
    let heroes: Vec<InstrId> = fusion_roots(c)
        .into_iter()
        .map(|r| find_hero(c, &graph, r))
        .collect();
    let picks = |kind: EmitterKind| -> Vec<InstrId> {
        heroes
            .iter()
            .copied()
            .filter(|&h| match kind {
                EmitterKind::Reduction => c.instruction(h).opcode == Opcode::Reduce,
                EmitterKind::Transpose => {
                    c.instruction(h).opcode == Opcode::Transpose && is_tiled_transpose(c, h)
                }
                EmitterKind::Loop => false,
            })
            .collect()
    };
    for kind in [EmitterKind::Reduction, EmitterKind::Transpose] {
        let chosen = picks(kind);
        if !chosen.is_empty() {
            return (kind, chosen);
        }
    }
    (EmitterKind::Loop, Vec::new())
}
