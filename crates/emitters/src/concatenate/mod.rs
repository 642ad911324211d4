//! The concatenate emitter (XLA's `ConcatenateFusion`): the fusion's one ROOT is a
//! concatenate, or computed from one through one-operand elementwise ops and bitcasts (its
//! epilogue). Instead of one loop over the output that picks an operand per element, there
//! is one loop per operand over that operand's elements: no branch per element, and each
//! operand's prologue runs only where it is read.
//!
//! The launch is the loop emitter's over the largest operand (128 threads per block, up to 4
//! consecutive elements per thread). Operand `k`'s loop runs the same thread map with its
//! concatenated dimension bounded by the operand's size; its results are the output index
//! (the operand index shifted by the sizes of the operands before it); the operand's element
//! is computed at the operand index, passed through the epilogue (`@<fusion>__epilogue__<root>`,
//! the ops from the concatenate to the ROOT with the element passed in) and written. The
//! loops run one after another, each writing its part of the output.

use hlo::{ArrayShape, Diagnostic, InstrId, Opcode};
use indexing::{AffineExpr, Interval};
use ir::Type;
use ir::dialects::arith;
use ir::dialects::xla_gpu;

use crate::analysis::FusionAnalysis;
use crate::elemental::FusionContext;
use crate::kernel::{KernelEntry, begin_kernel, emit_loop, provide};
use crate::linear_launch::{DEFAULT_VECTOR_FACTOR, launch_within_grid, thread_to_output_map};
use crate::partition::{PartitionedComputation, bitcast_map, sanitize};
use crate::{EmittedKernel, EmitterKind, FusionEmitter, LaunchDimensions, Target};

type R<T> = Result<T, Diagnostic>;

/// The most operands a concatenate fusion takes (one loop each; XLA bounds them too).
pub const MAX_OPERANDS: usize = 64;

/// The analysis: the concatenate, its dimension, and the launch over its largest operand.
pub struct ConcatenateFusion {
    hero: [InstrId; 1],
    dimension: usize,
    largest: ArrayShape,
    launch: LaunchDimensions,
    vector_factor: i64,
}

impl ConcatenateFusion {
    /// `Some` when the fusion's one ROOT has a concatenate hero that this emitter can write.
    pub fn analyze(analysis: &FusionAnalysis, target: Target) -> Option<ConcatenateFusion> {
        let c = analysis.computation;
        if c.root_instruction().opcode == Opcode::Tuple {
            return None;
        }
        let hero = analysis.heroes[0];
        let concat = c.instruction(hero);
        if concat.opcode != Opcode::Concatenate || concat.operands.len() > MAX_OPERANDS {
            return None;
        }
        let dimension = usize::try_from(*concat.int_list("dimensions")?.first()?).ok()?;
        let shapes: Option<Vec<&ArrayShape>> = concat
            .operands
            .iter()
            .map(|&o| c.instruction(o).shape.as_array())
            .collect();
        let largest = (*shapes?.iter().max_by_key(|s| s.element_count())?).clone();
        // The root must be at the concatenate's index or a bitcast of it.
        let root = c.root_instruction().shape.as_array()?;
        let output = concat.shape.as_array()?;
        if root.dims != output.dims && bitcast_map(output, root).is_none() {
            return None;
        }
        let (launch, vector_factor) =
            launch_within_grid(target, c, largest.element_count(), DEFAULT_VECTOR_FACTOR).ok()?;
        Some(ConcatenateFusion {
            hero: [hero],
            dimension,
            largest,
            launch,
            vector_factor,
        })
    }
}

impl FusionEmitter for ConcatenateFusion {
    fn kind(&self) -> EmitterKind {
        EmitterKind::Concatenate
    }

    fn heroes(&self) -> &[InstrId] {
        &self.hero
    }

    /// The concatenate and its operands root functions (the operands' are the prologues).
    fn partition(&self, analysis: &FusionAnalysis) -> R<PartitionedComputation> {
        let c = analysis.computation;
        let mut requested = self.hero.to_vec();
        requested.extend(&c.instruction(self.hero[0]).operands);
        PartitionedComputation::new(analysis, |id| requested.contains(&id))
    }

    fn emit_entry(&self, cx: &FusionContext<'_>, m: &mut ir::Module) -> R<EmittedKernel> {
        let c = cx.fusion;
        let epilogue = (c.root != self.hero[0])
            .then(|| {
                let name = format!(
                    "{}__epilogue__{}",
                    sanitize(&c.name),
                    sanitize(&c.root_instruction().name)
                );
                crate::epilogue::emit_hero_epilogue(cx, m, c.root, self.hero[0], &name)
                    .map(|()| name)
            })
            .transpose()?;
        let kernel = self.emit_main(cx, m, epilogue.as_deref())?;
        crate::epilogue::erase_unused_functions(m);
        Ok(kernel)
    }
}

impl ConcatenateFusion {
    fn emit_main(
        &self,
        cx: &FusionContext<'_>,
        m: &mut ir::Module,
        epilogue: Option<&str>,
    ) -> R<EmittedKernel> {
        let fusion = cx.fusion;
        let root = fusion.root_instruction();
        let span = root.spans.whole;
        let root_shape = root.shape.as_array().expect("analyzed");
        let concat = fusion.instruction(self.hero[0]);
        let output = concat.shape.as_array().expect("analyzed");
        let base = thread_to_output_map(
            &self.largest,
            &self.launch,
            self.vector_factor,
            cx.target.choices,
        );
        let (
            KernelEntry {
                params,
                mut outs,
                output_types,
                ..
            },
            mut b,
            dims,
        ) = begin_kernel(m, fusion, &[root_shape], span, &self.launch)?;
        let to_root = (root_shape.dims != output.dims)
            .then(|| bitcast_map(output, root_shape))
            .flatten();
        let mut offset = 0;
        for &operand in &concat.operands {
            let size = fusion
                .instruction(operand)
                .shape
                .as_array()
                .expect("analyzed")
                .dims[self.dimension];
            // The thread map over the largest operand, bounded by this one's size and shifted
            // to its place in the output.
            let mut map = base.clone();
            let along = map.results[self.dimension].clone();
            map.add_constraint(along.clone(), Interval::new(0, size - 1));
            map.results[self.dimension] = along + AffineExpr::Constant(offset);
            let map = map.simplified();
            outs = emit_loop(&mut b, map, &dims, &outs, |b, _, index, iters| {
                let mut operand_index = index.to_vec();
                if offset != 0 {
                    let shift = b.index(offset);
                    operand_index[self.dimension] =
                        b.binary(arith::SUBI, index[self.dimension], shift);
                }
                let mut value = provide(cx, b, &params, operand, &operand_index)?[0];
                let mut root_index = index.to_vec();
                if let Some(to_root) = &to_root {
                    root_index = xla_gpu::build_apply_indexing(
                        b.module,
                        b.insertion_point(),
                        to_root.clone(),
                        index,
                        &[],
                    );
                }
                if let Some(name) = epilogue {
                    let mut call_args = params.to_vec();
                    call_args.extend(&root_index);
                    call_args.push(value);
                    let ty: Vec<Type> = output_types
                        .iter()
                        .map(|t| t.element_type().expect("a tensor"))
                        .collect();
                    let call = xla_gpu::build_pure_call(
                        b.module,
                        b.insertion_point(),
                        name,
                        &call_args,
                        &ty,
                    );
                    value = b.module.result(call, 0);
                }
                Ok(vec![b.insert_element(value, iters[0], &root_index)])
            })?;
            offset += size;
        }
        b.ret(&outs);
        Ok(EmittedKernel {
            launch: self.launch,
            vector_factor: self.vector_factor,
            thread_map: base,
            in_place: Vec::new(),
            layouts: Vec::new(),
        })
    }
}
