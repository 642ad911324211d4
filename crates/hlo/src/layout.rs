//! Layouts and the physical position of an element.
//!
//! A layout orders the dimensions (`minor_to_major`) and may tile them. XLA:GPU does not
//! support tiled layouts; this project does, following XLA's tiled-layout document (seeds
//! 000–002):
//!
//! * `linear_index(e, d)` places element `e` of bounds `d` (major to minor) row-major.
//! * A tile `t` splits every dimension it covers into (tile count, in-tile index):
//!   `linear_index_with_tile(e, d, t) = linear_index((⌊e/t⌋, e mod t), (⌈d/t⌉, t))`. A tile
//!   with fewer dimensions than the shape tiles the most-minor ones. Incomplete tiles are
//!   padded, so a buffer holds `∏⌈dᵢ/tᵢ⌉·tᵢ` elements.
//! * Repeated tiles (`T(2,4)(2,1)`) apply to the shape the previous tile produced.
//! * A `*` entry (stored as [`COMBINE_DIMENSION`]) merges that dimension into the next
//!   more-minor one before tiling.
//!
//! The reference evaluator lays out buffers with these functions, and `flatten-tensors`
//! builds the same arithmetic as affine expressions; both must agree with the tests here.

use std::fmt;

/// The tile entry written `*`: combine this dimension into the next more-minor one.
pub const COMBINE_DIMENSION: i64 = -1;

/// One level of tiling, major to minor. Entries are positive sizes or [`COMBINE_DIMENSION`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tile {
    pub dims: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Layout {
    /// Logical dimension numbers from the most minor (fastest varying) to the most major.
    pub minor_to_major: Vec<i64>,
    /// Tiling levels, applied in order.
    pub tiles: Vec<Tile>,
    /// `E(n)`: storage bits per element when it differs from the type's width (0: default).
    pub element_size_in_bits: i64,
    /// `S(n)`: the memory space (0: default).
    pub memory_space: i64,
    /// `L(n)`: tail padding alignment in elements (1: default).
    pub tail_padding_alignment_in_elements: i64,
}

impl Layout {
    /// The default row-major layout of a rank-`rank` array: `{rank-1, ..., 1, 0}`.
    pub fn row_major(rank: usize) -> Layout {
        Layout {
            minor_to_major: (0..rank as i64).rev().collect(),
            tail_padding_alignment_in_elements: 1,
            ..Layout::default()
        }
    }

    /// `{minor_to_major:T(tile)...}` with every other field at its default.
    pub fn tiled(minor_to_major: &[i64], tiles: &[&[i64]]) -> Layout {
        Layout {
            minor_to_major: minor_to_major.to_vec(),
            tiles: tiles.iter().map(|t| Tile { dims: t.to_vec() }).collect(),
            ..Layout::row_major(0)
        }
    }

    /// Checks that this layout can describe an array with logical bounds `dims`; the
    /// index functions below may assume a layout that passed this check.
    pub fn validate(&self, dims: &[i64]) -> Result<(), String> {
        let rank = dims.len();
        let mut seen = vec![false; rank];
        if self.minor_to_major.len() != rank {
            return Err(format!(
                "layout has {} dimensions but the shape has rank {rank}",
                self.minor_to_major.len()
            ));
        }
        for &d in &self.minor_to_major {
            let Some(slot) = usize::try_from(d).ok().and_then(|d| seen.get_mut(d)) else {
                return Err(format!(
                    "layout dimension {d} is out of range for rank {rank}"
                ));
            };
            if std::mem::replace(slot, true) {
                return Err(format!("layout dimension {d} appears twice"));
            }
        }
        let mut physical_rank = rank;
        for tile in &self.tiles {
            let k = tile.dims.len();
            if k == 0 || k > physical_rank {
                return Err(format!(
                    "tile {tile} has {k} dimensions but applies to a shape of rank {physical_rank}"
                ));
            }
            if let Some(&bad) = tile
                .dims
                .iter()
                .find(|&&t| t <= 0 && t != COMBINE_DIMENSION)
            {
                return Err(format!("tile {tile} has invalid size {bad}"));
            }
            if tile.dims[k - 1] == COMBINE_DIMENSION {
                return Err(format!(
                    "tile {tile} combines its most-minor dimension into nothing"
                ));
            }
            let combined = tile
                .dims
                .iter()
                .filter(|&&t| t == COMBINE_DIMENSION)
                .count();
            physical_rank = physical_rank - combined + (k - combined);
        }
        if self.tail_padding_alignment_in_elements < 1 {
            return Err("tail padding alignment must be positive".into());
        }
        Ok(())
    }

    /// Logical bounds reordered major to minor.
    pub fn physical_bounds(&self, dims: &[i64]) -> Vec<i64> {
        self.minor_to_major
            .iter()
            .rev()
            .map(|&d| dims[d as usize])
            .collect()
    }

    /// The bounds of the buffer after every tile, major to minor: tile counts of the last
    /// level first, then the in-tile dimensions. Its product is [`Self::padded_element_count`].
    /// For a verified shape (the HLO verifier's `ARRAY_SIZE_LIMIT` keeps them in `i64`).
    pub fn tiled_bounds(&self, dims: &[i64]) -> Vec<i64> {
        self.checked_tiled_bounds(dims)
            .expect("a verified shape's tiled bounds fit in i64")
    }

    /// Elements in the buffer, padding included (for a verified shape).
    pub fn padded_element_count(&self, dims: &[i64]) -> i64 {
        self.tiled_bounds(dims).iter().product()
    }

    /// [`Self::padded_element_count`] computed with checked arithmetic: `None` when a
    /// tiled bound or the count overflows `i64` (a huge tile pads a small array up to its
    /// size, so padding alone can overflow). For a layout that passed [`Self::validate`].
    pub fn checked_padded_element_count(&self, dims: &[i64]) -> Option<i64> {
        self.checked_tiled_bounds(dims)?
            .iter()
            .try_fold(1i64, |n, &d| n.checked_mul(d))
    }

    /// [`Self::tiled_bounds`], `None` on overflow.
    fn checked_tiled_bounds(&self, dims: &[i64]) -> Option<Vec<i64>> {
        let mut bounds = self.physical_bounds(dims);
        for tile in &self.tiles {
            bounds = tile_bounds(&bounds, &tile.dims)?;
        }
        Some(bounds)
    }

    /// Position of the element at logical `index` in the padded buffer, in elements.
    pub fn physical_index(&self, dims: &[i64], index: &[i64]) -> i64 {
        let (bounds, tiled_index) = self.tile_index(dims, index);
        linear_index(&tiled_index, &bounds)
    }

    /// Applies the dimension order and every tile to bounds and an index together.
    fn tile_index(&self, dims: &[i64], index: &[i64]) -> (Vec<i64>, Vec<i64>) {
        let bounds = self.physical_bounds(dims);
        let index = self
            .minor_to_major
            .iter()
            .rev()
            .map(|&d| index[d as usize])
            .collect();
        self.tiles
            .iter()
            .fold((bounds, index), |(bounds, index), tile| {
                tile_once(&index, &bounds, &tile.dims)
            })
    }
}

/// Every index of an array of `dims`, in row-major order (for tests and small arrays: the
/// list holds them all).
pub fn row_major_indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &d in dims {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..d).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect();
    }
    out
}

/// Row-major position of `index` in an array of `bounds` (both major to minor):
/// `e_n·d_{n-1}···d_1 + … + e_1`.
pub fn linear_index(index: &[i64], bounds: &[i64]) -> i64 {
    debug_assert_eq!(index.len(), bounds.len());
    index
        .iter()
        .zip(bounds)
        .fold(0, |acc, (&e, &d)| acc * d + e)
}

/// The seed's formula: the linear index of `index` in `bounds` tiled once by `tile`
/// (major to minor; a shorter tile covers the most-minor dimensions, `*` entries combine).
pub fn linear_index_with_tile(index: &[i64], bounds: &[i64], tile: &[i64]) -> i64 {
    let (bounds, index) = tile_once(index, bounds, tile);
    linear_index(&index, &bounds)
}

/// One tiling step: returns the bounds and index in the tiled shape
/// `(untiled prefix, ⌈d/t⌉, t)` with `(prefix, ⌊e/t⌋, e mod t)`.
fn tile_once(index: &[i64], bounds: &[i64], tile: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let split = bounds.len() - tile.len();
    let (mut out_bounds, mut out_index) = (bounds[..split].to_vec(), index[..split].to_vec());
    // Combine `*` dimensions into their more-minor neighbour, carrying merged extents along
    // so several adjacent `*` collapse into one dimension.
    let mut covered: Vec<(i64, i64, i64)> = Vec::with_capacity(tile.len());
    let (mut carry_bound, mut carry_index) = (1, 0);
    for ((&t, &d), &e) in tile.iter().zip(&bounds[split..]).zip(&index[split..]) {
        let (d, e) = (carry_bound * d, carry_index * d + e);
        if t == COMBINE_DIMENSION {
            (carry_bound, carry_index) = (d, e);
        } else {
            covered.push((t, d, e));
            (carry_bound, carry_index) = (1, 0);
        }
    }
    out_bounds.extend(covered.iter().map(|&(t, d, _)| div_ceil(d, t)));
    out_index.extend(covered.iter().map(|&(t, _, e)| e / t));
    out_bounds.extend(covered.iter().map(|&(t, _, _)| t));
    out_index.extend(covered.iter().map(|&(t, _, e)| e % t));
    (out_bounds, out_index)
}

fn div_ceil(a: i64, b: i64) -> i64 {
    a / b + i64::from(a % b != 0)
}

/// The bounds [`tile_once`] gives, with checked arithmetic (`None` on overflow).
fn tile_bounds(bounds: &[i64], tile: &[i64]) -> Option<Vec<i64>> {
    let split = bounds.len() - tile.len();
    let mut out = bounds[..split].to_vec();
    let mut covered = Vec::with_capacity(tile.len());
    let mut carry = 1i64;
    for (&t, &d) in tile.iter().zip(&bounds[split..]) {
        let d = carry.checked_mul(d)?;
        if t == COMBINE_DIMENSION {
            carry = d;
        } else {
            covered.push((t, d));
            carry = 1;
        }
    }
    out.extend(covered.iter().map(|&(t, d)| div_ceil(d, t)));
    out.extend(covered.iter().map(|&(t, _)| t));
    Some(out)
}

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, &t) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if t == COMBINE_DIMENSION {
                f.write_str("*")?;
            } else {
                write!(f, "{t}")?;
            }
        }
        f.write_str(")")
    }
}

/// XLA's layout syntax: `{1,0:T(2,2)(2,1)L(4)E(4)S(1)}`.
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, d) in self.minor_to_major.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        let has_extras = !self.tiles.is_empty()
            || self.element_size_in_bits != 0
            || self.memory_space != 0
            || self.tail_padding_alignment_in_elements != 1;
        if has_extras {
            f.write_str(":")?;
        }
        if !self.tiles.is_empty() {
            f.write_str("T")?;
            for tile in &self.tiles {
                write!(f, "{tile}")?;
            }
        }
        if self.tail_padding_alignment_in_elements != 1 {
            write!(f, "L({})", self.tail_padding_alignment_in_elements)?;
        }
        if self.element_size_in_bits != 0 {
            write!(f, "E({})", self.element_size_in_bits)?;
        }
        if self.memory_space != 0 {
            write!(f, "S({})", self.memory_space)?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The physical index of every element of a `rows` x `cols` array, row by row.
    fn physical_indices(layout: &Layout, rows: i64, cols: i64) -> Vec<Vec<i64>> {
        (0..rows)
            .map(|r| {
                (0..cols)
                    .map(|c| layout.physical_index(&[rows, cols], &[r, c]))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn seed_example_element_2_3_of_f32_3x5_tiled_2x2_is_17() {
        assert_eq!(linear_index_with_tile(&[2, 3], &[3, 5], &[2, 2]), 17);
        let layout = Layout::tiled(&[1, 0], &[&[2, 2]]);
        assert_eq!(layout.physical_index(&[3, 5], &[2, 3]), 17);
        // ⌈3/2⌉·2 × ⌈5/2⌉·2 = 4 × 6.
        assert_eq!(layout.padded_element_count(&[3, 5]), 24);
        assert_eq!(layout.tiled_bounds(&[3, 5]), vec![2, 3, 2, 2]);
    }

    #[test]
    fn seed_figure_1_whole_array() {
        // F32[3,5]{1,0:T(2,2)}: tiles of 2x2 laid out row-major, elements row-major inside.
        let layout = Layout::tiled(&[1, 0], &[&[2, 2]]);
        assert_eq!(
            physical_indices(&layout, 3, 5),
            vec![
                vec![0, 1, 4, 5, 8],
                vec![2, 3, 6, 7, 10],
                vec![12, 13, 16, 17, 20],
            ]
        );
    }

    #[test]
    fn seed_figure_2_repeated_tiling_4x8_by_2x4_then_2x1() {
        // Each 2x4 tile holds its 2x1 column pairs in order: two 16-bit values of a column
        // share one 32-bit word, as TPU's bf16 format (8,128)(2,1) does.
        let layout = Layout::tiled(&[1, 0], &[&[2, 4], &[2, 1]]);
        assert_eq!(
            physical_indices(&layout, 4, 8),
            vec![
                vec![0, 2, 4, 6, 8, 10, 12, 14],
                vec![1, 3, 5, 7, 9, 11, 13, 15],
                vec![16, 18, 20, 22, 24, 26, 28, 30],
                vec![17, 19, 21, 23, 25, 27, 29, 31],
            ]
        );
        assert_eq!(layout.tiled_bounds(&[4, 8]), vec![2, 2, 1, 4, 2, 1]);
    }

    #[test]
    fn seed_combined_dimensions_equal_the_collapsed_shape_tiled() {
        // F32[2,7,8,11,10]{4,3,2,1,0} with (*,*,2,*,3) is F32[112,110] tiled by (2,3).
        let dims = [2, 7, 8, 11, 10];
        let combined = Layout::tiled(&[4, 3, 2, 1, 0], &[&[-1, -1, 2, -1, 3]]);
        assert_eq!(combined.validate(&dims), Ok(()));
        let collapsed = Layout::tiled(&[1, 0], &[&[2, 3]]);
        assert_eq!(combined.tiled_bounds(&dims), vec![56, 37, 2, 3]);
        assert_eq!(
            combined.padded_element_count(&dims),
            collapsed.padded_element_count(&[112, 110])
        );
        for e in row_major_indices(&dims) {
            let row = (e[0] * 7 + e[1]) * 8 + e[2];
            let col = e[3] * 10 + e[4];
            assert_eq!(
                combined.physical_index(&dims, &e),
                collapsed.physical_index(&[112, 110], &[row, col]),
                "element {e:?}"
            );
        }
    }

    #[test]
    fn untiled_layouts_follow_minor_to_major() {
        let column_major = Layout {
            minor_to_major: vec![0, 1],
            ..Layout::row_major(2)
        };
        assert_eq!(column_major.physical_index(&[3, 5], &[2, 3]), 3 * 3 + 2);
        assert_eq!(Layout::row_major(2).physical_index(&[3, 5], &[2, 3]), 13);
    }

    #[test]
    fn shorter_tiles_cover_the_most_minor_dimensions() {
        // A 1-d tile of 4 on a [3,6] array only splits the minor dimension: (3, 2, 4).
        let layout = Layout::tiled(&[1, 0], &[&[4]]);
        assert_eq!(layout.tiled_bounds(&[3, 6]), vec![3, 2, 4]);
        assert_eq!(layout.physical_index(&[3, 6], &[1, 5]), 8 + 4 + 1);
    }

    /// Every valid layout of some small shapes (each dimension order, with and without
    /// tiles, `*` entries included) maps logical indices one-to-one into the padded buffer.
    #[test]
    fn tiled_layouts_are_bijections_into_the_padded_buffer() {
        let shapes: &[&[i64]] = &[&[9], &[3, 5], &[5, 9], &[7, 3, 5], &[2, 7, 8, 3]];
        let tilings: &[&[&[i64]]] = &[
            &[],
            &[&[2]],
            &[&[2, 2]],
            &[&[2, 4], &[2, 1]],
            &[&[4], &[2]],
            &[&[-1, 3], &[2]],
            &[&[-1, -1, 2, 3]],
            &[&[8, 128], &[2, 1]],
        ];
        let mut checked = 0;
        for &dims in shapes {
            let rank = dims.len() as i64;
            let reversed: Vec<i64> = (0..rank).rev().collect();
            let rotated: Vec<i64> = (0..rank).map(|d| (d + 1) % rank).collect();
            for minor_to_major in [reversed, rotated] {
                for &tiles in tilings {
                    let layout = Layout::tiled(&minor_to_major, tiles);
                    if layout.validate(dims).is_err() {
                        continue;
                    }
                    checked += 1;
                    let size = layout.padded_element_count(dims);
                    let mut hit = vec![false; size as usize];
                    for e in row_major_indices(dims) {
                        let p = layout.physical_index(dims, &e);
                        assert!((0..size).contains(&p), "{layout} {e:?} -> {p} of {size}");
                        assert!(!hit[p as usize], "{layout}: {e:?} collides at {p}");
                        hit[p as usize] = true;
                    }
                    let logical: i64 = dims.iter().product();
                    assert_eq!(hit.iter().filter(|&&h| h).count() as i64, logical);
                }
            }
        }
        assert!(checked >= 40, "only {checked} layouts were valid");
    }

    #[test]
    fn validate_rejects_bad_layouts() {
        assert!(Layout::tiled(&[1, 1], &[]).validate(&[2, 2]).is_err());
        assert!(Layout::tiled(&[2, 0], &[]).validate(&[2, 2]).is_err());
        assert!(Layout::tiled(&[0], &[]).validate(&[2, 2]).is_err());
        assert!(
            Layout::tiled(&[1, 0], &[&[2, 2, 2]])
                .validate(&[2, 2])
                .is_err()
        );
        assert!(
            Layout::tiled(&[1, 0], &[&[2, -1]])
                .validate(&[2, 2])
                .is_err()
        );
        assert!(
            Layout::tiled(&[1, 0], &[&[0, 2]])
                .validate(&[2, 2])
                .is_err()
        );
        // The second level sees the rank-4 result of the first.
        assert_eq!(
            Layout::tiled(&[1, 0], &[&[2, 2], &[1, 1, 2, 2]]).validate(&[2, 2]),
            Ok(())
        );
    }

    #[test]
    fn display_matches_xla() {
        assert_eq!(
            Layout::tiled(&[4, 3, 2, 1, 0], &[&[-1, -1, 2, -1, 3]]).to_string(),
            "{4,3,2,1,0:T(*,*,2,*,3)}"
        );
        let mut layout = Layout::tiled(&[1, 0], &[&[2, 4], &[2, 1]]);
        layout.element_size_in_bits = 4;
        layout.memory_space = 1;
        assert_eq!(layout.to_string(), "{1,0:T(2,4)(2,1)E(4)S(1)}");
        assert_eq!(Layout::row_major(0).to_string(), "{}");
    }
}
