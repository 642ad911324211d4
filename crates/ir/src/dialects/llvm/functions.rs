//! `llvm.func`, `llvm.return` and `llvm.call`: verification and syntax.

use super::*;

// ----- llvm.func -----

/// The properties `llvm.func`'s syntax shows outside `attributes {...}`.
pub(super) const FUNC_KEYWORD_PROPS: &[&str] = &[
    "sym_name",
    "function_type",
    "arg_attrs",
    "res_attrs",
    "linkage",
    "CConv",
    "visibility_",
    "unnamed_addr",
];

pub(super) fn verify_func(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
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
    verify_entry_block_args(m, entry, &sig.inputs)
}

/// ` [linkage] [visibility] [unnamed_addr] [cconv] @name(args) [-> result]
/// [attributes {...}] [body]`
pub(super) fn print_func(p: &mut Printer<'_>, op: OpId) {
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
    p.comma_separated(sig.inputs.iter().enumerate(), |p, (i, &t)| {
        match entry {
            Some(b) => p.arg_decl(m.block_arg(b, i)),
            None => p.ty(t),
        }
        print_attr_list(p, op, "arg_attrs", i);
    });
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
pub(super) fn parse_func_keywords(p: &mut Parser<'_>, state: &mut OpState) {
    parse_linkage_and_visibility(p, state);
    set_prop(state, "unnamed_addr", Attribute::i64(0));
    parse_int_enum(p, state, "unnamed_addr", UNNAMED_ADDRS);
    let cconv = p.parse_optional_any_keyword().unwrap_or("ccc");
    set_prop(state, "CConv", enum_attr(CCONV, cconv));
}

/// `(%a: t {attrs}, ...)` or `(t {attrs}, ...)`, possibly ending in `...`; returns the
/// arguments (unnamed ones with an empty name), whether they are named, and whether the
/// signature is variadic.
pub(super) fn parse_func_args<'a>(
    p: &mut Parser<'a>,
) -> DResult<(Vec<Argument<'a>>, Option<bool>, bool)> {
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
        args.push(p.parse_signature_argument(&mut named)?);
        if !p.parse_optional_punct(b',') {
            break;
        }
    }
    p.parse_punct(b')')?;
    Ok((args, named, variadic))
}

/// `-> t` or `-> (t {attrs})`: the result and its attributes.
pub(super) fn parse_func_result(p: &mut Parser<'_>) -> DResult<Option<(Type, Vec<NamedAttr>)>> {
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

pub(super) fn parse_func(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
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

pub(super) fn verify_return(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    if m.num_operands(op) > 1 {
        return Err(format!(
            "expected at most 1 operand, but found {}",
            m.num_operands(op)
        ));
    }
    let Some(func) = m.parent_op(op).filter(|&f| m.is(f, super::FUNC)) else {
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
pub(super) const CALL_KEYWORD_PROPS: &[&str] = &[
    "callee",
    "CConv",
    "TailCallKind",
    "var_callee_type",
    "operandSegmentSizes",
    "op_bundle_sizes",
    "fastmathFlags",
];

pub(super) fn verify_call(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
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
    let sig = Signature::of(m, func).filter(|_| m.is(func, super::FUNC));
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
pub(super) fn check_call_types(m: &Module, op: OpId, sig: &Signature) -> Result<(), String> {
    let n = m.num_operands(op);
    if n != sig.inputs.len() && !(sig.variadic && n > sig.inputs.len()) {
        return Err(format!(
            "incorrect number of operands ({n}) for callee (expecting: {})",
            sig.inputs.len()
        ));
    }
    if let Some((i, vt, t)) = first_type_mismatch(m, m.operands(op), &sig.inputs) {
        return Err(format!(
            "operand type mismatch for operand {i}: '{vt}' != '{t}'"
        ));
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
pub(super) fn print_call(p: &mut Printer<'_>, op: OpId) {
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

pub(super) fn parse_call(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
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
