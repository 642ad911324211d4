//! `vector.multi_reduction` and `vector.transpose`: ops on whole n-d vectors, as a kernel
//! states them before `distribute-vector-layout` gives each thread its part (seed 004).

use super::*;
use crate::ods::{enum_attr, enum_case};

/// The combining kinds of `vector.multi_reduction` (`#vector.kind<..>`), MLIR's names.
pub const REDUCTION_KINDS: &[&str] = &[
    "add", "mul", "minui", "minsi", "minnumf", "maxui", "maxsi", "maxnumf", "and", "or", "xor",
    "minimumf", "maximumf",
];

const KIND_OPEN: &str = "#vector.kind<";

/// The kind of a `vector.multi_reduction` (`add`).
pub fn reduction_kind(m: &Module, op: OpId) -> Option<&str> {
    enum_case(m.prop(op, "kind"), KIND_OPEN)
}

/// The reduced dimensions of a `vector.multi_reduction`.
pub fn reduction_dims(m: &Module, op: OpId) -> Vec<i64> {
    dense_ints(m.prop(op, "reduction_dims")).unwrap_or_default()
}

/// The permutation of a `vector.transpose`.
pub fn permutation(m: &Module, op: OpId) -> Vec<i64> {
    dense_ints(m.prop(op, "permutation")).unwrap_or_default()
}

/// `vector.multi_reduction <kind>, %source, %acc [dims]`: the result type is the source's
/// without the reduced dimensions (a scalar when none is left).
pub fn build_multi_reduction(
    m: &mut Module,
    at: InsertPoint,
    kind: &str,
    (source, acc): (Value, Value),
    dims: &[i64],
) -> Value {
    let ty = m.value_type(acc);
    m.create_result_at(
        OpState::new(super::MULTI_REDUCTION)
            .operands(&[source, acc])
            .prop("kind", enum_attr(KIND_OPEN, kind))
            .prop("reduction_dims", Attribute::dense_i64_array(dims))
            .results(&[ty]),
        at,
    )
}

/// `vector.transpose %v, [permutation]`.
pub fn build_transpose(m: &mut Module, at: InsertPoint, v: Value, permutation: &[i64]) -> Value {
    let ty = m.value_type(v);
    let shape = ty.shape().unwrap_or(&[]);
    let permuted: Vec<i64> = permutation.iter().map(|&p| shape[p as usize]).collect();
    let result = Type::vector(&permuted, ty.element_type_or_self());
    m.create_result_at(
        OpState::new(super::TRANSPOSE)
            .operands(&[v])
            .prop("permutation", Attribute::dense_i64_array(permutation))
            .results(&[result]),
        at,
    )
}

/// The type a reduction of `source` over `dims` gives.
pub fn reduced_type(source: Type, dims: &[i64]) -> Type {
    let shape = source.shape().unwrap_or(&[]);
    let kept: Vec<i64> = (0..shape.len())
        .filter(|d| !dims.contains(&(*d as i64)))
        .map(|d| shape[d])
        .collect();
    let elem = source.element_type_or_self();
    if kept.is_empty() {
        elem
    } else {
        Type::vector(&kept, elem)
    }
}

/// `[1, 0]`: a list of integers, each in `0..rank`, none twice.
fn distinct_dims(list: &[i64], rank: usize, what: &str) -> Result<(), String> {
    let mut seen = vec![false; rank];
    for &d in list {
        let Some(slot) = usize::try_from(d).ok().and_then(|d| seen.get_mut(d)) else {
            return Err(format!("{what} {d} is out of range for rank {rank}"));
        };
        if std::mem::replace(slot, true) {
            return Err(format!("{what} {d} appears twice"));
        }
    }
    Ok(())
}

pub(super) fn verify_multi_reduction(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 1)?;
    expect_operands(m, op, 2)?;
    let source = m.value_type(m.operand(op, 0));
    expect_vector(source, 0)?;
    let kind = reduction_kind(m, op).ok_or("requires a 'kind' property")?;
    let elem = source.element_type_or_self();
    let float_kind = kind.ends_with('f');
    let int_kind = !float_kind && kind != "add" && kind != "mul";
    if !REDUCTION_KINDS.contains(&kind)
        || (float_kind && !elem.is_float())
        || (int_kind && !elem.is_signless_int_or_index())
    {
        return Err(format!("unsupported reduction kind '{kind}' for '{elem}'"));
    }
    let dims = dense_ints(m.prop(op, "reduction_dims"))
        .ok_or("requires a 'reduction_dims' property of i64 integers (array<i64: ..>)")?;
    distinct_dims(&dims, source.rank().unwrap_or(0), "reduction dimension")?;
    let want = reduced_type(source, &dims);
    for (what, v) in [("acc", m.operand(op, 1)), ("result", m.result(op, 0))] {
        let t = m.value_type(v);
        if t != want {
            return Err(format!(
                "{what} type '{t}' is not the reduced type '{want}'"
            ));
        }
    }
    Ok(())
}

/// `<add>, %source, %acc [1] {attrs} : vector<4x8xf32> to vector<4xf32>`
pub(super) fn print_multi_reduction(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" <");
    p.write(reduction_kind(m, op).unwrap_or("add"));
    p.write(">, ");
    p.value(m.operand(op, 0));
    p.write(", ");
    p.value(m.operand(op, 1));
    p.write(" ");
    print_int_list(p, &reduction_dims(m, op));
    p.attr_dict(op, &["kind", "reduction_dims"]);
    p.write(" : ");
    p.ty(m.value_type(m.operand(op, 0)));
    p.write(" to ");
    p.ty(m.value_type(m.result(op, 0)));
}

pub(super) fn parse_multi_reduction(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    p.parse_punct(b'<')?;
    let kind = p.parse_any_keyword()?.to_string();
    p.parse_punct(b'>')?;
    p.parse_punct(b',')?;
    let source = p.parse_operand()?;
    p.parse_punct(b',')?;
    let acc = p.parse_operand()?;
    let dims = parse_int_list(p)?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let source_ty = p.parse_colon_type()?;
    p.parse_keyword("to")?;
    let result = p.parse_type()?;
    state.operands = p.resolve_operands(&[source, acc], &[source_ty, result], loc)?;
    state.result_types.push(result);
    attrs::set_named(
        &mut state.props,
        Ident::new("kind"),
        enum_attr(KIND_OPEN, &kind),
    );
    let dims = Attribute::dense_i64_array(&dims);
    attrs::set_named(&mut state.props, Ident::new("reduction_dims"), dims);
    Ok(())
}

pub(super) fn verify_transpose(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 1)?;
    if m.num_operands(op) != 1 {
        return Err(format!(
            "expected 1 operand, but found {}",
            m.num_operands(op)
        ));
    }
    let source = m.value_type(m.operand(op, 0));
    expect_vector(source, 0)?;
    let perm = dense_ints(m.prop(op, "permutation"))
        .ok_or("requires a 'permutation' property of i64 integers (array<i64: ..>)")?;
    let rank = source.rank().unwrap_or(0);
    if perm.len() != rank {
        return Err(format!(
            "permutation has {} entries for rank {rank}",
            perm.len()
        ));
    }
    distinct_dims(&perm, rank, "permutation entry")?;
    let shape = source.shape().unwrap_or(&[]);
    let permuted: Vec<i64> = perm.iter().map(|&d| shape[d as usize]).collect();
    let want = Type::vector(&permuted, source.element_type_or_self());
    let result = m.value_type(m.result(op, 0));
    if result != want {
        return Err(format!(
            "result type '{result}' is not the transposed type '{want}'"
        ));
    }
    Ok(())
}

/// `%v, [1, 0] {attrs} : vector<4x8xf32> to vector<8x4xf32>`
pub(super) fn print_transpose(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.value(m.operand(op, 0));
    p.write(", ");
    print_int_list(p, &permutation(m, op));
    p.attr_dict(op, &["permutation"]);
    p.write(" : ");
    p.ty(m.value_type(m.operand(op, 0)));
    p.write(" to ");
    p.ty(m.value_type(m.result(op, 0)));
}

pub(super) fn parse_transpose(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let source = p.parse_operand()?;
    p.parse_punct(b',')?;
    let perm = parse_int_list(p)?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let source_ty = p.parse_colon_type()?;
    p.parse_keyword("to")?;
    let result = p.parse_type()?;
    state.operands = p.resolve_operands(&[source], &[source_ty], loc)?;
    state.result_types.push(result);
    let perm = Attribute::dense_i64_array(&perm);
    attrs::set_named(&mut state.props, Ident::new("permutation"), perm);
    Ok(())
}
