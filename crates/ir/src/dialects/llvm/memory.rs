//! `llvm.getelementptr`, `llvm.load` and `llvm.store`: verification and syntax.

use super::*;

// ----- llvm.getelementptr -----

/// `inbounds`, `nusw|nuw`, ... for the `noWrapFlags` bits (MLIR prints inbounds_flag|nusw as
/// `inbounds`).
pub(super) fn gep_flags_text(flags: i64) -> String {
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

pub(super) fn gep_flag_bits(keyword: &str) -> Option<i64> {
    match keyword {
        "inbounds" => Some(GEP_INBOUNDS),
        "inbounds_flag" => Some(1),
        "nusw" => Some(2),
        "nuw" => Some(4),
        _ => None,
    }
}

pub(super) fn verify_gep(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
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
pub(super) fn print_gep(p: &mut Printer<'_>, op: OpId) {
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
    let raw = dense_ints(m.prop(op, "rawConstantIndices")).unwrap_or_default();
    print_dynamic_index_list(p, raw, GEP_DYNAMIC_INDEX, m.operands(op).skip(1));
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

pub(super) fn parse_gep_flags(p: &mut Parser<'_>) -> DResult<i64> {
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

pub(super) fn parse_gep(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let flags = parse_gep_flags(p)?;
    let loc = p.loc();
    let base = p.parse_operand()?;
    p.parse_punct(b'[')?;
    let narrow = |c| i32::try_from(c).ok().map(i64::from);
    let (raw, indices) = parse_dynamic_index_list(
        p,
        b']',
        GEP_DYNAMIC_INDEX,
        narrow,
        "index out of range for i32",
    )?;
    let mut operands = vec![base];
    operands.extend(indices);
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
pub(super) const ACCESS_KEYWORD_PROPS: &[&str] = &[
    "volatile_",
    "ordering",
    "syncscope",
    "invariant",
    "invariantGroup",
    "dereferenceable",
];

/// ` [volatile] %p [atomic ...] [invariant] [invariant_group] [dereferenceable<..>] {attrs}
/// : ptr -> ty`
pub(super) fn print_load(p: &mut Printer<'_>, op: OpId) {
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

pub(super) fn parse_load(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
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

/// ` [volatile] %v, %p [atomic ...] [invariant_group] {attrs} : ty, ptr`
pub(super) fn print_store(p: &mut Printer<'_>, op: OpId) {
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

pub(super) fn parse_store(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
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
