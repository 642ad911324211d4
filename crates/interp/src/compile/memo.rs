//! Which calls a thread may answer from its memo.
//!
//! The emitters' subgraph functions call each other at the same indices from several
//! places; XLA relies on CSE after inlining to compute each once. Until O3 has inlined
//! them (after `lower-to-llvm` and `translate` they are still `llvm.call`s), executing
//! every call recomputes shared subgraphs once per path, exponentially often. A call is
//! memoized when its callee, and everything the callee calls, only reads memory — no
//! stores, barriers, shuffles or shared allocations — and the callee is called from more
//! than one place (a single call site repeats only in loops, with new arguments). The memo
//! stays sound because a thread drops it whenever it stores or waits.

use crate::inst::{Func, Inst};

/// Keeps `memo` on the calls that may be memoized and clears it on the others.
pub(super) fn decide(funcs: &mut [Func]) {
    let read_only = read_only_functions(funcs);
    let mut call_sites = vec![0usize; funcs.len()];
    for inst in funcs.iter().flat_map(|f| &f.code) {
        if let Inst::Call { func, .. } = inst {
            call_sites[*func as usize] += 1;
        }
    }
    for inst in funcs.iter_mut().flat_map(|f| &mut f.code) {
        if let Inst::Call { func, memo, .. } = inst {
            let callee = *func as usize;
            *memo &= read_only[callee] && call_sites[callee] > 1;
        }
    }
}

/// For each function, whether it and everything it calls only read memory.
fn read_only_functions(funcs: &[Func]) -> Vec<bool> {
    let mut read_only: Vec<bool> = funcs
        .iter()
        .map(|f| !f.code.iter().any(writes_or_waits))
        .collect();
    // A caller of a function that writes writes too; the call graph is small, so iterate
    // until nothing changes.
    loop {
        let mut changed = false;
        for (i, f) in funcs.iter().enumerate() {
            let calls_a_writer = f
                .code
                .iter()
                .any(|inst| matches!(inst, Inst::Call { func, .. } if !read_only[*func as usize]));
            if read_only[i] && calls_a_writer {
                read_only[i] = false;
                changed = true;
            }
        }
        if !changed {
            return read_only;
        }
    }
}

/// Instructions with an effect besides their results, or that let other threads' effects
/// in.
fn writes_or_waits(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Store { .. }
            | Inst::Barrier
            | Inst::SyncThreads { .. }
            | Inst::Shuffle(_)
            | Inst::AllocShared { .. }
    )
}
