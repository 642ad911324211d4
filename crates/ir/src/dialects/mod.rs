//! Op definitions of the standard dialects: builtin, func, arith, math, scf, tensor, vector,
//! gpu, llvm, nvvm (and xla_gpu).
//!
//! Each op's custom syntax is MLIR 22's (checked against `mlir-opt`), so what we print in
//! either form parses in real MLIR. Shared helpers for writing more dialects live here.

pub mod affine;
pub mod arith;
pub mod builtin;
pub mod complex;
pub mod func;
pub mod gpu;
pub mod llvm;
pub mod math;
pub mod nvvm;
pub mod scf;
pub mod tensor;
pub mod vector;
pub mod xla_gpu;

/// The `cf` dialect's branches, which MLIR's LLVM IR import can make and the interpreter
/// runs; not registered here (they are read and printed in the generic form).
pub mod cf {
    pub const BR: &str = "cf.br";
    pub const COND_BR: &str = "cf.cond_br";
    pub const OPS: &[&str] = &[BR, COND_BR];
}

/// What an op declaration uses, for `use crate::dialects::prelude::*` in a dialect file.
pub mod prelude {
    pub use crate::ods::constraints::*;
    pub use crate::ods::{
        ALL_TYPES_SAME, Arg, PropKind, TypeRule, one, optional, required, same_type, variadic,
    };
    pub use crate::registry::{OpDef, Registry};
    pub use crate::traits::Traits;
}

use crate::attrs::{Attribute, NamedAttr};
use crate::diag::DResult;
use crate::dialects::prelude::*;
use crate::module::{BlockId, Module, OpId, OpState, Value};
use crate::parser::{Parser, UnresolvedOperand};
use crate::printer::Printer;
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
    affine::register(r);
    complex::register(r);
    scf::register(r);
    tensor::register(r);
    vector::register(r);
    gpu::register(r);
    llvm::register(r);
    nvvm::register(r);
    xla_gpu::register(r);
    r.declare_generic(cf::OPS);
}

// ----- type predicates -----

pub use crate::ods::constraints::{is_bool_like, is_float_like, is_int_like, with_element_type};
pub use crate::ods::{enum_attr, enum_case};

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

/// The first of `values` whose type is not the one `expected` at its position: its index, the
/// type found and the type expected.
pub fn first_type_mismatch(
    m: &Module,
    values: impl IntoIterator<Item = Value>,
    expected: &[Type],
) -> Option<(usize, Type, Type)> {
    values
        .into_iter()
        .zip(expected)
        .enumerate()
        .find_map(|(i, (v, &t))| {
            let found = m.value_type(v);
            (found != t).then_some((i, found, t))
        })
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

// ----- builder helpers -----

/// A direct call `name @callee(args) -> results` (`func.call`, `llvm.call`,
/// `xla_gpu.pure_call`): MLIR's call ops name their callee in the `callee` property.
pub fn call_state(name: &str, callee: &str, args: &[Value], results: &[Type]) -> OpState {
    OpState::new(name)
        .operands(args)
        .results(results)
        .prop("callee", Attribute::symbol(callee))
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

/// MLIR's `printDynamicIndexList` entries (`%i, 2`): each static index, or for each `marker`
/// the next of the `dynamic` operands.
pub fn print_dynamic_index_list(
    p: &mut Printer<'_>,
    statics: Vec<i64>,
    marker: i64,
    mut dynamic: impl Iterator<Item = Value>,
) {
    p.comma_separated(statics, |p, s| {
        match (s == marker).then(|| dynamic.next()).flatten() {
            Some(v) => p.value(v),
            None => p.write(&s.to_string()),
        }
    });
}

/// Parses MLIR's dynamic index list entries through `close` (`%i, 2]`, at least one):
/// the static indices, with `marker` for each operand, and the operands. `narrow` takes an
/// integer to the indices' range (`range_error` at the integer when it is out of it).
pub fn parse_dynamic_index_list<'a>(
    p: &mut Parser<'a>,
    close: u8,
    marker: i64,
    narrow: fn(i128) -> Option<i64>,
    range_error: &str,
) -> DResult<(Vec<i64>, Vec<UnresolvedOperand<'a>>)> {
    let (mut statics, mut dynamic) = (Vec::new(), Vec::new());
    loop {
        if let Some(v) = p.parse_optional_operand()? {
            statics.push(marker);
            dynamic.push(v);
        } else {
            let loc = p.loc();
            let i = p.parse_integer()?;
            statics.push(narrow(i).ok_or_else(|| p.error_at(loc, range_error))?);
        }
        if !p.parse_optional_punct(b',') {
            break;
        }
    }
    p.parse_punct(close)?;
    Ok((statics, dynamic))
}

/// `%a = %x, %b = %y`: region arguments bound to their initial values (the `iter_args` of
/// `scf.for` and `xla_gpu.loop`, the arguments of `scf.while`).
pub fn print_bindings(p: &mut Printer<'_>, args: &[Value], inits: &[Value]) {
    p.comma_separated(args.iter().zip(inits), |p, (&arg, &init)| {
        p.value(arg);
        p.write(" = ");
        p.value(init);
    });
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

/// A terminator that passes values on (`func.return`, `scf.yield`, `llvm.return`,
/// `xla_gpu.yield`): `{attrs} %a, %b : t1, t2`, or just `{attrs}` without operands.
pub const RETURN_LIKE: OpDef = OpDef::new("")
    .traits(
        Traits::TERMINATOR
            .union(Traits::RETURN_LIKE)
            .union(Traits::PURE),
    )
    .operands(&[variadic("operands", &ANY)])
    .results(&[])
    .format("attr-dict ($operands^ `:` type($operands))?");

/// A yield's operands match its parent's results, in number and type (`scf.yield`,
/// `xla_gpu.yield`).
pub fn yields_parent_results(m: &Module, op: OpId, parent: OpId) -> Result<(), String> {
    let expected = m.result_types(parent);
    let found = m.num_operands(op);
    if found != expected.len() {
        return Err(format!(
            "expects {} operands to match the results of the parent '{}', but found {found}",
            expected.len(),
            m.name(parent)
        ));
    }
    if let Some((i, vt, t)) = first_type_mismatch(m, m.operands(op), &expected) {
        return Err(format!(
            "type of operand #{i} ('{vt}') doesn't match the result type of the parent '{}' ('{t}')",
            m.name(parent)
        ));
    }
    Ok(())
}

// ----- function-like ops (func.func, llvm.func) -----

/// Entry `index` of the argument or result attribute list `prop` (`arg_attrs`, `res_attrs`).
pub fn attr_list(m: &Module, op: OpId, prop: &str, index: usize) -> Vec<NamedAttr> {
    m.prop(op, prop)
        .and_then(Attribute::as_array)
        .and_then(|a| a.get(index))
        .and_then(Attribute::as_dict)
        .map(<[NamedAttr]>::to_vec)
        .unwrap_or_default()
}

/// The attribute `name` of argument `index` of a function-like op (`func.func`, `llvm.func`).
pub fn arg_attr<'m>(m: &'m Module, op: OpId, index: usize, name: &str) -> Option<&'m Attribute> {
    m.prop(op, "arg_attrs")?
        .as_array()?
        .get(index)?
        .as_dict()?
        .iter()
        .find(|e| e.name.as_str() == name)
        .map(|e| &e.value)
}

/// Sets the attribute `name` of argument `index` of a function-like op with `arguments`
/// arguments, keeping the argument's other attributes.
pub fn set_arg_attr(
    m: &mut Module,
    op: OpId,
    arguments: usize,
    index: usize,
    name: &str,
    value: Attribute,
) {
    let mut lists: Vec<Vec<NamedAttr>> = (0..arguments)
        .map(|i| attr_list(m, op, "arg_attrs", i))
        .collect();
    let list = &mut lists[index];
    list.retain(|e| e.name.as_str() != name);
    list.push(NamedAttr {
        name: crate::Ident::new(name),
        value,
    });
    crate::attrs::sort_named(list);
    if let Some(prop) = attr_lists_prop(lists) {
        m.set_prop(op, "arg_attrs", prop);
    }
}

/// ` {attrs}` of one argument or result, if it has any.
pub fn print_attr_list(p: &mut Printer<'_>, op: OpId, prop: &str, index: usize) {
    let attrs = attr_list(p.module(), op, prop, index);
    if !attrs.is_empty() {
        p.write(" ");
        p.dict_attr(&attrs);
    }
}

/// The entry block's arguments match the function's `inputs`, in number and type.
pub fn verify_entry_block_args(m: &Module, entry: BlockId, inputs: &[Type]) -> Result<(), String> {
    let args = m.block_args(entry);
    if args.len() != inputs.len() {
        return Err(format!(
            "entry block must have {} arguments to match function signature",
            inputs.len()
        ));
    }
    if let Some((i, at, t)) = first_type_mismatch(m, args.iter().copied(), inputs) {
        return Err(format!(
            "type of entry block argument #{i}('{at}') must match the type of the corresponding argument in function signature('{t}')"
        ));
    }
    Ok(())
}

/// An `arg_attrs`/`res_attrs` property, when any entry is non-empty (as MLIR stores them).
pub fn attr_lists_prop(lists: Vec<Vec<NamedAttr>>) -> Option<Attribute> {
    if lists.iter().all(Vec::is_empty) {
        return None;
    }
    Some(Attribute::Array(
        lists.into_iter().map(Attribute::Dict).collect(),
    ))
}

// ----- enum attributes, dense arrays, operand segments (vector, gpu, llvm, nvvm) -----

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

/// Writes `[1, 2]`: a list of integers in an op's custom syntax (`vector.transpose`'s
/// permutation, `xla_gpu.reduce`'s dimensions).
pub(crate) fn print_int_list(p: &mut Printer<'_>, list: &[i64]) {
    let text: Vec<String> = list.iter().map(i64::to_string).collect();
    p.write(&format!("[{}]", text.join(", ")));
}

/// Reads `[1, 2]` (see [`print_int_list`]).
pub(crate) fn parse_int_list(p: &mut Parser<'_>) -> DResult<Vec<i64>> {
    p.parse_punct(b'[')?;
    let mut out = Vec::new();
    if !p.parse_optional_punct(b']') {
        loop {
            let loc = p.loc();
            let i = p.parse_integer()?;
            out.push(i64::try_from(i).map_err(|_| p.error_at(loc, "integer out of range"))?);
            if !p.parse_optional_punct(b',') {
                break;
            }
        }
        p.parse_punct(b']')?;
    }
    Ok(out)
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

/// Parses `open %a, %b close` (possibly empty) as operand uses.
pub(crate) fn parse_operand_group<'a>(
    p: &mut Parser<'a>,
    open: u8,
    close: u8,
) -> DResult<Vec<UnresolvedOperand<'a>>> {
    p.parse_punct(open)?;
    let operands = p.parse_operand_list()?;
    p.parse_punct(close)?;
    Ok(operands)
}

/// Writes `open %a, %b close`.
pub(crate) fn print_group(p: &mut Printer<'_>, open: &str, values: &[Value], close: &str) {
    p.write(open);
    p.values(values.iter().copied());
    p.write(close);
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
