//! The scatter emitter (XLA's `ScatterFusion`): the fusion's ROOT is a scatter, written in
//! place. Output `k` shares the buffer of scatter operand `k`, a fusion parameter (XLA's
//! in-place output, [`EmittedKernel::in_place`]), and the kernel writes only the operand
//! elements the updates address.
//!
//! One thread per update element, launched as the loop emitter launches over the updates
//! (128 threads per block, up to 4 consecutive elements per thread). For the element at
//! update index `u`:
//!
//! 1. its scatter coordinates (the updates dimensions not in `update_window_dims`) pick a
//!    row of the scatter indices, read through the indices' subgraph function, one
//!    component at a time along `index_vector_dim`; each becomes the start of operand
//!    dimension `scatter_dims_to_operand_dims[c]` (an operand batching dimension starts at
//!    the scatter coordinate of its paired indices dimension);
//! 2. the window is skipped unless every start lies in `[0, dim - window size]`, compared
//!    unsigned in 64 bits, so that negative and huge indices (u64 ones too) fall out, as XLA
//!    skips them;
//! 3. the operand index is the start plus the window coordinates, and the combiner
//!    (`to_apply`) merges the update into the element there:
//!    * with `unique_indices=true` no other thread addresses the element: the current value
//!      is read from the operand, combined, and written with `tensor.insert`;
//!    * otherwise with `xla_gpu.atomic_rmw`, whose body calls the combiner on the current
//!      element. A variadic scatter whose indices may repeat is refused: updating several
//!      arrays is not one atomic operation.

use hlo::scatter::ScatterDimensions;
use hlo::{ArrayShape, Diagnostic, InstrId};
use ir::dialects::arith;
use ir::dialects::xla_gpu;
use ir::{Builder, InsertPoint, Type, Value};

use crate::analysis::FusionAnalysis;
use crate::elemental::FusionContext;
use crate::kernel::{self, emit_loop_kernel, provide};
use crate::linear_launch::{DEFAULT_VECTOR_FACTOR, launch_within_grid};
use crate::{EmittedKernel, EmitterKind, FusionEmitter, LaunchDimensions, Target};

type R<T> = Result<T, Diagnostic>;

/// The scatter emitter's analysis: where the operands live, the launch over the updates and
/// the dimension numbers.
pub struct ScatterFusion {
    hero: [InstrId; 1],
    /// The fusion parameter number of each scatter operand (the output it becomes).
    operand_params: Vec<usize>,
    unique: bool,
    launch: LaunchDimensions,
    vector_factor: i64,
    numbers: ScatterDimensions,
}

impl ScatterFusion {
    /// The analysis of a fusion whose ROOT is a scatter; refuses what cannot be written in
    /// place.
    pub fn analyze(analysis: &FusionAnalysis, target: Target) -> R<ScatterFusion> {
        let c = analysis.computation;
        let instr = c.root_instruction();
        let span = instr.spans.whole;
        let k = instr.operands.len() / 2;
        let operand_params = kernel::in_place_parameters(analysis, &instr.operands[..k])
            .map_err(|why| crate::unsupported(span, format!("scatter operand {why}")))?;
        // Each output's buffer is its operand's: they must lay the elements out alike (XLA's
        // layout assignment gives an in-place op's operand its result's layout).
        let results = crate::types::leaves(&instr.shape);
        for (operand, result) in instr.operands[..k].iter().zip(&results) {
            let operand_shape = c.instruction(*operand).shape.as_array();
            if operand_shape.is_some_and(|o| o.layout_or_default() != result.layout_or_default()) {
                return Err(crate::unsupported(
                    span,
                    format!(
                        "a scatter whose operand '{}' is laid out otherwise than its result \
                         (it is written in place)",
                        c.instruction(*operand).name
                    ),
                ));
            }
        }
        let unique = instr.bool_value("unique_indices").unwrap_or(false);
        if k > 1 && !unique {
            return Err(crate::unsupported(
                span,
                format!(
                    "a scatter of {k} operands whose indices may repeat (unique_indices=false): \
                     updating several arrays is not one atomic operation"
                ),
            ));
        }
        let shape = |id: InstrId| c.instruction(id).shape.as_array().cloned();
        let (Some(indices), Some(updates)) =
            (shape(instr.operands[k]), shape(instr.operands[k + 1]))
        else {
            return Err(crate::unsupported(span, "a tuple-shaped scatter operand"));
        };
        let (launch, vector_factor) =
            launch_within_grid(target, c, updates.element_count(), DEFAULT_VECTOR_FACTOR)
                .map_err(|e| crate::unsupported(span, e))?;
        Ok(ScatterFusion {
            hero: [c.root],
            operand_params,
            unique,
            launch,
            vector_factor,
            numbers: ScatterDimensions::of(instr, indices.rank())
                .map_err(|e| crate::unsupported(span, e))?,
        })
    }
}

impl FusionEmitter for ScatterFusion {
    fn kind(&self) -> EmitterKind {
        EmitterKind::Scatter
    }

    fn heroes(&self) -> &[InstrId] {
        &self.hero
    }

    fn emit_entry(&self, cx: &FusionContext<'_>, m: &mut ir::Module) -> R<EmittedKernel> {
        let fusion = cx.fusion;
        let scatter = fusion.root_instruction();
        let span = scatter.spans.whole;
        let k = self.operand_params.len();
        let array = |id: InstrId| fusion.instruction(id).shape.as_array().expect("analyzed");
        let operand = array(scatter.operands[0]);
        let updates = array(scatter.operands[k + 1]);
        let outputs: Vec<&ArrayShape> = scatter.operands[..k].iter().map(|&o| array(o)).collect();
        let (emitted, _) = emit_loop_kernel(
            m,
            fusion,
            &outputs,
            updates,
            &self.launch,
            (self.vector_factor, cx.target.choices),
            |b, kernel, update_index, iters| {
                let (params, output_types) = (&kernel.params, &kernel.output_types);
                let starts = self.starts(cx, b, params, update_index)?;
                let in_bounds = self.in_bounds(b, &starts, operand, updates);
                let (if_op, then_block, else_block) = ir::dialects::scf::build_if(
                    b.module,
                    b.insertion_point(),
                    in_bounds,
                    output_types,
                    true,
                );
                ir::dialects::scf::build_yield(b.module, else_block.expect("an else"), iters);
                b.set_insertion_point(InsertPoint::BlockEnd(then_block));
                let index = self.operand_index(b, &starts, operand.rank(), update_index);
                let written = self.combine(cx, b, params, iters, &index, update_index, span)?;
                ir::dialects::scf::build_yield(b.module, then_block, &written);
                Ok(b.module.results(if_op).collect())
            },
        )?;
        Ok(EmittedKernel {
            in_place: self.operand_params.iter().copied().enumerate().collect(),
            ..emitted
        })
    }
}

impl ScatterFusion {
    /// Per operand dimension, the window's start as an `i64` (read from the indices, or the
    /// scatter coordinate of a batching dimension), or `None` where the window starts at 0.
    fn starts(
        &self,
        cx: &FusionContext<'_>,
        b: &mut Builder<'_>,
        params: &[Value],
        update_index: &[Value],
    ) -> R<Vec<Option<Value>>> {
        let fusion = cx.fusion;
        let scatter = fusion.root_instruction();
        let k = self.operand_params.len();
        let n = &self.numbers;
        let indices_id = scatter.operands[k];
        let indices = fusion
            .instruction(indices_id)
            .shape
            .as_array()
            .expect("analyzed");
        let operand_rank = fusion
            .instruction(scatter.operands[0])
            .shape
            .as_array()
            .expect("analyzed")
            .rank();
        let update_rank = update_index.len();
        let scatter_coords: Vec<Value> = (0..update_rank)
            .filter(|d| !n.update_window_dims.contains(d))
            .map(|d| update_index[d])
            .collect();
        // The indices' index: the scatter coordinates in order, skipping the vector dim.
        let mut at: Vec<Option<Value>> = vec![None; indices.rank()];
        let mut coords = scatter_coords.iter();
        for (d, slot) in at.iter_mut().enumerate() {
            if d != n.index_vector_dim {
                *slot = coords.next().copied();
            }
        }
        let i64_ty = Type::I64;
        let unsigned = indices.element_type.is_unsigned_int();
        let mut starts = vec![None; operand_rank];
        for (c, &d) in n.scatter_dims_to_operand_dims.iter().enumerate() {
            let mut index: Vec<Value> = Vec::with_capacity(indices.rank());
            for (dim, slot) in at.iter().enumerate() {
                index.push(match slot {
                    Some(v) => *v,
                    None if dim == n.index_vector_dim => b.index(c as i64),
                    None => b.index(0),
                });
            }
            let value = provide(cx, b, params, indices_id, &index)?[0];
            starts[d] = Some(kernel::widened_to_i64(b, value, unsigned));
        }
        for (&d, &indices_dim) in n
            .input_batching_dims
            .iter()
            .zip(&n.scatter_indices_batching_dims)
        {
            let coordinate = at[indices_dim].expect("a batching dimension is not the vector dim");
            starts[d] = Some(b.cast(arith::INDEX_CAST, coordinate, i64_ty));
        }
        Ok(starts)
    }

    /// Whether every start lies in `[0, dim - window size]` (unsigned, so that negative
    /// starts fail too).
    fn in_bounds(
        &self,
        b: &mut Builder<'_>,
        starts: &[Option<Value>],
        operand: &ArrayShape,
        updates: &ArrayShape,
    ) -> Value {
        let window = self.numbers.window_sizes(operand.rank(), &updates.dims);
        let mut all: Option<Value> = None;
        for (d, start) in starts.iter().enumerate() {
            let Some(start) = *start else { continue };
            let last = b.int(i128::from(operand.dims[d] - window[d]), Type::I64);
            let fits = b.cmpi("ule", start, last);
            all = Some(match all {
                Some(so_far) => b.binary(arith::ANDI, so_far, fits),
                None => fits,
            });
        }
        // A scatter with no index components (an empty index vector) always fits.
        all.unwrap_or_else(|| b.int(1, Type::I1))
    }

    /// The operand index of the update element: its start plus its window coordinate in
    /// every dimension.
    fn operand_index(
        &self,
        b: &mut Builder<'_>,
        starts: &[Option<Value>],
        rank: usize,
        update_index: &[Value],
    ) -> Vec<Value> {
        let n = &self.numbers;
        let mut window: Vec<Option<Value>> = vec![None; rank];
        for (d, &u) in n
            .operand_window_dims(rank)
            .into_iter()
            .zip(&n.update_window_dims)
        {
            window[d] = Some(update_index[u]);
        }
        starts
            .iter()
            .zip(window)
            .map(|(start, offset)| {
                let start = start.map(|s| b.cast(arith::INDEX_CAST, s, Type::INDEX));
                match (start, offset) {
                    (Some(s), Some(o)) => b.addi(s, o),
                    (Some(v), None) | (None, Some(v)) => v,
                    (None, None) => b.index(0),
                }
            })
            .collect()
    }

    /// Merges the update into the outputs at `index`: the updated output tensors.
    #[allow(clippy::too_many_arguments)]
    fn combine(
        &self,
        cx: &FusionContext<'_>,
        b: &mut Builder<'_>,
        params: &[Value],
        iters: &[Value],
        index: &[Value],
        update_index: &[Value],
        span: hlo::Span,
    ) -> R<Vec<Value>> {
        let fusion = cx.fusion;
        let scatter = fusion.root_instruction();
        let k = self.operand_params.len();
        let mut update_values = Vec::with_capacity(k);
        for &u in &scatter.operands[k + 1..] {
            update_values.extend(provide(cx, b, params, u, update_index)?);
        }
        let combiner = scatter
            .called("to_apply")
            .map(|c| cx.scalar_functions[&c.id].clone())
            .ok_or_else(|| crate::unsupported(span, "a scatter without to_apply="))?;
        let element_types: Vec<Type> = update_values
            .iter()
            .map(|&v| b.module.value_type(v))
            .collect();
        if self.unique {
            let mut args = Vec::with_capacity(2 * k);
            for &p in &self.operand_params {
                args.push(b.extract(params[p], index));
            }
            args.extend(&update_values);
            let call = xla_gpu::build_pure_call(
                b.module,
                b.insertion_point(),
                &combiner,
                &args,
                &element_types,
            );
            let combined: Vec<Value> = b.module.results(call).collect();
            return Ok(combined
                .iter()
                .zip(iters)
                .map(|(&v, &t)| b.insert_element(v, t, index))
                .collect());
        }
        // c128 has one atomic update: a combiner that adds, whose body `lower-tensors`
        // recognizes and makes two f64 atomic adds, one per part. Others would need a
        // 128-bit atomic.
        let element = fusion.instruction(scatter.operands[0]).shape.as_array();
        let c128 = element.is_some_and(|a| a.element_type == hlo::PrimitiveType::C128);
        let adds = scatter.called("to_apply").is_some_and(|c| {
            cx.module.computation(c.id).binary_op_of_parameters() == Some(hlo::Opcode::Add)
        });
        if c128 && !adds {
            return Err(crate::unsupported(
                span,
                "a scatter of c128 whose indices may repeat (unique_indices=false) and whose \
                 combiner is not an add: its updates would need 128-bit atomic \
                 read-modify-writes",
            ));
        }
        let (op, body) = xla_gpu::build_atomic_rmw(b.module, b.insertion_point(), iters[0], index);
        let current = b.module.block_arg(body, 0);
        // XLA yields the update itself when the combiner returns it (an overwrite).
        let overwrites = scatter.called("to_apply").is_some_and(|c| {
            let combiner = cx.module.computation(c.id);
            combiner.root_instruction().opcode == hlo::Opcode::Parameter
                && combiner.root_instruction().parameter_number() == Some(1)
        });
        let combined = if overwrites && cx.target.matches_xla() {
            update_values[0]
        } else {
            let call = xla_gpu::build_pure_call(
                b.module,
                InsertPoint::BlockEnd(body),
                &combiner,
                &[current, update_values[0]],
                &element_types,
            );
            b.module.result(call, 0)
        };
        xla_gpu::build_yield(b.module, body, &[combined]);
        Ok(vec![b.module.result(op, 0)])
    }
}
