//! `normalize-reductions`: a reduce whose kept dimensions and reduced dimensions interleave
//! in memory (group norm over NHWC reshaped to `[n, h, w, groups, c]`, reducing `h, w, c`
//! and keeping `n, groups`) reads its operand through a `transpose` that puts the kept
//! dimensions first and the reduced ones last, as XLA's `ReductionLayoutNormalizer` gives
//! such a reduce an operand layout with the reduced dimensions minor. The reduction emitter
//! then takes it as a row reduction (the transpose fuses into its prologue); left as it was,
//! no reduction emitter takes it and the loop emitter sums each output's elements in one
//! thread.
//!
//! A reduce of one element per output (over dimensions of size 1) is its reducer applied to
//! the init value and that element: `op(broadcast(init), reshape(x))`, an elementwise op
//! (JAX's `sum(x[..., None], axis=-1)` in a gradient); the simplifier already turns the case
//! of an identity init into a plain reshape.

use emitters::reduction::ReductionDimensions;
use hlo::{AttrValue, Attribute, Diagnostic, HloModule, InstrId, Instruction, Opcode, Payload};

use crate::{Names, ReducerOp};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let reducers = crate::reducer_ops(module);
    Ok(crate::rewrite_control_computations(module, |c| {
        normalize(c, &reducers)
    }))
}

/// Every reduce of `c` whose dimensions interleave, or that reduces one element per output,
/// rewritten: whether any was.
fn normalize(c: &mut hlo::Computation, reducers: &[Option<ReducerOp>]) -> bool {
    let mut names: Option<Names> = None;
    let mut changed = false;
    for i in 0..c.instructions.len() {
        let reduce = &c.instructions[i];
        if reduce.opcode != Opcode::Reduce {
            continue;
        }
        let inputs = reduce.operands.len() / 2;
        let Some(operand) = c.instructions[reduce.operands[0].0]
            .shape
            .as_array()
            .cloned()
        else {
            continue;
        };
        let Some(reduced) = reduce.int_list("dimensions").map(<[i64]>::to_vec) else {
            continue;
        };
        let one_element = reduced
            .iter()
            .all(|&d| operand.dims.get(d as usize) == Some(&1));
        let reducer = reduce
            .called("to_apply")
            .and_then(|r| reducers.get(r.id.0).copied().flatten());
        if let (true, 1, Some(ReducerOp { op, in_order })) = (one_element, inputs, reducer) {
            let names = names.get_or_insert_with(|| Names::of(c));
            elementwise(c, i, names, op, in_order);
            changed = true;
            continue;
        }
        let tiled = !operand.layout_or_default().tiles.is_empty();
        if tiled || ReductionDimensions::of(reduce, &operand).is_some() {
            continue;
        }
        let rank = operand.rank() as i64;
        let order: Vec<i64> = (0..rank)
            .filter(|d| !reduced.contains(d))
            .chain(reduced.iter().copied())
            .collect();
        let kept = rank - reduced.len() as i64;
        let span = reduce.spans.whole;
        let names = names.get_or_insert_with(|| Names::of(c));
        let mut operands = c.instructions[i].operands.clone();
        for input in operands.iter_mut().take(inputs) {
            let source = &c.instructions[input.0];
            let Some(shape) = source.shape.as_array() else {
                continue;
            };
            let transposed = Instruction {
                name: names.unique(&format!("{}.normalized", source.name)),
                opcode: Opcode::Transpose,
                shape: hlo::Shape::array(
                    shape.element_type,
                    order.iter().map(|&d| shape.dims[d as usize]).collect(),
                ),
                operands: vec![*input],
                payload: Payload::None,
                attributes: vec![Attribute {
                    name: "dimensions".into(),
                    value: AttrValue::IntList(order.clone()),
                    span,
                }],
                spans: c.instructions[i].spans.clone(),
            };
            c.instructions.push(transposed);
            *input = InstrId(c.instructions.len() - 1);
        }
        let reduce = &mut c.instructions[i];
        reduce.operands = operands;
        for attribute in &mut reduce.attributes {
            if attribute.name == "dimensions" {
                attribute.value = AttrValue::IntList((kept..rank).collect());
            }
        }
        changed = true;
    }
    changed
}

/// Reduce `i` of one element per output rewritten in place as `op(init, element)` (or
/// `op(element, init)`, as the reducer takes its parameters).
fn elementwise(
    c: &mut hlo::Computation,
    i: usize,
    names: &mut Names,
    op: Opcode,
    init_first: bool,
) {
    let reduce = c.instructions[i].clone();
    let Some(result) = reduce.shape.as_array().cloned() else {
        return;
    };
    let plain = |name: String, opcode, operands, attributes| Instruction {
        name,
        opcode,
        shape: hlo::Shape::array(result.element_type, result.dims.clone()),
        operands,
        payload: Payload::None,
        attributes,
        spans: reduce.spans.clone(),
    };
    let element = plain(
        names.unique(&format!("{}.element", reduce.name)),
        Opcode::Reshape,
        vec![reduce.operands[0]],
        vec![],
    );
    let init = plain(
        names.unique(&format!("{}.init", reduce.name)),
        Opcode::Broadcast,
        vec![reduce.operands[1]],
        vec![Attribute {
            name: "dimensions".into(),
            value: AttrValue::IntList(vec![]),
            span: reduce.spans.whole,
        }],
    );
    c.instructions.push(element);
    let element = InstrId(c.instructions.len() - 1);
    c.instructions.push(init);
    let init = InstrId(c.instructions.len() - 1);
    let operands = if init_first {
        vec![init, element]
    } else {
        vec![element, init]
    };
    // It keeps its name, layout and metadata.
    c.instructions[i] = Instruction {
        opcode: op,
        operands,
        payload: Payload::None,
        attributes: crate::metadata(&reduce),
        ..reduce
    };
}
