//! The fusion passes: HLO-to-HLO passes run before partitioning, on modules that hold no
//! fusion yet (what `jax.jit(f).lower(x).as_text(dialect="hlo")` gives: XLA's input, before
//! any of its passes). Each pass is one file and one [`HloPass`] below; their order, each
//! with why it is there, is the start of the compiler's one pipeline
//! (`driver::pipeline::FUSION_PASSES`), whose runner verifies the module after each
//! ([`run_pass`]), times it and shows it to `--dump-after-each-pass`.

mod added;
mod canonicalize_gathers;
mod cse;
mod dce;
mod dead_computations;
mod explain;
mod fuse;
mod in_place_layouts;
mod inline_calls;
mod inline_fusions;
mod long_sorts;
mod move_reshapes;
mod normalize_reductions;
mod normalize_topk;
mod rows;
mod simplify;
mod sort_rewriter;
mod zero_sized;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::time::{Duration, Instant};

use hlo::{Computation, Diagnostic, HloModule, InstrId, Instruction, Opcode};

pub(crate) use added::{Added, attribute, scalar_broadcast};

pub use explain::explain_fusion;

/// An HLO-to-HLO pass: `Ok(true)` when it changed the module.
pub struct HloPass {
    /// The flag-style name (`inline-calls`).
    pub name: &'static str,
    /// The name in dump headers (`InlineCalls`), as MLIR prints pass names.
    pub display_name: &'static str,
    pub run: fn(&mut HloModule) -> Result<bool, Diagnostic>,
}

impl HloPass {
    const fn new(
        name: &'static str,
        display_name: &'static str,
        run: fn(&mut HloModule) -> Result<bool, Diagnostic>,
    ) -> HloPass {
        HloPass {
            name,
            display_name,
            run,
        }
    }
}

/// Fusions made plain instructions again (`inline_fusions.rs`).
pub const INLINE_FUSIONS: HloPass =
    HloPass::new("inline-fusions", "InlineFusions", inline_fusions::run);

/// Calls replaced by their callees' instructions (`inline_calls.rs`).
pub const INLINE_CALLS: HloPass = HloPass::new("inline-calls", "InlineCalls", inline_calls::run);

/// Computations nothing reaches removed (`dead_computations.rs`).
pub const REMOVE_DEAD_COMPUTATIONS: HloPass = HloPass::new(
    "remove-dead-computations",
    "RemoveDeadComputations",
    dead_computations::run,
);

/// Gathers in XLA's canonical form (`canonicalize_gathers.rs`).
pub const CANONICALIZE_GATHERS: HloPass = HloPass::new(
    "canonicalize-gathers",
    "CanonicalizeGathers",
    canonicalize_gathers::run,
);

/// `topk` as XLA's `TopK` custom-call (`normalize_topk.rs`).
pub const NORMALIZE_TOPK: HloPass =
    HloPass::new("normalize-topk", "TopkRewriter", normalize_topk::run);

/// Sorts whose rows no block holds left to CUB's radix sort (`sort_rewriter.rs`).
pub const SORT_REWRITER: HloPass =
    HloPass::new("sort-rewriter", "SortRewriter", sort_rewriter::run);

/// Sorts whose rows no block holds, and CUB does not take, as a chain of tile sorts and
/// merge steps (`long_sorts.rs`).
pub const SPLIT_LONG_SORTS: HloPass =
    HloPass::new("split-long-sorts", "SplitLongSorts", long_sorts::run);

/// Arrays without elements made constants, and what reads them simplified
/// (`zero_sized.rs`).
pub const ZERO_SIZED_HLO_ELIMINATION: HloPass = HloPass::new(
    "zero-sized-hlo-elimination",
    "ZeroSizedHloElimination",
    zero_sized::run,
);

/// Exact algebraic rewrites (`simplify.rs`).
pub const ALGEBRAIC_SIMPLIFIER: HloPass =
    HloPass::new("algebraic-simplifier", "AlgebraicSimplifier", simplify::run);

/// One instruction per value (`cse.rs`).
pub const HLO_CSE: HloPass = HloPass::new("hlo-cse", "HloCSE", cse::run);

/// Dead instructions removed (`dce.rs`).
pub const HLO_DCE: HloPass = HloPass::new("hlo-dce", "HloDCE", dce::run);

/// The operands updated in place laid out as their results (`in_place_layouts.rs`).
pub const IN_PLACE_LAYOUTS: HloPass =
    HloPass::new("in-place-layouts", "InPlaceLayouts", in_place_layouts::run);

/// Elementwise ops moved before reshapes (`move_reshapes.rs`).
pub const MOVE_RESHAPES: HloPass =
    HloPass::new("move-reshapes", "ReshapeMover", move_reshapes::run);

/// Reduces whose kept and reduced dimensions interleave read a transposed operand
/// (`normalize_reductions.rs`).
pub const NORMALIZE_REDUCTIONS: HloPass = HloPass::new(
    "normalize-reductions",
    "ReductionLayoutNormalizer",
    normalize_reductions::run,
);

/// The kernels: instructions grouped into fusions (`fuse.rs`).
pub const FUSE: HloPass = HloPass::new("fuse", "Fuse", fuse::run);

/// Sorts and top-k's outside fusions made fusions of their own (`fuse.rs`).
pub const OUTLINE_SORTS: HloPass =
    HloPass::new("outline-sorts", "OutlineSorts", fuse::outline_sorts);

/// The `metadata` attribute of `instr` (XLA's op name and source line), which an
/// instruction rewritten into another op keeps.
pub(crate) fn metadata(instr: &Instruction) -> Vec<hlo::Attribute> {
    instr
        .attributes
        .iter()
        .filter(|a| a.name == "metadata")
        .cloned()
        .collect()
}

/// Runs `rewrite` on each of [`control_computations`]: whether it changed any.
pub(crate) fn rewrite_control_computations(
    module: &mut HloModule,
    mut rewrite: impl FnMut(&mut Computation) -> bool,
) -> bool {
    let mut changed = false;
    for id in control_computations(module) {
        changed |= rewrite(&mut module.computations[id.0]);
    }
    changed
}

/// The op each computation applies to its two parameters, if that is all it does (a
/// reducer's), and whether it takes them in order (`op(first, second)`): read before a
/// pass borrows a computation for rewriting.
pub(crate) fn reducer_ops(module: &HloModule) -> Vec<Option<ReducerOp>> {
    module
        .computations
        .iter()
        .map(|c| {
            let op = c.binary_op_of_parameters()?;
            let in_order = c.root_instruction().operands.first() == c.parameters().first();
            Some(ReducerOp { op, in_order })
        })
        .collect()
}

/// A reducer that is one binary op of its parameters ([`reducer_ops`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReducerOp {
    pub(crate) op: Opcode,
    /// `op(accumulator, element)` rather than `op(element, accumulator)`.
    pub(crate) in_order: bool,
}

/// The computations the fusion passes work on: the entry and, reachable from it, the
/// bodies and conditions of `while` loops and the branches of `conditional`s, each once,
/// the entry first. Each runs as a program of its own under the runtime (XLA:GPU's loop is
/// a runtime loop over its body's kernels), so each is simplified and fused on its own.
pub(crate) fn control_computations(module: &HloModule) -> Vec<hlo::ComputationId> {
    let mut order = vec![module.entry];
    let mut next = 0;
    while let Some(&id) = order.get(next) {
        next += 1;
        for instr in &module.computation(id).instructions {
            if matches!(instr.opcode, Opcode::While | Opcode::Conditional) {
                for callee in instr.called_computations() {
                    if !order.contains(&callee.id) {
                        order.push(callee.id);
                    }
                }
            }
        }
    }
    order
}

/// Whether the fusion passes run by default: a module with an `HloModule` header (a whole
/// program) whose entry holds no fusion. A bare list of computations is XLA's emitter
/// test form, whose last computation already is one fusion body.
pub fn wants_fusion(module: &HloModule) -> bool {
    module.header.is_some()
        && !module
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .any(|i| i.opcode == Opcode::Fusion)
}

/// Runs one pass on `module` and verifies what it changed. A pass that leaves a module the
/// verifier rejects is a bug here, and is reported as such (at the offending instruction,
/// naming the pass).
pub fn run_pass(pass: &HloPass, module: &mut HloModule) -> Result<PassRun, Diagnostic> {
    let start = Instant::now();
    let changed = (pass.run)(module)?;
    if changed {
        hlo::verify_module(module).map_err(|mut d| {
            d.notes.push(format!(
                "the module is invalid after the fusion pass '{}' (a bug in hlo-emit)",
                pass.name
            ));
            d
        })?;
    }
    Ok(PassRun {
        changed,
        elapsed: start.elapsed(),
    })
}

/// What one pass did ([`run_pass`]).
#[derive(Clone, Copy, Debug)]
pub struct PassRun {
    pub changed: bool,
    pub elapsed: Duration,
}

/// Whether `opcode` computes each element from the operands' elements at the same index
/// (what fusion may chain, move and make an epilogue of).
pub(crate) fn elementwise(opcode: Opcode) -> bool {
    opcode.is_elementwise_unary()
        || opcode.is_elementwise_binary()
        || matches!(
            opcode,
            Opcode::Convert | Opcode::Compare | Opcode::Select | Opcode::Clamp | Opcode::IsFinite
        )
}

/// Whether `opcode` only computes its result from its operands: no side effect, no
/// state, nothing random. Such an instruction may be removed when nothing reads it and
/// merged with an identical one (`hlo-cse`); any other stays where the program put it.
pub(crate) fn is_pure(opcode: Opcode) -> bool {
    use Opcode::*;
    elementwise(opcode)
        || matches!(
            opcode,
            Bitcast
                | BitcastConvert
                | Broadcast
                | Concatenate
                | Constant
                | Dot
                | DynamicSlice
                | DynamicUpdateSlice
                | Gather
                | GetTupleElement
                | Iota
                | Map
                | Pad
                | Real
                | Imag
                | Complex
                | Reduce
                | ReducePrecision
                | ReduceWindow
                | Reshape
                | Reverse
                | Slice
                | Sort
                | Transpose
                | Tuple
        )
}

/// The instructions whose values are the program's results: the root, and the elements of
/// a tuple root. Rewrites keep them (and their names): two results that become one value,
/// or a result that becomes an input buffer, are the runtime's business, not a kernel's.
pub(crate) fn program_results(c: &Computation) -> Vec<InstrId> {
    let root = &c.instructions[c.root.0];
    let mut results = vec![c.root];
    if root.opcode == Opcode::Tuple {
        results.extend(&root.operands);
    }
    results
}

/// Drops the pure instructions nothing live reads (what a rewrite left behind), so that
/// the fusion pass does not make kernels of them. Live are the root, the parameters (the
/// program's signature), every impure instruction and what they read.
pub(crate) fn remove_dead_code(c: &mut Computation) {
    let n = c.instructions.len();
    let mut live = vec![false; n];
    let mut stack: Vec<usize> = (0..n)
        .filter(|&i| {
            let opcode = c.instructions[i].opcode;
            i == c.root.0 || opcode == Opcode::Parameter || !is_pure(opcode)
        })
        .collect();
    while let Some(i) = stack.pop() {
        if !std::mem::replace(&mut live[i], true) {
            stack.extend(c.instructions[i].operands.iter().map(|o| o.0));
        }
    }
    let kept = (0..n).filter(|&i| live[i]).map(InstrId).collect();
    keep_in_order(c, kept);
}

/// Puts the instructions of `c` operands first (as [`operands_first`] orders them), so that
/// a pass that added instructions at the end prints them before their users.
pub(crate) fn put_operands_first(c: &mut Computation) {
    let order = operands_first(c);
    keep_in_order(c, order);
}

/// Drops the instructions named in `names` that nothing reads and that are not the root (an
/// operand a rewrite stopped reading, whatever its opcode: a fusion too).
pub(crate) fn remove_unread(c: &mut Computation, names: &[String]) {
    let read = users(c);
    let kept = (0..c.instructions.len())
        .map(InstrId)
        .filter(|&i| {
            i == c.root || !read[i.0].is_empty() || !names.contains(&c.instruction(i).name)
        })
        .collect();
    keep_in_order(c, kept);
}

/// Keeps the instructions `order` lists, in that order, every operand and the root
/// renumbered; `order` holds every instruction that a kept one reads.
fn keep_in_order(c: &mut Computation, order: Vec<InstrId>) {
    let mut new_id = vec![InstrId(usize::MAX); c.instructions.len()];
    for (k, &i) in order.iter().enumerate() {
        new_id[i.0] = InstrId(k);
    }
    let mut old: Vec<Option<Instruction>> = std::mem::take(&mut c.instructions)
        .into_iter()
        .map(Some)
        .collect();
    let mut kept: Vec<Instruction> = order
        .iter()
        .map(|i| old[i.0].take().expect("each instruction once"))
        .collect();
    for instr in &mut kept {
        for o in &mut instr.operands {
            *o = new_id[o.0];
        }
    }
    c.instructions = kept;
    c.root = new_id[c.root.0];
}

/// Equal shapes: element type, bounds, dynamic dimensions and layout (the default one
/// where none was written), element by element for tuples; so that one value may stand for
/// the other without changing any buffer (`algebraic-simplifier`, `hlo-cse`).
pub(crate) fn same_shape(a: &hlo::Shape, b: &hlo::Shape) -> bool {
    use hlo::Shape;
    match (a, b) {
        (Shape::Array(a), Shape::Array(b)) => {
            a.element_type == b.element_type
                && a.dims == b.dims
                && a.dynamic_dims == b.dynamic_dims
                && a.layout_or_default() == b.layout_or_default()
        }
        (Shape::Tuple(a), Shape::Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_shape(x, y))
        }
        _ => false,
    }
}

/// Names taken in a computation, and per name the next suffix to try.
#[derive(Default)]
pub(crate) struct Names {
    pub(crate) taken: HashSet<String>,
    pub(crate) next: HashMap<String, usize>,
}

impl Names {
    /// The names of `computation`'s instructions, taken.
    pub(crate) fn of(computation: &Computation) -> Names {
        Names {
            taken: computation
                .instructions
                .iter()
                .map(|i| i.name.clone())
                .collect(),
            ..Names::default()
        }
    }

    /// `name`, or `name.N` with the next N that is free; recorded as taken. Linear over
    /// many copies of one name (a callee inlined many times).
    pub(crate) fn unique(&mut self, name: &str) -> String {
        if self.taken.insert(name.to_string()) {
            return name.to_string();
        }
        let n = self.next.entry(name.to_string()).or_insert(1);
        loop {
            let candidate = format!("{name}.{n}");
            *n += 1;
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

/// Every instruction of `computation`, operands before users, otherwise in text order
/// (definitions may come in any order in text; unused ones are kept). Kahn's algorithm
/// with the ready instructions in a heap by text position: n log n, whatever the order
/// of the text.
/// Each instruction's place in [`operands_first`] order, by instruction id.
pub(crate) fn positions(computation: &Computation) -> Vec<usize> {
    let mut position = vec![0; computation.instructions.len()];
    for (k, i) in operands_first(computation).into_iter().enumerate() {
        position[i.0] = k;
    }
    position
}

/// Each instruction's users, by instruction id (a user reading one operand twice counted once).
pub(crate) fn users(computation: &Computation) -> Vec<Vec<InstrId>> {
    let mut users: Vec<Vec<InstrId>> = vec![Vec::new(); computation.instructions.len()];
    for (i, instr) in computation.instructions.iter().enumerate() {
        for &o in &instr.operands {
            if users[o.0].last() != Some(&InstrId(i)) {
                users[o.0].push(InstrId(i));
            }
        }
    }
    users
}

pub(crate) fn operands_first(computation: &Computation) -> Vec<InstrId> {
    let n = computation.instructions.len();
    // Text order already puts operands first (as XLA and JAX print): that order, in linear
    // time, is what the heap would give.
    let in_order = computation
        .instructions
        .iter()
        .enumerate()
        .all(|(i, instr)| instr.operands.iter().all(|o| o.0 < i));
    if in_order {
        return (0..n).map(InstrId).collect();
    }
    let mut waiting_on = vec![0usize; n];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, instr) in computation.instructions.iter().enumerate() {
        waiting_on[i] = instr.operands.len();
        for o in &instr.operands {
            users[o.0].push(i);
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..n)
        .filter(|&i| waiting_on[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(i)) = ready.pop() {
        order.push(InstrId(i));
        for &u in &users[i] {
            waiting_on[u] -= 1;
            if waiting_on[u] == 0 {
                ready.push(Reverse(u));
            }
        }
    }
    // The parser rejected cycles, so every instruction was placed.
    order
}
