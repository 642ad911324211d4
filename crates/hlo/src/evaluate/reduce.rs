//! Ops that call a scalar computation per element: `reduce` and `map`.
//!
//! The computation is not called once per element: it is evaluated on *lanes*, every
//! scalar of it standing for a vector with one value per element position (see
//! `Evaluator::lanes`). Its ops are elementwise, so this computes exactly what one call
//! per element would, with a handful of array operations per step.
//!
//! `reduce` steps through the reduced positions in row-major order of the reduced
//! dimensions (the last one fastest), each step combining the accumulators of every
//! output element with their next input element: the order the `evaluate` module
//! documents.

use super::movement::{offsets, row_major_strides, strided};
use super::value::{Elements, HostArray, HostValue};
use super::{Evaluator, Plan, R, array, located};
use crate::PrimitiveType;
use crate::literal::Value;
use crate::module::{Computation, ComputationId, Instruction};
use crate::opcode::Opcode;

/// The computation an instruction calls through `attribute`.
pub(super) fn callee(instr: &Instruction, attribute: &str) -> R<ComputationId> {
    instr
        .called(attribute)
        .map(|c| c.id)
        .ok_or_else(|| located(instr, format!("{} without {attribute}=", instr.opcode)))
}

/// `elements` as lanes: the flat array a computation applied per element reads.
pub(super) fn lanes(elements: Elements) -> HostValue {
    let n = elements.len() as i64;
    HostValue::Array(HostArray::from_parts(vec![n], elements))
}

/// The operands of a `reduce` or `reduce-window` (`op`): `n` input arrays (at least one),
/// then their `n` init values. Neither runs inside a computation applied per element.
pub(super) fn reduction_operands<'v>(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&'v HostValue],
    op: &str,
) -> R<(Vec<&'v HostArray>, Vec<&'v HostArray>)> {
    if ev.lanes.is_some() {
        return Err(located(
            instr,
            format!("unsupported: {op} inside a computation applied per element"),
        ));
    }
    let mut inputs = operands
        .iter()
        .map(|v| array(v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| located(instr, m))?;
    let inits = inputs.split_off(inputs.len() / 2);
    if inputs.is_empty() {
        return Err(located(instr, format!("{op} without inputs")));
    }
    Ok((inputs, inits))
}

/// `reduce` of `n` inputs with `n` init values, in the documented order.
pub(super) fn reduce(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&HostValue],
) -> R<HostValue> {
    let (inputs, inits) = reduction_operands(ev, instr, operands, "reduce")?;
    let dims = inputs[0].dims();
    let mut reduced: Vec<usize> = instr
        .int_list("dimensions")
        .unwrap_or_default()
        .iter()
        .map(|&d| d as usize)
        .collect();
    reduced.sort_unstable();
    let strides = row_major_strides(dims);
    let axis = |d: usize| strided(dims[d], 0, 1, strides[d]);
    let kept: Vec<usize> = (0..dims.len()).filter(|d| !reduced.contains(d)).collect();
    let outputs = offsets(&kept.iter().map(|&d| axis(d)).collect::<Vec<_>>());
    let steps = offsets(&reduced.iter().map(|&d| axis(d)).collect::<Vec<_>>());

    let reducer = ev.module.computation(callee(instr, "to_apply")?);
    let plan = Plan::new(reducer);
    let per_output = ev.for_lanes(outputs.len());
    let mut accs: Vec<HostValue> = inits
        .iter()
        .map(|init| lanes(init.elements().repeat_first(outputs.len())))
        .collect();
    if !outputs.is_empty() {
        for &step in &steps {
            let mut args = accs;
            args.extend(
                inputs
                    .iter()
                    .map(|x| lanes(x.elements().take(&outputs, step))),
            );
            accs = per_output
                .run_plan(reducer, &plan, args)?
                .into_leaves()
                .into_iter()
                .map(HostValue::Array)
                .collect();
        }
    }
    let out_dims: Vec<i64> = kept.iter().map(|&d| dims[d]).collect();
    if ev.push_sums != 0.0 && adds(reducer) {
        let (x, init) = (inputs[0], inits[0]);
        accs = accs
            .into_iter()
            .map(|acc| push_sums(acc, x, init, &outputs, &steps, ev.push_sums))
            .collect::<Result<_, _>>()
            .map_err(|m| located(instr, m))?;
    }
    let results = accs
        .into_iter()
        .map(|acc| match acc {
            HostValue::Array(a) => HostArray::new(out_dims.clone(), a.into_elements()),
            HostValue::Tuple(_) => Err("the reducer returned a nested tuple".to_string()),
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| located(instr, m))?;
    Ok(shaped_like(instr, results))
}

/// Whether `reducer` is a float addition of its two parameters (a sum).
fn adds(reducer: &Computation) -> bool {
    let root = reducer.root_instruction();
    reducer.parameters().len() == 2
        && root.opcode == Opcode::Add
        && root
            .shape
            .as_array()
            .is_some_and(|a| a.element_type.is_float() && a.rank() == 0)
        && root
            .operands
            .iter()
            .all(|&o| reducer.instruction(o).opcode == Opcode::Parameter)
}

/// `sums` (the lanes of a sum of `x` over `steps` from `init`, one lane per output) pushed
/// by `sign` times each sum's rounding bound, `(n - 1) u sum |terms|` (see
/// `evaluate_fusion_with_sums_pushed`).
fn push_sums(
    sums: HostValue,
    x: &HostArray,
    init: &HostArray,
    outputs: &[usize],
    steps: &[usize],
    sign: f64,
) -> Result<HostValue, String> {
    let HostValue::Array(sums) = sums else {
        return Err("a sum that is a tuple".into());
    };
    let ty = sums.element_type();
    let unit_roundoff = match ty {
        PrimitiveType::F64 => f64::EPSILON / 2.0,
        PrimitiveType::F32 => f64::from(f32::EPSILON) / 2.0,
        PrimitiveType::F16 => 2f64.powi(-11),
        _ => 2f64.powi(-8),
    };
    let float = |v: Value| match v {
        Value::Float(f) => f,
        _ => 0.0,
    };
    // The largest finite value: past it, a partial sum in some order may overflow.
    let largest = match ty {
        PrimitiveType::F64 => f64::MAX,
        PrimitiveType::F32 => f64::from(f32::MAX),
        PrimitiveType::F16 => 65504.0,
        _ => 3.389_531_389_251_535_5e38,
    };
    let terms = steps.len() as f64 + 1.0;
    let magnitude_of_init = float(init.value(0)).abs();
    let pushed = Elements::from_values(ty, outputs.len(), |k| {
        let magnitudes: f64 = steps
            .iter()
            .map(|&step| float(x.value(outputs[k] + step)).abs())
            .sum::<f64>()
            + magnitude_of_init;
        // Terms whose magnitudes add up past the largest finite value can overflow in
        // another order (`65504 + 32768 - 32768` in f16): any result is then possible.
        if magnitudes > largest {
            return Value::Float(sign * f64::INFINITY);
        }
        let bound = (terms - 1.0) * unit_roundoff * magnitudes;
        Value::Float(float(sums.value(k)) + sign * bound)
    })?;
    Ok(lanes(pushed))
}

/// The results as the instruction's shape has them: one array, or a tuple of arrays.
pub(super) fn shaped_like(instr: &Instruction, mut results: Vec<HostArray>) -> HostValue {
    if !instr.shape.is_tuple() && results.len() == 1 {
        HostValue::Array(results.remove(0))
    } else {
        HostValue::Tuple(results.into_iter().map(HostValue::Array).collect())
    }
}

/// `map`: the computation applied to the operands' elements at every position.
pub(super) fn map(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&HostValue],
) -> R<HostValue> {
    let dims = ev.result_dims(instr).map_err(|m| located(instr, m))?;
    let count = dims.iter().product::<i64>() as usize;
    let args = operands
        .iter()
        .map(|v| array(v).map(|a| lanes(a.elements().clone())))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| located(instr, m))?;
    let per_element = ev.for_lanes(count);
    let result = per_element.run(callee(instr, "to_apply")?, args)?;
    let elements = match result {
        HostValue::Array(a) => a.into_elements(),
        HostValue::Tuple(_) => {
            return Err(located(
                instr,
                "unsupported: map with a tuple-shaped computation",
            ));
        }
    };
    let array = HostArray::new(dims, elements).map_err(|m| located(instr, m))?;
    Ok(HostValue::Array(array))
}
