//! The reduction emitters (XLA's `reduction.cc`): row, multi-row, column and
//! small-column reductions, with side outputs and epilogues, in one kernel.
//!
//! The kernel `@main` has the shape of XLA's `ReductionFusion::EmitReduction`:
//!
//! 1. **Inits** of every reduce hero, read once.
//! 2. **Per-thread loop**: one `xla_gpu.loop` over the thread's share of the input (the
//!    tiling's input map). Each iteration reads every hero's operands at the element (the
//!    canonical input index bitcast into each operand's shape), folds them into the
//!    thread's accumulators with the reducer, and writes the side outputs (outputs that
//!    are not reductions: they have the input's element count and are written at the same
//!    bitcast index, each element by the one thread that reads it). Column kinds keep one
//!    accumulator per vector lane (`vector<N x T>`): the lanes of a vector are different
//!    outputs there.
//! 3. **Warp shuffle** (row kinds): `xla_gpu.shuffle_reduce` within the lanes of a row.
//! 4. **Shared memory** (row with several warps per row, column kinds): the partials are
//!    written to `xla_gpu.allocate_shared` tiles, `xla_gpu.sync_threads`, read back by the
//!    threads that finish the reduction (`xla_gpu.predicated_extract`, the init where a
//!    thread has nothing to read: every lane must take part in the shuffle) and shuffled
//!    again.
//! 5. **Epilogue and write**: the threads the output map's constraints name write each
//!    reduction output: the hero's value itself (`xla_gpu.predicated_insert`), or the
//!    output's epilogue function applied to the heroes' values (in an `scf.if`, so that an
//!    epilogue never reads parameters at the index of a thread without an output).
//!
//! Unlike XLA, all outputs form one group (XLA runs disjoint groups of outputs on different
//! `blockIdx.y`); grids stay 1-d. What the reduction emitters do not take — a reduce with
//! no contiguous form, one that is not faster than the loop emitter or not race free by
//! XLA's rules, reduces of different shapes, side outputs of another element count, outputs
//! between which and their reduce other than elementwise ops lie — goes to the loop
//! emitter, which is correct for any reduce ([`ReductionFusion::analyze`] says `None`).

pub mod dimensions;
pub(crate) mod epilogue;
pub mod tiling;

use ir::dialects::arith;
use ir::dialects::gpu;
use std::collections::{HashMap, HashSet};

use hlo::{ArrayShape, Computation, Diagnostic, InstrId, Layout, Opcode, Span};
use indexing::{AffineExpr, IndexingMap, Interval};
use ir::dialects::vector::{self as irvector, Position};
use ir::dialects::xla_gpu;
use ir::{Builder, Type, Value};

use crate::analysis::FusionAnalysis;
use crate::elemental::FusionContext;
use crate::kernel::{KernelEntry, emit_loop, kernel_entry, special_register};
use crate::partition::{PartitionedComputation, bitcast_map};
use crate::types::leaves;
use crate::unsupported;
use crate::{EmittedKernel, LaunchDimensions, ThreadLayout};

pub use dimensions::ReductionDimensions;
pub use tiling::{ElementWidths, ReductionKind, Tiling};

type R<T> = Result<T, Diagnostic>;

/// What one output of the fusion is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// The value of reduce hero `hero` (an index into [`ReductionFusion::heroes`]), maybe
    /// through an elementwise epilogue.
    Reduction { hero: usize },
    /// Written elementwise at the input's index.
    Side,
}

/// One output (an element of the tuple ROOT, or the ROOT).
#[derive(Clone, Debug)]
pub struct Output {
    pub root: InstrId,
    pub kind: OutputKind,
    /// The position of its first array among the kernel's output tensors.
    pub first_tensor: usize,
}

/// XLA's `ReductionFusion` analysis: the heroes, the outputs and the tiling.
#[derive(Clone, Debug)]
pub struct ReductionFusion {
    pub dimensions: ReductionDimensions,
    pub tiling: Tiling,
    /// The distinct reduce heroes, in output order.
    pub heroes: Vec<InstrId>,
    pub outputs: Vec<Output>,
}

pub(crate) fn is_elementwise(op: Opcode) -> bool {
    op.is_elementwise_unary()
        || op.is_elementwise_binary()
        || matches!(
            op,
            Opcode::Select | Opcode::Clamp | Opcode::Convert | Opcode::Copy
        )
}

/// A scalar broadcast to an array (`broadcast(x)` with `dimensions={}`), or a constant:
/// an operand an epilogue may read besides the reduce (reading it is one scalar load).
fn is_scalar_operand(c: &Computation, id: InstrId) -> bool {
    let instr = c.instruction(id);
    match instr.opcode {
        Opcode::Constant => true,
        Opcode::Broadcast => {
            let operand = c.instruction(instr.operands[0]);
            operand.shape.as_array().is_some_and(|a| a.dims.is_empty())
                && matches!(operand.opcode, Opcode::Parameter | Opcode::Constant)
        }
        _ => false,
    }
}

/// The instructions of `c` that a reduce feeds, directly or not (the reduces included):
/// what an epilogue op may not read besides its chain. Anything else with the op's
/// dimensions is a side value, read at the output's index (`log(sum) + max` with `max` a
/// parameter: the fusion pass makes such epilogues, `crates/fusion`'s `epilogue_chain`).
/// One pass over the computation, so that an epilogue's side values cost no walk of their
/// own (a long epilogue over a deep side value stays linear).
fn fed_by_a_reduce(analysis: &FusionAnalysis) -> HashSet<InstrId> {
    let c = analysis.computation;
    let mut fed = HashSet::new();
    for id in analysis.graph.post_order() {
        let instr = c.instruction(id);
        if instr.opcode == Opcode::Reduce || instr.operands.iter().any(|o| fed.contains(o)) {
            fed.insert(id);
        }
    }
    fed
}

/// The reduce an output computes, if it is one through an elementwise epilogue: XLA walks
/// from the output through unary elementwise ops (`FindNonTrivialHero`); we also walk
/// through elementwise ops whose other operands are scalar broadcasts or side values, so
/// `reduce / N` (a mean) and `log(sum) + max` (logsumexp) stay in the reduction kernel.
/// Every op on the way keeps the output's shape, so it reads the reduce at its own index.
/// (Without side values logsumexp's second fusion fell to the loop emitter, a thread
/// summing a whole row: 13.4 us on an H200 where XLA's three kernels took 3.1 us.)
fn reduction_hero(c: &Computation, root: InstrId, fed: &HashSet<InstrId>) -> Option<InstrId> {
    // The dims an instruction is read at: its own, or a variadic reduce's first result's.
    let dims = |id: InstrId| {
        leaves(&c.instruction(id).shape)
            .first()
            .map(|a| a.dims.clone())
    };
    let mut id = root;
    loop {
        let instr = c.instruction(id);
        if instr.opcode == Opcode::Reduce {
            return Some(id);
        }
        if !is_elementwise(instr.opcode) || instr.shape.is_tuple() {
            return None;
        }
        let mut candidates = instr
            .operands
            .iter()
            .copied()
            .filter(|&o| !is_scalar_operand(c, o) && (fed.contains(&o) || dims(o) != dims(id)));
        let next = candidates.next()?;
        if candidates.next().is_some() || dims(next) != dims(id) {
            return None;
        }
        id = next;
    }
}

/// The smallest element width among `shapes` (`i64::MAX` when there are none).
fn smallest_bits<'a>(shapes: impl Iterator<Item = &'a ArrayShape>) -> i64 {
    shapes
        .map(|a| a.element_type.bit_width() as i64)
        .min()
        .unwrap_or(i64::MAX)
}

/// The operand's shape with the reduced dimensions deleted, keeping the operand's physical
/// order of the kept ones (XLA's `DeleteDimensions`): the shape the canonical output index
/// is delinearized in.
fn kept_physical_shape(operand: &ArrayShape, reduced: &[i64]) -> ArrayShape {
    let kept: Vec<usize> = (0..operand.rank())
        .filter(|d| !reduced.contains(&(*d as i64)))
        .collect();
    let renumber = |d: i64| kept.iter().position(|&k| k as i64 == d).map(|p| p as i64);
    let minor_to_major: Vec<i64> = operand
        .layout_or_default()
        .minor_to_major
        .iter()
        .filter_map(|&d| renumber(d))
        .collect();
    let mut shape = ArrayShape::new(
        operand.element_type,
        kept.iter().map(|&d| operand.dims[d]).collect(),
    );
    let mut layout = Layout::row_major(kept.len());
    layout.minor_to_major = minor_to_major;
    shape.layout = Some(layout);
    shape
}

impl ReductionFusion {
    /// The fusion's analysis, or `None` when the reduction emitters do not take it (see
    /// the module documentation).
    pub fn analyze(analysis: &FusionAnalysis) -> Option<ReductionFusion> {
        let c = analysis.computation;
        let fed = fed_by_a_reduce(analysis);
        let mut heroes: Vec<InstrId> = Vec::new();
        let mut outputs = Vec::new();
        let mut first_tensor = 0;
        for &r in &analysis.roots {
            let kind = match reduction_hero(c, r, &fed) {
                Some(h) => {
                    let hero = heroes.iter().position(|&x| x == h).unwrap_or_else(|| {
                        heroes.push(h);
                        heroes.len() - 1
                    });
                    OutputKind::Reduction { hero }
                }
                None => OutputKind::Side,
            };
            outputs.push(Output {
                root: r,
                kind,
                first_tensor,
            });
            first_tensor += leaves(&c.instruction(r).shape).len();
        }
        let operand_shape =
            |h: InstrId, k: usize| c.instruction(c.instruction(h).operands[k]).shape.as_array();
        let first = *heroes.first()?;
        let dimensions = ReductionDimensions::of(c.instruction(first), operand_shape(first, 0)?)?;
        for &h in &heroes {
            let instr = c.instruction(h);
            let arity = instr.operands.len() / 2;
            for k in 0..arity {
                let shape = operand_shape(h, k)?;
                if ReductionDimensions::of(instr, shape)? != dimensions {
                    return None;
                }
            }
        }
        if !dimensions.is_faster_than_elemental() || !dimensions.is_race_free() {
            return None;
        }
        let inputs: Vec<ArrayShape> = c
            .parameters()
            .into_iter()
            .filter_map(|p| c.instruction(p).shape.as_array().cloned())
            .collect();
        let output_shapes = leaves(&c.root_instruction().shape);
        let widths = ElementWidths {
            smallest_input_bits: smallest_bits(inputs.iter()),
            smallest_output_bits: smallest_bits(output_shapes.iter().copied()),
        };
        let tiling = Tiling::new(&dimensions, widths, analysis.choices)?;
        let canonical = ArrayShape::new(hlo::PrimitiveType::F32, tiling.input_shape.clone());
        for o in &outputs {
            if o.kind == OutputKind::Side {
                let shape = c.instruction(o.root).shape.as_array()?;
                bitcast_map(&canonical, shape)?;
            }
        }
        for &h in &heroes {
            let instr = c.instruction(h);
            for k in 0..instr.operands.len() / 2 {
                bitcast_map(&canonical, operand_shape(h, k)?)?;
            }
        }
        Some(ReductionFusion {
            dimensions,
            tiling,
            heroes,
            outputs,
        })
    }

    /// Instructions that root a subgraph: the heroes and every operand of theirs (read at
    /// the input index, and the inits at none), besides the outputs.
    fn roots(&self, c: &Computation) -> Vec<InstrId> {
        let mut roots: Vec<InstrId> = self.heroes.clone();
        for &h in &self.heroes {
            roots.extend(c.instruction(h).operands.iter().copied());
        }
        roots
    }

    /// The canonical input shape as an array shape (row-major: it is the physical order).
    fn canonical_input(&self) -> ArrayShape {
        ArrayShape::new(hlo::PrimitiveType::F32, self.tiling.input_shape.clone())
    }
}

impl crate::FusionEmitter for ReductionFusion {
    fn kind(&self) -> crate::EmitterKind {
        crate::EmitterKind::Reduction
    }

    fn heroes(&self) -> &[InstrId] {
        &self.heroes
    }

    /// The heroes and every operand of theirs root functions (see
    /// [`ReductionFusion::roots`]).
    fn partition(&self, analysis: &FusionAnalysis) -> R<PartitionedComputation> {
        let c = analysis.computation;
        let roots = self.roots(c);
        PartitionedComputation::with_output_roots(analysis, |id| roots.contains(&id))
    }

    fn emit_entry(&self, cx: &FusionContext<'_>, m: &mut ir::Module) -> R<crate::EmittedKernel> {
        let kernel = Emitter::new(cx, self)?.emit_main(m)?;
        crate::epilogue::erase_unused_functions(m);
        Ok(kernel)
    }
}

/// One hero's values: one per reduce result (several for a variadic reduce).
type HeroValues = Vec<Vec<Value>>;

struct Emitter<'a> {
    cx: &'a FusionContext<'a>,
    plan: &'a ReductionFusion,
    span: Span,
    /// Element types of each hero's results.
    hero_types: Vec<Vec<Type>>,
    /// The scalar function each hero reduces with.
    reducers: Vec<String>,
}

impl<'a> Emitter<'a> {
    fn new(cx: &'a FusionContext<'a>, plan: &'a ReductionFusion) -> R<Emitter<'a>> {
        let c = cx.fusion;
        let span = c.root_instruction().spans.whole;
        let mut hero_types = Vec::new();
        let mut reducers = Vec::new();
        for &h in &plan.heroes {
            let instr = c.instruction(h);
            let types = crate::types::leaf_element_types(&instr.shape)
                .map_err(|e| unsupported(instr.spans.whole, e))?;
            hero_types.push(types);
            let called = instr
                .called("to_apply")
                .ok_or_else(|| unsupported(instr.spans.whole, "a reduce without to_apply"))?;
            reducers.push(cx.scalar_functions[&called.id].clone());
        }
        Ok(Emitter {
            cx,
            plan,
            span,
            hero_types,
            reducers,
        })
    }

    fn instr(&self, id: InstrId) -> &'a hlo::Instruction {
        self.cx.fusion.instruction(id)
    }

    /// `index`, an index of `canonical`, as the index of the same element of `id`'s array,
    /// which the analysis checked is a bitcast of it.
    fn bitcast_index(
        &self,
        b: &mut Builder<'_>,
        canonical: &ArrayShape,
        index: &[Value],
        id: InstrId,
    ) -> Vec<Value> {
        let shape = self
            .instr(id)
            .shape
            .as_array()
            .expect("checked by the analysis");
        let to_id = bitcast_map(canonical, shape).expect("checked by the analysis");
        apply_map(b, &to_id, index, &[])
    }

    fn arity(&self, hero: usize) -> usize {
        self.instr(self.plan.heroes[hero]).operands.len() / 2
    }

    /// `@main(params, outputs) -> outputs`.
    fn emit_main(&self, m: &mut ir::Module) -> R<EmittedKernel> {
        let c = self.cx.fusion;
        let root = c.root_instruction();
        if self.plan.tiling.blocks as u64 > crate::Target::MAX_GRID_X {
            return Err(unsupported(
                self.span,
                format!(
                    "a reduction of {} blocks, more than grid.x holds ({})",
                    self.plan.tiling.blocks,
                    crate::Target::MAX_GRID_X
                ),
            ));
        }
        let output_shapes = leaves(&root.shape);
        let KernelEntry {
            entry,
            params,
            outs,
            ..
        } = kernel_entry(m, c, &output_shapes, self.span)?;
        let (params, outs) = (params.as_slice(), outs.as_slice());
        let num_params = params.len();

        let epilogues = self.build_epilogues(m, num_params)?;
        let tiling = &self.plan.tiling;
        let mut b = Builder::at_end(m, entry);
        let thread = special_register(&mut b, gpu::THREAD_ID, "x", tiling.threads as u64);
        let block = special_register(&mut b, gpu::BLOCK_ID, "x", tiling.blocks as u64);
        let state = State {
            params: params.to_vec(),
            thread,
            block,
            epilogues,
        };

        let inits = self.inits(&mut b, &state)?;
        let (outputs, mut partials) = self.per_thread_loop(&mut b, &state, &inits, outs)?;
        if let Some(distance) = tiling.first_shuffle {
            partials = self.shuffle(&mut b, &partials, distance);
        }
        let results = match &tiling.shared {
            None => self.write_outputs(&mut b, &state, &partials, outputs, &[], &[])?,
            Some(shared) => {
                self.reduce_via_shared_memory(&mut b, &state, shared, &partials, &inits, outputs)?
            }
        };
        b.ret(&results);

        let element_bytes: Vec<i64> = self
            .hero_types
            .iter()
            .flatten()
            .map(|&t| crate::types::element_bytes(t))
            .collect();
        Ok(EmittedKernel {
            launch: LaunchDimensions::new(
                tiling.blocks,
                tiling.threads,
                tiling.shared_memory_bytes(&element_bytes),
            ),
            vector_factor: tiling.vector_size,
            thread_map: tiling.output_map.clone(),
            in_place: Vec::new(),
            layouts: tiling
                .layout
                .clone()
                .map(|layout| ThreadLayout {
                    what: "the input the block reads",
                    shape: layout.shape(),
                    layout,
                })
                .into_iter()
                .collect(),
        })
    }

    /// The epilogue function of every output that is not its hero itself.
    fn build_epilogues(
        &self,
        m: &mut ir::Module,
        num_params: usize,
    ) -> R<HashMap<InstrId, String>> {
        let part = &self.cx.partition;
        let mut hero_fns = HashMap::new();
        let mut hero_types = Vec::new();
        for (i, &h) in self.plan.heroes.iter().enumerate() {
            let sg = part
                .subgraph_rooted_at(h)
                .ok_or_else(|| internal(self.span, "a hero without a function"))?;
            let start = hero_types.len();
            hero_types.extend(&self.hero_types[i]);
            hero_fns.insert(
                self.cx.subgraph_functions[sg].clone(),
                start..hero_types.len(),
            );
        }
        let mut out = HashMap::new();
        for o in &self.plan.outputs {
            let OutputKind::Reduction { hero } = o.kind else {
                continue;
            };
            if o.root == self.plan.heroes[hero] || out.contains_key(&o.root) {
                continue;
            }
            let sg = part
                .subgraph_rooted_at(o.root)
                .ok_or_else(|| internal(self.span, "an output without a function"))?;
            let source = &self.cx.subgraph_functions[sg];
            let injected = epilogue::InjectedHeroes {
                functions: &hero_fns,
                types: &hero_types,
                read_at: None,
            };
            let name = epilogue::build(
                m,
                source,
                format!("{source}_epilogue"),
                num_params,
                &injected,
                self.instr(o.root).spans.whole,
            )?;
            out.insert(o.root, name);
        }
        Ok(out)
    }

    /// The values of `id` at `index` in `@main`: a parameter is read, a constant
    /// materialized, anything else called through its subgraph's function.
    fn provide(
        &self,
        b: &mut Builder<'_>,
        state: &State,
        id: InstrId,
        index: &[Value],
    ) -> R<Vec<Value>> {
        crate::kernel::provide(self.cx, b, &state.params, id, index)
    }

    /// Every hero's init values (`GetInits`).
    fn inits(&self, b: &mut Builder<'_>, state: &State) -> R<HeroValues> {
        let mut out = Vec::new();
        for (i, &h) in self.plan.heroes.iter().enumerate() {
            let arity = self.arity(i);
            let operands = self.instr(h).operands.clone();
            let mut values = Vec::new();
            for &init in &operands[arity..] {
                values.extend(self.provide(b, state, init, &[])?);
            }
            out.push(values);
        }
        Ok(out)
    }

    /// The per-thread loop (`EmitPerThreadElements`): the updated outputs (side outputs
    /// written) and every hero's partial values.
    fn per_thread_loop(
        &self,
        b: &mut Builder<'_>,
        state: &State,
        inits: &HeroValues,
        outs: &[Value],
    ) -> R<(Vec<Value>, HeroValues)> {
        let tiling = &self.plan.tiling;
        let vector = tiling.vector_symbol.filter(|_| tiling.vector_size > 1);
        let mut iter_inits = outs.to_vec();
        let mut starts = Vec::new();
        for values in inits {
            starts.push(iter_inits.len());
            for &v in values {
                iter_inits.push(match vector {
                    Some(_) => {
                        let ty = Type::vector(&[tiling.vector_size], b.module.value_type(v));
                        irvector::build_broadcast(b.module, b.insertion_point(), v, ty)
                    }
                    None => v,
                });
            }
        }
        let canonical = self.plan.canonical_input();
        let map = tiling.input_map.clone();
        let results = emit_loop(
            b,
            map,
            &[state.thread, state.block],
            &iter_inits,
            |b, ivs, index, iters| {
                let mut next = iters.to_vec();
                for (i, &h) in self.plan.heroes.iter().enumerate() {
                    let instr = self.instr(h);
                    let arity = self.arity(i);
                    let mut args = Vec::new();
                    for k in 0..arity {
                        let acc = iters[starts[i] + k];
                        args.push(match vector {
                            Some(s) => extract(b, acc, ivs[s]),
                            None => acc,
                        });
                    }
                    for k in 0..arity {
                        let operand = instr.operands[k];
                        let operand_index = self.bitcast_index(b, &canonical, index, operand);
                        args.extend(self.provide(b, state, operand, &operand_index)?);
                    }
                    let call = xla_gpu::build_pure_call(
                        b.module,
                        b.insertion_point(),
                        &self.reducers[i],
                        &args,
                        &self.hero_types[i],
                    );
                    let reduced: Vec<Value> = b.module.results(call).collect();
                    for (k, v) in reduced.into_iter().enumerate() {
                        let slot = starts[i] + k;
                        next[slot] = match vector {
                            Some(s) => insert(b, v, iters[slot], ivs[s]),
                            None => v,
                        };
                    }
                }
                for o in self
                    .plan
                    .outputs
                    .iter()
                    .filter(|o| o.kind == OutputKind::Side)
                {
                    let output_index = self.bitcast_index(b, &canonical, index, o.root);
                    let value = self.provide(b, state, o.root, &output_index)?[0];
                    let slot = o.first_tensor;
                    next[slot] = b.insert_element(value, next[slot], &output_index);
                }
                Ok(next)
            },
        )?;
        if let Some(op) = results.first().and_then(|&r| b.module.defining_op(r)) {
            // A thread's part of the input: its loads are independent of each other, and
            // unrolled (within `unroll-loops`' budget for requests) they are all issued
            // before the combiner calls that wait for them, at constant offsets from one
            // address. Left a loop, whether ptxas unrolls it depends on how LLVM happened to
            // write the address (a 32-bit index made ptxas keep the column sum's loop).
            b.module
                .set_attr(op, xla_gpu::UNROLL_ATTR, ir::Attribute::Unit);
        }
        let outputs = results[..outs.len()].to_vec();
        let partials = starts
            .iter()
            .enumerate()
            .map(|(i, &s)| results[s..s + self.arity(i)].to_vec())
            .collect();
        Ok((outputs, partials))
    }

    /// `xla_gpu.shuffle_reduce` of every hero's values. Vector values (a column kind's
    /// partials, one per column of the vector) are shuffled element by element, as the
    /// combiner takes scalars, and put back together.
    fn shuffle(&self, b: &mut Builder<'_>, values: &HeroValues, distance: i64) -> HeroValues {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let ty = b.module.value_type(v[0]);
                let Some(width) = ty.is_vector().then(|| ty.num_elements()).flatten() else {
                    return self.shuffle_scalars(b, i, v, distance);
                };
                let reduced: Vec<Vec<Value>> = (0..width)
                    .map(|k| {
                        let at = [Position::Static(k)];
                        let elements: Vec<Value> = v
                            .iter()
                            .map(|&x| {
                                irvector::build_extract(b.module, b.insertion_point(), x, &at)
                            })
                            .collect();
                        self.shuffle_scalars(b, i, &elements, distance)
                    })
                    .collect();
                v.iter()
                    .enumerate()
                    .map(|(o, &x)| {
                        let elements: Vec<Value> = reduced.iter().map(|r| r[o]).collect();
                        let ty = b.module.value_type(x);
                        irvector::build_from_elements(b.module, b.insertion_point(), ty, &elements)
                    })
                    .collect()
            })
            .collect()
    }

    /// `xla_gpu.shuffle_reduce` of hero `hero`'s scalar values.
    fn shuffle_scalars(
        &self,
        b: &mut Builder<'_>,
        hero: usize,
        values: &[Value],
        distance: i64,
    ) -> Vec<Value> {
        xla_gpu::build_shuffle_reduce(
            b.module,
            b.insertion_point(),
            &self.reducers[hero],
            values,
            distance,
        )
    }

    /// `ReduceViaSharedMemory`: the partials through shared tiles, a barrier, the reads of
    /// the threads that finish the reduction, a shuffle and the outputs' writes.
    fn reduce_via_shared_memory(
        &self,
        b: &mut Builder<'_>,
        state: &State,
        shared: &tiling::SharedStage,
        partials: &HeroValues,
        inits: &HeroValues,
        outputs: Vec<Value>,
    ) -> R<Vec<Value>> {
        // Shared memory holds `i2`/`i4` partials widened to bytes (the tile's threads write
        // neighbouring elements at once, which packed bytes would make races).
        let packed = |t: Type| t.bit_width().is_some_and(|w| w < 8 && w != 1);
        let stored = |t: Type| if packed(t) { Type::I8 } else { t };
        let mut tiles = Vec::new();
        for types in &self.hero_types {
            for &t in types {
                let ty = Type::tensor(&shared.tile_shape, stored(t));
                tiles.push(xla_gpu::build_allocate_shared(
                    b.module,
                    b.insertion_point(),
                    ty,
                ));
            }
        }
        let flat: Vec<Value> = partials.iter().flatten().copied().collect();
        let written = emit_loop(
            b,
            shared.write_map.clone(),
            &[state.thread],
            &tiles,
            |b, ivs, index, iters| {
                let mut next = Vec::new();
                for (&v, &tile) in flat.iter().zip(iters) {
                    let v = if b.module.value_type(v).is_vector() {
                        extract(b, v, *ivs.last().expect("a vector index"))
                    } else {
                        v
                    };
                    let t = b.module.value_type(v);
                    let v = if packed(t) {
                        b.cast(arith::EXTUI, v, Type::I8)
                    } else {
                        v
                    };
                    next.push(b.insert_element(v, tile, index));
                }
                Ok(next)
            },
        )?;
        let synced = xla_gpu::build_sync_threads(b.module, b.insertion_point(), &written);
        // Every thread runs the read loop, as every lane must take part in the shuffle: the
        // read map's constraints (and the thread range the simplifier narrowed with them)
        // only decide what a thread reads.
        let mut loop_map = shared.read_map.clone();
        loop_map.constraints.clear();
        loop_map.dims[0].bounds = Interval::new(0, self.plan.tiling.threads - 1);
        let read_map = shared.read_map.clone();
        let ranges = loop_map.dim_and_range_var_bounds();
        emit_loop(
            b,
            loop_map,
            &[state.thread],
            &outputs,
            |b, ivs, index, iters| {
                let cond = check_constraints(b, &read_map, &[state.thread], ivs, &ranges);
                let mut values = Vec::new();
                let mut tile = 0;
                for hero_inits in inits {
                    let mut v = Vec::new();
                    for &init in hero_inits {
                        let t = b.module.value_type(init);
                        let fallback = if packed(t) {
                            b.cast(arith::EXTUI, init, Type::I8)
                        } else {
                            init
                        };
                        let read = xla_gpu::build_predicated_extract(
                            b.module,
                            b.insertion_point(),
                            cond,
                            fallback,
                            synced[tile],
                            index,
                        );
                        v.push(if packed(t) {
                            b.cast(arith::TRUNCI, read, t)
                        } else {
                            read
                        });
                        tile += 1;
                    }
                    values.push(v);
                }
                let reduced = self.shuffle(b, &values, shared.max_distance);
                self.write_outputs(b, state, &reduced, iters.to_vec(), ivs, &ranges[1..])
            },
        )
    }

    /// `EvaluateEpilogue`: writes every reduction output where the output map's constraints
    /// hold for this thread (at `symbols`, the read loop's vector index for column kinds).
    fn write_outputs(
        &self,
        b: &mut Builder<'_>,
        state: &State,
        values: &HeroValues,
        mut outputs: Vec<Value>,
        symbols: &[Value],
        symbol_ranges: &[Interval],
    ) -> R<Vec<Value>> {
        let c = self.cx.fusion;
        let output_map = &self.plan.tiling.output_map;
        let grid = [state.thread, state.block];
        let tiling = &self.plan.tiling;
        let mut ranges = vec![
            Interval::new(0, tiling.threads - 1),
            Interval::new(0, tiling.blocks - 1),
        ];
        ranges.extend_from_slice(symbol_ranges);
        let cond = check_constraints(b, output_map, &grid, symbols, &ranges);
        let canonical_out = self.plan.dimensions.output_shape();
        let canonical_out = ArrayShape::new(hlo::PrimitiveType::F32, canonical_out);
        let projected = apply_map(b, output_map, &grid, symbols);
        let all_hero_values: Vec<Value> = values.iter().flatten().copied().collect();
        for o in &self.plan.outputs {
            let OutputKind::Reduction { hero } = o.kind else {
                continue;
            };
            let h = self.plan.heroes[hero];
            let instr = self.instr(h);
            let operand = self
                .instr(instr.operands[0])
                .shape
                .as_array()
                .expect("checked");
            let reduced = instr.int_list("dimensions").unwrap_or(&[]);
            let physical = kept_physical_shape(operand, reduced);
            let to_output = bitcast_map(&canonical_out, &physical).ok_or_else(|| {
                internal(self.span, "the output is not a bitcast of the kept dims")
            })?;
            let index = apply_map(b, &to_output, &projected, &[]);
            let count = leaves(&c.instruction(o.root).shape).len();
            let slots = o.first_tensor..o.first_tensor + count;
            match state.epilogues.get(&o.root) {
                None => {
                    for (slot, &v) in slots.zip(&values[hero]) {
                        outputs[slot] = xla_gpu::build_predicated_insert(
                            b.module,
                            b.insertion_point(),
                            cond,
                            v,
                            outputs[slot],
                            &index,
                        );
                    }
                }
                Some(name) => {
                    let types = crate::types::leaf_element_types(&c.instruction(o.root).shape)
                        .map_err(|e| unsupported(self.span, e))?;
                    let mut args = state.params.clone();
                    args.extend(&index);
                    args.extend(&all_hero_values);
                    let current: Vec<Value> = outputs[slots.clone()].to_vec();
                    let tensor_types: Vec<Type> =
                        current.iter().map(|&t| b.module.value_type(t)).collect();
                    let keep = current.clone();
                    let name = name.clone();
                    let op = b.scf_if(
                        cond,
                        &tensor_types,
                        |b| {
                            let call = xla_gpu::build_pure_call(
                                b.module,
                                b.insertion_point(),
                                &name,
                                &args,
                                &types,
                            );
                            let results: Vec<Value> = b.module.results(call).collect();
                            results
                                .iter()
                                .zip(&current)
                                .map(|(&v, &t)| b.insert_element(v, t, &index))
                                .collect()
                        },
                        Some(Box::new(move |_: &mut Builder<'_>| keep)),
                    );
                    for (slot, v) in slots.zip(b.module.results(op)) {
                        outputs[slot] = v;
                    }
                }
            }
        }
        Ok(outputs)
    }
}

/// What `@main` holds while it is emitted.
struct State {
    params: Vec<Value>,
    thread: Value,
    block: Value,
    /// Epilogue function per output that has one.
    epilogues: HashMap<InstrId, String>,
}

fn internal(span: Span, what: &str) -> Diagnostic {
    Diagnostic::new(span, format!("internal error: {what}"))
}

fn extract(b: &mut Builder<'_>, vector: Value, at: Value) -> Value {
    irvector::build_extract(
        b.module,
        b.insertion_point(),
        vector,
        &[Position::Dynamic(at)],
    )
}

fn insert(b: &mut Builder<'_>, value: Value, vector: Value, at: Value) -> Value {
    irvector::build_insert(
        b.module,
        b.insertion_point(),
        value,
        vector,
        &[Position::Dynamic(at)],
    )
}

/// The map's results at (`dims`, `symbols`), without its constraints.
pub(crate) fn apply_map(
    b: &mut Builder<'_>,
    map: &IndexingMap,
    dims: &[Value],
    symbols: &[Value],
) -> Vec<Value> {
    map.results
        .iter()
        .map(|e| match e {
            AffineExpr::Dim(i) => dims[*i],
            AffineExpr::Symbol(i) => symbols[*i],
            AffineExpr::Constant(c) => b.index(*c),
            _ => {
                let mut single = map.clone();
                single.results = vec![e.clone()];
                single.constraints.clear();
                xla_gpu::build_apply_indexing(b.module, b.insertion_point(), single, dims, symbols)
                    [0]
            }
        })
        .collect()
}

/// Whether (`dims`, `symbols`) lies in the domain of `map`, as an `i1` (XLA's
/// `CheckConstraints`): every constraint, and every variable whose range in the map is
/// narrower than the range of the value bound to it (`ranges`: dims, then symbols) — the
/// simplifier turns constraints like `th_x mod 32 in [0, 0]` on a 32-thread block into
/// such ranges. `true` when nothing needs checking.
pub(crate) fn check_constraints(
    b: &mut Builder<'_>,
    map: &IndexingMap,
    dims: &[Value],
    symbols: &[Value],
    ranges: &[Interval],
) -> Value {
    let mut checks = Vec::new();
    let mut bound = |b: &mut Builder<'_>, v: Value, range: Interval, bounds: Interval| {
        if range.lo < bounds.lo {
            let lo = b.index(bounds.lo);
            checks.push(b.cmpi("sge", v, lo));
        }
        if range.hi > bounds.hi {
            let hi = b.index(bounds.hi);
            checks.push(b.cmpi("sle", v, hi));
        }
    };
    let vars = map.dims.iter().chain(&map.range_vars);
    for ((var, &v), &range) in vars.zip(dims.iter().chain(symbols)).zip(ranges) {
        bound(b, v, range, var.bounds);
    }
    let mut free = map.clone();
    free.constraints.clear();
    for (e, bounds) in &map.constraints {
        let range = free.range_of(e);
        let mut single = free.clone();
        single.results = vec![e.clone()];
        let v = apply_map(b, &single, dims, symbols)[0];
        bound(b, v, range, *bounds);
    }
    let mut cond: Option<Value> = None;
    for check in checks {
        cond = Some(match cond {
            Some(acc) => b.binary(arith::ANDI, acc, check),
            None => check,
        });
    }
    cond.unwrap_or_else(|| b.int(1, Type::I1))
}
