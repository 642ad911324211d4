//! The transpose emitter's tiling: XLA's `TransposeFusion` launch shape and thread maps,
//! stated on the normalized transpose ([`TransposeDescription`]).
//!
//! A block of 128 threads (four warps) moves one tile. When the most-minor dimension moves,
//! the tile is `32v x 32v` over the input's minor dimension and the input dimension that
//! becomes the output's minor one (size 1 in every other dimension): `v` is the vector size,
//! the elements one thread reads side by side. In the 102 form (the minor dimension stays,
//! at most 8 bytes wide) the tile is `32 x 32` over the two swapped dimensions and the
//! whole minor dimension, which plays the vector's part.
//!
//! Thread `th` in loop iteration `s0` with vector lane `s1` handles the element at linear
//! position `s0 * 4 * 32v (* v in the 102 form) + th * v + s1` of the tile: each warp
//! reads one row of the tile, contiguous in memory, per iteration, and `32v / 4`
//! iterations cover the tile. The same linear position delinearized in the input tile's
//! shape gives the read, in the output tile's shape (the input's block sizes permuted) the
//! write: both coalesced. Blocks enumerate the tiles in input order; the output loop
//! permutes the block coordinates instead of the threads.
//!
//! The shared tile has the input tile's shape with the swapped-in dimension stored
//! transposed and one element of padding on the most-minor (in the 102 form, the
//! second-minor) dimension: a warp writing a column of a `32 x 33` tile then hits 32
//! different banks. Partial tiles at the edges are masked by the maps' constraints.
//!
//! Vectorization is XLA's rule: `v = 4 bytes / element size` (2 for 16-bit types, 4 for
//! 8-bit ones, never for 32-bit and wider), halved until the launch still fills the GPU
//! (`blocks * 128 >= v² * SMs * threads per SM`), the `v²`-times larger tiles fit the
//! shared memory of a block and both tiled dimensions are multiples of `v`. The device is
//! an sm_90 (H100): 132 SMs, 2048 resident threads each, 48 KiB of shared memory per block.

use indexing::nested_layout::NestedLayout;
use indexing::{AffineExpr, IndexingMap, Interval, Variable, delinearize, dim, sym};

use super::TransposeDescription;

/// Threads per block.
pub const THREADS_PER_BLOCK: i64 = 128;
/// Tile rows covered per loop iteration: one per warp.
const NUM_ROWS: i64 = THREADS_PER_BLOCK / crate::Target::WARP_SIZE;
/// The widest vector a thread reads, in bytes.
const MAX_VECTORIZED_BYTES: i64 = 4;

/// How the blocks and threads of a transpose kernel cover the normalized transpose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tiling {
    pub description: TransposeDescription,
    /// Elements per thread side by side: the vector size, or the kept minor dimension.
    pub vector_size: i64,
    /// The edge of the tile in the swapped dimensions.
    pub block_size: i64,
    /// The tile over the normalized input dimensions.
    pub block_sizes: Vec<i64>,
    /// The tile over the normalized output dimensions.
    pub output_block_sizes: Vec<i64>,
    /// Tiles per normalized input dimension.
    pub block_counts: Vec<i64>,
}

impl Tiling {
    /// The tiling for `description`, whose heroes have elements of `element_bytes` (one per
    /// shared tile).
    pub fn new(description: TransposeDescription, element_bytes: &[i64]) -> Tiling {
        let n = description.rank();
        let minor_kept = description.minor_dim_kept();
        let mut per_element: i64 = element_bytes.iter().copied().max().unwrap_or(1).max(1);
        if minor_kept {
            per_element *= description.input_dims[n - 1];
        }
        let shared_bytes_per_tile: i64 = element_bytes
            .iter()
            .map(|b| {
                crate::Target::WARP_SIZE
                    * (crate::Target::WARP_SIZE + 1)
                    * b
                    * if minor_kept {
                        description.input_dims[n - 1]
                    } else {
                        1
                    }
            })
            .sum();
        if minor_kept {
            let v = description.input_dims[n - 1];
            return Tiling::with_vector_size(description, v);
        }
        let unvectorized = Tiling::with_vector_size(description.clone(), 1);
        let (d, p) = (&description.input_dims, &description.permutation);
        let mut v = MAX_VECTORIZED_BYTES / per_element;
        while v > 1 {
            let elements_per_thread = v * v;
            let enough_work = unvectorized.num_blocks() * THREADS_PER_BLOCK
                >= elements_per_thread
                    * crate::Target::CORE_COUNT
                    * crate::Target::THREADS_PER_CORE;
            let enough_shared = shared_bytes_per_tile * elements_per_thread
                <= crate::Target::SHARED_MEMORY_PER_BLOCK;
            let aligned = d[n - 1] % v == 0 && d[p[n - 1]] % v == 0;
            if enough_work && enough_shared && aligned {
                return Tiling::with_vector_size(description, v);
            }
            v /= 2;
        }
        unvectorized
    }

    /// The tiling with `vector_size` elements per thread side by side (in the 102 form, the
    /// minor dimension's size); [`Tiling::new`] picks it. Tests force vectors on shapes too
    /// small for the rule to choose them.
    pub fn with_vector_size(description: TransposeDescription, vector_size: i64) -> Tiling {
        let n = description.rank();
        let p = &description.permutation;
        let mut block_sizes = vec![1; n];
        let block_size;
        if description.minor_dim_kept() {
            block_size = crate::Target::WARP_SIZE;
            block_sizes[n - 1] = vector_size;
            block_sizes[n - 2] = block_size;
            block_sizes[p[n - 2]] = block_size;
        } else {
            block_size = crate::Target::WARP_SIZE * vector_size;
            block_sizes[n - 1] = block_size;
            block_sizes[p[n - 1]] = block_size;
        }
        let output_block_sizes = p.iter().map(|&i| block_sizes[i]).collect();
        let block_counts = description
            .input_dims
            .iter()
            .zip(&block_sizes)
            .map(|(&d, &b)| (d + b - 1) / b)
            .collect();
        Tiling {
            description,
            vector_size,
            block_size,
            block_sizes,
            output_block_sizes,
            block_counts,
        }
    }

    pub fn num_blocks(&self) -> i64 {
        self.block_counts.iter().product()
    }

    /// The dimension of the shared tile that is swapped with the input's minor one (or,
    /// in the 102 form, with the second-minor one) and the one it is swapped with.
    fn swapped_dims(&self) -> (usize, usize) {
        let n = self.description.rank();
        let p = &self.description.permutation;
        if self.description.minor_dim_kept() {
            (p[n - 2], n - 2)
        } else {
            (p[n - 1], n - 1)
        }
    }

    /// The shared tile: the input tile plus one element of padding on the dimension the
    /// threads of a warp walk when they write it.
    pub fn shared_tile_shape(&self) -> Vec<i64> {
        let mut shape = self.block_sizes.clone();
        shape[self.swapped_dims().1] += 1;
        shape
    }

    /// The position of the thread's element in the tile, delinearized in the input tile's
    /// shape (`input`) or the output tile's.
    fn thread_offsets(&self, input: bool) -> Vec<AffineExpr> {
        let mut loop_stride = self.block_size * NUM_ROWS;
        if self.description.minor_dim_kept() {
            loop_stride *= self.vector_size;
        }
        let linear = sym(0) * loop_stride + dim(0) * self.vector_size + sym(1);
        let sizes = if input {
            &self.block_sizes
        } else {
            &self.output_block_sizes
        };
        delinearize(linear, sizes)
    }

    /// `(th_x, bl_x)[s0, s1] -> results`: the domain every map of the kernel shares.
    fn grid_map(&self, results: Vec<AffineExpr>) -> IndexingMap {
        let iterations = self.block_size / NUM_ROWS;
        IndexingMap::new(
            vec![
                Variable::new("th_x", Interval::new(0, THREADS_PER_BLOCK - 1)),
                Variable::new("bl_x", Interval::new(0, self.num_blocks() - 1)),
            ],
            vec![
                Variable::new("s0", Interval::new(0, iterations - 1)),
                Variable::new("s1", Interval::new(0, self.vector_size - 1)),
            ],
            Vec::new(),
            results,
        )
    }

    /// The block's coordinates in tiles, per normalized input dimension.
    fn block_ids(&self) -> Vec<AffineExpr> {
        delinearize(dim(1), &self.block_counts)
    }

    /// `(th_x, bl_x)[s0, s1]` → the normalized input index the thread reads, constrained
    /// to the input's bounds (partial tiles).
    pub fn input_indexing(&self) -> IndexingMap {
        let offsets = self.thread_offsets(true);
        let results: Vec<AffineExpr> = self
            .block_ids()
            .into_iter()
            .zip(&self.block_sizes)
            .zip(offsets)
            .map(|((b, &size), t)| b * size + t)
            .collect();
        self.bounded(results, &self.description.input_dims)
    }

    /// `(th_x, bl_x)[s0, s1]` → the normalized output index the thread writes, constrained
    /// to the output's bounds.
    pub fn output_indexing(&self) -> IndexingMap {
        let offsets = self.thread_offsets(false);
        let block_ids = self.block_ids();
        let results: Vec<AffineExpr> = self
            .description
            .permutation
            .iter()
            .zip(&self.output_block_sizes)
            .zip(offsets)
            .map(|((&p, &size), t)| block_ids[p].clone() * size + t)
            .collect();
        self.bounded(results, &self.description.output_dims())
    }

    fn bounded(&self, results: Vec<AffineExpr>, bounds: &[i64]) -> IndexingMap {
        let mut map = self.grid_map(results.clone());
        for (e, &size) in results.into_iter().zip(bounds) {
            map.add_constraint(e, Interval::new(0, size - 1));
        }
        map.simplified()
    }

    /// `(th_x, bl_x)[s0, s1]` → where the thread writes its input element in the shared
    /// tile: its input tile position with the swapped dimensions exchanged.
    pub fn shared_write_indexing(&self) -> IndexingMap {
        let mut offsets = self.thread_offsets(true);
        let (a, b) = self.swapped_dims();
        offsets.swap(a, b);
        self.grid_map(offsets).simplified()
    }

    /// `(th_x, bl_x)[s0, s1]` → where the thread reads its output element in the shared
    /// tile.
    pub fn shared_read_indexing(&self) -> IndexingMap {
        self.grid_map(self.thread_offsets(true)).simplified()
    }

    /// How a block's threads cover the `32v x 32v` tile of the two swapped dimensions, the
    /// same when reading the input tile and writing the output tile, as a nested layout
    /// (issue 21): tile row `4 s0 + warp`, column `lane * v + s1`. The block's 128 threads
    /// are one subgroup, threads `[4, 32]` with strides `[32, 1]`: the warp is the inner
    /// level of the rows, below the loop's iterations (the batch), where a layout's
    /// subgroup level, always the outermost, cannot be. `None` in the 102 form.
    pub fn thread_layout(&self) -> Option<NestedLayout> {
        if self.description.minor_dim_kept() {
            return None;
        }
        Some(NestedLayout {
            subgroup_tile: vec![1, 1],
            batch_tile: vec![self.block_size / NUM_ROWS, 1],
            outer_tile: vec![1, 1],
            thread_tile: vec![NUM_ROWS, crate::Target::WARP_SIZE],
            element_tile: vec![1, self.vector_size],
            subgroup_strides: vec![0, 0],
            thread_strides: vec![crate::Target::WARP_SIZE, 1],
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn tiling(dims: &[i64], perm: &[usize], bytes: i64) -> Tiling {
        Tiling::new(
            TransposeDescription {
                input_dims: dims.to_vec(),
                permutation: perm.to_vec(),
            },
            &[bytes],
        )
    }

    #[test]
    fn the_021_tile_is_1x32x33() {
        let t = tiling(&[20, 160, 170], &[0, 2, 1], 4);
        assert_eq!(t.vector_size, 1);
        assert_eq!(t.block_sizes, vec![1, 32, 32]);
        assert_eq!(t.shared_tile_shape(), vec![1, 32, 33]);
        assert_eq!(t.block_counts, vec![20, 5, 6]);
        assert_eq!(t.num_blocks(), 600);
    }

    #[test]
    fn the_210_tile_is_32x1x33() {
        let t = tiling(&[20, 160, 170], &[2, 1, 0], 4);
        assert_eq!(t.shared_tile_shape(), vec![32, 1, 33]);
        assert_eq!(t.block_counts, vec![1, 160, 6]);
    }

    #[test]
    fn the_102_tile_keeps_the_minor_dimension() {
        let t = tiling(&[160, 170, 3], &[1, 0, 2], 1);
        assert_eq!(t.vector_size, 3);
        assert_eq!(t.shared_tile_shape(), vec![32, 33, 3]);
    }

    #[test]
    fn large_16_bit_transposes_are_vectorized() {
        let t = tiling(&[32, 1024, 1024], &[0, 2, 1], 2);
        assert_eq!(t.vector_size, 2);
        assert_eq!(t.shared_tile_shape(), vec![1, 64, 65]);
        // Not enough blocks to fill the GPU four times over: no vectors.
        assert_eq!(tiling(&[2, 128, 128], &[0, 2, 1], 2).vector_size, 1);
        // f32 is never vectorized.
        assert_eq!(tiling(&[32, 1024, 1024], &[0, 2, 1], 4).vector_size, 1);
    }

    /// Every thread of every block reads each input element exactly once and writes each
    /// output element exactly once, and the element it writes is the transpose of the one
    /// that the shared tile hands it: brute force over small shapes.
    #[test]
    fn the_maps_transpose_every_element_exactly_once() {
        for (dims, perm, bytes) in [
            (vec![3, 40, 50], vec![0, 2, 1], 4),
            (vec![40, 3, 50], vec![2, 1, 0], 4),
            (vec![70, 66], vec![1, 0], 1),
            (vec![50, 37, 3], vec![1, 0, 2], 1),
            (vec![5, 7, 36, 40], vec![1, 3, 0, 2], 4),
        ] {
            let t = tiling(&dims, &perm, bytes);
            check_tiling(&t);
        }
        for (dims, perm, v) in [
            (vec![3, 70, 132], vec![0, 2, 1], 2),
            (vec![130, 2, 68], vec![2, 1, 0], 4),
        ] {
            let d = TransposeDescription {
                input_dims: dims,
                permutation: perm,
            };
            check_tiling(&Tiling::with_vector_size(d, v));
        }
    }

    /// The nested layout's map is the tiling's: at every thread and loop point, the tile row
    /// and column of the layout are those the tiling reads (the input tile's swapped
    /// dimensions, major one first) and writes.
    #[test]
    fn the_thread_layout_is_the_tiling() {
        for (dims, perm, v) in [
            (vec![3, 70, 132], vec![0, 2, 1], 1),
            (vec![3, 70, 132], vec![0, 2, 1], 2),
            (vec![130, 2, 68], vec![2, 1, 0], 4),
        ] {
            let d = TransposeDescription {
                input_dims: dims,
                permutation: perm,
            };
            let t = Tiling::with_vector_size(d, v);
            let layout = t.thread_layout().unwrap();
            let side = t.block_size;
            layout.verify(Some(&[side, side]), None).unwrap();
            let n = t.description.rank();
            let p = &t.description.permutation;
            let (row, col) = (p[n - 1], n - 1);
            // In the output tile: the dimension the input's minor one became, then the minor.
            let out_row = p.iter().position(|&i| i == n - 1).unwrap();
            let reads = t.thread_offsets(true);
            let writes = t.thread_offsets(false);
            let map = layout.to_indexing_map();
            for th in 0..THREADS_PER_BLOCK {
                for s0 in 0..side / NUM_ROWS {
                    for s1 in 0..v {
                        // Layout symbols: batch0, batch1, outer0, outer1, element0, element1.
                        let at = map.eval(&[th, 0], &[s0, 0, 0, 0, 0, s1]);
                        let read = [
                            reads[row].eval(&[th], &[s0, s1]),
                            reads[col].eval(&[th], &[s0, s1]),
                        ];
                        assert_eq!(at, read, "{t:?}");
                        let write = [
                            writes[out_row].eval(&[th], &[s0, s1]),
                            writes[n - 1].eval(&[th], &[s0, s1]),
                        ];
                        assert_eq!(at, write, "{t:?}");
                    }
                }
            }
        }
        let kept = tiling(&[160, 170, 3], &[1, 0, 2], 1);
        assert!(kept.thread_layout().is_none());
    }

    fn check_tiling(t: &Tiling) {
        check_bijection(
            &t.description,
            t.num_blocks(),
            [&t.input_indexing(), &t.shared_write_indexing()],
            [&t.output_indexing(), &t.shared_read_indexing()],
        );
    }

    /// Every point of a map's symbol ranges, in order.
    pub(crate) fn symbol_points(map: &IndexingMap) -> Vec<Vec<i64>> {
        map.range_vars.iter().fold(vec![Vec::new()], |points, v| {
            points
                .iter()
                .flat_map(|p| {
                    (v.bounds.lo..=v.bounds.hi).map(move |x| {
                        let mut q = p.clone();
                        q.push(x);
                        q
                    })
                })
                .collect()
        })
    }

    /// Brute force over every block and thread of a transpose kernel: the first loop reads
    /// each input element exactly once (`input`) and puts it in the shared tile (`write`),
    /// the second writes each output element exactly once (`output`) with the element the
    /// shared tile holds at `read`, which must be the input element the transpose puts there.
    pub(crate) fn check_bijection(
        d: &TransposeDescription,
        num_blocks: i64,
        [input, write]: [&IndexingMap; 2],
        [output, read]: [&IndexingMap; 2],
    ) {
        let total: i64 = d.input_dims.iter().product();
        let out_dims = d.output_dims();
        let linear =
            |idx: &[i64], dims: &[i64]| idx.iter().zip(dims).fold(0, |a, (i, n)| a * n + i);
        let (mut reads, mut writes) = (vec![0; total as usize], vec![0; total as usize]);
        let (read_points, write_points) = (symbol_points(input), symbol_points(output));
        for bl in 0..num_blocks {
            // The shared tile of this block: input element written at each position.
            let mut tile = std::collections::HashMap::new();
            for th in 0..THREADS_PER_BLOCK {
                for s in &read_points {
                    let g = [th, bl];
                    if input.contains(&g, s) {
                        let i = input.eval(&g, s);
                        reads[linear(&i, &d.input_dims) as usize] += 1;
                        assert!(tile.insert(write.eval(&g, s), i).is_none(), "{d:?}");
                    }
                }
            }
            for th in 0..THREADS_PER_BLOCK {
                for s in &write_points {
                    let g = [th, bl];
                    if output.contains(&g, s) {
                        let o = output.eval(&g, s);
                        writes[linear(&o, &out_dims) as usize] += 1;
                        let i = &tile[&read.eval(&g, s)];
                        let expected: Vec<i64> = d.permutation.iter().map(|&p| i[p]).collect();
                        assert_eq!(o, expected, "{d:?}");
                    }
                }
            }
        }
        assert!(reads.iter().all(|&c| c == 1), "{d:?}");
        assert!(writes.iter().all(|&c| c == 1), "{d:?}");
    }
}
