//! The verifier: structural rules for every op (region counts, parents, terminators, SSA
//! dominance, isolation) and each registered op's own rules (types, symbol references).
//!
//! Dominance follows MLIR: in an SSACFG region a use must be dominated by its definition (an
//! earlier op of the same block, an argument of the block, a block that dominates the user's
//! block, or a value visible to the region's parent op); regions of ops isolated from above
//! see nothing from outside; graph regions (`builtin.module`, and unregistered ops, which MLIR
//! treats as possible graph regions) have no order. Errors name the op and its location.

use crate::diag::{DResult, Diagnostic};
use crate::intern::FxHashMap;
use crate::module::{BlockId, Module, OpId, RegionId, SymbolTable, Value, ValueDef};
use crate::traits::Traits;
use std::cell::RefCell;

/// What op verifiers get: the module and cached symbol tables.
pub struct VerifyCx<'m> {
    pub module: &'m Module,
    symbols: RefCell<FxHashMap<OpId, SymbolTable>>,
}

impl<'m> VerifyCx<'m> {
    pub fn new(module: &'m Module) -> VerifyCx<'m> {
        VerifyCx {
            module,
            symbols: RefCell::new(FxHashMap::default()),
        }
    }

    /// Resolves a symbol name from `from`: in the nearest enclosing symbol table.
    pub fn lookup_symbol(&self, from: OpId, name: &str) -> Option<OpId> {
        let table = self.module.symbol_table_of(from)?;
        let mut cache = self.symbols.borrow_mut();
        cache
            .entry(table)
            .or_insert_with(|| SymbolTable::new(self.module, table))
            .lookup(name)
    }
}

/// Verifies the whole module; the first error found (in textual order) is returned.
pub fn verify(module: &Module) -> DResult<()> {
    let mut v = Verifier {
        cx: VerifyCx::new(module),
        visible: vec![0; module.value_capacity()],
        next_scope: 1,
        scope: 1,
        defined: Vec::new(),
    };
    v.verify_op(module.top(), false)
}

impl Module {
    /// Verifies the module (see [`verify`]).
    pub fn verify(&self) -> DResult<()> {
        verify(self)
    }
}

struct Verifier<'m> {
    cx: VerifyCx<'m>,
    /// For each value, the isolation scope in which it is visible (0: not visible).
    visible: Vec<u32>,
    next_scope: u32,
    scope: u32,
    defined: Vec<Value>,
}

impl Verifier<'_> {
    fn m(&self) -> &Module {
        self.cx.module
    }

    fn op_error(&self, op: OpId, message: impl std::fmt::Display) -> Diagnostic {
        let m = self.m();
        Diagnostic::new(
            m.file.clone(),
            m.loc(op),
            format!("'{}' op {message}", m.name(op)),
        )
    }

    fn error(&self, op: OpId, message: impl Into<String>) -> Diagnostic {
        let m = self.m();
        Diagnostic::new(m.file.clone(), m.loc(op), message)
    }

    fn define(&mut self, v: Value) {
        self.visible[v.index()] = self.scope;
        self.defined.push(v);
    }

    fn undefine_to(&mut self, mark: usize) {
        for v in self.defined.drain(mark..) {
            self.visible[v.index()] = 0;
        }
    }

    /// Checks `op` and everything nested in it. With `check_operands` false (graph regions),
    /// operands need not be dominated.
    fn verify_op(&mut self, op: OpId, lenient: bool) -> DResult<()> {
        let m = self.cx.module;
        let def = m.op_def(op);
        if !lenient {
            for (i, v) in m.operands(op).enumerate() {
                self.check_operand(op, i, v)?;
            }
        }
        if let Some(block) = m.parent_block(op) {
            for &s in m.successors(op) {
                if m.block_parent_region(s) != m.block_parent_region(block) {
                    return Err(self.error(op, "reference to block defined in another region"));
                }
            }
        }
        if let Some(def) = def {
            if !def.accepts_regions(m.regions(op).len()) {
                let msg = match def.num_regions {
                    n if def.variadic_regions => format!("requires at least {n} regions"),
                    0 => "requires zero regions".to_owned(),
                    1 => "requires one region".to_owned(),
                    n => format!("expected {n} regions"),
                };
                return Err(self.op_error(op, msg));
            }
            if !def.parents.is_empty() {
                let parent = m.parent_op(op);
                if !parent.is_some_and(|p| def.parents.contains(&m.name(p).as_str())) {
                    let list = def.parents.join(", ");
                    let msg = if def.parents.len() == 1 {
                        format!("expects parent op '{list}'")
                    } else {
                        format!("expects parent op to be one of '{list}'")
                    };
                    return Err(self.op_error(op, msg));
                }
            }
            if def.has(Traits::TERMINATOR) && m.next_op(op).is_some() {
                return Err(self.op_error(op, "must be the last operation in the parent block"));
            }
            if def.has(Traits::SINGLE_BLOCK) {
                for (i, &r) in m.regions(op).iter().enumerate() {
                    if m.region_blocks(r).len() > 1 {
                        return Err(
                            self.op_error(op, format!("expects region #{i} to have 0 or 1 blocks"))
                        );
                    }
                }
            }
            def.check(&self.cx, op)
                .map_err(|msg| self.op_error(op, msg))?;
        }
        if !m.regions(op).is_empty() {
            let isolated = def.is_some_and(|d| d.has(Traits::ISOLATED_FROM_ABOVE));
            let graph = def.is_none_or(|d| d.has(Traits::GRAPH_REGION));
            let needs_terminator = def.is_some_and(|d| !d.has(Traits::NO_TERMINATOR));
            let saved_scope = self.scope;
            if isolated {
                self.next_scope += 1;
                self.scope = self.next_scope;
            }
            for &r in m.regions(op) {
                if needs_terminator {
                    self.check_terminators(op, r)?;
                }
                let mark = self.defined.len();
                let result = if graph {
                    self.verify_graph_region(r)
                } else {
                    self.verify_cfg_region(r)
                };
                self.undefine_to(mark);
                result?;
            }
            self.scope = saved_scope;
        }
        Ok(())
    }

    fn check_operand(&self, op: OpId, index: usize, v: Value) -> DResult<()> {
        let m = self.m();
        let vis = self.visible[v.index()];
        if vis == self.scope {
            return Ok(());
        }
        let isolated = self.enclosing_isolated(op);
        let inside = |iso: OpId| {
            m.value_block(v)
                .and_then(|b| m.block_parent_op(b))
                .is_some_and(|owner| m.is_ancestor(iso, owner))
        };
        if vis != 0 || isolated.is_some_and(|iso| !inside(iso)) && m.value_block(v).is_some() {
            let mut d = self.op_error(op, "using value defined outside the region");
            if let Some(iso) = isolated
                && m.loc(iso).is_known()
            {
                d = d.with_note(m.loc(iso), "required by region isolation constraints");
            }
            return Err(d);
        }
        match m.value_def(v) {
            ValueDef::Detached => {
                Err(self.error(op, format!("operand #{index} is an unattached value")))
            }
            ValueDef::Result { op: def_op, .. } => {
                let mut d = self.error(op, format!("operand #{index} does not dominate this use"));
                if m.loc(def_op).is_known() {
                    d = d.with_note(m.loc(def_op), "operand defined here");
                }
                Err(d)
            }
            ValueDef::Arg { .. } => {
                Err(self.error(op, format!("operand #{index} does not dominate this use")))
            }
        }
    }

    fn enclosing_isolated(&self, op: OpId) -> Option<OpId> {
        let m = self.m();
        let mut cur = m.parent_op(op);
        while let Some(p) = cur {
            if m.op_def(p)
                .is_some_and(|d| d.has(Traits::ISOLATED_FROM_ABOVE))
            {
                return Some(p);
            }
            cur = m.parent_op(p);
        }
        None
    }

    fn check_terminators(&self, op: OpId, r: RegionId) -> DResult<()> {
        let m = self.m();
        for &b in m.region_blocks(r) {
            let Some(last) = m.last_op(b) else {
                return Err(self.op_error(op, "empty block: expect at least a terminator"));
            };
            let is_terminator = m.op_def(last).is_none_or(|d| d.has(Traits::TERMINATOR));
            if !is_terminator {
                let misplaced = m
                    .block_ops(b)
                    .find(|&o| m.op_def(o).is_some_and(|d| d.has(Traits::TERMINATOR)));
                if let Some(t) = misplaced {
                    return Err(self.op_error(t, "must be the last operation in the parent block"));
                }
                return Err(self.error(
                    last,
                    format!("block with no terminator, has '{}'", m.name(last)),
                ));
            }
        }
        Ok(())
    }

    fn verify_graph_region(&mut self, r: RegionId) -> DResult<()> {
        let m = self.cx.module;
        for &b in m.region_blocks(r) {
            for &a in m.block_args(b) {
                self.define(a);
            }
            for op in m.block_ops(b) {
                for v in m.results(op) {
                    self.define(v);
                }
            }
        }
        for &b in m.region_blocks(r) {
            for op in m.block_ops(b) {
                self.verify_op(op, false)?;
            }
        }
        Ok(())
    }

    fn verify_block(&mut self, b: BlockId, lenient: bool) -> DResult<()> {
        let m = self.cx.module;
        for &a in m.block_args(b) {
            self.define(a);
        }
        for op in m.block_ops(b) {
            self.verify_op(op, lenient)?;
            for v in m.results(op) {
                self.define(v);
            }
        }
        Ok(())
    }

    fn verify_cfg_region(&mut self, r: RegionId) -> DResult<()> {
        let m = self.cx.module;
        let blocks = m.region_blocks(r);
        match blocks {
            [] => return Ok(()),
            [single] => return self.verify_block(*single, false),
            _ => {}
        }
        let dom = Dominators::compute(m, blocks);
        // Visit blocks in dominator-tree order so each sees exactly its dominators' values.
        let mut stack: Vec<(usize, bool, usize)> = vec![(0, false, 0)];
        while let Some((bi, done, mark)) = stack.pop() {
            if done {
                self.undefine_to(mark);
                continue;
            }
            let mark = self.defined.len();
            stack.push((bi, true, mark));
            self.verify_block(blocks[bi], false)?;
            for &child in dom.children[bi].iter().rev() {
                stack.push((child, false, 0));
            }
        }
        for (bi, &b) in blocks.iter().enumerate() {
            if !dom.reachable[bi] {
                let mark = self.defined.len();
                let r = self.verify_block(b, true);
                self.undefine_to(mark);
                r?;
            }
        }
        Ok(())
    }
}

/// Immediate dominators of the blocks of one region (Cooper, Harvey, Kennedy).
struct Dominators {
    children: Vec<Vec<usize>>,
    reachable: Vec<bool>,
}

impl Dominators {
    fn compute(m: &Module, blocks: &[BlockId]) -> Dominators {
        let n = blocks.len();
        let index: FxHashMap<BlockId, usize> =
            blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let succs: Vec<Vec<usize>> = blocks
            .iter()
            .map(|&b| {
                m.last_op(b)
                    .map(|t| {
                        m.successors(t)
                            .iter()
                            .filter_map(|s| index.get(s).copied())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        // Reverse post-order from the entry.
        let mut order = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack = vec![(0usize, 0usize)];
        seen[0] = true;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if *next < succs[b].len() {
                let s = succs[b][*next];
                *next += 1;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                order.push(b);
                stack.pop();
            }
        }
        order.reverse();
        let mut rpo = vec![usize::MAX; n];
        for (i, &b) in order.iter().enumerate() {
            rpo[b] = i;
        }
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in succs.iter().enumerate() {
            if seen[b] {
                for &s in ss {
                    preds[s].push(b);
                }
            }
        }
        let mut idom = vec![usize::MAX; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().skip(1) {
                let mut new = usize::MAX;
                for &p in &preds[b] {
                    if idom[p] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        p
                    } else {
                        let (mut x, mut y) = (p, new);
                        while x != y {
                            while rpo[x] > rpo[y] {
                                x = idom[x];
                            }
                            while rpo[y] > rpo[x] {
                                y = idom[y];
                            }
                        }
                        x
                    };
                }
                if new != idom[b] {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        let mut children = vec![Vec::new(); n];
        for &b in order.iter().skip(1) {
            children[idom[b]].push(b);
        }
        Dominators {
            children,
            reachable: seen,
        }
    }
}
