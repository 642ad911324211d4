//! The sort emitter (XLA's sort kernels): the fusion's ROOT is a `sort`; each block sorts
//! one row (the elements along the sorted dimension, every other coordinate fixed) in
//! shared memory with a bitonic network.
//!
//! The kernel `@main`, for a row of `n` elements padded to `N = 2^L` and `T` threads
//! (`N / 2`, at least a warp, at most 1024):
//!
//! 1. **Load.** An `xla_gpu.loop` over the block's threads reads the row of every operand
//!    (through its subgraph function: producers fused into the sort are computed here) into
//!    a shared tile of `n` elements, and each element's position into a tile of `i32`.
//! 2. **Network.** `scf.for` over the stages `s < L`, and within a stage over its steps
//!    `j = s, s - 1, ..., 0`; in each step every thread takes pairs `p = q * T + tid`
//!    (`q < ceil(N / 2T)`): `lo` is `p` with a 0 bit inserted at bit `j`, and `hi` is `lo`
//!    with its low `j + 1` bits flipped in a stage's first step (which merges two sorted
//!    halves in opposite order) and `lo + 2^j` in the others. When `hi < n` the pair is
//!    compared and swapped so that the earlier element goes to `lo`; positions at or past
//!    `n` stand for elements after every other and are never touched, so `n` need not be a
//!    power of two. `xla_gpu.sync_threads` ends every step.
//! 3. **Store.** The same loop as the load writes the tiles to the outputs.
//!
//! The comparator (`to_apply`, a function of the kernel module called per pair with each
//! operand's two elements) says whether its first element goes first. The network compares
//! `less(hi, lo)`, and on a tie (neither before the other) the positions: the sort is
//! **stable** whether or not the HLO asks (`is_stable`), as the evaluator's reference sort
//! is; XLA's `StableSortExpander` breaks ties the same way.
//!
//! A row whose tiles do not fit a block's 48 KiB of shared memory is not this emitter's
//! alone: a sort with a plain comparator (one operand, or keys and values, sorted along the
//! last dimension) is left to CUB's radix sort by `sort-rewriter`, as XLA's SortRewriter
//! leaves it; any other becomes `split-long-sorts`' chain of kernels (tiles sorted here, merge
//! steps across the row as loop kernels, the tiles sorted again here: rows claimed bitonic,
//! `sorts_bitonic_rows`, run only the network's last stage). What neither takes (a fusion
//! written by hand around a long sort) is refused.

use hlo::{ArrayShape, Diagnostic, InstrId, Opcode};
use indexing::{IndexingMap, Interval, Variable, delinearize, dim, sym};
use ir::dialects::{arith, scf, xla_gpu};
use ir::{Builder, Type, Value};

use crate::analysis::FusionAnalysis;
use crate::elemental::FusionContext;
use crate::kernel::{KernelEntry, emit_loop, kernel_entry, provide, thread_and_block_ids};
use crate::types::{element_type, leaves};
use crate::{EmittedKernel, EmitterKind, FusionEmitter, LaunchDimensions, Target, unsupported};

type R<T> = Result<T, Diagnostic>;

/// The fewest threads a sort block has (a warp).
const MIN_THREADS: i64 = Target::WARP_SIZE;

/// How a sort fusion is launched: one block per row.
pub struct SortFusion {
    hero: [InstrId; 1],
    /// The sorted dimension.
    dimension: usize,
    /// The operands' shape (all have these dimensions).
    dims: Vec<i64>,
    /// Elements per row, and their number rounded up to a power of two.
    n: i64,
    padded: i64,
    /// Elements of each row stored: all of them (a sort), or the first `k` (a top-k).
    kept: i64,
    /// How many tiles the comparator reads, from the first: the operands' (a sort), or the
    /// values' and the positions' (a top-k, whose comparator takes the indices too).
    compared: usize,
    /// The operand that is an iota along the sorted dimension, whose tile then holds the
    /// positions (XLA's `StableSortExpander` reuses it too: `argsort`); else the positions
    /// get a tile of their own, after the operands'.
    iota_operand: Option<usize>,
    /// Each row is a bitonic sequence of `2^L` elements (`sorts_bitonic_rows`): only the
    /// network's last stage runs, every step pairing `lo` with `lo + 2^j`.
    bitonic_rows: bool,
    launch: LaunchDimensions,
}

impl SortFusion {
    /// The analysis of a fusion whose ROOT is a sort or a top-k (XLA's `TopK` custom-call;
    /// `None` for any other fusion); a sort whose rows do not fit a block's shared memory,
    /// or with more rows than a grid has blocks, is refused.
    pub fn analyze(analysis: &FusionAnalysis) -> R<Option<SortFusion>> {
        let c = analysis.computation;
        let sort = c.root_instruction();
        let top_k = sort.is_topk_call();
        if sort.opcode != Opcode::Sort && !top_k {
            return Ok(None);
        }
        let span = sort.spans.whole;
        let shapes: Vec<&ArrayShape> = sort
            .operands
            .iter()
            .filter_map(|&o| c.instruction(o).shape.as_array())
            .collect();
        let (Some(first), true) = (shapes.first(), shapes.len() == sort.operands.len()) else {
            return Err(unsupported(span, "a sort of tuples"));
        };
        let dimension = match (top_k, sort.int_list("dimensions")) {
            // A top-k's rows run along the last dimension.
            (true, _) if first.rank() > 0 => first.rank() - 1,
            (false, Some(&[d])) if (0..first.rank() as i64).contains(&d) => d as usize,
            _ => return Err(unsupported(span, "a sort without one dimension to sort")),
        };
        let n = first.dims[dimension];
        let outputs = leaves(&sort.shape);
        let (kept, compared) = match (top_k, outputs.as_slice()) {
            (false, _) => (n, sort.operands.len()),
            (true, [values, indices])
                if sort.operands.len() == 1
                    && indices.element_type == hlo::PrimitiveType::S32
                    && values.dims.last() <= Some(&n) =>
            {
                (values.dims[dimension], 2)
            }
            (true, _) => {
                return Err(unsupported(
                    span,
                    "a top-k that is not (values, s32 indices) of one operand",
                ));
            }
        };

        let rows: i64 = first
            .dims
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != dimension)
            .map(|(_, &size)| size)
            .product();
        let iota_operand = (!top_k)
            .then(|| (sort.operands.iter()).position(|&o| holds_positions(c, o, dimension, n)))
            .flatten();
        let bytes_per_element = bytes_per_element(&shapes, iota_operand.is_some());
        if n.saturating_mul(bytes_per_element) > Target::SHARED_MEMORY_PER_BLOCK {
            return Err(unsupported(
                span,
                format!(
                    "a sort of {n} elements per row: the row and its positions take {} bytes \
                     of shared memory, more than a block has ({}); such rows are sorted by \
                     several kernels, which the fusion pipeline makes of a sort outside the \
                     fusions (`split-long-sorts`: tiles, then merge steps across blocks, as \
                     XLA:GPU, for rows of fewer than 2^31 elements in tiles a grid holds; or \
                     CUB's radix sort: `sort-rewriter`), not of one written inside a fusion",
                    n.saturating_mul(bytes_per_element),
                    Target::SHARED_MEMORY_PER_BLOCK
                ),
            ));
        }
        if rows as u64 > Target::MAX_GRID_X {
            return Err(unsupported(
                span,
                format!("a sort of {rows} rows, more than grid.x holds (one block per row)"),
            ));
        }
        let padded = (n.max(1) as u64).next_power_of_two() as i64;
        let threads = (padded / 2).clamp(MIN_THREADS, Target::MAX_THREADS_PER_BLOCK);
        let tile_bytes = n * bytes_per_element;
        Ok(Some(SortFusion {
            hero: [c.root],
            dimension,
            dims: first.dims.clone(),
            n,
            padded,
            kept,
            compared,
            iota_operand,
            bitonic_rows: sort.sorts_bitonic_rows() && n == padded,
            launch: LaunchDimensions::new(rows, threads, tile_bytes),
        }))
    }

    /// Whether the rows of `sort`, a sort instruction of `c` (not a top-k), fit the shared
    /// memory of a block (`sort-rewriter` hands the others to CUB where it can).
    pub fn fits_a_block(c: &hlo::Computation, sort: &hlo::Instruction) -> bool {
        let shapes: Vec<&ArrayShape> = sort
            .operands
            .iter()
            .filter_map(|&o| c.instruction(o).shape.as_array())
            .collect();
        let (Some(first), Some(&[d])) = (shapes.first(), sort.int_list("dimensions")) else {
            return true;
        };
        let Some(&n) = usize::try_from(d).ok().and_then(|d| first.dims.get(d)) else {
            return true;
        };
        let iota = (sort.operands.iter()).any(|&o| holds_positions(c, o, d as usize, n));
        n.saturating_mul(bytes_per_element(&shapes, iota)) <= Target::SHARED_MEMORY_PER_BLOCK
    }

    /// How many elements of a row of `shapes` (the operands; none an iota along the row) a
    /// block sorts in its shared memory: the tiles `split-long-sorts` cuts longer rows into.
    pub fn row_capacity(shapes: &[&ArrayShape]) -> i64 {
        Target::SHARED_MEMORY_PER_BLOCK / bytes_per_element(shapes, false)
    }

    fn threads(&self) -> i64 {
        self.launch.threads_per_block as i64
    }

    /// `(th_x, bl_x)[s] -> index`: thread `th_x` of block `bl_x` takes the row's elements
    /// `s * T + th_x` of the first `size`; the block's row is its id delinearized over the
    /// other dimensions.
    fn row_map(&self, size: i64) -> IndexingMap {
        let threads = self.threads();
        let others: Vec<i64> = (0..self.dims.len())
            .filter(|&d| d != self.dimension)
            .map(|d| self.dims[d])
            .collect();
        let mut row = delinearize(dim(1), &others).into_iter();
        let element = sym(0) * threads + dim(0);
        let results = (0..self.dims.len())
            .map(|d| match d == self.dimension {
                true => element.clone(),
                false => row.next().expect("one coordinate per other dimension"),
            })
            .collect();
        let mut map = IndexingMap::new(
            vec![
                Variable::new("th_x", Interval::new(0, threads - 1)),
                Variable::new("bl_x", Interval::new(0, self.launch.blocks as i64 - 1)),
            ],
            vec![Variable::new(
                "element",
                Interval::new(0, ((size + threads - 1) / threads).max(1) - 1),
            )],
            Vec::new(),
            results,
        );
        map.add_constraint(element, Interval::new(0, size - 1));
        map.simplified()
    }
}

impl FusionEmitter for SortFusion {
    fn kind(&self) -> EmitterKind {
        EmitterKind::Sort
    }

    fn heroes(&self) -> &[InstrId] {
        &self.hero
    }

    fn emit_entry(&self, cx: &FusionContext<'_>, m: &mut ir::Module) -> R<EmittedKernel> {
        let c = cx.fusion;
        let sort = c.root_instruction();
        let span = sort.spans.whole;
        let outputs = leaves(&sort.shape);
        let KernelEntry {
            entry,
            params,
            outs,
            ..
        } = kernel_entry(m, c, &outputs, span)?;
        // `to_apply` of a sort, `called_computations` of a top-k: either way the one called.
        let comparator = sort
            .called_computations()
            .next()
            .ok_or_else(|| unsupported(span, "a sort without a comparator"))?;
        let arity = cx.module.computation(comparator.id).parameters().len();
        if arity != 2 * self.compared {
            return Err(unsupported(
                span,
                format!(
                    "a comparator of {arity} parameters for {} compared arrays (two each)",
                    self.compared
                ),
            ));
        }
        let comparator = cx.scalar_functions[&comparator.id].clone();
        let mut b = Builder::at_end(m, entry);
        let ids = thread_and_block_ids(&mut b, &self.launch);
        // The operands' tiles, then the positions' (unless an operand holds them).
        let mut types = Vec::new();
        for &operand in &sort.operands {
            let a = c.instruction(operand).shape.as_array().expect("analyzed");
            types.push(element_type(a.element_type).map_err(|e| unsupported(span, e))?);
        }
        if self.iota_operand.is_none() {
            types.push(Type::I32);
        }
        let positions = self.iota_operand.unwrap_or(types.len() - 1);
        let tiles: Vec<Value> = types
            .iter()
            .map(|&t| {
                let ip = b.insertion_point();
                xla_gpu::build_allocate_shared(b.module, ip, Type::tensor(&[self.n], in_tile(t)))
            })
            .collect();

        // 1. The row and its positions into the tiles.
        let d = self.dimension;
        let loaded = emit_loop(
            &mut b,
            self.row_map(self.n),
            &ids,
            &tiles,
            |b, _, index, tiles| {
                let at = [index[d]];
                let mut written = Vec::with_capacity(tiles.len());
                for (&operand, &tile) in sort.operands.iter().zip(tiles) {
                    let value = provide(cx, b, &params, operand, index)?[0];
                    let value = widened(b, value);
                    written.push(b.insert_element(value, tile, &at));
                }
                if written.len() < tiles.len() {
                    let position = b.cast(arith::INDEX_CAST, index[d], Type::I32);
                    written.push(b.insert_element(position, tiles[tiles.len() - 1], &at));
                }
                Ok(written)
            },
        )?;
        let ip = b.insertion_point();
        let loaded = xla_gpu::build_sync_threads(b.module, ip, &loaded);

        // 2. The bitonic network.
        let less = Comparator {
            name: &comparator,
            compared: self.compared,
            types: &types,
            positions,
        };
        let sorted = self.emit_network(&mut b, ids[0], loaded, &less);

        // 3. The tiles into the outputs: a sort's operands, or a top-k's values and
        // positions, the first `kept` of each row.
        let map = self.row_map(self.kept);
        let stored = emit_loop(&mut b, map.clone(), &ids, &outs, |b, _, index, outs| {
            let at = [index[d]];
            Ok(outs
                .iter()
                .zip(&sorted)
                .zip(&types)
                .map(|((&out, &tile), &ty)| {
                    let value = b.extract(tile, &at);
                    let value = narrowed(b, value, ty);
                    b.insert_element(value, out, index)
                })
                .collect())
        })?;
        b.ret(&stored);
        Ok(EmittedKernel {
            launch: self.launch,
            vector_factor: 1,
            thread_map: map,
            in_place: Vec::new(),
            layouts: Vec::new(),
        })
    }
}

impl SortFusion {
    /// The stages and steps of the network over `tiles` (the operands' tiles, then the
    /// positions'), run by thread `tid`: the sorted tiles.
    fn emit_network(
        &self,
        b: &mut Builder<'_>,
        tid: Value,
        tiles: Vec<Value>,
        less: &Comparator<'_>,
    ) -> Vec<Value> {
        let stages = i64::from(self.padded.trailing_zeros());
        if stages == 0 {
            return tiles;
        }
        let first_stage = b.index(if self.bitonic_rows { stages - 1 } else { 0 });
        let one = b.index(1);
        let last_stage = b.index(stages);
        let ip = b.insertion_point();
        let (stage_loop, stage_body) =
            scf::build_for(b.module, ip, first_stage, last_stage, one, &tiles);
        {
            let mut b = Builder::at_end(b.module, stage_body);
            let args = b.module.block_args(stage_body).to_vec();
            let stage = args[0];
            let steps = b.addi(stage, one);
            let (zero, one) = (b.index(0), b.index(1));
            let ip = b.insertion_point();
            let (step_loop, step_body) = scf::build_for(b.module, ip, zero, steps, one, &args[1..]);
            {
                let mut b = Builder::at_end(b.module, step_body);
                let args = b.module.block_args(step_body).to_vec();
                let step = args[0];
                let distance_bit = b.binary(arith::SUBI, stage, step);
                // A bitonic row needs no mirrored first step: its halves are not sorted
                // runs but one bitonic sequence, which `lo + 2^j` pairs split.
                let first_step = match self.bitonic_rows {
                    true => b.int(0, Type::I1),
                    false => b.cmpi("eq", step, zero),
                };
                let swapped =
                    self.emit_step(&mut b, tid, distance_bit, first_step, &args[1..], less);
                let ip = b.insertion_point();
                let synced = xla_gpu::build_sync_threads(b.module, ip, &swapped);
                scf::build_yield(b.module, step_body, &synced);
            }
            let results: Vec<Value> = b.module.results(step_loop).collect();
            scf::build_yield(b.module, stage_body, &results);
        }
        b.module.results(stage_loop).collect()
    }

    /// One step: every pair of thread `tid` at distance `2^j` (`j`: `distance_bit`; the
    /// partner mirrored in the stage's first step) compared and ordered. The tiles after it.
    fn emit_step(
        &self,
        b: &mut Builder<'_>,
        tid: Value,
        j: Value,
        first_step: Value,
        tiles: &[Value],
        less: &Comparator<'_>,
    ) -> Vec<Value> {
        let threads = self.threads();
        let pairs_per_thread = (self.padded / 2 + threads - 1) / threads;
        let (zero, one) = (b.index(0), b.index(1));
        let trips = b.index(pairs_per_thread);
        let ip = b.insertion_point();
        let (pair_loop, body) = scf::build_for(b.module, ip, zero, trips, one, tiles);
        {
            let mut b = Builder::at_end(b.module, body);
            let args = b.module.block_args(body).to_vec();
            let (q, tiles) = (args[0], &args[1..]);
            let one = b.index(1);
            let stride = b.index(threads);
            let first = b.muli(q, stride);
            let p = b.addi(first, tid);
            // lo: p with a 0 inserted at bit j.
            let bit = b.binary(arith::SHLI, one, j);
            let low_mask = b.binary(arith::SUBI, bit, one);
            let high = b.binary(arith::SHRUI, p, j);
            let j1 = b.addi(j, one);
            let high = b.binary(arith::SHLI, high, j1);
            let low = b.binary(arith::ANDI, p, low_mask);
            let lo = b.binary(arith::ORI, high, low);
            // hi: lo's low j + 1 bits flipped (first step), or lo + 2^j.
            let span = b.binary(arith::SHLI, one, j1);
            let flip_mask = b.binary(arith::SUBI, span, one);
            let mirrored = b.binary(arith::XORI, lo, flip_mask);
            let next = b.binary(arith::ORI, lo, bit);
            let hi = b.select(first_step, mirrored, next);
            let n = b.index(self.n);
            let in_row = b.cmpi("ult", hi, n);
            let tile_types: Vec<Type> = tiles.iter().map(|&t| b.module.value_type(t)).collect();
            let ip = b.insertion_point();
            let (if_op, then_block, else_block) =
                scf::build_if(b.module, ip, in_row, &tile_types, true);
            scf::build_yield(b.module, else_block.expect("an else block"), tiles);
            {
                let mut b = Builder::at_end(b.module, then_block);
                let ordered = order_pair(&mut b, tiles, lo, hi, less);
                scf::build_yield(b.module, then_block, &ordered);
            }
            let results: Vec<Value> = b.module.results(if_op).collect();
            scf::build_yield(b.module, body, &results);
        }
        b.module.results(pair_loop).collect()
    }
}

/// How a step orders a pair: the comparator function, how many tiles it reads (from the
/// first), the types it takes their elements as (see [`in_tile`]), and the tile of the
/// positions that break its ties.
struct Comparator<'a> {
    name: &'a str,
    compared: usize,
    types: &'a [Type],
    positions: usize,
}

/// The elements at `lo` and `hi` of every tile swapped when the one at `hi` goes first:
/// `less(hi, lo)`, or neither goes first and `hi` came from an earlier position. The tiles
/// after it.
fn order_pair(
    b: &mut Builder<'_>,
    tiles: &[Value],
    lo: Value,
    hi: Value,
    less: &Comparator<'_>,
) -> Vec<Value> {
    let at_lo: Vec<Value> = tiles.iter().map(|&t| b.extract(t, &[lo])).collect();
    let at_hi: Vec<Value> = tiles.iter().map(|&t| b.extract(t, &[hi])).collect();
    let k = less.compared;
    let mut call = |first: &[Value], second: &[Value]| {
        let args: Vec<Value> = first[..k]
            .iter()
            .zip(&second[..k])
            .zip(less.types)
            .flat_map(|((&x, &y), &ty)| [narrowed(b, x, ty), narrowed(b, y, ty)])
            .collect();
        let ip = b.insertion_point();
        let op = xla_gpu::build_pure_call(b.module, ip, less.name, &args, &[Type::I1]);
        b.module.result(op, 0)
    };
    let hi_first = call(&at_hi, &at_lo);
    let lo_first = call(&at_lo, &at_hi);
    let earlier = b.cmpi("slt", at_hi[less.positions], at_lo[less.positions]);
    let yes = b.int(1, Type::I1);
    let tie = b.binary(arith::XORI, lo_first, yes);
    let tie_broken = b.binary(arith::ANDI, tie, earlier);
    let swap = b.binary(arith::ORI, hi_first, tie_broken);
    let mut out = Vec::with_capacity(tiles.len());
    for ((&tile, &x), &y) in tiles.iter().zip(&at_lo).zip(&at_hi) {
        let first = b.select(swap, y, x);
        let second = b.select(swap, x, y);
        let tile = b.insert_element(first, tile, &[lo]);
        out.push(b.insert_element(second, tile, &[hi]));
    }
    out
}

/// The shared memory a row's element takes: one of every operand (narrower than a byte
/// widened to one), and its position (an `i32`) unless an operand holds it.
fn bytes_per_element(shapes: &[&ArrayShape], iota_operand: bool) -> i64 {
    shapes
        .iter()
        .map(|a| (i64::from(a.element_type.bit_width()) + 7) / 8)
        .sum::<i64>()
        + if iota_operand { 0 } else { 4 }
}

/// Whether `id` is an iota along `dimension` (or a broadcast of one that puts its counting
/// dimension there) of integers that hold every position below `n`, read as signed or
/// unsigned alike: JAX's `argsort` sorts such an operand along with the keys.
fn holds_positions(c: &hlo::Computation, id: InstrId, dimension: usize, n: i64) -> bool {
    let instr = c.instruction(id);
    let Some(shape) = instr.shape.as_array() else {
        return false;
    };
    let bits = shape.element_type.bit_width();
    let fits = shape.element_type.is_int() && bits > 1 && n <= 1i64 << (bits.min(63) - 1);
    let counts_along = match instr.opcode {
        Opcode::Iota => instr.int("iota_dimension") == Some(dimension as i64),
        Opcode::Broadcast => {
            let iota = c.instruction(instr.operands[0]);
            let mapped = instr.int_list("dimensions").unwrap_or_default();
            iota.opcode == Opcode::Iota
                && iota.shape.as_array().map(|a| a.element_type) == Some(shape.element_type)
                && iota
                    .int("iota_dimension")
                    .and_then(|k| mapped.get(k as usize))
                    == Some(&(dimension as i64))
        }
        _ => false,
    };
    fits && counts_along
}

/// The type a tile holds elements of type `ty` in: integers narrower than a byte (s4, u2,
/// f4's encoding) take a byte each, as shared memory is addressed in bytes; `pred` (`i1`)
/// is stored a byte each already.
fn in_tile(ty: Type) -> Type {
    match ty.int_width() {
        Some(bits) if (2..8).contains(&bits) => Type::I8,
        _ => ty,
    }
}

/// `value` as its tile holds it ([`in_tile`]): its bits zero-extended.
fn widened(b: &mut Builder<'_>, value: Value) -> Value {
    let ty = b.module.value_type(value);
    match in_tile(ty) {
        wide if wide != ty => b.cast(arith::EXTUI, value, wide),
        _ => value,
    }
}

/// A tile's element back as type `ty`.
fn narrowed(b: &mut Builder<'_>, value: Value, ty: Type) -> Value {
    match b.module.value_type(value) == ty {
        true => value,
        false => b.cast(arith::TRUNCI, value, ty),
    }
}
