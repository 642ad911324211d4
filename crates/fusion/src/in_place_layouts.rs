//! `in-place-layouts`: gives the operand that a scatter or a dynamic-update-slice updates in
//! place the layout of the result, through a `copy`, as XLA's layout assignment does. Such
//! an op writes its output into the operand's buffer, so the two must lay their elements
//! out alike; a JAX program can hand it a parameter in another layout (`{0,1}` for a
//! row-major result). The copy is a kernel of its own (a transpose in memory); without it
//! the emitters refuse the scatter, and the dynamic-update-slice is written element by
//! element by the loop emitter instead of in place.

use hlo::{Diagnostic, HloModule, InstrId, Instruction, Opcode, Payload, Shape};

use crate::Names;

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    Ok(crate::rewrite_control_computations(
        module,
        copy_to_result_layouts,
    ))
}

/// The in-place ops of `c` with their updated operands in their results' layouts: whether
/// a copy was added.
fn copy_to_result_layouts(c: &mut hlo::Computation) -> bool {
    let mut names: Option<Names> = None;
    let mut changed = false;
    for i in 0..c.instructions.len() {
        let instr = &c.instructions[i];
        let updated = match instr.opcode {
            Opcode::Scatter => instr.operands.len() / 2,
            Opcode::DynamicUpdateSlice => 1,
            _ => continue,
        };
        // A variadic scatter's results are a tuple: result k belongs to operand k.
        let results: Vec<hlo::ArrayShape> = match &instr.shape {
            Shape::Array(a) => vec![a.clone()],
            Shape::Tuple(elements) => elements
                .iter()
                .filter_map(|e| e.as_array().cloned())
                .collect(),
        };
        for (k, result) in results.iter().enumerate().take(updated) {
            let operand_id = c.instructions[i].operands[k];
            let operand = &c.instructions[operand_id.0];
            let Some(shape) = operand.shape.as_array() else {
                continue;
            };
            // The whole layout, tiles included: a tiled operand's elements lie otherwise in
            // memory than the result's (the scatter emitter refused a `{1,0:T(1)}` operand of a
            // `{1,0}` result that this pass let through; program fuzzer, seed 439).
            if shape.layout_or_default() == result.layout_or_default() {
                continue;
            }
            let names = names.get_or_insert_with(|| Names::of(c));
            let relaid = Instruction {
                name: names.unique(&format!("{}.relayout", operand.name)),
                opcode: Opcode::Copy,
                shape: Shape::Array(hlo::ArrayShape {
                    layout: result.layout.clone(),
                    ..shape.clone()
                }),
                operands: vec![operand_id],
                payload: Payload::None,
                attributes: Vec::new(),
                spans: operand.spans.clone(),
            };
            c.instructions.push(relaid);
            let copy = InstrId(c.instructions.len() - 1);
            c.instructions[i].operands[k] = copy;
            changed = true;
        }
    }
    changed
}
