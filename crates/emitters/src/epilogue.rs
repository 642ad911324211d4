//! Epilogues of heroes that emitters compute themselves (a transpose through shared memory,
//! the operands of a concatenate): a function computing a root from the hero's element at
//! the root's index, and the clean-up of the functions the kernel no longer calls.

use ir::dialects::arith;
use ir::dialects::xla_gpu;
use std::collections::HashSet;

use hlo::{Diagnostic, InstrId};
use ir::dialects::func as irfunc;
use ir::{Attribute, Builder, InsertPoint, Module, OpId, Type};

use crate::elemental::{ElementalEmitter, FusionContext, Scope, range_attr};
use crate::types::parameter_types;
use crate::types::{element_type, leaf_element_types};
use crate::unsupported;

/// `@name(params, root index, hero element) -> root's elements`: the ops between `hero`
/// and `root`, with the hero's element passed in. Emitted as the root's subgraph, whose
/// calls of the hero's function then take the argument instead.
pub(crate) fn emit_hero_epilogue(
    cx: &FusionContext<'_>,
    m: &mut ir::Module,
    root: InstrId,
    hero: InstrId,
    name: &str,
) -> Result<(), Diagnostic> {
    let c = cx.fusion;
    let (Some(root_sg), Some(hero_sg)) = (
        cx.partition.subgraph_rooted_at(root),
        cx.partition.subgraph_rooted_at(hero),
    ) else {
        return Err(unsupported(c.span, "an epilogue without a subgraph"));
    };
    let root_instr = c.instruction(root);
    let root_shape = root_instr
        .shape
        .as_array()
        .ok_or_else(|| unsupported(c.span, "a tuple-shaped root"))?;
    let hero_type = element_type(
        c.instruction(hero)
            .shape
            .as_array()
            .ok_or_else(|| unsupported(c.span, "a tuple-shaped hero"))?
            .element_type,
    )
    .map_err(|e| unsupported(c.span, e))?;
    let mut inputs = parameter_types(c)?;
    let num_params = inputs.len();
    inputs.extend(root_shape.dims.iter().map(|_| Type::INDEX));
    inputs.push(hero_type);
    let results = leaf_element_types(&root_instr.shape).map_err(|e| unsupported(c.span, e))?;
    let (func, entry) = irfunc::build_func(m, name, &inputs, &results);
    m.set_prop(func, "sym_visibility", Attribute::string("private"));
    let mut arg_attrs = vec![Attribute::dict(Vec::new()); num_params];
    arg_attrs.extend(root_shape.dims.iter().map(|&d| range_attr(0, d - 1)));
    arg_attrs.push(Attribute::dict(Vec::new()));
    m.set_prop(func, "arg_attrs", Attribute::Array(arg_attrs));
    let body = m.body();
    m.insert_op(func, InsertPoint::BlockEnd(body));
    let args = m.block_args(entry).to_vec();
    let params = &args[..num_params];
    let indices = &args[num_params..num_params + root_shape.rank()];
    let hero_value = args[args.len() - 1];
    let b = Builder::at_end(m, entry);
    let mut e = ElementalEmitter::new(cx, b, Scope::Subgraph(root_sg), params.to_vec());
    let values = e.emit(root, indices)?;
    e.b.ret(&values);
    // Inject the hero's element where the root's subgraph would compute it again.
    let hero_fn = &cx.subgraph_functions[hero_sg];
    let calls: Vec<OpId> = m
        .collect_ops(func)
        .into_iter()
        .filter(|&op| {
            m.is(op, xla_gpu::PURE_CALL)
                && m.prop(op, "callee").and_then(Attribute::as_symbol) == Some(hero_fn.as_str())
        })
        .collect();
    for call in calls {
        let result = m.result(call, 0);
        m.replace_all_uses(result, hero_value);
        erase_with_dead_operands(m, call);
    }
    Ok(())
}

/// Erases `op` and then every op that only fed it and has no other effect.
fn erase_with_dead_operands(m: &mut ir::Module, op: OpId) {
    let operands = m.operand_vec(op);
    m.erase_op(op);
    for v in operands {
        if let Some(def) = m.defining_op(v)
            && m.is_alive(def)
            && !m.has_uses(v)
            && m.results(def).all(|r| !m.has_uses(r))
            && (m.is(def, xla_gpu::APPLY_INDEXING) || m.is(def, arith::CONSTANT))
        {
            erase_with_dead_operands(m, def);
        }
    }
}

/// Erases the private functions nothing reachable from `@main` calls (the outputs'
/// original functions once their epilogues replaced them), so the emitted module shows
/// only what runs.
pub fn erase_unused_functions(m: &mut Module) {
    let functions = irfunc::functions(m);
    let mut live: HashSet<String> = HashSet::from(["main".to_owned()]);
    let mut stack = vec!["main".to_owned()];
    while let Some(name) = stack.pop() {
        let Some(f) = m.lookup_symbol(m.top(), &name) else {
            continue;
        };
        let mut referenced = Vec::new();
        m.walk(f, |op| {
            for key in ["callee", "combiner"] {
                if let Some(n) = m.prop(op, key).and_then(Attribute::as_symbol) {
                    referenced.push(n.to_owned());
                }
            }
        });
        for n in referenced {
            if live.insert(n.clone()) {
                stack.push(n);
            }
        }
    }
    for f in functions {
        if m.symbol_name(f).is_some_and(|n| !live.contains(n)) {
            m.erase_op(f);
        }
    }
}
