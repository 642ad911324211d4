//! The loop emitter: one `xla_gpu.loop` over the fusion's output in linear,
//! coalesced order.
//!
//! Launch: 128 threads per block (fewer for tiny outputs); each thread handles a vector of
//! `factor` consecutive elements, the largest power of two up to the fusion's vector limit
//! that divides the element count. The limit is 4, or 8 when every buffer the fusion reads
//! or writes has elements of 2 bytes or fewer: a thread then moves 16 bytes per buffer (one
//! 128-bit access), which is what keeps enough bytes in flight to reach copy bandwidth: on an
//! H200, GELU on bf16 ran at 80% of a copy with 8-byte accesses (bench/RESULTS.md, GPU runs);
//! `blocks = ceil(elements / (threads * factor))`. The thread→element map is
//! `(th_x, bl_x)[vector_index] -> bl_x * threads * factor + th_x * factor + vector_index`,
//! delinearized in the output's physical (layout) order and simplified; when the grid
//! overshoots, a constraint keeps the linear index below the element count. More blocks
//! than grid.x holds (2^31 - 1: about 10^12 elements) are spread over grid.y
//! ([`LaunchDimensions::grid`]): the map then has a third dimension `bl_y` and the block
//! index is `bl_y * grid_x + bl_x`.

use hlo::{ArrayShape, Computation, Diagnostic, InstrId};
use indexing::{AffineExpr, IndexingMap};
use ir::dialects::xla_gpu;
use ir::{Builder, Type, Value};

use crate::analysis::FusionAnalysis;
use crate::elemental::FusionContext;
use crate::kernel::{KernelEntry, emit_loop_kernel};
use crate::linear_launch::{launch_within_grid, vector_limit};
use crate::partition::PartitionedComputation;
use crate::partition::{bitcast_map, first_array};
use crate::types::leaves;
use crate::{EmittedKernel, EmitterKind, FusionEmitter, LaunchDimensions, Target};

/// The loop emitter's analysis: the launch and the vector factor, from the first output.
/// It takes every fusion whose grid a GPU can launch.
pub struct LoopFusion {
    pub launch: LaunchDimensions,
    pub vector_factor: i64,
}

impl LoopFusion {
    pub fn analyze(computation: &Computation, target: Target) -> Result<LoopFusion, Diagnostic> {
        let root = computation.root_instruction();
        let unsupported = |what: String| crate::unsupported(root.spans.whole, what);
        let first = first_array(&root.shape)
            .ok_or_else(|| unsupported("a fusion without outputs".into()))?;
        let limit = vector_limit(computation);
        let (launch, vector_factor) =
            launch_within_grid(target, computation, first.element_count(), limit)
                .map_err(unsupported)?;
        Ok(LoopFusion {
            launch,
            vector_factor,
        })
    }
}

impl FusionEmitter for LoopFusion {
    fn kind(&self) -> EmitterKind {
        EmitterKind::Loop
    }

    fn heroes(&self) -> &[InstrId] {
        &[]
    }

    fn partition(&self, analysis: &FusionAnalysis) -> Result<PartitionedComputation, Diagnostic> {
        PartitionedComputation::new(analysis, |_| false)
    }

    fn emit_entry(
        &self,
        cx: &FusionContext<'_>,
        m: &mut ir::Module,
    ) -> Result<EmittedKernel, Diagnostic> {
        emit_main(cx, m, self)
    }
}

/// Emits `@main` for the loop emitter into `m` (the subgraph functions are already there).
pub fn emit_main(
    cx: &FusionContext<'_>,
    m: &mut ir::Module,
    analysis: &LoopFusion,
) -> Result<EmittedKernel, Diagnostic> {
    let fusion = cx.fusion;
    let root = fusion.root_instruction();
    let unsupported = |what: String| crate::unsupported(root.spans.whole, what);
    let outputs: Vec<&ArrayShape> = leaves(&root.shape);
    let first =
        first_array(&root.shape).ok_or_else(|| unsupported("a fusion without outputs".into()))?;
    let root_fn = &cx.subgraph_functions[0];
    let body = |b: &mut Builder<'_>, kernel: &KernelEntry, index: &[Value], iters: &[Value]| {
        let result_types: Vec<Type> = kernel
            .output_types
            .iter()
            .map(|t| t.element_type().expect("tensor"))
            .collect();
        for (i, &v) in index.iter().enumerate() {
            b.module.set_value_name(v, Some(&format!("dim{i}")));
        }
        let mut call_args = kernel.params.to_vec();
        call_args.extend_from_slice(index);
        let call = xla_gpu::build_pure_call(
            b.module,
            b.insertion_point(),
            root_fn,
            &call_args,
            &result_types,
        );
        let values: Vec<Value> = b.module.results(call).collect();
        let mut inserted = Vec::with_capacity(outputs.len());
        for ((a, &value), &iter) in outputs.iter().zip(&values).zip(iters) {
            let out_index = if a.dims == first.dims {
                index.to_vec()
            } else {
                let to_output = bitcast_map(first, a).ok_or_else(|| {
                    unsupported(format!(
                        "output {a} is not a bitcast of the first output {first}"
                    ))
                })?;
                apply_all(b, &to_output, index)
            };
            inserted.push(b.insert_element(value, iter, &out_index));
        }
        Ok(inserted)
    };
    let (launch, factor) = (&analysis.launch, analysis.vector_factor);
    let (emitted, results) = emit_loop_kernel(
        m,
        fusion,
        &outputs,
        first,
        launch,
        (factor, cx.target.choices),
        body,
    )?;
    m.set_value_name(results[0], Some("xla_loop"));
    Ok(emitted)
}

/// Every result of `map` at `dims`, as `xla_gpu.apply_indexing` (or the value itself for a
/// plain dimension).
fn apply_all(b: &mut Builder<'_>, map: &IndexingMap, dims: &[Value]) -> Vec<Value> {
    map.results
        .iter()
        .map(|e| match e {
            AffineExpr::Dim(i) => dims[*i],
            AffineExpr::Constant(c) => b.index(*c),
            _ => {
                let mut single = map.clone();
                single.results = vec![e.clone()];
                xla_gpu::build_apply_indexing(b.module, b.insertion_point(), single, dims, &[])[0]
            }
        })
        .collect()
}
