//! `func.func`, `func.return`, `func.call`.

use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::lexer::Token;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::parser::{Argument, Parser};
use crate::printer::Printer;
use crate::registry::{OpDef, Registry};
use crate::traits::Traits;
use crate::types::Type;
use crate::verifier::VerifyCx;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const CALL: &str = "func.call";
pub const FUNC: &str = "func.func";
pub const RETURN: &str = "func.return";

pub fn register(r: &mut Registry) {
    r.register(
        OpDef::new(FUNC)
            .traits(Traits::ISOLATED_FROM_ABOVE.union(Traits::SYMBOL))
            .inherent(&[
                "sym_name",
                "function_type",
                "sym_visibility",
                "arg_attrs",
                "res_attrs",
                "no_inline",
            ])
            .regions(1)
            .default_dialect("func")
            .syntax(print_func, parse_func)
            .verify(verify_func),
    );
    r.register(
        super::RETURN_LIKE
            .named(RETURN)
            .parents(&[FUNC])
            .verify(verify_return),
    );
    r.register(
        OpDef::new(CALL)
            .inherent(&["callee", "arg_attrs", "res_attrs", "no_inline"])
            .syntax(print_call, parse_call)
            .verify(verify_call),
    );
}

/// The module's functions: its top-level `func.func` ops, in order.
pub fn functions(m: &Module) -> Vec<OpId> {
    m.block_ops(m.body()).filter(|&op| m.is(op, FUNC)).collect()
}

/// The signature of a `func.func`.
pub fn function_type(m: &Module, op: OpId) -> Option<(&'static [Type], &'static [Type])> {
    m.prop(op, "function_type")?.as_type()?.function_parts()
}

/// Creates `func.func @name(args) -> results` with an entry block (not inserted), returning
/// the op and its entry block.
pub fn build_func(
    m: &mut Module,
    name: &str,
    inputs: &[Type],
    results: &[Type],
) -> (OpId, crate::BlockId) {
    let (region, block) = m.create_region_with_block(inputs);
    let op = m.create_op(
        OpState::new(FUNC)
            .prop("sym_name", Attribute::string(name))
            .prop(
                "function_type",
                Attribute::Type(Type::function(inputs, results)),
            )
            .region(region),
    );
    (op, block)
}

/// Creates `func.return %values` at `at`.
pub fn build_return(m: &mut Module, at: InsertPoint, values: &[Value]) -> OpId {
    m.create_op_at(OpState::new(RETURN).operands(values), at)
}

/// Creates `func.call @callee(args)` at `at`.
pub fn build_call(
    m: &mut Module,
    at: InsertPoint,
    callee: &str,
    args: &[Value],
    results: &[Type],
) -> OpId {
    m.create_op_at(super::call_state(CALL, callee, args, results), at)
}

fn print_func(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    if let Some(vis) = m.prop(op, "sym_visibility").and_then(Attribute::as_str) {
        p.write(vis);
        p.write(" ");
    }
    p.symbol(m.symbol_name(op).unwrap_or(""));
    let (inputs, results) = function_type(m, op).unwrap_or((&[], &[]));
    let body = m.region(op, 0);
    let entry = m.entry_block(body);
    p.write("(");
    p.comma_separated(inputs.iter().enumerate(), |p, (i, &t)| {
        match entry {
            Some(b) if i < m.block_args(b).len() => p.arg_decl(m.block_arg(b, i)),
            _ => p.ty(t),
        }
        super::print_attr_list(p, op, "arg_attrs", i);
    });
    p.write(")");
    if !results.is_empty() {
        p.write(" -> ");
        let any_attrs =
            (0..results.len()).any(|i| !super::attr_list(m, op, "res_attrs", i).is_empty());
        let parens = any_attrs || results.len() > 1 || results[0].function_parts().is_some();
        if parens {
            p.write("(");
        }
        p.comma_separated(results.iter().enumerate(), |p, (i, &t)| {
            p.ty(t);
            super::print_attr_list(p, op, "res_attrs", i);
        });
        if parens {
            p.write(")");
        }
    }
    p.attr_dict_with_keyword(
        op,
        &[
            "sym_name",
            "function_type",
            "sym_visibility",
            "arg_attrs",
            "res_attrs",
        ],
    );
    if entry.is_some() {
        p.write(" ");
        p.region(body, false, true);
    }
}

fn parse_func(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    if let Some(vis) = ["private", "public", "nested"]
        .into_iter()
        .find(|kw| p.peek() == Token::Bare(kw))
    {
        p.parse_keyword(vis)?;
        attrs::set_named(
            &mut state.props,
            Ident::new("sym_visibility"),
            Attribute::string(vis),
        );
    }
    let name = p.parse_symbol_name()?;
    attrs::set_named(
        &mut state.props,
        Ident::new("sym_name"),
        Attribute::String(name),
    );
    p.parse_punct(b'(')?;
    let mut args: Vec<Argument<'_>> = Vec::new();
    let mut named = None;
    if !p.parse_optional_punct(b')') {
        loop {
            args.push(p.parse_signature_argument(&mut named)?);
            if !p.parse_optional_punct(b',') {
                break;
            }
        }
        p.parse_punct(b')')?;
    }
    let mut results = Vec::new();
    let mut res_attrs = Vec::new();
    if p.parse_optional_arrow() {
        if p.parse_optional_punct(b'(') {
            if !p.parse_optional_punct(b')') {
                loop {
                    results.push(p.parse_type()?);
                    let mut a = Vec::new();
                    p.parse_optional_attr_dict(&mut a)?;
                    res_attrs.push(a);
                    if !p.parse_optional_punct(b',') {
                        break;
                    }
                }
                p.parse_punct(b')')?;
            }
        } else {
            results.push(p.parse_type()?);
            res_attrs.push(Vec::new());
        }
    }
    p.parse_optional_attr_dict_with_keyword(&mut state.attrs)?;
    let inputs: Vec<Type> = args.iter().map(|a| a.ty).collect();
    attrs::set_named(
        &mut state.props,
        Ident::new("function_type"),
        Attribute::Type(Type::function(&inputs, &results)),
    );
    if let Some(a) = super::attr_lists_prop(args.iter().map(|a| a.attrs.clone()).collect()) {
        attrs::set_named(&mut state.props, Ident::new("arg_attrs"), a);
    }
    if let Some(a) = super::attr_lists_prop(res_attrs) {
        attrs::set_named(&mut state.props, Ident::new("res_attrs"), a);
    }
    let region = if p.peek() == Token::Punct(b'{') {
        if named == Some(false) {
            return Err(p.error("expected named arguments for a function with a body"));
        }
        let loc = p.loc();
        let region = p.parse_region(&args)?;
        if p.module().region_blocks(region).is_empty() {
            return Err(p.error_at(loc, "expected non-empty function body"));
        }
        region
    } else {
        // A declaration; its arguments may be named, as MLIR accepts (and prints unnamed).
        p.module_mut().create_region()
    };
    state.regions.push(region);
    Ok(())
}

fn verify_func(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    if m.symbol_name(op).is_none() {
        return Err("requires string attribute 'sym_name'".into());
    }
    let Some((inputs, _)) = function_type(m, op) else {
        return Err("requires attribute 'function_type' of function type".into());
    };
    match m.entry_block(m.region(op, 0)) {
        Some(entry) => super::verify_entry_block_args(m, entry, inputs),
        None => Ok(()),
    }
}

fn verify_return(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let Some(func) = m.parent_op(op) else {
        return Ok(());
    };
    let Some((_, results)) = function_type(m, func) else {
        return Ok(());
    };
    let name = m.symbol_name(func).unwrap_or("");
    if m.num_operands(op) != results.len() {
        return Err(format!(
            "has {} operands, but enclosing function (@{name}) returns {}",
            m.num_operands(op),
            results.len()
        ));
    }
    if let Some((i, vt, t)) = super::first_type_mismatch(m, m.operands(op), results) {
        return Err(format!(
            "type of return operand {i} ('{vt}') doesn't match function result type ('{t}') in function @{name}"
        ));
    }
    Ok(())
}

fn print_call(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    match m.prop(op, "callee") {
        Some(callee) => p.attr(callee),
        None => p.write("@<<missing callee>>"),
    }
    p.write("(");
    p.values(m.operands(op));
    p.write(")");
    p.attr_dict(op, &["callee"]);
    p.write(" : (");
    p.types(m.operand_types(op));
    p.write(") -> ");
    p.result_types(&m.result_types(op));
}

fn parse_call(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let callee = p.parse_attribute()?;
    if !matches!(callee, Attribute::Symbol(_)) {
        return Err(p.error("expected symbol reference for the callee"));
    }
    attrs::set_named(&mut state.props, Ident::new("callee"), callee);
    p.parse_punct(b'(')?;
    let loc = p.loc();
    let operands = p.parse_operand_list()?;
    p.parse_punct(b')')?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    p.parse_punct(b':')?;
    let (inputs, results) = p.parse_function_type_lists()?;
    state.operands = p.resolve_operands(&operands, &inputs, loc)?;
    state.result_types = results;
    Ok(())
}

fn verify_call(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let Some(callee) = m.prop(op, "callee").and_then(Attribute::as_symbol) else {
        return Err("requires a 'callee' symbol reference attribute".into());
    };
    let func = cx.lookup_symbol(op, callee).filter(|&f| m.is(f, FUNC));
    let Some(func) = func else {
        return Err(format!("'{callee}' does not reference a valid function"));
    };
    let Some((inputs, results)) = function_type(m, func) else {
        return Err(format!("'{callee}' does not reference a valid function"));
    };
    if m.num_operands(op) != inputs.len() {
        return Err("incorrect number of operands for callee".into());
    }
    if let Some((i, vt, t)) = super::first_type_mismatch(m, m.operands(op), inputs) {
        return Err(format!(
            "operand type mismatch: expected operand type '{t}', but provided '{vt}' for operand number {i}"
        ));
    }
    if m.num_results(op) != results.len() {
        return Err("incorrect number of results for callee".into());
    }
    if let Some((i, vt, t)) = super::first_type_mismatch(m, m.results(op), results) {
        return Err(format!(
            "result type mismatch at index {i}: expected '{t}', but found '{vt}'"
        ));
    }
    Ok(())
}
