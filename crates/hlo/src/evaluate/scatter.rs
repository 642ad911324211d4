//! `scatter`, as XLA's operation semantics define it: every element of the updates is
//! combined (by the `to_apply` computation, `combiner(current, update)`) into the operand
//! element it addresses, in row-major order of the updates.
//!
//! An update element's position splits into its *scatter* coordinates (the updates
//! dimensions not in `update_window_dims`), which pick a row of the scatter indices, and its
//! *window* coordinates. The row's components (along `index_vector_dim`; one index when that
//! is the indices' rank) start the operand dimensions `scatter_dims_to_operand_dims`; an
//! operand batching dimension starts at the scatter coordinate of its paired indices
//! dimension; the window coordinates walk the operand dimensions that are neither inserted
//! nor batching, in order. As in XLA (its evaluator, CPU and GPU emitters), a whole window
//! whose start does not fit the operand (`start < 0` or `start + window size > dim` in any
//! dimension) is skipped.
//!
//! The combiner runs on lanes (see `Evaluator::lanes`) in *rounds*: round `r` holds every
//! update that is the `r`-th to address its operand element, so no element appears twice in
//! a round, and each element still sees its updates in order.

use super::movement::{index_at, row_major_strides};
use super::reduce::{callee, lanes, shaped_like};
use super::value::{HostArray, HostValue};
use super::{Evaluator, Plan, R, array, located};
use crate::module::Instruction;
use crate::scatter::ScatterDimensions;

/// `scatter` of `k` operands with `k` updates and one array of indices.
pub(super) fn scatter(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&HostValue],
) -> R<HostValue> {
    if ev.lanes.is_some() {
        return Err(located(
            instr,
            "unsupported: scatter inside a computation applied per element",
        ));
    }
    let arrays = operands
        .iter()
        .map(|v| array(v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| located(instr, m))?;
    let k = arrays.len() / 2;
    if k == 0 {
        return Err(located(instr, "scatter without operands"));
    }
    let (inputs, indices, updates) = (&arrays[..k], arrays[k], &arrays[k + 1..]);
    let targets = targets(instr, inputs[0], indices, updates[0]).map_err(|m| located(instr, m))?;

    // Round r: the updates that are the r-th to address their element.
    let mut seen = vec![0usize; inputs[0].len()];
    let mut rounds: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for (u, target) in targets.iter().enumerate() {
        let Some(t) = *target else { continue };
        let r = seen[t];
        seen[t] += 1;
        if rounds.len() == r {
            rounds.push((Vec::new(), Vec::new()));
        }
        rounds[r].0.push(t);
        rounds[r].1.push(u);
    }

    let combiner = ev.module.computation(callee(instr, "to_apply")?);
    let plan = Plan::new(combiner);
    let mut results: Vec<HostArray> = inputs.iter().map(|&a| a.clone()).collect();
    for (at, from) in &rounds {
        let per_update = ev.for_lanes(at.len());
        let mut args: Vec<HostValue> = results
            .iter()
            .map(|r| lanes(r.elements().take(at, 0)))
            .collect();
        args.extend(updates.iter().map(|u| lanes(u.elements().take(from, 0))));
        let combined = per_update.run_plan(combiner, &plan, args)?.into_leaves();
        for (result, value) in results.iter_mut().zip(&combined) {
            result
                .elements_mut()
                .put(at, value.elements())
                .map_err(|m| located(instr, m))?;
        }
    }
    Ok(shaped_like(instr, results))
}

/// For every update element (row-major), the operand element it addresses (row-major), or
/// `None` when its window does not fit the operand.
fn targets(
    instr: &Instruction,
    operand: &HostArray,
    indices: &HostArray,
    updates: &HostArray,
) -> Result<Vec<Option<usize>>, String> {
    let n = ScatterDimensions::of(instr, indices.dims().len())?;
    let (x_dims, index_dims, u_dims) = (operand.dims(), indices.dims(), updates.dims());
    let scatter_dims: Vec<usize> = (0..u_dims.len())
        .filter(|d| !n.update_window_dims.contains(d))
        .collect();
    let operand_window = n.operand_window_dims(x_dims.len());
    let index_batch_dims: Vec<usize> = (0..index_dims.len())
        .filter(|&d| d != n.index_vector_dim)
        .collect();
    let components = index_dims
        .get(n.index_vector_dim)
        .map_or(1, |&c| c as usize);
    let consistent = operand_window.len() == n.update_window_dims.len()
        && index_batch_dims.len() == scatter_dims.len()
        && n.scatter_dims_to_operand_dims.len() == components
        && n.input_batching_dims.len() == n.scatter_indices_batching_dims.len()
        && n.scatter_dims_to_operand_dims
            .iter()
            .chain(&n.input_batching_dims)
            .all(|&d| d < x_dims.len())
        && n.scatter_indices_batching_dims
            .iter()
            .all(|&d| d < index_dims.len())
        && n.update_window_dims.iter().all(|&d| d < u_dims.len());
    if !consistent {
        return Err(
            "scatter: dimension numbers do not fit the operand, indices and updates".into(),
        );
    }
    let window_size = n.window_sizes(x_dims.len(), u_dims);
    let (x_strides, index_strides) = (row_major_strides(x_dims), row_major_strides(index_dims));
    let mut position = vec![0i64; u_dims.len()];
    let mut at = vec![0usize; index_dims.len()];
    let mut start = vec![0i64; x_dims.len()];
    let mut targets = Vec::with_capacity(updates.len());
    for u in 0..updates.len() {
        let mut rest = u;
        for d in (0..u_dims.len()).rev() {
            let size = u_dims[d] as usize;
            position[d] = (rest % size) as i64;
            rest /= size;
        }
        for (&index_dim, &u_dim) in index_batch_dims.iter().zip(&scatter_dims) {
            at[index_dim] = position[u_dim] as usize;
        }
        start.fill(0);
        for (c, &d) in n.scatter_dims_to_operand_dims.iter().enumerate() {
            if n.index_vector_dim < at.len() {
                at[n.index_vector_dim] = c;
            }
            let linear: usize = at.iter().zip(&index_strides).map(|(a, s)| a * s).sum();
            start[d] = index_at(indices, linear)?;
        }
        for (&d, &index_dim) in n
            .input_batching_dims
            .iter()
            .zip(&n.scatter_indices_batching_dims)
        {
            start[d] = at[index_dim] as i64;
        }
        let fits =
            (0..x_dims.len()).all(|d| start[d] >= 0 && start[d] <= x_dims[d] - window_size[d]);
        targets.push(fits.then(|| {
            let mut linear = 0;
            for d in 0..x_dims.len() {
                linear += start[d] as usize * x_strides[d];
            }
            for (&d, &u_dim) in operand_window.iter().zip(&n.update_window_dims) {
                linear += position[u_dim] as usize * x_strides[d];
            }
            linear
        }));
    }
    Ok(targets)
}
