//! MLIR's `affine.apply`, as XLA's IR writes it (its `simplify-affine` tests): one `index`
//! result of a one-result `affine_map<(d..)[s..] -> (e)>` applied to dimension and symbol
//! operands, `affine.apply affine_map<()[s0, s1] -> (s0 * 4 + s1)>()[%a, %b]`. Read,
//! verified and printed as MLIR does; our pipeline writes `xla_gpu.apply_indexing` instead,
//! which carries the operands' ranges, so no pass of ours rewrites `affine.apply`.

use crate::Ident;
use crate::OpState;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::dialects::prelude::*;
use crate::dialects::{parse_operand_group, print_group, split_top_level};
use crate::module::OpId;
use crate::parser::Parser;
use crate::printer::Printer;
use crate::types::Type;
use crate::verifier::VerifyCx;

pub const APPLY: &str = "affine.apply";

const APPLY_OP: OpDef = OpDef::pure(APPLY)
    .inherent(&["map"])
    .syntax(print_apply, parse_apply)
    .verify(verify_apply);

pub fn register(r: &mut Registry) {
    r.register(APPLY_OP);
}

/// The dimensions, symbols and results of `affine_map<(d..)[s..] -> (e..)>` (its text).
fn arity(text: &str) -> Option<(usize, usize, usize)> {
    let body = text.strip_prefix("affine_map<")?.strip_suffix('>')?;
    let (lhs, rhs) = body.split_once("->")?;
    let (dims, rest) = lhs.trim().strip_prefix('(')?.split_once(')')?;
    let symbols = match rest.trim() {
        "" => "",
        s => s.strip_prefix('[')?.strip_suffix(']')?,
    };
    let results = rhs.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some((
        split_top_level(dims).len(),
        split_top_level(symbols).len(),
        split_top_level(results).len(),
    ))
}

/// The map's text, when the op holds an `affine_map<...>`.
fn map_text(m: &crate::Module, op: OpId) -> Option<&str> {
    match m.prop(op, "map")? {
        Attribute::Opaque(text) if text.starts_with("affine_map<") => Some(text),
        _ => None,
    }
}

fn print_apply(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let (Some(map), Some((dims, _, _))) = (m.prop(op, "map"), map_text(m, op).and_then(arity))
    else {
        p.write(" <<invalid affine.apply>>");
        return;
    };
    p.write(" ");
    p.attr(map);
    let operands = m.operand_vec(op);
    let (dims, symbols) = operands.split_at(dims.min(operands.len()));
    print_group(p, "(", dims, ")");
    if !symbols.is_empty() {
        print_group(p, "[", symbols, "]");
    }
    p.attr_dict(op, &["map"]);
}

fn parse_apply(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let map = p.parse_attribute()?;
    if !matches!(&map, Attribute::Opaque(t) if arity(t).is_some()) {
        return Err(p.error_at(loc, "expected an affine_map<...> attribute"));
    }
    let mut operands = parse_operand_group(p, b'(', b')')?;
    if p.peek() == crate::lexer::Token::Punct(b'[') {
        operands.extend(parse_operand_group(p, b'[', b']')?);
    }
    state.operands = p.resolve_indices(&operands)?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    state.result_types = vec![Type::INDEX];
    attrs::set_named(&mut state.props, Ident::new("map"), map);
    Ok(())
}

/// MLIR's rules: a one-result map, one `index` operand per dimension and symbol.
fn verify_apply(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let (dims, symbols, results) = map_text(m, op)
        .and_then(arity)
        .ok_or("requires a 'map' attribute holding an affine_map")?;
    if results != 1 {
        return Err("mapping must produce one value".into());
    }
    let n = m.num_operands(op);
    if n != dims + symbols {
        return Err(format!(
            "operand count and affine map dimension and symbol count must match ({n} operands, \
             {} dimensions and symbols)",
            dims + symbols
        ));
    }
    if let Some(k) = (0..n).find(|&k| !m.value_type(m.operand(op, k)).is_index()) {
        return Err(format!("operand #{k} must be index"));
    }
    if m.num_results(op) != 1 || !m.value_type(m.result(op, 0)).is_index() {
        return Err("result must be one index".into());
    }
    Ok(())
}
