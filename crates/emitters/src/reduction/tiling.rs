//! Launch shapes of the four reduction emitters, as XLA chooses them (`reduction.cc`,
//! `reduction_base.cc`), and the indexing maps that say which thread touches what.
//!
//! Every map has the dimensions `(th_x, bl_x)` (ours is a 1-d grid: XLA's block y/z are
//! always 1 here because all roots form one group); maps of the shared-memory stages have
//! `th_x` only. Which emitter:
//!
//! * a row reduction is a **multi-row** reduction when its minor reduced component is a
//!   power of two that fits in one warp's lanes times the vector size, else a **row**
//!   reduction;
//! * a column reduction is a **small column** reduction when its minor kept component
//!   divides the warp size, else a **column** reduction.
//!
//! The rules, per emitter:
//!
//! * **Row**: `reduced = min(1024, roundup(ceil(minor / 32), 32))` threads share a row (32
//!   elements per thread at most); when `2 * reduced <= 256`, more rows share the block
//!   (`kept = d1` if `d1 * reduced <= 256`, else `256 / reduced`). Each thread walks
//!   `min(32 / vector, ceil(minor / vector / reduced))` vectors of its row strided by
//!   `reduced`, plus the whole major reduced component. Partials are shuffled within the
//!   warp (distance 16); with more than one warp per row, lane 0 of each warp writes a
//!   `[kept, warps]` shared tile (+1 column when that is a multiple of 32), and after a
//!   barrier the first lanes of each row read it back and shuffle again.
//! * **Multi-row**: `vector = min(minor, 64 / smallest bits)`, at most 16 bytes when any
//!   input or output has 32 bits or more, halved while there are fewer blocks than SMs;
//!   `minor / vector` lanes per row, `kept = d1` or `256 / lanes` rows per block (rounded
//!   up to whole warps), one shuffle over the row's lanes, no shared memory.
//! * **Column**: 32×32 threads; warp `w` walks reduced rows `w, w + 32, ..`, lane `l` column
//!   `(block * 32 + l) * vector + v`; partials go through a `[32, 32 * vector + 1]` tile
//!   written transposed, so warp `w` then holds column `w`'s 32 partials and shuffles them
//!   (distance 16). Ours keeps a column's 32 partials side by side in the tile (`[c, v *
//!   32 + w]`: no bank conflicts either way for 32-bit partials) and widens the vector to 128 bits within
//!   XLA's block width where that pays ([`column_vector_size`]): then `lanes = 32 * XLA's
//!   vector / vector` lanes span the block's columns and each warp walks `r = 32 / lanes`
//!   rows at once (lane `l` takes row `l mod r` of warp `w`'s groups `w, w + 32, ..`); a
//!   first shuffle merges a warp's rows, and the first `lanes` warps finish the columns
//!   from a `[lanes, 32 * vector + 1]` tile.
//! * **Small column**: 128 threads (fewer if needed) walk the block's `[reduced, minor]`
//!   slice linearly, `vector` elements each; `shared_rows = vector * threads / minor`
//!   threads hold partials of one column (at most 32: the vector size, then the thread
//!   count, shrink until so); the `[shared_rows, minor + padding]` tile is read back
//!   transposed so that one column's partials sit in consecutive lanes, shuffled at
//!   distance `shared_rows / 2`.
//!
//! Vector size (`GetVectorSizeForMlir`), from the minor component, the threads along it and
//! the smallest element width among the fusion's inputs: 1 if the minor component is odd or
//! shorter than two elements per thread, 1 for 64-bit inputs, 2 for 32-bit ones, 2 when
//! there are fewer than four elements per thread, else 4 when the minor component divides
//! by 4, else 2. The row kind widens it to 128 bits where it can ([`row_vector_size`]).

use indexing::nested_layout::NestedLayout;
use indexing::{AffineExpr, IndexingMap, Interval, Variable, cst, delinearize, dim, sym};

use super::dimensions::{COL_MINOR_KEPT, MAX_THREADS_PER_ROW, ReductionDimensions};

/// Threads per block the row emitters aim for (XLA: "between 128 and 512 threads, so we
/// just go for 256").
const THREADS_PER_BLOCK_TARGET: i64 = 256;
/// Column reductions: the square tile of 32×32 threads.
const TILE_SIZE: i64 = 32;
/// A column thread keeps one accumulator a lane of its vector for each reduced value, in
/// registers of their own (narrow types too), and a 1024-thread block has 64 registers a
/// thread: the widened vector stops at 8 (`s8` columns at 16 took 41 registers, half the occupancy of 32; `s4`
/// at 32 spilled).
const MAX_COLUMN_ACCUMULATORS: i64 = 8;
/// Which of XLA's four reduction emitters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReductionKind {
    Row,
    MultiRow,
    Column,
    SmallColumn,
}

impl std::fmt::Display for ReductionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReductionKind::Row => "row",
            ReductionKind::MultiRow => "multi-row",
            ReductionKind::Column => "column",
            ReductionKind::SmallColumn => "small column",
        })
    }
}

/// The shared-memory stage: partials written to a tile, a barrier, read back and shuffled.
#[derive(Clone, Debug)]
pub struct SharedStage {
    /// `(th_x)[symbols] -> tile index`; constraints say which threads write.
    pub write_map: IndexingMap,
    /// `(th_x)[symbols] -> tile index`; constraints say which threads read a written entry
    /// (the others take the init value).
    pub read_map: IndexingMap,
    pub tile_shape: Vec<i64>,
    pub max_distance: i64,
}

/// Everything that decides the kernel's shape.
#[derive(Clone, Debug)]
pub struct Tiling {
    pub kind: ReductionKind,
    pub threads: i64,
    pub blocks: i64,
    pub vector_size: i64,
    /// The canonical input shape the input map indexes (row: `[d0, d1, d2 / v, v]`).
    pub input_shape: Vec<i64>,
    /// `(th_x, bl_x)[symbols] -> input_shape index`, constrained to the input.
    pub input_map: IndexingMap,
    /// Which input symbol is the vector index whose partials stay apart (column kinds:
    /// lanes of a vector are different outputs); `None` when all of a thread's elements
    /// belong to one output.
    pub vector_symbol: Option<usize>,
    /// `(th_x, bl_x)[output symbols] -> output_shape index`, constrained to the threads that
    /// write an output element.
    pub output_map: IndexingMap,
    /// The warp shuffle right after the per-thread loop, by its distance: row kinds, and
    /// column reductions whose warps read several rows at once (merging them).
    pub first_shuffle: Option<i64>,
    pub shared: Option<SharedStage>,
    /// How the block's threads cover the input the block reads, as a nested layout (issue
    /// 21), the same distribution as `input_map` (tests check they agree point for point).
    /// Row kinds: over `[major, kept rows, minor]` (minor as read, vectors unsplit);
    /// column: over `[reduced rows / r, r, kept columns]` (`r` rows a warp reads at once);
    /// small column: over `[reduced rows, kept columns]`. `None` for a small column
    /// reduction whose vectors straddle two rows.
    pub layout: Option<NestedLayout>,
}

/// What the vector size depends on besides the shape.
#[derive(Clone, Copy, Debug)]
pub struct ElementWidths {
    /// The smallest element width of the fusion's inputs (`i64::MAX` without inputs).
    pub smallest_input_bits: i64,
    /// The smallest element width of the fusion's outputs.
    pub smallest_output_bits: i64,
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

fn round_up(a: i64, b: i64) -> i64 {
    ceil_div(a, b) * b
}

/// `GetVectorSizeForMlir` (see the module documentation).
pub fn vector_size(minor: i64, threads: i64, widths: ElementWidths) -> i64 {
    if minor % 2 != 0 || threads * 2 > minor {
        return 1;
    }
    if widths.smallest_input_bits >= 64 {
        return 1;
    }
    if widths.smallest_input_bits >= 32 {
        return 2;
    }
    if threads * 4 > minor {
        return 2;
    }
    if minor % 4 == 0 { 4 } else { 2 }
}

/// The row kind's vector: XLA's ([`vector_size`]) doubled while it stays within 128 bits
/// of the smallest input, divides the row and leaves every thread of the row a vector
/// (where XLA's is at least 2). XLA stops at 64 bits ("16 byte vector loads are often
/// slower than 8 byte loads"); Triton's row reductions load 128 bits, and on the H200 the
/// f32 row sum ran in the same time either way (issue 22, `bench/RESULTS.md`), with half
/// the load instructions. The column kind widens its own way ([`column_vector_size`]): at
/// XLA's 32 lanes a wider vector would halve its blocks.
pub fn row_vector_size(minor: i64, threads: i64, widths: ElementWidths) -> i64 {
    let mut vs = vector_size(minor, threads, widths);
    if vs < 2 {
        return vs;
    }
    let bits = widths.smallest_input_bits;
    while vs * 2 * bits <= 128 && minor % (vs * 2) == 0 && threads * vs * 2 <= minor {
        vs *= 2;
    }
    vs
}

/// The column kind's vector: XLA's ([`vector_size`]) doubled while it stays within 128 bits
/// of the smallest input and [`MAX_COLUMN_ACCUMULATORS`] lanes and divides the minor kept
/// component (where XLA's is at least 2): of those, the one that saves the most
/// instructions on the thread's strip of `rows` ([`column_vector_saving`]), XLA's if none
/// saves any. The blocks stay XLA's, `32 * XLA's vector` columns: `32 * XLA's vector /
/// vector` lanes span them and each warp reads `32 / lanes` rows at once (their partials
/// first shuffled together). XLA stops at 64 bits; Triton's column sums load 128 (issue
/// 22). A wider vector at XLA's 32 lanes would halve the blocks, which on the H200 ran the
/// column sum at 63% of copy bandwidth instead of 82% (`bench/RESULTS.md`).
pub fn column_vector_size(rows: i64, minor: i64, xla_vector: i64, widths: ElementWidths) -> i64 {
    if xla_vector < 2 {
        return xla_vector;
    }
    // At most `MAX_COLUMN_ACCUMULATORS` lanes, so a block's `32 * XLA's vector` columns
    // always hold whole vectors (at least 4 lanes across them).
    let bits = widths.smallest_input_bits;
    let mut best = (xla_vector, 0);
    let mut wide = xla_vector * 2;
    while wide * bits <= 128 && wide <= MAX_COLUMN_ACCUMULATORS && minor % wide == 0 {
        let saving = column_vector_saving(rows, xla_vector, wide);
        if saving > best.1 {
            best = (wide, saving);
        }
        wide *= 2;
    }
    best.0
}

/// The instructions a column thread saves with a vector of `wide` lanes instead of XLA's
/// `xla` (negative: it costs): it reads its strip of `rows` rows in `ceil(rows / 32 r)`
/// loads instead of `ceil(rows / 32)` (`r = wide / xla` rows a warp), but shuffles `wide -
/// xla` more partials across the warp's 32 lanes (5 steps) and all `wide` across its `r`
/// rows (`log2 r` steps), a shuffle and a combine a step. The f32 column sum of 4096 rows
/// saves 64 loads for 28 instructions; at 1024 rows it would save 16. (The tile's extra
/// stores and loads, one a lane, and several reduced values are left out: a first-order
/// count.)
fn column_vector_saving(rows: i64, xla: i64, wide: i64) -> i64 {
    let r = wide / xla;
    let saved = ceil_div(rows, TILE_SIZE) - ceil_div(rows, TILE_SIZE * r);
    let log2 = |n: i64| n.trailing_zeros() as i64;
    let added = 2 * ((wide - xla) * log2(TILE_SIZE) + wide * log2(r));
    saved - added
}

fn grid_dims(threads: i64, blocks: i64) -> Vec<Variable> {
    vec![
        Variable::new("th_x", Interval::new(0, threads - 1)),
        Variable::new("bl_x", Interval::new(0, blocks - 1)),
    ]
}

fn thread_dims(threads: i64) -> Vec<Variable> {
    vec![Variable::new("th_x", Interval::new(0, threads - 1))]
}

fn symbols(names: &[&str], sizes: &[i64]) -> Vec<Variable> {
    names
        .iter()
        .zip(sizes)
        .map(|(n, &s)| Variable::new(*n, Interval::new(0, s - 1)))
        .collect()
}

/// `(th_x)[vector_index] -> results`: where a thread's elements go in the shared tile, or
/// come from.
fn shared_tile_map(threads: i64, vs: i64, results: Vec<AffineExpr>) -> IndexingMap {
    IndexingMap::new(
        thread_dims(threads),
        symbols(&["vector_index"], &[vs]),
        Vec::new(),
        results,
    )
}

/// A map with every result constrained to `[0, bound - 1]`.
fn bounded(
    dims: Vec<Variable>,
    syms: Vec<Variable>,
    results: Vec<AffineExpr>,
    bounds: &[i64],
) -> IndexingMap {
    let mut map = IndexingMap::new(dims, syms, Vec::new(), results.clone());
    for (e, &b) in results.into_iter().zip(bounds) {
        map.add_constraint(e, Interval::new(0, b - 1));
    }
    map
}

fn is_power_of_two(n: i64) -> bool {
    n > 0 && n & (n - 1) == 0
}

impl Tiling {
    /// The emitter XLA picks for `rd` and its launch shape; `None` for a shape no
    /// reduction emitter takes (the loop emitter then does).
    /// With XLA's choices the row and column kinds keep XLA's vector ([`vector_size`]), not
    /// our wider one.
    pub fn new(
        rd: &ReductionDimensions,
        widths: ElementWidths,
        choices: crate::Choices,
    ) -> Option<Tiling> {
        let xla = choices == crate::Choices::Xla;
        let tiling = if rd.is_row {
            Tiling::multi_row(rd, widths).or_else(|| Tiling::row(rd, widths, xla))?
        } else if crate::Target::WARP_SIZE % rd.dims[COL_MINOR_KEPT] == 0 {
            Tiling::small_column(rd, widths)
        } else {
            Tiling::column(rd, widths, xla)
        };
        Some(tiling.simplified())
    }

    fn simplified(mut self) -> Tiling {
        self.input_map = self.input_map.simplified();
        self.output_map = self.output_map.simplified();
        if let Some(s) = &mut self.shared {
            s.write_map = s.write_map.clone().simplified();
            s.read_map = s.read_map.clone().simplified();
        }
        self
    }

    /// Bytes of shared memory per block for tiles of `element_bytes` each.
    pub fn shared_memory_bytes(&self, element_bytes: &[i64]) -> i64 {
        let Some(s) = &self.shared else { return 0 };
        let elements: i64 = s.tile_shape.iter().product();
        element_bytes.iter().map(|b| b * elements).sum()
    }

    fn row(rd: &ReductionDimensions, widths: ElementWidths, xla: bool) -> Option<Tiling> {
        let [d0, d1, d2] = rd.dims;
        let per_thread = 32;
        let reduced =
            MAX_THREADS_PER_ROW.min(round_up(ceil_div(d2, per_thread), crate::Target::WARP_SIZE));
        let mut kept = 1;
        if reduced * 2 <= THREADS_PER_BLOCK_TARGET {
            kept = if d1 * reduced <= THREADS_PER_BLOCK_TARGET {
                d1
            } else {
                THREADS_PER_BLOCK_TARGET / reduced
            };
        }
        let vs = match xla {
            true => vector_size(d2, reduced, widths),
            false => row_vector_size(d2, reduced, widths),
        };
        let input_shape = vec![d0, d1, d2 / vs, vs];
        let tile = (per_thread / vs).min(ceil_div(input_shape[2], reduced));
        let per_block = [kept, tile * reduced];
        let num_blocks = [
            ceil_div(d1, per_block[0]),
            ceil_div(input_shape[2], per_block[1]),
        ];
        if num_blocks[1] != 1 {
            // Several blocks per row would race on the output.
            return None;
        }
        let threads = kept * reduced;
        let blocks = num_blocks[0] * num_blocks[1];
        let t = delinearize(dim(0), &[kept, reduced]);
        let b = delinearize(dim(1), &num_blocks);
        let input_results = vec![
            sym(0),
            b[0].clone() * per_block[0] + t[0].clone(),
            b[1].clone() * per_block[1] + sym(1) * reduced + t[1].clone(),
            sym(2),
        ];
        let input_map = bounded(
            grid_dims(threads, blocks),
            symbols(&["major", "minor", "vector_index"], &[d0, tile, vs]),
            input_results,
            &input_shape,
        );
        let mut output_map = bounded(
            grid_dims(threads, blocks),
            Vec::new(),
            vec![b[0].clone() * per_block[0] + t[0].clone()],
            &[d1],
        );
        output_map.add_constraint(t[1].clone(), Interval::new(0, 0));
        let warps_per_row = ceil_div(reduced, crate::Target::WARP_SIZE);
        let shared = (warps_per_row > 1).then(|| {
            let th = delinearize(dim(0), &[kept, reduced]);
            let lane = th[1].clone().modulo(crate::Target::WARP_SIZE);
            let warp = th[1].clone().floor_div(crate::Target::WARP_SIZE);
            let mut write_map = IndexingMap::new(
                thread_dims(threads),
                Vec::new(),
                Vec::new(),
                vec![th[0].clone(), warp],
            );
            write_map.add_constraint(lane.clone(), Interval::new(0, 0));
            let mut read_map = IndexingMap::new(
                thread_dims(threads),
                Vec::new(),
                Vec::new(),
                vec![th[0].clone(), lane],
            );
            read_map.add_constraint(th[1].clone(), Interval::new(0, warps_per_row - 1));
            let mut tile_shape = vec![kept, warps_per_row];
            if warps_per_row % crate::Target::WARP_SIZE == 0 {
                tile_shape[1] += 1;
            }
            SharedStage {
                write_map,
                read_map,
                tile_shape,
                // Only the first `warps_per_row` lanes read a partial (the others hold the
                // init value), so the butterfly over the smallest power of two that covers
                // them brings all of them to lane 0, which writes the output. XLA shuffles
                // the whole warp (distance 16): on 4 warps a row that is three shuffles and
                // three combiner calls more, all on init values.
                max_distance: (warps_per_row as u64).next_power_of_two() as i64 / 2,
            }
        });
        Some(Tiling {
            kind: ReductionKind::Row,
            threads,
            blocks,
            vector_size: vs,
            input_shape,
            input_map,
            vector_symbol: None,
            output_map,
            first_shuffle: Some(crate::Target::WARP_SIZE / 2),
            // `kept` rows of `reduced` threads each; a thread walks `tile` vectors of its
            // row `reduced` vectors apart, and the whole major component.
            layout: Some(NestedLayout {
                subgroup_tile: vec![1, 1, 1],
                batch_tile: vec![d0, 1, tile],
                outer_tile: vec![1, 1, 1],
                thread_tile: vec![1, kept, reduced],
                element_tile: vec![1, 1, vs],
                subgroup_strides: vec![0, 0, 0],
                thread_strides: vec![0, reduced, 1],
            }),
            shared,
        })
    }

    fn multi_row(rd: &ReductionDimensions, widths: ElementWidths) -> Option<Tiling> {
        let [d0, d1, d2] = rd.dims;
        if !is_power_of_two(d2) {
            return None;
        }
        let smallest = widths.smallest_input_bits.min(widths.smallest_output_bits);
        let mut largest = widths.smallest_input_bits.max(widths.smallest_output_bits);
        if largest == i64::MAX {
            largest = widths.smallest_output_bits;
        }
        let mut vs = d2.min((64 / smallest.max(1)).max(1));
        if largest >= 32 {
            vs = vs.min((128 / largest).max(1));
        }
        let threads_for = |vs: i64| {
            let reduced = d2 / vs;
            let kept = if d1 * reduced <= THREADS_PER_BLOCK_TARGET {
                d1
            } else {
                THREADS_PER_BLOCK_TARGET / reduced
            };
            (kept, reduced)
        };
        let blocks_for = |vs: i64| ceil_div(d1, threads_for(vs).0);
        if d2 > crate::Target::WARP_SIZE * vs {
            return None;
        }
        while vs > 1 && blocks_for(vs) < crate::Target::CORE_COUNT {
            vs /= 2;
        }
        if d2 > crate::Target::WARP_SIZE * vs {
            return None;
        }
        let (kept, reduced) = threads_for(vs);
        let blocks = blocks_for(vs);
        // Whole warps: a shuffle names all 32 lanes, and the interpreter (like the PTX
        // spec, strictly read) wants every named lane to exist. XLA launches exactly
        // `kept * reduced` threads; the extra ones here read and write nothing.
        let busy = kept * reduced;
        let threads = round_up(busy, crate::Target::WARP_SIZE);
        let t = delinearize(dim(0), &[kept, reduced]);
        let block = if blocks == 1 { cst(0) } else { dim(1) };
        let input_shape = vec![d0, d1, d2];
        let mut input_map = bounded(
            grid_dims(threads, blocks),
            symbols(&["major", "vector_index"], &[d0, vs]),
            vec![
                sym(0),
                block.clone() * kept + t[0].clone(),
                t[1].clone() * vs + sym(1),
            ],
            &input_shape,
        );
        let mut output_map = bounded(
            grid_dims(threads, blocks),
            Vec::new(),
            vec![block * kept + t[0].clone()],
            &[d1],
        );
        output_map.add_constraint(t[1].clone(), Interval::new(0, 0));
        if busy < threads {
            input_map.add_constraint(dim(0), Interval::new(0, busy - 1));
            output_map.add_constraint(dim(0), Interval::new(0, busy - 1));
        }
        Some(Tiling {
            kind: ReductionKind::MultiRow,
            threads,
            blocks,
            vector_size: vs,
            input_shape,
            input_map,
            vector_symbol: None,
            output_map,
            first_shuffle: Some(reduced / 2).filter(|&d| d > 0),
            // `kept` rows of `reduced` threads, one vector each (the threads past
            // `kept * reduced` that round the block up to whole warps read nothing).
            layout: Some(NestedLayout {
                subgroup_tile: vec![1, 1, 1],
                batch_tile: vec![d0, 1, 1],
                outer_tile: vec![1, 1, 1],
                thread_tile: vec![1, kept, reduced],
                element_tile: vec![1, 1, vs],
                subgroup_strides: vec![0, 0, 0],
                thread_strides: vec![0, reduced, 1],
            }),
            shared: None,
        })
    }

    fn column(rd: &ReductionDimensions, widths: ElementWidths, xla: bool) -> Tiling {
        let [d0, d1, d2] = rd.dims;
        let xla_vs = vector_size(d2, TILE_SIZE, widths);
        // XLA's block width, and so its blocks; the vector may be wider, the lanes across
        // the block's columns then fewer and each warp reads `rows_per_warp` rows at once.
        let block_columns = TILE_SIZE * xla_vs;
        let vs = match xla {
            true => xla_vs,
            false => column_vector_size(d1, d2, xla_vs, widths),
        };
        let lanes = block_columns / vs;
        let rows_per_warp = TILE_SIZE / lanes;
        let threads = TILE_SIZE * TILE_SIZE;
        let rows_per_thread = ceil_div(d1, TILE_SIZE * rows_per_warp);
        let num_blocks = [d0, ceil_div(d2, block_columns)];
        let blocks = num_blocks[0] * num_blocks[1];
        let t = delinearize(dim(0), &[TILE_SIZE, lanes, rows_per_warp]);
        let (warp, lane_column, lane_row) = (&t[0], &t[1], &t[2]);
        let b = delinearize(dim(1), &num_blocks);
        let input_shape = vec![d0, d1, d2];
        let input_map = bounded(
            grid_dims(threads, blocks),
            symbols(&["reduced", "vector_index"], &[rows_per_thread, vs]),
            vec![
                b[0].clone(),
                (sym(0) * TILE_SIZE + warp.clone()) * rows_per_warp + lane_row.clone(),
                (b[1].clone() * lanes + lane_column.clone()) * vs + sym(1),
            ],
            &input_shape,
        );
        // Lane 0 of the first `lanes` warps writes the block's columns, warp `w` the vector
        // `w`.
        let mut output_map = bounded(
            grid_dims(threads, blocks),
            symbols(&["vector_index"], &[vs]),
            vec![
                b[0].clone(),
                (b[1].clone() * lanes + warp.clone()) * vs + sym(0),
            ],
            &[d0, d2],
        );
        output_map.add_constraint(dim(0).modulo(TILE_SIZE), Interval::new(0, 0));
        output_map.add_constraint(warp.clone(), Interval::new(0, lanes - 1));
        // The tile, written transposed: entry `[c, v * 32 + w]` is warp `w`'s partial of the
        // block's column `c * vs + v` (after the first shuffle, the first lane of each row
        // group writes it), so warp `c` then reads column vector `c`'s 32 partials, one a
        // lane. Rows of `32 vs + 1` put a warp's writers on distinct banks; the lanes' reads are
        // consecutive words (XLA's `[c, w * vs + v]` reads `vs` words apart: `vs`-way bank
        // conflicts).
        let mut write_map = shared_tile_map(
            threads,
            vs,
            vec![lane_column.clone(), sym(0) * TILE_SIZE + warp.clone()],
        );
        if rows_per_warp > 1 {
            write_map.add_constraint(lane_row.clone(), Interval::new(0, 0));
        }
        let th = delinearize(dim(0), &[TILE_SIZE, TILE_SIZE]);
        let mut read_map = shared_tile_map(
            threads,
            vs,
            vec![th[0].clone(), sym(0) * TILE_SIZE + th[1].clone()],
        );
        if lanes < TILE_SIZE {
            read_map.add_constraint(th[0].clone(), Interval::new(0, lanes - 1));
        }
        let mut tile_shape = vec![lanes, TILE_SIZE * vs];
        if tile_shape[1] % crate::Target::WARP_SIZE == 0 {
            tile_shape[1] += 1;
        }
        // Over `[reduced rows / rows_per_warp, rows_per_warp, kept columns]`: warp `w` takes
        // row groups `w, w + 32, ..` (the batch outside the warp: the block's 1024 threads
        // are one subgroup), its lane `l` row `l mod rows_per_warp` of the group and the
        // vector of kept columns `(l / rows_per_warp) * vs ..`.
        let layout = NestedLayout {
            subgroup_tile: vec![1, 1, 1],
            batch_tile: vec![rows_per_thread, 1, 1],
            outer_tile: vec![1, 1, 1],
            thread_tile: vec![TILE_SIZE, rows_per_warp, lanes],
            element_tile: vec![1, 1, vs],
            subgroup_strides: vec![0, 0, 0],
            thread_strides: vec![TILE_SIZE, (rows_per_warp > 1) as i64, rows_per_warp],
        };
        Tiling {
            kind: ReductionKind::Column,
            threads,
            blocks,
            vector_size: vs,
            input_shape,
            input_map,
            vector_symbol: Some(1),
            output_map,
            first_shuffle: (rows_per_warp > 1).then_some(rows_per_warp / 2),
            layout: Some(layout),
            shared: Some(SharedStage {
                write_map,
                read_map,
                tile_shape,
                max_distance: TILE_SIZE / 2,
            }),
        }
    }

    fn small_column(rd: &ReductionDimensions, widths: ElementWidths) -> Tiling {
        let [d0, d1, d2] = rd.dims;
        let mut vs = vector_size(d1 * d2, TILE_SIZE, widths);
        let mut threads = 128;
        let mut shared_rows = vs * threads / d2;
        while shared_rows > TILE_SIZE && vs > 1 {
            vs /= 2;
            shared_rows /= 2;
        }
        if shared_rows > TILE_SIZE {
            threads /= shared_rows / TILE_SIZE;
            shared_rows = TILE_SIZE;
        }
        let blocks = d0;
        let loop_size = ceil_div(d1 * d2, vs * threads);
        let linear = dim(0) * vs + sym(1) + sym(0) * (vs * threads);
        let input_shape = vec![d0, d1, d2];
        let input_map = bounded(
            grid_dims(threads, blocks),
            symbols(&["loop", "vector_index"], &[loop_size, vs]),
            vec![dim(1), linear.clone().floor_div(d2), linear.modulo(d2)],
            &input_shape,
        );
        let mut output_map = bounded(
            grid_dims(threads, blocks),
            symbols(&["vector_index"], &[vs]),
            vec![dim(1), (dim(0) + sym(0) * threads).floor_div(shared_rows)],
            &[d0, d2],
        );
        output_map.add_constraint(dim(0).modulo(shared_rows), Interval::new(0, 0));
        let write = delinearize(dim(0) * vs + sym(0), &[shared_rows, d2]);
        let read = delinearize(dim(0) + sym(0) * threads, &[d2, shared_rows]);
        let write_map = shared_tile_map(threads, vs, write);
        let read_map = shared_tile_map(threads, vs, vec![read[1].clone(), read[0].clone()]);
        // The least padding without bank conflicts (XLA's comment: at most 1.5 × threads ×
        // vector elements instead of the column emitter's 1056 × vector²).
        let padding = if threads == 32 && vs == 1 {
            0
        } else {
            ceil_div(d2, threads * vs)
        };
        Tiling {
            kind: ReductionKind::SmallColumn,
            threads,
            blocks,
            vector_size: vs,
            input_shape,
            input_map,
            vector_symbol: Some(1),
            output_map,
            first_shuffle: None,
            layout: (d2 % vs == 0).then(|| {
                // Thread `th` reads `vs` elements at `th * vs` of the row-major slice, then
                // `vs * threads` further per iteration: `d2 / vs` lanes across a row,
                // `shared_rows` rows at a time. When a vector straddles two rows (`d2` not a
                // multiple of `vs`), no layout says it.
                NestedLayout {
                    subgroup_tile: vec![1, 1],
                    batch_tile: vec![loop_size, 1],
                    outer_tile: vec![1, 1],
                    thread_tile: vec![shared_rows, d2 / vs],
                    element_tile: vec![1, vs],
                    subgroup_strides: vec![0, 0],
                    thread_strides: vec![d2 / vs, 1],
                }
            }),
            shared: Some(SharedStage {
                write_map,
                read_map,
                tile_shape: vec![shared_rows, d2 + padding],
                max_distance: shared_rows / 2,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tiling of a column reduction of `dims` whose elements have `bits` bits.
    fn column_tiling(dims: [i64; 3], bits: i64) -> Tiling {
        let widths = ElementWidths {
            smallest_input_bits: bits,
            smallest_output_bits: bits,
        };
        Tiling::new(
            &ReductionDimensions {
                is_row: false,
                dims,
            },
            widths,
            crate::Choices::Tuned,
        )
        .unwrap()
    }

    /// A column reduction's shared tile has no bank conflicts: at each vector index, the
    /// lanes of a warp that write (the first of each row group) and those that read (the
    /// first `lanes` warps) touch distinct 32-bit banks. Column vectors of 2 (XLA's) and 4
    /// elements of 32 bits. (16-bit partials share words two to one; a row of `32 vs + 1`
    /// of them, XLA's padding, puts two writers' words on one bank.)
    #[test]
    fn column_tiles_have_no_bank_conflicts() {
        for (dims, bits) in [
            ([1, 64, 258], 32),
            ([1, 4096, 256], 32),
            ([3, 2048, 128], 32),
        ] {
            let t = column_tiling(dims, bits);
            let shared = t.shared.as_ref().unwrap();
            let row = shared.tile_shape[1];
            for map in [&shared.write_map, &shared.read_map] {
                for v in 0..t.vector_size {
                    for warp in 0..TILE_SIZE {
                        // Lanes reading one word share it: a conflict is two words on
                        // one bank.
                        let words: std::collections::BTreeSet<i64> = (warp * 32..warp * 32 + 32)
                            .filter(|&th| map.contains(&[th], &[v]))
                            .map(|th| {
                                let at = map.eval(&[th], &[v]);
                                (at[0] * row + at[1]) * bits / 32
                            })
                            .collect();
                        let banks: std::collections::HashSet<i64> =
                            words.iter().map(|w| w % 32).collect();
                        assert_eq!(banks.len(), words.len(), "{dims:?} {bits}: warp {warp}");
                    }
                }
            }
        }
    }

    /// A column reduction reads every input element once and writes every output element
    /// once, across all blocks, at XLA's vector and at wider ones (2 and 4 rows a warp,
    /// ragged rows and columns).
    #[test]
    fn column_tilings_cover_the_input_and_output_once() {
        for (dims, bits, rows_per_warp) in [
            ([2, 70, 258], 32, 1),
            ([1, 2050, 132], 32, 2),
            ([1, 8320, 64], 16, 4),
        ] {
            let t = column_tiling(dims, bits);
            assert_eq!(t.layout.as_ref().unwrap().thread_tile[1], rows_per_warp);
            let mut reads = vec![0u8; (dims[0] * dims[1] * dims[2]) as usize];
            let mut writes = vec![0u8; (dims[0] * dims[2]) as usize];
            for bl in 0..t.blocks {
                for th in 0..t.threads {
                    for row in 0..t.input_map.range_vars[0].bounds.hi + 1 {
                        for v in 0..t.vector_size {
                            if t.input_map.contains(&[th, bl], &[row, v]) {
                                let i = t.input_map.eval(&[th, bl], &[row, v]);
                                reads[((i[0] * dims[1] + i[1]) * dims[2] + i[2]) as usize] += 1;
                            }
                        }
                    }
                    for v in 0..t.vector_size {
                        if t.output_map.contains(&[th, bl], &[v]) {
                            let o = t.output_map.eval(&[th, bl], &[v]);
                            writes[(o[0] * dims[2] + o[1]) as usize] += 1;
                        }
                    }
                }
            }
            assert!(reads.iter().all(|&n| n == 1), "{dims:?}: reads");
            assert!(writes.iter().all(|&n| n == 1), "{dims:?}: writes");
        }
    }

    /// Each layout's map is the input map: at every thread and loop point of block 0, the
    /// layout's index is the index the tiling reads (row kinds: the vector's position
    /// folded into the minor index).
    #[test]
    fn the_layouts_are_the_input_maps() {
        let widths = |bits| ElementWidths {
            smallest_input_bits: bits,
            smallest_output_bits: bits,
        };
        for (is_row, dims, bits, kind) in [
            (true, [1, 64, 4096], 32, ReductionKind::Row),
            (true, [3, 2, 2000], 16, ReductionKind::Row),
            (true, [2, 300, 8], 32, ReductionKind::MultiRow),
            (true, [1, 1000, 32], 16, ReductionKind::MultiRow),
            (false, [1, 64, 256], 32, ReductionKind::Column),
            (false, [1, 96, 128], 16, ReductionKind::Column),
            (false, [1, 40, 64], 64, ReductionKind::Column),
            (false, [1, 50, 256], 8, ReductionKind::Column),
            (false, [1, 70, 258], 32, ReductionKind::Column),
            // Strips long enough for the wider vector: 2 rows a warp (a ragged last row
            // group), and 4.
            (false, [1, 2050, 128], 32, ReductionKind::Column),
            (false, [1, 8320, 64], 16, ReductionKind::Column),
            (false, [100, 64, 2], 32, ReductionKind::SmallColumn),
            (false, [10, 200, 8], 32, ReductionKind::SmallColumn),
            (false, [11, 32, 8], 16, ReductionKind::SmallColumn),
        ] {
            let rd = ReductionDimensions { is_row, dims };
            let t = Tiling::new(&rd, widths(bits), crate::Choices::Tuned).unwrap();
            assert_eq!(t.kind, kind, "{dims:?}");
            let layout = t.layout.clone().unwrap();
            layout.verify(None, None).unwrap();
            let map = layout.to_indexing_map();
            let rank = layout.rank();
            let symbols = &t.input_map.range_vars;
            let points = symbols.iter().fold(vec![Vec::new()], |points, v| {
                points
                    .iter()
                    .flat_map(|p| {
                        (v.bounds.lo..=v.bounds.hi).map(move |x| {
                            let mut q: Vec<i64> = p.clone();
                            q.push(x);
                            q
                        })
                    })
                    .collect::<Vec<_>>()
            });
            for th in 0..t.threads {
                for s in &points {
                    if !t.input_map.contains(&[th, 0], s) {
                        continue;
                    }
                    let read = t.input_map.eval(&[th, 0], s);
                    // Layout symbols: batch.., outer.., element.. (rank each).
                    let mut at = vec![0; 3 * rank];
                    let want = match kind {
                        ReductionKind::Row => {
                            (at[0], at[2], at[8]) = (s[0], s[1], s[2]);
                            let vs = t.vector_size;
                            vec![read[0], read[1], read[2] * vs + read[3]]
                        }
                        ReductionKind::MultiRow => {
                            (at[0], at[8]) = (s[0], s[1]);
                            read
                        }
                        ReductionKind::Column => {
                            (at[0], at[8]) = (s[0], s[1]);
                            let rows_per_warp = layout.thread_tile[1];
                            vec![read[1] / rows_per_warp, read[1] % rows_per_warp, read[2]]
                        }
                        ReductionKind::SmallColumn => {
                            (at[0], at[5]) = (s[0], s[1]);
                            read[1..].to_vec()
                        }
                    };
                    assert_eq!(map.eval(&[th, 0], &at), want, "{dims:?}, {bits} bits");
                }
            }
        }
    }
}
