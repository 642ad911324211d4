//! Reading and editing a module: op accessors (operands, results, properties and
//! attributes, parents and neighbours), blocks and regions, values, traversal, symbols.

use super::*;

impl Module {
    // ----- op accessors -----

    pub fn name(&self, op: OpId) -> Ident {
        self.ops[op.index()].name
    }

    /// Whether `op` is named `name`, which a dialect must declare ([`Module::declares`]):
    /// a misspelt name would otherwise match nothing, silently. (Name it with the
    /// dialect's constant: `arith::ADDF`.)
    pub fn is(&self, op: OpId, name: &str) -> bool {
        debug_assert!(self.declares(name), "no dialect declares the op '{name}'");
        self.ops[op.index()].name.as_str() == name
    }

    /// Whether a dialect of the module's registry declares the op `name`
    /// ([`Registry::knows`]).
    pub fn declares(&self, name: &str) -> bool {
        self.registry().knows(name)
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

    /// The argument types of `block`.
    pub fn block_arg_types(&self, block: BlockId) -> Vec<Type> {
        self.block_args(block)
            .iter()
            .map(|&a| self.value_type(a))
            .collect()
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
        attrs::find_named(&self.ops[op.index()].props, name)
    }

    /// A discardable attribute of `op`.
    pub fn attr(&self, op: OpId, name: &str) -> Option<&Attribute> {
        attrs::find_named(&self.ops[op.index()].attrs, name)
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
    pub fn block_ops(&self, block: BlockId) -> impl Iterator<Item = OpId> + '_ {
        std::iter::successors(self.blocks[block.index()].first, |op| {
            self.ops[op.index()].next
        })
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

    /// Every op of the module named `name`, in pre-order: the list a rewrite that visits one
    /// kind of op takes before it changes the module.
    pub fn ops_named(&self, name: &str) -> Vec<OpId> {
        debug_assert!(self.declares(name), "no dialect declares the op '{name}'");
        let mut out = Vec::new();
        self.walk(self.top(), |op| {
            if self.is(op, name) {
                out.push(op);
            }
        });
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
                .is_some_and(|d| d.traits.contains(crate::traits::Traits::SYMBOL_TABLE))
            {
                return Some(p);
            }
            cur = self.parent_op(p);
        }
        None
    }
}
