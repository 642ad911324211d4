//! The one interface every emitter implements, and the one place that chooses among them.
//!
//! An emitter is an analysis of a fusion computation (its constructor: `None` when the
//! fusion is not one it takes) and an [`FusionEmitter::emit`] that writes the kernel from
//! it: the subgraph functions, `@main` with its loops, the launch dimensions and the map
//! from (thread, block) to the output index. [`emitter_for`] asks the heroes which emitter
//! fits, in XLA's order, and falls back to the loop emitter, which is correct for every
//! fusion.

use hlo::{Computation, ComputationId, Diagnostic, HloModule, InstrId};

use crate::concatenate::ConcatenateFusion;
use crate::dynamic_update_slice::InPlaceDynamicUpdateSlice;
use crate::elemental::FusionContext;
use crate::hero::{self, EmitterKind};
use crate::loop_fusion::LoopFusion;
use crate::normalization::RowNormalization;
use crate::partition::PartitionedComputation;
use crate::reduction::ReductionFusion;
use crate::scatter::ScatterFusion;
use crate::transpose::TransposePlan;
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
    fn partition(&self, fusion: &Computation) -> Result<PartitionedComputation, Diagnostic> {
        PartitionedComputation::around_heroes(fusion, self.heroes())
    }

    /// Writes the kernel `@main` (and any function it calls beyond the partition's, which
    /// `m` already holds) and returns the launch dimensions and the thread-to-output map.
    fn emit_entry(
        &self,
        cx: &FusionContext<'_>,
        m: &mut ir::Module,
    ) -> Result<EmittedKernel, Diagnostic>;

    /// Emits fusion `fusion` of `module` for `target`: its functions and the kernel
    /// `@main`, with the launch dimensions and the thread-to-output map.
    fn emit(
        &self,
        module: &HloModule,
        fusion: ComputationId,
        target: Target,
    ) -> Result<EmittedFusion, Diagnostic> {
        let partition = self.partition(module.computation(fusion))?;
        kernel::emit_with(module, fusion, partition, target, self.kind(), |cx, m| {
            self.emit_entry(cx, m)
        })
    }
}

/// The emitter for `computation`. Adding an emitter is its folder and one line here.
pub fn emitter_for(computation: &Computation) -> Result<Box<dyn FusionEmitter>, Diagnostic> {
    kernel::refuse_empty_arrays(computation)?;
    let (kind, heroes) = hero::choose_emitter(computation);
    if kind == EmitterKind::Scatter {
        return Ok(Box::new(ScatterFusion::analyze(computation)?));
    }
    // As in XLA, dynamic-update-slice ROOTs whose operands can be updated in place are
    // written in place; the others fall through to the loop emitter.
    if let Some(dus) = InPlaceDynamicUpdateSlice::analyze(computation) {
        return Ok(Box::new(dus));
    }
    if kind == EmitterKind::Transpose
        && let Some(plan) = TransposePlan::new(computation, &heroes)
    {
        return Ok(Box::new(plan));
    }
    // Rows reduced and then normalized with their own reduced values (softmax, layer
    // norm): one block per row. The loop emitter would recompute each row's reductions
    // for every element, and the reduction emitter takes no elementwise outputs after them.
    if matches!(kind, EmitterKind::Reduction | EmitterKind::Loop)
        && let Some(plan) = RowNormalization::analyze(computation)
    {
        return Ok(Box::new(plan));
    }
    // The reduction emitter's analysis also takes `reduce / N`-like epilogues, which
    // `choose_emitter` (XLA's hero rule) calls loop fusions.
    if matches!(kind, EmitterKind::Reduction | EmitterKind::Loop)
        && let Some(plan) = ReductionFusion::analyze(computation)
    {
        return Ok(Box::new(plan));
    }
    // As in XLA, a concatenate hero of the one ROOT gets a loop per operand.
    if kind == EmitterKind::Loop
        && let Some(concat) = ConcatenateFusion::analyze(computation)
    {
        return Ok(Box::new(concat));
    }
    Ok(Box::new(LoopFusion::analyze(computation)?))
}
