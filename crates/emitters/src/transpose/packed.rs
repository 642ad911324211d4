//! The packed transpose (XLA's `PackedTranspose`): the tiling for 8- and 16-bit elements
//! that keeps the shared tile and its bank pattern those of a 32-bit transpose; and, ours,
//! for 32-bit elements (`vs = 1`) whose rows it moves 128 bits wide.
//!
//! `vs = 32 / element bits` elements (2 for 16-bit types, 4 for 8-bit ones and `pred`) share
//! one 32-bit word of shared memory. The transpose is put in the form
//! `[.., T2, .., A, T1] -> [.., T1, .., A, T2]`: `T1` is the input's minor dimension, `T2`
//! the output's, and `A` the dimension that stays just before them (a unit one is inserted
//! when none does). A block of 128 threads moves a tile of `tT2` rows by `cols = tA * tT1`
//! columns through a shared tile of `S x S` elements, `S = 32 * vs` (32 words a row): `tT1 =
//! min(T1, S)`, `tA = min(A, S / tT1)`, `tT2 = min(T2, S)`. Several short `T1` rows side by
//! side (`A`) fill one row of the tile, so transposes with a small minor dimension get a full
//! tile too (`s16[2,4,64,10,6] -> [4,2,6,10,64]` moves 64 x 60 tiles).
//!
//! An access of the tile's rows moves
//! `a` words, `v = a * vs` elements: the widest of 4, 2 and 1 words (128, 64 or 32 bits) for
//! which the tile's columns, `tT1` and `T1` are whole vectors of `v`, so that every vector
//! lies in one input row, aligned to its size.
//!
//! * **Reading** (symbols `l`, `j < v`): `32 / a` threads a row, `4a` rows an iteration:
//!   thread `th` reads tile row `row = 4a l + th / (32 / a)`, `v` elements side by side,
//!   `col = (th mod (32 / a)) * v + j`: one coalesced access of `a` words per thread.
//! * **Shared tile**: `32` row groups of `vs` rows each, a group `vs` rows of 32 words and
//!   `p` padding words: element `(row, col)` is element `(row mod vs) * S + col` of group
//!   `row / vs`, a tensor `[32, vs * S + p vs]`. The threads writing one row write its 32
//!   consecutive words: 32 banks (an access of `a` words is served `32 / a` threads at a
//!   time). XLA swizzles instead (word `(col / vs + row / vs) mod 32` of an unpadded `S x S`
//!   tile). Both are free of bank conflicts, but the swizzle's `mod 32` costs about four
//!   integer instructions per shared access (the 021 bf16 model: 231 SASS instructions with
//!   it), while every padded address is the thread's base plus a constant, an immediate
//!   offset of the access; the price is `32 p vs` bytes of padding (8704 bytes for bf16
//!   with `p = 4`, not 8192).
//! * **Writing** (symbols `l`, `ch < c`, `rv < u`): a thread writes `u = b vs` consecutive
//!   elements of an output row at once, `b` words (128, 64 or 32 bits), the widest of which
//!   the tile's rows and `T2` are whole vectors. So it takes a block of `u` tile rows by `c =
//!   r vs` columns, reading `r` words of each row (`r <= a`, and the block at most 64 bytes):
//!   `4b` threads side by side along the columns, `32 / b` along the rows, thread `th` the
//!   block of rows `(th / 4b) u + rv` and columns `(4b l + th mod 4b) c + ch`. For each
//!   column `ch` it writes the `u` elements `rv` side by side in the output's minor
//!   dimension (`T2`); the threads of a warp that write one output row cover 32 bytes of it
//!   (a whole sector). The 021 bf16 model: `u = 8`, `c = 4`, eight 64-bit shared reads and
//!   four 128-bit stores a thread, as Triton's stores (XLA writes `vs` elements, 32 bits).
//!   The `32 / r` lanes shared memory serves together read one row block when `b r >= 8`
//!   (words `cb r + j` of one row: 32 banks) and need `p = a`; else they span `32 / 4br`
//!   row blocks, and `p = max(a, 4r)` puts each on the next `4br` banks (a row block is `b`
//!   groups, `b p` words on).
//!
//! XLA's conditions, all of which must hold: elements narrower than 32 bits (sub-byte types
//! stay with the loop emitter, as in XLA), the minor dimension moves, `rows = tT2` and
//! `cols` are both at least `10 * vs` and multiples of `vs`, and so is `T2 mod tT2` (the
//! last tile's rows). Partial tiles at the edges are masked per element by the maps'
//! constraints.
//!
//! 32-bit elements (issue 22): XLA keeps them in its classic `32 x 33` tile, 32 bits an
//! access (its `kMaxVectorizedBytes = 4`), eight elements and 32 memory instructions a
//! thread. Where the input's and the output's rows are both whole 128-bit vectors, this tile
//! with `vs = 1` moves them as Triton does: a thread reads two `LDG.E.128`, writes two
//! `STS.128`, reads four `LDS.64` and stores two `STG.E.128` (10 memory instructions), in
//! a `32 x 36` tile with no bank conflicts. Elsewhere they keep XLA's tile.

use indexing::nested_layout::NestedLayout;
use indexing::{AffineExpr, IndexingMap, Interval, Variable, cst, delinearize, dim, sym};

use super::TransposeDescription;
use crate::transpose::tiling::THREADS_PER_BLOCK;

/// Bits of a shared-memory word (a bank).
const WORD_BITS: i64 = 32;
/// A tile needs at least this many vectors of `vs` elements in each of its two dimensions.
const MIN_VECTORS_PER_TILE_DIMENSION: i64 = 10;
/// Words a thread moves in one access of the tile's rows, the widest the tile allows:
/// 128-, 64- or 32-bit accesses. The output's rows are stored as wide.
const ACCESS_WORDS: [i64; 3] = [4, 2, 1];
/// The most bytes of the tile a thread holds in registers to transpose at once (16
/// registers): what bounds a thread's block in the writing loop.
const MAX_BLOCK_BYTES: i64 = 64;
/// The widest store a thread issues: 128 bits.
const MAX_STORE_BITS: i64 = 128;

/// How the blocks and threads of a packed transpose cover it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedTiling {
    /// The normalized transpose with the `A` dimension at input (and output) position
    /// `rank - 2`, a unit one if the normalized form has none there.
    pub description: TransposeDescription,
    /// Elements per 32-bit word.
    pub vector_size: i64,
    /// Words a thread moves in one access of the tile's rows (`a`: 1, 2 or 4).
    access_words: i64,
    /// Words of an output row a thread writes at once (`b`: 4, 2 or 1), `u = b * vs`
    /// elements: `u` consecutive tile rows of one column.
    store_words: i64,
    /// Words of a tile row a thread reads at once in the writing loop (`r`: 4, 2 or 1),
    /// `c = r * vs` columns of each of its `u` rows.
    row_words: i64,
    /// The input dimension of `T2` (the output's minor dimension).
    t2: usize,
    /// The tile over the input dimensions: `tT2`, `tA`, `tT1` where those are, 1 elsewhere.
    block_sizes: Vec<i64>,
    /// Tiles per input dimension.
    block_counts: Vec<i64>,
}

impl PackedTiling {
    /// The packed tiling of `description` for elements of `bits` bits whose widest output
    /// element has `stored_bits` (wider than `bits` where the fusion converts after the
    /// transpose), if the packed tile takes it (XLA's conditions; for 32 bits, ours: 128-bit
    /// rows both ways).
    pub fn new(
        description: &TransposeDescription,
        bits: i64,
        stored_bits: i64,
    ) -> Option<PackedTiling> {
        if !(8..=WORD_BITS).contains(&bits)
            || description.rank() < 2
            || description.minor_dim_kept()
            || description.input_dims.contains(&0)
        {
            return None;
        }
        let vs = WORD_BITS / bits;
        let description = with_a_dimension(description);
        let m = description.rank();
        let dims = &description.input_dims;
        let t2 = description.permutation[m - 1];
        let side = crate::Target::WARP_SIZE * vs;
        let tile_t1 = dims[m - 1].min(side);
        let tile_a = dims[m - 2].min(side / tile_t1);
        let tile_t2 = dims[t2].min(side);
        let (rows, cols) = (tile_t2, tile_a * tile_t1);
        let fits = rows >= MIN_VECTORS_PER_TILE_DIMENSION * vs
            && cols >= MIN_VECTORS_PER_TILE_DIMENSION * vs
            && rows % vs == 0
            && cols % vs == 0
            && (dims[t2] % tile_t2) % vs == 0;
        if !fits {
            return None;
        }
        // The widest access whose vectors each lie in one input row (the tile's columns
        // and `tT1` hold whole vectors) and start aligned to their size (so does `T1`).
        let access_words = ACCESS_WORDS
            .into_iter()
            .find(|&a| {
                let v = a * vs;
                cols % v == 0 && tile_t1 % v == 0 && dims[m - 1] % v == 0
            })
            .unwrap_or(1);
        // The widest output vector of whole words (`u` tile rows) that every tile's rows
        // hold whole, that starts aligned to its size (so does `T2`), and that every output
        // stores in one instruction (`u` elements of `stored_bits`, at most 128 bits). A
        // vector split over two stores leaves each store's lanes writing half sectors, 16
        // bytes apart: a bf16 tile stored as f32 with `u = 8` (transpose_210_bf16) ran at 45%
        // of copy on an H200 (bench/RESULTS.md, 2026-11-28).
        let store_words = ACCESS_WORDS
            .into_iter()
            .find(|&b| {
                let u = b * vs;
                rows % u == 0 && dims[t2] % u == 0 && u * stored_bits <= MAX_STORE_BITS
            })
            .unwrap_or(1);
        // 32-bit elements take this tile only where it moves both rows 128 bits wide (issue
        // 22: Triton's accesses); else XLA's classic tile, which moves them 32 bits wide.
        if bits == WORD_BITS && (access_words, store_words) != (4, 4) {
            return None;
        }
        // As many words of each row as a thread's block of `MAX_BLOCK_BYTES` holds, no more
        // than the reading access (so the group stride, `32 vs + p` words with `p` a
        // multiple of `a`, keeps them aligned), and no more than one iteration's `4b`
        // threads side by side spread over a tile row's 32 words (`b r <= 8`, which only
        // the byte bound leaves open at one element a word).
        let block_words = MAX_BLOCK_BYTES / 4 / (store_words * vs);
        let row_words = access_words
            .min(block_words)
            .min(crate::Target::WARP_SIZE / writing_threads_across(store_words))
            .max(1);
        let mut block_sizes = vec![1; m];
        block_sizes[t2] = tile_t2;
        block_sizes[m - 2] = tile_a;
        block_sizes[m - 1] = tile_t1;
        let block_counts = dims
            .iter()
            .zip(&block_sizes)
            .map(|(&d, &b)| (d + b - 1) / b)
            .collect();
        Some(PackedTiling {
            description,
            vector_size: vs,
            access_words,
            store_words,
            row_words,
            t2,
            block_sizes,
            block_counts,
        })
    }

    pub fn num_blocks(&self) -> i64 {
        self.block_counts.iter().product()
    }

    /// Rows of the tile (along `T2`).
    fn rows(&self) -> i64 {
        self.block_sizes[self.t2]
    }

    /// Columns of the tile (`A` and `T1` together).
    fn cols(&self) -> i64 {
        let m = self.description.rank();
        self.block_sizes[m - 2] * self.block_sizes[m - 1]
    }

    /// `S = 32 * vs`: the elements of a tile row, 32 words.
    fn side(&self) -> i64 {
        crate::Target::WARP_SIZE * self.vector_size
    }

    /// Elements a thread moves in one access of a tile row (`v = a * vs`).
    pub fn elements_per_access(&self) -> i64 {
        self.access_words * self.vector_size
    }

    /// Threads that read one tile row (`32 / a`).
    fn threads_per_row(&self) -> i64 {
        crate::Target::WARP_SIZE / self.access_words
    }

    /// Tile rows one iteration of the reading loop covers (`4a`).
    fn rows_per_iteration(&self) -> i64 {
        THREADS_PER_BLOCK / self.threads_per_row()
    }

    /// Elements of an output row a thread writes at once (`u = b * vs`).
    fn store_elements(&self) -> i64 {
        self.store_words * self.vector_size
    }

    /// Columns of each of its rows a thread reads at once in the writing loop (`c = r * vs`).
    fn row_elements(&self) -> i64 {
        self.row_words * self.vector_size
    }

    /// Threads along the tile's columns in the writing loop (`4b`; `32 / b` along its rows).
    fn writing_threads_per_row_block(&self) -> i64 {
        writing_threads_across(self.store_words)
    }

    /// Padding words after each group of `vs` rows: `a`, which keeps the reading loop's
    /// accesses aligned, where the `32 / r` lanes shared memory serves together in the
    /// writing loop read one row block (`b r >= 8`); else `max(a, 4r)`, which puts the next
    /// row block on the next banks (see the module documentation).
    fn padding_words(&self) -> i64 {
        if self.store_words * self.row_words >= 8 {
            self.access_words
        } else {
            self.access_words.max(4 * self.row_words)
        }
    }

    /// `[32, vs * S + p * vs]`: 32 groups of `vs` rows of `S` elements and `p` padding words.
    pub fn shared_tile_shape(&self) -> Vec<i64> {
        let vs = self.vector_size;
        vec![
            crate::Target::WARP_SIZE,
            vs * self.side() + self.padding_words() * vs,
        ]
    }

    /// The shared-tile position of tile element `(row, col)`: group `row / vs`, element
    /// `(row mod vs) * S + col` of it.
    fn shared_position(&self, row: AffineExpr, col: AffineExpr) -> Vec<AffineExpr> {
        let vs = self.vector_size;
        vec![
            row.clone().floor_div(vs),
            row.modulo(vs) * self.side() + col,
        ]
    }

    /// `(th_x, bl_x)[symbols]` with the given symbol ranges.
    fn grid_map(&self, symbols: &[(&str, i64)], results: Vec<AffineExpr>) -> IndexingMap {
        IndexingMap::new(
            vec![
                Variable::new("th_x", Interval::index_range(THREADS_PER_BLOCK)),
                Variable::new("bl_x", Interval::index_range(self.num_blocks())),
            ],
            symbols
                .iter()
                .map(|&(name, size)| Variable::new(name, Interval::index_range(size)))
                .collect(),
            Vec::new(),
            results,
        )
    }

    /// Iterations of the reading loop.
    fn read_iterations(&self) -> i64 {
        let per = self.rows_per_iteration();
        (self.rows() + per - 1) / per
    }

    /// Iterations of the writing loop.
    fn write_iterations(&self) -> i64 {
        let per = self.writing_threads_per_row_block() * self.row_elements();
        (self.cols() + per - 1) / per
    }

    /// The reading loop's domain `(th_x, bl_x)[s0, s1]` (`l`, `j`) with `results`.
    fn read_map(&self, results: Vec<AffineExpr>) -> IndexingMap {
        let symbols = [
            ("s0", self.read_iterations()),
            ("s1", self.elements_per_access()),
        ];
        self.grid_map(&symbols, results)
    }

    /// The writing loop's domain `(th_x, bl_x)[s0, s1, s2]` (`l`, `ch`, `rv`) with `results`.
    fn write_map(&self, results: Vec<AffineExpr>) -> IndexingMap {
        let symbols = [
            ("s0", self.write_iterations()),
            ("s1", self.row_elements()),
            ("s2", self.store_elements()),
        ];
        self.grid_map(&symbols, results)
    }

    /// The tile row and column of the element a thread reads, in the reading loop.
    fn read_position(&self) -> (AffineExpr, AffineExpr) {
        let per_row = self.threads_per_row();
        let row = sym(0) * self.rows_per_iteration() + dim(0).floor_div(per_row);
        let col = dim(0).modulo(per_row) * self.elements_per_access() + sym(1);
        (row, col)
    }

    /// The tile row and column of the element a thread writes, in the writing loop.
    fn write_position(&self) -> (AffineExpr, AffineExpr) {
        let across = self.writing_threads_per_row_block();
        let row = dim(0).floor_div(across) * self.store_elements() + sym(2);
        let col = (sym(0) * across + dim(0).modulo(across)) * self.row_elements() + sym(1);
        (row, col)
    }

    /// The offset within the tile of input dimension `i` at tile position `(row, col)`.
    fn tile_offset(&self, i: usize, row: &AffineExpr, col: &AffineExpr) -> AffineExpr {
        let m = self.description.rank();
        let tile_t1 = self.block_sizes[m - 1];
        match i {
            _ if i == self.t2 => row.clone(),
            _ if i == m - 2 => col.clone().floor_div(tile_t1),
            _ if i == m - 1 => col.clone().modulo(tile_t1),
            _ => cst(0),
        }
    }

    /// `map` constrained to the tile (`row < rows`, `col < cols`) and to `bounds`.
    fn bounded(
        &self,
        mut map: IndexingMap,
        (row, col): (AffineExpr, AffineExpr),
        bounds: &[i64],
    ) -> IndexingMap {
        map.add_constraint(row, Interval::index_range(self.rows()));
        map.add_constraint(col, Interval::index_range(self.cols()));
        for (e, &size) in map.results.clone().into_iter().zip(bounds) {
            map.add_constraint(e, Interval::index_range(size));
        }
        map.simplified()
    }

    /// `(th_x, bl_x)[l, j]` → the input index the thread reads.
    pub fn input_indexing(&self) -> IndexingMap {
        let (row, col) = self.read_position();
        let block_ids = delinearize(dim(1), &self.block_counts);
        let results = (0..self.description.rank())
            .map(|i| block_ids[i].clone() * self.block_sizes[i] + self.tile_offset(i, &row, &col))
            .collect();
        let map = self.read_map(results);
        self.bounded(map, (row, col), &self.description.input_dims)
    }

    /// `(th_x, bl_x)[l, vh, vv]` → the output index the thread writes.
    pub fn output_indexing(&self) -> IndexingMap {
        let (row, col) = self.write_position();
        let block_ids = delinearize(dim(1), &self.block_counts);
        let results = self
            .description
            .permutation
            .iter()
            .map(|&p| block_ids[p].clone() * self.block_sizes[p] + self.tile_offset(p, &row, &col))
            .collect();
        let map = self.write_map(results);
        self.bounded(map, (row, col), &self.description.output_dims())
    }

    /// `(th_x, bl_x)[l, j]` → the padded shared-tile position of the element read.
    pub fn shared_write_indexing(&self) -> IndexingMap {
        let (row, col) = self.read_position();
        self.read_map(self.shared_position(row, col)).simplified()
    }

    /// `(th_x, bl_x)[l, vh, vv]` → the padded shared-tile position of the element written.
    pub fn shared_read_indexing(&self) -> IndexingMap {
        let (row, col) = self.write_position();
        self.write_map(self.shared_position(row, col)).simplified()
    }
}

impl PackedTiling {
    /// How a block's threads cover the tile when reading it, as a nested layout (issue 21)
    /// over `[4a * iterations, S]` (rows, columns): row `4a l + th / (32 / a)`, column `(th
    /// mod (32 / a)) * v + j`. As in the classic tiling, the block's 128 threads are one
    /// subgroup (threads `[4a, 32 / a]`, strides `[32 / a, 1]`).
    pub fn read_layout(&self) -> NestedLayout {
        let per_row = self.threads_per_row();
        NestedLayout {
            subgroup_tile: vec![1, 1],
            batch_tile: vec![self.read_iterations(), 1],
            outer_tile: vec![1, 1],
            thread_tile: vec![self.rows_per_iteration(), per_row],
            element_tile: vec![1, self.elements_per_access()],
            subgroup_strides: vec![0, 0],
            thread_strides: vec![per_row, 1],
        }
    }

    /// How they cover it when writing, over `[S, 4b * iterations * c]` (rows, columns): each
    /// thread a `u x c` block, rows `(th / 4b) * u + rv`, columns `(4b l + th mod 4b) * c +
    /// ch` (threads `[32 / b, 4b]`, strides `[4b, 1]`; the elements `[u, c]` are the block the
    /// registers transpose).
    pub fn write_layout(&self) -> NestedLayout {
        let across = self.writing_threads_per_row_block();
        NestedLayout {
            subgroup_tile: vec![1, 1],
            batch_tile: vec![1, self.write_iterations()],
            outer_tile: vec![1, 1],
            thread_tile: vec![THREADS_PER_BLOCK / across, across],
            element_tile: vec![self.store_elements(), self.row_elements()],
            subgroup_strides: vec![0, 0],
            thread_strides: vec![across, 1],
        }
    }
}

/// Threads side by side along the tile's columns in the writing loop when each writes `b`
/// words of an output row (`4b`: the other `32 / b` go along its rows).
fn writing_threads_across(store_words: i64) -> i64 {
    THREADS_PER_BLOCK * store_words / crate::Target::WARP_SIZE
}

/// `description` with a dimension at input and output position `rank - 2` that the
/// transpose keeps in place: the normalized one if there is one, else a unit dimension
/// inserted before the minor dimension on both sides.
fn with_a_dimension(description: &TransposeDescription) -> TransposeDescription {
    let n = description.rank();
    let p = &description.permutation;
    if n >= 3 && p[n - 2] == n - 2 {
        return description.clone();
    }
    let shift = |k: usize| if k == n - 1 { n } else { k };
    let mut input_dims = description.input_dims.clone();
    input_dims.insert(n - 1, 1);
    let mut permutation: Vec<usize> = p.iter().map(|&k| shift(k)).collect();
    permutation.insert(n - 1, n - 1);
    TransposeDescription {
        input_dims,
        permutation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transpose::tiling::tests::check_bijection;

    fn packed(dims: &[i64], perm: &[usize], bits: i64) -> Option<PackedTiling> {
        PackedTiling::new(
            &TransposeDescription {
                input_dims: dims.to_vec(),
                permutation: perm.to_vec(),
            },
            bits,
            bits,
        )
    }

    /// A thread's output vector is one store of the widest output: a bf16 tile stored as
    /// f32 writes 4 elements (128 bits), not 8 in two stores whose lanes fall half a sector
    /// apart; stored as bf16 it writes 8.
    #[test]
    fn an_output_vector_is_one_store_of_the_widest_output() {
        let d = TransposeDescription {
            input_dims: vec![1024, 32, 1024],
            permutation: vec![2, 1, 0],
        };
        let as_f32 = PackedTiling::new(&d, 16, 32).unwrap();
        assert_eq!(as_f32.store_elements(), 4);
        assert_eq!(PackedTiling::new(&d, 16, 16).unwrap().store_elements(), 8);
        // 8-bit elements (4 a word) stored as f32: one word, 4 elements.
        assert_eq!(PackedTiling::new(&d, 8, 32).unwrap().store_elements(), 4);
        // A 32-bit tile stored as f64 cannot store whole 128-bit rows: XLA's classic tile.
        assert!(PackedTiling::new(&d, 32, 64).is_none());
        check_bijection(
            &as_f32.description,
            as_f32.num_blocks(),
            [&as_f32.input_indexing(), &as_f32.shared_write_indexing()],
            [&as_f32.output_indexing(), &as_f32.shared_read_indexing()],
        );
    }

    #[test]
    fn a_unit_a_dimension_is_inserted_when_the_transpose_keeps_none() {
        let t = packed(&[8192, 4096], &[1, 0], 16).unwrap();
        assert_eq!(t.description.input_dims, vec![8192, 1, 4096]);
        assert_eq!(t.description.permutation, vec![2, 1, 0]);
        assert_eq!(t.shared_tile_shape(), vec![32, 136]);
        assert_eq!(t.elements_per_access(), 8);
        assert_eq!(t.num_blocks(), 128 * 64);
    }

    #[test]
    fn short_minor_rows_share_a_tile_row() {
        // XLA's packed_transpose_s16 test: T2 = 64, A = 10, T1 = 6 -> 64 x 60 tiles.
        let t = packed(&[2, 4, 64, 10, 6], &[1, 0, 4, 3, 2], 16).unwrap();
        assert_eq!(t.block_sizes, vec![1, 1, 64, 10, 6]);
        assert_eq!((t.rows(), t.cols()), (64, 60));
        assert_eq!(t.num_blocks(), 8);
    }

    #[test]
    fn xla_s_conditions_decide() {
        // Sub-byte elements, a kept minor dimension: never packed.
        assert!(packed(&[256, 256], &[1, 0], 4).is_none());
        assert!(packed(&[256, 256, 4], &[1, 0, 2], 8).is_none());
        // Fewer than 10 vectors per tile dimension.
        assert!(packed(&[18, 256], &[1, 0], 16).is_none());
        assert!(packed(&[20, 256], &[1, 0], 16).is_some());
        // The last tile's rows must be whole vectors: 66 mod 64 = 2 is, 65 mod 64 is not.
        assert!(packed(&[66, 256], &[1, 0], 16).is_some());
        assert!(packed(&[65, 256], &[1, 0], 16).is_none());
        assert_eq!(packed(&[256, 256], &[1, 0], 8).unwrap().vector_size, 4);
        // 32-bit elements only where both rows are whole 128-bit vectors (ours, not XLA's).
        assert_eq!(packed(&[256, 256], &[1, 0], 32).unwrap().vector_size, 1);
        assert!(packed(&[256, 250], &[1, 0], 32).is_none());
        assert!(packed(&[250, 256], &[1, 0], 32).is_none());
        assert!(packed(&[256, 256], &[1, 0], 64).is_none());
    }

    /// The packed transposes whose maps the tests below check: partial tiles in every tiled
    /// dimension, batch dimensions, a kept `A` dimension and an inserted one, 8, 16 and 32
    /// bits; as (input dimensions, permutation, bits).
    fn packed_cases() -> [(Vec<i64>, Vec<usize>, i64); 11] {
        [
            (vec![70, 130], vec![1, 0], 16),
            (vec![70, 132], vec![1, 0], 16),
            (vec![70, 136], vec![1, 0], 16),
            (vec![3, 52, 92], vec![0, 2, 1], 8),
            (vec![3, 52, 96], vec![0, 2, 1], 8),
            (vec![2, 4, 64, 10, 6], vec![1, 0, 4, 3, 2], 16),
            (vec![40, 3, 12, 8], vec![3, 1, 2, 0], 16),
            (vec![68, 2, 200], vec![2, 1, 0], 8),
            (vec![68, 132], vec![1, 0], 32),
            (vec![3, 52, 92], vec![0, 2, 1], 32),
            (vec![40, 3, 12, 8], vec![3, 1, 2, 0], 32),
        ]
    }

    /// The nested layouts' maps are the tiling's positions: at every thread and loop point
    /// of each loop, the layout's (row, column) is the tile position the thread reads or
    /// writes.
    #[test]
    fn the_thread_layouts_are_the_tiling() {
        for (dims, perm, bits) in packed_cases() {
            let t = packed(&dims, &perm, bits).unwrap_or_else(|| panic!("{dims:?} {bits}"));
            let (vs, v) = (t.vector_size, t.elements_per_access());
            let (read, write) = (t.read_layout(), t.write_layout());
            let read_iterations = read.batch_tile[0];
            let write_iterations = write.batch_tile[1];
            let (u, c) = (t.store_elements(), t.row_elements());
            read.verify(
                Some(&[t.rows_per_iteration() * read_iterations, 32 * vs]),
                None,
            )
            .unwrap_or_else(|e| panic!("{dims:?} {bits}: {e}"));
            write
                .verify(
                    Some(&[
                        32 * vs,
                        t.writing_threads_per_row_block() * write_iterations * c,
                    ]),
                    None,
                )
                .unwrap_or_else(|e| panic!("{dims:?} {bits}: {e}"));
            let (read_map, write_map) = (read.to_indexing_map(), write.to_indexing_map());
            let at = |(r, c): (AffineExpr, AffineExpr), th: i64, s: &[i64]| {
                [r.eval(&[th], s), c.eval(&[th], s)]
            };
            for th in 0..THREADS_PER_BLOCK {
                for l in 0..read_iterations {
                    for j in 0..v {
                        // batch0, batch1, outer0, outer1, element0, element1
                        let layout = read_map.eval(&[th, 0], &[l, 0, 0, 0, 0, j]);
                        assert_eq!(
                            layout,
                            at(t.read_position(), th, &[l, j]),
                            "{dims:?} {bits}"
                        );
                    }
                }
                for l in 0..write_iterations {
                    for ch in 0..c {
                        for rv in 0..u {
                            let layout = write_map.eval(&[th, 0], &[0, l, 0, 0, rv, ch]);
                            assert_eq!(
                                layout,
                                at(t.write_position(), th, &[l, ch, rv]),
                                "{dims:?} {bits}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The lanes of a warp that shared memory serves together (`32 / w` for accesses of `w`
    /// words: `a` when the reading loop writes the tile, `r` when the writing loop reads it)
    /// touch all 32 banks at every loop point of both loops: the padded tile has no bank
    /// conflicts, for 8-, 16- and 32-bit elements, every access width `a`, every output
    /// vector `b` and every row read `r`, with either padding.
    #[test]
    fn a_warp_s_shared_accesses_hit_32_banks() {
        // [T2, T1], bits, (a, b, r)
        for (dims, bits, words) in [
            ([256, 256], 32, (4, 4, 2)),
            ([256, 256], 16, (4, 4, 2)),
            ([256, 256], 8, (4, 4, 1)),
            ([248, 248], 8, (2, 2, 2)),
            ([252, 252], 16, (2, 2, 2)),
            ([250, 250], 16, (1, 1, 1)),
            ([256, 250], 8, (1, 4, 1)),
            ([252, 256], 16, (4, 2, 4)),
            ([250, 256], 16, (4, 1, 4)),
        ] {
            let t = packed(&dims, &[1, 0], bits).unwrap();
            let found = (t.access_words, t.store_words, t.row_words);
            assert_eq!(found, words, "{dims:?} {bits}");
            let vs = t.vector_size;
            let group_words = t.shared_tile_shape()[1] / vs;
            let word = |p: Vec<i64>| p[0] * group_words + p[1] / vs;
            for (map, words) in [
                (t.shared_write_indexing(), t.access_words),
                (t.shared_read_indexing(), t.row_words),
            ] {
                let served_together = crate::Target::WARP_SIZE / words;
                let points = crate::transpose::tiling::tests::symbol_points(&map);
                for first in (0..THREADS_PER_BLOCK).step_by(served_together as usize) {
                    // An access's first element (its other symbols' first point).
                    for s in points.iter().filter(|s| s[1] == 0) {
                        let banks: std::collections::HashSet<i64> = (first
                            ..first + served_together)
                            .flat_map(|th| {
                                let w = word(map.eval(&[th, 0], s));
                                (w..w + words).map(|w| w % 32)
                            })
                            .collect();
                        assert_eq!(banks.len(), 32, "{bits} bits, threads from {first}, {s:?}");
                    }
                }
            }
        }
    }

    /// Every input element read once, every output element written once, with the element
    /// the shared tile hands over.
    #[test]
    fn the_maps_transpose_every_element_exactly_once() {
        for (dims, perm, bits) in packed_cases() {
            let t = packed(&dims, &perm, bits).unwrap_or_else(|| panic!("{dims:?} {bits}"));
            check_bijection(
                &t.description,
                t.num_blocks(),
                [&t.input_indexing(), &t.shared_write_indexing()],
                [&t.output_indexing(), &t.shared_read_indexing()],
            );
        }
    }
}
