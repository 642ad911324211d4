//! Result shapes from operand shapes, for the ops where XLA's text may leave the shape out
//! (`ROOT t = tuple(a, b)`) and for the verifier's checks.

use crate::module::Instruction;
use crate::opcode::Opcode;
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Shape};

/// The shape `instr` must have given its operands' shapes, or a message saying why there
/// is none. Inferred shapes carry no layout.
pub fn infer_shape(instr: &Instruction, operands: &[&Shape]) -> Result<Shape, String> {
    let opcode = instr.opcode;
    let array = |i: usize| -> Result<&ArrayShape, String> {
        operands
            .get(i)
            .and_then(|s| s.as_array())
            .ok_or_else(|| format!("{opcode} needs an array operand {i}"))
    };
    let arity = |n: usize| -> Result<(), String> {
        if operands.len() == n {
            Ok(())
        } else {
            Err(format!(
                "{opcode} takes {n} operands, not {}",
                operands.len()
            ))
        }
    };
    let strip = |a: &ArrayShape| {
        Shape::Array(ArrayShape {
            layout: None,
            ..a.clone()
        })
    };
    match opcode {
        Opcode::Tuple => Ok(Shape::Tuple(
            operands.iter().map(|s| s.without_layout()).collect(),
        )),
        Opcode::GetTupleElement => {
            arity(1)?;
            let index = instr.int("index").ok_or("get-tuple-element needs index=")?;
            match operands[0] {
                Shape::Tuple(elems) => usize::try_from(index)
                    .ok()
                    .and_then(|i| elems.get(i))
                    .map(Shape::without_layout)
                    .ok_or_else(|| format!("index {index} is out of range for {}", operands[0])),
                other => Err(format!("get-tuple-element of non-tuple {other}")),
            }
        }
        Opcode::Compare => {
            arity(2)?;
            let a = array(0)?;
            Ok(Shape::Array(ArrayShape {
                element_type: PrimitiveType::Pred,
                layout: None,
                ..a.clone()
            }))
        }
        Opcode::Select => {
            arity(3)?;
            Ok(strip(array(1)?))
        }
        Opcode::Clamp => {
            arity(3)?;
            Ok(strip(array(1)?))
        }
        op if op.is_elementwise_binary() => {
            arity(2)?;
            Ok(strip(array(0)?))
        }
        op if op.is_elementwise_unary() => {
            arity(1)?;
            Ok(strip(array(0)?))
        }
        _ => Err(format!(
            "the shape of {opcode} cannot be inferred; write it"
        )),
    }
}
