//! Op definitions of the standard dialects: builtin, func, arith, math, scf, tensor, vector,
//! gpu, llvm, nvvm (and xla_gpu).
//!
//! Each op's custom syntax is MLIR 22's (checked against `mlir-opt`), so what we print in
//! either form parses in real MLIR. Shared helpers for writing more dialects live here.

pub mod arith;
pub mod builtin;
pub mod func;
pub mod gpu;
pub mod llvm;
pub mod math;
pub mod nvvm;
pub mod scf;
pub mod tensor;
pub mod vector;
pub mod xla_gpu;

use crate::attrs::Attribute;
use crate::diag::DResult;
use crate::module::{Module, OpId, OpState};
use crate::parser::Parser;
use crate::printer::Printer;
use crate::registry::Registry;
use crate::types::Type;
use std::sync::{Arc, OnceLock};

impl Registry {
    /// A fresh registry with every dialect the pipeline uses (builtin, func, arith, math,
    /// scf, tensor, vector, gpu, llvm, nvvm, xla_gpu), to extend with more. (Here rather
    /// than in `registry.rs`, so that the registry does not depend on the dialects that
    /// register into it.)
    pub fn with_standard_dialects() -> Registry {
        let mut r = Registry::empty();
        register_standard(&mut r);
        r
    }

    /// The shared registry of the standard dialects.
    pub fn standard() -> Arc<Registry> {
        static STANDARD: OnceLock<Arc<Registry>> = OnceLock::new();
        STANDARD
            .get_or_init(|| Arc::new(Registry::with_standard_dialects()))
            .clone()
    }
}

/// Registers the standard dialects: every dialect the pipeline uses, `xla_gpu` included.
pub fn register_standard(r: &mut Registry) {
    builtin::register(r);
    func::register(r);
    arith::register(r);
    math::register(r);
    scf::register(r);
    tensor::register(r);
    vector::register(r);
    gpu::register(r);
    llvm::register(r);
    nvvm::register(r);
    xla_gpu::register(r);
}

// ----- type predicates -----

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
        crate::types::TypeKind::Tensor { shape, layout, .. } => {
            Type::get(crate::types::TypeKind::Tensor {
                shape: shape.clone(),
                elem,
                layout: layout.clone(),
            })
        }
        crate::types::TypeKind::Vector { shape, .. } => Type::vector(shape, elem),
        _ => elem,
    }
}

/// Whether two types have the same container (scalar, or tensor/vector of the same shape).
pub fn same_shape(a: Type, b: Type) -> bool {
    a.is_tensor() == b.is_tensor() && a.is_vector() == b.is_vector() && a.shape() == b.shape()
}

// ----- verifier helpers -----

/// `expected N operands, but found M`.
pub fn expect_operands(m: &Module, op: OpId, n: usize) -> Result<(), String> {
    let found = m.num_operands(op);
    if found != n {
        return Err(format!("expected {n} operands, but found {found}"));
    }
    Ok(())
}

/// `requires one result` / `requires zero results` / `expected N results`.
pub fn expect_results(m: &Module, op: OpId, n: usize) -> Result<(), String> {
    let found = m.num_results(op);
    if found != n {
        return Err(match n {
            0 => "requires zero results".to_owned(),
            1 => "requires one result".to_owned(),
            n => format!("expected {n} results, but found {found}"),
        });
    }
    Ok(())
}

/// All operands and results have one type.
pub fn expect_same_types(m: &Module, op: OpId) -> Result<Type, String> {
    let mut types = m
        .operands(op)
        .map(|v| m.value_type(v))
        .chain(m.results(op).map(|v| m.value_type(v)));
    let Some(first) = types.next() else {
        return Err("requires at least one operand or result".into());
    };
    if types.any(|t| t != first) {
        return Err("requires the same type for all operands and results".into());
    }
    Ok(first)
}

/// Every operand satisfies `pred` (`operand #0 must be <what>, but got 'i32'`).
pub fn expect_operand_types(
    m: &Module,
    op: OpId,
    what: &str,
    pred: impl Fn(Type) -> bool,
) -> Result<(), String> {
    for (i, v) in m.operands(op).enumerate() {
        let t = m.value_type(v);
        if !pred(t) {
            return Err(format!("operand #{i} must be {what}, but got '{t}'"));
        }
    }
    Ok(())
}

// ----- syntax helpers -----

/// Writes ` keyword<...>` for a property holding `#dialect.keyword<...>` (unless it is the
/// default `<none>`); returns whether the property was consumed (to elide it from the
/// attribute dictionary).
pub fn print_enum_prop(
    p: &mut Printer<'_>,
    op: OpId,
    prop: &str,
    attr_prefix: &str,
    keyword: &str,
) -> bool {
    let Some(Attribute::Opaque(text)) = p.module().prop(op, prop) else {
        return false;
    };
    let Some(body) = text.strip_prefix(attr_prefix) else {
        return false;
    };
    if body != "<none>" {
        let text = format!(" {keyword}{body}");
        p.write(&text);
    }
    true
}

/// Parses ` keyword<...>` into the property `prop` as `#dialect.keyword<...>`.
pub fn parse_enum_prop(
    p: &mut Parser<'_>,
    state: &mut OpState,
    keyword: &str,
    attr_prefix: &str,
    prop: &str,
) -> DResult<bool> {
    if !p.parse_optional_keyword(keyword) {
        return Ok(false);
    }
    let body = p.parse_balanced()?;
    crate::attrs::set_named(
        &mut state.props,
        crate::Ident::new(prop),
        Attribute::Opaque(format!("{attr_prefix}{body}")),
    );
    Ok(true)
}

/// Writes ` fastmath<...>` for the `fastmath` property; returns whether it was consumed.
pub fn print_fastmath(p: &mut Printer<'_>, op: OpId) -> bool {
    print_enum_prop(p, op, "fastmath", "#arith.fastmath", "fastmath")
}

/// Parses an optional ` fastmath<...>`.
pub fn parse_fastmath(p: &mut Parser<'_>, state: &mut OpState) -> DResult<bool> {
    parse_enum_prop(p, state, "fastmath", "#arith.fastmath", "fastmath")
}

/// The syntax of terminators that pass values on (`func.return`, `scf.yield`, and later
/// `xla_gpu.yield`): `{attrs} %a, %b : t1, t2`, or just `{attrs}` without operands.
pub fn print_operands_with_types(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.attr_dict(op, &[]);
    if m.num_operands(op) > 0 {
        p.write(" ");
        p.values(m.operands(op));
        p.write(" : ");
        p.types(m.operand_types(op));
    }
}

/// Parses what [`print_operands_with_types`] prints.
pub fn parse_operands_with_types(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let loc = p.loc();
    let operands = p.parse_operand_list()?;
    if !operands.is_empty() {
        let types = p.parse_colon_type_list()?;
        state.operands = p.resolve_operands(&operands, &types, loc)?;
    }
    Ok(())
}

/// The list of attribute names to elide given which ones a printer consumed.
pub(crate) fn elided<'s>(names: &[(&'s str, bool)]) -> Vec<&'s str> {
    names
        .iter()
        .filter(|(_, used)| *used)
        .map(|(n, _)| *n)
        .collect()
}

// ----- enum attributes, dense arrays, operand segments (vector, gpu, llvm, nvvm) -----

/// The case of an enum attribute kept as text, given the text before it: `x` of
/// `#gpu<dim x>` (opening `#gpu<dim `), `internal` of `#llvm.linkage<internal>`.
pub fn enum_case<'a>(attr: Option<&'a Attribute>, open: &str) -> Option<&'a str> {
    match attr? {
        Attribute::Opaque(text) => text.strip_prefix(open)?.strip_suffix('>'),
        _ => None,
    }
}

/// The enum attribute [`enum_case`] reads: `{open}{case}>`.
pub fn enum_attr(open: &str, case: &str) -> Attribute {
    Attribute::Opaque(format!("{open}{case}>"))
}

/// The integers of a dense array attribute (`array<i64: 1, 2>`).
pub fn dense_ints(attr: Option<&Attribute>) -> Option<Vec<i64>> {
    match attr? {
        Attribute::DenseArray { values, .. } => values
            .iter()
            .map(|v| v.as_int().and_then(|i| i64::try_from(i).ok()))
            .collect(),
        _ => None,
    }
}

/// `array<i32: ...>` (`operandSegmentSizes`, `rawConstantIndices`).
pub fn dense_i32_array(values: &[i64]) -> Attribute {
    Attribute::DenseArray {
        elem: Type::I32,
        values: values
            .iter()
            .map(|&v| crate::attrs::Scalar::Int(v.into()))
            .collect(),
    }
}

/// The operand groups of an op with MLIR's `operandSegmentSizes` (`AttrSizedOperandSegments`),
/// checked against its operands, as index ranges.
pub fn operand_segments(
    m: &Module,
    op: OpId,
    groups: usize,
) -> Result<Vec<std::ops::Range<usize>>, String> {
    let Some(sizes) = dense_ints(m.prop(op, "operandSegmentSizes")) else {
        return Err("requires attribute 'operandSegmentSizes'".into());
    };
    if sizes.len() != groups {
        return Err(format!(
            "'operandSegmentSizes' attribute for specifying operand segments must have {groups} elements, but got {}",
            sizes.len()
        ));
    }
    if sizes.iter().any(|&s| s < 0) {
        return Err("'operandSegmentSizes' attribute cannot have negative elements".into());
    }
    let total: i64 = sizes.iter().sum();
    let count = m.num_operands(op);
    if total != count as i64 {
        return Err(format!(
            "operand count ({count}) does not match with the total size ({total}) specified in attribute 'operandSegmentSizes'"
        ));
    }
    let mut start = 0;
    Ok(sizes
        .iter()
        .map(|&s| {
            let r = start..start + s as usize;
            start = r.end;
            r
        })
        .collect())
}

/// Splits `text` at the commas outside brackets (`a, (b, c)` → `a`, `(b, c)`); empty text
/// has no parts. For lists inside attributes and types kept as text.
pub fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    let mut prev = ' ';
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '<' => depth += 1,
            '>' if prev == '-' => {}
            ')' | ']' | '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        prev = c;
    }
    let last = text[start..].trim();
    if !last.is_empty() || !parts.is_empty() {
        parts.push(last);
    }
    parts
}
