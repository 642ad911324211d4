//! The one interface every emitter implements, and the one place that chooses among them.
//!
//! An emitter is an analysis of a fusion computation (its constructor: `None` when the
//! fusion is not one it takes) and an [`FusionEmitter::emit`] that writes the kernel from
//! it: the subgraph functions, `@main` with its loops, the launch dimensions and the map
//! from (thread, block) to the output index. [`analyze`] computes the fusion analysis once;
//! [`emitter_for`] asks its heroes which emitter fits, in XLA's order, falls back to the
//! loop emitter, which is correct for every fusion, and hands the analysis to the one it
//! chose.

use hlo::{Computation, ComputationId, Diagnostic, HloModule, InstrId, Opcode};

use crate::analysis::FusionAnalysis;
use crate::concatenate::ConcatenateFusion;
use crate::dynamic_update_slice::InPlaceDynamicUpdateSlice;
use crate::elemental::FusionContext;
use crate::loop_fusion::LoopFusion;
use crate::normalization::RowNormalization;
use crate::partition::PartitionedComputation;
use crate::reduction::ReductionFusion;
use crate::scatter::ScatterFusion;
use crate::sort::SortFusion;
use crate::transpose::{TransposePlan, tiled_transpose};
use crate::{EmittedFusion, EmittedKernel, Target, kernel};

/// What every emitter provides (XLA's `KernelFusionInterface`), from its analysis: which
/// instructions root functions of their own, and the kernel's entry; [`FusionEmitter::emit`]
/// puts them together the same way for every emitter (`kernel::emit_with`).
pub trait FusionEmitter {
    /// Which emitter this is.
    fn kind(&self) -> EmitterKind;

    /// The instructions whose kind chose this emitter (reduces, transposes, a scatter...);
    /// none for the loop emitter.
    fn heroes(&self) -> &[InstrId];

    /// How the fusion splits into functions. By default the heroes are written by the
    /// emitter itself and each of their computed operands roots a function
    /// ([`PartitionedComputation::around_heroes`]: the in-place emitters).
    fn partition(&self, fusion: &FusionAnalysis) -> Result<PartitionedComputation, Diagnostic> {
        PartitionedComputation::around_heroes(fusion, self.heroes())
    }

    /// Writes the kernel `@main` (and any function it calls beyond the partition's, which
    /// `m` already holds) and returns the launch dimensions and the thread-to-output map.
    fn emit_entry(
        &self,
        cx: &FusionContext<'_>,
        m: &mut ir::Module,
    ) -> Result<EmittedKernel, Diagnostic>;

    /// Emits fusion `fusion` of `module` (whose analysis is `analysis`) for `target`: its
    /// functions and the kernel `@main`, with the launch dimensions and the
    /// thread-to-output map.
    fn emit(
        &self,
        analysis: &FusionAnalysis,
        module: &HloModule,
        fusion: ComputationId,
        target: Target,
    ) -> Result<EmittedFusion, Diagnostic> {
        let partition = self.partition(analysis)?;
        kernel::emit_with(module, fusion, partition, target, self.kind(), |cx, m| {
            self.emit_entry(cx, m)
        })
    }
}

/// The analysis of fusion computation `c`, with the transpose emitter's rule for the
/// heroes it looks for.
pub fn analyze(c: &Computation) -> FusionAnalysis<'_> {
    FusionAnalysis::new(c, tiled_transpose)
}

/// The emitter for the fusion `analysis` describes. Adding an emitter is its folder and
/// one line here.
pub fn emitter_for(
    analysis: &FusionAnalysis,
    target: Target,
) -> Result<Box<dyn FusionEmitter>, Diagnostic> {
    let computation = analysis.computation;
    kernel::refuse_empty_arrays(computation)?;
    // A sort ROOT is the sort emitter's (its kernel sorts whole rows); a sort elsewhere in
    // a fusion is refused below.
    if let Some(sort) = SortFusion::analyze(analysis)? {
        return Ok(Box::new(sort));
    }
    kernel::refuse_ops_without_emitter(computation)?;
    let (kind, heroes) = choose_emitter(analysis);
    if kind == EmitterKind::Scatter {
        return Ok(Box::new(ScatterFusion::analyze(analysis, target)?));
    }
    // As in XLA, dynamic-update-slice ROOTs whose operands can be updated in place are
    // written in place; the others fall through to the loop emitter.
    if let Some(dus) = InPlaceDynamicUpdateSlice::analyze(analysis, target) {
        return Ok(Box::new(dus));
    }
    if kind == EmitterKind::Transpose
        && let Some(plan) = TransposePlan::new(analysis, &heroes)
    {
        return Ok(Box::new(plan));
    }
    // Rows reduced and then normalized with their own reduced values (softmax, layer
    // norm): one block per row. The loop emitter would recompute each row's reductions
    // for every element, and the reduction emitter takes no elementwise outputs after them.
    if matches!(kind, EmitterKind::Reduction | EmitterKind::Loop)
        && let Some(plan) = RowNormalization::analyze(analysis)
    {
        return Ok(Box::new(plan));
    }
    // The reduction emitter's analysis also takes `reduce / N`-like epilogues, which
    // `choose_emitter` (XLA's hero rule) calls loop fusions.
    if matches!(kind, EmitterKind::Reduction | EmitterKind::Loop)
        && let Some(plan) = ReductionFusion::analyze(analysis)
    {
        return Ok(Box::new(plan));
    }
    // As in XLA, a concatenate hero of the one ROOT gets a loop per operand.
    if kind == EmitterKind::Loop
        && let Some(concat) = ConcatenateFusion::analyze(analysis, target)
    {
        return Ok(Box::new(concat));
    }
    Ok(Box::new(LoopFusion::analyze(computation, target)?))
}

/// The emitter a fusion's heroes ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitterKind {
    Loop,
    Transpose,
    Reduction,
    Scatter,
    InPlaceDynamicUpdateSlice,
    Concatenate,
    RowNormalization,
    Sort,
}

impl std::fmt::Display for EmitterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EmitterKind::Loop => "loop",
            EmitterKind::Transpose => "transpose",
            EmitterKind::Reduction => "reduction",
            EmitterKind::Scatter => "scatter",
            EmitterKind::InPlaceDynamicUpdateSlice => "in-place dynamic-update-slice",
            EmitterKind::Concatenate => "concatenate",
            EmitterKind::RowNormalization => "row normalization",
            EmitterKind::Sort => "sort",
        })
    }
}

/// XLA's hero rule: the emitter kind a fusion's heroes ask for, and the heroes that chose
/// it (a scatter ROOT; else any reduce hero; else any tiled transpose hero; else a loop).
/// [`emitter_for`] starts from it.
pub fn choose_emitter(analysis: &FusionAnalysis) -> (EmitterKind, Vec<InstrId>) {
    let c = analysis.computation;
    match c.root_instruction().opcode {
        Opcode::Scatter => return (EmitterKind::Scatter, vec![c.root]),
        Opcode::Sort => return (EmitterKind::Sort, vec![c.root]),
        _ => {}
    }
    let picks = |kind: EmitterKind| -> Vec<InstrId> {
        analysis
            .heroes
            .iter()
            .copied()
            .filter(|&h| match kind {
                EmitterKind::Reduction => c.instruction(h).opcode == Opcode::Reduce,
                EmitterKind::Transpose => tiled_transpose(c, h).is_some(),
                EmitterKind::Loop
                | EmitterKind::Scatter
                | EmitterKind::InPlaceDynamicUpdateSlice
                | EmitterKind::Concatenate
                | EmitterKind::RowNormalization
                | EmitterKind::Sort => false,
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
