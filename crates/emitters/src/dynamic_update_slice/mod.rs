//! The in-place dynamic-update-slice emitter (XLA's `InPlaceDynamicUpdateSliceFusion`):
//! every ROOT of the fusion is a dynamic-update-slice (or a bitcast of one) whose operand
//! is a fusion parameter that nothing else reads. Each output then shares the buffer of its
//! update's operand ([`EmittedKernel::in_place`]), and the kernel writes only the updated
//! window: one thread per element of the update (all updates have one shape), launched as
//! the loop emitter launches over it.
//!
//! For the update element at index `u`, each slice's start indices are read (scalars,
//! through their subgraph functions), widened to 64 bits and clamped into `[0, dim -
//! update dim]` as HLO says (unsigned indices compared unsigned, so that huge u64 ones clamp
//! to the top), and the update's value is inserted at `start + u` (through the bitcast's
//! map for a bitcast ROOT). A fusion that does not qualify is the loop emitter's, which
//! computes every output element.

use hlo::{ArrayShape, Diagnostic, InstrId, Opcode};
use ir::dialects::xla_gpu;

use crate::analysis::{FusionAnalysis, fusion_roots};
use crate::elemental::FusionContext;
use crate::kernel::{self, emit_loop_kernel, provide};
use crate::linear_launch::{DEFAULT_VECTOR_FACTOR, launch_within_grid};
use crate::partition::bitcast_map;
use crate::{EmittedKernel, EmitterKind, FusionEmitter, LaunchDimensions, Target};

type R<T> = Result<T, Diagnostic>;

/// The analysis: per output, its dynamic-update-slice (the hero) and the parameter whose
/// buffer it updates; the launch over the update.
pub struct InPlaceDynamicUpdateSlice {
    heroes: Vec<InstrId>,
    params: Vec<usize>,
    launch: LaunchDimensions,
    vector_factor: i64,
}

impl InPlaceDynamicUpdateSlice {
    /// `Some` when every ROOT is a dynamic-update-slice, or a bitcast of one, that can be
    /// written in place.
    pub fn analyze(analysis: &FusionAnalysis, target: Target) -> Option<InPlaceDynamicUpdateSlice> {
        let c = analysis.computation;
        let heroes: Vec<InstrId> = analysis
            .roots
            .iter()
            .copied()
            .map(|r| match c.instruction(r) {
                i if i.opcode == Opcode::Bitcast => i.operands[0],
                _ => r,
            })
            .collect();
        let dus = |h: &InstrId| c.instruction(*h).opcode == Opcode::DynamicUpdateSlice;
        if heroes.is_empty() || !heroes.iter().all(dus) {
            return None;
        }
        // The output's buffer is the operand's, so the two must lay their elements out
        // alike (XLA shares a buffer only between equal shapes, layouts included); else the
        // loop emitter writes the output anew.
        let same_layout = |h: InstrId| {
            let out = c.instruction(h).shape.as_array();
            let operand = c.instruction(c.instruction(h).operands[0]).shape.as_array();
            matches!((out, operand), (Some(o), Some(p)) if o.layout_or_default() == p.layout_or_default())
        };
        if !heroes.iter().all(|&h| same_layout(h)) {
            return None;
        }
        let operands: Vec<InstrId> = heroes
            .iter()
            .map(|&h| c.instruction(h).operands[0])
            .collect();
        let params = kernel::in_place_parameters(analysis, &operands).ok()?;
        let update = |h: InstrId| c.instruction(c.instruction(h).operands[1]).shape.as_array();
        let first = update(heroes[0])?;
        if !heroes
            .iter()
            .all(|&h| update(h).is_some_and(|u| u.dims == first.dims))
        {
            return None;
        }
        let (launch, vector_factor) =
            launch_within_grid(target, c, first.element_count(), DEFAULT_VECTOR_FACTOR).ok()?;
        Some(InPlaceDynamicUpdateSlice {
            heroes,
            params,
            launch,
            vector_factor,
        })
    }
}

impl FusionEmitter for InPlaceDynamicUpdateSlice {
    fn kind(&self) -> EmitterKind {
        EmitterKind::InPlaceDynamicUpdateSlice
    }

    fn heroes(&self) -> &[InstrId] {
        &self.heroes
    }

    fn emit_entry(&self, cx: &FusionContext<'_>, m: &mut ir::Module) -> R<EmittedKernel> {
        let fusion = cx.fusion;
        let root = fusion.root_instruction();
        let span = root.spans.whole;
        let array = |id: InstrId| fusion.instruction(id).shape.as_array().expect("an array");
        let roots = fusion_roots(fusion);
        let outputs: Vec<&ArrayShape> = roots.iter().map(|&r| array(r)).collect();
        let update_shape = array(fusion.instruction(self.heroes[0]).operands[1]);
        let (emitted, _) = emit_loop_kernel(
            m,
            fusion,
            &outputs,
            update_shape,
            &self.launch,
            (self.vector_factor, cx.target.choices),
            |b, kernel, update_index, iters| {
                let params = &kernel.params;
                let mut written = Vec::with_capacity(iters.len());
                for ((&hero, &root), &iter) in self.heroes.iter().zip(&roots).zip(iters) {
                    let dus = fusion.instruction(hero);
                    let (operand, update) = (array(dus.operands[0]), array(dus.operands[1]));
                    let mut index = Vec::with_capacity(operand.rank());
                    for (d, &start) in dus.operands[2..].iter().enumerate() {
                        let value = provide(cx, b, params, start, &[])?[0];
                        let unsigned = array(start).element_type.is_unsigned_int();
                        let last = operand.dims[d] - update.dims[d];
                        let start = kernel::clamped_index(b, value, unsigned, last);
                        index.push(b.addi(start, update_index[d]));
                    }
                    let value = provide(cx, b, params, dus.operands[1], update_index)?[0];
                    if root != hero {
                        let to_output = bitcast_map(operand, array(root)).ok_or_else(|| {
                            crate::unsupported(span, "a bitcast root that moves elements")
                        })?;
                        index = xla_gpu::build_apply_indexing(
                            b.module,
                            b.insertion_point(),
                            to_output,
                            &index,
                            &[],
                        );
                    }
                    written.push(b.insert_element(value, iter, &index));
                }
                Ok(written)
            },
        )?;
        Ok(EmittedKernel {
            in_place: self.params.iter().copied().enumerate().collect(),
            ..emitted
        })
    }
}
