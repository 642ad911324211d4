//! The `tensor` dialect: `tensor.extract`, `tensor.insert`, `tensor.empty`.

use super::{expect_operands, expect_results};
use crate::diag::DResult;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::parser::Parser;
use crate::printer::Printer;
use crate::registry::{OpDef, Registry, Traits};
use crate::types::{DYNAMIC, Type};
use crate::verifier::VerifyCx;

pub fn register(r: &mut Registry) {
    r.register(
        OpDef::new("tensor.extract")
            .traits(Traits::PURE)
            .regions(0)
            .syntax(print_extract, parse_extract)
            .verify(verify_extract)
            .name_hint(|_, _| Some("extracted".into())),
    );
    r.register(
        OpDef::new("tensor.insert")
            .traits(Traits::PURE)
            .regions(0)
            .syntax(print_insert, parse_insert)
            .verify(verify_insert)
            .name_hint(|_, _| Some("inserted".into())),
    );
    r.register(
        OpDef::new("tensor.empty")
            .traits(Traits::PURE)
            .regions(0)
            .syntax(print_empty, parse_empty)
            .verify(verify_empty),
    );
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
    let op = m.create_op_at(
        OpState::new("tensor.extract")
            .operands(&operands)
            .results(&[elem]),
        at,
    );
    m.result(op, 0)
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
    let op = m.create_op_at(
        OpState::new("tensor.insert")
            .operands(&operands)
            .results(&[ty]),
        at,
    );
    m.result(op, 0)
}

/// `tensor.empty() : ty` (static shape).
pub fn build_empty(m: &mut Module, at: InsertPoint, ty: Type) -> Value {
    let op = m.create_op_at(OpState::new("tensor.empty").results(&[ty]), at);
    m.result(op, 0)
}

fn check_indices(m: &Module, op: OpId, tensor: Type, first: usize) -> Result<(), String> {
    let Some(rank) = tensor.is_tensor().then(|| tensor.rank()).flatten() else {
        return Err(format!("expects a ranked tensor, but got '{tensor}'"));
    };
    let n = m.num_operands(op) - first;
    if n != rank {
        return Err(format!(
            "incorrect number of indices: expected {rank}, but found {n}"
        ));
    }
    for (i, v) in m.operands(op).enumerate().skip(first) {
        let t = m.value_type(v);
        if !t.is_index() {
            return Err(format!("operand #{i} must be index, but got '{t}'"));
        }
    }
    Ok(())
}

// ----- tensor.extract -----

/// `%t[%i, %j]`
fn print_indexed(p: &mut Printer<'_>, op: OpId, tensor: usize) {
    let m = p.module();
    p.value(m.operand(op, tensor));
    p.write("[");
    p.values(m.operands(op).skip(tensor + 1));
    p.write("]");
}

fn print_extract(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    if m.num_operands(op) == 0 {
        p.write(" <<invalid tensor.extract>>");
        return;
    }
    p.write(" ");
    print_indexed(p, op, 0);
    p.attr_dict(op, &[]);
    p.write(" : ");
    p.ty(m.value_type(m.operand(op, 0)));
}

/// `%t[%i, ...] {attrs} : tensor<...>`, the tail extract and insert share: pushes the
/// tensor and index operands and returns the tensor type and its element type.
fn parse_indexed_tensor<'a>(
    p: &mut Parser<'a>,
    state: &mut OpState,
    before_tensor: impl FnOnce(&mut Parser<'a>, &mut OpState, Type) -> DResult<()>,
) -> DResult<(Type, Type)> {
    let loc = p.loc();
    let tensor = p.parse_operand()?;
    p.parse_punct(b'[')?;
    let indices = p.parse_operand_list()?;
    p.parse_punct(b']')?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let tloc = p.loc();
    let ty = p.parse_colon_type()?;
    let Some(elem) = ty.element_type().filter(|_| ty.is_tensor()) else {
        return Err(p.error_at(tloc, format!("expected a tensor type, but got '{ty}'")));
    };
    before_tensor(p, state, elem)?;
    state.operands.push(p.resolve_operand(&tensor, ty)?);
    state
        .operands
        .extend(p.resolve_operands(&indices, &vec![Type::INDEX; indices.len()], loc)?);
    Ok((ty, elem))
}

fn parse_extract(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let (_, elem) = parse_indexed_tensor(p, state, |_, _, _| Ok(()))?;
    state.result_types.push(elem);
    Ok(())
}

fn verify_extract(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 1)?;
    if m.num_operands(op) == 0 {
        return Err("expected a tensor operand".into());
    }
    let t = m.value_type(m.operand(op, 0));
    check_indices(m, op, t, 1)?;
    let r = m.value_type(m.result(op, 0));
    if Some(r) != t.element_type() {
        return Err(format!(
            "result type '{r}' does not match the element type of '{t}'"
        ));
    }
    Ok(())
}

// ----- tensor.insert -----

fn print_insert(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    if m.num_operands(op) < 2 {
        p.write(" <<invalid tensor.insert>>");
        return;
    }
    p.write(" ");
    p.value(m.operand(op, 0));
    p.write(" into ");
    print_indexed(p, op, 1);
    p.attr_dict(op, &[]);
    p.write(" : ");
    p.ty(m.value_type(m.operand(op, 1)));
}

fn parse_insert(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let scalar = p.parse_operand()?;
    p.parse_keyword("into")?;
    // The scalar is operand 0, so it is resolved (against the element type) before the
    // tensor and indices are pushed.
    let (ty, _) = parse_indexed_tensor(p, state, |p, state, elem| {
        state.operands.push(p.resolve_operand(&scalar, elem)?);
        Ok(())
    })?;
    state.result_types.push(ty);
    Ok(())
}

fn verify_insert(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 1)?;
    if m.num_operands(op) < 2 {
        return Err("expected a scalar and a tensor operand".into());
    }
    let t = m.value_type(m.operand(op, 1));
    check_indices(m, op, t, 2)?;
    let s = m.value_type(m.operand(op, 0));
    if Some(s) != t.element_type() {
        return Err(format!(
            "scalar type '{s}' does not match the element type of '{t}'"
        ));
    }
    let r = m.value_type(m.result(op, 0));
    if r != t {
        return Err(format!(
            "result type '{r}' does not match the destination type '{t}'"
        ));
    }
    Ok(())
}

// ----- tensor.empty -----

fn print_empty(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write("(");
    p.values(m.operands(op));
    p.write(")");
    p.attr_dict(op, &[]);
    p.write(" : ");
    p.result_types(&m.result_types(op));
}

fn parse_empty(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    p.parse_punct(b'(')?;
    let loc = p.loc();
    let sizes = p.parse_operand_list()?;
    p.parse_punct(b')')?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.operands = p.resolve_operands(&sizes, &vec![Type::INDEX; sizes.len()], loc)?;
    state.result_types.push(ty);
    Ok(())
}

fn verify_empty(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 1)?;
    let t = m.value_type(m.result(op, 0));
    let Some(shape) = t.shape().filter(|_| t.is_tensor()) else {
        return Err(format!("result #0 must be a ranked tensor, but got '{t}'"));
    };
    let dynamic = shape.iter().filter(|&&d| d == DYNAMIC).count();
    expect_operands(m, op, dynamic).map_err(|_| {
        format!(
            "incorrect number of dynamic sizes, has {}, expected {dynamic}",
            m.num_operands(op)
        )
    })
}
