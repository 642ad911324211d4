//! The `scf` dialect: `scf.for`, `scf.if`, `scf.index_switch`, `scf.while`, `scf.condition`,
//! `scf.yield`, and (`forall.rs`) `scf.forall` with `scf.forall.in_parallel`.

mod forall;

use super::expect_operands;
use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::lexer::Token;
use crate::module::{BlockId, InsertPoint, Module, OpId, OpState, Value};
use crate::parser::{Argument, Parser};
use crate::printer::Printer;
use crate::registry::{OpDef, Registry};
use crate::traits::Traits;
use crate::types::Type;
use crate::verifier::VerifyCx;
pub use forall::{FORALL, IN_PARALLEL, static_bounds};

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const CONDITION: &str = "scf.condition";
pub const FOR: &str = "scf.for";
pub const IF: &str = "scf.if";
pub const INDEX_SWITCH: &str = "scf.index_switch";
pub const WHILE: &str = "scf.while";
pub const YIELD: &str = "scf.yield";

pub fn register(r: &mut Registry) {
    r.register(
        OpDef::new(FOR)
            .traits(Traits::SINGLE_BLOCK)
            .inherent(&["unsignedCmp"])
            .regions(1)
            .syntax(print_for, parse_for)
            .verify(verify_for),
    );
    r.register(
        OpDef::new(IF)
            .traits(Traits::SINGLE_BLOCK)
            .regions(2)
            .syntax(print_if, parse_if)
            .verify(verify_if),
    );
    r.register(
        OpDef::new(INDEX_SWITCH)
            .traits(Traits::SINGLE_BLOCK)
            .inherent(&["cases"])
            .regions(1)
            .variadic_regions()
            .syntax(print_index_switch, parse_index_switch)
            .verify(verify_index_switch),
    );
    r.register(
        OpDef::new(FORALL)
            .traits(Traits::SINGLE_BLOCK)
            .inherent(&forall::BOUNDS)
            .regions(1)
            .syntax(forall::print_forall, forall::parse_forall)
            .verify(forall::verify_forall),
    );
    r.register(
        OpDef::new(IN_PARALLEL)
            .traits(
                Traits::TERMINATOR
                    .union(Traits::NO_TERMINATOR)
                    .union(Traits::SINGLE_BLOCK),
            )
            .parents(&[FORALL])
            .regions(1)
            .syntax(forall::print_in_parallel, forall::parse_in_parallel)
            .verify(forall::verify_in_parallel),
    );
    r.register(
        OpDef::new(WHILE)
            .regions(2)
            .syntax(print_while, parse_while)
            .verify(verify_while),
    );
    r.register(
        OpDef::new(CONDITION)
            .traits(Traits::TERMINATOR.union(Traits::RETURN_LIKE))
            .parents(&[WHILE])
            .syntax(print_condition, parse_condition)
            .verify(verify_condition),
    );
    r.register(
        super::RETURN_LIKE
            .named(YIELD)
            .parents(&[FOR, IF, WHILE, "scf.execute_region", INDEX_SWITCH])
            .verify(verify_yield),
    );
}

// ----- builders -----

/// Creates `scf.for %iv = lb to ub step step iter_args(inits)` with an empty body (no
/// terminator yet); returns the op and its body block (arguments: iv, then iter args).
pub fn build_for(
    m: &mut Module,
    at: InsertPoint,
    lb: Value,
    ub: Value,
    step: Value,
    inits: &[Value],
) -> (OpId, BlockId) {
    let iv_ty = m.value_type(lb);
    let iter_types: Vec<Type> = inits.iter().map(|&v| m.value_type(v)).collect();
    let mut arg_types = vec![iv_ty];
    arg_types.extend(&iter_types);
    let (region, body) = m.create_region_with_block(&arg_types);
    let mut operands = vec![lb, ub, step];
    operands.extend_from_slice(inits);
    let op = m.create_op_at(
        OpState::new(FOR)
            .operands(&operands)
            .results(&iter_types)
            .region(region),
        at,
    );
    (op, body)
}

/// Creates `scf.if %cond -> (results)` with a then block and, if `with_else`, an else block
/// (no terminators yet); returns the op and the blocks.
pub fn build_if(
    m: &mut Module,
    at: InsertPoint,
    cond: Value,
    results: &[Type],
    with_else: bool,
) -> (OpId, BlockId, Option<BlockId>) {
    let (then_region, then_block) = m.create_region_with_block(&[]);
    let else_region = m.create_region();
    let else_block = with_else.then(|| {
        let b = m.create_block(&[]);
        m.append_block(else_region, b);
        b
    });
    let op = m.create_op_at(
        OpState::new(IF)
            .operands(&[cond])
            .results(results)
            .region(then_region)
            .region(else_region),
        at,
    );
    (op, then_block, else_block)
}

/// Creates `scf.while (inits) : (types) -> results` with an empty "before" block (arguments:
/// one per init) and an empty "after" block (arguments: one per result), no terminators yet;
/// returns the op and both blocks.
pub fn build_while(
    m: &mut Module,
    at: InsertPoint,
    inits: &[Value],
    results: &[Type],
) -> (OpId, BlockId, BlockId) {
    let init_types: Vec<Type> = inits.iter().map(|&v| m.value_type(v)).collect();
    let (before_region, before) = m.create_region_with_block(&init_types);
    let (after_region, after) = m.create_region_with_block(results);
    let op = m.create_op_at(
        OpState::new(WHILE)
            .operands(inits)
            .results(results)
            .region(before_region)
            .region(after_region),
        at,
    );
    (op, before, after)
}

/// Appends `scf.condition(%cond) %args` to `block` (the end of a while's "before" region).
pub fn build_condition(m: &mut Module, block: BlockId, cond: Value, args: &[Value]) -> OpId {
    let mut operands = vec![cond];
    operands.extend_from_slice(args);
    m.create_op_at(
        OpState::new(CONDITION).operands(&operands),
        InsertPoint::BlockEnd(block),
    )
}

/// Appends `scf.yield %values` to `block`.
pub fn build_yield(m: &mut Module, block: BlockId, values: &[Value]) -> OpId {
    m.create_op_at(
        OpState::new(YIELD).operands(values),
        InsertPoint::BlockEnd(block),
    )
}

// ----- scf.for -----

fn print_for(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let unsigned = m.prop(op, "unsignedCmp").is_some();
    if unsigned {
        p.write(" unsigned");
    }
    let body = m.region(op, 0);
    let Some(block) = m.entry_block(body).filter(|&b| !m.block_args(b).is_empty()) else {
        p.write(" <<invalid scf.for: no induction variable>>");
        return;
    };
    let operands = m.operand_vec(op);
    if operands.len() < 3 {
        p.write(" <<invalid scf.for: missing bounds>>");
        return;
    }
    let args = m.block_args(block);
    p.write(" ");
    p.value(args[0]);
    p.write(" = ");
    p.value(operands[0]);
    p.write(" to ");
    p.value(operands[1]);
    p.write(" step ");
    p.value(operands[2]);
    let inits = &operands[3..];
    if !inits.is_empty() {
        p.write(" iter_args(");
        super::print_bindings(p, &args[1..], inits);
        p.write(") -> (");
        p.types(inits.iter().map(|&v| m.value_type(v)));
        p.write(")");
    }
    p.write(" ");
    let iv_ty = m.value_type(args[0]);
    if !iv_ty.is_index() {
        p.write(" : ");
        p.ty(iv_ty);
        p.write(" ");
    }
    p.region(body, false, !inits.is_empty());
    p.attr_dict(op, &["unsignedCmp"]);
}

fn parse_for(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    if p.parse_optional_keyword("unsigned") {
        attrs::set_named(&mut state.props, Ident::new("unsignedCmp"), Attribute::Unit);
    }
    let loc = p.loc();
    let mut iv = p.parse_argument(false)?;
    p.parse_punct(b'=')?;
    let lb = p.parse_operand()?;
    p.parse_keyword("to")?;
    let ub = p.parse_operand()?;
    p.parse_keyword("step")?;
    let step = p.parse_operand()?;
    let mut iter_args: Vec<Argument<'_>> = Vec::new();
    let mut inits = Vec::new();
    let mut iter_types = Vec::new();
    if p.parse_optional_keyword("iter_args") {
        (iter_args, inits) = p.parse_assignment_list()?;
        let tloc = p.loc();
        p.parse_arrow()?;
        iter_types = p.parse_function_result_types()?;
        if iter_types.len() != iter_args.len() {
            return Err(p.error_at(
                tloc,
                "mismatch in number of loop-carried values and defined values",
            ));
        }
    }
    iv.ty = if p.parse_optional_punct(b':') {
        p.parse_type()?
    } else {
        Type::INDEX
    };
    for (a, &t) in iter_args.iter_mut().zip(&iter_types) {
        a.ty = t;
    }
    let mut operands = p.resolve_operands(&[lb, ub, step], &[iv.ty; 3], loc)?;
    operands.extend(p.resolve_operands(&inits, &iter_types, loc)?);
    let mut args = vec![iv];
    args.extend(iter_args);
    let region = p.parse_region(&args)?;
    p.ensure_terminator(region, YIELD, state.loc);
    p.parse_optional_attr_dict(&mut state.attrs)?;
    state.operands = operands;
    state.result_types = iter_types;
    state.regions.push(region);
    Ok(())
}

fn verify_for(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let n = m.num_operands(op);
    if n < 3 {
        return Err(format!("expected at least 3 operands, but found {n}"));
    }
    let bound = m.value_type(m.operand(op, 0));
    if !bound.is_signless_int_or_index() {
        return Err(format!(
            "operand #0 must be signless integer or index, but got '{bound}'"
        ));
    }
    for i in 1..3 {
        if m.value_type(m.operand(op, i)) != bound {
            return Err("requires the same type for the lower bound, upper bound and step".into());
        }
    }
    let inits = n - 3;
    if m.num_results(op) != inits {
        return Err("mismatch in number of loop-carried values and defined values".into());
    }
    let Some(body) = m.entry_block(m.region(op, 0)) else {
        return Err("expects a non-empty body region".into());
    };
    let args = m.block_args(body);
    if args.len() != inits + 1 {
        return Err(format!(
            "expects the body to have {} arguments (the induction variable and {inits} iter_args), but it has {}",
            inits + 1,
            args.len()
        ));
    }
    if m.value_type(args[0]) != bound {
        return Err("expected induction variable to be same type as bounds and step".into());
    }
    for i in 0..inits {
        let rt = m.value_type(m.result(op, i));
        if m.value_type(m.operand(op, 3 + i)) != rt {
            return Err(format!(
                "types mismatch between {i}th iter operand and defined value"
            ));
        }
        if m.value_type(args[i + 1]) != rt {
            return Err(format!(
                "types mismatch between {i}th iter region arg and defined value"
            ));
        }
    }
    Ok(())
}

// ----- scf.if -----

fn print_if(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.values(m.operands(op));
    let results = m.result_types(op);
    if !results.is_empty() {
        p.write(" -> (");
        p.types(results.iter().copied());
        p.write(")");
    }
    let print_terminators = !results.is_empty();
    p.write(" ");
    p.region(m.region(op, 0), false, print_terminators);
    if let Some(&else_region) = m.regions(op).get(1)
        && !m.region_blocks(else_region).is_empty()
    {
        p.write(" else ");
        p.region(else_region, false, print_terminators);
    }
    p.attr_dict(op, &[]);
}

fn parse_if(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let cond = p.parse_operand()?;
    state.operands = p.resolve_operands(&[cond], &[Type::I1], loc)?;
    state.result_types = p.parse_optional_arrow_type_list()?;
    let then_region = p.parse_region(&[])?;
    p.ensure_terminator(then_region, YIELD, state.loc);
    let else_region = if p.parse_optional_keyword("else") {
        let r = p.parse_region(&[])?;
        p.ensure_terminator(r, YIELD, state.loc);
        r
    } else {
        p.module_mut().create_region()
    };
    p.parse_optional_attr_dict(&mut state.attrs)?;
    state.regions = vec![then_region, else_region];
    Ok(())
}

fn verify_if(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 1)?;
    let cond = m.value_type(m.operand(op, 0));
    if cond != Type::I1 {
        return Err(format!(
            "operand #0 must be 1-bit signless integer, but got '{cond}'"
        ));
    }
    if m.region_blocks(m.region(op, 0)).is_empty() {
        return Err("expects a non-empty then region".into());
    }
    if m.num_results(op) > 0 && m.region_blocks(m.region(op, 1)).is_empty() {
        return Err("must have an else block if defining values".into());
    }
    Ok(())
}

// ----- scf.index_switch -----

/// ` %arg -> types` then `case N {..}` per case and `default {..}`, each on its own line, as
/// MLIR prints them. Region 0 is the default, regions 1.. the cases in `cases` order.
fn print_index_switch(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.values(m.operands(op));
    p.attr_dict(op, &["cases"]);
    let results = m.result_types(op);
    if !results.is_empty() {
        p.write(" -> ");
        p.types(results.iter().copied());
    }
    let cases = super::dense_ints(m.prop(op, "cases")).unwrap_or_default();
    let regions = m.regions(op);
    for (value, &region) in cases.iter().zip(regions.iter().skip(1)) {
        p.line_break();
        p.write(&format!("case {value} "));
        p.region(region, false, true);
    }
    if let Some(&default) = regions.first() {
        p.line_break();
        p.write("default ");
        p.region(default, false, true);
    }
}

fn parse_index_switch(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let arg = p.parse_operand()?;
    state.operands = p.resolve_operands(&[arg], &[Type::INDEX], loc)?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    if p.parse_optional_arrow() {
        state.result_types = p.parse_type_list()?;
    }
    let (mut cases, mut case_regions) = (Vec::new(), Vec::new());
    while p.parse_optional_keyword("case") {
        let value_loc = p.loc();
        let value = p.parse_integer()?;
        let value = i64::try_from(value)
            .map_err(|_| p.error_at(value_loc, "case value does not fit in 64 bits"))?;
        cases.push(value);
        let region = p.parse_region(&[])?;
        p.ensure_terminator(region, YIELD, state.loc);
        case_regions.push(region);
    }
    p.parse_keyword("default")?;
    let default = p.parse_region(&[])?;
    p.ensure_terminator(default, YIELD, state.loc);
    state.attrs.push(crate::NamedAttr {
        name: Ident::new("cases"),
        value: Attribute::dense_i64_array(&cases),
    });
    state.regions = std::iter::once(default).chain(case_regions).collect();
    Ok(())
}

/// MLIR's checks: an index operand, one case region per case value, distinct values.
fn verify_index_switch(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 1)?;
    let arg = m.value_type(m.operand(op, 0));
    if arg != Type::INDEX {
        return Err(format!("operand #0 must be index, but got '{arg}'"));
    }
    let Some(cases) = super::dense_ints(m.prop(op, "cases")) else {
        return Err("requires attribute 'cases'".into());
    };
    let case_regions = m.regions(op).len().saturating_sub(1);
    if cases.len() != case_regions {
        return Err(format!(
            "has {case_regions} case regions but {} case values",
            cases.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = cases.iter().find(|v| !seen.insert(**v)) {
        return Err(format!("has duplicate case value: {dup}"));
    }
    for &r in m.regions(op) {
        if m.region_blocks(r).is_empty() {
            return Err("expects every region to have a block".into());
        }
    }
    Ok(())
}

// ----- scf.while / scf.condition -----

/// ` (%arg = %init, ..) : (types) -> results {before} do {after}`, as MLIR prints it: the
/// "before" block's arguments in the assignment list, the "after" block's on its label.
fn print_while(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let (Some(before), Some(_)) = (
        m.entry_block(m.region(op, 0)),
        m.regions(op).get(1).and_then(|&r| m.entry_block(r)),
    ) else {
        p.write(" <<invalid scf.while>>");
        return;
    };
    let inits = m.operand_vec(op);
    let args = m.block_args(before);
    if !inits.is_empty() {
        p.write(" (");
        super::print_bindings(p, args, &inits);
        p.write(")");
    }
    p.write(" : (");
    p.types(inits.iter().map(|&v| m.value_type(v)));
    p.write(") -> ");
    p.result_types(&m.result_types(op));
    p.write(" ");
    p.region(m.region(op, 0), false, true);
    p.write(" do ");
    p.region(m.region(op, 1), true, true);
    p.attr_dict_with_keyword(op, &[]);
}

fn parse_while(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let (mut args, inits) = if p.peek() == Token::Punct(b'(') {
        p.parse_assignment_list()?
    } else {
        (Vec::new(), Vec::new())
    };
    p.parse_punct(b':')?;
    let tloc = p.loc();
    let (init_types, results) = p.parse_function_type_lists()?;
    if init_types.len() != inits.len() {
        return Err(p.error_at(
            tloc,
            format!(
                "expected as many input types as operands (expected {} got {})",
                inits.len(),
                init_types.len()
            ),
        ));
    }
    for (a, &t) in args.iter_mut().zip(&init_types) {
        a.ty = t;
    }
    state.operands = p.resolve_operands(&inits, &init_types, loc)?;
    let before = p.parse_region(&args)?;
    p.parse_keyword("do")?;
    let after = p.parse_region(&[])?;
    p.parse_optional_attr_dict_with_keyword(&mut state.attrs)?;
    state.result_types = results;
    state.regions = vec![before, after];
    Ok(())
}

/// MLIR's checks: the "before" region takes the inits and ends in `scf.condition` whose
/// values are the results and the "after" region's arguments; `scf.yield` there gives the
/// next inits (checked by the yield).
fn verify_while(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let (Some(before), Some(after)) = (
        m.entry_block(m.region(op, 0)),
        m.regions(op).get(1).and_then(|&r| m.entry_block(r)),
    ) else {
        return Err("expects two non-empty regions".into());
    };
    let inits = m.operand_types(op);
    if m.block_arg_types(before) != inits {
        return Err("expects the 'before' region arguments to match the operand types".into());
    }
    let Some(condition) = m.block_ops(before).last().filter(|&t| m.is(t, CONDITION)) else {
        return Err("expects the 'before' region to terminate with 'scf.condition'".into());
    };
    let forwarded: Vec<Type> = m.operand_types(condition).into_iter().skip(1).collect();
    if forwarded != m.result_types(op) {
        return Err("expects the 'scf.condition' arguments to match the result types".into());
    }
    if m.block_arg_types(after) != forwarded {
        return Err(
            "expects the 'after' region arguments to match the 'scf.condition' arguments".into(),
        );
    }
    Ok(())
}

/// `(%cond) %args : types`.
fn print_condition(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let operands = m.operand_vec(op);
    let Some((&cond, args)) = operands.split_first() else {
        p.write(" <<invalid scf.condition>>");
        return;
    };
    p.write("(");
    p.value(cond);
    p.write(")");
    p.attr_dict(op, &[]);
    if !args.is_empty() {
        p.write(" ");
        p.values(args.iter().copied());
        p.write(" : ");
        p.types(args.iter().map(|&v| m.value_type(v)));
    }
}

fn parse_condition(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    p.parse_punct(b'(')?;
    let cond = p.parse_operand()?;
    p.parse_punct(b')')?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let args = p.parse_operand_list()?;
    let types = if args.is_empty() {
        Vec::new()
    } else {
        p.parse_colon_type_list()?
    };
    let mut operands = p.resolve_operands(&[cond], &[Type::I1], loc)?;
    operands.extend(p.resolve_operands(&args, &types, loc)?);
    state.operands = operands;
    Ok(())
}

fn verify_condition(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    match m.operand_types(op).first() {
        Some(&t) if t == Type::I1 => Ok(()),
        Some(t) => Err(format!(
            "operand #0 must be 1-bit signless integer, but got '{t}'"
        )),
        None => Err("expected a condition operand".into()),
    }
}

// ----- scf.yield -----

fn verify_yield(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    match m.parent_op(op) {
        // The "after" region yields the next iteration's inits.
        Some(parent) if m.is(parent, WHILE) => {
            let expected = m.operand_types(parent);
            if m.operand_types(op) != expected {
                return Err("expects the operands to match the 'scf.while' operand types".into());
            }
            Ok(())
        }
        Some(parent) if m.is(parent, FOR) || m.is(parent, IF) || m.is(parent, INDEX_SWITCH) => {
            super::yields_parent_results(m, op, parent)
        }
        _ => Ok(()),
    }
}
