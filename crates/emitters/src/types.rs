//! HLO element types and shapes as IR types.
//!
//! Integers are signless in the IR (MLIR's convention); whether an op treats them as signed
//! or unsigned comes from the HLO element type at emission time. Types the emitters do not
//! handle (1-bit integers, tokens) are refused with a reason.

use hlo::{ArrayShape, Computation, Diagnostic, PrimitiveType, Shape};
use ir::{Attribute, Type};

use crate::unsupported;

/// The IR type of one element of `p`.
pub fn element_type(p: PrimitiveType) -> Result<Type, String> {
    use PrimitiveType::*;
    Ok(match p {
        Pred => Type::I1,
        // Packed in memory (two or four to a byte); `lower-tensors` reads and writes their bits.
        S2 | U2 => Type::int(2),
        S4 | U4 => Type::int(4),
        // Their encodings: only `convert` (`elemental/narrow_float.rs`), bitcasts, data
        // movement and constants handle them; other ops on them are refused.
        F4E2M1FN => Type::int(4),
        F8E3M4 | F8E4M3 | F8E4M3FN | F8E4M3B11FNUZ | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ
        | F8E8M0FNU => Type::I8,
        // Its 64- or 128-bit pattern, real part low: `elemental/complex` takes it apart.
        C64 => Type::I64,
        C128 => Type::int(128),
        S8 | U8 => Type::I8,
        S16 | U16 => Type::I16,
        S32 | U32 => Type::I32,
        S64 | U64 => Type::I64,
        F16 => Type::F16,
        BF16 => Type::BF16,
        F32 => Type::F32,
        F64 => Type::F64,
        other => return Err(format!("element type {}", other.name())),
    })
}

/// `tensor<d0 x .. x elem>` for an array shape (a scalar is `tensor<elem>`), with the
/// array's layout in the encoding slot when it has a non-default one
/// (`tensor<4x8xf32, #xla.layout<"{0,1}">>`), so `flatten-tensors` can compute physical
/// offsets.
pub fn tensor_type(a: &ArrayShape) -> Result<Type, String> {
    let elem = element_type(a.element_type)?;
    match &a.layout {
        Some(layout) => Type::tensor_with_layout(&a.dims, elem, layout),
        None => Ok(Type::tensor(&a.dims, elem)),
    }
}

/// The arrays of a shape in order, flattening nested tuples (the values an instruction of
/// this shape produces at one index).
pub fn leaves(shape: &Shape) -> Vec<&ArrayShape> {
    fn walk<'s>(shape: &'s Shape, out: &mut Vec<&'s ArrayShape>) {
        match shape {
            Shape::Array(a) => out.push(a),
            Shape::Tuple(elements) => elements.iter().for_each(|e| walk(e, out)),
        }
    }
    let mut out = Vec::new();
    walk(shape, &mut out);
    out
}

/// The element types of a shape's leaves.
pub fn leaf_element_types(shape: &Shape) -> Result<Vec<Type>, String> {
    leaves(shape)
        .into_iter()
        .map(|a| element_type(a.element_type))
        .collect()
}

/// The range of leaf positions that tuple element `index` of `shape` covers.
pub fn leaf_range(shape: &Shape, index: usize) -> Option<std::ops::Range<usize>> {
    let Shape::Tuple(elements) = shape else {
        return None;
    };
    let start: usize = elements[..index.min(elements.len())]
        .iter()
        .map(|e| leaves(e).len())
        .sum();
    let element = elements.get(index)?;
    Some(start..start + leaves(element).len())
}

/// The bytes an element of IR type `t` takes in shared memory (whole bytes; `i1` takes one).
pub fn element_bytes(t: Type) -> i64 {
    (i64::from(t.bit_width().unwrap_or(8)) + 7) / 8
}

/// The tensor type of each parameter of `fusion`, in order; a tuple-shaped parameter is
/// refused at its instruction.
pub(crate) fn parameter_types(fusion: &Computation) -> Result<Vec<Type>, Diagnostic> {
    fusion
        .parameters()
        .into_iter()
        .map(|p| {
            let instr = fusion.instruction(p);
            let span = instr.spans.whole;
            let array = instr
                .shape
                .as_array()
                .ok_or_else(|| unsupported(span, "a tuple-shaped fusion parameter"))?;
            tensor_type(array).map_err(|e| unsupported(span, e))
        })
        .collect()
}

/// `[lo : index, hi : index]`, the inclusive range of an index value.
pub fn range_array(lo: i64, hi: i64) -> Attribute {
    Attribute::Array(vec![Attribute::index(lo), Attribute::index(hi)])
}

/// Index arguments carry their range (`{xla.range = [0 : index, n - 1 : index]}`), which
/// later passes use to simplify index arithmetic.
pub fn range_attr(lo: i64, hi: i64) -> Attribute {
    Attribute::dict(vec![ir::NamedAttr {
        name: ir::Ident::new("xla.range"),
        value: range_array(lo, hi),
    }])
}
