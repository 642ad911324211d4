//! `reduce-window`: every output element folds the operand elements under its window.
//!
//! As in `reduce`, the reducer runs on lanes, one per output element, stepping through the
//! window positions in row-major order (the last window dimension fastest). A window
//! position can fall on padding or between base-dilated elements for some output elements
//! and not for others; such a step runs the reducer on the lanes that read an element only
//! and leaves the other accumulators as they are, which is XLA's "skip the position".

use super::movement::{Axis, positions, row_major_strides};
use super::reduce::{callee, lanes, reduction_operands, shaped_like};
use super::value::{Elements, HostArray, HostValue};
use super::{Evaluator, Plan, R, located};
use crate::module::Instruction;
use crate::window::{WindowDim, window_of};

/// `reduce-window` of `n` inputs with `n` init values.
pub(super) fn reduce_window(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&HostValue],
) -> R<HostValue> {
    let (inputs, inits) = reduction_operands(ev, instr, operands, "reduce-window")?;
    let first = inputs[0];
    let window = window_of(instr).map_err(|m| located(instr, m))?;
    if window.len() != first.dims().len() {
        return Err(located(
            instr,
            format!(
                "the window has {} dimensions, the operand {}",
                window.len(),
                first.dims().len()
            ),
        ));
    }
    let out_dims = output_dims(first.dims(), &window);
    let count = out_dims.iter().product::<i64>() as usize;
    let reducer = ev.module.computation(callee(instr, "to_apply")?);
    let plan = Plan::new(reducer);
    let mut accs: Vec<Elements> = inits
        .iter()
        .map(|init| init.elements().repeat_first(count))
        .collect();
    let strides = row_major_strides(first.dims());
    let sizes: Vec<i64> = window.iter().map(|w| w.size).collect();
    let mut position = vec![0i64; window.len()];
    let steps = if count == 0 {
        0
    } else {
        sizes.iter().product::<i64>()
    };
    for _ in 0..steps {
        // Per dimension and output coordinate: the offset the window position reads.
        let axes: Vec<Axis> = window
            .iter()
            .enumerate()
            .map(|(d, w)| {
                (0..out_dims[d])
                    .map(|o| {
                        w.source(o, position[d], first.dims()[d])
                            .map(|i| i as usize * strides[d])
                    })
                    .collect()
            })
            .collect();
        let (lanes_read, reads): (Vec<usize>, Vec<usize>) = positions(&axes)
            .into_iter()
            .enumerate()
            .filter_map(|(lane, at)| at.map(|at| (lane, at)))
            .unzip();
        step(ev, reducer, &plan, &mut accs, &inputs, &lanes_read, &reads)?;
        crate::shape::next_row_major(&mut position, &sizes);
    }
    let results = accs
        .into_iter()
        .map(|acc| HostArray::new(out_dims.clone(), acc))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| located(instr, m))?;
    Ok(shaped_like(instr, results))
}

/// One window position: `accs[lane] = reducer(accs[lane], inputs[read])` for each lane
/// that reads an element (`lanes_read[i]` reads operand position `reads[i]`).
fn step(
    ev: &Evaluator<'_>,
    reducer: &crate::module::Computation,
    plan: &Plan,
    accs: &mut [Elements],
    inputs: &[&HostArray],
    lanes_read: &[usize],
    reads: &[usize],
) -> R<()> {
    if lanes_read.is_empty() {
        return Ok(());
    }
    let every_lane = lanes_read.len() == accs[0].len();
    let mut args: Vec<HostValue> = accs
        .iter()
        .map(|acc| {
            lanes(if every_lane {
                acc.clone()
            } else {
                acc.take(lanes_read, 0)
            })
        })
        .collect();
    args.extend(inputs.iter().map(|x| lanes(x.elements().take(reads, 0))));
    let per_lane = ev.for_lanes(lanes_read.len());
    let results = per_lane.run_plan(reducer, plan, args)?.into_leaves();
    if results.len() != accs.len() {
        return Err(located(
            reducer.root_instruction(),
            format!(
                "the reducer returns {} values for {} accumulators",
                results.len(),
                accs.len()
            ),
        ));
    }
    for (acc, result) in accs.iter_mut().zip(results) {
        if every_lane {
            *acc = result.into_elements();
        } else {
            acc.put(lanes_read, result.elements())
                .map_err(|m| located(reducer.root_instruction(), m))?;
        }
    }
    Ok(())
}

/// The output bounds of a window over an operand of bounds `dims` (XLA's shape rule: the
/// number of window placements that fit into the padded, base-dilated operand).
fn output_dims(dims: &[i64], window: &[WindowDim]) -> Vec<i64> {
    let dilated = |n: i64, dilation: i64| if n == 0 { 0 } else { (n - 1) * dilation + 1 };
    dims.iter()
        .zip(window)
        .map(|(&n, w)| {
            let base = w.pad_low + dilated(n, w.base_dilation) + w.pad_high;
            let size = dilated(w.size, w.window_dilation);
            if size > base {
                0
            } else {
                (base - size) / w.stride + 1
            }
        })
        .collect()
}
