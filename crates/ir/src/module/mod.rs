//! The IR container: ops, blocks, regions and values in arenas, addressed by small `Copy` ids
//! (Cranelift style), with intrusive use-lists (MLIR style) so that replace-all-uses and
//! erasure cost O(uses), not O(module).
//!
//! A [`Module`] owns everything reachable from its top op (a `builtin.module`). Ops live in
//! doubly linked lists inside blocks, so inserting before/after any op is O(1). Erased ops
//! stay in the arena as tombstones (ids are never reused).

use crate::attrs::{self, Attribute, NamedAttr};
use crate::intern::Ident;
use crate::registry::{OpDef, Registry};
use crate::types::Type;
use std::fmt;

// Where an op was written: diagnostics own locations, the module keeps one per op.
pub use crate::diag::Loc;
use std::sync::Arc;

mod access;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub(crate) u32);

        impl $name {
            /// The arena index.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(
    /// An operation.
    OpId,
    "op"
);
id_type!(
    /// A block (a list of ops with typed arguments).
    BlockId,
    "block"
);
id_type!(
    /// A region (a list of blocks owned by an op).
    RegionId,
    "region"
);
id_type!(
    /// An SSA value: an op result or a block argument.
    Value,
    "v"
);

/// One use of a value: operand `index` of `op`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Use {
    pub op: OpId,
    pub index: u32,
}

/// Where a value comes from.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ValueDef {
    Result {
        op: OpId,
        index: u32,
    },
    Arg {
        block: BlockId,
        index: u32,
    },
    /// Not attached to anything (the parser's forward-reference placeholders).
    Detached,
}

#[derive(Clone, Debug)]
struct Operand {
    value: Value,
    prev: Option<Use>,
    next: Option<Use>,
}

#[derive(Clone, Debug)]
pub(crate) struct OpData {
    name: Ident,
    operands: Vec<Operand>,
    first_result: u32,
    num_results: u32,
    props: Vec<NamedAttr>,
    attrs: Vec<NamedAttr>,
    regions: Vec<RegionId>,
    successors: Vec<BlockId>,
    parent: Option<BlockId>,
    prev: Option<OpId>,
    next: Option<OpId>,
    loc: Loc,
    alive: bool,
}

#[derive(Clone, Debug, Default)]
struct BlockData {
    args: Vec<Value>,
    first: Option<OpId>,
    last: Option<OpId>,
    parent: Option<RegionId>,
}

#[derive(Clone, Debug, Default)]
struct RegionData {
    blocks: Vec<BlockId>,
    parent: Option<OpId>,
}

#[derive(Clone, Debug)]
struct ValueData {
    ty: Type,
    def: ValueDef,
    first_use: Option<Use>,
    name: Option<Box<str>>,
}

/// Everything needed to create an op: MLIR's `OperationState`.
#[derive(Clone, Debug)]
pub struct OpState {
    pub name: Ident,
    pub operands: Vec<Value>,
    pub result_types: Vec<Type>,
    /// Inherent attributes (MLIR properties, printed as `<{...}>` in generic form).
    pub props: Vec<NamedAttr>,
    /// Discardable attributes (`{...}`).
    pub attrs: Vec<NamedAttr>,
    /// Detached regions, owned by the op once created.
    pub regions: Vec<RegionId>,
    pub successors: Vec<BlockId>,
    pub loc: Loc,
    /// A name hint for the results (`thread_id_x` prints as `%thread_id_x`).
    pub result_name: Option<String>,
}

impl OpState {
    pub fn new(name: &str) -> OpState {
        OpState::with_ident(Ident::new(name))
    }

    pub fn with_ident(name: Ident) -> OpState {
        OpState {
            name,
            operands: Vec::new(),
            result_types: Vec::new(),
            props: Vec::new(),
            attrs: Vec::new(),
            regions: Vec::new(),
            successors: Vec::new(),
            loc: Loc::UNKNOWN,
            result_name: None,
        }
    }

    pub fn operands(mut self, operands: &[Value]) -> OpState {
        self.operands.extend_from_slice(operands);
        self
    }

    pub fn results(mut self, types: &[Type]) -> OpState {
        self.result_types.extend_from_slice(types);
        self
    }

    /// Sets an inherent attribute (property).
    pub fn prop(mut self, name: &str, value: Attribute) -> OpState {
        attrs::set_named(&mut self.props, Ident::new(name), value);
        self
    }

    /// Sets a discardable attribute.
    pub fn attr(mut self, name: &str, value: Attribute) -> OpState {
        attrs::set_named(&mut self.attrs, Ident::new(name), value);
        self
    }

    pub fn region(mut self, region: RegionId) -> OpState {
        self.regions.push(region);
        self
    }

    pub fn successor(mut self, block: BlockId) -> OpState {
        self.successors.push(block);
        self
    }

    pub fn loc(mut self, loc: Loc) -> OpState {
        self.loc = loc;
        self
    }

    pub fn name_hint(mut self, name: &str) -> OpState {
        self.result_name = Some(name.to_owned());
        self
    }
}

/// Where to insert an op.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum InsertPoint {
    BlockStart(BlockId),
    BlockEnd(BlockId),
    Before(OpId),
    After(OpId),
}

/// The arena that owns an IR module.
#[derive(Clone)]
pub struct Module {
    ops: Vec<OpData>,
    blocks: Vec<BlockData>,
    regions: Vec<RegionData>,
    values: Vec<ValueData>,
    top: Option<OpId>,
    registry: Arc<Registry>,
    /// The source name used in diagnostics (`gelu.mlir:3:5: error: ...`).
    pub file: Arc<str>,
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.print_generic())
    }
}

impl Default for Module {
    fn default() -> Module {
        Module::new()
    }
}

impl Module {
    /// An empty `builtin.module` with the standard dialects registered.
    pub fn new() -> Module {
        Module::with_registry(Registry::standard())
    }

    /// An empty `builtin.module` using `registry` for printing, parsing and verification.
    pub fn with_registry(registry: Arc<Registry>) -> Module {
        let mut m = Module::without_top(registry);
        let region = m.create_region();
        let block = m.create_block(&[]);
        m.append_block(region, block);
        let top = m.create_op(OpState::new("builtin.module").region(region));
        m.top = Some(top);
        m
    }

    /// An arena without a top op (the parser fills it in).
    pub(crate) fn without_top(registry: Arc<Registry>) -> Module {
        Module {
            ops: Vec::new(),
            blocks: Vec::new(),
            regions: Vec::new(),
            values: Vec::new(),
            top: None,
            registry,
            file: Arc::from("<unknown>"),
        }
    }

    pub(crate) fn set_top(&mut self, op: OpId) {
        self.top = Some(op);
    }

    /// The top op (a `builtin.module`).
    pub fn top(&self) -> OpId {
        self.top.expect("module has a top op")
    }

    /// The block holding the module's top-level ops (functions).
    pub fn body(&self) -> BlockId {
        let region = self.region(self.top(), 0);
        self.entry_block(region).expect("module body block")
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The definition of `op`'s name in the registry, if registered.
    pub fn op_def(&self, op: OpId) -> Option<&OpDef> {
        self.registry.get(self.name(op))
    }

    /// Reserves arena space for about `ops` more ops (and as many values).
    pub fn reserve(&mut self, ops: usize) {
        self.ops.reserve(ops);
        self.values.reserve(ops);
        self.blocks.reserve(ops / 32);
        self.regions.reserve(ops / 32);
    }

    /// Number of op slots ever created (including erased ones).
    pub fn op_capacity(&self) -> usize {
        self.ops.len()
    }

    /// Number of block slots ever created.
    pub fn block_capacity(&self) -> usize {
        self.blocks.len()
    }

    /// Number of value slots ever created.
    pub fn value_capacity(&self) -> usize {
        self.values.len()
    }

    // ----- creation -----

    /// Creates a detached region.
    pub fn create_region(&mut self) -> RegionId {
        let id = RegionId(self.regions.len() as u32);
        self.regions.push(RegionData::default());
        id
    }

    /// Creates a detached block with arguments of the given types.
    pub fn create_block(&mut self, arg_types: &[Type]) -> BlockId {
        let id = BlockId(self.blocks.len() as u32);
        self.blocks.push(BlockData::default());
        for &ty in arg_types {
            self.add_block_arg(id, ty);
        }
        id
    }

    /// Appends a detached block to a region.
    pub fn append_block(&mut self, region: RegionId, block: BlockId) {
        debug_assert!(self.blocks[block.index()].parent.is_none());
        self.blocks[block.index()].parent = Some(region);
        self.regions[region.index()].blocks.push(block);
    }

    /// Inserts a detached block into a region at position `at`.
    pub fn insert_block(&mut self, region: RegionId, at: usize, block: BlockId) {
        debug_assert!(self.blocks[block.index()].parent.is_none());
        self.blocks[block.index()].parent = Some(region);
        self.regions[region.index()].blocks.insert(at, block);
    }

    /// Creates a region with one block with arguments of the given types.
    pub fn create_region_with_block(&mut self, arg_types: &[Type]) -> (RegionId, BlockId) {
        let region = self.create_region();
        let block = self.create_block(arg_types);
        self.append_block(region, block);
        (region, block)
    }

    /// Adds an argument to a block.
    pub fn add_block_arg(&mut self, block: BlockId, ty: Type) -> Value {
        let index = self.blocks[block.index()].args.len() as u32;
        let v = self.new_value(ty, ValueDef::Arg { block, index });
        self.blocks[block.index()].args.push(v);
        v
    }

    /// Removes argument `index` of a block; it must have no uses.
    pub fn erase_block_arg(&mut self, block: BlockId, index: usize) {
        let v = self.blocks[block.index()].args.remove(index);
        assert!(
            !self.has_uses(v),
            "erasing a block argument that still has uses"
        );
        self.values[v.index()].def = ValueDef::Detached;
        let args = self.blocks[block.index()].args.clone();
        for (i, a) in args.into_iter().enumerate().skip(index) {
            self.values[a.index()].def = ValueDef::Arg {
                block,
                index: i as u32,
            };
        }
    }

    fn new_value(&mut self, ty: Type, def: ValueDef) -> Value {
        let v = Value(self.values.len() as u32);
        self.values.push(ValueData {
            ty,
            def,
            first_use: None,
            name: None,
        });
        v
    }

    /// A value attached to nothing (for forward references while parsing).
    pub(crate) fn create_detached_value(&mut self, ty: Type) -> Value {
        self.new_value(ty, ValueDef::Detached)
    }

    /// Creates a detached op from `state`. Its regions become owned by it.
    pub fn create_op(&mut self, state: OpState) -> OpId {
        let id = OpId(self.ops.len() as u32);
        let first_result = self.values.len() as u32;
        for (i, &ty) in state.result_types.iter().enumerate() {
            self.new_value(
                ty,
                ValueDef::Result {
                    op: id,
                    index: i as u32,
                },
            );
        }
        for &r in &state.regions {
            debug_assert!(self.regions[r.index()].parent.is_none());
            self.regions[r.index()].parent = Some(id);
        }
        let mut props = state.props;
        attrs::sort_named(&mut props);
        let mut attrs_ = state.attrs;
        attrs::sort_named(&mut attrs_);
        self.ops.push(OpData {
            name: state.name,
            operands: Vec::with_capacity(state.operands.len()),
            first_result,
            num_results: state.result_types.len() as u32,
            props,
            attrs: attrs_,
            regions: state.regions,
            successors: state.successors,
            parent: None,
            prev: None,
            next: None,
            loc: state.loc,
            alive: true,
        });
        for (i, &v) in state.operands.iter().enumerate() {
            self.ops[id.index()].operands.push(Operand {
                value: v,
                prev: None,
                next: None,
            });
            self.link_use(
                v,
                Use {
                    op: id,
                    index: i as u32,
                },
            );
        }
        if let Some(name) = state.result_name
            && !state.result_types.is_empty()
        {
            self.set_value_name(Value(first_result), Some(&name));
        }
        id
    }

    /// Inserts a detached op.
    pub fn insert_op(&mut self, op: OpId, at: InsertPoint) {
        debug_assert!(
            self.ops[op.index()].parent.is_none(),
            "op is already in a block"
        );
        let (block, prev, next) = match at {
            InsertPoint::BlockStart(b) => (b, None, self.blocks[b.index()].first),
            InsertPoint::BlockEnd(b) => (b, self.blocks[b.index()].last, None),
            InsertPoint::Before(o) => (
                self.ops[o.index()]
                    .parent
                    .expect("insertion point op is in a block"),
                self.ops[o.index()].prev,
                Some(o),
            ),
            InsertPoint::After(o) => (
                self.ops[o.index()]
                    .parent
                    .expect("insertion point op is in a block"),
                Some(o),
                self.ops[o.index()].next,
            ),
        };
        let data = &mut self.ops[op.index()];
        data.parent = Some(block);
        data.prev = prev;
        data.next = next;
        match prev {
            Some(p) => self.ops[p.index()].next = Some(op),
            None => self.blocks[block.index()].first = Some(op),
        }
        match next {
            Some(n) => self.ops[n.index()].prev = Some(op),
            None => self.blocks[block.index()].last = Some(op),
        }
    }

    /// Creates an op and inserts it.
    pub fn create_op_at(&mut self, state: OpState, at: InsertPoint) -> OpId {
        let op = self.create_op(state);
        self.insert_op(op, at);
        op
    }

    /// Creates a one-result op and inserts it; its result (what most dialect builders
    /// return).
    pub fn create_result_at(&mut self, state: OpState, at: InsertPoint) -> Value {
        let op = self.create_op_at(state, at);
        self.result(op, 0)
    }

    /// Unlinks an op from its block (it stays alive and can be inserted elsewhere).
    pub fn detach_op(&mut self, op: OpId) {
        let Some(block) = self.ops[op.index()].parent else {
            return;
        };
        let (prev, next) = (self.ops[op.index()].prev, self.ops[op.index()].next);
        match prev {
            Some(p) => self.ops[p.index()].next = next,
            None => self.blocks[block.index()].first = next,
        }
        match next {
            Some(n) => self.ops[n.index()].prev = prev,
            None => self.blocks[block.index()].last = prev,
        }
        let data = &mut self.ops[op.index()];
        data.parent = None;
        data.prev = None;
        data.next = None;
    }

    /// Moves an op (detaching it first).
    pub fn move_op(&mut self, op: OpId, at: InsertPoint) {
        self.detach_op(op);
        self.insert_op(op, at);
    }

    /// Erases an op and everything nested in it. Its results must have no uses outside it.
    pub fn erase_op(&mut self, op: OpId) {
        self.detach_op(op);
        let subtree = self.collect_ops(op);
        for &o in &subtree {
            self.drop_operands(o);
        }
        for &o in &subtree {
            for r in self.results(o) {
                assert!(
                    !self.has_uses(r),
                    "erasing '{}' whose result still has uses",
                    self.name(o)
                );
            }
            self.ops[o.index()].alive = false;
            for ri in 0..self.ops[o.index()].regions.len() {
                let region = self.ops[o.index()].regions[ri];
                for bi in 0..self.regions[region.index()].blocks.len() {
                    let block = self.regions[region.index()].blocks[bi];
                    self.blocks[block.index()].first = None;
                    self.blocks[block.index()].last = None;
                }
            }
        }
    }

    /// Erases a block (and its ops) from its region. Its values must have no outside uses.
    pub fn erase_block(&mut self, block: BlockId) {
        let ops: Vec<OpId> = self.block_ops(block).collect();
        for &op in ops.iter().rev() {
            self.erase_op(op);
        }
        for &a in &self.blocks[block.index()].args {
            assert!(
                self.values[a.index()].first_use.is_none(),
                "erasing a block whose argument has uses"
            );
        }
        if let Some(region) = self.blocks[block.index()].parent.take() {
            self.regions[region.index()].blocks.retain(|&b| b != block);
        }
    }

    /// Whether `op` has not been erased.
    pub fn is_alive(&self, op: OpId) -> bool {
        self.ops[op.index()].alive
    }

    // ----- use lists -----

    fn operand_mut(&mut self, u: Use) -> &mut Operand {
        &mut self.ops[u.op.index()].operands[u.index as usize]
    }

    fn link_use(&mut self, v: Value, u: Use) {
        let head = self.values[v.index()].first_use;
        {
            let operand = self.operand_mut(u);
            operand.value = v;
            operand.prev = None;
            operand.next = head;
        }
        if let Some(h) = head {
            self.operand_mut(h).prev = Some(u);
        }
        self.values[v.index()].first_use = Some(u);
    }

    fn unlink_use(&mut self, u: Use) {
        let (v, prev, next) = {
            let o = &self.ops[u.op.index()].operands[u.index as usize];
            (o.value, o.prev, o.next)
        };
        match prev {
            Some(p) => self.operand_mut(p).next = next,
            None => self.values[v.index()].first_use = next,
        }
        if let Some(n) = next {
            self.operand_mut(n).prev = prev;
        }
    }

    fn drop_operands(&mut self, op: OpId) {
        for i in 0..self.ops[op.index()].operands.len() {
            self.unlink_use(Use {
                op,
                index: i as u32,
            });
        }
        self.ops[op.index()].operands.clear();
    }

    /// Sets operand `index` of `op` to `v`.
    pub fn set_operand(&mut self, op: OpId, index: usize, v: Value) {
        let u = Use {
            op,
            index: index as u32,
        };
        self.unlink_use(u);
        self.link_use(v, u);
    }

    /// Replaces all operands of `op`.
    pub fn set_operands(&mut self, op: OpId, values: &[Value]) {
        self.drop_operands(op);
        for (i, &v) in values.iter().enumerate() {
            self.ops[op.index()].operands.push(Operand {
                value: v,
                prev: None,
                next: None,
            });
            self.link_use(
                v,
                Use {
                    op,
                    index: i as u32,
                },
            );
        }
    }

    /// Appends an operand to `op`.
    pub fn push_operand(&mut self, op: OpId, v: Value) {
        let index = self.ops[op.index()].operands.len() as u32;
        self.ops[op.index()].operands.push(Operand {
            value: v,
            prev: None,
            next: None,
        });
        self.link_use(v, Use { op, index });
    }

    /// Replaces every use of `old` by `new`. O(uses of `old`).
    pub fn replace_all_uses(&mut self, old: Value, new: Value) {
        if old == new {
            return;
        }
        while let Some(u) = self.values[old.index()].first_use {
            self.unlink_use(u);
            self.link_use(new, u);
        }
    }

    /// Replaces the uses of `old` for which `pred` holds.
    pub fn replace_uses_where(
        &mut self,
        old: Value,
        new: Value,
        mut pred: impl FnMut(&Module, Use) -> bool,
    ) {
        let uses: Vec<Use> = self.uses(old).collect();
        for u in uses {
            if pred(self, u) {
                self.unlink_use(u);
                self.link_use(new, u);
            }
        }
    }

    /// Replaces the results of `op` by `values` and erases `op`.
    pub fn replace_op(&mut self, op: OpId, values: &[Value]) {
        assert_eq!(
            values.len(),
            self.num_results(op),
            "replace_op: result count"
        );
        for (i, &v) in values.iter().enumerate() {
            let r = self.result(op, i);
            self.replace_all_uses(r, v);
        }
        self.erase_op(op);
    }

    /// The uses of a value (most recent first).
    pub fn uses(&self, v: Value) -> impl Iterator<Item = Use> + '_ {
        std::iter::successors(self.values[v.index()].first_use, |u| {
            self.ops[u.op.index()].operands[u.index as usize].next
        })
    }

    pub fn has_uses(&self, v: Value) -> bool {
        self.values[v.index()].first_use.is_some()
    }

    pub fn num_uses(&self, v: Value) -> usize {
        self.uses(v).count()
    }
}

/// Cleans a name hint: `None` for empty names and names the printer generates itself.
fn sanitize_name(name: &str) -> Option<String> {
    if name.is_empty() || name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if let Some(rest) = name.strip_prefix("arg")
        && !rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    Some(cleaned)
}

/// A name → op map of one symbol table op, for repeated lookups.
pub struct SymbolTable {
    map: crate::intern::FxHashMap<String, OpId>,
}

impl SymbolTable {
    /// Indexes the symbols directly inside `scope`.
    pub fn new(module: &Module, scope: OpId) -> SymbolTable {
        let mut map = crate::intern::FxHashMap::default();
        if let Some(&region) = module.regions(scope).first()
            && let Some(block) = module.entry_block(region)
        {
            for op in module.block_ops(block) {
                if let Some(name) = module.symbol_name(op) {
                    map.entry(name.to_owned()).or_insert(op);
                }
            }
        }
        SymbolTable { map }
    }

    pub fn lookup(&self, name: &str) -> Option<OpId> {
        self.map.get(name).copied()
    }
}
