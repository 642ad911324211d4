//! Computations as graphs: operand → user edges in a petgraph `DiGraph`.
//!
//! The partitioner and the emitters walk fusions from the root towards the parameters and
//! ask for every instruction's users; this is where those questions are answered. Node `i`
//! of the graph is instruction `InstrId(i)`.

use petgraph::Direction;
use petgraph::algo::toposort;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use crate::diag::Diagnostic;
use crate::module::{Computation, ComputationId, HloModule, InstrId};

/// The dataflow graph of one computation. An instruction that uses the same operand twice
/// has two parallel edges (one per operand position).
pub struct ComputationGraph {
    graph: DiGraph<InstrId, usize>,
    root: InstrId,
}

impl ComputationGraph {
    pub fn new(computation: &Computation) -> ComputationGraph {
        let n = computation.instructions.len();
        let mut graph = DiGraph::with_capacity(n, n * 2);
        for i in 0..n {
            graph.add_node(InstrId(i));
        }
        for (user, instr) in computation.instructions.iter().enumerate() {
            for (position, operand) in instr.operands.iter().enumerate() {
                graph.add_edge(NodeIndex::new(operand.0), NodeIndex::new(user), position);
            }
        }
        ComputationGraph {
            graph,
            root: computation.root,
        }
    }

    pub fn graph(&self) -> &DiGraph<InstrId, usize> {
        &self.graph
    }

    /// Distinct users of an instruction, in instruction order.
    pub fn users(&self, id: InstrId) -> Vec<InstrId> {
        let mut users: Vec<InstrId> = self
            .graph
            .neighbors_directed(NodeIndex::new(id.0), Direction::Outgoing)
            .map(|n| InstrId(n.index()))
            .collect();
        users.sort_unstable();
        users.dedup();
        users
    }

    /// Instructions reachable from the root, operands before users, ending at the root.
    pub fn post_order(&self) -> Vec<InstrId> {
        self.post_order_from(self.root)
    }

    /// Instructions reachable from `start`, operands before users, ending at `start`.
    /// Operands are visited in operand order (an explicit stack rather than petgraph's
    /// DFS, whose neighbour order is newest edge first), so the order is deterministic.
    pub fn post_order_from(&self, start: InstrId) -> Vec<InstrId> {
        let mut order = Vec::new();
        let mut visited = vec![false; self.graph.node_count()];
        let operands = |id: InstrId| {
            let mut operands: Vec<(usize, InstrId)> = self
                .graph
                .edges_directed(NodeIndex::new(id.0), Direction::Incoming)
                .map(|e| (*e.weight(), InstrId(e.source().index())))
                .collect();
            operands.sort_unstable();
            // Reversed: the last one given is visited first.
            operands.into_iter().rev().map(|(_, operand)| operand)
        };
        post_order_into(start, |id| id.0, operands, &mut visited, &mut order);
        order
    }
}

/// Appends to `order` every node reachable from `start` and not yet `visited` (by `index`),
/// each after the nodes `next` gives for it (operands, callees), which are visited last
/// first. A depth-first post-order with an explicit stack rather than recursion: chains of
/// nodes may be as deep as the input is long.
pub fn post_order_into<N: Copy, I: IntoIterator<Item = N>>(
    start: N,
    index: impl Fn(N) -> usize,
    mut next: impl FnMut(N) -> I,
    visited: &mut [bool],
    order: &mut Vec<N>,
) {
    let mut stack = vec![(start, false)];
    while let Some((node, expanded)) = stack.pop() {
        if expanded {
            order.push(node);
            continue;
        }
        if std::mem::replace(&mut visited[index(node)], true) {
            continue;
        }
        stack.push((node, true));
        for next_node in next(node) {
            if !visited[index(next_node)] {
                stack.push((next_node, false));
            }
        }
    }
}

/// Rejects dataflow cycles inside a computation and recursion between computations; the
/// parser allows definitions in any order, so both are possible in text.
pub fn check_acyclic(module: &HloModule) -> Result<(), Diagnostic> {
    for computation in &module.computations {
        let graph = ComputationGraph::new(computation);
        if let Err(cycle) = toposort(graph.graph(), None) {
            let instr = computation.instruction(InstrId(cycle.node_id().index()));
            return Err(Diagnostic::new(
                instr.spans.name,
                format!(
                    "instruction '{}' is part of a cycle in computation '{}'",
                    instr.name, computation.name
                ),
            ));
        }
    }
    let mut calls: DiGraph<ComputationId, ()> = DiGraph::new();
    for i in 0..module.computations.len() {
        calls.add_node(ComputationId(i));
    }
    for (caller, computation) in module.computations.iter().enumerate() {
        for instr in &computation.instructions {
            for callee in instr.called_computations() {
                calls.add_edge(NodeIndex::new(caller), NodeIndex::new(callee.id.0), ());
            }
        }
    }
    if let Err(cycle) = toposort(&calls, None) {
        let computation = module.computation(ComputationId(cycle.node_id().index()));
        return Err(Diagnostic::new(
            computation.span,
            format!(
                "computation '{}' calls itself (a cycle of calls)",
                computation.name
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceFile;
    use crate::parse_module;

    fn computation(text: &str) -> Computation {
        let module = parse_module(&SourceFile::new("t.hlo", text)).unwrap();
        module.entry_computation().clone()
    }

    #[test]
    fn post_order_puts_operands_first_in_operand_order() {
        let c = computation(
            "c { p = f32[] parameter(0)\n\
                 q = f32[] parameter(1)\n\
                 unused = f32[] negate(p)\n\
                 l = f32[] log(q)\n\
                 ROOT a = f32[] add(l, p) }",
        );
        let names: Vec<&str> = ComputationGraph::new(&c)
            .post_order()
            .into_iter()
            .map(|id| c.instruction(id).name.as_str())
            .collect();
        assert_eq!(names, vec!["q", "l", "p", "a"]);
    }

    #[test]
    fn users_are_distinct() {
        let c = computation("c { p = f32[] parameter(0) ROOT m = f32[] multiply(p, p) }");
        let graph = ComputationGraph::new(&c);
        assert_eq!(graph.users(InstrId(0)), vec![InstrId(1)]);
        assert_eq!(graph.users(InstrId(1)), vec![]);
    }

    #[test]
    fn recursion_is_rejected() {
        let text = "a { p = f32[] parameter(0) ROOT c = f32[] call(p), to_apply=a }";
        let err = parse_module(&SourceFile::new("t.hlo", text)).unwrap_err();
        assert!(err.message.contains("calls itself"), "{err}");
    }
}
