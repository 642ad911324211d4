//! The packed transpose (XLA's `PackedTranspose`): the tiling for 8- and 16-bit elements
//! that keeps the shared tile and its bank pattern those of a 32-bit transpose.
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
//! Thread `th` is lane `th mod 32` of warp `g = th / 32`. An access of the tile's rows moves
//! `a` words, `v = a * vs` elements: the widest of 4, 2 and 1 words (128, 64 or 32 bits) for
//! which the tile's columns, `tT1` and `T1` are whole vectors of `v`, so that every vector
//! lies in one input row, aligned to its size.
//!
//! * **Reading** (symbols `l`, `j < v`): `32 / a` threads a row, `4a` rows an iteration:
//!   thread `th` reads tile row `row = 4a l + th / (32 / a)`, `v` elements side by side,
//!   `col = (th mod (32 / a)) * v + j`: one coalesced access of `a` words per thread.
//! * **Shared tile**: `32` row groups of `vs` rows each, a group `vs` rows of 32 words and
//!   `a` padding words: element `(row, col)` is element `(row mod vs) * S + col` of group
//!   `row / vs`, a tensor `[32, vs * S + a vs]`. The threads writing one row write its 32
//!   consecutive words: 32 banks (an access of `a` words is served `32 / a` threads at a
//!   time). When reading, lane `lane` reads words `a w .. a w + a` of group `lane`, at word
//!   address `lane * (32 vs + a) + vv * 32 + a w`: banks `a (lane + w) mod 32` on, again all
//!   32 among the `32 / a` lanes served together. XLA swizzles instead (word `(col / vs +
//!   row / vs) mod 32` of an unpadded `S x S` tile). Both are free of bank conflicts, but
//!   the swizzle's `mod 32` costs about four integer instructions per shared access (the
//!   021 bf16 model: 231 SASS instructions with it), while every padded address is the
//!   thread's base plus a constant, an immediate offset of the access; the price is `32 a
//!   vs` bytes of padding (8704 bytes for bf16 with `a = 4`, not 8192).
//! * **Writing** (symbols `l`, `vh < v`, `vv < vs`): lane `lane` of warp `g` takes the
//!   `vs x v` block of rows `lane * vs + vv` and columns `w * v + vh`, `w = 4l + g` (`vs`
//!   shared reads of `a` words), and writes, for each `vh`, the `vs` elements `vv` side by
//!   side in the output's minor dimension (`T2`): one 32-bit access per lane, coalesced
//!   over the warp.
//!
//! XLA's conditions, all of which must hold: elements narrower than 32 bits (sub-byte types
//! stay with the loop emitter, as in XLA), the minor dimension moves, `rows = tT2` and
//! `cols` are both at least `10 * vs` and multiples of `vs`, and so is `T2 mod tT2` (the
//! last tile's rows). Partial tiles at the edges are masked per element by the maps'
//! constraints.

use indexing::nested_layout::NestedLayout;
use indexing::{AffineExpr, IndexingMap, Interval, Variable, cst, delinearize, dim, sym};

use crate::hero::TransposeDescription;
use crate::transpose::tiling::{THREADS_PER_BLOCK, WARP_SIZE};

/// Warps per block: the rows (columns, when writing) a loop iteration covers.
const WARPS: i64 = THREADS_PER_BLOCK / WARP_SIZE;
/// Bits of a shared-memory word (a bank).
const WORD_BITS: i64 = 32;
/// A tile needs at least this many vectors of `vs` elements in each of its two dimensions.
const MIN_VECTORS_PER_TILE_DIMENSION: i64 = 10;
/// Words a thread moves in one access of the tile's rows, the widest the tile allows:
/// 128-, 64- or 32-bit accesses.
const ACCESS_WORDS: [i64; 3] = [4, 2, 1];

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
    /// The input dimension of `T2` (the output's minor dimension).
    t2: usize,
    /// The tile over the input dimensions: `tT2`, `tA`, `tT1` where those are, 1 elsewhere.
    block_sizes: Vec<i64>,
    /// Tiles per input dimension.
    block_counts: Vec<i64>,
}

impl PackedTiling {
    /// The packed tiling of `description` for elements of `bits` bits, if XLA would pack it.
    pub fn new(description: &TransposeDescription, bits: i64) -> Option<PackedTiling> {
        if !(8..WORD_BITS).contains(&bits) || description.rank() < 2 || description.minor_dim_kept()
        {
            return None;
        }
        let vs = WORD_BITS / bits;
        let description = with_a_dimension(description);
        let m = description.rank();
        let dims = &description.input_dims;
        let t2 = description.permutation[m - 1];
        let side = WARP_SIZE * vs;
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
        WARP_SIZE * self.vector_size
    }

    /// Elements a thread moves in one access of a tile row (`v = a * vs`).
    pub fn elements_per_access(&self) -> i64 {
        self.access_words * self.vector_size
    }

    /// Threads that read one tile row (`32 / a`).
    fn threads_per_row(&self) -> i64 {
        WARP_SIZE / self.access_words
    }

    /// Tile rows one iteration of the reading loop covers (`4a`).
    fn rows_per_iteration(&self) -> i64 {
        THREADS_PER_BLOCK / self.threads_per_row()
    }

    /// `[32, vs * S + a * vs]`: 32 groups of `vs` rows of `S` elements and `a` padding words.
    pub fn shared_tile_shape(&self) -> Vec<i64> {
        let vs = self.vector_size;
        vec![WARP_SIZE, vs * self.side() + self.elements_per_access()]
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
        let per = self.elements_per_access() * WARPS;
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

    /// The writing loop's domain `(th_x, bl_x)[s0, s1, s2]` (`l`, `vh`, `vv`) with `results`.
    fn write_map(&self, results: Vec<AffineExpr>) -> IndexingMap {
        let symbols = [
            ("s0", self.write_iterations()),
            ("s1", self.elements_per_access()),
            ("s2", self.vector_size),
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
        let row = lane() * self.vector_size + sym(2);
        let col = (sym(0) * WARPS + warp()) * self.elements_per_access() + sym(1);
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

    /// How they cover it when writing, over `[S, 4 * iterations * v]` (rows, columns): each
    /// lane a `vs x v` block, rows `lane * vs + vv`, columns `(4 l + warp) * v + vh`
    /// (threads `[32, 4]`, strides `[1, 32]`; the elements `[vs, v]` are the block the
    /// registers transpose).
    pub fn write_layout(&self) -> NestedLayout {
        NestedLayout {
            subgroup_tile: vec![1, 1],
            batch_tile: vec![1, self.write_iterations()],
            outer_tile: vec![1, 1],
            thread_tile: vec![WARP_SIZE, WARPS],
            element_tile: vec![self.vector_size, self.elements_per_access()],
            subgroup_strides: vec![0, 0],
            thread_strides: vec![1, WARP_SIZE],
        }
    }
}

fn lane() -> AffineExpr {
    dim(0).modulo(WARP_SIZE)
}

fn warp() -> AffineExpr {
    dim(0).floor_div(WARP_SIZE)
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
        )
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
        // 32-bit elements, sub-byte ones, a kept minor dimension: never packed.
        assert!(packed(&[256, 256], &[1, 0], 32).is_none());
        assert!(packed(&[256, 256], &[1, 0], 4).is_none());
        assert!(packed(&[256, 256, 4], &[1, 0, 2], 8).is_none());
        // Fewer than 10 vectors per tile dimension.
        assert!(packed(&[18, 256], &[1, 0], 16).is_none());
        assert!(packed(&[20, 256], &[1, 0], 16).is_some());
        // The last tile's rows must be whole vectors: 66 mod 64 = 2 is, 65 mod 64 is not.
        assert!(packed(&[66, 256], &[1, 0], 16).is_some());
        assert!(packed(&[65, 256], &[1, 0], 16).is_none());
        assert_eq!(packed(&[256, 256], &[1, 0], 8).unwrap().vector_size, 4);
    }

    /// The nested layouts' maps are the tiling's positions: at every thread and loop point
    /// of each loop, the layout's (row, column) is the tile position the thread reads or
    /// writes.
    #[test]
    fn the_thread_layouts_are_the_tiling() {
        for (dims, perm, bits) in [
            (vec![70, 130], vec![1, 0], 16),
            (vec![70, 132], vec![1, 0], 16),
            (vec![70, 136], vec![1, 0], 16),
            (vec![2, 4, 64, 10, 6], vec![1, 0, 4, 3, 2], 16),
            (vec![68, 2, 200], vec![2, 1, 0], 8),
        ] {
            let t = packed(&dims, &perm, bits).unwrap();
            let (vs, v) = (t.vector_size, t.elements_per_access());
            let (read, write) = (t.read_layout(), t.write_layout());
            let read_iterations = read.batch_tile[0];
            let write_iterations = write.batch_tile[1];
            read.verify(
                Some(&[t.rows_per_iteration() * read_iterations, 32 * vs]),
                None,
            )
            .unwrap();
            write
                .verify(Some(&[32 * vs, 4 * write_iterations * v]), None)
                .unwrap();
            let (read_map, write_map) = (read.to_indexing_map(), write.to_indexing_map());
            let at = |(r, c): (AffineExpr, AffineExpr), th: i64, s: &[i64]| {
                [r.eval(&[th], s), c.eval(&[th], s)]
            };
            for th in 0..THREADS_PER_BLOCK {
                for l in 0..read_iterations {
                    for j in 0..v {
                        // batch0, batch1, outer0, outer1, element0, element1
                        let layout = read_map.eval(&[th, 0], &[l, 0, 0, 0, 0, j]);
                        assert_eq!(layout, at(t.read_position(), th, &[l, j]));
                    }
                }
                for l in 0..write_iterations {
                    for vh in 0..v {
                        for vv in 0..vs {
                            let layout = write_map.eval(&[th, 0], &[0, l, 0, 0, vv, vh]);
                            assert_eq!(layout, at(t.write_position(), th, &[l, vh, vv]));
                        }
                    }
                }
            }
        }
    }

    /// The lanes of a warp that shared memory serves together (`32 / a` for accesses of `a`
    /// words) touch all 32 banks at every loop point of both loops: the padded tile has no
    /// bank conflicts, for 8- and 16-bit elements and one- and two-word accesses.
    #[test]
    fn a_warp_s_shared_accesses_hit_32_banks() {
        for (dims, bits, words) in [
            ([256, 256], 8, 4),
            ([256, 256], 16, 4),
            ([256, 248], 8, 2),
            ([256, 252], 16, 2),
            ([256, 250], 16, 1),
            ([256, 250], 8, 1),
        ] {
            let t = packed(&dims, &[1, 0], bits).unwrap();
            assert_eq!(t.access_words, words, "{dims:?} {bits}");
            let vs = t.vector_size;
            let group_words = t.shared_tile_shape()[1] / vs;
            let word = |p: Vec<i64>| p[0] * group_words + p[1] / vs;
            let served_together = WARP_SIZE / words;
            for map in [t.shared_write_indexing(), t.shared_read_indexing()] {
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
    /// the shared tile hands over: partial tiles in every tiled dimension, batch dimensions,
    /// a kept `A` dimension and an inserted one, 8 and 16 bits.
    #[test]
    fn the_maps_transpose_every_element_exactly_once() {
        for (dims, perm, bits) in [
            (vec![70, 130], vec![1, 0], 16),
            (vec![70, 132], vec![1, 0], 16),
            (vec![70, 136], vec![1, 0], 16),
            (vec![3, 52, 92], vec![0, 2, 1], 8),
            (vec![3, 52, 96], vec![0, 2, 1], 8),
            (vec![2, 4, 64, 10, 6], vec![1, 0, 4, 3, 2], 16),
            (vec![40, 3, 12, 8], vec![3, 1, 2, 0], 16),
            (vec![68, 2, 200], vec![2, 1, 0], 8),
        ] {
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
