//! Ops that move elements without computing: broadcast, reshape, transpose, slice, reverse,
//! pad, concatenate, dynamic-slice, dynamic-update-slice, gather, bitcast, and iota.
//!
//! Most are one *view*: for every result dimension an [`Axis`] lists, per coordinate, the
//! offset it adds to the operand's linear index (or a hole that reads the padding value),
//! and the result is read row by row from those tables. Start indices of dynamic-slice,
//! dynamic-update-slice and gather are clamped into the operand (`[0, dim - size]`), as XLA
//! does.

use super::elementwise::bitcast_convert;
use super::value::{Element, Elements, HostArray, Num, slice_as, with_elements, with_type};
use crate::layout::Layout;
use crate::module::{Instruction, PadDim, SliceDim};
use crate::shape::{ArrayShape, next_row_major};

/// Per coordinate of one result dimension: the offset it adds to the operand's linear
/// index, or `None` where the result holds the padding value.
pub(super) type Axis = Vec<Option<usize>>;

/// Row-major strides (in elements) of an array of bounds `dims`.
pub(super) fn row_major_strides(dims: &[i64]) -> Vec<usize> {
    let mut strides = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * dims[d + 1] as usize;
    }
    strides
}

/// `count` coordinates reading operand coordinates `first, first + step, ...` of a
/// dimension with stride `stride`.
pub(super) fn strided(count: i64, first: i64, step: i64, stride: usize) -> Axis {
    (0..count.max(0))
        .map(|o| Some((first + o * step) as usize * stride))
        .collect()
}

/// Calls `read` with the summed offset of every coordinate tuple, in row-major order
/// (`None` when any axis has a hole there).
fn walk<T>(
    axes: &[Axis],
    base: Option<usize>,
    read: &impl Fn(Option<usize>) -> T,
    out: &mut Vec<T>,
) {
    let add = |c: Option<usize>| base.zip(c).map(|(b, c)| b + c);
    match axes {
        [] => out.push(read(base)),
        [last] => out.extend(last.iter().map(|&c| read(add(c)))),
        [first, rest @ ..] => {
            for &c in first {
                walk(rest, add(c), read, out);
            }
        }
    }
}

/// Every offset of a view without holes, in row-major order.
pub(super) fn offsets(axes: &[Axis]) -> Vec<usize> {
    let mut out = Vec::with_capacity(axes.iter().map(Vec::len).product());
    walk(
        axes,
        Some(0),
        &|at: Option<usize>| at.unwrap_or_default(),
        &mut out,
    );
    out
}

/// Every offset of a view in row-major order, `None` where an axis has a hole.
pub(super) fn positions(axes: &[Axis]) -> Vec<Option<usize>> {
    let mut out = Vec::with_capacity(axes.iter().map(Vec::len).product());
    walk(axes, Some(0), &|at: Option<usize>| at, &mut out);
    out
}

/// The view of `x` through `axes`; holes read `fill`'s single element.
fn view(x: &Elements, axes: &[Axis], fill: Option<&Elements>) -> Elements {
    with_elements!(x, v => Element::wrap(view_typed(v, axes, fill)))
}

fn view_typed<T: Element>(x: &[T], axes: &[Axis], fill: Option<&Elements>) -> Vec<T> {
    let fill = fill.and_then(T::slice).and_then(|f| f.first().copied());
    let mut out = Vec::with_capacity(axes.iter().map(Vec::len).product());
    let read = |at: Option<usize>| match at {
        Some(i) => x[i],
        None => fill.expect("only pad leaves holes, and it passes its padding value"),
    };
    walk(axes, Some(0), &read, &mut out);
    out
}

/// The result of viewing `x` through `axes`, with the axes' lengths as bounds.
fn viewed(x: &HostArray, axes: &[Axis], fill: Option<&Elements>) -> Result<HostArray, String> {
    let dims = axes.iter().map(|a| a.len() as i64).collect();
    HostArray::new(dims, view(x.elements(), axes, fill))
}

/// `broadcast`: operand dimension `i` becomes result dimension `dimensions[i]`.
pub(super) fn broadcast(
    x: &HostArray,
    result_dims: &[i64],
    dimensions: &[i64],
) -> Result<HostArray, String> {
    let strides = row_major_strides(x.dims());
    let axes: Vec<Axis> = result_dims
        .iter()
        .enumerate()
        .map(
            |(j, &n)| match dimensions.iter().position(|&d| d as usize == j) {
                Some(i) => strided(n, 0, 1, strides[i]),
                None => strided(n, 0, 0, 0),
            },
        )
        .collect();
    viewed(x, &axes, None)
}

/// `reshape`: the same elements in the same row-major order, new bounds.
pub(super) fn reshape(x: &HostArray, result_dims: &[i64]) -> Result<HostArray, String> {
    HostArray::new(result_dims.to_vec(), x.elements().clone())
}

/// `transpose`: result dimension `i` is operand dimension `permutation[i]`.
pub(super) fn transpose(x: &HostArray, permutation: &[i64]) -> Result<HostArray, String> {
    let strides = row_major_strides(x.dims());
    let axes: Vec<Axis> = permutation
        .iter()
        .map(|&p| strided(x.dims()[p as usize], 0, 1, strides[p as usize]))
        .collect();
    viewed(x, &axes, None)
}

/// `slice={[start:limit:stride], ...}`.
pub(super) fn slice(x: &HostArray, dims: &[SliceDim]) -> Result<HostArray, String> {
    let strides = row_major_strides(x.dims());
    let axes: Vec<Axis> = dims
        .iter()
        .zip(&strides)
        .map(|(s, &stride)| {
            // ⌈span / stride⌉ without `span + stride - 1`, which overflows for a stride
            // near 2^63.
            let span = s.limit - s.start;
            let count = span / s.stride + i64::from(span % s.stride != 0);
            strided(count, s.start, s.stride, stride)
        })
        .collect();
    viewed(x, &axes, None)
}

/// `reverse`: the listed dimensions read backwards.
pub(super) fn reverse(x: &HostArray, dimensions: &[i64]) -> Result<HostArray, String> {
    let strides = row_major_strides(x.dims());
    let axes: Vec<Axis> = x
        .dims()
        .iter()
        .zip(&strides)
        .enumerate()
        .map(|(d, (&n, &stride))| {
            if dimensions.contains(&(d as i64)) {
                strided(n, n - 1, -1, stride)
            } else {
                strided(n, 0, 1, stride)
            }
        })
        .collect();
    viewed(x, &axes, None)
}

/// `pad`: `low` elements before, `interior` between and `high` after each dimension's
/// elements; negative `low`/`high` cut elements off.
pub(super) fn pad(x: &HostArray, value: &HostArray, dims: &[PadDim]) -> Result<HostArray, String> {
    if value.element_type() != x.element_type() || value.len() != 1 {
        return Err(format!(
            "the padding value {} is not a scalar of the operand's type {}",
            value.shape(),
            x.element_type()
        ));
    }
    let strides = row_major_strides(x.dims());
    let axes: Vec<Axis> = dims
        .iter()
        .zip(x.dims())
        .zip(&strides)
        .map(|((p, &n), &stride)| pad_axis(p, n, stride))
        .collect();
    viewed(x, &axes, Some(value.elements()))
}

fn pad_axis(p: &PadDim, n: i64, stride: usize) -> Axis {
    let size = p.low + n + (n - 1).max(0) * p.interior + p.high;
    let step = p.interior + 1;
    (0..size.max(0))
        .map(|o| {
            let t = o - p.low;
            (t >= 0 && t % step == 0 && t / step < n).then(|| (t / step) as usize * stride)
        })
        .collect()
}

/// `concatenate` along `dim`.
pub(super) fn concatenate(parts: &[&HostArray], dim: usize) -> Result<HostArray, String> {
    let Some(first) = parts.first() else {
        return Err("concatenate without operands".into());
    };
    let outer: i64 = first.dims()[..dim].iter().product();
    let inner: i64 = first.dims()[dim + 1..].iter().product();
    let blocks: Vec<usize> = parts
        .iter()
        .map(|p| (p.dims()[dim] * inner) as usize)
        .collect();
    let elements =
        with_type!(first.element_type(), T => concat_blocks::<T>(parts, &blocks, outer as usize))??;
    let mut dims = first.dims().to_vec();
    dims[dim] = parts.iter().map(|p| p.dims()[dim]).sum();
    HostArray::new(dims, elements)
}

/// For each of `outer` rows, block `k` of part `k` in turn.
fn concat_blocks<T: Element>(
    parts: &[&HostArray],
    blocks: &[usize],
    outer: usize,
) -> Result<Elements, String> {
    let slices = parts
        .iter()
        .map(|p| slice_as::<T>(p.elements(), "an operand"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::with_capacity(outer * blocks.iter().sum::<usize>());
    for row in 0..outer {
        for (s, &b) in slices.iter().zip(blocks) {
            out.extend_from_slice(&s[row * b..(row + 1) * b]);
        }
    }
    Ok(T::wrap(out))
}

/// An integer start index, read by its type's signedness.
pub(super) fn index_at(indices: &HostArray, i: usize) -> Result<i64, String> {
    match indices.elements().num(i) {
        Num::Int(v) => Ok(v.clamp(i64::MIN.into(), i64::MAX.into()) as i64),
        Num::Float(_) => Err(format!(
            "start indices must be integers, got {}",
            indices.element_type()
        )),
    }
}

/// XLA's clamp of a start index: the slice `[start, start + size)` stays inside `[0, dim)`.
fn clamp_start(start: i64, dim: i64, size: i64) -> i64 {
    start.clamp(0, (dim - size).max(0))
}

/// `dynamic-slice` with one scalar start index per dimension.
pub(super) fn dynamic_slice(
    x: &HostArray,
    starts: &[&HostArray],
    sizes: &[i64],
) -> Result<HostArray, String> {
    let strides = row_major_strides(x.dims());
    let mut axes = Vec::with_capacity(sizes.len());
    for (d, (&size, start)) in sizes.iter().zip(starts).enumerate() {
        let first = clamp_start(index_at(start, 0)?, x.dims()[d], size);
        axes.push(strided(size, first, 1, strides[d]));
    }
    viewed(x, &axes, None)
}

/// `dynamic-update-slice`: `x` with the block at the (clamped) start indices replaced by
/// `update`.
pub(super) fn dynamic_update_slice(
    x: &HostArray,
    update: &HostArray,
    starts: &[&HostArray],
) -> Result<HostArray, String> {
    if update.element_type() != x.element_type() || update.dims().len() != x.dims().len() {
        return Err(format!(
            "the update {} does not match the operand {}",
            update.shape(),
            x.shape()
        ));
    }
    let strides = row_major_strides(x.dims());
    let mut axes = Vec::with_capacity(starts.len());
    for (d, start) in starts.iter().enumerate() {
        let size = update.dims()[d];
        let first = clamp_start(index_at(start, 0)?, x.dims()[d], size);
        axes.push(strided(size, first, 1, strides[d]));
    }
    let mut elements = x.elements().clone();
    elements.put(&offsets(&axes), update.elements())?;
    HostArray::new(x.dims().to_vec(), elements)
}

/// The reason a gather is not in XLA's canonical form, if it is not.
fn non_canonical_gather(
    instr: &Instruction,
    x: &HostArray,
    indices: &HostArray,
) -> Option<&'static str> {
    let rank = x.dims().len() as i64;
    if indices.dims().len() != 2 || instr.int("index_vector_dim") != Some(1) {
        return Some("indices must be [batch, k] with index_vector_dim=1");
    }
    let map = instr.int_list("start_index_map").unwrap_or_default();
    let mut seen = vec![false; x.dims().len()];
    let distinct = map
        .iter()
        .all(|&d| (0..rank).contains(&d) && !std::mem::replace(&mut seen[d as usize], true));
    if map.len() as i64 != indices.dims()[1] || !distinct {
        return Some("start_index_map must name k distinct operand dimensions");
    }
    let empty = |name| instr.int_list(name).is_none_or(<[i64]>::is_empty);
    if !empty("collapsed_slice_dims") || !empty("operand_batching_dims") {
        return Some("collapsed or batching dimensions");
    }
    if !instr
        .int_list("offset_dims")
        .unwrap_or_default()
        .iter()
        .copied()
        .eq(1..=rank)
    {
        return Some("offset_dims must be {1, .., operand rank}");
    }
    if instr.int_list("slice_sizes").map(<[i64]>::len) != Some(x.dims().len()) {
        return Some("slice_sizes must have one size per operand dimension");
    }
    None
}

/// `gather` in XLA's canonical form (what the gather simplifier produces): indices
/// `[batch, k]`, row `b` giving the starts of operand dimensions `start_index_map`
/// (clamped; the other dimensions start at 0); the result is `[batch, slice_sizes..]`.
pub(super) fn gather(
    instr: &Instruction,
    x: &HostArray,
    indices: &HostArray,
    result: &ArrayShape,
) -> Result<HostArray, String> {
    if non_canonical_gather(instr, x, indices).is_some() {
        return general_gather(instr, x, indices, result);
    }
    let map = instr.int_list("start_index_map").unwrap_or_default();
    let sizes = instr.int_list("slice_sizes").unwrap_or_default();
    let strides = row_major_strides(x.dims());
    let (batch, k) = (indices.dims()[0] as usize, map.len());
    // The first axis holds each row's start offset; the others walk the slice.
    let mut rows: Axis = Vec::with_capacity(batch);
    for b in 0..batch {
        let mut offset = 0;
        for (i, &d) in map.iter().enumerate() {
            let d = d as usize;
            let start = clamp_start(index_at(indices, b * k + i)?, x.dims()[d], sizes[d]);
            offset += start as usize * strides[d];
        }
        rows.push(Some(offset));
    }
    let mut axes = vec![rows];
    axes.extend(
        sizes
            .iter()
            .zip(&strides)
            .map(|(&n, &s)| strided(n, 0, 1, s)),
    );
    viewed(x, &axes, None)
}

/// `gather` in any form, as XLA's operation semantics define it, one output element at a
/// time (the reference for unfused modules, which hold gathers as JAX writes them): the
/// output's batch dimensions (those not in `offset_dims`) pick a row of start indices
/// (along `index_vector_dim`, or one index when it is the indices' rank), whose components
/// start operand dimensions `start_index_map` (clamped so that the slice fits); operand
/// batching dimensions take the batch coordinate of their paired indices dimension; the
/// offset dimensions walk the operand dimensions that are neither collapsed nor batching,
/// in order.
fn general_gather(
    instr: &Instruction,
    x: &HostArray,
    indices: &HostArray,
    result: &ArrayShape,
) -> Result<HostArray, String> {
    let list = |name| instr.int_list(name).unwrap_or_default();
    let to_dims = |name| -> Result<Vec<usize>, String> {
        list(name)
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| format!("{name}: negative dimension {d}")))
            .collect()
    };
    let (offset_dims, collapsed) = (to_dims("offset_dims")?, to_dims("collapsed_slice_dims")?);
    let (operand_batching, indices_batching) = (
        to_dims("operand_batching_dims")?,
        to_dims("start_indices_batching_dims")?,
    );
    let (start_map, sizes) = (to_dims("start_index_map")?, list("slice_sizes"));
    let (x_dims, index_dims) = (x.dims(), indices.dims());
    let vector_dim = instr
        .int("index_vector_dim")
        .and_then(|d| usize::try_from(d).ok())
        .unwrap_or(index_dims.len());
    let batch_dims: Vec<usize> = (0..result.dims.len())
        .filter(|d| !offset_dims.contains(d))
        .collect();
    let window_dims: Vec<usize> = (0..x_dims.len())
        .filter(|d| !collapsed.contains(d) && !operand_batching.contains(d))
        .collect();
    let index_batch_dims: Vec<usize> = (0..index_dims.len()).filter(|&d| d != vector_dim).collect();
    let components = index_dims.get(vector_dim).map_or(1, |&n| n as usize);
    let consistent = window_dims.len() == offset_dims.len()
        && index_batch_dims.len() == batch_dims.len()
        && start_map.len() == components
        && sizes.len() == x_dims.len()
        && operand_batching.len() == indices_batching.len()
        && start_map
            .iter()
            .chain(&operand_batching)
            .all(|&d| d < x_dims.len())
        && indices_batching.iter().all(|&d| d < index_dims.len());
    if !consistent {
        return Err("gather: dimension numbers do not fit the operand and indices".into());
    }
    let (x_strides, index_strides) = (row_major_strides(x_dims), row_major_strides(index_dims));
    let count = result.element_count() as usize;
    let mut values = Vec::with_capacity(count);
    let mut out = vec![0i64; result.dims.len()];
    let mut at = vec![0usize; index_dims.len()];
    let mut operand = vec![0i64; x_dims.len()];
    for i in 0..count {
        let mut rest = i;
        for d in (0..out.len()).rev() {
            let n = result.dims[d] as usize;
            out[d] = (rest % n) as i64;
            rest /= n;
        }
        for (&index_dim, &out_dim) in index_batch_dims.iter().zip(&batch_dims) {
            at[index_dim] = out[out_dim] as usize;
        }
        operand.fill(0);
        for (k, &d) in start_map.iter().enumerate() {
            if vector_dim < at.len() {
                at[vector_dim] = k;
            }
            let linear: usize = at.iter().zip(&index_strides).map(|(a, s)| a * s).sum();
            operand[d] = clamp_start(index_at(indices, linear)?, x_dims[d], sizes[d]);
        }
        for (&d, &index_dim) in operand_batching.iter().zip(&indices_batching) {
            operand[d] = at[index_dim] as i64;
        }
        for (&d, &out_dim) in window_dims.iter().zip(&offset_dims) {
            operand[d] += out[out_dim];
        }
        if operand.iter().zip(x_dims).any(|(&o, &n)| o >= n) {
            return Err("gather: a slice reaches past the operand".into());
        }
        let linear: usize = operand
            .iter()
            .zip(&x_strides)
            .map(|(&o, s)| o as usize * s)
            .sum();
        values.push(x.value(linear));
    }
    let elements = Elements::from_values(x.element_type(), count, |i| values[i])?;
    HostArray::new(result.dims.clone(), elements)
}

/// `iota`: each element is its coordinate in dimension `dim`, converted to the type.
pub(super) fn iota(result: &ArrayShape, dim: usize) -> Result<HostArray, String> {
    let size = result.dims[dim] as usize;
    let inner = result.dims[dim + 1..].iter().product::<i64>() as usize;
    let count = result.element_count() as usize;
    let elements = Elements::build(result.element_type, count, |i| {
        Num::Int(((i / inner) % size) as i128)
    })?;
    HostArray::new(result.dims.clone(), elements)
}

/// Untiled with the dimensions in row-major order: physical order is logical order.
fn is_row_major(layout: &Layout) -> bool {
    layout.tiles.is_empty()
        && layout
            .minor_to_major
            .iter()
            .rev()
            .copied()
            .eq(0..layout.minor_to_major.len() as i64)
}

/// Where each element (in logical row-major order) sits in a buffer laid out by `layout`.
fn physical_positions(dims: &[i64], layout: &Layout) -> Vec<usize> {
    if layout.tiles.is_empty() {
        let mut strides = vec![0; dims.len()];
        let mut step = 1;
        for &d in &layout.minor_to_major {
            strides[d as usize] = step;
            step *= dims[d as usize] as usize;
        }
        let axes: Vec<Axis> = dims
            .iter()
            .zip(strides)
            .map(|(&n, s)| strided(n, 0, 1, s))
            .collect();
        return offsets(&axes);
    }
    let count = dims.iter().product::<i64>() as usize;
    let mut index = vec![0; dims.len()];
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(layout.physical_index(dims, &index) as usize);
        next_row_major(&mut index, dims);
    }
    out
}

/// A buffer of `len` elements with `x`'s elements at `positions` (the rest zero).
fn scatter(x: &Elements, positions: &[usize], len: usize) -> Elements {
    with_elements!(x, v => {
        let mut out = vec![Default::default(); len];
        for (&p, &e) in positions.iter().zip(v) {
            out[p] = e;
        }
        Element::wrap(out)
    })
}

/// `bitcast`: the operand's physical buffer (its elements placed by its layout, tiles
/// and padding included) read back through the result's layout, the bits reinterpreted
/// when the element type changes. Padding reads as zero.
pub(super) fn bitcast(
    x: &HostArray,
    from: &ArrayShape,
    to: &ArrayShape,
) -> Result<HostArray, String> {
    let (from_layout, to_layout) = (from.layout_or_default(), to.layout_or_default());
    from_layout.validate(&from.dims)?;
    to_layout.validate(&to.dims)?;
    let moved = if is_row_major(&from_layout) && is_row_major(&to_layout) {
        x.elements().clone()
    } else {
        let len = from_layout.padded_element_count(&from.dims) as usize;
        let buffer = scatter(
            x.elements(),
            &physical_positions(&from.dims, &from_layout),
            len,
        );
        let reads = physical_positions(&to.dims, &to_layout);
        if let Some(&beyond) = reads.iter().find(|&&p| p >= len) {
            return Err(format!(
                "bitcast reads position {beyond} of the operand's {len}-element buffer"
            ));
        }
        buffer.take(&reads, 0)
    };
    HostArray::new(to.dims.clone(), bitcast_convert(&moved, to.element_type)?)
}
