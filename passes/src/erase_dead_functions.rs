//! `erase-dead-functions`: erases the private functions that nothing reachable from the
//! module's public symbols refers to (XLA's `erase_dead_functions`).
//!
//! After `inline`, the emitters' subgraph functions are no longer called; they would still be
//! lowered, translated and compiled to PTX. A function is live when a public symbol (a
//! kernel such as `@main`) or any other top-level op that is not a private function refers to
//! it, or a live function does — through a `func.call`, an `xla_gpu.pure_call`, a
//! `shuffle_reduce` combiner or any other symbol reference in an attribute. Liveness is
//! transitive, so a group of private functions that only call each other is erased together.

use crate::pass::Pass;
use ir::dialects::func;
use ir::intern::FxHashSet;
use ir::{Attribute, Diagnostic, Module, OpId, SymbolTable};

/// The pass (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct EraseDeadFunctions;

impl Pass for EraseDeadFunctions {
    crate::pass_names!(
        "erase-dead-functions",
        "Erase private functions that no public symbol reaches through calls or symbol references"
    );

    fn run(&self, module: &mut Module) -> Result<(), Diagnostic> {
        let top_level: Vec<OpId> = module.block_ops(module.body()).collect();
        let live = live_symbols(module, &top_level);
        for op in top_level {
            if is_private_function(module, op) && !live.contains(&op) {
                module.erase_op(op);
            }
        }
        Ok(())
    }
}

/// Whether `op` is a `func.func` that only its module can refer to.
pub fn is_private_function(m: &Module, op: OpId) -> bool {
    m.is(op, func::FUNC)
        && m.get_attr(op, "sym_visibility")
            .and_then(Attribute::as_str)
            .is_some_and(|v| v != "public")
}

/// The top-level ops reachable from the roots (every top-level op but private functions)
/// through symbol references.
fn live_symbols(m: &Module, top_level: &[OpId]) -> FxHashSet<OpId> {
    let table = SymbolTable::new(m, m.top());
    let mut worklist: Vec<OpId> = top_level
        .iter()
        .copied()
        .filter(|&op| !is_private_function(m, op))
        .collect();
    let mut live: FxHashSet<OpId> = worklist.iter().copied().collect();
    while let Some(op) = worklist.pop() {
        m.walk(op, |nested| {
            for name in referenced_symbols(m, nested) {
                if let Some(target) = table.lookup(name)
                    && live.insert(target)
                {
                    worklist.push(target);
                }
            }
        });
    }
    live
}

/// The root names of the symbols `op`'s properties and attributes refer to.
pub fn referenced_symbols(m: &Module, op: OpId) -> Vec<&str> {
    let mut out = Vec::new();
    for named in m.props(op).iter().chain(m.attrs(op)) {
        collect_symbols(&named.value, &mut out);
    }
    out
}

fn collect_symbols<'a>(attr: &'a Attribute, out: &mut Vec<&'a str>) {
    match attr {
        Attribute::Symbol(s) => out.push(&s.root),
        Attribute::Array(items) => items.iter().for_each(|a| collect_symbols(a, out)),
        Attribute::Dict(entries) => entries.iter().for_each(|e| collect_symbols(&e.value, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::run_verified;
    use ir::parse_module;

    fn functions(m: &Module) -> Vec<String> {
        m.block_ops(m.body())
            .filter_map(|op| m.symbol_name(op).map(str::to_owned))
            .collect()
    }

    #[test]
    fn unreachable_private_functions_go_and_reachable_ones_stay() {
        let m = run_verified(
            &EraseDeadFunctions,
            "func.func @main(%x: f32) -> f32 {
               %0 = xla_gpu.pure_call @used(%x) : (f32) -> f32
               return %0 : f32
             }
             func.func private @used(%x: f32) -> f32 {
               %0 = func.call @transitive(%x) : (f32) -> f32
               return %0 : f32
             }
             func.func private @transitive(%x: f32) -> f32 {
               return %x : f32
             }
             func.func private @cycle_a(%x: f32) -> f32 {
               %0 = func.call @cycle_b(%x) : (f32) -> f32
               return %0 : f32
             }
             func.func private @cycle_b(%x: f32) -> f32 {
               %0 = func.call @cycle_a(%x) : (f32) -> f32
               return %0 : f32
             }
             func.func @public_unused(%x: f32) -> f32 {
               return %x : f32
             }",
        );
        assert_eq!(
            functions(&m),
            ["main", "used", "transitive", "public_unused"]
        );
    }

    #[test]
    fn symbols_nested_in_attributes_count() {
        let m = parse_module(
            "func.func @f() attributes {refs = [@a, {k = @b}]} {
               return
             }",
        )
        .unwrap();
        let f = m.lookup_symbol(m.top(), "f").unwrap();
        assert_eq!(referenced_symbols(&m, f), ["a", "b"]);
    }
}
