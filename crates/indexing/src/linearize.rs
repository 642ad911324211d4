//! Linear and physical offsets as affine expressions.
//!
//! * [`linearize`] / [`delinearize`]: row-major index arithmetic (`e_0·d_1···d_n + … +
//!   e_n` and back with `floordiv`/`mod`), what the loop emitter uses to turn a linear
//!   thread index into an output index.
//! * [`physical_offset`]: the position of a logical element in a buffer with a layout
//!   (`minor_to_major` and tiles), the expression `flatten-tensors` emits. It builds the
//!   same arithmetic as `hlo::Layout::physical_index` — dimensions reordered major to
//!   minor, then for every tile: `*` entries merged into their more-minor neighbour
//!   (`e·d + e'`), each covered dimension split into `(e floordiv t, e mod t)` with bounds
//!   `(⌈d/t⌉, t)`, tile counts first — and finally [`linearize`] over the tiled bounds.
//!   The expressions assume non-negative indices (where `floordiv`/`mod` agree with the
//!   truncating `/`/`%` of the layout code), which in-bounds indices are. Steps that are
//!   no-ops (`floordiv 1`, `mod 1`, `* 1`, `+ 0`) are left out; the result is otherwise
//!   unsimplified: simplify it with the index ranges (see the tests) to get the compact
//!   form.

use hlo::layout::COMBINE_DIMENSION;
use hlo::{ArrayShape, Layout};

use crate::expr::AffineExpr;

fn add(a: AffineExpr, b: AffineExpr) -> AffineExpr {
    match (&a, &b) {
        (AffineExpr::Constant(0), _) => b,
        (_, AffineExpr::Constant(0)) => a,
        _ => a + b,
    }
}

fn mul(a: AffineExpr, c: i64) -> AffineExpr {
    match (&a, c) {
        (_, 0) | (AffineExpr::Constant(0), _) => AffineExpr::Constant(0),
        (_, 1) => a,
        _ => a * c,
    }
}

fn floor_div(a: AffineExpr, d: i64) -> AffineExpr {
    if d == 1 { a } else { a.floor_div(d) }
}

fn modulo(a: AffineExpr, m: i64) -> AffineExpr {
    if m == 1 {
        AffineExpr::Constant(0)
    } else {
        a.modulo(m)
    }
}

/// Row-major linear index of `index` in an array of `bounds` (both major to minor).
pub fn linearize(index: &[AffineExpr], bounds: &[i64]) -> AffineExpr {
    assert_eq!(
        index.len(),
        bounds.len(),
        "index rank differs from the bounds'"
    );
    index
        .iter()
        .zip(bounds)
        .fold(AffineExpr::Constant(0), |acc, (e, &d)| {
            add(mul(acc, d), e.clone())
        })
}

/// The row-major multi-index of element `linear` of an array of `shape`, as numbers (a
/// dimension of size 0 counts as 1): [`delinearize`] at a point.
pub fn delinearize_point(mut linear: u64, shape: &[i64]) -> Vec<i64> {
    let mut index = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1) as u64;
        index[d] = (linear % n) as i64;
        linear /= n;
    }
    index
}

/// The row-major multi-index of element `linear` of an array of `shape`: element `i` is
/// `(linear floordiv stride_i) mod shape_i`, without the `mod` for the most major
/// dimension (the linear index is assumed in bounds) and without `floordiv 1` for the most
/// minor. For `[6, 512, 4096]`: `(l floordiv 2097152, (l floordiv 4096) mod 512,
/// l mod 4096)`. A shape with a zero dimension has no elements; every index is then `0`.
pub fn delinearize(linear: AffineExpr, shape: &[i64]) -> Vec<AffineExpr> {
    if shape.contains(&0) {
        return vec![AffineExpr::Constant(0); shape.len()];
    }
    let mut strides = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1]
            .checked_mul(shape[i + 1])
            .expect("shape has more than i64::MAX elements");
    }
    strides
        .iter()
        .zip(shape)
        .enumerate()
        .map(|(i, (&stride, &size))| {
            let quotient = floor_div(linear.clone(), stride);
            if i == 0 {
                quotient
            } else {
                modulo(quotient, size)
            }
        })
        .collect()
}

/// The physical element offset of logical `index` (one expression per dimension, in
/// logical order) in an array of logical bounds `dims` laid out by `layout`, equal to
/// `layout.physical_index(dims, index)` at every in-bounds index. The layout must pass
/// `layout.validate(dims)`; panics otherwise (a caller bug).
pub fn physical_offset(dims: &[i64], layout: &Layout, index: &[AffineExpr]) -> AffineExpr {
    assert_eq!(
        index.len(),
        dims.len(),
        "index rank differs from the shape's"
    );
    if let Err(e) = layout.validate(dims) {
        panic!("invalid layout {layout} for {dims:?}: {e}");
    }
    let mut bounds = layout.physical_bounds(dims);
    let mut idx: Vec<AffineExpr> = layout
        .minor_to_major
        .iter()
        .rev()
        .map(|&d| index[d as usize].clone())
        .collect();
    for tile in &layout.tiles {
        (bounds, idx) = tile_once(&bounds, &idx, &tile.dims);
    }
    linearize(&idx, &bounds)
}

/// [`physical_offset`] for an array shape (its layout, or row-major when it has none).
pub fn physical_offset_in(shape: &ArrayShape, index: &[AffineExpr]) -> AffineExpr {
    physical_offset(&shape.dims, &shape.layout_or_default(), index)
}

/// One tiling level: bounds and index of `(untiled prefix, tile counts, in-tile indices)`.
fn tile_once(bounds: &[i64], index: &[AffineExpr], tile: &[i64]) -> (Vec<i64>, Vec<AffineExpr>) {
    let split = bounds.len() - tile.len();
    let mut out_bounds = bounds[..split].to_vec();
    let mut out_index = index[..split].to_vec();
    let mut covered: Vec<(i64, i64, AffineExpr)> = Vec::with_capacity(tile.len());
    let (mut carry_bound, mut carry_index) = (1i64, AffineExpr::Constant(0));
    for ((&t, &d), e) in tile.iter().zip(&bounds[split..]).zip(&index[split..]) {
        let merged_bound = carry_bound * d;
        let merged_index = add(mul(carry_index, d), e.clone());
        if t == COMBINE_DIMENSION {
            (carry_bound, carry_index) = (merged_bound, merged_index);
        } else {
            covered.push((t, merged_bound, merged_index));
            (carry_bound, carry_index) = (1, AffineExpr::Constant(0));
        }
    }
    for (t, d, e) in &covered {
        out_bounds.push((d + t - 1) / t);
        out_index.push(floor_div(e.clone(), *t));
    }
    for (t, _, e) in covered {
        out_bounds.push(t);
        out_index.push(modulo(e, t));
    }
    (out_bounds, out_index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::dim;
    use crate::map::IndexingMap;

    /// Bounds, minor_to_major, tiles.
    type Case<'a> = (&'a [i64], &'a [i64], &'a [&'a [i64]]);

    const CASES: &[Case] = &[
        (&[3, 5], &[1, 0], &[&[2, 2]]),
        (&[3, 5], &[0, 1], &[&[2, 2]]),
        (&[4, 8], &[1, 0], &[&[2, 4], &[2, 1]]),
        (&[5, 9], &[1, 0], &[&[2, 4], &[2, 1]]),
        (&[7, 3, 5], &[2, 1, 0], &[&[2, 3]]),
        (&[7, 3, 5], &[0, 2, 1], &[&[4, 2, 2], &[2, 1]]),
        (&[2, 7, 8, 11, 10], &[4, 3, 2, 1, 0], &[&[-1, -1, 2, -1, 3]]),
        (&[3, 4, 5], &[2, 1, 0], &[&[-1, 3], &[2]]),
        (&[6, 10], &[1, 0], &[&[8, 128], &[2, 1]]),
        (&[9], &[0], &[&[4], &[2]]),
        (&[3, 6], &[1, 0], &[&[4]]),
        (&[4, 5, 6], &[1, 2, 0], &[]),
        (&[2, 3, 4], &[0, 1, 2], &[&[-1, -1, 5]]),
    ];

    /// The offset expression (raw and simplified over the index ranges) equals the layout
    /// code's physical index at every logical index.
    #[test]
    fn physical_offset_matches_the_layout_math() {
        for &(dims, minor_to_major, tiles) in CASES {
            let layout = Layout::tiled(minor_to_major, tiles);
            let index: Vec<AffineExpr> = (0..dims.len()).map(dim).collect();
            let offset = physical_offset(dims, &layout, &index);
            let mut map = IndexingMap::identity(dims);
            map.results = vec![offset.clone()];
            let simplified = map.clone().simplified();
            for e in hlo::layout::row_major_indices(dims) {
                let want = layout.physical_index(dims, &e);
                assert_eq!(
                    offset.eval(&e, &[]),
                    want,
                    "{layout} {dims:?} {e:?}: {offset}"
                );
                assert_eq!(
                    simplified.eval(&e, &[]),
                    vec![want],
                    "{layout} {dims:?} {e:?}: {simplified}"
                );
            }
        }
    }

    #[test]
    fn seed_examples_print_compactly() {
        let layout_3x5 = Layout::tiled(&[1, 0], &[&[2, 2]]);
        let e = physical_offset(&[3, 5], &layout_3x5, &[dim(0), dim(1)]);
        assert_eq!(e.eval(&[2, 3], &[]), 17);
        let mut map = IndexingMap::identity(&[3, 5]);
        map.results = vec![e];
        assert_eq!(
            map.to_string(),
            "(d0, d1) -> ((((d0 floordiv 2) * 3 + d1 floordiv 2) * 2 + d0 mod 2) * 2 + d1 mod 2), \
             domain: d0 in [0, 2], d1 in [0, 4]"
        );
        map.simplify();
        assert_eq!(
            map.to_string(),
            "(d0, d1) -> ((d0 mod 2) * 2 + (d0 floordiv 2) * 12 + (d1 floordiv 2) * 4 + d1 mod 2), \
             domain: d0 in [0, 2], d1 in [0, 4]"
        );
        // Combined dimensions: F32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)} is F32[112,110]
        // tiled by (2,3).
        let combined = Layout::tiled(&[4, 3, 2, 1, 0], &[&[-1, -1, 2, -1, 3]]);
        let index: Vec<AffineExpr> = (0..5).map(dim).collect();
        let e = physical_offset(&[2, 7, 8, 11, 10], &combined, &index);
        let row = (dim(0) * 7 + dim(1)) * 8 + dim(2);
        let col = dim(3) * 10 + dim(4);
        let collapsed = physical_offset(
            &[112, 110],
            &Layout::tiled(&[1, 0], &[&[2, 3]]),
            &[row, col],
        );
        assert_eq!(e, collapsed);
    }

    #[test]
    fn shapes_without_layouts_are_row_major() {
        let shape = ArrayShape::new(hlo::PrimitiveType::F32, vec![3, 5]);
        let e = physical_offset_in(&shape, &[dim(0), dim(1)]);
        assert_eq!(e, dim(0) * 5 + dim(1));
    }

    #[test]
    fn delinearize_is_row_major() {
        let shape = [6, 512, 4096];
        let parts = delinearize(dim(0), &shape);
        assert_eq!(
            parts,
            vec![
                dim(0).floor_div(512 * 4096),
                dim(0).floor_div(4096).modulo(512),
                dim(0).modulo(4096),
            ]
        );
        let shape = [3, 1, 5];
        let parts = delinearize(dim(0), &shape);
        let back = linearize(&parts, &shape);
        for l in 0..15 {
            let idx: Vec<i64> = parts.iter().map(|p| p.eval(&[l], &[])).collect();
            assert_eq!(idx, vec![l / 5, 0, l % 5]);
            assert_eq!(back.eval(&[l], &[]), l);
        }
        assert_eq!(delinearize(dim(0), &[]), Vec::<AffineExpr>::new());
        assert_eq!(delinearize(dim(0), &[7]), vec![dim(0)]);
        assert_eq!(
            delinearize(dim(0), &[2, 0]),
            vec![AffineExpr::Constant(0); 2]
        );
    }
}
