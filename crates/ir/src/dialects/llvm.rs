//! The `llvm` dialect ops `lower-tensors` produces: `llvm.getelementptr`, `llvm.load`,
//! `llvm.store`, shared-memory globals (`llvm.mlir.global` in address space 3) and
//! `llvm.mlir.addressof`, `llvm.mlir.constant`, and functions: `llvm.func` (libdevice
//! declarations such as `llvm.func @__nv_tanhf(f32) -> f32`, and definitions),
//! `llvm.return`, direct `llvm.call`.
//!
//! MLIR keeps many defaulted properties on these ops (`ordering = 0 : i64`,
//! `CConv = #llvm.cconv<ccc>`, `unnamed_addr = 0 : i64`, ...); the parsers fill them in so the
//! generic form is MLIR's, and the printers leave them out where MLIR does. An `llvm.func`'s
//! type is MLIR's `!llvm.func<result (inputs)>`, kept as text with LLVM types in their short
//! form (`ptr`, `array<4 x f32>`); [`Signature`] reads and writes it.

use super::{
    dense_i32_array, dense_ints, enum_attr, enum_case, expect_operands, expect_results,
    operand_segments, parse_enum_prop, print_enum_prop, split_top_level,
};
use crate::Ident;
use crate::attrs::{self, Attribute, DenseValues, NamedAttr};
use crate::diag::DResult;
use crate::lexer::Token;
use crate::module::{BlockId, InsertPoint, Module, OpId, OpState, Value};
use crate::parser::{Argument, Parser};
use crate::printer::Printer;
use crate::registry::{OpDef, Registry, Traits};
use crate::types::{Signedness, Type, TypeKind};
use crate::verifier::VerifyCx;

/// `llvm.getelementptr`'s marker for a dynamic index in `rawConstantIndices`.
pub const GEP_DYNAMIC_INDEX: i64 = i32::MIN as i64;

/// The `noWrapFlags` value of `llvm.getelementptr inbounds` (inbounds_flag | nusw).
pub const GEP_INBOUNDS: i64 = 3;

/// LLVM linkages, as MLIR spells them.
pub const LINKAGES: &[&str] = &[
    "private",
    "internal",
    "available_externally",
    "linkonce",
    "weak",
    "common",
    "appending",
    "extern_weak",
    "linkonce_odr",
    "weak_odr",
    "external",
];

/// `visibility_` values: default (printed as nothing), hidden, protected.
const VISIBILITIES: &[&str] = &["", "hidden", "protected"];
/// `unnamed_addr` values: none (printed as nothing), local_unnamed_addr, unnamed_addr.
const UNNAMED_ADDRS: &[&str] = &["", "local_unnamed_addr", "unnamed_addr"];
/// Atomic orderings of loads and stores by their `ordering` value (3 is unused).
const ORDERINGS: &[&str] = &[
    "not_atomic",
    "unordered",
    "monotonic",
    "",
    "acquire",
    "release",
    "acq_rel",
    "seq_cst",
];
/// `llvm.call` tail call kinds (the keyword set MLIR accepts before the callee).
const TAIL_CALL_KINDS: &[&str] = &["none", "tail", "musttail", "notail"];

const LINKAGE: &str = "#llvm.linkage<";
const CCONV: &str = "#llvm.cconv<";
const TAIL_CALL_KIND: &str = "#llvm.tailcallkind<";

pub fn register(r: &mut Registry) {
    r.register(
        OpDef::new("llvm.getelementptr")
            .traits(Traits::PURE)
            .inherent(&["elem_type", "noWrapFlags", "rawConstantIndices"])
            .regions(0)
            .syntax(print_gep, parse_gep)
            .verify(verify_gep),
    );
    r.register(
        OpDef::new("llvm.load")
            .inherent(&[
                "access_groups",
                "alias_scopes",
                "alignment",
                "dereferenceable",
                "invariant",
                "invariantGroup",
                "noalias_scopes",
                "nontemporal",
                "ordering",
                "syncscope",
                "tbaa",
                "volatile_",
            ])
            .regions(0)
            .syntax(print_load, parse_load)
            .verify(verify_load),
    );
    r.register(
        OpDef::new("llvm.store")
            .inherent(&[
                "access_groups",
                "alias_scopes",
                "alignment",
                "invariantGroup",
                "noalias_scopes",
                "nontemporal",
                "ordering",
                "syncscope",
                "tbaa",
                "volatile_",
            ])
            .regions(0)
            .syntax(print_store, parse_store)
            .verify(verify_store),
    );
    r.register(
        OpDef::new("llvm.mlir.global")
            .traits(
                Traits::ISOLATED_FROM_ABOVE
                    .union(Traits::SYMBOL)
                    .union(Traits::SINGLE_BLOCK),
            )
            .inherent(&[
                "addr_space",
                "alignment",
                "comdat",
                "constant",
                "dbg_exprs",
                "dso_local",
                "externally_initialized",
                "global_type",
                "linkage",
                "section",
                "sym_name",
                "target_specific_attrs",
                "thread_local_",
                "unnamed_addr",
                "value",
                "visibility_",
            ])
            .regions(1)
            .syntax(print_global, parse_global)
            .verify(verify_global),
    );
    r.register(
        OpDef::new("llvm.mlir.addressof")
            .traits(Traits::PURE)
            .inherent(&["global_name"])
            .regions(0)
            .syntax(print_addressof, parse_addressof)
            .verify(verify_addressof),
    );
    r.register(
        OpDef::new("llvm.mlir.constant")
            .traits(Traits::PURE.union(Traits::CONSTANT_LIKE))
            .inherent(&["value"])
            .regions(0)
            .syntax(print_constant, parse_constant)
            .verify(verify_constant),
    );
    r.register(
        OpDef::new("llvm.func")
            .traits(Traits::ISOLATED_FROM_ABOVE.union(Traits::SYMBOL))
            .inherent(FUNC_PROPS)
            .regions(1)
            .syntax(print_func, parse_func)
            .verify(verify_func),
    );
    r.register(
        OpDef::new("llvm.return")
            .traits(
                Traits::TERMINATOR
                    .union(Traits::RETURN_LIKE)
                    .union(Traits::PURE),
            )
            .regions(0)
            .syntax(
                super::print_operands_with_types,
                super::parse_operands_with_types,
            )
            .verify(verify_return),
    );
    r.register(
        OpDef::new("llvm.call")
            .inherent(&[
                "CConv",
                "TailCallKind",
                "access_groups",
                "alias_scopes",
                "always_inline",
                "arg_attrs",
                "callee",
                "convergent",
                "fastmathFlags",
                "inline_hint",
                "memory_effects",
                "no_inline",
                "no_unwind",
                "noalias_scopes",
                "op_bundle_sizes",
                "op_bundle_tags",
                "res_attrs",
                "tbaa",
                "var_callee_type",
                "will_return",
                "operandSegmentSizes",
            ])
            .regions(0)
            .syntax(print_call, parse_call)
            .verify(verify_call),
    );
}

/// The properties of `llvm.func` (MLIR 22's `LLVMFuncOp::getAttributeNames`).
const FUNC_PROPS: &[&str] = &[
    "CConv",
    "alignment",
    "always_inline",
    "arg_attrs",
    "arm_in_za",
    "arm_inout_za",
    "arm_locally_streaming",
    "arm_new_za",
    "arm_out_za",
    "arm_preserves_za",
    "arm_streaming",
    "arm_streaming_compatible",
    "comdat",
    "convergent",
    "denormal_fp_math",
    "denormal_fp_math_f32",
    "dso_local",
    "fp_contract",
    "frame_pointer",
    "function_entry_count",
    "function_type",
    "garbageCollector",
    "inline_hint",
    "instrument_function_entry",
    "instrument_function_exit",
    "intel_reqd_sub_group_size",
    "linkage",
    "memory_effects",
    "no_infs_fp_math",
    "no_inline",
    "no_nans_fp_math",
    "no_signed_zeros_fp_math",
    "no_unwind",
    "optimize_none",
    "passthrough",
    "personality",
    "prefer_vector_width",
    "reciprocal_estimates",
    "reqd_work_group_size",
    "res_attrs",
    "section",
    "sym_name",
    "sym_visibility",
    "target_cpu",
    "target_features",
    "tune_cpu",
    "unnamed_addr",
    "uwtable_kind",
    "vec_type_hint",
    "visibility_",
    "vscale_range",
    "will_return",
    "work_group_size_hint",
];

// ----- types -----

/// Types the LLVM dialect accepts: signless integers, floats, pointers, vectors of them and
/// the dialect's own types (`!llvm.array<..>`, `!llvm.struct<..>`).
pub fn is_llvm_type(t: Type) -> bool {
    match t.kind() {
        TypeKind::Int { signedness, .. } => *signedness == Signedness::Signless,
        TypeKind::Float(_) | TypeKind::LlvmPtr { .. } => true,
        TypeKind::Vector { elem, .. } => is_llvm_type(*elem),
        TypeKind::Opaque(text) => text.starts_with("!llvm."),
        _ => false,
    }
}

/// LLVM types with a size (what can be loaded, stored and held in a global).
pub fn is_sized_llvm_type(t: Type) -> bool {
    const UNSIZED: &[&str] = &["!llvm.void", "!llvm.func", "!llvm.token", "!llvm.label"];
    is_llvm_type(t) && !UNSIZED.iter().any(|u| t.to_string().starts_with(u))
}

/// Keywords of LLVM dialect types written without `!llvm.` inside other LLVM types.
const SHORT_TYPES: &[&str] = &[
    "void",
    "ptr",
    "vec",
    "array",
    "func",
    "struct",
    "target",
    "token",
    "label",
    "metadata",
    "x86_amx",
    "ppc_fp128",
];

/// `t` as written inside an LLVM type (`ptr<3>` for `!llvm.ptr<3>`).
fn short_type(t: Type) -> String {
    let text = t.to_string();
    match text.strip_prefix("!llvm.") {
        Some(short) => short.to_owned(),
        None => text,
    }
}

/// Reads a type written inside an LLVM type.
fn full_type(text: &str) -> Option<Type> {
    let word_end = text
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(text.len());
    let full = if SHORT_TYPES.contains(&&text[..word_end]) {
        format!("!llvm.{text}")
    } else {
        text.to_owned()
    };
    crate::parser::parse_type(&full).ok()
}

/// An `llvm.func` signature: MLIR's `!llvm.func<result (inputs, ...)>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub inputs: Vec<Type>,
    /// `None` for `void`.
    pub result: Option<Type>,
    pub variadic: bool,
}

impl Signature {
    /// Reads an `!llvm.func<...>` type.
    pub fn from_type(t: Type) -> Option<Signature> {
        let TypeKind::Opaque(text) = t.kind() else {
            return None;
        };
        let body = text.strip_prefix("!llvm.func<")?.strip_suffix('>')?;
        let open = top_level_paren(body)?;
        let result = body[..open].trim();
        let args = body[open..].trim().strip_prefix('(')?.strip_suffix(')')?;
        let mut parts = split_top_level(args);
        let variadic = parts.last() == Some(&"...");
        if variadic {
            parts.pop();
        }
        let inputs = parts.into_iter().map(full_type).collect::<Option<_>>()?;
        let result = match result {
            "void" => None,
            r => Some(full_type(r)?),
        };
        Some(Signature {
            inputs,
            result,
            variadic,
        })
    }

    /// The `!llvm.func<...>` type.
    pub fn to_type(&self) -> Type {
        let mut args: Vec<String> = self.inputs.iter().map(|&t| short_type(t)).collect();
        if self.variadic {
            args.push("...".into());
        }
        let result = self.result.map_or("void".into(), short_type);
        Type::opaque(&format!("!llvm.func<{result} ({})>", args.join(", ")))
    }

    /// The signature of an `llvm.func` op.
    pub fn of(m: &Module, func: OpId) -> Option<Signature> {
        Signature::from_type(m.prop(func, "function_type")?.as_type()?)
    }
}

/// The byte offset of the first `(` outside `<...>` (where a signature's inputs start).
fn top_level_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            '(' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

// ----- builders -----

/// An index of `llvm.getelementptr`: a constant (i32) or a value of a signless integer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GepIndex {
    Const(i32),
    Value(Value),
}

/// `llvm.getelementptr [inbounds] %base[indices] : (...) -> ptr, elem_type`; the result is a
/// pointer in the base's address space.
pub fn build_gep(
    m: &mut Module,
    at: InsertPoint,
    base: Value,
    indices: &[GepIndex],
    elem_type: Type,
    inbounds: bool,
) -> Value {
    let mut operands = vec![base];
    let raw: Vec<i64> = indices
        .iter()
        .map(|i| match *i {
            GepIndex::Const(c) => c.into(),
            GepIndex::Value(v) => {
                operands.push(v);
                GEP_DYNAMIC_INDEX
            }
        })
        .collect();
    let flags = if inbounds { GEP_INBOUNDS } else { 0 };
    let ty = m.value_type(base);
    let op = m.create_op_at(
        OpState::new("llvm.getelementptr")
            .operands(&operands)
            .prop("elem_type", Attribute::Type(elem_type))
            .prop("noWrapFlags", Attribute::i32(flags as i32))
            .prop("rawConstantIndices", dense_i32_array(&raw))
            .results(&[ty]),
        at,
    );
    m.result(op, 0)
}

/// `llvm.load %ptr [invariant] : !llvm.ptr -> ty`. Set `alignment` on the op for vectors.
pub fn build_load(m: &mut Module, at: InsertPoint, ptr: Value, ty: Type, invariant: bool) -> Value {
    let mut state = OpState::new("llvm.load")
        .operands(&[ptr])
        .prop("ordering", Attribute::i64(0))
        .results(&[ty]);
    if invariant {
        state = state.prop("invariant", Attribute::Unit);
    }
    let op = m.create_op_at(state, at);
    m.result(op, 0)
}

/// `llvm.store %value, %ptr`.
pub fn build_store(m: &mut Module, at: InsertPoint, value: Value, ptr: Value) -> OpId {
    m.create_op_at(
        OpState::new("llvm.store")
            .operands(&[value, ptr])
            .prop("ordering", Attribute::i64(0)),
        at,
    )
}

/// `llvm.mlir.global <linkage> @name(value) {addr_space = N : i32} : ty` without an
/// initializer region (shared memory: `internal`, address space 3, no value).
pub fn build_global(
    m: &mut Module,
    at: InsertPoint,
    name: &str,
    ty: Type,
    linkage: &str,
    addr_space: u32,
    value: Option<Attribute>,
) -> OpId {
    assert!(LINKAGES.contains(&linkage), "llvm linkage '{linkage}'");
    let region = m.create_region();
    let mut state = OpState::new("llvm.mlir.global")
        .prop("sym_name", Attribute::string(name))
        .prop("global_type", Attribute::Type(ty))
        .prop("linkage", enum_attr(LINKAGE, linkage))
        .prop("addr_space", Attribute::i32(addr_space as i32))
        .prop("unnamed_addr", Attribute::i64(0))
        .prop("visibility_", Attribute::i64(0))
        .region(region);
    if let Some(v) = value {
        state = state.prop("value", v);
    }
    m.create_op_at(state, at)
}

/// `llvm.mlir.addressof @name : ptr_ty`.
pub fn build_addressof(m: &mut Module, at: InsertPoint, name: &str, ptr_ty: Type) -> Value {
    let op = m.create_op_at(
        OpState::new("llvm.mlir.addressof")
            .prop("global_name", Attribute::symbol(name))
            .results(&[ptr_ty]),
        at,
    );
    m.result(op, 0)
}

/// `llvm.mlir.constant(value) : ty`.
pub fn build_constant(m: &mut Module, at: InsertPoint, value: Attribute, ty: Type) -> Value {
    let op = m.create_op_at(
        OpState::new("llvm.mlir.constant")
            .prop("value", value)
            .results(&[ty]),
        at,
    );
    m.result(op, 0)
}

/// The properties every `llvm.func` has (external linkage, C calling convention).
fn func_state(name: &str, signature: &Signature, region: crate::RegionId) -> OpState {
    OpState::new("llvm.func")
        .prop("sym_name", Attribute::string(name))
        .prop("function_type", Attribute::Type(signature.to_type()))
        .prop("CConv", enum_attr(CCONV, "ccc"))
        .prop("linkage", enum_attr(LINKAGE, "external"))
        .prop("unnamed_addr", Attribute::i64(0))
        .prop("visibility_", Attribute::i64(0))
        .region(region)
}

/// A declaration `llvm.func @name(inputs) -> result` (not inserted), as for libdevice.
pub fn build_func_decl(m: &mut Module, name: &str, signature: &Signature) -> OpId {
    let region = m.create_region();
    m.create_op(func_state(name, signature, region))
}

/// A definition `llvm.func @name(...) { }` with an empty entry block (not inserted); returns
/// the op and the entry block.
pub fn build_func(m: &mut Module, name: &str, signature: &Signature) -> (OpId, BlockId) {
    let (region, block) = m.create_region_with_block(&signature.inputs);
    (m.create_op(func_state(name, signature, region)), block)
}

/// `llvm.return [%value]`.
pub fn build_return(m: &mut Module, at: InsertPoint, value: Option<Value>) -> OpId {
    let operands: Vec<Value> = value.into_iter().collect();
    m.create_op_at(OpState::new("llvm.return").operands(&operands), at)
}

/// `llvm.call @callee(args) : (...) -> result`.
pub fn build_call(
    m: &mut Module,
    at: InsertPoint,
    callee: &str,
    args: &[Value],
    result: Option<Type>,
) -> OpId {
    let results: Vec<Type> = result.into_iter().collect();
    m.create_op_at(
        OpState::new("llvm.call")
            .operands(args)
            .results(&results)
            .prop("callee", Attribute::symbol(callee))
            .prop("CConv", enum_attr(CCONV, "ccc"))
            .prop("TailCallKind", enum_attr(TAIL_CALL_KIND, "none"))
            .prop(
                "fastmathFlags",
                Attribute::Opaque("#llvm.fastmath<none>".into()),
            )
            .prop("op_bundle_sizes", dense_i32_array(&[]))
            .prop(
                "operandSegmentSizes",
                dense_i32_array(&[args.len() as i64, 0]),
            ),
        at,
    )
}

// ----- shared checks and syntax -----

fn expect_ptr(t: Type, what: &str) -> Result<(), String> {
    if t.ptr_addr_space().is_some() {
        Ok(())
    } else {
        Err(format!("{what} must be LLVM pointer type, but got '{t}'"))
    }
}

fn set_prop(state: &mut OpState, name: &str, value: Attribute) {
    attrs::set_named(&mut state.props, Ident::new(name), value);
}

/// Parses one of `cases` into the integer property `prop` (its position), if one is next.
fn parse_int_enum(p: &mut Parser<'_>, state: &mut OpState, prop: &str, cases: &[&str]) {
    let found = cases
        .iter()
        .position(|c| !c.is_empty() && p.parse_optional_keyword(c));
    if let Some(i) = found {
        set_prop(state, prop, Attribute::i64(i as i64));
    }
}

/// Writes `case ` for the integer enum property `prop` unless it is the default (empty).
fn print_int_enum(p: &mut Printer<'_>, op: OpId, prop: &str, cases: &[&str]) {
    let value = p.module().prop(op, prop).and_then(Attribute::as_i64);
    let case = value.and_then(|v| cases.get(usize::try_from(v).ok()?));
    if let Some(case) = case.filter(|c| !c.is_empty()) {
        p.write(case);
        p.write(" ");
    }
}

/// Checks that the integer enum property `prop` is a valid case.
fn check_int_enum(m: &Module, op: OpId, prop: &str, cases: &[&str]) -> Result<(), String> {
    match m.prop(op, prop).map(Attribute::as_i64) {
        None => Ok(()),
        Some(Some(v)) if usize::try_from(v).is_ok_and(|v| v < cases.len()) => Ok(()),
        Some(_) => Err(format!("attribute '{prop}' has an invalid value")),
    }
}

/// Checks that the enum property `prop` (`{open}case>`) is one of `cases` (any case when
/// `cases` is empty: calling conventions are not listed here).
fn check_enum(m: &Module, op: OpId, prop: &str, open: &str, cases: &[&str]) -> Result<(), String> {
    match enum_case(m.prop(op, prop), open) {
        Some(c) if cases.is_empty() || cases.contains(&c) => Ok(()),
        _ => Err(format!("requires a valid '{prop}' attribute")),
    }
}

/// ` atomic [syncscope("s")] <ordering>` of an atomic load or store.
fn print_atomic(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let Some(name) = ordering(m, op).filter(|&o| o != "not_atomic") else {
        return;
    };
    p.write(" atomic");
    if let Some(scope) = m.prop(op, "syncscope") {
        p.write(" syncscope(");
        p.attr(scope);
        p.write(")");
    }
    p.write(" ");
    p.write(name);
}

fn parse_atomic(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let mut ordering = 0;
    if p.parse_optional_keyword("atomic") {
        if p.parse_optional_keyword("syncscope") {
            p.parse_punct(b'(')?;
            let scope = p.parse_string()?;
            p.parse_punct(b')')?;
            set_prop(state, "syncscope", Attribute::String(scope));
        }
        let loc = p.loc();
        let name = p.parse_any_keyword()?;
        let Some(o) = ORDERINGS.iter().position(|&o| !o.is_empty() && o == name) else {
            return Err(p.error_at(loc, format!("invalid atomic ordering '{name}'")));
        };
        ordering = o;
    }
    set_prop(state, "ordering", Attribute::i64(ordering as i64));
    Ok(())
}

/// The atomic ordering of a load or store (`not_atomic` when the property is absent).
fn ordering(m: &Module, op: OpId) -> Option<&'static str> {
    let value = m.prop(op, "ordering").map_or(Some(0), Attribute::as_i64)?;
    let name = ORDERINGS.get(usize::try_from(value).ok()?)?;
    (!name.is_empty()).then_some(*name)
}

fn check_ordering(m: &Module, op: OpId) -> Result<(), String> {
    match ordering(m, op) {
        Some(_) => Ok(()),
        None => Err("requires a valid 'ordering' attribute".into()),
    }
}

/// Writes ` keyword` for a unit property that is set.
fn print_flag(p: &mut Printer<'_>, op: OpId, prop: &str, keyword: &str) {
    if p.module().prop(op, prop).is_some() {
        p.write(" ");
        p.write(keyword);
    }
}

fn parse_flag(p: &mut Parser<'_>, state: &mut OpState, keyword: &str, prop: &str) {
    if p.parse_optional_keyword(keyword) {
        set_prop(state, prop, Attribute::Unit);
    }
}

// ----- llvm.getelementptr -----

/// `inbounds`, `nusw|nuw`, ... for the `noWrapFlags` bits (MLIR prints inbounds_flag|nusw as
/// `inbounds`).
fn gep_flags_text(flags: i64) -> String {
    let mut parts = Vec::new();
    if flags & GEP_INBOUNDS == GEP_INBOUNDS {
        parts.push("inbounds");
    } else if flags & 1 != 0 {
        parts.push("inbounds_flag");
    } else if flags & 2 != 0 {
        parts.push("nusw");
    }
    if flags & 4 != 0 {
        parts.push("nuw");
    }
    parts.join("|")
}

fn gep_flag_bits(keyword: &str) -> Option<i64> {
    match keyword {
        "inbounds" => Some(GEP_INBOUNDS),
        "inbounds_flag" => Some(1),
        "nusw" => Some(2),
        "nuw" => Some(4),
        _ => None,
    }
}

fn verify_gep(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 1)?;
    if m.num_operands(op) == 0 {
        return Err("expected a base pointer operand".into());
    }
    let base = m.value_type(m.operand(op, 0));
    if base.ptr_addr_space().is_none() {
        return Err(format!(
            "operand #0 must be LLVM pointer type or LLVM dialect-compatible vector of LLVM pointer type, but got '{base}'"
        ));
    }
    for v in m.operands(op).skip(1) {
        let t = m.value_type(v);
        if !t.element_type_or_self().is_signless_integer() {
            return Err(format!(
                "operand #1 must be variadic of signless integer or LLVM dialect-compatible vector of signless integer, but got '{t}'"
            ));
        }
    }
    let r = m.value_type(m.result(op, 0));
    if r.ptr_addr_space().is_none() {
        return Err(format!(
            "result #0 must be LLVM pointer type or LLVM dialect-compatible vector of LLVM pointer type, but got '{r}'"
        ));
    }
    if m.prop(op, "elem_type")
        .and_then(Attribute::as_type)
        .is_none()
    {
        return Err("requires attribute 'elem_type'".into());
    }
    let Some(raw) = dense_ints(m.prop(op, "rawConstantIndices")) else {
        return Err("requires attribute 'rawConstantIndices'".into());
    };
    let dynamic = raw.iter().filter(|&&i| i == GEP_DYNAMIC_INDEX).count();
    if dynamic != m.num_operands(op) - 1 {
        return Err("expected as many dynamic indices as specified in 'rawConstantIndices'".into());
    }
    match m.prop(op, "noWrapFlags").and_then(Attribute::as_i64) {
        Some(f) if (0..8).contains(&f) => Ok(()),
        _ => Err("requires a valid 'noWrapFlags' attribute".into()),
    }
}

/// ` inbounds %p[%i, 1] {attrs} : (!llvm.ptr, i32) -> !llvm.ptr, elem`
fn print_gep(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let flags = m
        .prop(op, "noWrapFlags")
        .and_then(Attribute::as_i64)
        .unwrap_or(0);
    p.write(" ");
    if flags != 0 {
        p.write(&gep_flags_text(flags));
        p.write(" ");
    }
    p.value(m.operand(op, 0));
    p.write("[");
    let mut dynamic = m.operands(op).skip(1);
    let raw = dense_ints(m.prop(op, "rawConstantIndices")).unwrap_or_default();
    for (i, &c) in raw.iter().enumerate() {
        if i > 0 {
            p.write(", ");
        }
        match (c == GEP_DYNAMIC_INDEX).then(|| dynamic.next()).flatten() {
            Some(v) => p.value(v),
            None => p.write(&c.to_string()),
        }
    }
    p.write("]");
    p.attr_dict(op, &["elem_type", "noWrapFlags", "rawConstantIndices"]);
    p.write(" : (");
    p.types(m.operand_types(op));
    p.write(") -> ");
    p.ty(m.value_type(m.result(op, 0)));
    p.write(", ");
    if let Some(elem) = m.prop(op, "elem_type").and_then(Attribute::as_type) {
        p.ty(elem);
    }
}

fn parse_gep_flags(p: &mut Parser<'_>) -> DResult<i64> {
    let mut flags = 0;
    let first = matches!(p.peek(), Token::Bare(k) if gep_flag_bits(k).is_some());
    if !first {
        return Ok(0);
    }
    loop {
        let loc = p.loc();
        let kw = p.parse_any_keyword()?;
        let Some(bits) = gep_flag_bits(kw) else {
            return Err(p.error_at(loc, format!("invalid getelementptr flag '{kw}'")));
        };
        flags |= bits;
        if !p.parse_optional_literal("|") {
            return Ok(flags);
        }
    }
}

fn parse_gep(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let flags = parse_gep_flags(p)?;
    let loc = p.loc();
    let base = p.parse_operand()?;
    p.parse_punct(b'[')?;
    let mut raw = Vec::new();
    let mut operands = vec![base];
    loop {
        if let Some(v) = p.parse_optional_operand()? {
            operands.push(v);
            raw.push(GEP_DYNAMIC_INDEX);
        } else {
            let iloc = p.loc();
            let c = p.parse_integer()?;
            let c = i32::try_from(c).map_err(|_| p.error_at(iloc, "index out of range for i32"))?;
            raw.push(c.into());
        }
        if !p.parse_optional_punct(b',') {
            break;
        }
    }
    p.parse_punct(b']')?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let (inputs, results) = p.parse_function_type_lists()?;
    p.parse_punct(b',')?;
    let elem = p.parse_type()?;
    state.operands = p.resolve_operands(&operands, &inputs, loc)?;
    state.result_types = results;
    set_prop(state, "elem_type", Attribute::Type(elem));
    set_prop(state, "noWrapFlags", Attribute::i32(flags as i32));
    set_prop(state, "rawConstantIndices", dense_i32_array(&raw));
    Ok(())
}

// ----- llvm.load and llvm.store -----

/// The properties the load and store syntax shows as keywords.
const ACCESS_KEYWORD_PROPS: &[&str] = &[
    "volatile_",
    "ordering",
    "syncscope",
    "invariant",
    "invariantGroup",
    "dereferenceable",
];

fn verify_load(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 1)?;
    expect_results(m, op, 1)?;
    expect_ptr(m.value_type(m.operand(op, 0)), "operand #0")?;
    let r = m.value_type(m.result(op, 0));
    if !is_sized_llvm_type(r) {
        return Err(format!(
            "result #0 must be LLVM type with size, but got '{r}'"
        ));
    }
    check_ordering(m, op)
}

/// ` [volatile] %p [atomic ...] [invariant] [invariant_group] [dereferenceable<..>] {attrs}
/// : ptr -> ty`
fn print_load(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    print_flag(p, op, "volatile_", "volatile");
    p.write(" ");
    p.value(m.operand(op, 0));
    print_atomic(p, op);
    print_flag(p, op, "invariant", "invariant");
    print_flag(p, op, "invariantGroup", "invariant_group");
    print_enum_prop(
        p,
        op,
        "dereferenceable",
        "#llvm.dereferenceable",
        "dereferenceable",
    );
    p.attr_dict(op, ACCESS_KEYWORD_PROPS);
    p.write(" : ");
    p.ty(m.value_type(m.operand(op, 0)));
    p.write(" -> ");
    p.ty(m.value_type(m.result(op, 0)));
}

fn parse_load(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    parse_flag(p, state, "volatile", "volatile_");
    let loc = p.loc();
    let ptr = p.parse_operand()?;
    parse_atomic(p, state)?;
    parse_flag(p, state, "invariant", "invariant");
    parse_flag(p, state, "invariant_group", "invariantGroup");
    parse_enum_prop(
        p,
        state,
        "dereferenceable",
        "#llvm.dereferenceable",
        "dereferenceable",
    )?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ptr_ty = p.parse_colon_type()?;
    p.parse_arrow()?;
    let ty = p.parse_type()?;
    state.operands = p.resolve_operands(&[ptr], &[ptr_ty], loc)?;
    state.result_types.push(ty);
    Ok(())
}

fn verify_store(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 2)?;
    expect_results(m, op, 0)?;
    let v = m.value_type(m.operand(op, 0));
    if !is_sized_llvm_type(v) {
        return Err(format!(
            "operand #0 must be LLVM type with size, but got '{v}'"
        ));
    }
    expect_ptr(m.value_type(m.operand(op, 1)), "operand #1")?;
    check_ordering(m, op)
}

/// ` [volatile] %v, %p [atomic ...] [invariant_group] {attrs} : ty, ptr`
fn print_store(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    print_flag(p, op, "volatile_", "volatile");
    p.write(" ");
    p.values(m.operands(op));
    print_atomic(p, op);
    print_flag(p, op, "invariantGroup", "invariant_group");
    p.attr_dict(op, ACCESS_KEYWORD_PROPS);
    p.write(" : ");
    p.types(m.operand_types(op));
}

fn parse_store(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    parse_flag(p, state, "volatile", "volatile_");
    let loc = p.loc();
    let value = p.parse_operand()?;
    p.parse_punct(b',')?;
    let ptr = p.parse_operand()?;
    parse_atomic(p, state)?;
    parse_flag(p, state, "invariant_group", "invariantGroup");
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let value_ty = p.parse_colon_type()?;
    p.parse_punct(b',')?;
    let ptr_ty = p.parse_type()?;
    state.operands = p.resolve_operands(&[value, ptr], &[value_ty, ptr_ty], loc)?;
    Ok(())
}

// ----- llvm.mlir.global -----

/// The properties the global's syntax shows outside its attribute dictionary.
const GLOBAL_KEYWORD_PROPS: &[&str] = &[
    "sym_name",
    "global_type",
    "constant",
    "value",
    "linkage",
    "unnamed_addr",
    "thread_local_",
    "visibility_",
];

fn verify_global(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 0)?;
    expect_results(m, op, 0)?;
    if m.symbol_name(op).is_none() {
        return Err("requires attribute 'sym_name'".into());
    }
    let Some(ty) = m.prop(op, "global_type").and_then(Attribute::as_type) else {
        return Err("requires attribute 'global_type'".into());
    };
    if !is_sized_llvm_type(ty) {
        return Err("expects type to be a valid element type for an LLVM global".into());
    }
    check_enum(m, op, "linkage", LINKAGE, LINKAGES)?;
    check_int_enum(m, op, "visibility_", VISIBILITIES)?;
    check_int_enum(m, op, "unnamed_addr", UNNAMED_ADDRS)?;
    match m.prop(op, "addr_space") {
        Some(Attribute::Int(a, Type::I32)) if *a >= 0 => {}
        _ => return Err("requires a non-negative i32 'addr_space' attribute".into()),
    }
    verify_initializer(m, op, ty)
}

/// The initializer region, if any, returns a value of the global's type; a global has a value
/// or an initializer, not both.
fn verify_initializer(m: &Module, op: OpId, ty: Type) -> Result<(), String> {
    let Some(block) = m.entry_block(m.region(op, 0)) else {
        return Ok(());
    };
    if m.prop(op, "value").is_some() {
        return Err("cannot have both initializer value and region".into());
    }
    let Some(ret) = m.last_op(block).filter(|&r| m.is(r, "llvm.return")) else {
        return Err("expects its initializer region to end with 'llvm.return'".into());
    };
    let Some(returned) = m.operands(ret).next() else {
        return Err("initializer region cannot return void".into());
    };
    let rt = m.value_type(returned);
    if rt != ty {
        return Err(format!(
            "initializer region type '{rt}' does not match global type '{ty}'"
        ));
    }
    Ok(())
}

/// ` internal [hidden] [thread_local] [unnamed_addr] [constant] @name(value) {attrs} : ty
/// [region]` (no `: ty` for string values, whose type MLIR infers).
fn print_global(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.write(enum_case(m.prop(op, "linkage"), LINKAGE).unwrap_or("external"));
    p.write(" ");
    print_int_enum(p, op, "visibility_", VISIBILITIES);
    if m.prop(op, "thread_local_").is_some() {
        p.write("thread_local ");
    }
    print_int_enum(p, op, "unnamed_addr", UNNAMED_ADDRS);
    if m.prop(op, "constant").is_some() {
        p.write("constant ");
    }
    p.symbol(m.symbol_name(op).unwrap_or(""));
    p.write("(");
    let value = m.prop(op, "value");
    if let Some(v) = value {
        p.attr(v);
    }
    p.write(")");
    p.attr_dict(op, GLOBAL_KEYWORD_PROPS);
    if !matches!(value, Some(Attribute::String(_))) {
        p.write(" : ");
        if let Some(ty) = m.prop(op, "global_type").and_then(Attribute::as_type) {
            p.ty(ty);
        }
    }
    let region = m.region(op, 0);
    if m.entry_block(region).is_some() {
        p.write(" ");
        p.region(region, false, true);
    }
}

/// `[linkage] [visibility] [thread_local] [unnamed_addr] [constant]` before a global's name.
fn parse_global_keywords(p: &mut Parser<'_>, state: &mut OpState) {
    let linkage = LINKAGES
        .iter()
        .find(|&&l| p.parse_optional_keyword(l))
        .unwrap_or(&"external");
    set_prop(state, "linkage", enum_attr(LINKAGE, linkage));
    set_prop(state, "visibility_", Attribute::i64(0));
    parse_int_enum(p, state, "visibility_", VISIBILITIES);
    parse_flag(p, state, "thread_local", "thread_local_");
    set_prop(state, "unnamed_addr", Attribute::i64(0));
    parse_int_enum(p, state, "unnamed_addr", UNNAMED_ADDRS);
    parse_flag(p, state, "constant", "constant");
}

fn parse_global(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    parse_global_keywords(p, state);
    let name = p.parse_symbol_name()?;
    set_prop(state, "sym_name", Attribute::String(name));
    p.parse_punct(b'(')?;
    let mut string_len = None;
    if !p.parse_optional_punct(b')') {
        let value = p.parse_attribute()?;
        if let Attribute::String(s) = &value {
            string_len = Some(s.len());
        }
        set_prop(state, "value", value);
        p.parse_punct(b')')?;
    }
    set_prop(state, "addr_space", Attribute::i32(0));
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = match string_len {
        Some(n) if p.peek() != Token::Punct(b':') => {
            Type::opaque(&format!("!llvm.array<{n} x i8>"))
        }
        _ => p.parse_colon_type()?,
    };
    set_prop(state, "global_type", Attribute::Type(ty));
    let region = match p.parse_optional_region(&[])? {
        Some(r) => r,
        None => p.module_mut().create_region(),
    };
    state.regions.push(region);
    Ok(())
}

// ----- llvm.mlir.addressof -----

fn verify_addressof(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 0)?;
    expect_results(m, op, 1)?;
    let r = m.value_type(m.result(op, 0));
    expect_ptr(r, "result #0")?;
    let Some(name) = m.prop(op, "global_name").and_then(Attribute::as_symbol) else {
        return Err("requires attribute 'global_name'".into());
    };
    let target = cx
        .lookup_symbol(op, name)
        .filter(|&t| m.is(t, "llvm.mlir.global") || m.is(t, "llvm.func"));
    let Some(target) = target else {
        return Err("must reference a global defined by 'llvm.mlir.global', 'llvm.mlir.alias' or 'llvm.func' or 'llvm.mlir.ifunc'".into());
    };
    let space = m.prop(target, "addr_space").and_then(Attribute::as_i64);
    if m.is(target, "llvm.mlir.global") && space != r.ptr_addr_space().map(i64::from) {
        return Err(
            "pointer address space must match address space of the referenced global or alias"
                .into(),
        );
    }
    Ok(())
}

/// ` @name {attrs} : ptr`
fn print_addressof(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    if let Some(name) = m.prop(op, "global_name") {
        p.attr(name);
    }
    p.attr_dict(op, &["global_name"]);
    p.write(" : ");
    p.ty(m.value_type(m.result(op, 0)));
}

fn parse_addressof(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let name = p.parse_symbol_name()?;
    set_prop(state, "global_name", Attribute::symbol(name));
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.result_types.push(ty);
    Ok(())
}

// ----- llvm.mlir.constant -----

fn verify_constant(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 0)?;
    expect_results(m, op, 1)?;
    let ty = m.value_type(m.result(op, 0));
    match m.prop(op, "value") {
        None => Err("requires attribute 'value'".into()),
        Some(Attribute::Int(..) | Attribute::Bool(_)) if !ty.is_integer() => {
            Err("expected integer type".into())
        }
        Some(Attribute::Float(_, ft)) => check_float_constant(*ft, ty),
        Some(Attribute::Dense { ty: at, values }) => check_dense_constant(*at, values, ty),
        Some(Attribute::Int(..) | Attribute::Bool(_) | Attribute::String(_)) => Ok(()),
        Some(_) => Err("only supports integer, float, string or elements attributes".into()),
    }
}

/// A float attribute fits a float type of its width, or an integer of its width (bits).
fn check_float_constant(attr_ty: Type, ty: Type) -> Result<(), String> {
    let width = attr_ty.bit_width().unwrap_or(0);
    if ty.is_float() && ty.bit_width() != Some(width) {
        return Err(format!("expected float type of width {width}"));
    }
    if ty.is_integer() && ty.bit_width() != Some(width) {
        return Err(format!("expected integer type of width {width}"));
    }
    Ok(())
}

/// A splat fits a vector (or LLVM array) type with as many elements.
fn check_dense_constant(attr_ty: Type, values: &DenseValues, ty: Type) -> Result<(), String> {
    let is_array = ty.to_string().starts_with("!llvm.array");
    if matches!(values, DenseValues::Splat(_)) && !ty.is_vector() && !is_array {
        return Err("expected vector or array type".into());
    }
    match (ty.num_elements(), attr_ty.num_elements()) {
        (Some(a), Some(b)) if ty.is_vector() && a != b => Err(format!(
            "type and attribute have a different number of elements: {a} vs. {b}"
        )),
        _ => Ok(()),
    }
}

/// `(value) {attrs} : ty`
fn print_constant(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write("(");
    if let Some(v) = m.prop(op, "value") {
        p.attr(v);
    }
    p.write(")");
    p.attr_dict(op, &["value"]);
    p.write(" : ");
    p.ty(m.value_type(m.result(op, 0)));
}

fn parse_constant(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    p.parse_punct(b'(')?;
    let value = p.parse_attribute()?;
    p.parse_punct(b')')?;
    set_prop(state, "value", value);
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.result_types.push(ty);
    Ok(())
}

// ----- llvm.func -----

/// The properties `llvm.func`'s syntax shows outside `attributes {...}`.
const FUNC_KEYWORD_PROPS: &[&str] = &[
    "sym_name",
    "function_type",
    "arg_attrs",
    "res_attrs",
    "linkage",
    "CConv",
    "visibility_",
    "unnamed_addr",
];

fn verify_func(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 0)?;
    expect_results(m, op, 0)?;
    if m.symbol_name(op).is_none() {
        return Err("requires attribute 'sym_name'".into());
    }
    let Some(sig) = Signature::of(m, op) else {
        return Err("requires attribute 'function_type' of LLVM function type".into());
    };
    check_enum(m, op, "linkage", LINKAGE, LINKAGES)?;
    check_enum(m, op, "CConv", CCONV, &[])?;
    check_int_enum(m, op, "visibility_", VISIBILITIES)?;
    check_int_enum(m, op, "unnamed_addr", UNNAMED_ADDRS)?;
    let Some(entry) = m.entry_block(m.region(op, 0)) else {
        let linkage = enum_case(m.prop(op, "linkage"), LINKAGE);
        if !matches!(linkage, Some("external" | "extern_weak")) {
            return Err("external functions must have 'external' or 'extern_weak' linkage".into());
        }
        return Ok(());
    };
    let args = m.block_args(entry);
    if args.len() != sig.inputs.len() {
        return Err(format!(
            "entry block must have {} arguments to match function signature",
            sig.inputs.len()
        ));
    }
    for (i, (&a, &t)) in args.iter().zip(&sig.inputs).enumerate() {
        let at = m.value_type(a);
        if at != t {
            return Err(format!(
                "type of entry block argument #{i}('{at}') must match the type of the corresponding argument in function signature('{t}')"
            ));
        }
    }
    Ok(())
}

/// Entry `index` of the argument or result attribute list `prop`.
fn attr_list(m: &Module, op: OpId, prop: &str, index: usize) -> Vec<NamedAttr> {
    m.prop(op, prop)
        .and_then(Attribute::as_array)
        .and_then(|a| a.get(index))
        .and_then(Attribute::as_dict)
        .map(<[NamedAttr]>::to_vec)
        .unwrap_or_default()
}

/// ` {attrs}` of one argument or result, if it has any.
fn print_attr_list(p: &mut Printer<'_>, op: OpId, prop: &str, index: usize) {
    let attrs = attr_list(p.module(), op, prop, index);
    if !attrs.is_empty() {
        p.write(" ");
        p.dict_attr(&attrs);
    }
}

/// ` [linkage] [visibility] [unnamed_addr] [cconv] @name(args) [-> result]
/// [attributes {...}] [body]`
fn print_func(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let sig = Signature::of(m, op).unwrap_or(Signature {
        inputs: Vec::new(),
        result: None,
        variadic: false,
    });
    p.write(" ");
    let linkage = enum_case(m.prop(op, "linkage"), LINKAGE).unwrap_or("external");
    if linkage != "external" {
        p.write(linkage);
        p.write(" ");
    }
    print_int_enum(p, op, "visibility_", VISIBILITIES);
    print_int_enum(p, op, "unnamed_addr", UNNAMED_ADDRS);
    let cconv = enum_case(m.prop(op, "CConv"), CCONV).unwrap_or("ccc");
    if cconv != "ccc" {
        p.write(cconv);
        p.write(" ");
    }
    p.symbol(m.symbol_name(op).unwrap_or(""));
    let body = m.region(op, 0);
    let entry = m.entry_block(body);
    p.write("(");
    for (i, &t) in sig.inputs.iter().enumerate() {
        if i > 0 {
            p.write(", ");
        }
        match entry {
            Some(b) => p.arg_decl(m.block_arg(b, i)),
            None => p.ty(t),
        }
        print_attr_list(p, op, "arg_attrs", i);
    }
    if sig.variadic {
        p.write(if sig.inputs.is_empty() {
            "..."
        } else {
            ", ..."
        });
    }
    p.write(")");
    if let Some(result) = sig.result {
        p.write(" -> ");
        let with_attrs = !attr_list(m, op, "res_attrs", 0).is_empty();
        p.write(if with_attrs { "(" } else { "" });
        p.ty(result);
        print_attr_list(p, op, "res_attrs", 0);
        p.write(if with_attrs { ")" } else { "" });
    }
    p.attr_dict_with_keyword(op, FUNC_KEYWORD_PROPS);
    if entry.is_some() {
        p.write(" ");
        p.region(body, false, true);
    }
}

/// `[linkage] [visibility] [unnamed_addr] [cconv]` before a function's name; any other
/// keyword there is a calling convention (`fastcc`, `ptx_kernel`, ...).
fn parse_func_keywords(p: &mut Parser<'_>, state: &mut OpState) {
    let linkage = LINKAGES
        .iter()
        .find(|&&l| p.parse_optional_keyword(l))
        .unwrap_or(&"external");
    set_prop(state, "linkage", enum_attr(LINKAGE, linkage));
    set_prop(state, "visibility_", Attribute::i64(0));
    parse_int_enum(p, state, "visibility_", VISIBILITIES);
    set_prop(state, "unnamed_addr", Attribute::i64(0));
    parse_int_enum(p, state, "unnamed_addr", UNNAMED_ADDRS);
    let cconv = p.parse_optional_any_keyword().unwrap_or("ccc");
    set_prop(state, "CConv", enum_attr(CCONV, cconv));
}

/// `(%a: t {attrs}, ...)` or `(t {attrs}, ...)`, possibly ending in `...`; returns the
/// arguments (unnamed ones with an empty name), whether they are named, and whether the
/// signature is variadic.
fn parse_func_args<'a>(p: &mut Parser<'a>) -> DResult<(Vec<Argument<'a>>, Option<bool>, bool)> {
    p.parse_punct(b'(')?;
    let mut args = Vec::new();
    let mut named = None;
    let mut variadic = false;
    if p.parse_optional_punct(b')') {
        return Ok((args, named, variadic));
    }
    loop {
        if p.parse_optional_literal("...") {
            variadic = true;
            break;
        }
        let is_named = matches!(p.peek(), Token::Percent(_));
        if *named.get_or_insert(is_named) != is_named {
            return Err(p.error("expected consistent use of named or unnamed arguments"));
        }
        if is_named {
            args.push(p.parse_argument(true)?);
        } else {
            let loc = p.loc();
            let ty = p.parse_type()?;
            let mut attrs = Vec::new();
            p.parse_optional_attr_dict(&mut attrs)?;
            args.push(Argument {
                name: "",
                ty,
                attrs,
                loc,
            });
        }
        if !p.parse_optional_punct(b',') {
            break;
        }
    }
    p.parse_punct(b')')?;
    Ok((args, named, variadic))
}

/// `-> t` or `-> (t {attrs})`: the result and its attributes.
fn parse_func_result(p: &mut Parser<'_>) -> DResult<Option<(Type, Vec<NamedAttr>)>> {
    if !p.parse_optional_arrow() {
        return Ok(None);
    }
    let mut attrs = Vec::new();
    if p.parse_optional_punct(b'(') {
        let ty = p.parse_type()?;
        p.parse_optional_attr_dict(&mut attrs)?;
        p.parse_punct(b')')?;
        return Ok(Some((ty, attrs)));
    }
    Ok(Some((p.parse_type()?, attrs)))
}

/// An `arg_attrs`/`res_attrs` property, when any entry is non-empty (as MLIR stores them).
fn attr_lists_prop(lists: Vec<Vec<NamedAttr>>) -> Option<Attribute> {
    if lists.iter().all(Vec::is_empty) {
        return None;
    }
    Some(Attribute::Array(
        lists.into_iter().map(Attribute::Dict).collect(),
    ))
}

fn parse_func(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    parse_func_keywords(p, state);
    let name = p.parse_symbol_name()?;
    set_prop(state, "sym_name", Attribute::String(name));
    let (args, named, variadic) = parse_func_args(p)?;
    let result = parse_func_result(p)?;
    p.parse_optional_attr_dict_with_keyword(&mut state.attrs)?;
    let sig = Signature {
        inputs: args.iter().map(|a| a.ty).collect(),
        result: result.as_ref().map(|r| r.0),
        variadic,
    };
    set_prop(state, "function_type", Attribute::Type(sig.to_type()));
    if let Some(a) = attr_lists_prop(args.iter().map(|a| a.attrs.clone()).collect()) {
        set_prop(state, "arg_attrs", a);
    }
    if let Some(a) = attr_lists_prop(result.into_iter().map(|r| r.1).collect()) {
        set_prop(state, "res_attrs", a);
    }
    let region = if p.peek() == Token::Punct(b'{') {
        // Unnamed arguments give the body an entry block without arguments (which the
        // verifier rejects), as in MLIR.
        p.parse_region(if named == Some(true) { &args } else { &[] })?
    } else {
        p.module_mut().create_region()
    };
    state.regions.push(region);
    Ok(())
}

// ----- llvm.return -----

fn verify_return(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_results(m, op, 0)?;
    if m.num_operands(op) > 1 {
        return Err(format!(
            "expected at most 1 operand, but found {}",
            m.num_operands(op)
        ));
    }
    let Some(func) = m.parent_op(op).filter(|&f| m.is(f, "llvm.func")) else {
        return Ok(());
    };
    let Some(sig) = Signature::of(m, func) else {
        return Ok(());
    };
    match (sig.result, m.operands(op).next()) {
        (None, Some(_)) => Err("expected no operands".into()),
        (Some(_), None) => Err("expected 1 operand".into()),
        (Some(t), Some(v)) if m.value_type(v) != t => Err("mismatching result types".into()),
        _ => Ok(()),
    }
}

// ----- llvm.call -----

/// The properties `llvm.call`'s syntax shows outside its attribute dictionary.
const CALL_KEYWORD_PROPS: &[&str] = &[
    "callee",
    "CConv",
    "TailCallKind",
    "var_callee_type",
    "operandSegmentSizes",
    "op_bundle_sizes",
    "fastmathFlags",
];

fn verify_call(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let groups = operand_segments(m, op, 2)?;
    if !groups[1].is_empty() {
        return Err("operand bundles are not supported".into());
    }
    let Some(callee) = m.prop(op, "callee").and_then(Attribute::as_symbol) else {
        return Err("requires a 'callee' symbol (indirect calls are not supported)".into());
    };
    check_enum(m, op, "CConv", CCONV, &[])?;
    check_enum(m, op, "TailCallKind", TAIL_CALL_KIND, TAIL_CALL_KINDS)?;
    let Some(func) = cx.lookup_symbol(op, callee) else {
        return Err(format!(
            "'{callee}' does not reference a symbol in the current scope"
        ));
    };
    let sig = Signature::of(m, func).filter(|_| m.is(func, "llvm.func"));
    let Some(sig) = sig else {
        return Err(format!(
            "'{callee}' does not reference a valid LLVM function"
        ));
    };
    if sig.variadic && m.prop(op, "var_callee_type").is_none() {
        return Err("missing var_callee_type attribute for vararg call".into());
    }
    check_call_types(m, op, &sig)
}

/// The call's operands and result against the callee's signature.
fn check_call_types(m: &Module, op: OpId, sig: &Signature) -> Result<(), String> {
    let n = m.num_operands(op);
    if n != sig.inputs.len() && !(sig.variadic && n > sig.inputs.len()) {
        return Err(format!(
            "incorrect number of operands ({n}) for callee (expecting: {})",
            sig.inputs.len()
        ));
    }
    for (i, (v, &t)) in m.operands(op).zip(&sig.inputs).enumerate() {
        let vt = m.value_type(v);
        if vt != t {
            return Err(format!(
                "operand type mismatch for operand {i}: '{vt}' != '{t}'"
            ));
        }
    }
    match (sig.result, m.result_types(op).as_slice()) {
        (None, []) => Ok(()),
        (None, _) => Err("expected function call to produce no value".into()),
        (Some(_), []) => Err("expected function call to produce a value".into()),
        (Some(t), [r]) if *r == t => Ok(()),
        (Some(t), [r]) => Err(format!("result type mismatch: '{r}' != '{t}'")),
        (Some(_), _) => Err("expected at most one result".into()),
    }
}

/// ` [cconv] [tail call kind] @callee(args) [vararg(!llvm.func<..>)] {attrs}
/// : (types) -> result`
fn print_call(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    let cconv = enum_case(m.prop(op, "CConv"), CCONV).unwrap_or("ccc");
    if cconv != "ccc" {
        p.write(cconv);
        p.write(" ");
    }
    let tail = enum_case(m.prop(op, "TailCallKind"), TAIL_CALL_KIND).unwrap_or("none");
    if tail != "none" {
        p.write(tail);
        p.write(" ");
    }
    if let Some(callee) = m.prop(op, "callee") {
        p.attr(callee);
    }
    p.write("(");
    p.values(m.operands(op));
    p.write(")");
    if let Some(ty) = m.prop(op, "var_callee_type") {
        p.write(" vararg(");
        p.attr(ty);
        p.write(")");
    }
    let fastmath = enum_case(m.prop(op, "fastmathFlags"), "#llvm.fastmath<");
    let elide = if fastmath.is_some_and(|f| f != "none") {
        &CALL_KEYWORD_PROPS[..CALL_KEYWORD_PROPS.len() - 1]
    } else {
        CALL_KEYWORD_PROPS
    };
    p.attr_dict(op, elide);
    p.write(" : (");
    p.types(m.operand_types(op));
    p.write(") -> ");
    p.result_types(&m.result_types(op));
}

fn parse_call(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let mut cconv = "ccc";
    let mut tail = "none";
    while let Token::Bare(kw) = p.peek() {
        p.parse_any_keyword()?;
        if TAIL_CALL_KINDS.contains(&kw) {
            tail = kw;
        } else {
            cconv = kw;
        }
    }
    set_prop(state, "CConv", enum_attr(CCONV, cconv));
    set_prop(state, "TailCallKind", enum_attr(TAIL_CALL_KIND, tail));
    let callee = p.parse_symbol_name()?;
    set_prop(state, "callee", Attribute::symbol(callee));
    p.parse_punct(b'(')?;
    let loc = p.loc();
    let args = p.parse_operand_list()?;
    p.parse_punct(b')')?;
    if p.parse_optional_keyword("vararg") {
        p.parse_punct(b'(')?;
        let ty = p.parse_type()?;
        p.parse_punct(b')')?;
        set_prop(state, "var_callee_type", Attribute::Type(ty));
    }
    set_prop(state, "fastmathFlags", enum_attr("#llvm.fastmath<", "none"));
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let (inputs, results) = p.parse_function_type_lists()?;
    state.operands = p.resolve_operands(&args, &inputs, loc)?;
    state.result_types = results;
    set_prop(state, "op_bundle_sizes", dense_i32_array(&[]));
    set_prop(
        state,
        "operandSegmentSizes",
        dense_i32_array(&[args.len() as i64, 0]),
    );
    Ok(())
}
