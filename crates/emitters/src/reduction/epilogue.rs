//! Epilogue functions: what a fusion computes after a reduce, as a function of the reduced
//! values (XLA's `EpilogueSpecification` / `EmitEpilogue`).
//!
//! The partitioner gives every reduce hero and every fusion output a function of its own
//! index, and an output's function reads a hero by calling the hero's function, which
//! computes the reduction elementally. The epilogue of an output is a copy of its function
//! that takes the heroes' values instead: `@<output>_epilogue(params, index, hero values)`.
//! It is built from the output's function by inlining every call on the way to a hero and
//! replacing each call of a hero's function by the hero values passed in.
//!
//! That replacement is only right where the hero is read at the index its values belong to:
//! the epilogue's own index (a reduction output), or its leading components (a row
//! normalization reads a row's reduce at the row of the element). A call of a hero at any
//! other index is refused; the analyses only let elementwise ops (whose operands are read at
//! the same index) and row broadcasts between a hero and an output, so this does not happen
//! for the fusions they accept.

use ir::dialects::xla_gpu;
use std::collections::{HashMap, HashSet};

use hlo::{Diagnostic, Span};
use ir::dialects::func as irfunc;
use ir::intern::FxHashMap;
use ir::{Attribute, InsertPoint, Module, OpId, Type, Value};

/// The function named `name`, if the module has one.
fn function(m: &Module, name: &str) -> Option<OpId> {
    m.lookup_symbol(m.top(), name)
}

fn callee(m: &Module, op: OpId) -> Option<String> {
    m.prop(op, "callee")
        .and_then(Attribute::as_symbol)
        .map(str::to_owned)
}

fn calls_in(m: &Module, func: OpId) -> Vec<OpId> {
    m.collect_ops(func)
        .into_iter()
        .filter(|&op| m.is(op, xla_gpu::PURE_CALL))
        .collect()
}

/// The functions that call one of `heroes` (by name), directly or through other functions.
fn reaching(m: &Module, heroes: &HashSet<String>) -> HashSet<String> {
    let functions: Vec<(String, OpId)> = irfunc::functions(m)
        .into_iter()
        .filter_map(|op| Some((m.symbol_name(op)?.to_owned(), op)))
        .collect();
    let mut reach: HashSet<String> = HashSet::new();
    loop {
        let before = reach.len();
        for (name, op) in &functions {
            if reach.contains(name) {
                continue;
            }
            let calls_hero = calls_in(m, *op)
                .into_iter()
                .any(|c| callee(m, c).is_some_and(|n| heroes.contains(&n) || reach.contains(&n)));
            if calls_hero {
                reach.insert(name.clone());
            }
        }
        if reach.len() == before {
            return reach;
        }
    }
}

/// Which hero values a built function takes and where they are read.
pub struct InjectedHeroes<'a> {
    /// Each hero function's name, with the positions of its values among the hero values.
    pub functions: &'a HashMap<String, std::ops::Range<usize>>,
    /// The types of the hero values, in order.
    pub types: &'a [Type],
    /// How many leading components of the function's index a hero is read at (`None`: all
    /// of them).
    pub read_at: Option<usize>,
}

/// Builds `@<name>(params, index, hero values) -> results` from the output function
/// `source` (whose arguments are `num_params` tensors, then its index).
pub fn build(
    m: &mut Module,
    source: &str,
    name: String,
    num_params: usize,
    heroes: &InjectedHeroes<'_>,
    span: Span,
) -> Result<String, Diagnostic> {
    let hero_types = heroes.types;
    let internal = |what: &str| Diagnostic::new(span, format!("internal error: {what}"));
    let src = function(m, source).ok_or_else(|| internal("no function for the output"))?;
    let (inputs, results) =
        irfunc::function_type(m, src).ok_or_else(|| internal("the output is not a function"))?;
    let (inputs, results) = (inputs.to_vec(), results.to_vec());
    let mut all_inputs = inputs.clone();
    all_inputs.extend_from_slice(hero_types);
    let (func, entry) = irfunc::build_func(m, &name, &all_inputs, &results);
    m.set_prop(func, "sym_visibility", Attribute::string("private"));
    if let Some(attrs) = m.prop(src, "arg_attrs").cloned() {
        let mut list = match attrs {
            Attribute::Array(list) => list,
            _ => Vec::new(),
        };
        list.resize(all_inputs.len(), Attribute::dict(Vec::new()));
        m.set_prop(func, "arg_attrs", Attribute::Array(list));
    }
    m.insert_op(func, InsertPoint::After(src));
    let args = m.block_args(entry).to_vec();
    let (own, hero_values) = args.split_at(inputs.len());
    let index = &own[num_params..];
    let call = ir::dialects::xla_gpu::build_pure_call(
        m,
        InsertPoint::BlockEnd(entry),
        source,
        own,
        &results,
    );
    let values: Vec<Value> = m.results(call).collect();
    irfunc::build_return(m, InsertPoint::BlockEnd(entry), &values);

    let hero_names: HashSet<String> = heroes.functions.keys().cloned().collect();
    let read_at = &index[..heroes.read_at.unwrap_or(index.len()).min(index.len())];
    let reach = reaching(m, &hero_names);
    loop {
        let pending = calls_in(m, func).into_iter().find_map(|c| {
            let n = callee(m, c)?;
            (hero_names.contains(&n) || reach.contains(&n)).then_some((c, n))
        });
        let Some((call, name)) = pending else { break };
        let operands = m.operand_vec(call);
        if let Some(range) = heroes.functions.get(&name) {
            if operands[num_params..] != *read_at {
                return Err(Diagnostic::new(
                    span,
                    "unsupported: an epilogue that reads a reduce at another index than its own",
                ));
            }
            let replacement = hero_values[range.clone()].to_vec();
            m.replace_op(call, &replacement);
        } else {
            let callee_op = function(m, &name).ok_or_else(|| internal("a call to nothing"))?;
            let returned = inline_before(m, callee_op, call, &operands);
            m.replace_op(call, &returned);
        }
    }
    Ok(name)
}

/// Clones the body of `func` before `at` with its arguments bound to `args`; returns the
/// cloned values it returns.
fn inline_before(m: &mut Module, func: OpId, at: OpId, args: &[Value]) -> Vec<Value> {
    let region = m.region(func, 0);
    let entry = m.entry_block(region).expect("a function body");
    let mut mapping: FxHashMap<Value, Value> = FxHashMap::default();
    for (&formal, &actual) in m.block_args(entry).to_vec().iter().zip(args) {
        mapping.insert(formal, actual);
    }
    let ops: Vec<OpId> = m.block_ops(entry).collect();
    let mut returned = Vec::new();
    for op in ops {
        if m.is(op, irfunc::RETURN) {
            returned = m
                .operands(op)
                .map(|v| *mapping.get(&v).unwrap_or(&v))
                .collect();
            continue;
        }
        let clone = m.clone_op(op, &mut mapping);
        m.insert_op(clone, InsertPoint::Before(at));
    }
    returned
}
