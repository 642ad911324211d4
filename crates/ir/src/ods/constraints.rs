//! The type constraints of declared operands and results, with MLIR's summaries, and the type
//! predicates they are made of.

use super::Constraint;
use crate::types::{Type, TypeKind};

/// A float, or a tensor/vector of floats.
pub fn is_float_like(t: Type) -> bool {
    t.element_type_or_self().is_float()
}

/// A signless integer or index, or a tensor/vector of them.
pub fn is_int_like(t: Type) -> bool {
    t.element_type_or_self().is_signless_int_or_index()
}

/// `i1`, or a tensor/vector of `i1`.
pub fn is_bool_like(t: Type) -> bool {
    t.element_type_or_self() == Type::I1
}

/// `t` with its element type replaced by `elem` (`tensor<4xf32>` → `tensor<4xi1>`); a
/// tensor keeps its layout.
pub fn with_element_type(t: Type, elem: Type) -> Type {
    match t.kind() {
        TypeKind::Tensor { shape, layout, .. } => Type::get(TypeKind::Tensor {
            shape: shape.clone(),
            elem,
            layout: layout.clone(),
        }),
        TypeKind::Vector { shape, .. } => Type::vector(shape, elem),
        _ => elem,
    }
}

/// The element type of a tensor (what `tensor.extract` yields).
pub fn tensor_element(t: Type) -> Option<Type> {
    t.element_type().filter(|_| t.is_tensor())
}

/// `i1` with the shape of `t` (what a comparison yields).
pub fn i1_like(t: Type) -> Option<Type> {
    Some(with_element_type(t, Type::I1))
}

pub const ANY: Constraint = Constraint {
    summary: "any type",
    check: |_| true,
    buildable: None,
    class: None,
};

pub const FLOAT_LIKE: Constraint = Constraint {
    summary: "floating-point-like",
    check: is_float_like,
    buildable: None,
    class: None,
};

pub const INT_LIKE: Constraint = Constraint {
    summary: "signless-integer-like",
    check: is_int_like,
    buildable: None,
    class: None,
};

pub const BOOL_LIKE: Constraint = Constraint {
    summary: "bool-like",
    check: is_bool_like,
    buildable: None,
    class: None,
};

pub const INDEX: Constraint = Constraint {
    summary: "index",
    check: |t| t.is_index(),
    buildable: Some(Type::INDEX),
    class: None,
};

pub const I1: Constraint = Constraint {
    summary: "1-bit signless integer",
    check: |t| t == Type::I1,
    buildable: Some(Type::I1),
    class: None,
};

pub const I32: Constraint = Constraint {
    summary: "32-bit signless integer",
    check: |t| t == Type::I32,
    buildable: Some(Type::I32),
    class: None,
};

pub const RANKED_TENSOR: Constraint = Constraint {
    summary: "ranked tensor",
    check: |t| t.is_tensor() && t.rank().is_some(),
    buildable: None,
    class: Some("builtin.tensor"),
};

pub const VECTOR: Constraint = Constraint {
    summary: "vector of any type values",
    check: |t| t.is_vector(),
    buildable: None,
    class: Some("builtin.vector"),
};
