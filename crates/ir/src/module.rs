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
use std::sync::Arc;

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

/// A source position (1-based line and column); `line == 0` means unknown.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

impl Loc {
    pub const UNKNOWN: Loc = Loc { line: 0, col: 0 };

    pub fn new(line: u32, col: u32) -> Loc {
        Loc { line, col }
    }

    pub fn is_known(self) -> bool {
        self.line != 0
    }
}

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
    pub fn uses(&self, v: Value) -> Uses<'_> {
        Uses {
            module: self,
            next: self.values[v.index()].first_use,
        }
    }

    pub fn has_uses(&self, v: Value) -> bool {
        self.values[v.index()].first_use.is_some()
    }

    pub fn num_uses(&self, v: Value) -> usize {
        self.uses(v).count()
    }

    // ----- op accessors -----

    pub fn name(&self, op: OpId) -> Ident {
        self.ops[op.index()].name
    }

    /// Whether `op` is named `name`.
    pub fn is(&self, op: OpId, name: &str) -> bool {
        self.ops[op.index()].name.as_str() == name
    }

    pub fn loc(&self, op: OpId) -> Loc {
        self.ops[op.index()].loc
    }

    pub fn set_loc(&mut self, op: OpId, loc: Loc) {
        self.ops[op.index()].loc = loc;
    }

    pub fn num_operands(&self, op: OpId) -> usize {
        self.ops[op.index()].operands.len()
    }

    pub fn operand(&self, op: OpId, index: usize) -> Value {
        self.ops[op.index()].operands[index].value
    }

    /// The operands of `op`.
    pub fn operands(&self, op: OpId) -> impl ExactSizeIterator<Item = Value> + '_ {
        self.ops[op.index()].operands.iter().map(|o| o.value)
    }

    /// The operands of `op`, collected.
    pub fn operand_vec(&self, op: OpId) -> Vec<Value> {
        self.operands(op).collect()
    }

    pub fn num_results(&self, op: OpId) -> usize {
        self.ops[op.index()].num_results as usize
    }

    pub fn result(&self, op: OpId, index: usize) -> Value {
        let data = &self.ops[op.index()];
        assert!(
            index < data.num_results as usize,
            "result index out of range"
        );
        Value(data.first_result + index as u32)
    }

    /// The results of `op`.
    pub fn results(&self, op: OpId) -> impl ExactSizeIterator<Item = Value> + use<> {
        let data = &self.ops[op.index()];
        (data.first_result..data.first_result + data.num_results).map(Value)
    }

    /// The result types of `op`.
    pub fn result_types(&self, op: OpId) -> Vec<Type> {
        self.results(op).map(|v| self.value_type(v)).collect()
    }

    /// The operand types of `op`.
    pub fn operand_types(&self, op: OpId) -> Vec<Type> {
        self.operands(op).map(|v| self.value_type(v)).collect()
    }

    pub fn regions(&self, op: OpId) -> &[RegionId] {
        &self.ops[op.index()].regions
    }

    pub fn region(&self, op: OpId, index: usize) -> RegionId {
        self.ops[op.index()].regions[index]
    }

    pub fn successors(&self, op: OpId) -> &[BlockId] {
        &self.ops[op.index()].successors
    }

    pub fn set_successor(&mut self, op: OpId, index: usize, block: BlockId) {
        self.ops[op.index()].successors[index] = block;
    }

    /// Inherent attributes (properties), sorted by name.
    pub fn props(&self, op: OpId) -> &[NamedAttr] {
        &self.ops[op.index()].props
    }

    /// Discardable attributes, sorted by name.
    pub fn attrs(&self, op: OpId) -> &[NamedAttr] {
        &self.ops[op.index()].attrs
    }

    /// A property of `op`.
    pub fn prop(&self, op: OpId, name: &str) -> Option<&Attribute> {
        let data = &self.ops[op.index()];
        data.props
            .iter()
            .find(|e| e.name.as_str() == name)
            .map(|e| &e.value)
    }

    /// A discardable attribute of `op`.
    pub fn attr(&self, op: OpId, name: &str) -> Option<&Attribute> {
        let data = &self.ops[op.index()];
        data.attrs
            .iter()
            .find(|e| e.name.as_str() == name)
            .map(|e| &e.value)
    }

    /// A property or else a discardable attribute.
    pub fn get_attr(&self, op: OpId, name: &str) -> Option<&Attribute> {
        self.prop(op, name).or_else(|| self.attr(op, name))
    }

    pub fn set_prop(&mut self, op: OpId, name: &str, value: Attribute) {
        attrs::set_named(&mut self.ops[op.index()].props, Ident::new(name), value);
    }

    pub fn set_attr(&mut self, op: OpId, name: &str, value: Attribute) {
        attrs::set_named(&mut self.ops[op.index()].attrs, Ident::new(name), value);
    }

    pub fn remove_prop(&mut self, op: OpId, name: &str) -> Option<Attribute> {
        attrs::remove_named(&mut self.ops[op.index()].props, Ident::new(name))
    }

    pub fn remove_attr(&mut self, op: OpId, name: &str) -> Option<Attribute> {
        attrs::remove_named(&mut self.ops[op.index()].attrs, Ident::new(name))
    }

    /// The block containing `op`.
    pub fn parent_block(&self, op: OpId) -> Option<BlockId> {
        self.ops[op.index()].parent
    }

    /// The op whose region contains `op`.
    pub fn parent_op(&self, op: OpId) -> Option<OpId> {
        self.block_parent_op(self.parent_block(op)?)
    }

    pub fn next_op(&self, op: OpId) -> Option<OpId> {
        self.ops[op.index()].next
    }

    pub fn prev_op(&self, op: OpId) -> Option<OpId> {
        self.ops[op.index()].prev
    }

    /// The nearest enclosing op named `name` (not `op` itself).
    pub fn enclosing_op(&self, op: OpId, name: &str) -> Option<OpId> {
        let mut cur = self.parent_op(op);
        while let Some(p) = cur {
            if self.is(p, name) {
                return Some(p);
            }
            cur = self.parent_op(p);
        }
        None
    }

    /// Whether `ancestor` is `op` or contains it.
    pub fn is_ancestor(&self, ancestor: OpId, op: OpId) -> bool {
        let mut cur = Some(op);
        while let Some(o) = cur {
            if o == ancestor {
                return true;
            }
            cur = self.parent_op(o);
        }
        false
    }

    // ----- blocks and regions -----

    pub fn block_args(&self, block: BlockId) -> &[Value] {
        &self.blocks[block.index()].args
    }

    pub fn block_arg(&self, block: BlockId, index: usize) -> Value {
        self.blocks[block.index()].args[index]
    }

    /// The ops of a block, in order.
    pub fn block_ops(&self, block: BlockId) -> BlockOps<'_> {
        BlockOps {
            module: self,
            next: self.blocks[block.index()].first,
        }
    }

    pub fn first_op(&self, block: BlockId) -> Option<OpId> {
        self.blocks[block.index()].first
    }

    /// The last op of a block (its terminator, in a verified module).
    pub fn last_op(&self, block: BlockId) -> Option<OpId> {
        self.blocks[block.index()].last
    }

    pub fn block_is_empty(&self, block: BlockId) -> bool {
        self.blocks[block.index()].first.is_none()
    }

    pub fn block_parent_region(&self, block: BlockId) -> Option<RegionId> {
        self.blocks[block.index()].parent
    }

    pub fn block_parent_op(&self, block: BlockId) -> Option<OpId> {
        self.region_parent_op(self.block_parent_region(block)?)
    }

    pub fn region_blocks(&self, region: RegionId) -> &[BlockId] {
        &self.regions[region.index()].blocks
    }

    pub fn entry_block(&self, region: RegionId) -> Option<BlockId> {
        self.regions[region.index()].blocks.first().copied()
    }

    pub fn region_parent_op(&self, region: RegionId) -> Option<OpId> {
        self.regions[region.index()].parent
    }

    /// Whether a block is the first of its region.
    pub fn is_entry_block(&self, block: BlockId) -> bool {
        self.block_parent_region(block)
            .is_some_and(|r| self.entry_block(r) == Some(block))
    }

    /// Moves all blocks of `from` to the end of `to`.
    pub fn take_blocks(&mut self, from: RegionId, to: RegionId) {
        let blocks = std::mem::take(&mut self.regions[from.index()].blocks);
        for &b in &blocks {
            self.blocks[b.index()].parent = Some(to);
        }
        self.regions[to.index()].blocks.extend(blocks);
    }

    // ----- values -----

    pub fn value_type(&self, v: Value) -> Type {
        self.values[v.index()].ty
    }

    pub fn set_value_type(&mut self, v: Value, ty: Type) {
        self.values[v.index()].ty = ty;
    }

    pub fn value_def(&self, v: Value) -> ValueDef {
        self.values[v.index()].def
    }

    /// The op defining `v`, if it is a result.
    pub fn defining_op(&self, v: Value) -> Option<OpId> {
        match self.values[v.index()].def {
            ValueDef::Result { op, .. } => Some(op),
            _ => None,
        }
    }

    /// The block `v` is defined in (its op's block, or its block for arguments).
    pub fn value_block(&self, v: Value) -> Option<BlockId> {
        match self.values[v.index()].def {
            ValueDef::Result { op, .. } => self.parent_block(op),
            ValueDef::Arg { block, .. } => Some(block),
            ValueDef::Detached => None,
        }
    }

    /// The name hint of a value (`thread_id_x`), if any.
    pub fn value_name(&self, v: Value) -> Option<&str> {
        self.values[v.index()].name.as_deref()
    }

    /// Sets or clears a value's name hint. Characters MLIR does not allow in SSA names become
    /// `_`; names that look like the printer's own (`0`, `arg3`) are dropped.
    pub fn set_value_name(&mut self, v: Value, name: Option<&str>) {
        self.values[v.index()].name = name.and_then(sanitize_name).map(String::into_boxed_str);
    }

    // ----- traversal -----

    /// Calls `f` on `root` and every op nested in it, in pre-order (textual order).
    pub fn walk(&self, root: OpId, mut f: impl FnMut(OpId)) {
        let mut stack = vec![root];
        while let Some(op) = stack.pop() {
            f(op);
            for &r in self.regions(op).iter().rev() {
                for &b in self.region_blocks(r).iter().rev() {
                    let mut cur = self.blocks[b.index()].last;
                    while let Some(o) = cur {
                        stack.push(o);
                        cur = self.ops[o.index()].prev;
                    }
                }
            }
        }
    }

    /// `root` and every op nested in it, in pre-order; safe to mutate the module while
    /// iterating over the returned list.
    pub fn collect_ops(&self, root: OpId) -> Vec<OpId> {
        let mut out = Vec::new();
        self.walk(root, |op| out.push(op));
        out
    }

    /// Every op nested in `root` and `root` itself, in post-order (children first).
    pub fn collect_ops_post_order(&self, root: OpId) -> Vec<OpId> {
        let mut out = Vec::new();
        let mut stack = vec![(root, false)];
        while let Some((op, expanded)) = stack.pop() {
            if expanded {
                out.push(op);
                continue;
            }
            stack.push((op, true));
            for &r in self.regions(op).iter().rev() {
                for &b in self.region_blocks(r).iter().rev() {
                    let mut cur = self.blocks[b.index()].last;
                    while let Some(o) = cur {
                        stack.push((o, false));
                        cur = self.ops[o.index()].prev;
                    }
                }
            }
        }
        out
    }

    /// Number of live ops nested in the top op (including it).
    pub fn num_ops(&self) -> usize {
        let mut n = 0;
        self.walk(self.top(), |_| n += 1);
        n
    }

    // ----- symbols -----

    /// The `sym_name` of a symbol op.
    pub fn symbol_name(&self, op: OpId) -> Option<&str> {
        self.get_attr(op, "sym_name").and_then(Attribute::as_str)
    }

    /// Finds the op named `name` directly inside the symbol table op `scope` (MLIR's
    /// `SymbolTable::lookupSymbolIn`). Linear in the scope's size; use [`SymbolTable`] for
    /// repeated lookups.
    pub fn lookup_symbol(&self, scope: OpId, name: &str) -> Option<OpId> {
        let region = *self.regions(scope).first()?;
        let block = self.entry_block(region)?;
        self.block_ops(block)
            .find(|&op| self.symbol_name(op) == Some(name))
    }

    /// The nearest ancestor of `op` (or `op`) that is a symbol table (`builtin.module`).
    pub fn symbol_table_of(&self, op: OpId) -> Option<OpId> {
        let mut cur = self.parent_op(op);
        while let Some(p) = cur {
            if self
                .op_def(p)
                .is_some_and(|d| d.traits.contains(crate::registry::Traits::SYMBOL_TABLE))
            {
                return Some(p);
            }
            cur = self.parent_op(p);
        }
        None
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

/// Iterator over the uses of a value.
pub struct Uses<'m> {
    module: &'m Module,
    next: Option<Use>,
}

impl Iterator for Uses<'_> {
    type Item = Use;
    fn next(&mut self) -> Option<Use> {
        let u = self.next?;
        self.next = self.module.ops[u.op.index()].operands[u.index as usize].next;
        Some(u)
    }
}

/// Iterator over the ops of a block.
pub struct BlockOps<'m> {
    module: &'m Module,
    next: Option<OpId>,
}

impl Iterator for BlockOps<'_> {
    type Item = OpId;
    fn next(&mut self) -> Option<OpId> {
        let op = self.next?;
        self.next = self.module.ops[op.index()].next;
        Some(op)
    }
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
