//! The `tensor` dialect: `tensor.extract`, `tensor.insert`, `tensor.empty`.

use crate::dialects::prelude::*;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::types::{DYNAMIC, Type};
use crate::verifier::VerifyCx;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const EMPTY: &str = "tensor.empty";
pub const EXTRACT: &str = "tensor.extract";
pub const INSERT: &str = "tensor.insert";

/// The dialect's ops, declared.
const OPS: &[OpDef] = &[
    OpDef::pure(EXTRACT)
        .operands(&[one("tensor", &RANKED_TENSOR), variadic("indices", &INDEX)])
        .results(&[one("result", &ANY)])
        .rules(&[TypeRule::Derived {
            from: "tensor",
            to: "result",
            derive: tensor_element,
            message: "result type '{to}' does not match the element type of '{from}'",
        }])
        .format("$tensor `[` $indices `]` attr-dict `:` type($tensor)")
        .verify(verify_extract)
        .name_hint(|_, _| Some("extracted".into())),
    OpDef::pure(INSERT)
        .operands(&[
            one("scalar", &ANY),
            one("dest", &RANKED_TENSOR),
            variadic("indices", &INDEX),
        ])
        .results(&[one("result", &ANY)])
        .rules(&[
            TypeRule::Derived {
                from: "dest",
                to: "scalar",
                derive: tensor_element,
                message: "scalar type '{to}' does not match the element type of '{from}'",
            },
            same_type(
                "dest",
                "result",
                "result type '{to}' does not match the destination type '{from}'",
            ),
        ])
        .format("$scalar `into` $dest `[` $indices `]` attr-dict `:` type($dest)")
        .verify(verify_insert)
        .name_hint(|_, _| Some("inserted".into())),
    OpDef::pure(EMPTY)
        .operands(&[variadic("dynamicSizes", &INDEX)])
        .results(&[one("result", &RANKED_TENSOR)])
        .format("`(`$dynamicSizes`)` attr-dict `:` type($result)")
        .verify(verify_empty),
];

pub fn register(r: &mut Registry) {
    r.register_all(OPS);
}

// ----- builders -----

/// `tensor.extract %t[indices]`.
pub fn build_extract(m: &mut Module, at: InsertPoint, tensor: Value, indices: &[Value]) -> Value {
    let elem = m
        .value_type(tensor)
        .element_type()
        .expect("tensor.extract of a tensor");
    let mut operands = vec![tensor];
    operands.extend_from_slice(indices);
    m.create_result_at(
        OpState::new(EXTRACT).operands(&operands).results(&[elem]),
        at,
    )
}

/// `tensor.insert %v into %t[indices]`.
pub fn build_insert(
    m: &mut Module,
    at: InsertPoint,
    scalar: Value,
    tensor: Value,
    indices: &[Value],
) -> Value {
    let ty = m.value_type(tensor);
    let mut operands = vec![scalar, tensor];
    operands.extend_from_slice(indices);
    m.create_result_at(OpState::new(INSERT).operands(&operands).results(&[ty]), at)
}

/// `tensor.empty() : ty` (static shape).
pub fn build_empty(m: &mut Module, at: InsertPoint, ty: Type) -> Value {
    m.create_result_at(OpState::new(EMPTY).results(&[ty]), at)
}

/// `tensor` (ranked, as declared) has one index operand per dimension after the first
/// `first` operands.
fn check_indices(m: &Module, op: OpId, first: usize) -> Result<(), String> {
    let tensor = m.value_type(m.operand(op, first - 1));
    let rank = tensor.rank().unwrap_or(0);
    let n = m.num_operands(op) - first;
    if n != rank {
        return Err(format!(
            "incorrect number of indices: expected {rank}, but found {n}"
        ));
    }
    Ok(())
}

// ----- verifiers: what the declarations cannot say -----

fn verify_extract(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    check_indices(cx.module, op, 1)
}

fn verify_insert(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    check_indices(cx.module, op, 2)
}

fn verify_empty(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let t = m.value_type(m.result(op, 0));
    let dynamic = t
        .shape()
        .map_or(0, |s| s.iter().filter(|&&d| d == DYNAMIC).count());
    if m.num_operands(op) != dynamic {
        return Err(format!(
            "incorrect number of dynamic sizes, has {}, expected {dynamic}",
            m.num_operands(op)
        ));
    }
    Ok(())
}
