//! `move-reshapes`: an elementwise op whose array operands are reshapes that only add or
//! drop dimensions of size 1 (the others broadcast scalars) runs before the reshape
//! instead, as XLA's `ReshapeMover` moves reshapes toward the outputs. JAX writes
//! `mean = reshape(sum) / n` with the sum reshaped to `[rows, 1]`; moved, the division reads
//! the reduce directly, and the fusion pass can make it the reduction's epilogue.
//!
//! `op(reshape(x), broadcast(s))` becomes `reshape(op(x, broadcast(s)))`, the new `op`
//! with `x`'s dimensions and the original instruction (its name, shape and metadata) the
//! reshape, so its users are unchanged. The entry is visited operands first, so a chain of
//! such ops (`rsqrt(reshape(var) + eps)`) moves the reshape to its end. What no longer has
//! a reader is removed.

use hlo::{AttrValue, Attribute, Diagnostic, HloModule, InstrId, Instruction, Opcode, Payload};

use crate::{Names, elementwise, operands_first, remove_dead_code};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    Ok(crate::rewrite_control_computations(module, move_reshapes))
}

/// The reshapes of `computation` moved after the elementwise ops they feed: whether any.
fn move_reshapes(computation: &mut hlo::Computation) -> bool {
    // The names in use, gathered at the first move (most programs have none to make).
    let mut names: Option<Names> = None;
    let mut changed = false;
    for i in operands_first(computation) {
        let Some(source) = moved_shape(computation, i) else {
            continue;
        };
        // The moved value keeps the reshapes' source layout, in its own element type.
        let shaped = |ty| {
            hlo::Shape::Array(hlo::ArrayShape {
                element_type: ty,
                ..source.clone()
            })
        };
        let names = names.get_or_insert_with(|| Names::of(computation));
        let original = computation.instructions[i.0].clone();
        let element_type = original.shape.as_array().map(|a| a.element_type);
        let Some(element_type) = element_type else {
            continue;
        };
        let mut operands = Vec::with_capacity(original.operands.len());
        for &o in &original.operands {
            let operand = computation.instructions[o.0].clone();
            operands.push(if operand.opcode == Opcode::Reshape {
                operand.operands[0]
            } else {
                // A broadcast scalar, broadcast again to the new dimensions.
                let ty = operand.shape.as_array().map(|a| a.element_type);
                computation.instructions.push(Instruction {
                    name: names.unique(&format!("{}.unreshaped", operand.name)),
                    shape: shaped(ty.unwrap_or(element_type)),
                    attributes: vec![Attribute {
                        name: "dimensions".into(),
                        value: AttrValue::IntList(Vec::new()),
                        span: operand.spans.whole,
                    }],
                    ..operand
                });
                InstrId(computation.instructions.len() - 1)
            });
        }
        let (metadata, attributes): (Vec<Attribute>, Vec<Attribute>) = original
            .attributes
            .iter()
            .cloned()
            .partition(|a| a.name == "metadata");
        computation.instructions.push(Instruction {
            name: names.unique(&format!("{}.unreshaped", original.name)),
            shape: shaped(element_type),
            operands,
            attributes,
            ..original.clone()
        });
        let moved = InstrId(computation.instructions.len() - 1);
        computation.instructions[i.0] = Instruction {
            opcode: Opcode::Reshape,
            operands: vec![moved],
            payload: Payload::None,
            attributes: metadata,
            ..original
        };
        changed = true;
    }
    if changed {
        remove_dead_code(computation);
    }
    changed
}

/// The shape `i` is computed with once moved (but for its element type): that of the
/// reshapes' operands, when `i` is elementwise, at least one operand is a reshape that only
/// adds or drops dimensions of size 1, all such reshapes start from the same dimensions,
/// and every other operand is a broadcast scalar.
fn moved_shape(c: &hlo::Computation, i: InstrId) -> Option<hlo::ArrayShape> {
    let instr = &c.instructions[i.0];
    if !elementwise(instr.opcode) || instr.shape.as_array().is_none() {
        return None;
    }
    let non_unit = |dims: &[i64]| dims.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    let mut from: Option<&hlo::ArrayShape> = None;
    for &o in &instr.operands {
        let operand = &c.instructions[o.0];
        let source = operand
            .operands
            .first()
            .and_then(|&s| c.instructions[s.0].shape.as_array());
        match (operand.opcode, operand.shape.as_array(), source) {
            (Opcode::Reshape, Some(to), Some(source))
                if non_unit(&to.dims) == non_unit(&source.dims) && to.dims != source.dims =>
            {
                if from.is_some_and(|f| f.dims != source.dims) {
                    return None;
                }
                from = Some(source);
            }
            (Opcode::Broadcast, Some(_), Some(source)) if source.rank() == 0 => {}
            _ => return None,
        }
    }
    from.cloned()
}
