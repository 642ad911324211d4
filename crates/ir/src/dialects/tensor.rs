//! The `tensor` dialect: `tensor.extract`, `tensor.insert`, `tensor.empty`, and
//! `tensor.parallel_insert_slice` (the writes of an `scf.forall`).

use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::dialects::prelude::*;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::parser::Parser;
use crate::printer::Printer;
use crate::types::{DYNAMIC, Type};
use crate::verifier::VerifyCx;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const EMPTY: &str = "tensor.empty";
pub const EXTRACT: &str = "tensor.extract";
pub const INSERT: &str = "tensor.insert";
pub const PARALLEL_INSERT_SLICE: &str = "tensor.parallel_insert_slice";

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
    r.register(
        OpDef::new(PARALLEL_INSERT_SLICE)
            .inherent(&SLICE_PROPS)
            .parents(&[super::scf::IN_PARALLEL])
            .syntax(print_parallel_insert_slice, parse_parallel_insert_slice)
            .verify(verify_parallel_insert_slice),
    );
}

/// The static offsets, sizes and strides of a slice ([`DYNAMIC`] for operands), and the
/// operand groups (source, dest, offsets, sizes, strides).
const SLICE_PROPS: [&str; 4] = [
    "static_offsets",
    "static_sizes",
    "static_strides",
    "operandSegmentSizes",
];

/// ` %src into %dest[0, %i] [4, 1] [1, 1] : tensor<4xf32> into tensor<8x8xf32>`.
fn print_parallel_insert_slice(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let Ok(groups) = super::operand_segments(m, op, 5) else {
        p.write(" <<invalid tensor.parallel_insert_slice>>");
        return;
    };
    let operands = m.operand_vec(op);
    let (source, dest) = (operands[groups[0].start], operands[groups[1].start]);
    p.write(" ");
    p.value(source);
    p.write(" into ");
    p.value(dest);
    // MLIR writes a space between the lists, none before the first.
    for (i, (prop, group)) in SLICE_PROPS[..3].iter().zip(&groups[2..]).enumerate() {
        p.write(if i == 0 { "[" } else { " [" });
        let statics = super::dense_ints(m.prop(op, prop)).unwrap_or_default();
        super::print_dynamic_index_list(
            p,
            statics,
            DYNAMIC,
            operands[group.clone()].iter().copied(),
        );
        p.write("]");
    }
    p.attr_dict(op, &SLICE_PROPS);
    p.write(" : ");
    p.ty(m.value_type(source));
    p.write(" into ");
    p.ty(m.value_type(dest));
}

fn parse_parallel_insert_slice(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let source = p.parse_operand()?;
    p.parse_keyword("into")?;
    let dest = p.parse_operand()?;
    let mut lists = Vec::new();
    for _ in 0..3 {
        p.parse_punct(b'[')?;
        lists.push(super::parse_dynamic_index_list(
            p,
            b']',
            DYNAMIC,
            |v| i64::try_from(v).ok(),
            "slice bound out of range",
        )?);
    }
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let source_type = p.parse_type()?;
    p.parse_keyword("into")?;
    let dest_type = p.parse_type()?;
    let mut operands = p.resolve_operands(&[source, dest], &[source_type, dest_type], loc)?;
    for (_, dynamic) in &lists {
        operands.extend(p.resolve_indices(dynamic)?);
    }
    let segments = [1, 1, lists[0].1.len(), lists[1].1.len(), lists[2].1.len()].map(|n| n as i64);
    for (name, (statics, _)) in SLICE_PROPS.iter().zip(&lists) {
        attrs::set_named(
            &mut state.props,
            Ident::new(name),
            Attribute::dense_i64_array(statics),
        );
    }
    attrs::set_named(
        &mut state.props,
        Ident::new(SLICE_PROPS[3]),
        super::dense_i32_array(&segments),
    );
    state.operands = operands;
    Ok(())
}

/// MLIR's checks: ranked tensors of one element type, one offset, size and stride per
/// dimension of the destination, and a source as large as the static sizes say.
fn verify_parallel_insert_slice(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let groups = super::operand_segments(m, op, 5)?;
    let operands = m.operand_vec(op);
    if groups[0].len() != 1 || groups[1].len() != 1 {
        return Err("expects one source and one destination".into());
    }
    let (source, dest) = (
        m.value_type(operands[groups[0].start]),
        m.value_type(operands[groups[1].start]),
    );
    let (Some(dest_shape), true) = (dest.shape(), dest.is_tensor() && source.is_tensor()) else {
        return Err("expects a tensor source and destination".into());
    };
    if source.element_type() != dest.element_type() {
        return Err(format!(
            "expected the source's element type to be the destination's ('{source}' into '{dest}')"
        ));
    }
    let rank = dest_shape.len();
    for (prop, group) in SLICE_PROPS[..3].iter().zip(&groups[2..]) {
        let statics = super::dense_ints(m.prop(op, prop)).unwrap_or_default();
        if statics.len() != rank {
            return Err(format!(
                "expected {rank} {prop} entries (the destination's rank)"
            ));
        }
        let dynamic = statics.iter().filter(|&&v| v == DYNAMIC).count();
        if dynamic != group.len() {
            return Err(format!(
                "expected {dynamic} dynamic values for {prop}, got {}",
                group.len()
            ));
        }
    }
    let sizes = super::dense_ints(m.prop(op, SLICE_PROPS[1])).unwrap_or_default();
    let offsets = super::dense_ints(m.prop(op, SLICE_PROPS[0])).unwrap_or_default();
    let strides = super::dense_ints(m.prop(op, SLICE_PROPS[2])).unwrap_or_default();
    for (i, &dim) in dest_shape.iter().enumerate() {
        let (offset, size, stride) = (offsets[i], sizes[i], strides[i]);
        if offset == DYNAMIC || dim == DYNAMIC {
            continue;
        }
        if offset < 0 {
            return Err(format!(
                "expected offsets to be non-negative, but got {offset}"
            ));
        }
        if offset >= dim && size != 0 {
            return Err(format!("offset {i} is out-of-bounds: {offset} >= {dim}"));
        }
        if size == DYNAMIC || stride == DYNAMIC || size <= 0 {
            continue;
        }
        let last = (size - 1)
            .checked_mul(stride)
            .and_then(|s| s.checked_add(offset));
        if last.is_none_or(|last| last >= dim) {
            return Err(format!(
                "slice along dimension {i} runs out-of-bounds: {} >= {dim}",
                last.map_or("beyond i64".to_string(), |l| l.to_string())
            ));
        }
    }
    let static_sizes: Vec<i64> = sizes
        .iter()
        .copied()
        .filter(|&s| s != 1 && s != DYNAMIC)
        .collect();
    let source_dims: Vec<i64> = source
        .shape()
        .unwrap_or(&[])
        .iter()
        .copied()
        .filter(|&s| s != 1)
        .collect();
    if sizes.iter().all(|&s| s != DYNAMIC) && static_sizes != source_dims {
        return Err(format!(
            "expected the source type '{source}' to hold the slice's sizes {sizes:?}"
        ));
    }
    Ok(())
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
