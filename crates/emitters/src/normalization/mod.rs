//! The row-normalization emitter: fusions that reduce each row and then use the row's
//! results elementwise on the same row — softmax, layer norm, RMS norm — in one kernel.
//!
//! XLA's classic emitters split such a computation into a kernel per reduction and one for
//! the normalization, each reading the input again from memory (three reads of `x` for
//! softmax); XLA itself now hands these fusions to its Triton "softmax" emitter, which keeps
//! a row per program. This emitter does what that one does, in our IR: **one block per
//! row**, the row read through the L1 cache by the block that owns it.
//!
//! Which fusions (`RowNormalization::analyze`): every output has the same shape `[.., n]`
//! in row-major layout; every reduce reduces the last (most minor) dimension of an operand
//! of that shape; whatever depends on a reduce is elementwise, on rows (`[..]`) or on
//! elements, or a broadcast of a row value along the last dimension — so each element needs
//! the reduced values of its own row only. Anything else goes to the other emitters.
//!
//! The kernel, for `L` threads per row, `V` elements per vector access and `J` accesses per
//! thread (`(th_x, bl_x)[j, v] -> (row(bl_x).., (j * L + th_x) * V + v)`):
//!
//! 1. for each reduce in dependency order: an `xla_gpu.loop` folds the thread's elements of
//!    the reduce's operand (computed by its function, with the rows' earlier reduced values
//!    passed in instead of calls that would recompute them), `xla_gpu.shuffle_reduce` folds
//!    the warp's lanes, lane 0 of each warp writes a shared tile, and after
//!    `xla_gpu.sync_threads` every thread folds the tile's `L / 32` partials in the same
//!    order, or from 8 warps lane `l` of every warp reads partial `l mod (L / 32)` and a
//!    second shuffle folds them (every lane pairs the same values in the same order) — so
//!    every thread holds the row's value, the same bits in each;
//! 2. an `xla_gpu.loop` over the same elements computes each output from the reduced
//!    values (the output's function, built the same way) and writes it.
//!
//! Each reduce has a tile of its own, so one barrier per reduce suffices. The second and
//! later reads of a row hit the L1 cache or L2 (a row of 4096 `f32` is 16 KiB), so memory
//! traffic is one read of each input and one write of each output, as a copy's.

use ir::dialects::gpu;
use std::collections::{HashMap, HashSet};

use hlo::{ArrayShape, Computation, Diagnostic, InstrId, Layout, Opcode, Span};
use indexing::nested_layout::NestedLayout;
use indexing::{IndexingMap, Interval, Variable, cst, delinearize, dim, sym};
use ir::dialects::xla_gpu;
use ir::{Builder, Type, Value};

use crate::analysis::{FusionAnalysis, fusion_roots};
use crate::elemental::FusionContext;
use crate::kernel::{KernelEntry, emit_loop, kernel_entry, special_register};
use crate::partition::PartitionedComputation;
use crate::reduction::epilogue::{self, InjectedHeroes};
use crate::reduction::{apply_map, is_elementwise};
use crate::types::leaves;
use crate::unsupported;
use crate::{EmittedKernel, EmitterKind, FusionEmitter, LaunchDimensions};

/// The 32-bit registers a thread aims to fill with each input's elements: 16, as the
/// Triton tutorial's softmax has at rows of 4096 over 8 warps. Enough loads in flight a
/// thread to keep memory busy, few enough that a row spreads over many warps: 4 accesses of
/// 4 f32 (or 2 f64), 2 of 8 bf16, 1 of 16 8-bit elements. (4 accesses whatever the type
/// left bf16 softmax 32 elements a thread, 48 registers, 62% occupancy; now 32, 100%.)
const REGISTERS_PER_INPUT: i64 = 16;
/// The 32-bit registers a thread aims to fill with the elements of all the inputs it reads
/// at each element ([`per_element_inputs`]): fewer elements a thread, and more threads a
/// row, where they would exceed it. ptxas issues every load of the output stage at once
/// (layer norm's `gamma` and `beta` beside the centred row), so a thread's registers grow
/// with this sum: at 16 f32 elements layer norm (48 values) took 44 registers, 62%
/// occupancy, and a bf16 layer norm (96) 71, 43%; at 32 values or fewer both take 32
/// registers or fewer, and softmax (16 values) and RMS norm (32) keep 16 elements.
/// Memory stays as busy: an SM holds more threads, each with fewer loads in flight.
const ROW_REGISTERS_PER_THREAD: i64 = 32;
/// The warps of a row from which their partials are folded by a shuffle rather than by
/// every thread in order ([`Emitter::across_warps`]). Below 8 folding in order takes fewer
/// instructions (softmax rows of 1024, 2 warps: 273 instead of 278); at 8 both take 9, but
/// the two 128-bit reads of the partials hold 8 registers while the row is live (bf16 RMS
/// norm of rows of 4096: 39 registers instead of 32).
const SHUFFLE_ACROSS_WARPS_FROM: i64 = 8;
/// The bytes of one vector access: 128 bits.
const VECTOR_BYTES: i64 = 16;
/// The most elements of a row a thread keeps in registers (per input), so that its loops,
/// fully unrolled, read each element once and compute what they share once (softmax's
/// `exp`): 64 registers of 32 bits, a quarter of what a thread may have at full occupancy
/// of 256-thread blocks.
const ROW_ELEMENTS_IN_REGISTERS: i64 = 64;

/// The analysis: the reduces in dependency order and the launch shape.
#[derive(Clone, Debug)]
pub struct RowNormalization {
    heroes: Vec<InstrId>,
    /// The reduces and everything computed from them: what needs the rows' reduced values.
    dependent: HashSet<InstrId>,
    /// The shape of every output and every reduce operand.
    shape: ArrayShape,
    rows: i64,
    threads: i64,
    vector: i64,
    accesses: i64,
}

impl RowNormalization {
    /// The analysis of `c`, or `None` when it is not a row normalization (module
    /// documentation).
    pub fn analyze(analysis: &FusionAnalysis) -> Option<RowNormalization> {
        let c = analysis.computation;
        let roots = &analysis.roots;
        let shape = c.instruction(*roots.first()?).shape.as_array()?.clone();
        let rank = shape.rank();
        let is_full = |a: &ArrayShape| {
            a.dims == shape.dims && a.layout_or_default() == Layout::row_major(rank)
        };
        if rank == 0 || !is_full(&shape) {
            return None;
        }
        for &r in roots {
            if !is_full(c.instruction(r).shape.as_array()?) {
                return None;
            }
        }
        let graph = &analysis.graph;
        let order = graph.post_order();
        let heroes: Vec<InstrId> = order
            .iter()
            .copied()
            .filter(|&id| c.instruction(id).opcode == Opcode::Reduce)
            .collect();
        if heroes.is_empty() {
            return None;
        }
        let row_dims = &shape.dims[..rank - 1];
        for &h in &heroes {
            let instr = c.instruction(h);
            let operand = c.instruction(instr.operands[0]).shape.as_array()?;
            let rows_shape = instr.shape.as_array()?;
            let reduces_the_row = instr.int_list("dimensions") == Some(&[rank as i64 - 1][..]);
            if instr.operands.len() != 2
                || !reduces_the_row
                || !is_full(operand)
                || rows_shape.dims != row_dims
                || roots.contains(&h)
            {
                return None;
            }
        }
        // Everything downstream of a reduce reads only its own row's values.
        let mut dependent: HashSet<InstrId> = heroes.iter().copied().collect();
        for &id in &order {
            let instr = c.instruction(id);
            if heroes.contains(&id) || !instr.operands.iter().any(|o| dependent.contains(o)) {
                continue;
            }
            dependent.insert(id);
            let dims = instr.shape.as_array().map(|a| a.dims.as_slice());
            let row_broadcast = instr.opcode == Opcode::Broadcast
                && dims == Some(&shape.dims[..])
                && instr
                    .int_list("dimensions")
                    .is_some_and(|d| d.iter().copied().eq(0..rank as i64 - 1));
            let elementwise = is_elementwise(instr.opcode)
                && (dims == Some(row_dims) || dims == Some(&shape.dims[..]));
            let the_tuple_root = instr.opcode == Opcode::Tuple && id == c.root;
            if !(row_broadcast || elementwise || the_tuple_root) {
                return None;
            }
        }
        let rows = row_dims.iter().product::<i64>();
        if rows as u64 > crate::Target::MAX_GRID_X {
            return None;
        }
        let n = shape.dims[rank - 1];
        let widest_bytes = c
            .parameters()
            .into_iter()
            .filter_map(|p| c.instruction(p).shape.as_array())
            .filter(|a| is_full(a))
            .chain(
                roots
                    .iter()
                    .filter_map(|&r| c.instruction(r).shape.as_array()),
            )
            .map(|a| (i64::from(a.element_type.bit_width()) + 7) / 8)
            .max()
            .unwrap_or(4)
            .max(1);
        let mut vector = (VECTOR_BYTES / widest_bytes).max(1);
        while n % vector != 0 {
            vector /= 2;
        }
        let lanes = n / vector;
        let inputs = per_element_inputs(c, roots, rank);
        let registers_per_element = (widest_bytes + 3) / 4;
        let mut elements = REGISTERS_PER_INPUT / registers_per_element;
        while elements > vector
            && elements * registers_per_element * inputs > ROW_REGISTERS_PER_THREAD
        {
            elements /= 2;
        }
        let aimed_accesses = (elements / vector).max(1);
        let threads = prev_power_of_two(lanes / aimed_accesses).clamp(
            crate::Target::WARP_SIZE,
            crate::Target::MAX_THREADS_PER_BLOCK,
        );
        Some(RowNormalization {
            heroes,
            dependent,
            shape,
            rows,
            threads,
            vector,
            accesses: (lanes + threads - 1) / threads,
        })
    }

    /// `(th_x, bl_x)[j, v] -> (row.., (j * threads + th_x) * vector + v)`, constrained to
    /// the row when the threads' accesses overshoot it.
    fn element_map(&self) -> IndexingMap {
        let rank = self.shape.rank();
        let mut results = delinearize(dim(1), &self.shape.dims[..rank - 1]);
        let lane = sym(0) * self.threads + dim(0);
        results.push(lane.clone() * self.vector + sym(1));
        let mut map = IndexingMap::new(
            vec![
                Variable::new("th_x", Interval::new(0, self.threads - 1)),
                Variable::new("bl_x", Interval::new(0, self.rows - 1)),
            ],
            vec![
                Variable::new("j", Interval::new(0, self.accesses - 1)),
                Variable::new("vector_index", Interval::new(0, self.vector - 1)),
            ],
            Vec::new(),
            results,
        );
        let lanes = self.shape.dims[rank - 1] / self.vector;
        if self.accesses * self.threads > lanes {
            map.add_constraint(lane, Interval::new(0, lanes - 1));
        }
        map.simplified()
    }

    fn warps(&self) -> i64 {
        self.threads / crate::Target::WARP_SIZE
    }

    /// Marks the loop that computed `result` to be unrolled fully when a thread's part of
    /// the row fits in registers ([`ROW_ELEMENTS_IN_REGISTERS`]): every loop over the row
    /// then reads the same elements at the same indices, which CSE merges into one read of
    /// the row (and one `exp` of each element for softmax) instead of one per loop.
    fn mark_unrolled(&self, m: &mut ir::Module, result: Value) {
        if self.accesses * self.vector <= ROW_ELEMENTS_IN_REGISTERS
            && let Some(op) = m.defining_op(result)
        {
            m.set_attr(op, xla_gpu::UNROLL_ATTR, ir::Attribute::Unit);
        }
    }

    /// The block's row as a nested layout (seed 004): the row seen as `J x (L·V)` (`J`
    /// accesses of the `L` threads' `V`-element vectors, padded to whole accesses), the
    /// accesses a batch along the first dimension, the warps the subgroups and their lanes
    /// the threads along the second, each lane's vector its elements: element `(j, (w · 32 +
    /// lane) · V + v)` is the row's `(j · L + th_x) · V + v`, [`Self::element_map`]'s.
    fn thread_layout(&self) -> crate::ThreadLayout {
        let layout = NestedLayout {
            subgroup_tile: vec![1, self.warps()],
            batch_tile: vec![self.accesses, 1],
            outer_tile: vec![1, 1],
            thread_tile: vec![1, crate::Target::WARP_SIZE],
            element_tile: vec![1, self.vector],
            subgroup_strides: vec![0, 1],
            thread_strides: vec![0, 1],
        };
        crate::ThreadLayout {
            what: "the row (accesses x threads' vectors)",
            shape: layout.shape(),
            layout,
        }
    }
}

/// The parameters the outputs read at their own element, not through a reduce nor as a row's
/// value broadcast along the row (at least one): `x` for softmax, `x`, `gamma` and `beta`
/// for layer norm. A thread holds each of them at each of its elements in the output stage.
fn per_element_inputs(c: &Computation, roots: &[InstrId], rank: usize) -> i64 {
    let mut seen = HashSet::new();
    let mut stack: Vec<InstrId> = roots.to_vec();
    let mut count = 0;
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let instr = c.instruction(id);
        let full_rank = instr.shape.as_array().is_some_and(|a| a.rank() == rank);
        match instr.opcode {
            Opcode::Parameter => count += 1,
            // Read in the reduction stage; the output stage reads the row's value.
            Opcode::Reduce => {}
            // A row's value (or a scalar) repeated along the row.
            Opcode::Broadcast
                if full_rank
                    && !instr
                        .int_list("dimensions")
                        .is_some_and(|d| d.contains(&(rank as i64 - 1))) => {}
            _ => stack.extend(instr.operands.iter().copied()),
        }
    }
    count.max(1)
}

fn prev_power_of_two(n: i64) -> i64 {
    if n < 1 {
        1
    } else {
        1 << (63 - n.leading_zeros())
    }
}

impl FusionEmitter for RowNormalization {
    fn kind(&self) -> EmitterKind {
        EmitterKind::RowNormalization
    }

    fn heroes(&self) -> &[InstrId] {
        &self.heroes
    }

    /// Each reduce, each reduce operand and each output roots a function.
    fn partition(&self, analysis: &FusionAnalysis) -> Result<PartitionedComputation, Diagnostic> {
        let c = analysis.computation;
        let mut roots = self.heroes.clone();
        for &h in &self.heroes {
            roots.extend(c.instruction(h).operands.iter().copied());
        }
        PartitionedComputation::with_output_roots(analysis, |id| roots.contains(&id))
    }

    fn emit_entry(
        &self,
        cx: &FusionContext<'_>,
        m: &mut ir::Module,
    ) -> Result<EmittedKernel, Diagnostic> {
        let kernel = Emitter::new(cx, self)?.emit_main(m)?;
        crate::epilogue::erase_unused_functions(m);
        Ok(kernel)
    }
}

struct Emitter<'a> {
    cx: &'a FusionContext<'a>,
    plan: &'a RowNormalization,
    span: Span,
    /// Each reduce's element type and reducer function.
    types: Vec<Type>,
    reducers: Vec<String>,
    /// Each reduce's function name, with its position among the reduced values.
    hero_functions: Vec<(String, usize)>,
}

impl<'a> Emitter<'a> {
    fn new(
        cx: &'a FusionContext<'a>,
        plan: &'a RowNormalization,
    ) -> Result<Emitter<'a>, Diagnostic> {
        let c = cx.fusion;
        let span = c.root_instruction().spans.whole;
        let mut types = Vec::new();
        let mut reducers = Vec::new();
        let mut hero_functions = Vec::new();
        for (k, &h) in plan.heroes.iter().enumerate() {
            let instr = c.instruction(h);
            let ty = crate::types::leaf_element_types(&instr.shape)
                .map_err(|e| unsupported(instr.spans.whole, e))?[0];
            types.push(ty);
            let called = instr
                .called("to_apply")
                .ok_or_else(|| unsupported(instr.spans.whole, "a reduce without to_apply"))?;
            reducers.push(cx.scalar_functions[&called.id].clone());
            let sg = cx
                .partition
                .subgraph_rooted_at(h)
                .ok_or_else(|| internal(span, "a reduce without a function"))?;
            hero_functions.push((cx.subgraph_functions[sg].clone(), k));
        }
        Ok(Emitter {
            cx,
            plan,
            span,
            types,
            reducers,
            hero_functions,
        })
    }

    fn emit_main(&self, m: &mut ir::Module) -> Result<EmittedKernel, Diagnostic> {
        let c = self.cx.fusion;
        let roots = fusion_roots(c);
        let output_shapes = leaves(&c.root_instruction().shape);
        let KernelEntry {
            entry,
            params,
            outs,
            ..
        } = kernel_entry(m, c, &output_shapes, self.span)?;
        let num_params = params.len();
        // The functions that compute each reduce's operand and each output from the rows'
        // reduced values, built before the body so that `m` is free to borrow.
        let mut operand_functions = Vec::new();
        for k in 0..self.plan.heroes.len() {
            let operand = c.instruction(self.plan.heroes[k]).operands[0];
            operand_functions.push(self.with_reduced_values(m, operand, k, num_params)?);
        }
        let mut output_functions = Vec::new();
        for &r in &roots {
            output_functions.push(self.with_reduced_values(
                m,
                r,
                self.plan.heroes.len(),
                num_params,
            )?);
        }

        let plan = self.plan;
        let mut b = Builder::at_end(m, entry);
        let thread = special_register(&mut b, gpu::THREAD_ID, "x", plan.threads as u64);
        let block = special_register(&mut b, gpu::BLOCK_ID, "x", plan.rows as u64);
        let grid = [thread, block];
        let map = plan.element_map();

        let mut reduced: Vec<Value> = Vec::new();
        for (k, &h) in plan.heroes.iter().enumerate() {
            let instr = c.instruction(h);
            let init = crate::kernel::provide(self.cx, &mut b, &params, instr.operands[1], &[])?[0];
            let ty = self.types[k];
            let reducer = &self.reducers[k];
            let operand = instr.operands[0];
            let function = &operand_functions[k];
            let done = reduced.clone();
            let partial = emit_loop(&mut b, map.clone(), &grid, &[init], |b, _, index, iters| {
                let with = function.as_deref().map(|f| (f, done.as_slice()));
                let value = self.value_at(b, &params, operand, index, with, ty)?;
                Ok(vec![self.combine(b, k, iters[0], value)])
            })?[0];
            plan.mark_unrolled(b.module, partial);
            let warp_value = xla_gpu::build_shuffle_reduce(
                b.module,
                b.insertion_point(),
                reducer,
                &[partial],
                crate::Target::WARP_SIZE / 2,
            )[0];
            reduced.push(self.across_warps(&mut b, k, thread, warp_value)?);
        }

        let written = emit_loop(&mut b, map.clone(), &grid, &outs, |b, _, index, iters| {
            let mut next = Vec::with_capacity(iters.len());
            for (slot, (&r, function)) in roots.iter().zip(&output_functions).enumerate() {
                let ty = self.element_type(r)?;
                let with = function.as_deref().map(|f| (f, reduced.as_slice()));
                let value = self.value_at(b, &params, r, index, with, ty)?;
                next.push(b.insert_element(value, iters[slot], index));
            }
            Ok(next)
        })?;
        plan.mark_unrolled(b.module, written[0]);
        b.ret(&written);

        let element_bytes: i64 = self
            .types
            .iter()
            .map(|&t| crate::types::element_bytes(t))
            .sum();
        Ok(EmittedKernel {
            launch: LaunchDimensions::new(plan.rows, plan.threads, element_bytes * plan.warps()),
            vector_factor: plan.vector,
            thread_map: map,
            in_place: Vec::new(),
            layouts: vec![plan.thread_layout()],
        })
    }

    /// The value of `id` (of element type `ty`) at `index`: `with` a function that takes
    /// the rows' reduced values so far and those values (see
    /// [`Emitter::with_reduced_values`]), or read or called as it is when it depends on no
    /// reduce.
    fn value_at(
        &self,
        b: &mut Builder<'_>,
        params: &[Value],
        id: InstrId,
        index: &[Value],
        with: Option<(&str, &[Value])>,
        ty: Type,
    ) -> Result<Value, Diagnostic> {
        let Some((name, reduced)) = with else {
            return Ok(crate::kernel::provide(self.cx, b, params, id, index)?[0]);
        };
        let mut args = params.to_vec();
        args.extend_from_slice(index);
        args.extend_from_slice(reduced);
        let call = xla_gpu::build_pure_call(b.module, b.insertion_point(), name, &args, &[ty]);
        Ok(b.module.result(call, 0))
    }

    fn element_type(&self, id: InstrId) -> Result<Type, Diagnostic> {
        let instr = self.cx.fusion.instruction(id);
        Ok(crate::types::leaf_element_types(&instr.shape)
            .map_err(|e| unsupported(instr.spans.whole, e))?[0])
    }

    /// `reducer_k(acc, value)`.
    fn combine(&self, b: &mut Builder<'_>, k: usize, acc: Value, value: Value) -> Value {
        let call = xla_gpu::build_pure_call(
            b.module,
            b.insertion_point(),
            &self.reducers[k],
            &[acc, value],
            &[self.types[k]],
        );
        b.module.result(call, 0)
    }

    /// The row's value from each warp's (in lane 0): a shared tile of one entry per warp, a
    /// barrier, then every thread folds the entries in order, or, from
    /// [`SHUFFLE_ACROSS_WARPS_FROM`] warps, lane `l` of every warp reads entry `l mod warps`
    /// and a shuffle over distances `warps / 2 .. 1` folds them. The shuffles exchange within
    /// groups of `warps` lanes (`xor`), so every lane combines the same pairs in the same
    /// order: either way every thread holds the same bits. Folding in order takes `warps / 4`
    /// 128-bit reads and `warps - 1` combines, the shuffle one read, an index and
    /// `log2(warps)` shuffles and combines: 9 instructions each at 8 warps, 19 against 11 at
    /// 16, 39 against 13 at 32.
    fn across_warps(
        &self,
        b: &mut Builder<'_>,
        k: usize,
        thread: Value,
        warp_value: Value,
    ) -> Result<Value, Diagnostic> {
        let warps = self.plan.warps();
        let threads = Variable::new("th_x", Interval::new(0, self.plan.threads - 1));
        let tile_type = Type::tensor(&[warps], self.types[k]);
        let tile = xla_gpu::build_allocate_shared(b.module, b.insertion_point(), tile_type);
        let mut write_map = IndexingMap::new(
            vec![threads.clone()],
            Vec::new(),
            Vec::new(),
            vec![dim(0).floor_div(crate::Target::WARP_SIZE)],
        );
        write_map.add_constraint(dim(0).modulo(crate::Target::WARP_SIZE), Interval::new(0, 0));
        let written = emit_loop(
            b,
            write_map.simplified(),
            &[thread],
            &[tile],
            |b, _, index, iters| Ok(vec![b.insert_element(warp_value, iters[0], index)]),
        )?[0];
        let synced = xla_gpu::build_sync_threads(b.module, b.insertion_point(), &[written])[0];
        if warps < SHUFFLE_ACROSS_WARPS_FROM {
            let zero = b.index(0);
            let first = b.extract(synced, &[zero]);
            if warps == 1 {
                return Ok(first);
            }
            let read_map = IndexingMap::new(
                vec![threads],
                vec![Variable::new("warp", Interval::new(0, warps - 2))],
                Vec::new(),
                vec![sym(0) + cst(1)],
            );
            return Ok(
                emit_loop(b, read_map, &[thread], &[first], |b, _, index, iters| {
                    let entry = b.extract(synced, index);
                    Ok(vec![self.combine(b, k, iters[0], entry)])
                })?[0],
            );
        }
        let read_map = IndexingMap::new(
            vec![threads],
            Vec::new(),
            Vec::new(),
            vec![dim(0).modulo(warps)],
        )
        .simplified();
        let index = apply_map(b, &read_map, &[thread], &[]);
        let entry = b.extract(synced, &index);
        Ok(xla_gpu::build_shuffle_reduce(
            b.module,
            b.insertion_point(),
            &self.reducers[k],
            &[entry],
            warps / 2,
        )[0])
    }

    /// The function that computes `id` at an element from the rows' first `known` reduced
    /// values (passed in place of calls to the reduces' functions), or `None` when `id`'s
    /// value depends on no reduce (it is then read or called as it is).
    fn with_reduced_values(
        &self,
        m: &mut ir::Module,
        id: InstrId,
        known: usize,
        num_params: usize,
    ) -> Result<Option<String>, Diagnostic> {
        let c = self.cx.fusion;
        if !self.plan.dependent.contains(&id) {
            return Ok(None);
        }
        let sg = self
            .cx
            .partition
            .subgraph_rooted_at(id)
            .ok_or_else(|| internal(self.span, "a reduce operand without a function"))?;
        let source = &self.cx.subgraph_functions[sg];
        let functions: HashMap<String, std::ops::Range<usize>> = self.hero_functions[..known]
            .iter()
            .map(|(name, k)| (name.clone(), *k..*k + 1))
            .collect();
        let injected = InjectedHeroes {
            functions: &functions,
            types: &self.types[..known],
            read_at: Some(self.plan.shape.rank() - 1),
        };
        let name = format!("{source}_of_rows{known}");
        epilogue::build(
            m,
            source,
            name,
            num_params,
            &injected,
            c.instruction(id).spans.whole,
        )
        .map(Some)
    }
}

fn internal(span: Span, what: &str) -> Diagnostic {
    Diagnostic::new(span, format!("internal error: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout's map is the emitter's: at every thread, access and vector position of
    /// a row, the layout's element of the `J x (L·V)` tile, linearized, is the row element
    /// the emitter reads (where the emitter's map reaches: the last access may overshoot
    /// the row).
    #[test]
    fn the_layout_is_the_element_map() {
        for (n, threads, vector) in [(4096, 256, 4), (1000, 32, 8), (96, 32, 2), (8192, 1024, 4)] {
            let lanes = n / vector;
            let plan = RowNormalization {
                heroes: Vec::new(),
                dependent: HashSet::new(),
                shape: ArrayShape::new(hlo::PrimitiveType::F32, vec![3, n]),
                rows: 3,
                threads,
                vector,
                accesses: (lanes + threads - 1) / threads,
            };
            let t = plan.thread_layout();
            t.layout
                .verify(Some(&t.shape), Some(crate::Target::WARP_SIZE))
                .unwrap();
            let (layout_map, element_map) = (t.layout.to_indexing_map(), plan.element_map());
            let width = t.shape[1];
            for th in 0..threads {
                for j in 0..plan.accesses {
                    for v in 0..vector {
                        let (lane, warp) =
                            (th % crate::Target::WARP_SIZE, th / crate::Target::WARP_SIZE);
                        let at = [j, 0, 0, 0, 0, v];
                        let tile = layout_map.eval(&[lane, warp], &at);
                        if element_map.contains(&[th, 1], &[j, v]) {
                            let row = element_map.eval(&[th, 1], &[j, v]);
                            assert_eq!(row[0], 1);
                            assert_eq!(tile[0] * width + tile[1], row[1], "{n}: {th} {j} {v}");
                        }
                    }
                }
            }
        }
    }
}
