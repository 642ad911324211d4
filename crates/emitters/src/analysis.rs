//! The fusion analysis (XLA's `HloFusionAnalysis`): what every emitter needs to know of a
//! fusion, computed once per fusion and handed to the emitter chosen for it (`emitter.rs`):
//! its graph of users, its roots (the outputs) and each root's hero, the op that decides
//! which emitter fits.
//!
//! A root's hero is found by walking up from the root through ops that only move or
//! convert elements one to one (elementwise unary ops, `bitcast`, `reshape`, `copy`) while
//! the operand has no other user: `exp(transpose(x))` has the hero `transpose`. Which
//! transposes count is the transpose emitter's rule (`transpose::tiled_transpose`), which
//! the analysis is given rather than imports, so that it depends on no emitter.

use hlo::graph::ComputationGraph;
use hlo::{Computation, InstrId, Opcode};

/// What every emitter needs to know of one fusion.
pub struct FusionAnalysis<'c> {
    pub computation: &'c Computation,
    /// Who uses each instruction, and an order with operands first.
    pub graph: ComputationGraph,
    /// The fusion's outputs ([`fusion_roots`]).
    pub roots: Vec<InstrId>,
    /// Each root's hero, in the order of `roots`.
    pub heroes: Vec<InstrId>,
    /// Whose choices the emitter makes ([`crate::Choices`]; ours unless set).
    pub choices: crate::Choices,
}

impl<'c> FusionAnalysis<'c> {
    /// The analysis of `c`; `tiled` says of an instruction whether it is a transpose the
    /// transpose emitter tiles, and which (the hero search looks through elementwise ops
    /// for one, as XLA's `FindNonTrivialHero` does).
    pub fn new<D: PartialEq>(
        c: &'c Computation,
        tiled: impl Fn(&Computation, InstrId) -> Option<D>,
    ) -> FusionAnalysis<'c> {
        let graph = ComputationGraph::new(c);
        let roots = fusion_roots(c);
        let heroes = roots
            .iter()
            .map(|&root| find_hero(c, &graph, root, &tiled))
            .collect();
        FusionAnalysis {
            computation: c,
            graph,
            roots,
            heroes,
            choices: crate::Choices::Tuned,
        }
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

/// The hero of `root`: up the chain of one-operand elementwise ops (and bitcasts,
/// reshapes, copies, converts) from it; then, as XLA's `FindNonTrivialHero` tries harder
/// for the shared-memory transpose, through elementwise ops of up to three operands to a
/// tiled transpose, when it is the only one (or every one found describes the same
/// transpose) and nothing but such ops reads it on the way to the outputs
/// (`add(transpose(exp(x)), y)`: the transpose emitter reads `y` at the output index).
fn find_hero<D: PartialEq>(
    c: &Computation,
    graph: &ComputationGraph,
    root: InstrId,
    tiled: &impl Fn(&Computation, InstrId) -> Option<D>,
) -> InstrId {
    let hero = unary_hero(c, graph, root, tiled);
    // The search walks the fusion once per root: only where there is a transpose to find.
    let has_transpose = c
        .instructions
        .iter()
        .any(|i| matches!(i.opcode, Opcode::Transpose | Opcode::Copy));
    has_transpose
        .then(|| transpose_behind_elementwise(c, graph, hero, tiled))
        .flatten()
        .unwrap_or(hero)
}

/// An op the hero search passes through: elementwise of at most `operands` operands, or a
/// bitcast or reshape (XLA's `IsIntermediate`).
fn intermediate(instr: &hlo::Instruction, operands: usize) -> bool {
    let elementwise = instr.opcode.is_elementwise_unary()
        || instr.opcode.is_elementwise_binary()
        || matches!(
            instr.opcode,
            Opcode::Convert | Opcode::Compare | Opcode::Select | Opcode::Clamp | Opcode::IsFinite
        );
    (elementwise && instr.operands.len() <= operands && instr.opcode != Opcode::Copy)
        || matches!(instr.opcode, Opcode::Bitcast | Opcode::Reshape)
}

/// The tiled transpose that `start` computes through intermediate ops of up to three
/// operands (see [`find_hero`]).
fn transpose_behind_elementwise<D: PartialEq>(
    c: &Computation,
    graph: &ComputationGraph,
    start: InstrId,
    tiled: &impl Fn(&Computation, InstrId) -> Option<D>,
) -> Option<InstrId> {
    let mut found: Option<(InstrId, D)> = None;
    let mut seen = vec![false; c.instructions.len()];
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(id) = queue.pop_front() {
        if std::mem::replace(&mut seen[id.0], true) {
            continue;
        }
        if let Some(description) = tiled(c, id) {
            match &found {
                Some((_, other)) if *other != description => return None,
                Some(_) => {}
                None => found = Some((id, description)),
            }
            continue;
        }
        let instr = c.instruction(id);
        if intermediate(instr, 3) {
            queue.extend(instr.operands.iter().copied());
        }
    }
    let (hero, _) = found?;
    // Whatever reads the transpose, up to the outputs, must be such ops too.
    let mut readers = graph.users(hero);
    let mut seen = vec![false; c.instructions.len()];
    while let Some(id) = readers.pop() {
        if std::mem::replace(&mut seen[id.0], true) {
            continue;
        }
        let instr = c.instruction(id);
        if instr.opcode == Opcode::Tuple {
            continue;
        }
        if !intermediate(instr, 3) {
            return None;
        }
        readers.extend(graph.users(id));
    }
    Some(hero)
}

/// The end of the chain of one-operand intermediate ops (and copies and converts) that
/// computes `root`; a copy that moves the minor dimension ends it, as the transpose it is.
fn unary_hero<D>(
    c: &Computation,
    graph: &ComputationGraph,
    root: InstrId,
    tiled: &impl Fn(&Computation, InstrId) -> Option<D>,
) -> InstrId {
    let mut hero = root;
    loop {
        let instr = c.instruction(hero);
        if instr.opcode == Opcode::Copy && tiled(c, hero).is_some() {
            return hero;
        }
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
