//! Row normalizations as one fusion: a reduction over rows whose every result is read by
//! one consumer fusion that uses it on the same rows (softmax's max and sum, layer norm's
//! mean and variance) joins that consumer, as XLA's `SoftmaxRewriterTriton` makes one
//! fusion of such a "diamond" for its Triton softmax emitter. The merged fusion is kept
//! only when the row-normalization emitter takes it (`RowNormalization::analyze`, the one
//! statement of what that emitter takes), so a merge never turns a kernel per reduction
//! into a loop fusion that recomputes each row's reduction per element.
//!
//! Reductions are visited last first, so that in a layer norm the variance joins the
//! normalization before the mean, whose users are then all in the merged fusion.

use std::collections::HashSet;

use emitters::normalization::RowNormalization;
use hlo::{Computation, InstrId};

use crate::fuse::{Group, fusion_computation};
use crate::{positions, users};

/// A merged fusion stops taking reductions past this many members: a row normalization has
/// a few dozen, and the analysis of each candidate reads the whole fusion, so the bound keeps
/// the pass linear on programs of thousands of chained normalizations.
const MAX_MEMBERS: usize = 256;

/// `groups` (in entry order, each root after what it reads) with every reduction that a
/// row-normalization consumer takes merged into it.
pub(crate) fn merge_row_normalizations(entry: &Computation, groups: Vec<Group>) -> Vec<Group> {
    let n = entry.instructions.len();
    let users = users(entry);
    let mut member_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (g, group) in groups.iter().enumerate() {
        for &m in &group.members {
            member_of[m.0].push(g);
        }
    }
    let position = positions(entry);
    let mut groups: Vec<Option<Group>> = groups.into_iter().map(Some).collect();
    for r in (0..groups.len()).rev() {
        let Some(reduction) = groups[r].as_ref().filter(|g| g.has_reduce) else {
            continue;
        };
        let Some(c) = single_consumer(entry, reduction, r, &users, &member_of) else {
            continue;
        };
        let consumer = groups[c].as_ref().expect("a live consumer");
        if consumer.members.len() + reduction.members.len() > MAX_MEMBERS {
            continue;
        }
        let mut members: Vec<InstrId> = consumer.members.clone();
        members.extend(&reduction.members);
        members.sort_by_key(|m| position[m.0]);
        members.dedup();
        let candidate = Group {
            root: consumer.root,
            extra_outputs: consumer.extra_outputs.clone(),
            members,
            has_reduce: true,
        };
        let (computation, _) = fusion_computation(entry, &candidate, "candidate".into());
        if RowNormalization::analyze(&emitters::analyze(&computation)).is_none() {
            continue;
        }
        let taken = groups[r].take().expect("the reduction");
        for &m in &taken.members {
            let of = &mut member_of[m.0];
            for g in of.iter_mut().filter(|g| **g == r) {
                *g = c;
            }
            of.sort_unstable();
            of.dedup();
        }
        groups[c] = Some(candidate);
    }
    groups.into_iter().flatten().collect()
}

/// The one fusion other than `r` that reads the outputs of fusion `r`, when every reader of
/// them is in one of the two (an output read by the entry itself keeps its fusion).
fn single_consumer(
    entry: &Computation,
    reduction: &Group,
    r: usize,
    users: &[Vec<InstrId>],
    member_of: &[Vec<usize>],
) -> Option<usize> {
    let outputs: Vec<InstrId> = std::iter::once(reduction.root)
        .chain(reduction.extra_outputs.iter().copied())
        .collect();
    let mut consumers: HashSet<usize> = HashSet::new();
    for &o in &outputs {
        if o == entry.root {
            return None;
        }
        for &u in &users[o.0] {
            if member_of[u.0].is_empty() {
                return None;
            }
            // Every fusion the reader is in (a cheap op may be copied into several).
            consumers.extend(member_of[u.0].iter().copied().filter(|&g| g != r));
        }
    }
    let mut it = consumers.into_iter();
    match (it.next(), it.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}
