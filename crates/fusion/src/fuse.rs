//! `fuse`: groups the entry's instructions into fusions after XLA:GPU's rules, so that a
//! program becomes the kernels XLA would launch. The bodies and conditions of `while` loops
//! and the branches of `conditional`s are fused the same way, each on its own
//! ([`crate::control_computations`]): the loop is the runtime's, its body's kernels run
//! once an iteration, as in XLA:GPU.
//!
//! Producers are decided after all their users (reverse topological order), as XLA's
//! `InstructionFusion` visits them:
//!
//! * **A scatter or a dynamic-update-slice is a hero** written in place: the producers of
//!   its indices and updates fuse into it, its updated operands never (they are the buffers
//!   it writes), and neither does a producer that reads them; it joins no consumer.
//! * **A reduce is a hero.** Its producers fuse into it (its prologue). It never fuses into
//!   a consumer that reads the reduced values at other indices than it writes (`x - mean`
//!   reads `mean` per row): that would recompute the whole reduction per output element. It
//!   does join a consumer fusion that is its **epilogue**, as the reduction emitter takes
//!   it: every member computed once per reduced element, at that element's index
//!   (elementwise ops with the reduce's dimensions reading the chain from the reduce once,
//!   and besides it constants, broadcasts of scalars, and values computed before the reduce
//!   read at the same index: `mean = sum / n`, `log(sum) + max`), with no other reduce.
//! * **A producer whose users are all in one fusion joins it**, unless it is expensive and
//!   that fusion reads its elements several times each (through a broadcast that expands
//!   it, a gather, a reduce-window): `rsqrt(var + eps)` broadcast over a row would be
//!   computed once per element instead of once per row (XLA's `ReusesOperandElements`).
//! * **A producer used by several fusions** is duplicated into each when it is cheap
//!   (elementwise but not transcendental or a division, broadcasts, reshapes, constants,
//!   iota, converts), as XLA duplicates cheap ops, into at most eight (constants, iotas,
//!   scalars and broadcast scalars into any number): copies of copies along a chain of
//!   cheap ops would otherwise put the whole chain into every later fusion, quadratic in
//!   its length. Otherwise it gets a fusion of its own and the others read its result.
//! * A producer with a user outside any fusion (`tuple`, `custom-call`, the entry's root)
//!   is materialized: it is the root of a fusion of its own, unless it is one of the
//!   program's results (read outside only by the ROOT tuple) and its other users are in
//!   one loop fusion of its shape: it then joins that fusion as an extra output (XLA's
//!   producer-consumer multi-output fusion; Adam's new moments and parameters are one
//!   kernel), and the entry reads each output through a `get-tuple-element`. Likewise an
//!   expensive producer read by several fusions, the first of them a reduction of an
//!   array of its shape, is that fusion's side output rather than a kernel of its own
//!   (softmax's `exp(x - max)`).
//! * **Siblings** (reductions of one input shape over the same dimensions, or loop fusions
//!   of one output shape, that read a value in common, where neither feeds the other) are
//!   one fusion with several outputs: one pass over the input (a masked mean's sum and
//!   count; `sin(x)` and `cos(x)`).
//! * **Row normalizations**: a reduction whose results only one consumer fusion reads,
//!   on the same rows (softmax's max and sum, layer norm's mean and variance), then joins
//!   that consumer when the row-normalization emitter takes the merged fusion (`rows.rs`;
//!   XLA's `SoftmaxRewriterTriton`): one kernel reading the input once instead of three.
//! * Parameters, tuples, `get-tuple-element` and instructions that call computations
//!   (other than a reduce's reducer) stay in the entry. A constant no fusion uses stays too.
//!
//! Each fusion's computation takes the values it reads from outside as parameters, in
//! first-use order; the fusion instruction takes the name of its root, so the entry reads
//! as before with fusions in place of the instructions they absorbed.

use std::collections::{BTreeMap, HashMap};

use emitters::reduction::ReductionDimensions;
use hlo::{
    AttrValue, Attribute, Computation, ComputationId, Diagnostic, HloModule, InstrId, Instruction,
    Opcode, Payload,
};

use crate::{Names, elementwise, operands_first, positions, users};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let mut changed = false;
    for id in crate::control_computations(module) {
        changed |= fuse_computation(module, id);
    }
    Ok(changed)
}

/// Fuses the instructions of computation `id` (the entry, a loop's body or condition, a
/// branch): whether it made any fusion.
fn fuse_computation(module: &mut HloModule, id: ComputationId) -> bool {
    let entry = module.computation(id);
    let groups = merge_siblings(entry, group(entry));
    let groups = crate::rows::merge_row_normalizations(entry, groups);
    make_fusions(module, id, &groups)
}

/// Whether `instr` is a sort or a top-k (XLA's `TopK` custom-call), which the sort emitter
/// compiles: each roots a fusion of its own.
fn sorts(instr: &Instruction) -> bool {
    instr.opcode == Opcode::Sort || instr.is_topk_call()
}

/// `outline-sorts`: in a module fused already (as XLA:GPU prints one, its sorts left
/// outside the fusions), each sort and top-k gets a fusion of its own, which the sort
/// emitter compiles, as XLA:GPU gives each sort a kernel; so do the keys `sort-rewriter`
/// made for a CUB sort (elementwise code left in the entry). A module without fusions (a
/// bare fusion body, an unfused program under `--no-fuse`) is one kernel as it is, and is
/// left alone.
pub(crate) fn outline_sorts(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let fused = module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .any(|i| i.opcode == Opcode::Fusion);
    if !fused {
        return Ok(false);
    }
    let mut changed = false;
    for id in crate::control_computations(module) {
        let c = module.computation(id);
        let order = operands_first(c);
        let sort_groups = order
            .iter()
            .filter(|&&i| sorts(c.instruction(i)))
            .map(|&sort| Group {
                root: sort,
                extra_outputs: Vec::new(),
                members: vec![sort],
                has_reduce: false,
            });
        let key_groups = order
            .iter()
            .filter(|&&i| c.instruction(i).is_cub_sort_call())
            .filter_map(|&call| made_keys(c, &order, c.instruction(call).operands[0]));
        let groups: Vec<Group> = sort_groups.chain(key_groups).collect();
        changed |= make_fusions(module, id, &groups);
    }
    Ok(changed)
}

/// The group of the elementwise code in `c` (no fusion yet) that computes `keys`, a CUB
/// sort's keys made by `sort-rewriter`, with `order` the instructions operands first; `None`
/// when the keys are a parameter or a fusion's output already.
fn made_keys(c: &Computation, order: &[InstrId], keys: InstrId) -> Option<Group> {
    let plain = |i: InstrId| {
        let instr = c.instruction(i);
        fusible(instr) && !sorts(instr) && !matches!(instr.opcode, Opcode::Parameter)
    };
    let mut members = std::collections::HashSet::new();
    let mut stack = vec![keys];
    while let Some(i) = stack.pop() {
        if plain(i) && members.insert(i) {
            stack.extend(&c.instruction(i).operands);
        }
    }
    members.contains(&keys).then(|| Group {
        root: keys,
        extra_outputs: Vec::new(),
        members: order
            .iter()
            .copied()
            .filter(|i| members.contains(i))
            .collect(),
        has_reduce: false,
    })
}

/// Computation `id` with each of `groups` made a fusion: whether there was any.
fn make_fusions(module: &mut HloModule, id: ComputationId, groups: &[Group]) -> bool {
    let entry = module.computation(id);
    if groups.is_empty() {
        return false;
    }
    let first_new = module.computations.len();
    let mut fused = Vec::new();
    let mut names = Names {
        taken: module.computations.iter().map(|c| c.name.clone()).collect(),
        ..Names::default()
    };
    let mut fusion_of_root = HashMap::new();
    for (g, group) in groups.iter().enumerate() {
        let root = &entry.instructions[group.root.0];
        let name = names.unique(&format!("fused_{}", root.name));
        let (computation, operands) = fusion_computation(entry, group, name);
        fusion_of_root.insert(group.root, (ComputationId(first_new + g), operands));
        fused.push(computation);
    }
    let new_entry = rewrite_entry(entry, groups, &fusion_of_root, |c| {
        &fused[c.0 - first_new].name
    });
    module.computations[id.0] = new_entry;
    module.computations.extend(fused);
    true
}

/// One fusion: its root (the value it produces) and its members, in topological order.
pub(crate) struct Group {
    pub(crate) root: InstrId,
    /// Members that are also outputs of the fusion (the program's results), after `root`
    /// in the fusion's tuple ROOT.
    pub(crate) extra_outputs: Vec<InstrId>,
    pub(crate) members: Vec<InstrId>,
    pub(crate) has_reduce: bool,
}

/// Instructions that stay in the entry: parameters and plumbing; what XLA:GPU hands to
/// libraries or the runtime rather than to a fusion emitter (matrix products and
/// convolutions go to cuBLAS/cuDNN, custom calls, collectives, I/O, random numbers);
/// anything that calls a computation other than the reducer of a reduce or a
/// reduce-window or a scatter's combiner or a sort's comparator (control flow, maps);
/// tuple shapes other than a variadic reduce's, a scatter's or a sort's.
/// They are listed as left to the runtime.
fn fusible(instr: &Instruction) -> bool {
    use Opcode::*;
    if sorts(instr) {
        return true;
    }
    let stays = matches!(
        instr.opcode,
        Parameter
            | Tuple
            | GetTupleElement
            | Fusion
            | CustomCall
            | Dot
            | RaggedDot
            | Convolution
            | Fft
            | Cholesky
            | TriangularSolve
            | Rng
            | RngBitGenerator
            | RngGetAndUpdateState
            | Infeed
            | Outfeed
            | Send
            | SendDone
            | Recv
            | RecvDone
            | AfterAll
            | AddDependency
            | AllGather
            | AllGatherStart
            | AllGatherDone
            | AllReduceStart
            | AllReduceDone
            | AllToAll
            | RaggedAllToAll
            | CollectiveBroadcast
            | CollectivePermute
            | CollectivePermuteStart
            | CollectivePermuteDone
            | ReplicaId
            | PartitionId
            | OptimizationBarrier
            | Domain
            | AsyncStart
            | AsyncUpdate
            | AsyncDone
            | CopyStart
            | CopyDone
            | GetDimensionSize
            | SetDimensionSize
            | DynamicReshape
            | BatchNormGrad
            | BatchNormInference
            | BatchNormTraining
            | TopK
    );
    !stays
        && (matches!(instr.opcode, Reduce | ReduceWindow | Scatter)
            || (instr.called_computations().next().is_none() && instr.shape.as_array().is_some()))
}

/// The operands that an in-place hero (a scatter, a dynamic-update-slice) updates, which
/// must stay buffers of their own (fusion parameters); none for other instructions.
fn updated_in_place(instr: &Instruction) -> &[InstrId] {
    match instr.opcode {
        Opcode::Scatter => &instr.operands[..instr.operands.len() / 2],
        Opcode::DynamicUpdateSlice => &instr.operands[..1],
        _ => &[],
    }
}

/// Whether an in-place hero roots its own fusion (`emitters::scatter`,
/// `emitters::dynamic_update_slice`).
fn in_place_hero(instr: &Instruction) -> bool {
    !updated_in_place(instr).is_empty()
}

/// Whether `p` may not join the fusion rooted at `root` because that fusion is written in
/// place: the updated operands must stay buffers of their own, and nothing else in the
/// fusion may read them while the kernel writes them.
fn breaks_in_place(entry: &Computation, p: InstrId, root: InstrId) -> bool {
    let in_place = updated_in_place(&entry.instructions[root.0]);
    if in_place.is_empty() {
        return false;
    }
    in_place.contains(&p)
        || entry.instructions[p.0]
            .operands
            .iter()
            .any(|o| in_place.contains(o))
}

/// Cheap enough to compute again in every fusion that uses it (XLA's "not expensive").
pub(crate) fn cheap(instr: &Instruction) -> bool {
    use Opcode::*;
    let expensive = matches!(
        instr.opcode,
        Divide
            | Remainder
            | Power
            | Exp
            | Expm1
            | Log
            | Log1p
            | Logistic
            | Tanh
            | Sqrt
            | Rsqrt
            | Cbrt
            | Sin
            | Cos
            | Tan
            | Atan2
            | Erf
            | Acos
            | Acosh
            | Asin
            | Asinh
            | Atan
            | Atanh
            | Cosh
            | Sinh
    );
    !expensive
        && (instr.opcode.is_elementwise_unary()
            || instr.opcode.is_elementwise_binary()
            || matches!(
                instr.opcode,
                Broadcast
                    | Reshape
                    | Bitcast
                    | Constant
                    | Iota
                    | Convert
                    | Compare
                    | IsFinite
                    | Select
                    | Clamp
            ))
}

/// The most fusions a cheap producer is copied into (XLA bounds code duplication the same
/// way); beyond, it is a fusion of its own.
const MAX_COPIES: usize = 8;

/// A value whose every element costs nothing to make again: a constant, an iota, a scalar,
/// a broadcast of a scalar.
fn tiny(entry: &Computation, instr: &Instruction) -> bool {
    let scalar = |i: &Instruction| i.shape.as_array().is_some_and(|a| a.rank() == 0);
    matches!(instr.opcode, Opcode::Constant | Opcode::Iota)
        || scalar(instr)
        || (instr.opcode == Opcode::Broadcast
            && instr
                .operands
                .first()
                .is_some_and(|&o| scalar(&entry.instructions[o.0])))
}

/// The dimensions of an array-shaped instruction (layouts aside: the reduction emitter
/// reads the reduce at the epilogue's logical index).
fn dims(instr: &Instruction) -> Option<&[i64]> {
    instr.shape.as_array().map(|a| a.dims.as_slice())
}

/// The epilogue through which `root` computes `reduce`, when the reduction emitter takes
/// it (`emitters::reduction`): a chain of elementwise ops with the reduce's dimensions from
/// the reduce to `root`, each reading the chain once (`mean = sum / n`,
/// `rsqrt(var / n + eps)`) and otherwise only side values ([`side_value`]: `log(sum) +
/// max`, where `max` is another reduction's result read at the same index), so that it is
/// computed once per reduced element, at that element's index. A reshape, even to `[n, 1]`,
/// ends the chain. `position` orders `c`'s instructions operands first. The ops from
/// `root` toward the reduce; `None` when there is no such chain.
pub(crate) fn epilogue_chain(
    c: &Computation,
    root: InstrId,
    reduce: InstrId,
    position: &[usize],
) -> Option<Vec<InstrId>> {
    let reduced = c.instructions[reduce.0].shape.as_array()?;
    let mut budget = MAX_EPILOGUE_SIDE_VALUES;
    let mut chain = Vec::new();
    let mut id = root;
    while id != reduce {
        let instr = &c.instructions[id.0];
        if !elementwise(instr.opcode) || dims(instr) != Some(reduced.dims.as_slice()) {
            return None;
        }
        chain.push(id);
        let mut next = None;
        for &o in &instr.operands {
            if next == Some(o) || side_value(c, o, reduce, position, &mut budget) {
                continue;
            }
            if next.replace(o).is_some() {
                return None;
            }
        }
        id = next?;
    }
    Some(chain)
}

/// The most instructions [`epilogue_chain`] looks at in an epilogue's side values: a
/// bound, so that finding the epilogues of a program stays linear in its size.
const MAX_EPILOGUE_SIDE_VALUES: usize = 64;

/// Whether `id` is a side value of the epilogue of `reduce`: what an epilogue op reads
/// besides the chain, computed at the reduced element's index without the reduce —
/// constants, parameters, broadcast scalars, and elementwise ops with the reduce's
/// dimensions over values computed before the reduce (which therefore cannot depend on it).
fn side_value(
    c: &Computation,
    id: InstrId,
    reduce: InstrId,
    position: &[usize],
    budget: &mut usize,
) -> bool {
    let reduced = c.instructions[reduce.0].shape.as_array().map(|a| &a.dims);
    let before_reduce = |i: InstrId| {
        matches!(
            c.instructions[i.0].opcode,
            Opcode::Parameter | Opcode::Constant
        ) || position[i.0] < position[reduce.0]
    };
    let mut stack = vec![id];
    while let Some(i) = stack.pop() {
        if i == reduce || *budget == 0 {
            return false;
        }
        *budget -= 1;
        let instr = &c.instructions[i.0];
        let scalar_operand = instr.operands.first().filter(|&&o| {
            c.instructions[o.0]
                .shape
                .as_array()
                .is_some_and(|a| a.rank() == 0)
        });
        match (instr.opcode, scalar_operand) {
            (Opcode::Broadcast, Some(&scalar)) if before_reduce(scalar) => {}
            (op, _) if elementwise(op) && instr.shape.as_array().map(|a| &a.dims) == reduced => {
                stack.extend(instr.operands.iter().copied());
            }
            _ if before_reduce(i) => {}
            _ => return false,
        }
    }
    true
}

/// Whether the epilogue `chain` of `reduce` reads (as a side value) another reduce of the
/// same input shape over the same dimensions that `reduce` does not depend on: a sibling.
/// The two then make one fusion with both reductions as outputs, one pass over their
/// common input (a masked mean's sums of `x * mask` and of `mask`), and the epilogue that
/// combines them a small kernel after it; the reduction emitter computes an epilogue from
/// one hero only. (Found within a bounded walk, so that the rule stays linear.)
fn reads_a_sibling(c: &Computation, chain: &[InstrId], reduce: InstrId) -> bool {
    let key = |r: InstrId| {
        let r = &c.instructions[r.0];
        let input = r.operands.first().and_then(|&i| dims(&c.instructions[i.0]));
        (input, r.int_list("dimensions"))
    };
    let own = key(reduce);
    let mut budget = MAX_EPILOGUE_SIDE_VALUES;
    let mut stack: Vec<InstrId> = chain
        .iter()
        .flat_map(|&m| c.instructions[m.0].operands.iter().copied())
        .filter(|o| !chain.contains(o) && *o != reduce)
        .collect();
    while let Some(i) = stack.pop() {
        if budget == 0 {
            return false;
        }
        budget -= 1;
        let instr = &c.instructions[i.0];
        if instr.opcode == Opcode::Reduce {
            if key(i) == own && !depends_on(c, reduce, i) {
                return true;
            }
        } else if elementwise(instr.opcode) {
            stack.extend(instr.operands.iter().copied());
        }
    }
    false
}

/// Whether `user` reads `value`, directly or through others, found within a bounded walk
/// (beyond the bound, the answer is yes: the cautious one for [`reads_a_sibling`]).
fn depends_on(c: &Computation, user: InstrId, value: InstrId) -> bool {
    let mut budget = 4 * MAX_EPILOGUE_SIDE_VALUES;
    let mut seen = std::collections::HashSet::new();
    let mut stack = c.instructions[user.0].operands.clone();
    while let Some(i) = stack.pop() {
        if i == value || budget == 0 {
            return true;
        }
        budget -= 1;
        if seen.insert(i) {
            stack.extend(c.instructions[i.0].operands.iter().copied());
        }
    }
    false
}

/// The fusion a producer `p` that is one of the program's results joins as an extra output
/// (XLA's producer-consumer multi-output fusion): when its other users are all in one loop
/// fusion whose root has its shape, it is computed there and written out once, instead of
/// in a kernel of its own that the fusion reads back (Adam's `m` and `v`, which the
/// parameter update also reads). Only the ENTRY's ROOT tuple may read it outside, so that
/// no cycle through the entry can form.
fn output_of_consumer(
    entry: &Computation,
    p: InstrId,
    outside_users: &[InstrId],
    groups: &[usize],
    roots: &[InstrId],
) -> Option<usize> {
    let instr = &entry.instructions[p.0];
    let &[g] = groups else {
        return None;
    };
    let only_results_outside =
        outside_users == [entry.root] && entry.instruction(entry.root).opcode == Opcode::Tuple;
    let same_shape = instr.shape.as_array().is_some()
        && instr.shape == entry.instructions[roots[g].0].shape
        && instr.opcode != Opcode::Reduce
        && !in_place_hero(instr);
    (only_results_outside && same_shape).then_some(g)
}

/// The reduction fusion an expensive producer `p` read by several fusions joins as a side
/// output (XLA's reduction multi-output fusion): one of them has a reduce hero whose input
/// has `p`'s shape, and it comes first (its root before every other reader's, so that no
/// reader feeds it). That fusion computes `p` in its prologue anyway and writes it out once;
/// the others read it back, instead of a kernel of its own making it (softmax's
/// `exp(x - max)`, summed and then divided by the sum).
fn side_output_of_reduction(
    entry: &Computation,
    p: InstrId,
    groups: &[usize],
    roots: &[InstrId],
    hero_found: &[bool],
    position: &[usize],
) -> Option<usize> {
    let instr = &entry.instructions[p.0];
    // A reduce would be a second hero, reducing another shape, and a scatter or a
    // dynamic-update-slice roots a fusion of its own (it is written in place): neither is a
    // side output.
    if groups.len() < 2
        || cheap(instr)
        || instr.shape.as_array().is_none()
        || instr.opcode == Opcode::Reduce
        || in_place_hero(instr)
    {
        return None;
    }
    let &first = groups.iter().min_by_key(|&&g| position[roots[g].0])?;
    let hero = &entry.instructions[roots[first].0];
    // The reduction emitter writes side outputs at the input's index; a reduce it does not
    // take goes to the loop emitter, whose outputs must all have the reduce's shape.
    let reads_like_hero = hero.opcode == Opcode::Reduce
        && hero.operands.len() == 2
        && entry.instructions[hero.operands[0].0].shape == instr.shape
        && instr
            .shape
            .as_array()
            .is_some_and(|input| ReductionDimensions::takes(hero, input));
    (hero_found[first] && reads_like_hero).then_some(first)
}

/// The most outputs a fusion of siblings has (XLA bounds a fusion's operands and outputs
/// too): beyond, the next sibling starts a fusion of its own.
const MAX_SIBLING_OUTPUTS: usize = 8;

/// Siblings in one kernel (XLA's sibling multi-output fusion): fusions that read a value in
/// common and iterate over the same space become one fusion with all their outputs, which
/// reads the common input once. Two kinds qualify:
///
/// * reductions whose roots reduce arrays of one shape over the same dimensions: the
///   reduction emitter computes them in one pass over the input (a masked mean's sum and
///   count);
/// * loop fusions whose roots have the same dimensions (`sin(x)` and `cos(x)` as two
///   results), with their extra outputs (of that shape too): the loop emitter writes every
///   output at each index.
///
/// A fusion joins an earlier sibling only when everything it reads from outside is computed
/// before that sibling's root: the merged fusion then takes the earlier one's place in the
/// entry, where all its inputs exist, and neither fusion can feed the other.
fn merge_siblings(entry: &Computation, groups: Vec<Group>) -> Vec<Group> {
    let position = positions(entry);
    // What makes fusions siblings: whether they reduce, the dimensions they iterate over
    // (a reduce's input, a loop's root) and the reduced dimensions.
    type Key = (bool, Vec<i64>, Vec<i64>);
    let key = |g: &Group| -> Option<Key> {
        let root = &entry.instructions[g.root.0];
        // An in-place fusion (a scatter, a dynamic-update-slice) writes only part of its
        // output, and its emitter writes no other output; nor does the sort emitter.
        if in_place_hero(root) || sorts(root) {
            return None;
        }
        if g.has_reduce {
            // A reduction's side outputs have other shapes than its reduce.
            if !g.extra_outputs.is_empty() {
                return None;
            }
            let input = entry.instructions.get(root.operands.first()?.0)?;
            let single = root.opcode == Opcode::Reduce && root.operands.len() == 2;
            let dims = input.shape.as_array()?.dims.clone();
            let reduced = root.int_list("dimensions")?.to_vec();
            single.then_some((true, dims, reduced))
        } else {
            Some((false, root.shape.as_array()?.dims.clone(), Vec::new()))
        }
    };
    // The values a fusion reads from outside, sorted.
    let inputs = |g: &Group| -> Vec<InstrId> {
        let members: std::collections::HashSet<InstrId> = g.members.iter().copied().collect();
        let mut read: Vec<InstrId> = g
            .members
            .iter()
            .flat_map(|&m| entry.instructions[m.0].operands.iter().copied())
            .filter(|o| !members.contains(o))
            .collect();
        read.sort_unstable();
        read.dedup();
        read
    };
    let mut merged: Vec<Group> = Vec::with_capacity(groups.len());
    // Per (key, value read): the fusions kept so far that may take siblings, by their
    // root's position (to index in `merged`). A fusion leaves every list it is in once it
    // has MAX_SIBLING_OUTPUTS outputs, so that a lookup does not step over full ones.
    let mut open: HashMap<(Key, InstrId), BTreeMap<usize, usize>> = HashMap::new();
    let mut lists_of: HashMap<usize, Vec<(Key, InstrId)>> = HashMap::new();
    for g in groups {
        let Some(k) = key(&g) else {
            merged.push(g);
            continue;
        };
        let read = inputs(&g);
        let room = |m: usize| {
            merged[m].extra_outputs.len() + g.extra_outputs.len() + 2 <= MAX_SIBLING_OUTPUTS
        };
        // A sibling qualifies when its root comes after everything `g` reads.
        let after = read.iter().map(|r| position[r.0] + 1).max().unwrap_or(0);
        let sibling = read
            .iter()
            .filter_map(|&r| {
                let candidates = open.get(&(k.clone(), r))?;
                let valid = candidates.range(after..).map(|(_, &m)| m);
                valid.take(MAX_SIBLING_OUTPUTS).find(|&m| room(m))
            })
            .min();
        match sibling {
            Some(at) => {
                let into = &mut merged[at];
                into.extra_outputs.push(g.root);
                into.extra_outputs.extend(g.extra_outputs);
                into.members.extend(g.members);
                if into.extra_outputs.len() + 1 >= MAX_SIBLING_OUTPUTS {
                    let root_position = position[into.root.0];
                    for list in lists_of.remove(&at).unwrap_or_default() {
                        if let Some(candidates) = open.get_mut(&list) {
                            candidates.remove(&root_position);
                        }
                    }
                }
            }
            None => {
                let lists: Vec<(Key, InstrId)> = read.iter().map(|&r| (k.clone(), r)).collect();
                for list in &lists {
                    open.entry(list.clone())
                        .or_default()
                        .insert(position[g.root.0], merged.len());
                }
                lists_of.insert(merged.len(), lists);
                merged.push(g);
            }
        }
    }
    // Members in entry order, as `fusion_computation` adds them; a cheap producer copied
    // into two siblings is one member of the merged fusion.
    for g in &mut merged {
        g.members.sort_by_key(|m| position[m.0]);
        g.members.dedup();
    }
    merged
}

/// Whether fusion `g` would read some element of a producer more than once per output
/// element: one of the producer's `users` in `g` expands it, or is itself so read.
fn reuses_elements(
    entry: &Computation,
    users: &[InstrId],
    g: usize,
    member_of: &[Vec<usize>],
    reused: &[bool],
) -> bool {
    users
        .iter()
        .filter(|u| member_of[u.0].contains(&g))
        .any(|&u| reused[u.0] || expands(entry, u))
}

/// Whether `user` reads some elements of its operands for several of its own elements,
/// as XLA:GPU judges it (`IfFusedReadsElementsMultipleTimes`): a broadcast or gather with
/// more elements than its (first) operand; a reduce-window, whose windows overlap.
fn expands(entry: &Computation, user: InstrId) -> bool {
    let count = |i: InstrId| {
        entry.instructions[i.0]
            .shape
            .as_array()
            .map_or(0, |a| a.element_count())
    };
    let instr = &entry.instructions[user.0];
    match instr.opcode {
        Opcode::Broadcast | Opcode::Gather => instr
            .operands
            .first()
            .is_some_and(|&source| count(user) > count(source)),
        Opcode::ReduceWindow => true,
        _ => false,
    }
}

/// The fusions of `entry`, in the order of their roots.
fn group(entry: &Computation) -> Vec<Group> {
    let n = entry.instructions.len();
    let users = users(entry);
    // The fusions each instruction belongs to (several when duplicated).
    let mut member_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots: Vec<InstrId> = Vec::new();
    // Per fusion: whether a reduce is its hero already, and its other outputs.
    let mut hero_found: Vec<bool> = Vec::new();
    let mut extra_outputs: Vec<Vec<InstrId>> = Vec::new();
    // Per member: whether its fusion reads some of its elements more than once per output
    // element (through a broadcast that expands it, a gather, a reduce-window).
    let mut reused = vec![false; n];
    let order = operands_first(entry);
    let position = positions(entry);
    for &p in order.iter().rev() {
        let instr = &entry.instructions[p.0];
        if !fusible(instr) {
            continue;
        }
        let outside_users: Vec<InstrId> = users[p.0]
            .iter()
            .copied()
            .filter(|u| member_of[u.0].is_empty() || !fusible(&entry.instructions[u.0]))
            .collect();
        let outside = p == entry.root || !outside_users.is_empty();
        let mut groups: Vec<usize> = users[p.0]
            .iter()
            .flat_map(|u| member_of[u.0].iter().copied())
            .collect();
        groups.sort_unstable();
        groups.dedup();
        let joins = !outside
            && match (instr.opcode, groups.as_slice()) {
                // A reduce joins only as the hero of its epilogue.
                // A reduce joins only as the hero of its epilogue, and not when the epilogue
                // reads a sibling reduction (see `reads_a_sibling`).
                (Opcode::Reduce, &[g]) => {
                    !hero_found[g]
                        && epilogue_chain(entry, roots[g], p, &position)
                            .is_some_and(|chain| !reads_a_sibling(entry, &chain, p))
                }
                (Opcode::Reduce, _) => false,
                // A scatter or a dynamic-update-slice roots a fusion of its own (it is
                // written in place); so does a sort (`emitters::sort`: its kernel sorts
                // whole rows, its users read them at other positions).
                _ if in_place_hero(instr) || sorts(instr) => false,
                (_, [g]) if breaks_in_place(entry, p, roots[*g]) => false,
                (_, gs) if gs.iter().any(|&g| breaks_in_place(entry, p, roots[g])) => false,
                // An expensive producer joins a consumer that reads each of its elements
                // once; one that broadcasts it would compute it again for every copy
                // (`rsqrt(var + eps)` per element of a layer norm), so it is computed
                // once elsewhere instead: in a kernel of its own or as an epilogue
                // (XLA's `ReusesOperandElements` rule).
                (_, [g]) => {
                    cheap(instr) || !reuses_elements(entry, &users[p.0], *g, &member_of, &reused)
                }
                (_, []) => false,
                // Duplicated into each user fusion when cheap, in at most MAX_COPIES
                // fusions: copies of copies along a chain of cheap ops would otherwise put
                // the whole chain into every later fusion (quadratic in its length).
                _ => cheap(instr) && (groups.len() <= MAX_COPIES || tiny(entry, instr)),
            };
        if joins {
            // Every user in a fusion shares one with `p` (`groups` is the union of theirs).
            reused[p.0] = users[p.0]
                .iter()
                .any(|&u| !member_of[u.0].is_empty() && (reused[u.0] || expands(entry, u)));
            for &g in &groups {
                hero_found[g] |= instr.opcode == Opcode::Reduce;
            }
            member_of[p.0] = groups;
        } else if let Some(g) = output_of_consumer(entry, p, &outside_users, &groups, &roots)
            .filter(|&g| !hero_found[g] && !sorts(instr))
        {
            member_of[p.0] = vec![g];
            extra_outputs[g].push(p);
        } else if let Some(g) = (!outside && !sorts(instr))
            .then(|| side_output_of_reduction(entry, p, &groups, &roots, &hero_found, &position))
            .flatten()
        {
            member_of[p.0] = vec![g];
            extra_outputs[g].push(p);
        } else if instr.opcode == Opcode::Constant && groups.is_empty() {
            // Read only outside fusions: it stays a constant of the entry.
        } else {
            member_of[p.0] = vec![roots.len()];
            roots.push(p);
            // An in-place fusion takes no extra outputs either: its output is written in
            // place; nor does a sort's, whose kernel writes whole sorted rows.
            hero_found.push(instr.opcode == Opcode::Reduce || sorts(instr) || in_place_hero(instr));
            extra_outputs.push(Vec::new());
        }
    }
    let mut groups: Vec<Group> = roots
        .iter()
        .zip(extra_outputs)
        .map(|(&root, mut extra_outputs)| {
            // In the order of the entry (they were found last-first).
            extra_outputs.reverse();
            Group {
                root,
                extra_outputs,
                members: Vec::new(),
                has_reduce: false,
            }
        })
        .collect();
    for &i in &order {
        for &g in &member_of[i.0] {
            groups[g].members.push(i);
            groups[g].has_reduce |= entry.instructions[i.0].opcode == Opcode::Reduce;
        }
    }
    // Roots were found last-first; the entry lists its fusions operands first.
    groups.sort_by_key(|g| position[g.root.0]);
    groups
}

/// The fused computation of `group`, and the entry values it reads (its operands).
pub(crate) fn fusion_computation(
    entry: &Computation,
    group: &Group,
    name: String,
) -> (Computation, Vec<InstrId>) {
    let mut instructions: Vec<Instruction> = Vec::new();
    let mut operands: Vec<InstrId> = Vec::new();
    let mut local: HashMap<InstrId, InstrId> = HashMap::new();
    let mut names = Names::default();
    for &m in &group.members {
        let instr = &entry.instructions[m.0];
        let mut copy = instr.clone();
        copy.operands = Vec::with_capacity(instr.operands.len());
        for &o in &instr.operands {
            let id = match local.get(&o) {
                Some(&id) => id,
                None => {
                    let outer = &entry.instructions[o.0];
                    let number = operands.len();
                    operands.push(o);
                    let param = Instruction {
                        name: names.unique(&format!("param_{number}")),
                        opcode: Opcode::Parameter,
                        shape: outer.shape.clone(),
                        operands: Vec::new(),
                        payload: Payload::Parameter(number as i64),
                        attributes: Vec::new(),
                        spans: outer.spans.clone(),
                    };
                    instructions.push(param);
                    let id = InstrId(instructions.len() - 1);
                    local.insert(o, id);
                    id
                }
            };
            copy.operands.push(id);
        }
        copy.name = names.unique(&instr.name);
        instructions.push(copy);
        local.insert(m, InstrId(instructions.len() - 1));
    }
    let mut root = local[&group.root];
    if !group.extra_outputs.is_empty() {
        // A multi-output fusion: its ROOT is the tuple of the outputs.
        let outputs: Vec<InstrId> = std::iter::once(group.root)
            .chain(group.extra_outputs.iter().copied())
            .collect();
        let shapes = outputs
            .iter()
            .map(|o| entry.instructions[o.0].shape.clone())
            .collect();
        instructions.push(Instruction {
            name: names.unique("outputs"),
            opcode: Opcode::Tuple,
            shape: hlo::Shape::Tuple(shapes),
            operands: outputs.iter().map(|o| local[o]).collect(),
            payload: Payload::None,
            attributes: Vec::new(),
            spans: entry.instructions[group.root.0].spans.clone(),
        });
        root = InstrId(instructions.len() - 1);
    }
    let computation = Computation {
        name,
        span: entry.instructions[group.root.0].spans.whole,
        is_entry: false,
        signature: None,
        instructions,
        root,
        attributes: Vec::new(),
    };
    (computation, operands)
}

/// The entry with each fusion's members replaced by one `fusion` instruction.
fn rewrite_entry<'a>(
    entry: &Computation,
    groups: &[Group],
    fusion_of_root: &HashMap<InstrId, (ComputationId, Vec<InstrId>)>,
    fused_name: impl Fn(ComputationId) -> &'a String,
) -> Computation {
    let n = entry.instructions.len();
    let (mut absorbed, mut has_reduce) = (vec![false; n], vec![false; n]);
    for g in groups {
        for &m in &g.members {
            absorbed[m.0] |= m != g.root;
        }
        has_reduce[g.root.0] = g.has_reduce;
    }
    let mut instructions: Vec<Instruction> = Vec::new();
    let mut new_id: Vec<InstrId> = vec![InstrId(usize::MAX); entry.instructions.len()];
    let extra_outputs: HashMap<InstrId, &[InstrId]> = groups
        .iter()
        .map(|g| (g.root, g.extra_outputs.as_slice()))
        .collect();
    let mut names = Names::of(entry);
    for i in operands_first(entry) {
        if absorbed[i.0] {
            continue;
        }
        let instr = &entry.instructions[i.0];
        let extra = extra_outputs.get(&i).copied().unwrap_or_default();
        let copy = match fusion_of_root.get(&i) {
            Some((computation, operands)) => {
                let input = has_reduce[i.0];
                let (name, shape) = if extra.is_empty() {
                    (instr.name.clone(), instr.shape.clone())
                } else {
                    let outputs = std::iter::once(i).chain(extra.iter().copied());
                    let shapes = outputs.map(|o| entry.instructions[o.0].shape.clone());
                    let name = names.unique(&format!("{}.fusion", instr.name));
                    (name, hlo::Shape::Tuple(shapes.collect()))
                };
                Instruction {
                    name,
                    opcode: Opcode::Fusion,
                    shape,
                    operands: operands.iter().map(|o| new_id[o.0]).collect(),
                    payload: Payload::None,
                    attributes: vec![
                        Attribute {
                            name: "kind".into(),
                            value: AttrValue::Enum(if input { "kInput" } else { "kLoop" }.into()),
                            span: instr.spans.whole,
                        },
                        Attribute {
                            name: "calls".into(),
                            value: AttrValue::Computation(hlo::module::ComputationRef {
                                name: fused_name(*computation).clone(),
                                id: *computation,
                                span: instr.spans.whole,
                            }),
                            span: instr.spans.whole,
                        },
                    ],
                    spans: instr.spans.clone(),
                }
            }
            None => {
                let mut copy = instr.clone();
                copy.operands = instr.operands.iter().map(|o| new_id[o.0]).collect();
                copy
            }
        };
        instructions.push(copy);
        new_id[i.0] = InstrId(instructions.len() - 1);
        if !extra.is_empty() {
            // Each output is read through a get-tuple-element with the output's name.
            let fusion = new_id[i.0];
            for (k, &output) in std::iter::once(&i).chain(extra).enumerate() {
                let original = &entry.instructions[output.0];
                instructions.push(Instruction {
                    name: original.name.clone(),
                    opcode: Opcode::GetTupleElement,
                    shape: original.shape.clone(),
                    operands: vec![fusion],
                    payload: Payload::None,
                    attributes: vec![Attribute {
                        name: "index".into(),
                        value: AttrValue::Int(k as i64),
                        span: original.spans.whole,
                    }],
                    spans: original.spans.clone(),
                });
                new_id[output.0] = InstrId(instructions.len() - 1);
            }
        }
    }
    Computation {
        root: new_id[entry.root.0],
        instructions,
        ..entry.clone()
    }
}
