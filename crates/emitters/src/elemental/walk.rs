//! The operand walk of the elemental emitter: plain operand chains (elementwise ops,
//! tuples, index transforms) are emitted from an explicit stack, in the order a recursive
//! emission would produce, so that no chain length exhausts the native stack; ops that read
//! their operands themselves recurse, within [`MAX_OPERAND_RECURSION`] and
//! [`MAX_REGION_DEPTH`]. Per region, what has been emitted is cached.

use hlo::{InstrId, Instruction, Opcode};
use ir::intern::FxHashMap;
use ir::{Type, Value};

use super::{ElementalEmitter, R, Scope, unsupported};
use crate::types::leaf_element_types;

/// How many ops that read their operands themselves (reduce, pad, gather, dynamic slices,
/// ...) may be emitted inside each other's operands: each level is a few native stack
/// frames, so a deeper chain would overflow the compiler's stack. Real fusions have a
/// handful; past the limit is a located error.
pub const MAX_OPERAND_RECURSION: usize = 10_000;

/// How deep the regions (loop bodies, branches) that one value opens may nest: half of
/// what the IR reader accepts ([`ir::parser::MAX_REGION_NESTING`]), leaving the other half
/// to the kernel around the value (module, functions, the emitters' loops) and to the loops
/// that the passes add, so that every stage's IR stays readable. A `concatenate` of N
/// operands nests N - 1 branches; a chain of `pad`s one each.
pub const MAX_REGION_DEPTH: usize = ir::parser::MAX_REGION_NESTING / 2;

/// What one region has emitted, so that nothing is emitted twice in it.
#[derive(Default)]
pub(super) struct RegionCache {
    /// Values by (instruction, index values).
    values: FxHashMap<(InstrId, Vec<Value>), Vec<Value>>,
    /// Operand indices by (instruction, operand number, index values): the operand walk
    /// computes them before the op itself is emitted, which then reads them from here.
    operand_indices: FxHashMap<(InstrId, usize, Vec<Value>), Vec<Value>>,
}

/// An instruction whose plain operands (see [`ElementalEmitter::plain_operand_count`]) are
/// being emitted before it, on the operand walk's stack.
struct PendingValue {
    id: InstrId,
    index: Vec<Value>,
    next_operand: usize,
    /// Its plain operands; `None` for an op that reads its operands itself.
    operand_count: Option<usize>,
}

impl ElementalEmitter<'_, '_> {
    /// The values of `id` at `index` (one per leaf of its shape).
    ///
    /// Plain operands are emitted first, depth first from an explicit stack, in the order a
    /// recursive emission would produce; an op is emitted once all its plain operands are
    /// in the cache, so emitting it recurses no further than its region-emitting operands.
    pub fn emit(&mut self, id: InstrId, index: &[Value]) -> R<Vec<Value>> {
        if let Some(v) = self.cached(id, index) {
            return Ok(v.clone());
        }
        let mut stack = vec![self.pending(id, index.to_vec())?];
        loop {
            let top = stack
                .last_mut()
                .expect("the walk ends when its root is emitted");
            if top.next_operand < top.operand_count.unwrap_or(0) {
                let (user, k) = (top.id, top.next_operand);
                top.next_operand += 1;
                let user_index = top.index.clone();
                let operand_index = self.operand_index(user, k, &user_index)?;
                let operand = self.instr(user).operands[k];
                if self.cached(operand, &operand_index).is_none() {
                    stack.push(self.pending(operand, operand_index)?);
                }
                continue;
            }
            let done = stack.pop().expect("the stack is not empty");
            let values = if done.operand_count.is_some() {
                self.emit_uncached(done.id, &done.index)?
            } else {
                self.emit_nested(done.id, &done.index)?
            };
            self.cache
                .last_mut()
                .expect("a cache scope")
                .values
                .insert((done.id, done.index), values.clone());
            if stack.is_empty() {
                return Ok(values);
            }
        }
    }

    fn cached(&self, id: InstrId, index: &[Value]) -> Option<&Vec<Value>> {
        let key = (id, index.to_vec());
        self.cache.iter().rev().find_map(|c| c.values.get(&key))
    }

    fn pending(&self, id: InstrId, index: Vec<Value>) -> R<PendingValue> {
        let operand_count = self.plain_operand_count(id)?;
        Ok(PendingValue {
            id,
            index,
            next_operand: 0,
            operand_count,
        })
    }

    /// How many of `id`'s operands [`Self::emit_uncached`] reads, in order and in the current
    /// region, as `operand(id, k, index, &[])`: all of them for elementwise ops, tuples and
    /// index transforms, none for leaves. `None` for calls of other subgraphs and ops that
    /// emit regions, which read their operands themselves (inside loops and branches, or at
    /// indices they compute).
    fn plain_operand_count(&self, id: InstrId) -> R<Option<usize>> {
        let instr = self.instr(id);
        if self.belongs_to_other_subgraph(id) {
            return Ok(None);
        }
        // The op's own type error comes before any of its operands' (as when recursing).
        self.element_types(instr)?;
        use Opcode::*;
        Ok(match instr.opcode {
            Parameter | Constant | Iota => Some(0),
            Gather | Reduce | ReduceWindow | Dot | DynamicUpdateSlice | Pad | Concatenate
            | DynamicSlice => None,
            GetTupleElement | Broadcast | Transpose | Reshape | Slice | Reverse | Copy
            | Bitcast => Some(1),
            _ => Some(instr.operands.len()),
        })
    }

    /// Emits an op that reads its operands itself, which recurses: counted against
    /// [`MAX_OPERAND_RECURSION`].
    fn emit_nested(&mut self, id: InstrId, index: &[Value]) -> R<Vec<Value>> {
        if self.operand_recursion >= MAX_OPERAND_RECURSION {
            let instr = self.instr(id);
            return Err(unsupported(
                instr.spans.whole,
                format!(
                    "'{}' is nested more than {MAX_OPERAND_RECURSION} deep in ops that read \
                     their operands themselves (reduce, dot, pad, gather, concatenate, \
                     dynamic slices)",
                    instr.name
                ),
            ));
        }
        self.operand_recursion += 1;
        let values = self.emit_uncached(id, index);
        self.operand_recursion -= 1;
        values
    }

    /// Whether `id` is another subgraph's, to be called. A parameter or a constant is read
    /// where it is used even when it roots a function (as an output of the fusion), except
    /// with XLA's choices, which call the function an emitter asked for.
    pub(super) fn belongs_to_other_subgraph(&self, id: InstrId) -> bool {
        let instr = self.instr(id);
        let read_in_place = matches!(instr.opcode, Opcode::Parameter | Opcode::Constant)
            && !self.cx.target.matches_xla();
        matches!(self.scope, Scope::Subgraph(current)
            if !read_in_place
                && self.cx.partition.subgraph_of(id).is_some_and(|owner| owner != current))
    }

    pub(super) fn element_types(&self, instr: &Instruction) -> R<Vec<Type>> {
        leaf_element_types(&instr.shape).map_err(|e| {
            unsupported(
                instr.spans.whole,
                format!("{e} in {} '{}'", instr.opcode, instr.name),
            )
        })
    }

    /// Runs `f` with a fresh cache for a region just opened (a loop body, a branch) by
    /// `id`; refuses regions nested past [`MAX_REGION_DEPTH`].
    pub(super) fn in_region<T>(&mut self, id: InstrId, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        // The function body's cache is the first; each open region adds one.
        if self.cache.len() > MAX_REGION_DEPTH {
            let instr = self.instr(id);
            return Err(unsupported(
                instr.spans.whole,
                format!(
                    "'{}' nests loops and branches more than {MAX_REGION_DEPTH} deep (a \
                     concatenate of N operands nests N - 1 branches, a pad or a reduce one or \
                     more each)",
                    instr.name
                ),
            ));
        }
        self.cache.push(RegionCache::default());
        let result = f(self);
        self.cache.pop();
        result
    }

    /// The index at which `id` at `index` reads operand `k`, computed once per region.
    pub(super) fn operand_index(
        &mut self,
        id: InstrId,
        k: usize,
        index: &[Value],
    ) -> R<Vec<Value>> {
        let key = (id, k, index.to_vec());
        if let Some(v) = self
            .cache
            .iter()
            .rev()
            .find_map(|c| c.operand_indices.get(&key))
        {
            return Ok(v.clone());
        }
        let map = self.per_op_map(id, k)?;
        if map.num_symbols() > 0 {
            // Several operand elements per element (a bitcast-convert to a wider type), which
            // an op read elementwise cannot combine.
            let instr = self.instr(id);
            let what = format!(
                "{} '{}' reads several elements of operand {k} per element",
                instr.opcode, instr.name
            );
            return Err(unsupported(instr.spans.whole, what));
        }
        let operand_index = self.apply(&map, index, &[]);
        self.cache
            .last_mut()
            .expect("a cache scope")
            .operand_indices
            .insert(key, operand_index.clone());
        Ok(operand_index)
    }
}
