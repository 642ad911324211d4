//! The type constraints of declared operands and results, with MLIR's summaries, and the type
//! predicates they are made of.

use super::Constraint;
use crate::types::{Type, TypeKind};

/// A float (narrow storage formats included), or a tensor/vector of floats.
pub fn is_float_like(t: Type) -> bool {
    t.element_type_or_self().is_any_float()
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
        TypeKind::Tensor {
            shape,
            layout,
            thread_layout,
            ..
        } => Type::get(TypeKind::Tensor {
            shape: shape.clone(),
            elem,
            layout: layout.clone(),
            thread_layout: thread_layout.clone(),
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

pub const ANY: Constraint = Constraint::new("any type", |_| true);

pub const FLOAT_LIKE: Constraint = Constraint::new("floating-point-like", is_float_like);

pub const INT_LIKE: Constraint = Constraint::new("signless-integer-like", is_int_like);

pub const BOOL_LIKE: Constraint = Constraint::new("bool-like", is_bool_like);

pub const INDEX: Constraint = Constraint::new("index", |t| t.is_index()).buildable(Type::INDEX);

pub const I1: Constraint =
    Constraint::new("1-bit signless integer", |t| t == Type::I1).buildable(Type::I1);

pub const I32: Constraint =
    Constraint::new("32-bit signless integer", |t| t == Type::I32).buildable(Type::I32);

pub const RANKED_TENSOR: Constraint =
    Constraint::new("ranked tensor", |t| t.is_tensor() && t.rank().is_some())
        .class("builtin.tensor");

pub const VECTOR: Constraint =
    Constraint::new("vector of any type values", |t| t.is_vector()).class("builtin.vector");
