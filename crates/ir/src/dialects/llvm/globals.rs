//! `llvm.mlir.global`, `llvm.mlir.addressof` and `llvm.mlir.constant`: verification and syntax.

use super::*;

// ----- llvm.mlir.global -----

/// The properties the global's syntax shows outside its attribute dictionary.
pub(super) const GLOBAL_KEYWORD_PROPS: &[&str] = &[
    "sym_name",
    "global_type",
    "constant",
    "value",
    "linkage",
    "unnamed_addr",
    "thread_local_",
    "visibility_",
];

pub(super) fn verify_global(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
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
pub(super) fn verify_initializer(m: &Module, op: OpId, ty: Type) -> Result<(), String> {
    let Some(block) = m.entry_block(m.region(op, 0)) else {
        return Ok(());
    };
    if m.prop(op, "value").is_some() {
        return Err("cannot have both initializer value and region".into());
    }
    let Some(ret) = m.last_op(block).filter(|&r| m.is(r, super::RETURN)) else {
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
pub(super) fn print_global(p: &mut Printer<'_>, op: OpId) {
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
pub(super) fn parse_global_keywords(p: &mut Parser<'_>, state: &mut OpState) {
    parse_linkage_and_visibility(p, state);
    parse_flag(p, state, "thread_local", "thread_local_");
    set_prop(state, "unnamed_addr", Attribute::i64(0));
    parse_int_enum(p, state, "unnamed_addr", UNNAMED_ADDRS);
    parse_flag(p, state, "constant", "constant");
}

pub(super) fn parse_global(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
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

pub(super) fn verify_addressof(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let Some(name) = m.prop(op, "global_name").and_then(Attribute::as_symbol) else {
        return Err("requires attribute 'global_name'".into());
    };
    let target = cx
        .lookup_symbol(op, name)
        .filter(|&t| m.is(t, super::MLIR_GLOBAL) || m.is(t, super::FUNC));
    let Some(target) = target else {
        return Err("must reference a global defined by 'llvm.mlir.global', 'llvm.mlir.alias' or 'llvm.func' or 'llvm.mlir.ifunc'".into());
    };
    let space = m.prop(target, "addr_space").and_then(Attribute::as_i64);
    let r = m.value_type(m.result(op, 0));
    if m.is(target, super::MLIR_GLOBAL) && space != r.ptr_addr_space().map(i64::from) {
        return Err(
            "pointer address space must match address space of the referenced global or alias"
                .into(),
        );
    }
    Ok(())
}

/// ` @name {attrs} : ptr`
pub(super) fn print_addressof(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    if let Some(name) = m.prop(op, "global_name") {
        p.attr(name);
    }
    p.attr_dict(op, &["global_name"]);
    p.write(" : ");
    p.ty(m.value_type(m.result(op, 0)));
}

pub(super) fn parse_addressof(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let name = p.parse_symbol_name()?;
    set_prop(state, "global_name", Attribute::symbol(name));
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.result_types.push(ty);
    Ok(())
}

// ----- llvm.mlir.constant -----

pub(super) fn verify_constant(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
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
pub(super) fn check_float_constant(attr_ty: Type, ty: Type) -> Result<(), String> {
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
pub(super) fn check_dense_constant(
    attr_ty: Type,
    values: &DenseValues,
    ty: Type,
) -> Result<(), String> {
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
pub(super) fn print_constant(p: &mut Printer<'_>, op: OpId) {
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

pub(super) fn parse_constant(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    p.parse_punct(b'(')?;
    let value = p.parse_attribute()?;
    p.parse_punct(b')')?;
    set_prop(state, "value", value);
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.result_types.push(ty);
    Ok(())
}
