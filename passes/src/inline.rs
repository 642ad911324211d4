//! `inline`: replaces `xla_gpu.pure_call` and `func.call` of private functions of the same
//! module by the callee's body, following XLA's inliner rules (`XlaInlinerInterface` in
//! `xla_gpu_dialect.cc`) and MLIR's inliner driver (callees first).
//!
//! The emitters put each subgraph in its own function; the seed's GELU loop calls
//! `@gelu` once per element. Inlining puts the arithmetic into the loop body, where later
//! passes (vectorization, unrolling, `cse`) can see it. What XLA's rules protect against is
//! duplicated work and code: the partitioner makes a function exactly when a value is read at
//! several indices, so copying such a function into every call site would evaluate the same
//! subgraph again per call, and copying a DAG of shared functions into a tree grows the code
//! exponentially.
//!
//! Functions are visited callees first (a post-order of the call graph, as MLIR's inliner
//! walks SCCs), so that when a call is considered its callee already holds what was inlined
//! into it, and size limits see the real size. In each function, calls are taken in textual
//! order, calls in inlined bodies right after the call they replace:
//!
//! * a `pure_call` equal to an earlier one in the same block (same callee, same arguments) is
//!   replaced by that call's results — pure calls with the same arguments are one evaluation
//!   (XLA runs CSE before inlining for this);
//! * otherwise the call is inlined when it is **safe**: the callee is a private `func.func` of
//!   this module with a one-block body ending in `func.return` (multi-block bodies cannot go
//!   into `scf`/`xla_gpu` regions without `cf`), it is not recursive (it cannot reach itself
//!   through calls), and neither call nor callee is marked `noinline` (XLA's call attribute)
//!   or `no_inline` (MLIR's `func` property);
//! * and **worth it**, checked in this order:
//!   1. the callee has one use in the module: its body is moved (no copy) and the callee
//!      erased, as MLIR does with discardable callees;
//!   2. a copy must keep the call's block within [`MAX_BLOCK_OPS`] ops (XLA's `kMaxFuncSize`);
//!   3. the callee is small, at most [`SMALL_CALLEE_OPS`] ops besides its return, nested ops
//!      included (XLA's `kMaxOperationsToInline`): a copy costs less than the call;
//!   4. a larger callee is copied only when no other call in the block calls it with other
//!      arguments (that would evaluate it twice), and when it calls a function the call's
//!      block also calls (XLA's heuristic: the two likely read the same elements, so the copy
//!      shares work with its neighbours after `cse`).
//!
//! Functions left without callers after copies stay, for `erase-dead-functions`. Argument
//! attributes of the callee (`xla.range`) are dropped with its signature.
//!
//! MLIR's option `default-pipeline` names passes to run once inlining is done
//! (`--inline=default-pipeline=cse`, as XLA's tests clean up the copies). MLIR runs them on
//! each function after inlining into it, callees first; here they run on the module after
//! all the inlining, which for a clean-up such as `cse` leaves the same IR. Without the
//! option nothing runs (MLIR's default is `canonicalize`; our pipeline runs it where it
//! wants it).

use crate::erase_dead_functions::{is_private_function, referenced_symbols};
use crate::pass::Pass;
use crate::rewrite::{clone_block_before, inline_block_before};
use ir::dialects::func;
use ir::dialects::xla_gpu;
use ir::intern::{FxHashMap, FxHashSet};
use ir::{Attribute, BlockId, Diagnostic, Module, OpId, SymbolTable, Value};

/// Callees with at most this many ops (not counting the return, counting nested ops) are
/// always inlined when the size allows: XLA's `kMaxOperationsToInline`.
pub const SMALL_CALLEE_OPS: usize = 8;

/// No callee is copied into a block that would then exceed this many ops (counting the ops
/// nested in the copy): XLA's `kMaxFuncSize`.
pub const MAX_BLOCK_OPS: usize = 4000;

/// The call ops this pass inlines.
const CALL_OPS: &[&str] = &[xla_gpu::PURE_CALL, func::CALL];

/// The pass (see the module documentation).
#[derive(Default)]
pub struct Inline {
    /// The passes of `default-pipeline`, run after inlining.
    default_pipeline: Vec<Box<dyn Pass>>,
}

impl Pass for Inline {
    crate::pass_names!(
        "inline",
        "Inline pure_call and func.call of private functions when safe and worth it (XLA's rules)"
    );

    fn run(&self, module: &mut Module) -> Result<(), Diagnostic> {
        let mut inliner = Inliner::new(module);
        for function in inliner.callees_first.clone() {
            if module.is_alive(function) {
                inliner.inline_calls_in(module, function);
            }
        }
        for pass in &self.default_pipeline {
            pass.run(module)?;
        }
        Ok(())
    }

    fn set_option(&mut self, name: &str, value: &str) -> Result<(), String> {
        if name != "default-pipeline" {
            return Err(format!(
                "the pass 'inline' has no option '{name}' (it has default-pipeline)"
            ));
        }
        let registry = crate::PassRegistry::standard();
        self.default_pipeline = value
            .split(',')
            .map(|p| p.trim().trim_matches(|c| c == '\'' || c == '"'))
            .filter(|p| !p.is_empty())
            .map(|p| {
                registry
                    .create(p)
                    .ok_or_else(|| format!("default-pipeline={value}: no pass '{p}'"))
            })
            .collect::<Result<_, _>>()?;
        Ok(())
    }
}

/// What the inliner knows about the module: its functions, which of them are recursive, how
/// often each symbol is referenced (kept up to date as calls are inlined), and the results of
/// the pure calls already seen in each block.
struct Inliner {
    table: SymbolTable,
    callees_first: Vec<OpId>,
    recursive: FxHashSet<OpId>,
    uses: FxHashMap<String, usize>,
    seen: FxHashMap<CallKey, Vec<Value>>,
}

/// A pure call by its block, callee and arguments.
type CallKey = (BlockId, String, Vec<Value>);

impl Inliner {
    fn new(m: &Module) -> Inliner {
        let table = SymbolTable::new(m, m.top());
        let graph = call_graph(m, &table);
        let mut uses = FxHashMap::default();
        m.walk(m.top(), |op| count_uses(m, op, &mut uses, 1));
        Inliner {
            callees_first: post_order(m, &graph),
            recursive: recursive_functions(&graph),
            table,
            uses,
            seen: FxHashMap::default(),
        }
    }

    /// Merges or inlines the calls in `function` (see the module documentation).
    fn inline_calls_in(&mut self, m: &mut Module, function: OpId) {
        let mut worklist = calls_in(m, &[function]);
        worklist.reverse();
        while let Some(call) = worklist.pop() {
            if !m.is_alive(call) || self.merge_with_twin(m, call) {
                continue;
            }
            let Some((callee, body)) = self.inlinable_callee(m, call) else {
                continue;
            };
            let inlined = self.inline(m, call, callee, body);
            let mut nested = calls_in(m, &inlined);
            nested.reverse();
            worklist.extend(nested);
        }
    }

    /// Replaces a `pure_call` by the results of an equal call earlier in its block (or what
    /// replaced them); records the call otherwise. Returns whether it was replaced.
    fn merge_with_twin(&mut self, m: &mut Module, call: OpId) -> bool {
        let Some(key) = pure_call_key(m, call) else {
            return false;
        };
        if let Some(twin) = self.seen.get(&key) {
            let twin = twin.clone();
            count_uses(m, call, &mut self.uses, -1);
            m.replace_op(call, &twin);
            return true;
        }
        self.seen.insert(key, m.results(call).collect());
        false
    }

    /// The function `call` should be replaced by and its body, if safe and worth it.
    fn inlinable_callee(&self, m: &Module, call: OpId) -> Option<(OpId, BlockId)> {
        if has_no_inline(m, call) {
            return None;
        }
        let name = callee_name(m, call)?;
        let callee = self.table.lookup(name)?;
        let body = self.safe_body(m, callee)?;
        if self.uses.get(name) == Some(&1) {
            return Some((callee, body));
        }
        let block = m.parent_block(call)?;
        let callee_ops = body_size(m, callee);
        if m.block_ops(block).count() + callee_ops > MAX_BLOCK_OPS {
            return None;
        }
        let worth_it = callee_ops <= SMALL_CALLEE_OPS || large_callee_fits(m, call, name, body);
        worth_it.then_some((callee, body))
    }

    /// The body of `callee` if it can be inlined at all (see the module documentation).
    fn safe_body(&self, m: &Module, callee: OpId) -> Option<BlockId> {
        let safe = is_private_function(m, callee)
            && !has_no_inline(m, callee)
            && !self.recursive.contains(&callee);
        safe.then(|| single_block_body(m, callee)).flatten()
    }

    /// Replaces `call` by `callee`'s body; returns the inlined ops. The body of a callee with
    /// no other use is moved and the callee erased; otherwise it is copied.
    fn inline(&mut self, m: &mut Module, call: OpId, callee: OpId, body: BlockId) -> Vec<OpId> {
        let args = m.operand_vec(call);
        count_uses(m, call, &mut self.uses, -1);
        let last_use = callee_name(m, call).and_then(|n| self.uses.get(n)) == Some(&0);
        let (ops, results) = if last_use {
            let ops: Vec<OpId> = m
                .block_ops(body)
                .filter(|&o| !m.is(o, func::RETURN))
                .collect();
            let results = inline_block_before(m, body, call, &args);
            m.erase_op(callee);
            (ops, results)
        } else {
            let (clones, results) = clone_block_before(m, body, call, &args);
            for &clone in &clones {
                m.walk(clone, |op| count_uses(m, op, &mut self.uses, 1));
            }
            (clones, results)
        };
        if let Some(key) = pure_call_key(m, call) {
            self.seen.insert(key, results.clone());
        }
        m.replace_op(call, &results);
        ops
    }
}

/// The key of a `pure_call` without discardable attributes (`noinline` and the like make a
/// call distinct).
fn pure_call_key(m: &Module, call: OpId) -> Option<CallKey> {
    if !m.is(call, xla_gpu::PURE_CALL) || !m.attrs(call).is_empty() {
        return None;
    }
    let block = m.parent_block(call)?;
    Some((block, callee_name(m, call)?.to_owned(), m.operand_vec(call)))
}

/// The call ops nested in `roots` (and the roots), in textual order.
fn calls_in(m: &Module, roots: &[OpId]) -> Vec<OpId> {
    let mut out = Vec::new();
    for &root in roots {
        m.walk(root, |op| {
            if is_call(m, op) {
                out.push(op);
            }
        });
    }
    out
}

fn is_call(m: &Module, op: OpId) -> bool {
    CALL_OPS.iter().any(|&name| m.is(op, name))
}

fn callee_name(m: &Module, call: OpId) -> Option<&str> {
    m.prop(call, "callee").and_then(Attribute::as_symbol)
}

/// XLA's `noinline` attribute or MLIR's `no_inline` property, on a call or a function.
fn has_no_inline(m: &Module, op: OpId) -> bool {
    m.get_attr(op, "noinline").is_some() || m.get_attr(op, "no_inline").is_some()
}

/// Adds `delta` to the use count of every symbol `op` refers to.
fn count_uses(m: &Module, op: OpId, uses: &mut FxHashMap<String, usize>, delta: isize) {
    for name in referenced_symbols(m, op) {
        let n = uses.entry(name.to_owned()).or_default();
        *n = n.saturating_add_signed(delta);
    }
}

/// The body of a function whose region is one block ending in `func.return`.
fn single_block_body(m: &Module, func: OpId) -> Option<BlockId> {
    let region = *m.regions(func).first()?;
    let [block] = m.region_blocks(region) else {
        return None;
    };
    m.last_op(*block)
        .filter(|&t| m.is(t, func::RETURN))
        .map(|_| *block)
}

/// The ops of a function's body, nested ones included, without its return.
fn body_size(m: &Module, func: OpId) -> usize {
    m.collect_ops(func).len().saturating_sub(2)
}

/// XLA's rule for a large callee with other uses (rule 4 of the module documentation).
fn large_callee_fits(m: &Module, call: OpId, name: &str, body: BlockId) -> bool {
    let Some(block) = m.parent_block(call) else {
        return false;
    };
    let neighbours: Vec<OpId> = m.block_ops(block).filter(|&o| is_call(m, o)).collect();
    let argument_lists: FxHashSet<Vec<Value>> = neighbours
        .iter()
        .filter(|&&o| callee_name(m, o) == Some(name))
        .map(|&o| m.operand_vec(o))
        .collect();
    if argument_lists.len() > 1 {
        return false;
    }
    let callee_calls: FxHashSet<&str> = m
        .block_ops(body)
        .filter(|&o| is_call(m, o))
        .filter_map(|o| callee_name(m, o))
        .collect();
    neighbours
        .iter()
        .filter_map(|&o| callee_name(m, o))
        .any(|n| callee_calls.contains(n))
}

/// The module's functions and the functions each one calls.
type CallGraph = Vec<(OpId, Vec<OpId>)>;

fn call_graph(m: &Module, table: &SymbolTable) -> CallGraph {
    func::functions(m)
        .into_iter()
        .map(|f| {
            let callees = calls_in(m, &[f])
                .into_iter()
                .filter_map(|c| callee_name(m, c).and_then(|n| table.lookup(n)))
                .collect();
            (f, callees)
        })
        .collect()
}

/// The functions, each after every function it calls (except along cycles).
fn post_order(m: &Module, graph: &CallGraph) -> Vec<OpId> {
    let edges: FxHashMap<OpId, &[OpId]> = graph.iter().map(|(f, c)| (*f, c.as_slice())).collect();
    let mut visited = FxHashSet::default();
    let mut order = Vec::new();
    for (root, _) in graph {
        if !visited.insert(*root) {
            continue;
        }
        let mut stack = vec![(*root, 0)];
        while let Some((f, next)) = stack.pop() {
            match edges.get(&f).and_then(|c| c.get(next)) {
                Some(&callee) => {
                    stack.push((f, next + 1));
                    if m.is(callee, func::FUNC) && visited.insert(callee) {
                        stack.push((callee, 0));
                    }
                }
                None => order.push(f),
            }
        }
    }
    order
}

/// The functions that can reach themselves through calls (never inlined: inlining them would
/// not terminate).
fn recursive_functions(graph: &CallGraph) -> FxHashSet<OpId> {
    let edges: FxHashMap<OpId, &[OpId]> = graph.iter().map(|(f, c)| (*f, c.as_slice())).collect();
    graph
        .iter()
        .map(|(f, _)| *f)
        .filter(|&f| reaches(&edges, f, f))
        .collect()
}

/// Whether `to` is reachable from `from` in one or more steps.
fn reaches(edges: &FxHashMap<OpId, &[OpId]>, from: OpId, to: OpId) -> bool {
    let mut seen = FxHashSet::default();
    let mut stack: Vec<OpId> = edges.get(&from).map(|c| c.to_vec()).unwrap_or_default();
    while let Some(f) = stack.pop() {
        if f == to {
            return true;
        }
        if seen.insert(f) {
            stack.extend(edges.get(&f).copied().unwrap_or_default());
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::run_verified;

    fn run(text: &str) -> Module {
        run_verified(&Inline::default(), text)
    }

    fn op_names(m: &Module, root: OpId) -> Vec<&'static str> {
        m.collect_ops(root)
            .into_iter()
            .map(|o| m.name(o).as_str())
            .collect()
    }

    #[test]
    fn recursion_is_detected_and_left_alone() {
        let m = run("func.func @main(%x: f32) -> f32 {
               %0 = func.call @a(%x) : (f32) -> f32
               return %0 : f32
             }
             func.func private @a(%x: f32) -> f32 {
               %0 = func.call @b(%x) : (f32) -> f32
               return %0 : f32
             }
             func.func private @b(%x: f32) -> f32 {
               %0 = func.call @a(%x) : (f32) -> f32
               return %0 : f32
             }");
        assert_eq!(op_names(&m, m.top()).len(), 10);
    }

    #[test]
    fn chains_collapse_callees_first() {
        let m = run("func.func @main(%x: f32) -> f32 {
               %0 = xla_gpu.pure_call @a(%x) : (f32) -> f32
               return %0 : f32
             }
             func.func private @a(%x: f32) -> f32 {
               %0 = xla_gpu.pure_call @b(%x) : (f32) -> f32
               %1 = arith.addf %0, %x : f32
               return %1 : f32
             }
             func.func private @b(%x: f32) -> f32 {
               %0 = math.tanh %x : f32
               return %0 : f32
             }");
        assert_eq!(
            op_names(&m, m.top()),
            [
                ir::dialects::builtin::MODULE,
                ir::dialects::func::FUNC,
                ir::dialects::math::TANH,
                ir::dialects::arith::ADDF,
                ir::dialects::func::RETURN
            ]
        );
    }

    /// The second of two equal pure calls reuses what replaced the first.
    #[test]
    fn equal_pure_calls_are_merged() {
        let m = run("func.func @main(%x: f32) -> (f32, f32) {
               %0 = xla_gpu.pure_call @leaf(%x) : (f32) -> f32
               %1 = xla_gpu.pure_call @leaf(%x) : (f32) -> f32
               return %0, %1 : f32, f32
             }
             func.func private @leaf(%x: f32) -> f32 {
               %0 = math.exp %x : f32
               return %0 : f32
             }");
        let main = m.lookup_symbol(m.top(), "main").unwrap();
        assert_eq!(
            op_names(&m, main),
            [
                ir::dialects::func::FUNC,
                ir::dialects::math::EXP,
                ir::dialects::func::RETURN
            ]
        );
        let ret = m
            .last_op(m.entry_block(m.region(main, 0)).unwrap())
            .unwrap();
        assert_eq!(m.operand(ret, 0), m.operand(ret, 1));
    }
}
