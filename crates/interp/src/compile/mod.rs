//! IR → [`Program`]: functions reachable from the entry, compiled on demand.
//!
//! Registers are assigned per function (parameters first, then block arguments and results
//! in textual order; block arguments of one block and results of one op are consecutive).
//! Anything the interpreter cannot execute is rejected here, before any thread runs, with
//! the op's location.

mod control;
mod llvm_ops;
mod memo;
mod memory;
mod moves;
mod ops;
mod whole_vectors;
mod wide;

use crate::affine::Map;
use crate::error::{Error, Result, Site, fail};
use crate::inst::{Func, GlobalDef, Inst, Param, Program, Reg, SharedDef, Src};
use crate::layout::TensorTy;
use crate::scalar::ScalarTy;
use indexing::IndexingMap;

use ir::dialects::scf;
use ir::dialects::xla_gpu;
use ir::dialects::{cf, func, llvm};
use ir::{Attribute, BlockId, Module, OpId, SymbolTable, Type, Use, Value};
use std::collections::{HashMap, HashSet};

/// Compiles the function `entry` of `m` and everything it calls.
pub(crate) fn compile(m: &Module, entry: &str) -> Result<Program> {
    let symbols = SymbolTable::new(m, m.top());
    let Some(entry_op) = symbols.lookup(entry) else {
        return Err(fail!(
            InvalidArgument,
            "the module has no function @{entry}"
        ));
    };
    let mut b = Builder {
        m,
        symbols,
        funcs: Vec::new(),
        func_ids: HashMap::new(),
        queue: Vec::new(),
        sites: Vec::new(),
        site_ids: HashMap::new(),
        tensors: Vec::new(),
        tensor_ids: HashMap::new(),
        maps: Vec::new(),
        shared: Vec::new(),
        shared_ids: HashMap::new(),
        globals: Vec::new(),
        global_ids: HashMap::new(),
        num_params: 0,
    };
    let (params, outputs) = b.entry_signature(entry_op)?;
    b.num_params = params.len() as u32;
    let entry_id = b.func_id(entry_op)?;
    while let Some((op, id)) = b.queue.pop() {
        let func = FnCx::compile(&mut b, op)?;
        b.funcs[id as usize] = Some(func);
    }
    let mut funcs: Vec<Func> = b.funcs.into_iter().map(|f| f.expect("compiled")).collect();
    memo::decide(&mut funcs);
    Ok(Program {
        funcs,
        entry: entry_id,
        params,
        outputs,
        sites: b.sites,
        tensors: b.tensors,
        maps: b.maps,
        shared: b.shared,
        globals: b.globals,
    })
}

/// Program-wide tables filled while functions compile.
pub(super) struct Builder<'m> {
    m: &'m Module,
    symbols: SymbolTable,
    funcs: Vec<Option<Func>>,
    func_ids: HashMap<OpId, u32>,
    queue: Vec<(OpId, u32)>,
    sites: Vec<Site>,
    site_ids: HashMap<OpId, u32>,
    tensors: Vec<TensorTy>,
    tensor_ids: HashMap<Type, u32>,
    maps: Vec<Map>,
    shared: Vec<SharedDef>,
    shared_ids: HashMap<OpId, u32>,
    globals: Vec<GlobalDef>,
    global_ids: HashMap<OpId, u32>,
    num_params: u32,
}

impl Builder<'_> {
    fn site(&mut self, op: OpId) -> u32 {
        if let Some(&id) = self.site_ids.get(&op) {
            return id;
        }
        let id = self.sites.len() as u32;
        self.sites.push(Site {
            op: self.m.name(op).to_string(),
            file: self.m.file.clone(),
            loc: self.m.loc(op),
        });
        self.site_ids.insert(op, id);
        id
    }

    fn error_at(&mut self, op: OpId, e: Error) -> Error {
        let site = self.site(op);
        e.at(&self.sites[site as usize])
    }

    /// The entry's parameter kinds and, for each result, the parameter it is written into
    /// (results are the trailing parameters, updated in place).
    fn entry_signature(&mut self, f: OpId) -> Result<(Vec<Param>, Vec<usize>)> {
        let m = self.m;
        let block = self.body(f)?;
        let mut params = Vec::new();
        for (i, &a) in m.block_args(block).iter().enumerate() {
            let t = m.value_type(a);
            params.push(if t.is_tensor() {
                Param::Tensor(self.tensor(t).map_err(|e| self.error_at(f, e))?)
            } else if t.ptr_addr_space() == Some(0) {
                Param::Ptr(
                    ir::dialects::arg_attr(m, f, i, "llvm.dereferenceable")
                        .and_then(Attribute::as_i64)
                        .map(|n| n as u64),
                )
            } else {
                let e = fail!(Unsupported, "kernel parameter #{i} of type '{t}'");
                return Err(self.error_at(f, e));
            });
        }
        let results: Vec<Type> = if m.is(f, func::FUNC) {
            func::function_type(m, f)
                .map(|(_, r)| r.to_vec())
                .unwrap_or_default()
        } else {
            llvm::Signature::of(m, f)
                .and_then(|s| s.result)
                .into_iter()
                .collect()
        };
        let n = params.len();
        let mut outputs = Vec::new();
        for (k, &t) in results.iter().enumerate() {
            let p = (n + k).checked_sub(results.len());
            let param_ty = p.map(|p| m.value_type(m.block_arg(block, p)));
            if param_ty != Some(t) {
                let e = fail!(
                    Unsupported,
                    "kernel result #{k} ('{t}') must be one of the trailing parameters, updated in place"
                );
                return Err(self.error_at(f, e));
            }
            outputs.extend(p);
        }
        Ok((params, outputs))
    }

    /// The entry block of a function with a body.
    fn body(&mut self, f: OpId) -> Result<BlockId> {
        let m = self.m;
        let is_func = m.is(f, func::FUNC) || m.is(f, llvm::FUNC);
        match m.regions(f).first().and_then(|&r| m.entry_block(r)) {
            Some(b) if is_func => Ok(b),
            _ => {
                let name = m.symbol_name(f).unwrap_or("?").to_owned();
                let e = if is_func {
                    fail!(Unsupported, "@{name} is a declaration without a body")
                } else {
                    fail!(Unsupported, "@{name} is not a function")
                };
                Err(self.error_at(f, e))
            }
        }
    }

    /// The index of function `f`, queueing it for compilation.
    fn func_id(&mut self, f: OpId) -> Result<u32> {
        if let Some(&id) = self.func_ids.get(&f) {
            return Ok(id);
        }
        self.body(f)?;
        let id = self.funcs.len() as u32;
        self.funcs.push(None);
        self.func_ids.insert(f, id);
        self.queue.push((f, id));
        Ok(id)
    }

    fn tensor(&mut self, t: Type) -> Result<u32> {
        if let Some(&id) = self.tensor_ids.get(&t) {
            return Ok(id);
        }
        let tt = TensorTy::new(t)?;
        let id = self.tensors.len() as u32;
        self.tensors.push(tt);
        self.tensor_ids.insert(t, id);
        Ok(id)
    }

    fn map(&mut self, map: &IndexingMap) -> Result<u32> {
        let compiled = Map::new(map)
            .ok_or_else(|| fail!(Unsupported, "indexing map '{map}' is nested too deeply"))?;
        self.maps.push(compiled);
        Ok(self.maps.len() as u32 - 1)
    }
}

/// How a region's terminator hands its values over.
#[derive(Clone, Copy)]
enum Exit<'a> {
    /// `func.return`/`llvm.return`: leave the function.
    Return,
    /// `scf.yield`/`xla_gpu.yield`: copy into these registers.
    Yield(&'a [Reg]),
    /// `scf.condition` (a while's "before" region): the condition into `cond`, the
    /// forwarded values into `targets`.
    Condition { cond: Reg, targets: &'a [Reg] },
}

/// One function being compiled.
pub(super) struct FnCx<'b, 'm> {
    b: &'b mut Builder<'m>,
    m: &'m Module,
    regs: HashMap<Value, Reg>,
    next: u32,
    code: Vec<Inst>,
    sites: Vec<u32>,
    movable: HashSet<Use>,
    /// Jumps to blocks of a function with several blocks, patched once all are placed.
    pending_jumps: Vec<(usize, BlockId)>,
}

impl<'b, 'm> FnCx<'b, 'm> {
    fn compile(b: &'b mut Builder<'m>, f: OpId) -> Result<Func> {
        let m = b.m;
        let block = b.body(f)?;
        let blocks = m.region_blocks(m.region(f, 0)).to_vec();
        let mut cx = FnCx {
            b,
            m,
            regs: HashMap::new(),
            next: 0,
            code: Vec::new(),
            sites: Vec::new(),
            // Moving a value out at its "last" use is only sound in structured code: a
            // branch back to an earlier block may read it again.
            movable: if blocks.len() == 1 {
                moves::movable_uses(m, f)
            } else {
                HashSet::new()
            },
            pending_jumps: Vec::new(),
        };
        let params = m.block_args(block);
        cx.defs(params);
        let param_ranges = (0..params.len())
            .map(|i| arg_range(m, f, i))
            .collect::<Vec<_>>()
            .into_boxed_slice();
        if blocks.len() > 1 {
            cx.blocks(&blocks)?;
        } else {
            cx.region_body(block, Exit::Return)?;
        }
        if blocks.len() == 1 && !matches!(cx.code.last(), Some(Inst::Return(_))) {
            let e = fail!(InvalidIr, "a function body that does not end in a return");
            return Err(cx.err(f, e));
        }
        Ok(Func {
            name: m.symbol_name(f).unwrap_or("?").to_owned(),
            num_regs: cx.next,
            param_ranges,
            code: cx.code,
            sites: cx.sites,
        })
    }

    /// An error located at `op`.
    fn err(&mut self, op: OpId, e: Error) -> Error {
        self.b.error_at(op, e)
    }

    /// Allocates consecutive registers for `values`; returns the first.
    fn defs(&mut self, values: &[Value]) -> Reg {
        let first = self.next;
        for &v in values {
            self.regs.insert(v, self.next);
            self.next += 1;
        }
        first
    }

    /// The registers of the results of `op` (consecutive, allocated on first call);
    /// returns the first.
    fn results(&mut self, op: OpId) -> Reg {
        let results: Vec<Value> = self.m.results(op).collect();
        match results.first().and_then(|v| self.regs.get(v)) {
            Some(&first) => first,
            None => self.defs(&results),
        }
    }

    /// The blocks of a function with unstructured control flow, in order. Every block
    /// argument and op result gets its register first, since a block may use a value that
    /// a block further down in the text defines (dominance follows the branches, not the
    /// text); branches are patched once every block has its first instruction.
    fn blocks(&mut self, blocks: &[BlockId]) -> Result<()> {
        let m = self.m;
        for &b in &blocks[1..] {
            self.defs(m.block_args(b));
        }
        for &b in blocks {
            for op in m.block_ops(b) {
                self.results(op);
            }
        }
        let mut starts = HashMap::new();
        for &b in blocks {
            starts.insert(b, self.pc());
            self.region_body(b, Exit::Return)?;
        }
        for (at, target) in std::mem::take(&mut self.pending_jumps) {
            if let Inst::Jump(to) = &mut self.code[at] {
                *to = starts[&target];
            }
        }
        Ok(())
    }

    /// A scratch register no value owns.
    fn temp(&mut self) -> Reg {
        self.next += 1;
        self.next - 1
    }

    fn reg(&self, v: Value) -> Reg {
        self.regs[&v]
    }

    /// The register of operand `i` of `op`.
    fn operand(&self, op: OpId, i: usize) -> Reg {
        self.reg(self.m.operand(op, i))
    }

    /// The shape of operand `i` of `op`: a vector's lanes, none for a scalar.
    fn vector_shape(&self, op: OpId, i: usize) -> Box<[i64]> {
        let t = self.m.value_type(self.m.operand(op, i));
        t.shape().unwrap_or(&[]).into()
    }

    /// Operand `i` of `op` as a read that takes the value at its last use.
    fn src(&self, op: OpId, i: usize) -> Src {
        Src {
            reg: self.operand(op, i),
            take: self.movable.contains(&Use {
                op,
                index: i as u32,
            }),
        }
    }

    fn operands(&self, op: OpId, range: std::ops::Range<usize>) -> Box<[Reg]> {
        range.map(|i| self.operand(op, i)).collect()
    }

    /// Appends an instruction for `op`; returns its index.
    fn emit(&mut self, op: OpId, inst: Inst) -> usize {
        let site = self.b.site(op);
        self.code.push(inst);
        self.sites.push(site);
        self.code.len() - 1
    }

    fn pc(&self) -> u32 {
        self.code.len() as u32
    }

    /// Compiles a region's block; its terminator leaves as `exit` says.
    fn region_body(&mut self, block: BlockId, exit: Exit<'_>) -> Result<()> {
        let m = self.m;
        let ops: Vec<OpId> = m.block_ops(block).collect();
        for &op in &ops {
            let name = m.name(op);
            match (name.as_str(), exit) {
                (func::RETURN | llvm::RETURN, Exit::Return) => {
                    let vals = self.operands(op, 0..m.num_operands(op));
                    self.emit(op, Inst::Return(vals));
                }
                (scf::YIELD | xla_gpu::YIELD, Exit::Yield(targets)) => {
                    self.yield_copies(op, 0, targets);
                }
                (scf::CONDITION, Exit::Condition { cond, targets }) => {
                    let src = Src {
                        reg: self.operand(op, 0),
                        take: false,
                    };
                    self.emit(op, Inst::Copy { dst: cond, src });
                    self.yield_copies(op, 1, targets);
                }
                (llvm::BR | llvm::COND_BR | cf::BR | cf::COND_BR | llvm::SWITCH, Exit::Return) => {
                    self.branch(op)?;
                }
                (func::RETURN | llvm::RETURN | scf::YIELD | xla_gpu::YIELD | scf::CONDITION, _) => {
                    let e = fail!(InvalidIr, "'{name}' does not end this region");
                    return Err(self.err(op, e));
                }
                _ => self.op(op)?,
            }
        }
        Ok(())
    }

    /// Copies a yield's operands from `first` on into `targets`. When a source is another
    /// target (a loop permuting its iter args, or yielding one twice), every source is read
    /// before any target is written; otherwise the copies run in order, skipping values that
    /// stay.
    fn yield_copies(&mut self, op: OpId, first: usize, targets: &[Reg]) {
        let pairs: Vec<(Reg, Src)> = targets
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, self.src(op, first + i)))
            .collect();
        let parallel = pairs
            .iter()
            .any(|(t, s)| s.reg != *t && targets.contains(&s.reg));
        if parallel {
            self.emit(op, Inst::ParCopy(pairs.into()));
            return;
        }
        for (dst, src) in pairs {
            if src.reg != dst {
                self.emit(op, Inst::Copy { dst, src });
            }
        }
    }

    /// The scalar type of `v` or of its vector's elements.
    fn scalar(&mut self, op: OpId, v: Value) -> Result<ScalarTy> {
        let t = self.m.value_type(v);
        let elem = match t.element_type() {
            Some(e) if t.is_vector() => e,
            Some(_) => {
                let e = fail!(Unsupported, "'{}' on '{t}'", self.m.name(op));
                return Err(self.err(op, e));
            }
            None => t,
        };
        match ScalarTy::of(elem) {
            // `i128` reaches only the ops of `wide` (routed before this) and whole moves.
            Some(s) if !s.is_wide() => Ok(s),
            _ => {
                let e = fail!(Unsupported, "values of type '{t}'");
                Err(self.err(op, e))
            }
        }
    }
}

/// The inclusive range of an `xla.range = [lo : index, hi : index]` attribute.
fn range_attr(a: Option<&Attribute>) -> Option<(i64, i64)> {
    match a?.as_array()? {
        [lo, hi] => Some((lo.as_i64()?, hi.as_i64()?)),
        _ => None,
    }
}

/// The `xla.range` argument attribute of parameter `i` of function `f`.
fn arg_range(m: &Module, f: OpId, i: usize) -> Option<(i64, i64)> {
    range_attr(ir::dialects::arg_attr(m, f, i, "xla.range"))
}
