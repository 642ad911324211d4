//! Each `xla_gpu` op's verifier, printer and parser: loop, yield, apply_indexing,
//! pure_call, allocate_shared, sync_threads, shuffle_reduce, predicated insert/extract,
//! atomic_rmw.

use super::*;

// ----- xla_gpu.loop -----

pub(super) fn print_loop(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let (Some(args), Ok((num_dims, _)), Some(map)) =
        (loop_args(m, op), loop_segments(m, op), m.prop(op, MAP_ATTR))
    else {
        p.write(" <<invalid xla_gpu.loop>>");
        return;
    };
    let operands = m.operand_vec(op);
    let (dims, inits) = operands.split_at(num_dims);
    print_group(p, " (", dims, ")");
    print_group(p, "[", args.induction_vars, "]");
    print_group(p, " -> (", args.map_results, ")");
    p.write(" in ");
    p.attr(map);
    p.write(" iter_args(");
    super::super::print_bindings(p, args.iter_args, inits);
    p.write(") -> (");
    p.types(inits.iter().map(|&v| m.value_type(v)));
    p.write(") ");
    p.region(m.region(op, 0), false, true);
    p.attr_dict(op, &[MAP_ATTR, SEGMENTS_ATTR]);
}

/// `iter_args(%a = %x, %b = %y)`: the region arguments and the inits.
pub(super) fn parse_iter_args<'a>(
    p: &mut Parser<'a>,
) -> DResult<(Vec<Argument<'a>>, Vec<UnresolvedOperand<'a>>)> {
    p.parse_keyword("iter_args")?;
    p.parse_assignment_list()
}

pub(super) fn parse_loop(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let dims = parse_operand_group(p, b'(', b')')?;
    let mut args = parse_index_args(p, b'[', b']')?;
    p.parse_arrow()?;
    args.extend(parse_index_args(p, b'(', b')')?);
    p.parse_keyword("in")?;
    let map = parse_map_attr(p)?;
    let (mut iter_args, inits) = parse_iter_args(p)?;
    let tloc = p.loc();
    p.parse_arrow()?;
    let iter_types = p.parse_function_result_types()?;
    if iter_types.len() != iter_args.len() {
        return Err(p.error_at(
            tloc,
            "mismatch in number of loop-carried values and defined values",
        ));
    }
    for (a, &t) in iter_args.iter_mut().zip(&iter_types) {
        a.ty = t;
    }
    let mut operands = p.resolve_indices(&dims)?;
    operands.extend(p.resolve_operands(&inits, &iter_types, loc)?);
    args.extend(iter_args);
    let region = p.parse_region(&args)?;
    p.ensure_terminator(region, super::YIELD, state.loc);
    p.parse_optional_attr_dict(&mut state.attrs)?;
    attrs::set_named(&mut state.props, Ident::new(MAP_ATTR), map);
    attrs::set_named(
        &mut state.props,
        Ident::new(SEGMENTS_ATTR),
        segments_attr(dims.len(), inits.len()),
    );
    state.operands = operands;
    state.result_types = iter_types;
    state.regions.push(region);
    Ok(())
}

pub(super) fn verify_loop(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let map = require_map(m, op)?;
    let (num_dims, num_inits) = loop_segments(m, op)?;
    if !map.rt_vars.is_empty() {
        return Err("the indexing map of a loop cannot have runtime variables".into());
    }
    if num_dims != map.dims.len() {
        return Err(format!(
            "mismatch in number of dims operands {num_dims} and DimVars in the indexing map {}",
            map.dims.len()
        ));
    }
    check_index_operands(m, op, 0..num_dims)?;
    if num_inits != m.num_results(op) {
        return Err("mismatch in number of loop-carried values and results".into());
    }
    let Some(body) = m.entry_block(m.region(op, 0)) else {
        return Err("expects a non-empty body region".into());
    };
    let found = m.block_args(body).len();
    let (ivs, results) = (map.range_vars.len(), map.results.len());
    if found != ivs + results + num_inits {
        return Err(format!(
            "expects the body to have {} arguments ({ivs} induction variables, {results} map results and {num_inits} iter_args), but it has {found}",
            ivs + results + num_inits
        ));
    }
    let args = loop_args(m, op).ok_or("expects a non-empty body region")?;
    for (i, &a) in args
        .induction_vars
        .iter()
        .chain(args.map_results)
        .enumerate()
    {
        let t = m.value_type(a);
        if !t.is_index() {
            return Err(format!("body argument #{i} must be index, but got '{t}'"));
        }
    }
    for (i, &arg) in args.iter_args.iter().enumerate() {
        let (arg_ty, init_ty) = (m.value_type(arg), m.value_type(m.operand(op, num_dims + i)));
        let result_ty = m.value_type(m.result(op, i));
        if arg_ty != result_ty || init_ty != result_ty {
            return Err(format!(
                "block iter arg type = '{arg_ty}', result type = '{result_ty}' and init operand type = '{init_ty}' should match"
            ));
        }
    }
    Ok(())
}

// ----- xla_gpu.yield -----

pub(super) fn verify_yield(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    match m.parent_op(op) {
        // The new element (or elements, packed), not the updated tensor the op returns: the
        // type of the body's argument.
        Some(parent) if m.is(parent, super::ATOMIC_RMW) => {
            let current = (m.entry_block(m.region(parent, 0)))
                .and_then(|body| m.block_args(body).first().map(|&a| m.value_type(a)));
            let elem = current.or(m.value_type(m.result(parent, 0)).element_type());
            let found: Vec<Type> = m.operand_types(op);
            if found.len() != 1 || Some(found[0]) != elem {
                return Err(format!(
                    "expects one operand of the element type of the parent 'xla_gpu.atomic_rmw' ('{}')",
                    elem.map_or("?".to_string(), |t| t.to_string())
                ));
            }
            Ok(())
        }
        Some(parent) => super::super::yields_parent_results(m, op, parent),
        None => Ok(()),
    }
}

// ----- xla_gpu.apply_indexing -----

pub(super) fn print_apply_indexing(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let (Some(attr), Some(map)) = (m.prop(op, MAP_ATTR), indexing_map(m, op)) else {
        p.write(" <<invalid xla_gpu.apply_indexing>>");
        return;
    };
    p.write(" ");
    p.attr(attr);
    let operands = m.operand_vec(op);
    let (dims, symbols) = operands.split_at(map.dims.len().min(operands.len()));
    if !dims.is_empty() {
        print_group(p, "(", dims, ")");
    }
    if !symbols.is_empty() {
        print_group(p, "[", symbols, "]");
    }
    p.attr_dict(op, &[MAP_ATTR]);
}

pub(super) fn parse_apply_indexing(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let map = parse_map_attr(p)?;
    let mut operands = Vec::new();
    if p.peek() == Token::Punct(b'(') {
        operands = parse_operand_group(p, b'(', b')')?;
    }
    if p.peek() == Token::Punct(b'[') {
        operands.extend(parse_operand_group(p, b'[', b']')?);
    }
    state.operands = p.resolve_indices(&operands)?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let results = map.as_indexing_map().map_or(0, |m| m.results.len());
    state.result_types = vec![Type::INDEX; results];
    attrs::set_named(&mut state.props, Ident::new(MAP_ATTR), map);
    Ok(())
}

pub(super) fn verify_apply_indexing(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let map = require_map(m, op)?;
    let (n, expected) = (m.num_operands(op), map.dims.len() + map.num_symbols());
    if n != expected {
        return Err(format!(
            "operand count ({n}) must match the number of dimensions and symbols in the indexing map ({expected})"
        ));
    }
    check_index_operands(m, op, 0..n)?;
    let results = m.num_results(op);
    if results != map.results.len() {
        return Err(format!(
            "expected {} results (one per map result), but found {results}",
            map.results.len()
        ));
    }
    if let Some(t) = m.result_types(op).into_iter().find(|t| !t.is_index()) {
        return Err(format!("results must be index, but got '{t}'"));
    }
    if !map.constraints.is_empty() {
        return Err("apply indexing op cannot have any constraints".into());
    }
    Ok(())
}

// ----- xla_gpu.insert -----

/// ` %src(%i, %j) into %dst at #map : !xla_gpu.indexed_vector<..> -> tensor<..>`.
pub(super) fn print_insert(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let operands = m.operand_vec(op);
    let (Some((&source, rest)), Some(map)) = (operands.split_first(), m.prop(op, "map")) else {
        p.write(" <<invalid xla_gpu.insert>>");
        return;
    };
    let Some((&dest, indices)) = rest.split_last() else {
        p.write(" <<invalid xla_gpu.insert>>");
        return;
    };
    p.write(" ");
    p.value(source);
    print_group(p, "(", indices, ")");
    p.write(" into ");
    p.value(dest);
    p.write(" at ");
    p.attr(map);
    p.attr_dict(op, &["map"]);
    p.write(" : ");
    p.ty(m.value_type(source));
    p.write(" -> ");
    p.ty(m.value_type(dest));
}

pub(super) fn parse_insert(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let source = p.parse_operand()?;
    let indices = parse_operand_group(p, b'(', b')')?;
    p.parse_keyword("into")?;
    let dest = p.parse_operand()?;
    p.parse_keyword("at")?;
    let map = parse_map_attr(p)?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let source_type = p.parse_type()?;
    p.parse_arrow()?;
    let dest_type = p.parse_type()?;
    let mut operands = p.resolve_operands(&[source], &[source_type], loc)?;
    operands.extend(p.resolve_indices(&indices)?);
    operands.extend(p.resolve_operands(&[dest], &[dest_type], loc)?);
    state.operands = operands;
    state.result_types = vec![dest_type];
    attrs::set_named(&mut state.props, Ident::new("map"), map);
    Ok(())
}

/// XLA's checks: an indexed vector into a tensor of the result's type, one index a
/// dimension of the map, one map result a dimension of the tensor.
pub(super) fn verify_insert(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let Some(map) = m.prop(op, "map").and_then(Attribute::as_indexing_map) else {
        return Err("requires a 'map' attribute holding an indexing map".into());
    };
    let n = m.num_operands(op);
    if n < 2 {
        return Err("expects a source, indices and a destination".into());
    }
    let source = m.value_type(m.operand(op, 0));
    if !source.to_string().starts_with("!xla_gpu.indexed_vector<") {
        return Err(format!(
            "source must be an '!xla_gpu.indexed_vector', but got '{source}'"
        ));
    }
    if n - 2 != map.dims.len() {
        return Err(format!(
            "expects {} indices (the map's dimensions), but got {}",
            map.dims.len(),
            n - 2
        ));
    }
    check_index_operands(m, op, 1..n - 1)?;
    let dest = m.value_type(m.operand(op, n - 1));
    if dest.rank() != Some(map.results.len()) || !dest.is_tensor() {
        return Err(format!(
            "expects a destination tensor of rank {} (the map's results), but got '{dest}'",
            map.results.len()
        ));
    }
    if m.result_types(op) != [dest] {
        return Err("result type must be the destination's".into());
    }
    Ok(())
}

// ----- xla_gpu.pure_call -----

pub(super) fn print_pure_call(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.symbol(
        m.prop(op, "callee")
            .and_then(Attribute::as_symbol)
            .unwrap_or(""),
    );
    print_group(p, "(", &m.operand_vec(op), ")");
    p.attr_dict(op, &["callee"]);
    p.write(" : (");
    p.types(m.operand_types(op));
    p.write(") -> ");
    p.result_types(&m.result_types(op));
}

pub(super) fn parse_pure_call(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let callee = p.parse_symbol_name()?;
    let loc = p.loc();
    let args = parse_operand_group(p, b'(', b')')?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let (inputs, results) = p.parse_function_type_lists()?;
    state.operands = p.resolve_operands(&args, &inputs, loc)?;
    state.result_types = results;
    attrs::set_named(
        &mut state.props,
        Ident::new("callee"),
        Attribute::symbol(callee),
    );
    Ok(())
}

pub(super) fn verify_pure_call(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let callee = require_symbol(m, op, "callee")?;
    let ty = Type::function(&m.operand_types(op), &m.result_types(op));
    check_callee(cx, op, "callee", callee, ty)
}

// ----- xla_gpu.allocate_shared -----

// ----- xla_gpu.sync_threads -----

pub(super) fn print_sync_threads(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    if m.num_operands(op) > 0 {
        p.write(" ");
        p.values(m.operands(op));
    }
    p.attr_dict(op, &[]);
    if m.num_operands(op) > 0 {
        p.write(" : ");
        p.types(m.operand_types(op));
    }
}

pub(super) fn parse_sync_threads(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let operands = p.parse_operand_list()?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    if !operands.is_empty() {
        let types = p.parse_colon_type_list()?;
        state.operands = p.resolve_operands(&operands, &types, loc)?;
        state.result_types = types;
    }
    Ok(())
}

pub(super) fn verify_sync_threads(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operand_types(m, op, "ranked tensor", |t| {
        t.is_tensor() && t.rank().is_some()
    })?;
    check_results_match_operands(m, op)
}

// ----- xla_gpu.shuffle_reduce -----

pub(super) fn print_shuffle_reduce(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    print_group(p, "(", &m.operand_vec(op), ")");
    let distance = m.prop(op, "max_distance").and_then(Attribute::as_i64);
    p.write_fmt(format_args!(" to {}", distance.unwrap_or(0)));
    p.write(" combiner=");
    p.symbol(
        m.prop(op, "combiner")
            .and_then(Attribute::as_symbol)
            .unwrap_or(""),
    );
    p.attr_dict(op, &["combiner", "max_distance"]);
    p.write(" : ");
    p.types(m.result_types(op));
}

pub(super) fn parse_shuffle_reduce(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let operands = parse_operand_group(p, b'(', b')')?;
    p.parse_keyword("to")?;
    let dloc = p.loc();
    let distance = i64::try_from(p.parse_integer()?)
        .map_err(|_| p.error_at(dloc, "integer constant out of range for attribute"))?;
    p.parse_keyword("combiner")?;
    p.parse_punct(b'=')?;
    let combiner = p.parse_symbol_name()?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let types = p.parse_colon_type_list()?;
    state.operands = p.resolve_operands(&operands, &types, loc)?;
    state.result_types = types;
    let props = [
        ("combiner", Attribute::symbol(combiner)),
        ("max_distance", Attribute::i64(distance)),
    ];
    for (name, value) in props {
        attrs::set_named(&mut state.props, Ident::new(name), value);
    }
    Ok(())
}

/// Shuffles halve the distance down to 1, so only a power of two below the warp size (32)
/// combines every lane exactly once.
pub(super) fn check_max_distance(m: &Module, op: OpId) -> Result<(), String> {
    let Some(Attribute::Int(d, ty)) = m.prop(op, "max_distance") else {
        return Err("requires a 'max_distance' attribute of type i64".into());
    };
    if *ty != Type::I64 {
        return Err("requires a 'max_distance' attribute of type i64".into());
    }
    if !(1..=16).contains(d) || d.count_ones() != 1 {
        return Err(format!(
            "max_distance must be a power of two in [1, 16], but got {d}"
        ));
    }
    Ok(())
}

pub(super) fn verify_shuffle_reduce(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let combiner = require_symbol(m, op, "combiner")?;
    check_max_distance(m, op)?;
    check_results_match_operands(m, op)?;
    // The combiner takes the low lanes' values, then the high lanes'.
    let types = m.operand_types(op);
    let inputs = [types.as_slice(), types.as_slice()].concat();
    check_callee(
        cx,
        op,
        "combiner",
        combiner,
        Type::function(&inputs, &types),
    )
}

// ----- xla_gpu.reduce -----

/// `(%in, ..) inits(%init, ..) dimensions=[0, 2] combiner=@f {attrs} : T, .. to R, ..`
pub(super) fn print_reduce(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let operands = m.operand_vec(op);
    let (inputs, inits) = operands.split_at(operands.len() / 2);
    print_group(p, "(", inputs, ")");
    print_group(p, " inits(", inits, ")");
    p.write(" dimensions=");
    print_int_list(p, &dense_ints(m.prop(op, "dimensions")).unwrap_or_default());
    p.write(" combiner=");
    p.symbol(require_symbol(m, op, "combiner").unwrap_or(""));
    p.attr_dict(op, &["combiner", "dimensions"]);
    p.write(" : ");
    p.types(inputs.iter().map(|&v| m.value_type(v)).collect::<Vec<_>>());
    p.write(" to ");
    p.types(m.result_types(op));
}

pub(super) fn parse_reduce(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let inputs = parse_operand_group(p, b'(', b')')?;
    p.parse_keyword("inits")?;
    let inits = parse_operand_group(p, b'(', b')')?;
    p.parse_keyword("dimensions")?;
    p.parse_punct(b'=')?;
    let dimensions = parse_int_list(p)?;
    p.parse_keyword("combiner")?;
    p.parse_punct(b'=')?;
    let combiner = p.parse_symbol_name()?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let input_types = p.parse_colon_type_list()?;
    p.parse_keyword("to")?;
    let result_types = p.parse_type_list()?;
    let init_types: Option<Vec<Type>> = input_types.iter().map(|t| t.element_type()).collect();
    let Some(init_types) = init_types.filter(|_| inputs.len() == inits.len()) else {
        return Err(p.error_at(
            loc,
            "expects as many inits as tensor inputs, each of the input's element type",
        ));
    };
    let mut operands = p.resolve_operands(&inputs, &input_types, loc)?;
    operands.extend(p.resolve_operands(&inits, &init_types, loc)?);
    state.operands = operands;
    state.result_types = result_types;
    let dims = Attribute::DenseArray {
        elem: Type::I64,
        values: dimensions.iter().map(|&d| Scalar::Int(d.into())).collect(),
    };
    attrs::set_named(
        &mut state.props,
        Ident::new("combiner"),
        Attribute::symbol(combiner),
    );
    attrs::set_named(&mut state.props, Ident::new("dimensions"), dims);
    Ok(())
}

/// XLA's `ReduceOp` verifier: tensor inputs and inits of their element types, in equal
/// numbers; each result the input without the reduced dimensions; the combiner a function
/// `(inits, inits) -> inits`.
pub(super) fn verify_reduce(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let operands = m.operand_types(op);
    let n = operands.len() / 2;
    if !operands.len().is_multiple_of(2) || n == 0 || m.num_results(op) != n {
        return Err(format!(
            "expects as many inits as tensor inputs and results, at least one; got {} operands and {} results",
            operands.len(),
            m.num_results(op)
        ));
    }
    let (inputs, inits) = operands.split_at(n);
    let dims = dense_ints(m.prop(op, "dimensions"))
        .ok_or("requires a 'dimensions' attribute of type array<i64>")?;
    for ((&input, &init), result) in inputs.iter().zip(inits).zip(m.result_types(op)) {
        let (Some(elem), Some(shape)) = (input.element_type(), input.shape()) else {
            return Err(format!("input type '{input}' is not a ranked tensor"));
        };
        if init != elem {
            return Err(format!(
                "init type '{init}' does not match inferred type '{elem}'"
            ));
        }
        if dims.windows(2).any(|w| w[0] >= w[1])
            || dims.iter().any(|&d| d < 0 || d as usize >= shape.len())
        {
            return Err(format!(
                "dimensions {dims:?} must be increasing dimensions of '{input}'"
            ));
        }
        let kept: Vec<i64> = (0..shape.len())
            .filter(|d| !dims.contains(&(*d as i64)))
            .map(|d| shape[d])
            .collect();
        let expected = Type::tensor(&kept, elem);
        if result != expected {
            return Err(format!(
                "result type '{result}' does not match inferred type '{expected}'"
            ));
        }
    }
    let combiner = require_symbol(m, op, "combiner")?;
    let expected = Type::function(&[inits, inits].concat(), inits);
    let actual = cx
        .lookup_symbol(op, combiner)
        .filter(|&f| m.is(f, func::FUNC))
        .and_then(|f| m.prop(f, "function_type"))
        .and_then(Attribute::as_type)
        .ok_or_else(|| format!("combiner `@{combiner}` not found"))?;
    if actual != expected {
        return Err(format!(
            "combiner `@{combiner} expected to have type '{expected}' but got '{actual}'"
        ));
    }
    Ok(())
}

/// The dimension is not negative. It may exceed the tensor's rank: it names a dimension of
/// the buffer's shape before `flatten-tensors` made it 1-d (as in XLA).
pub(super) fn verify_get_dynamic_dim_size(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    match cx.module.prop(op, "dim").and_then(Attribute::as_i64) {
        Some(d) if d >= 0 => Ok(()),
        d => Err(format!(
            "dim {} is not a dimension",
            d.map_or("(none)".to_string(), |d| d.to_string())
        )),
    }
}

// ----- xla_gpu.predicated_insert / predicated_extract -----

/// `%t[%i, ..] if %cond {attrs} : type`, the tail both predicated ops share, with
/// ` else %fallback` after the condition for extract.
pub(super) fn print_predicated_tail(
    p: &mut Printer<'_>,
    op: OpId,
    tensor: usize,
    fallback: Option<Value>,
) {
    let m = p.module();
    let operands = m.operand_vec(op);
    p.value(operands[tensor]);
    print_group(p, "[", &operands[tensor + 1..], "]");
    p.write(" if ");
    p.value(operands[0]);
    if let Some(v) = fallback {
        p.write(" else ");
        p.value(v);
    }
    p.attr_dict(op, &[]);
    p.write(" : ");
    p.ty(m.value_type(operands[tensor]));
}

pub(super) fn print_predicated_insert(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.value(m.operand(op, 1));
    p.write(" into ");
    print_predicated_tail(p, op, 2, None);
}

pub(super) fn print_predicated_extract(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    print_predicated_tail(p, op, 2, Some(m.operand(op, 1)));
}

/// `%t[%i, ..] if %cond`, parsed: what both predicated ops have before their tail.
pub(super) struct IndexedIf<'a> {
    tensor: UnresolvedOperand<'a>,
    indices: Vec<UnresolvedOperand<'a>>,
    cond: UnresolvedOperand<'a>,
}

pub(super) fn parse_indexed_if<'a>(p: &mut Parser<'a>) -> DResult<IndexedIf<'a>> {
    let tensor = p.parse_operand()?;
    let indices = parse_operand_group(p, b'[', b']')?;
    p.parse_keyword("if")?;
    let cond = p.parse_operand()?;
    Ok(IndexedIf {
        tensor,
        indices,
        cond,
    })
}

/// `{attrs} : tensor<..>`: the tensor type and its element type.
pub(super) fn parse_tensor_tail(p: &mut Parser<'_>, state: &mut OpState) -> DResult<(Type, Type)> {
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let loc = p.loc();
    let ty = p.parse_type()?;
    match ty.element_type().filter(|_| ty.is_tensor()) {
        Some(elem) => Ok((ty, elem)),
        None => Err(p.error_at(loc, format!("expected a tensor type, but got '{ty}'"))),
    }
}

/// Resolves the operands in the predicated ops' order: condition, `scalar` (the value or the
/// fallback, of the element type), tensor, indices.
pub(super) fn resolve_predicated<'a>(
    p: &mut Parser<'a>,
    indexed: &IndexedIf<'a>,
    scalar: &UnresolvedOperand<'a>,
    (ty, elem): (Type, Type),
) -> DResult<Vec<Value>> {
    let mut operands = vec![
        p.resolve_operand(&indexed.cond, Type::I1)?,
        p.resolve_operand(scalar, elem)?,
        p.resolve_operand(&indexed.tensor, ty)?,
    ];
    operands.extend(p.resolve_indices(&indexed.indices)?);
    Ok(operands)
}

pub(super) fn parse_predicated_insert(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let value = p.parse_operand()?;
    p.parse_keyword("into")?;
    let indexed = parse_indexed_if(p)?;
    let types = parse_tensor_tail(p, state)?;
    state.operands = resolve_predicated(p, &indexed, &value, types)?;
    state.result_types.push(types.0);
    Ok(())
}

pub(super) fn parse_predicated_extract(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let indexed = parse_indexed_if(p)?;
    p.parse_keyword("else")?;
    let fallback = p.parse_operand()?;
    let types = parse_tensor_tail(p, state)?;
    state.operands = resolve_predicated(p, &indexed, &fallback, types)?;
    state.result_types.push(types.1);
    Ok(())
}

/// The checks both predicated ops share: a condition, a scalar of the element type (the value
/// or the fallback), a static tensor and its indices, one result of type `result(tensor,
/// elem)`. `scalar` names operand #1 in messages.
pub(super) fn verify_predicated(
    m: &Module,
    op: OpId,
    scalar: &str,
    result: impl Fn(Type, Type) -> Type,
) -> Result<(), String> {
    if m.num_operands(op) < 3 {
        return Err(format!(
            "expected a condition, a {scalar} and a tensor operand"
        ));
    }
    expect_results(m, op, 1)?;
    check_condition(m, op)?;
    let elem = check_indexed_tensor(m, op, 2)?;
    let t = m.value_type(m.operand(op, 2));
    let s = m.value_type(m.operand(op, 1));
    if s != elem {
        return Err(format!(
            "{scalar} type '{s}' does not match the element type of '{t}'"
        ));
    }
    let (r, expected) = (m.value_type(m.result(op, 0)), result(t, elem));
    if r != expected {
        return Err(format!(
            "result type '{r}' does not match the expected type '{expected}'"
        ));
    }
    Ok(())
}

pub(super) fn verify_predicated_insert(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    verify_predicated(cx.module, op, "value", |tensor, _| tensor)
}

pub(super) fn verify_predicated_extract(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    verify_predicated(cx.module, op, "fallback", |_, elem| elem)
}

// ----- xla_gpu.atomic_rmw -----

/// ` %t[%i, ..] : tensor<..> { ^bb0(%current: elem): ... xla_gpu.yield %new : elem } {attrs}`,
/// XLA's `xla.atomic_rmw` syntax.
pub(super) fn print_atomic_rmw(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let operands = m.operand_vec(op);
    let Some((&tensor, indices)) = operands.split_first() else {
        p.write(" <<invalid xla_gpu.atomic_rmw>>");
        return;
    };
    p.write(" ");
    p.value(tensor);
    print_group(p, "[", indices, "]");
    p.write(" : ");
    p.ty(m.value_type(tensor));
    p.write(" ");
    p.region(m.region(op, 0), true, true);
    p.attr_dict(op, &[]);
}

pub(super) fn parse_atomic_rmw(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let tensor = p.parse_operand()?;
    let indices = parse_operand_group(p, b'[', b']')?;
    p.parse_punct(b':')?;
    let tloc = p.loc();
    let ty = p.parse_type()?;
    if !ty.is_tensor() {
        return Err(p.error_at(tloc, format!("expected a tensor type, but got '{ty}'")));
    }
    let operands = p.resolve_indexed_operands(&[(tensor, ty)], &indices)?;
    let region = p.parse_region(&[])?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    state.operands = operands;
    state.result_types = vec![ty];
    state.regions.push(region);
    Ok(())
}

/// A static tensor and one index per dimension; one result of the tensor's type; a body of
/// one block whose only argument is the current element (or, as XLA writes a packed update,
/// a vector of elements from the indexed one on) and whose `xla_gpu.yield` gives the new
/// one.
pub(super) fn verify_atomic_rmw(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    if m.num_operands(op) == 0 {
        return Err("expected a tensor operand".into());
    }
    expect_results(m, op, 1)?;
    let elem = check_indexed_tensor(m, op, 0)?;
    let (t, r) = (
        m.value_type(m.operand(op, 0)),
        m.value_type(m.result(op, 0)),
    );
    if r != t {
        return Err(format!(
            "result type '{r}' does not match the tensor type '{t}'"
        ));
    }
    let Some(body) = m.entry_block(m.region(op, 0)) else {
        return Err("expects a non-empty body region".into());
    };
    let args = m.block_args(body);
    let current = args.first().map(|&a| m.value_type(a));
    let lanes_of_elem = current.is_some_and(|t| {
        matches!(t.kind(), crate::TypeKind::Vector { .. }) && t.element_type() == Some(elem)
    });
    if args.len() != 1 || (current != Some(elem) && !lanes_of_elem) {
        return Err(format!(
            "expects the body to have one argument of the element type '{elem}' (or a \
             vector of it)"
        ));
    }
    Ok(())
}
