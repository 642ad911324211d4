//! `peel-loops`: an `xla_gpu.loop` whose indexing map constrains a range variable is split
//! into a main loop without its last value, where the constraint always holds, and a tail
//! loop for that last value, as XLA's `PeelLoopsPass` does.
//!
//! A constraint on a range variable (`d0 + s0 in [0, 9]`: the tile's edge) is a check in
//! every iteration of the lowered loop; most iterations cannot fail it. For each range
//! variable, last to first, while the iterations of the variables visited so far number
//! fewer than [`MAX_PEELED_ITERATIONS`]: when a constraint of the current main map mentions
//! it and the variable takes more than one value, the map with the variable's last value
//! removed is simplified; if no constraint mentions the variable any more, that map becomes
//! the main loop and the map of the last value alone (simplified: its constraints on the
//! value fold into the other variables' bounds) a tail. The main loop runs first, then the
//! tails, the loop-carried values passing from each to the next; a tail whose domain is
//! known to be empty is left out. A loop with nothing to peel stays as it is.
//!
//! The tails' iterations run after all of the main loop's, as in XLA: a loop-carried value
//! that depends on the order (a float sum's rounding, `acc * k + x`) may come out otherwise,
//! which the emitters' loops allow (their order is the loop's to choose).
//!
//! Loops in the bodies of peeled loops are peeled in turn. The emitters here write loop
//! bounds that need no constraint (the loop emitter's domain checks are `scf.if`s that
//! `simplify-arith` decides), so the standard pipeline does not run this pass; it is
//! `hlo-opt`'s, for XLA's IR.

use std::collections::VecDeque;

use indexing::IndexingMap;
use ir::dialects::xla_gpu;
use ir::intern::FxHashMap;
use ir::{Diagnostic, InsertPoint, Module, OpId, Value};

use crate::pass::Pass;
use crate::rewrite::clone_ops_at;

/// Range variables are peeled while the iterations of those already visited number fewer
/// than this (XLA's bound: peeling many small dimensions multiplies the code).
pub const MAX_PEELED_ITERATIONS: i64 = 64;

pub struct PeelLoops;

impl Pass for PeelLoops {
    crate::pass_names!(
        "peel-loops",
        "Split an xla_gpu.loop whose map constrains a range variable into a loop without its last value and a tail (XLA's PeelLoops)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let mut work: VecDeque<OpId> = m.ops_named(xla_gpu::LOOP).into();
        while let Some(op) = work.pop_front() {
            if !m.is_alive(op) {
                continue;
            }
            let Some(maps) = xla_gpu::indexing_map(m, op).and_then(peeled_maps) else {
                continue;
            };
            for new_loop in peel(m, op, &maps) {
                let nested = m.collect_ops(new_loop);
                work.extend(
                    nested
                        .into_iter()
                        .filter(|&o| o != new_loop && m.is(o, xla_gpu::LOOP)),
                );
            }
        }
        Ok(())
    }
}

/// The maps of the loops `map` is peeled into, main loop first, then the tails; `None`
/// when nothing is peeled.
fn peeled_maps(map: &IndexingMap) -> Option<Vec<IndexingMap>> {
    // The last entry is the main loop, earlier ones the tails in the order they were split.
    let mut maps = vec![map.clone().simplified()];
    let mut iterations: i64 = 1;
    for s in (0..map.range_vars.len()).rev() {
        if iterations >= MAX_PEELED_ITERATIONS {
            break;
        }
        let main = maps.last().expect("the main map").clone();
        let bounds = main.range_vars[s].bounds;
        iterations =
            iterations.saturating_mul(bounds.hi.saturating_sub(bounds.lo).saturating_add(1));
        let constrains = |m: &IndexingMap| m.constraints.iter().any(|(e, _)| e.uses_symbol(s));
        if !constrains(&main) || bounds.lo == bounds.hi {
            continue;
        }
        let mut peeled = main.clone();
        peeled.range_vars[s].bounds.hi -= 1;
        peeled.simplify();
        if constrains(&peeled) {
            continue;
        }
        let mut tail = main;
        tail.range_vars[s].bounds.lo = bounds.hi;
        tail.simplify();
        maps.pop();
        maps.push(tail);
        maps.push(peeled);
    }
    (maps.len() > 1).then(|| maps.into_iter().rev().collect())
}

/// Replaces `op` by one loop per map of `maps` (in order, each taking the loop-carried
/// values the one before gave), bodies copied; returns the new loops.
fn peel(m: &mut Module, op: OpId, maps: &[IndexingMap]) -> Vec<OpId> {
    let (dims, _) = xla_gpu::loop_segments(m, op).expect("the verifier checks a loop's segments");
    let operands: Vec<Value> = m.operands(op).collect();
    let dim_values = &operands[..dims];
    let mut carried: Vec<Value> = operands[dims..].to_vec();
    let body = m.entry_block(m.region(op, 0)).expect("a loop has a body");
    let body_ops: Vec<OpId> = m.block_ops(body).collect();
    let old_args = m.block_args(body).to_vec();
    let loc = m.loc(op);
    let mut loops = Vec::new();
    for map in maps.iter().filter(|map| !map.is_known_empty()) {
        let (new_loop, new_body) = xla_gpu::build_loop(
            m,
            InsertPoint::Before(op),
            map.clone(),
            dim_values,
            &carried,
        );
        m.set_loc(new_loop, loc);
        let mut mapping: FxHashMap<Value, Value> = old_args
            .iter()
            .copied()
            .zip(m.block_args(new_body).iter().copied())
            .collect();
        clone_ops_at(m, &body_ops, &mut mapping, InsertPoint::BlockEnd(new_body));
        carried = m.results(new_loop).collect();
        loops.push(new_loop);
    }
    m.replace_op(op, &carried);
    loops
}
