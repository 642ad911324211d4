//! `vector.transfer_read` and `vector.transfer_write`: their permutation maps, operand
//! groups, verification and custom syntax.

use super::*;

/// The op state every transfer starts from: its in-bounds flags and minor identity map.
pub(super) fn transfer_state(
    name: &str,
    source_rank: usize,
    vector_ty: Type,
    in_bounds: &[bool],
) -> OpState {
    let vector_rank = vector_ty.rank().unwrap_or(0);
    OpState::new(name)
        .prop("in_bounds", Attribute::bool_array(in_bounds))
        .prop(
            "permutation_map",
            Attribute::Opaque(minor_identity_map(source_rank, vector_rank)),
        )
}

// ----- permutation maps -----

/// `affine_map<(d0, d1) -> (d1)>`: the last `results` of `dims` dimensions, as MLIR prints
/// the default permutation map of a transfer.
fn minor_identity_map(dims: usize, results: usize) -> String {
    let names: Vec<String> = (0..dims).map(|i| format!("d{i}")).collect();
    let kept = &names[dims.saturating_sub(results)..];
    format!(
        "affine_map<({}) -> ({})>",
        names.join(", "),
        kept.join(", ")
    )
}

/// The number of dimensions and results of an affine map written
/// `affine_map<(d0, ...)[s0, ...] -> (e0, ...)>`.
fn map_arity(text: &str) -> Option<(usize, usize)> {
    let body = text.strip_prefix("affine_map<")?.strip_suffix('>')?;
    let (lhs, rhs) = body.split_once("->")?;
    let dims = lhs.trim().strip_prefix('(')?.split_once(')')?.0;
    let results = rhs.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some((split_top_level(dims).len(), split_top_level(results).len()))
}

fn is_minor_identity(text: &str, dims: usize, results: usize) -> bool {
    let strip = |s: &str| s.split_whitespace().collect::<String>();
    strip(text) == strip(&minor_identity_map(dims, results))
}

/// The tensor and vector types of transfer `op` (read or write).
fn transfer_types(m: &Module, op: OpId) -> (Type, Type) {
    if m.is(op, super::TRANSFER_READ) {
        (
            m.value_type(m.operand(op, 0)),
            m.value_type(m.result(op, 0)),
        )
    } else {
        (
            m.value_type(m.operand(op, 1)),
            m.value_type(m.operand(op, 0)),
        )
    }
}

/// Whether transfer `op` (read or write) reads or writes the tensor's last dimensions in
/// order: its permutation map is the minor identity.
pub fn has_minor_identity_map(m: &Module, op: OpId) -> bool {
    let (tensor, vector) = transfer_types(m, op);
    let (rank, vrank) = (tensor.rank().unwrap_or(0), vector.rank().unwrap_or(0));
    vrank <= rank
        && matches!(m.prop(op, "permutation_map"),
            Some(Attribute::Opaque(map)) if is_minor_identity(map, rank, vrank))
}

/// Whether transfer `op` is in bounds in every dimension (no padding, no mask).
pub fn is_in_bounds(m: &Module, op: OpId) -> bool {
    m.prop(op, "in_bounds")
        .and_then(Attribute::as_array)
        .is_some_and(|a| a.iter().all(|b| b.as_bool() == Some(true)))
}

// ----- transfers -----

/// A transfer's operands and types: the tensor, the index operand range and the vector type.
struct Transfer {
    tensor: Type,
    indices: Range<usize>,
    vector: Type,
}

impl Transfer {
    /// The parts of a transfer whose `vector` must be a vector type; `what` names it in the
    /// message as MLIR does (`result #0` of a read, `operand #0` of a write).
    fn new(tensor: Type, indices: Range<usize>, vector: Type, what: &str) -> Result<Self, String> {
        if !vector.is_vector() {
            return Err(format!(
                "{what} must be vector of any type values, but got '{vector}'"
            ));
        }
        Ok(Transfer {
            tensor,
            indices,
            vector,
        })
    }
}

/// The operand groups of a transfer (the tensor, the indices, the other single operand and the
/// mask) checked against MLIR's type constraints. MLIR numbers operand groups in its
/// messages: `tensor` and `indices` are group numbers, `single` the other one-operand group.
fn transfer_operands(
    m: &Module,
    op: OpId,
    tensor: usize,
    indices: usize,
    single: usize,
) -> Result<Vec<Range<usize>>, String> {
    let groups = operand_segments(m, op, 4)?;
    for g in [tensor, single] {
        if groups[g].len() != 1 {
            return Err(format!(
                "operand group #{g} requires one operand, but found {}",
                groups[g].len()
            ));
        }
    }
    let t = m.value_type(m.operand(op, groups[tensor].start));
    if !t.is_tensor() {
        return Err(format!(
            "operand #{tensor} must be shaped of any type values, but got '{t}'"
        ));
    }
    for i in groups[indices].clone() {
        let it = m.value_type(m.operand(op, i));
        if !it.is_index() {
            return Err(format!(
                "operand #{indices} must be variadic of index, but got '{it}'"
            ));
        }
    }
    if !groups[3].is_empty() {
        return Err("masked transfers are not supported".into());
    }
    Ok(groups)
}

/// MLIR's `verifyTransferOp`: index count, permutation map and in-bounds flags against the
/// tensor and vector types.
fn verify_transfer(m: &Module, op: OpId, t: &Transfer) -> Result<(), String> {
    let rank = t.tensor.rank().unwrap_or(0);
    if t.indices.len() != rank {
        return Err(format!("requires {rank} indices"));
    }
    let Some(Attribute::Opaque(map)) = m.prop(op, "permutation_map") else {
        return Err("requires attribute 'permutation_map'".into());
    };
    let Some((dims, results)) = map_arity(map) else {
        return Err(format!(
            "'permutation_map' must be an affine map, but got {map}"
        ));
    };
    if dims != rank {
        return Err(
            "requires a permutation_map with input dims of the same rank as the source type".into(),
        );
    }
    if results != t.vector.rank().unwrap_or(0) {
        return Err(
            "requires a permutation_map with result dims of the same rank as the vector type"
                .into(),
        );
    }
    let Some(in_bounds) = m.prop(op, "in_bounds").and_then(Attribute::as_array) else {
        return Err("requires attribute 'in_bounds'".into());
    };
    if in_bounds.iter().any(|b| b.as_bool().is_none()) {
        return Err(
            "attribute 'in_bounds' failed to satisfy constraint: 1-bit boolean array attribute"
                .into(),
        );
    }
    if in_bounds.len() != results {
        return Err(format!(
            "expects the in_bounds attr of same rank as permutation_map results: {map} vs inBounds of size: {}",
            in_bounds.len()
        ));
    }
    Ok(())
}

/// ` {attrs} : tensor type, vector type` of a transfer (the vector type first for a write),
/// as [`parse_transfer_tail`] reads it. The attributes leave out `operandSegmentSizes`
/// always, the permutation map when it is the minor identity and `in_bounds` when all false
/// (MLIR's defaults).
fn print_transfer_tail(p: &mut Printer<'_>, op: OpId, t: &Transfer, write: bool) {
    let m = p.module();
    let mut elide = vec!["operandSegmentSizes"];
    let rank = t.tensor.rank().unwrap_or(0);
    let vrank = t.vector.rank().unwrap_or(0);
    if let Some(Attribute::Opaque(map)) = m.prop(op, "permutation_map")
        && is_minor_identity(map, rank, vrank)
    {
        elide.push("permutation_map");
    }
    let in_bounds = m.prop(op, "in_bounds").and_then(Attribute::as_array);
    if in_bounds.is_some_and(|a| a.iter().all(|b| b.as_bool() == Some(false))) {
        elide.push("in_bounds");
    }
    p.attr_dict(op, &elide);
    let (first, second) = if write {
        (t.vector, t.tensor)
    } else {
        (t.tensor, t.vector)
    };
    p.write(" : ");
    p.ty(first);
    p.write(", ");
    p.ty(second);
}

/// `[%i, %j]`
fn parse_index_list<'a>(p: &mut Parser<'a>) -> DResult<Vec<UnresolvedOperand<'a>>> {
    p.parse_punct(b'[')?;
    let indices = p.parse_operand_list()?;
    p.parse_punct(b']')?;
    Ok(indices)
}

/// Parses `{attrs} : tensor type, vector type` and fills in MLIR's defaults: the minor identity
/// map and all-false in-bounds flags. Returns the two types.
fn parse_transfer_tail(
    p: &mut Parser<'_>,
    state: &mut OpState,
    write: bool,
) -> DResult<(Type, Type)> {
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let colon = p.loc();
    p.parse_punct(b':')?;
    let first_loc = p.loc();
    let first = p.parse_type()?;
    p.parse_punct(b',')?;
    let second_loc = p.loc();
    let second = p.parse_type()?;
    let ((tensor, tloc), (vector, vloc)) = if write {
        ((second, second_loc), (first, first_loc))
    } else {
        ((first, first_loc), (second, second_loc))
    };
    if !tensor.is_tensor() {
        return Err(p.error_at(tloc, format!("expected a tensor type, but got '{tensor}'")));
    }
    let Some(vrank) = vector.rank().filter(|_| vector.is_vector()) else {
        return Err(p.error_at(vloc, format!("expected a vector type, but got '{vector}'")));
    };
    let rank = tensor.rank().unwrap_or(0);
    let has = |name: &str| state.attrs.iter().any(|e| e.name.as_str() == name);
    if !has("permutation_map") {
        if vrank > rank {
            return Err(p.error_at(
                colon,
                "expected a custom permutation_map when rank(source) != rank(destination)",
            ));
        }
        let map = Attribute::Opaque(minor_identity_map(rank, vrank));
        attrs::set_named(&mut state.props, Ident::new("permutation_map"), map);
    }
    if !has("in_bounds") {
        let flags = Attribute::bool_array(&vec![false; vrank]);
        attrs::set_named(&mut state.props, Ident::new("in_bounds"), flags);
    }
    Ok((tensor, vector))
}

fn set_segments(state: &mut OpState, sizes: &[i64]) {
    attrs::set_named(
        &mut state.props,
        Ident::new("operandSegmentSizes"),
        dense_i32_array(sizes),
    );
}

// ----- vector.transfer_read -----

/// Operands: tensor, indices, padding (groups 0, 1, 2; group 3 is the mask).
fn read_parts(m: &Module, op: OpId) -> Result<Transfer, String> {
    let groups = transfer_operands(m, op, 0, 1, 2)?;
    expect_results(m, op, 1)?;
    let tensor = m.value_type(m.operand(op, 0));
    let vector = m.value_type(m.result(op, 0));
    Transfer::new(tensor, groups[1].clone(), vector, "result #0")
}

pub(super) fn verify_transfer_read(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let t = read_parts(m, op)?;
    let padding = m.value_type(m.operand(op, t.indices.end));
    if Some(padding) != t.tensor.element_type() {
        return Err("requires formal padding and source of the same elemental type".into());
    }
    verify_transfer(m, op, &t)
}

/// `%t[%i], %pad {attrs} : tensor<..>, vector<..>`
pub(super) fn print_transfer_read(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let Ok(t) = read_parts(m, op) else {
        return;
    };
    p.write(" ");
    p.value(m.operand(op, 0));
    p.write("[");
    p.values(t.indices.clone().map(|i| m.operand(op, i)));
    p.write("], ");
    p.value(m.operand(op, t.indices.end));
    print_transfer_tail(p, op, &t, false);
}

pub(super) fn parse_transfer_read(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let tensor = p.parse_operand()?;
    let indices = parse_index_list(p)?;
    p.parse_punct(b',')?;
    let padding = p.parse_operand()?;
    if p.peek() == Token::Punct(b',') {
        return Err(p.error("masked transfers are not supported"));
    }
    let (tensor_ty, vector_ty) = parse_transfer_tail(p, state, false)?;
    let elem = tensor_ty.element_type().unwrap_or(tensor_ty);
    state.operands = p.resolve_indexed_operands(&[(tensor, tensor_ty)], &indices)?;
    state.operands.push(p.resolve_operand(&padding, elem)?);
    set_segments(state, &[1, indices.len() as i64, 1, 0]);
    state.result_types.push(vector_ty);
    Ok(())
}

// ----- vector.transfer_write -----

/// Operands: vector, tensor, indices (groups 0, 1, 2; group 3 is the mask).
fn write_parts(m: &Module, op: OpId) -> Result<Transfer, String> {
    let groups = transfer_operands(m, op, 1, 2, 0)?;
    let tensor = m.value_type(m.operand(op, 1));
    let vector = m.value_type(m.operand(op, 0));
    Transfer::new(tensor, groups[2].clone(), vector, "operand #0")
}

pub(super) fn verify_transfer_write(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let t = write_parts(m, op)?;
    expect_results(m, op, 1)?;
    let r = m.value_type(m.result(op, 0));
    if r != t.tensor {
        return Err(format!(
            "expected type of operand #1 ('{}') to match type of corresponding result ('{r}')",
            t.tensor
        ));
    }
    verify_transfer(m, op, &t)
}

/// `%v, %t[%i] {attrs} : vector<..>, tensor<..>`
pub(super) fn print_transfer_write(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let Ok(t) = write_parts(m, op) else {
        return;
    };
    p.write(" ");
    p.value(m.operand(op, 0));
    p.write(", ");
    p.value(m.operand(op, 1));
    p.write("[");
    p.values(t.indices.clone().map(|i| m.operand(op, i)));
    p.write("]");
    print_transfer_tail(p, op, &t, true);
}

pub(super) fn parse_transfer_write(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let vector = p.parse_operand()?;
    p.parse_punct(b',')?;
    let tensor = p.parse_operand()?;
    let indices = parse_index_list(p)?;
    if p.peek() == Token::Punct(b',') {
        return Err(p.error("masked transfers are not supported"));
    }
    let (tensor_ty, vector_ty) = parse_transfer_tail(p, state, true)?;
    state.operands =
        p.resolve_indexed_operands(&[(vector, vector_ty), (tensor, tensor_ty)], &indices)?;
    set_segments(state, &[1, 1, indices.len() as i64, 0]);
    state.result_types.push(tensor_ty);
    Ok(())
}
