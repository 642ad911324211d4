//! The `vector` dialect: `vector.transfer_read`/`transfer_write` between tensors and vectors
//! (what `vectorize-loads-stores` makes of contiguous accesses), `vector.extract`/`insert` of
//! elements or sub-vectors, `vector.broadcast` and (read from XLA's IR) `vector.from_elements`.
//!
//! On tensors (the only operands here) transfers have no side effects, so they are pure.
//! MLIR 22 no longer has `vector.splat`: a splat is `vector.broadcast` of a scalar, and a
//! constant vector is `arith.constant dense<...> : vector<..>`. Transfers are unmasked here
//! (the pipeline never masks); a mask operand is reported, not silently dropped.

use super::{
    dense_i32_array, dense_ints, expect_operands, expect_results, operand_segments,
    parse_dynamic_index_list, parse_int_list, print_dynamic_index_list, print_int_list,
    split_top_level,
};
use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::dialects::prelude::*;
use crate::lexer::Token;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::parser::{Parser, UnresolvedOperand};
use crate::printer::Printer;
use crate::types::{DYNAMIC, Type};
use crate::verifier::VerifyCx;
use std::ops::Range;

mod transfers;
mod whole;
use transfers::*;
pub use transfers::{has_minor_identity_map, is_in_bounds};
pub use whole::{
    REDUCTION_KINDS, build_multi_reduction, build_transpose, permutation, reduced_type,
    reduction_dims, reduction_kind,
};
use whole::{
    parse_multi_reduction, parse_transpose, print_multi_reduction, print_transpose,
    verify_multi_reduction, verify_transpose,
};

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const BROADCAST: &str = "vector.broadcast";
pub const EXTRACT: &str = "vector.extract";
pub const FROM_ELEMENTS: &str = "vector.from_elements";
pub const INSERT: &str = "vector.insert";
pub const MULTI_REDUCTION: &str = "vector.multi_reduction";
pub const TRANSFER_READ: &str = "vector.transfer_read";
pub const TRANSFER_WRITE: &str = "vector.transfer_write";
pub const TRANSPOSE: &str = "vector.transpose";

/// The dialect's ops, declared.
const OPS: &[OpDef] = &[
    OpDef::pure(TRANSFER_READ)
        .inherent(&["in_bounds", "permutation_map", "operandSegmentSizes"])
        .syntax(print_transfer_read, parse_transfer_read)
        .verify(verify_transfer_read),
    OpDef::pure(TRANSFER_WRITE)
        .inherent(&["in_bounds", "permutation_map", "operandSegmentSizes"])
        .syntax(print_transfer_write, parse_transfer_write)
        .verify(verify_transfer_write),
    OpDef::pure(EXTRACT)
        .inherent(&["static_position"])
        .syntax(print_extract, parse_extract)
        .verify(verify_extract),
    OpDef::pure(INSERT)
        .inherent(&["static_position"])
        .syntax(print_insert, parse_insert)
        .verify(verify_insert),
    OpDef::pure(MULTI_REDUCTION)
        .inherent(&["kind", "reduction_dims"])
        .syntax(print_multi_reduction, parse_multi_reduction)
        .verify(verify_multi_reduction),
    OpDef::pure(TRANSPOSE)
        .inherent(&["permutation"])
        .syntax(print_transpose, parse_transpose)
        .verify(verify_transpose),
    OpDef::pure(BROADCAST)
        .operands(&[one("source", &ANY)])
        .results(&[one("vector", &VECTOR)])
        .format("$source attr-dict `:` type($source) `to` type($vector)")
        .verify(verify_broadcast),
    // Read and printed as MLIR does; our builders write the broadcast-and-insert chain
    // MLIR lowers it to (`build_from_elements`), so only `lower-to-llvm` (MLIR's) meets it.
    OpDef::pure(FROM_ELEMENTS)
        .syntax(print_from_elements, parse_from_elements)
        .verify(verify_from_elements),
];

pub fn register(r: &mut Registry) {
    r.register_all(OPS);
}

/// One position of `vector.extract`/`insert`: a constant, or an `index` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    Static(i64),
    Dynamic(Value),
}

// ----- builders -----

/// `vector.transfer_read %source[indices], %padding : source type, vector_ty` with the
/// minor identity permutation map; `in_bounds` has one entry per vector dimension.
pub fn build_transfer_read(
    m: &mut Module,
    at: InsertPoint,
    source: Value,
    indices: &[Value],
    padding: Value,
    vector_ty: Type,
    in_bounds: &[bool],
) -> Value {
    let source_rank = m.value_type(source).rank().unwrap_or(0);
    let mut operands = vec![source];
    operands.extend_from_slice(indices);
    operands.push(padding);
    m.create_result_at(
        transfer_state(TRANSFER_READ, source_rank, vector_ty, in_bounds)
            .operands(&operands)
            .prop(
                "operandSegmentSizes",
                dense_i32_array(&[1, indices.len() as i64, 1, 0]),
            )
            .results(&[vector_ty]),
        at,
    )
}

/// `vector.transfer_write %vector, %dest[indices] : vector type, dest type`, returning the
/// updated tensor.
pub fn build_transfer_write(
    m: &mut Module,
    at: InsertPoint,
    vector: Value,
    dest: Value,
    indices: &[Value],
    in_bounds: &[bool],
) -> Value {
    let dest_ty = m.value_type(dest);
    let mut operands = vec![vector, dest];
    operands.extend_from_slice(indices);
    m.create_result_at(
        transfer_state(
            TRANSFER_WRITE,
            dest_ty.rank().unwrap_or(0),
            m.value_type(vector),
            in_bounds,
        )
        .operands(&operands)
        .prop(
            "operandSegmentSizes",
            dense_i32_array(&[1, 1, indices.len() as i64, 0]),
        )
        .results(&[dest_ty]),
        at,
    )
}

/// `vector.extract %vector[positions]`: an element, or a sub-vector with fewer positions
/// than the vector's rank.
pub fn build_extract(
    m: &mut Module,
    at: InsertPoint,
    vector: Value,
    positions: &[Position],
) -> Value {
    let ty = extracted_type(m.value_type(vector), positions.len());
    m.create_result_at(position_op(EXTRACT, &[vector], positions, ty), at)
}

/// `vector.insert %value, %dest[positions]`, returning the updated vector.
pub fn build_insert(
    m: &mut Module,
    at: InsertPoint,
    value: Value,
    dest: Value,
    positions: &[Position],
) -> Value {
    let ty = m.value_type(dest);
    m.create_result_at(position_op(INSERT, &[value, dest], positions, ty), at)
}

/// `vector.broadcast %source : type to vector_ty` (a splat when `source` is a scalar).
pub fn build_broadcast(m: &mut Module, at: InsertPoint, source: Value, vector_ty: Type) -> Value {
    m.create_result_at(
        OpState::new(BROADCAST)
            .operands(&[source])
            .results(&[vector_ty]),
        at,
    )
}

/// A vector of `vector_ty` from its elements in row-major order: a broadcast of the first,
/// then a `vector.insert` of each other at its position (MLIR has `vector.from_elements`;
/// MLIR 22's lowering of it to LLVM is the same chain).
pub fn build_from_elements(
    m: &mut Module,
    at: InsertPoint,
    vector_ty: Type,
    elements: &[Value],
) -> Value {
    let shape = vector_ty.shape().unwrap_or(&[]).to_vec();
    let mut v = build_broadcast(m, at, elements[0], vector_ty);
    for (k, &x) in elements.iter().enumerate().skip(1) {
        let position: Vec<Position> = indexing::delinearize_point(k as u64, &shape)
            .into_iter()
            .map(Position::Static)
            .collect();
        v = build_insert(m, at, x, v, &position);
    }
    v
}

fn split_positions(positions: &[Position]) -> (Vec<i64>, Vec<Value>) {
    let mut dynamic = Vec::new();
    let statics = positions
        .iter()
        .map(|p| match *p {
            Position::Static(i) => i,
            Position::Dynamic(v) => {
                dynamic.push(v);
                DYNAMIC
            }
        })
        .collect();
    (statics, dynamic)
}

/// A `vector.extract` or `vector.insert` of `result`: the `leading` operands, then the
/// dynamic positions, whose places `static_position` marks among the static ones.
fn position_op(name: &str, leading: &[Value], positions: &[Position], result: Type) -> OpState {
    let (statics, dynamic) = split_positions(positions);
    OpState::new(name)
        .operands(&[leading, &dynamic].concat())
        .prop("static_position", Attribute::dense_i64_array(&statics))
        .results(&[result])
}

// ----- positions of extract and insert -----

/// The type `vector.extract` with `n` positions yields: the element at full rank, else the
/// sub-vector of the remaining dimensions.
fn extracted_type(vector: Type, n: usize) -> Type {
    let shape = vector.shape().unwrap_or(&[]);
    let elem = vector.element_type().unwrap_or(vector);
    if n >= shape.len() {
        elem
    } else {
        Type::vector(&shape[n..], elem)
    }
}

/// Checks `static_position` against the vector type and the dynamic (index) operands, which
/// start at operand `first_dynamic`. `what` is "vector" or "dest vector" as in MLIR's
/// messages; `poison` is the suffix that mentions the poison position (extract only).
fn verify_positions(
    m: &Module,
    op: OpId,
    vector: Type,
    first_dynamic: usize,
    what: &str,
    poison: &str,
) -> Result<Vec<i64>, String> {
    let Some(statics) = dense_ints(m.prop(op, "static_position")) else {
        return Err("requires attribute 'static_position'".into());
    };
    for i in first_dynamic..m.num_operands(op) {
        let t = m.value_type(m.operand(op, i));
        if !t.is_index() {
            return Err(format!(
                "operand #{first_dynamic} must be variadic of index, but got '{t}'"
            ));
        }
    }
    let shape = vector.shape().unwrap_or(&[]);
    if statics.len() > shape.len() {
        return Err(format!(
            "expected position attribute of rank no greater than {what} rank"
        ));
    }
    let dynamic = statics.iter().filter(|&&s| s == DYNAMIC).count();
    if dynamic != m.num_operands(op) - first_dynamic {
        return Err("mismatch between dynamic and static positions (kDynamic marker but no corresponding dynamic position) -- this can only happen due to an incorrect fold/rewrite".into());
    }
    for (i, (&s, &dim)) in statics.iter().zip(shape).enumerate() {
        if s != DYNAMIC && s != -1 && !(0..dim).contains(&s) {
            return Err(format!(
                "expected position attribute #{} to be a non-negative integer smaller than the corresponding {what} dimension{poison}",
                i + 1
            ));
        }
    }
    Ok(statics)
}

/// `[%i, 2] {attrs} : first keyword second`, what `vector.extract` (`: result from vector`)
/// and `vector.insert` (`: source into vector`) print after their operands: the static
/// positions with the dynamic operands from `first_dynamic` on in place of the markers.
fn print_positions_tail(
    p: &mut Printer<'_>,
    op: OpId,
    first_dynamic: usize,
    (first, keyword, second): (Type, &str, Type),
) {
    let m = p.module();
    let statics = dense_ints(m.prop(op, "static_position")).unwrap_or_default();
    p.write("[");
    print_dynamic_index_list(p, statics, DYNAMIC, m.operands(op).skip(first_dynamic));
    p.write("]");
    p.attr_dict(op, &["static_position"]);
    p.write(" : ");
    p.ty(first);
    p.write(" ");
    p.write(keyword);
    p.write(" ");
    p.ty(second);
}

/// Parses what [`print_positions_tail`] writes: the dynamic positions and the two types.
fn parse_positions_tail<'a>(
    p: &mut Parser<'a>,
    state: &mut OpState,
    keyword: &str,
) -> DResult<(Vec<UnresolvedOperand<'a>>, Type, Type)> {
    let dynamic = parse_positions(p, state)?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let first = p.parse_colon_type()?;
    p.parse_keyword(keyword)?;
    let second = p.parse_type()?;
    Ok((dynamic, first, second))
}

/// Parses `[%i, 2]` into the `static_position` property; returns the dynamic operands.
fn parse_positions<'a>(
    p: &mut Parser<'a>,
    state: &mut OpState,
) -> DResult<Vec<UnresolvedOperand<'a>>> {
    p.parse_punct(b'[')?;
    let (statics, dynamic) = if p.parse_optional_punct(b']') {
        (Vec::new(), Vec::new())
    } else {
        let narrow = |i| i64::try_from(i).ok();
        parse_dynamic_index_list(p, b']', DYNAMIC, narrow, "position out of range")?
    };
    attrs::set_named(
        &mut state.props,
        Ident::new("static_position"),
        Attribute::dense_i64_array(&statics),
    );
    Ok(dynamic)
}

fn expect_vector(t: Type, operand: usize) -> Result<(), String> {
    if t.is_vector() {
        Ok(())
    } else {
        Err(format!(
            "operand #{operand} must be vector of any type values, but got '{t}'"
        ))
    }
}

// ----- vector.extract -----

fn verify_extract(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 1)?;
    if m.num_operands(op) == 0 {
        return Err("expected a vector operand".into());
    }
    let v = m.value_type(m.operand(op, 0));
    expect_vector(v, 0)?;
    let statics = verify_positions(m, op, v, 1, "vector", " or poison (-1)")?;
    let r = m.value_type(m.result(op, 0));
    if r.element_type_or_self() != v.element_type_or_self() {
        return Err("failed to verify that operand and result have same element type".into());
    }
    let inferred = extracted_type(v, statics.len());
    if r != inferred {
        return Err(format!(
            "inferred type(s) '{inferred}' are incompatible with return type(s) of operation '{r}'"
        ));
    }
    Ok(())
}

/// `%v[%i, 2] {attrs} : result from vector<..>`
fn print_extract(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let vector = m.operand(op, 0);
    p.write(" ");
    p.value(vector);
    let result = m.value_type(m.result(op, 0));
    print_positions_tail(p, op, 1, (result, "from", m.value_type(vector)));
}

fn parse_extract(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let vector = p.parse_operand()?;
    let (dynamic, result, vector_ty) = parse_positions_tail(p, state, "from")?;
    state.operands = p.resolve_indexed_operands(&[(vector, vector_ty)], &dynamic)?;
    state.result_types.push(result);
    Ok(())
}

// ----- vector.insert -----

fn verify_insert(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 1)?;
    if m.num_operands(op) < 2 {
        return Err(format!(
            "expected at least 2 operands, but found {}",
            m.num_operands(op)
        ));
    }
    let dest = m.value_type(m.operand(op, 1));
    expect_vector(dest, 1)?;
    if m.value_type(m.result(op, 0)) != dest {
        return Err("failed to verify that all of {dest, result} have same type".into());
    }
    let source = m.value_type(m.operand(op, 0));
    if source.element_type_or_self() != dest.element_type_or_self() {
        return Err(
            "failed to verify that source operand and result have same element type".into(),
        );
    }
    let statics = verify_positions(m, op, dest, 2, "dest vector", "")?;
    let dest_rank = dest.rank().unwrap_or(0);
    if source.is_vector() {
        if statics.len() + source.rank().unwrap_or(0) != dest_rank {
            return Err(
                "expected position attribute rank + source rank to match dest vector rank".into(),
            );
        }
    } else if statics.len() != dest_rank {
        return Err("expected position attribute rank to match the dest vector rank".into());
    }
    Ok(())
}

/// `%s, %v [%i] {attrs} : source into vector<..>`
fn print_insert(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.values(m.operands(op).take(2));
    p.write(" ");
    let types = m.operand_types(op);
    print_positions_tail(p, op, 2, (types[0], "into", types[1]));
}

fn parse_insert(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let value = p.parse_operand()?;
    p.parse_punct(b',')?;
    let dest = p.parse_operand()?;
    let (dynamic, value_ty, dest_ty) = parse_positions_tail(p, state, "into")?;
    state.operands = p.resolve_indexed_operands(&[(value, value_ty), (dest, dest_ty)], &dynamic)?;
    state.result_types.push(dest_ty);
    Ok(())
}

// ----- vector.broadcast -----

/// ` %a, %b : vector<2xf32>`: the elements' types are the result's element type.
fn print_from_elements(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.values(m.operands(op));
    p.attr_dict(op, &[]);
    p.write(" : ");
    p.ty(m.value_type(m.result(op, 0)));
}

fn parse_from_elements(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let elements = p.parse_operand_list()?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let type_loc = p.loc();
    let vector = p.parse_type()?;
    let (Some(elem), Some(n)) = (vector.element_type(), vector.num_elements()) else {
        return Err(p.error_at(type_loc, format!("expected a vector type, got '{vector}'")));
    };
    if usize::try_from(n).ok() != Some(elements.len()) {
        return Err(p.error_at(
            loc,
            format!("{} operands present, but expected {n}", elements.len()),
        ));
    }
    state.operands = p.resolve_operands(&elements, &vec![elem; elements.len()], loc)?;
    state.result_types = vec![vector];
    Ok(())
}

/// One element of the result's element type for each of its elements.
fn verify_from_elements(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 1)?;
    let vector = m.value_type(m.result(op, 0));
    let (Some(elem), Some(n)) = (vector.element_type(), vector.num_elements()) else {
        return Err(format!("result #0 must be vector, but got '{vector}'"));
    };
    if vector.is_tensor() {
        return Err(format!("result #0 must be vector, but got '{vector}'"));
    }
    if usize::try_from(n).ok() != Some(m.num_operands(op))
        || m.operand_types(op).iter().any(|&t| t != elem)
    {
        return Err("failed to verify that operand types match result element type".into());
    }
    Ok(())
}

fn verify_broadcast(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let source = m.value_type(m.operand(op, 0));
    let result = m.value_type(m.result(op, 0));
    if source.element_type_or_self() != result.element_type_or_self() {
        return Err(
            "failed to verify that source operand and result have same element type".into(),
        );
    }
    if source.is_tensor() {
        return Err("source type is not a vector".into());
    }
    let (src, dst) = (source.shape().unwrap_or(&[]), result.shape().unwrap_or(&[]));
    if src.len() > dst.len() {
        return Err("source rank higher than destination rank".into());
    }
    // Trailing dimensions must agree, or be 1 in the source (stretched).
    for (&s, &d) in src.iter().rev().zip(dst.iter().rev()) {
        if s != 1 && s != d {
            return Err(format!("dimension mismatch ({s} vs. {d})"));
        }
    }
    Ok(())
}
