//! `scf.forall` and its terminator `scf.forall.in_parallel`, as XLA's IR writes them: the
//! threads of a block as a parallel loop whose results are tensors written in slices
//! (`tensor.parallel_insert_slice` in the terminator). `lower-xla-shared` turns the loop
//! into the thread ids it stands for; nothing else here computes with it.
//!
//! Properties as in MLIR: `staticLowerBound`, `staticUpperBound`, `staticStep` (with
//! [`DYNAMIC`] where a bound is an operand) and `operandSegmentSizes` (lower bounds, upper
//! bounds, steps, shared outputs); XLA's `mapping`, when present, is kept in the attribute
//! dictionary. The body's arguments are the induction variables, then one per output.

use super::super::{
    dense_i32_array, dense_ints, operand_segments, parse_dynamic_index_list,
    print_dynamic_index_list,
};
use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::module::{OpId, OpState, Value};
use crate::parser::{Argument, Parser, UnresolvedOperand};
use crate::printer::Printer;
use crate::types::{DYNAMIC, Type};
use crate::verifier::VerifyCx;

pub const FORALL: &str = "scf.forall";
pub const IN_PARALLEL: &str = "scf.forall.in_parallel";

/// The properties the custom form spells out (the rest go to the attribute dictionary).
pub(super) const BOUNDS: [&str; 4] = [
    "staticLowerBound",
    "staticUpperBound",
    "staticStep",
    "operandSegmentSizes",
];

/// The static bounds of one kind (`staticUpperBound`...), [`DYNAMIC`] for operands.
pub fn static_bounds(m: &crate::module::Module, op: OpId, prop: &str) -> Vec<i64> {
    dense_ints(m.prop(op, prop)).unwrap_or_default()
}

/// ` (%i, %j) in (8, %n) shared_outs(%o = %init) -> (tensor<..>) {..}`, or
/// ` (%i) = (0) to (8) step (2) ...` when a lower bound is not 0 or a step not 1.
pub(super) fn print_forall(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let (Ok(groups), Some(body)) = (operand_segments(m, op, 4), m.entry_block(m.region(op, 0)))
    else {
        p.write(" <<invalid scf.forall>>");
        return;
    };
    let operands = m.operand_vec(op);
    let args = m.block_args(body).to_vec();
    let [lower, upper, step] = [0, 1, 2].map(|i| static_bounds(m, op, BOUNDS[i]));
    let rank = upper.len();
    p.write(" (");
    p.values(args[..rank.min(args.len())].iter().copied());
    p.write(")");
    let list = |p: &mut Printer<'_>, statics: Vec<i64>, group: usize| {
        p.write("(");
        print_dynamic_index_list(
            p,
            statics,
            DYNAMIC,
            operands[groups[group].clone()].iter().copied(),
        );
        p.write(")");
    };
    if lower.iter().all(|&b| b == 0) && step.iter().all(|&s| s == 1) {
        p.write(" in ");
        list(p, upper, 1);
    } else {
        p.write(" = ");
        list(p, lower, 0);
        p.write(" to ");
        list(p, upper, 1);
        p.write(" step ");
        list(p, step, 2);
    }
    let outputs = &operands[groups[3].clone()];
    if !outputs.is_empty() {
        p.write(" shared_outs(");
        super::super::print_bindings(p, &args[rank.min(args.len())..], outputs);
        p.write(") -> (");
        p.types(outputs.iter().map(|&v| m.value_type(v)));
        p.write(")");
    }
    p.write(" ");
    p.region(m.region(op, 0), false, true);
    p.attr_dict(op, &BOUNDS);
}

pub(super) fn parse_forall(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    p.parse_punct(b'(')?;
    let mut ivs: Vec<Argument<'_>> = Vec::new();
    loop {
        let mut iv = p.parse_argument(false)?;
        iv.ty = Type::INDEX;
        ivs.push(iv);
        if !p.parse_optional_punct(b',') {
            break;
        }
    }
    p.parse_punct(b')')?;
    let rank = ivs.len();
    let (lower, upper, step) = if p.parse_optional_keyword("in") {
        (
            (vec![0; rank], Vec::new()),
            bound_list(p, rank)?,
            (vec![1; rank], Vec::new()),
        )
    } else {
        p.parse_punct(b'=')?;
        let lower = bound_list(p, rank)?;
        p.parse_keyword("to")?;
        let upper = bound_list(p, rank)?;
        p.parse_keyword("step")?;
        (lower, upper, bound_list(p, rank)?)
    };
    let (mut shared, mut inits, mut types) = (Vec::new(), Vec::new(), Vec::new());
    if p.parse_optional_keyword("shared_outs") {
        (shared, inits) = p.parse_assignment_list()?;
        let at = p.loc();
        p.parse_arrow()?;
        types = p.parse_function_result_types()?;
        if types.len() != shared.len() {
            return Err(p.error_at(at, "mismatch in number of shared outputs and result types"));
        }
    }
    for (arg, &t) in shared.iter_mut().zip(&types) {
        arg.ty = t;
    }
    let mut operands = Vec::new();
    for dynamic in [&lower.1, &upper.1, &step.1] {
        operands.extend(p.resolve_indices(dynamic)?);
    }
    operands.extend(p.resolve_operands(&inits, &types, loc)?);
    let segments = [lower.1.len(), upper.1.len(), step.1.len(), inits.len()].map(|n| n as i64);
    let region = p.parse_region(&[ivs, shared].concat())?;
    ensure_in_parallel(p, region, state.loc);
    p.parse_optional_attr_dict(&mut state.attrs)?;
    for (name, value) in [
        (BOUNDS[0], Attribute::dense_i64_array(&lower.0)),
        (BOUNDS[1], Attribute::dense_i64_array(&upper.0)),
        (BOUNDS[2], Attribute::dense_i64_array(&step.0)),
        (BOUNDS[3], dense_i32_array(&segments)),
    ] {
        attrs::set_named(&mut state.props, Ident::new(name), value);
    }
    state.operands = operands;
    state.result_types = types;
    state.regions.push(region);
    Ok(())
}

/// `(8, %n)`: one bound per induction variable, each a constant or an `index` value.
fn bound_list<'a>(
    p: &mut Parser<'a>,
    rank: usize,
) -> DResult<(Vec<i64>, Vec<UnresolvedOperand<'a>>)> {
    let at = p.loc();
    p.parse_punct(b'(')?;
    let narrow = |v| i64::try_from(v).ok();
    let (statics, dynamic) =
        parse_dynamic_index_list(p, b')', DYNAMIC, narrow, "bound out of range")?;
    if statics.len() != rank {
        return Err(p.error_at(
            at,
            format!(
                "expected {rank} bounds (one per induction variable), got {}",
                statics.len()
            ),
        ));
    }
    Ok((statics, dynamic))
}

/// MLIR's implicit terminator: an empty `scf.forall.in_parallel` when the body has none.
fn ensure_in_parallel(p: &mut Parser<'_>, region: crate::module::RegionId, loc: crate::diag::Loc) {
    let m = p.module_mut();
    let block = match m.region_blocks(region).last() {
        Some(&b) => b,
        None => {
            let b = m.create_block(&[]);
            m.append_block(region, b);
            b
        }
    };
    if m.last_op(block).is_some_and(|op| m.is(op, IN_PARALLEL)) {
        return;
    }
    let body = m.create_region();
    let inner = m.create_block(&[]);
    m.append_block(body, inner);
    let state = OpState::new(IN_PARALLEL).loc(loc).region(body);
    m.create_op_at(state, crate::module::InsertPoint::BlockEnd(block));
}

/// MLIR's checks: one bound of each kind per induction variable, positive static steps,
/// index induction variables, one body argument and one result per output, of its type.
pub(super) fn verify_forall(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let groups = operand_segments(m, op, 4)?;
    let [lower, upper, step] = [0, 1, 2].map(|i| static_bounds(m, op, BOUNDS[i]));
    let rank = upper.len();
    if lower.len() != rank || step.len() != rank {
        return Err("requires the same number of lower bounds, upper bounds and steps".into());
    }
    for (i, (statics, group)) in [&lower, &upper, &step].iter().zip(&groups).enumerate() {
        let dynamic = statics.iter().filter(|&&b| b == DYNAMIC).count();
        if dynamic != group.len() {
            return Err(format!(
                "expected {dynamic} dynamic values for {}, got {}",
                BOUNDS[i],
                group.len()
            ));
        }
    }
    if let Some(s) = step.iter().find(|&&s| s != DYNAMIC && s <= 0) {
        return Err(format!("requires steps to be positive, got {s}"));
    }
    let outputs: Vec<Value> = m.operand_vec(op)[groups[3].clone()].to_vec();
    let output_types: Vec<Type> = outputs.iter().map(|&v| m.value_type(v)).collect();
    if m.result_types(op) != output_types {
        return Err("requires one result per shared output, of its type".into());
    }
    let body = m.entry_block(m.region(op, 0)).ok_or("expects a body")?;
    let arg_types: Vec<Type> = m
        .block_args(body)
        .iter()
        .map(|&a| m.value_type(a))
        .collect();
    let expected: Vec<Type> = std::iter::repeat_n(Type::INDEX, rank)
        .chain(output_types)
        .collect();
    if arg_types != expected {
        return Err(format!(
            "expects the body's arguments to be {rank} index values, then one per shared output"
        ));
    }
    if !m.last_op(body).is_some_and(|t| m.is(t, IN_PARALLEL)) {
        return Err(format!("expects the body to end with '{IN_PARALLEL}'"));
    }
    Ok(())
}

/// ` {..}`: the region of slice writes, without a terminator.
pub(super) fn print_in_parallel(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.region(m.region(op, 0), false, true);
    p.attr_dict(op, &[]);
}

pub(super) fn parse_in_parallel(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let region = p.parse_region(&[])?;
    let m = p.module_mut();
    if m.region_blocks(region).is_empty() {
        let b = m.create_block(&[]);
        m.append_block(region, b);
    }
    p.parse_optional_attr_dict(&mut state.attrs)?;
    state.regions.push(region);
    Ok(())
}

/// Only `tensor.parallel_insert_slice` writes in the region.
pub(super) fn verify_in_parallel(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let Some(block) = m.entry_block(m.region(op, 0)) else {
        return Err("expects a region with a block".into());
    };
    for inner in m.block_ops(block) {
        if !m.is(inner, super::super::tensor::PARALLEL_INSERT_SLICE) {
            return Err(format!(
                "expected only '{}' ops, found '{}'",
                super::super::tensor::PARALLEL_INSERT_SLICE,
                m.name(inner)
            ));
        }
    }
    Ok(())
}
