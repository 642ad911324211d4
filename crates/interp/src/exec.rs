//! One simulated thread: runs compiled instructions until it exits or reaches a point where
//! it must wait for other threads (a barrier, `xla_gpu.sync_threads`, a warp shuffle).
//!
//! A thread is a program counter, a register stack (one frame per active call) and a call
//! stack, so stopping and resuming is free: [`Thread::run`] returns a [`Stop`], and the
//! scheduler in [`crate::grid`] completes the waiting instruction for all threads
//! together (publishing shared writes, exchanging shuffle values) before resuming them.

use crate::error::{Error, Result, ThreadId, fail};
use crate::inst::{Geometry, GepTerm, Inst, Pos, Program, Reg, Src, Transfer};
use crate::layout::{MAX_RANK, MemTy, TensorTy};
use crate::memory::Memory;
use crate::ops::Fault;
use crate::scalar::{mask, sext};
use crate::value::{Base, LocalStore, Mem, Ptr, Tensor, Val};
use std::collections::HashMap;
use std::rc::Rc;

/// How many calls may be active at once (guards against runaway recursion).
const MAX_CALL_DEPTH: usize = 256;

/// The launch geometry: a 1-d grid of `blocks` blocks of `threads` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub blocks: u64,
    pub threads: u64,
}

/// Why [`Thread::run`] returned. The waiting instruction is the one before `pc`.
pub(crate) enum Stop {
    /// The entry function returned these values.
    Exit(Vec<Val>),
    /// At `gpu.barrier`, `nvvm.barrier0` or `xla_gpu.sync_threads`.
    Barrier,
    /// At a warp shuffle.
    Shuffle,
}

struct Frame {
    func: u32,
    pc: u32,
    fp: u32,
    /// For a pure call, the memo entry its results fill.
    memo: Option<MemoKey>,
}

/// What identifies a pure call's argument: a scalar's bits (or poison), or a buffer the
/// thread has not written (its contents only change at a barrier, where memos are dropped).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum ArgKey {
    Bits(u64),
    Poison(u32),
    Buffer(Mem),
}

type MemoKey = (u32, Box<[ArgKey]>);

/// What a thread runs against.
pub(crate) struct Env<'a> {
    pub(crate) prog: &'a Program,
    pub(crate) mem: &'a mut Memory,
    pub(crate) launch: Launch,
    /// Instructions executed so far (for throughput reports).
    pub(crate) ops: u64,
}

/// A simulated thread.
pub(crate) struct Thread {
    regs: Vec<Val>,
    frames: Vec<Frame>,
    pub(crate) func: u32,
    pub(crate) pc: u32,
    fp: u32,
    pub(crate) id: ThreadId,
    scratch: Vec<Val>,
    /// Results of this thread's `xla_gpu.pure_call`s since it last waited. The emitters'
    /// subgraph functions call each other at the same indices from several places (XLA's
    /// CSE merges those calls after inlining); without a memo the interpreter would
    /// recompute shared subgraphs once per path, exponentially often.
    memo: HashMap<MemoKey, Box<[Val]>>,
}

/// The error for using `v` where a scalar is needed.
fn not_scalar(v: &Val, prog: &Program) -> Error {
    match v {
        Val::Poison(site) => poison(prog, *site, "used"),
        Val::Undef => fail!(InvalidIr, "a register is read before it is written"),
        _ => fail!(InvalidIr, "expected a scalar, found {}", kind(v)),
    }
}

fn kind(v: &Val) -> &'static str {
    match v {
        Val::Undef => "nothing",
        Val::S(_) => "a scalar",
        Val::Poison(_) => "poison",
        Val::Vector(_) => "a vector",
        Val::Tensor(_) => "a tensor",
        Val::Ptr(_) => "a pointer",
    }
}

/// A poison value from `site` reached a place where it matters (`how`).
pub(crate) fn poison(prog: &Program, site: u32, how: &str) -> Error {
    let s = &prog.sites[site as usize];
    fail!(
        Poison,
        "a poison value (produced by '{}' at {}:{}:{}) is {how}",
        s.op,
        s.file,
        s.loc.line,
        s.loc.col
    )
}

/// An op result: the value, poison from this site, or immediate undefined behaviour.
#[inline]
fn lane(r: std::result::Result<u64, Fault>, site: u32) -> Result<Val> {
    match r {
        Ok(v) => Ok(Val::S(v)),
        Err(Fault::Poison) => Ok(Val::Poison(site)),
        Err(Fault::Ub(what)) => Err(fail!(UndefinedBehavior, "{what}")),
    }
}

/// Applies `f` to a scalar or to each lane of a vector; poison stays poison.
fn map1(
    v: &Val,
    site: u32,
    prog: &Program,
    f: &dyn Fn(u64) -> std::result::Result<u64, Fault>,
) -> Result<Val> {
    match v {
        Val::S(x) => lane(f(*x), site),
        Val::Poison(s) => Ok(Val::Poison(*s)),
        Val::Vector(lanes) => Ok(Val::Vector(Rc::new(
            lanes
                .iter()
                .map(|l| map1(l, site, prog, f))
                .collect::<Result<_>>()?,
        ))),
        other => Err(not_scalar(other, prog)),
    }
}

/// Applies `f` lane by lane to operands of one shape; poison stays poison.
fn map_n(
    vals: &[&Val],
    site: u32,
    prog: &Program,
    f: &dyn Fn(&[u64]) -> std::result::Result<u64, Fault>,
) -> Result<Val> {
    if let Some(Val::Vector(first)) = vals.first() {
        let mut out = Vec::with_capacity(first.len());
        for i in 0..first.len() {
            let lanes: Vec<&Val> = vals
                .iter()
                .map(|v| match v {
                    Val::Vector(l) => l
                        .get(i)
                        .ok_or_else(|| fail!(InvalidIr, "vector lengths differ")),
                    other => Err(not_scalar(other, prog)),
                })
                .collect::<Result<_>>()?;
            out.push(map_n(&lanes, site, prog, f)?);
        }
        return Ok(Val::Vector(Rc::new(out)));
    }
    let mut scalars = [0u64; 3];
    for (slot, v) in scalars.iter_mut().zip(vals) {
        match v {
            Val::S(x) => *slot = *x,
            Val::Poison(s) => return Ok(Val::Poison(*s)),
            other => return Err(not_scalar(other, prog)),
        }
    }
    lane(f(&scalars[..vals.len()]), site)
}

/// `select` of one lane (or scalar): poison conditions make poison.
fn select(cond: &Val, t: &Val, f: &Val, prog: &Program) -> Result<Val> {
    match cond {
        Val::S(c) => Ok(if c & 1 != 0 { t.clone() } else { f.clone() }),
        Val::Poison(s) => Ok(Val::Poison(*s)),
        Val::Vector(cs) => {
            let (Val::Vector(ts), Val::Vector(fs)) = (t, f) else {
                return Err(fail!(
                    InvalidIr,
                    "a vector condition selects between vectors"
                ));
            };
            let lanes = cs
                .iter()
                .zip(ts.iter().zip(fs.iter()))
                .map(|(c, (t, f))| select(c, t, f, prog))
                .collect::<Result<_>>()?;
            Ok(Val::Vector(Rc::new(lanes)))
        }
        other => Err(not_scalar(other, prog)),
    }
}

/// Reads element `off` of a tensor value: its own write, else its base's element.
fn read_element(mem: &Memory, t: &Tensor, off: u64, tt: &TensorTy) -> Result<u64> {
    let bits = match t.overlay.get(off) {
        Some(b) => b,
        None => match &t.base {
            Base::Mem(m) => mem.get(*m).read_elem(off, tt.elem_bytes)?,
            Base::Local(l) => l.read(off as usize).ok_or_else(|| {
                fail!(
                    UninitializedRead,
                    "element {off} of a '{}' from tensor.empty is read but was never written",
                    tt.ty
                )
            })?,
        },
    };
    Ok(bits & tt.elem.mask())
}

/// Writes element `off` of a tensor value this thread owns.
fn write_element(t: &mut Tensor, off: u64, bits: u64) {
    match &mut t.base {
        Base::Local(l) => Rc::make_mut(l).write(off as usize, bits),
        Base::Mem(_) => t.overlay.set(off, bits),
    }
}

/// Row-major multi-indices of a shape, in order.
fn next_index(index: &mut [i64], shape: &[i64]) {
    for d in (0..index.len()).rev() {
        index[d] += 1;
        if index[d] < shape[d] {
            return;
        }
        index[d] = 0;
    }
}

impl Thread {
    pub(crate) fn new() -> Thread {
        Thread {
            regs: Vec::new(),
            frames: Vec::new(),
            func: 0,
            pc: 0,
            fp: 0,
            id: ThreadId {
                block: 0,
                thread: 0,
            },
            scratch: Vec::new(),
            memo: HashMap::new(),
        }
    }

    /// Resets the thread to the entry of `prog` with `args` as parameters.
    pub(crate) fn start(&mut self, prog: &Program, id: ThreadId, args: impl Iterator<Item = Val>) {
        let f = &prog.funcs[prog.entry as usize];
        self.regs.clear();
        self.regs.resize(f.num_regs as usize, Val::Undef);
        for (slot, a) in self.regs.iter_mut().zip(args) {
            *slot = a;
        }
        self.frames.clear();
        self.memo.clear();
        self.func = prog.entry;
        self.pc = 0;
        self.fp = 0;
        self.id = id;
    }

    #[inline]
    pub(crate) fn get(&self, r: Reg) -> &Val {
        &self.regs[(self.fp + r) as usize]
    }

    #[inline]
    pub(crate) fn set(&mut self, r: Reg, v: Val) {
        self.regs[(self.fp + r) as usize] = v;
    }

    #[inline]
    pub(crate) fn take(&mut self, s: Src) -> Val {
        let slot = &mut self.regs[(self.fp + s.reg) as usize];
        if s.take {
            std::mem::take(slot)
        } else {
            slot.clone()
        }
    }

    #[inline]
    fn scalar(&self, r: Reg, prog: &Program) -> Result<u64> {
        match self.get(r) {
            Val::S(x) => Ok(*x),
            other => Err(not_scalar(other, prog)),
        }
    }

    fn ptr(&self, r: Reg, prog: &Program) -> Result<Ptr> {
        match self.get(r) {
            Val::Ptr(p) => Ok(*p),
            Val::Poison(site) => Err(poison(prog, *site, "used as an address")),
            other => Err(fail!(
                InvalidIr,
                "expected a pointer, found {}",
                kind(other)
            )),
        }
    }

    /// Reads index registers into `buf`.
    fn indices<'b>(
        &self,
        regs: &[Reg],
        buf: &'b mut [i64; MAX_RANK],
        prog: &Program,
    ) -> Result<&'b [i64]> {
        for (slot, &r) in buf.iter_mut().zip(regs) {
            *slot = match self.get(r) {
                Val::S(x) => *x as i64,
                Val::Poison(site) => return Err(poison(prog, *site, "used as an index")),
                other => return Err(not_scalar(other, prog)),
            };
        }
        Ok(&buf[..regs.len()])
    }

    fn tensor(&self, r: Reg) -> Result<&Tensor> {
        match self.get(r) {
            Val::Tensor(t) => Ok(t),
            other => Err(fail!(InvalidIr, "expected a tensor, found {}", kind(other))),
        }
    }

    /// Runs until the thread exits or must wait; errors name the op and this thread.
    pub(crate) fn run(&mut self, env: &mut Env<'_>) -> Result<Stop> {
        let prog = env.prog;
        loop {
            let func = &prog.funcs[self.func as usize];
            let pc = self.pc as usize;
            self.pc += 1;
            env.ops += 1;
            let site = func.sites[pc];
            match self.step(&func.code[pc], site, env) {
                Ok(None) => {}
                Ok(Some(stop)) => {
                    self.memo.clear();
                    return Ok(stop);
                }
                Err(e) => return Err(e.at(&prog.sites[site as usize]).in_thread(self.id)),
            }
        }
    }

    /// The site of the instruction the thread stopped at.
    pub(crate) fn stop_site(&self, prog: &Program) -> u32 {
        prog.funcs[self.func as usize].sites[self.pc as usize - 1]
    }

    /// The instruction the thread stopped at.
    pub(crate) fn stop_inst<'p>(&self, prog: &'p Program) -> &'p Inst {
        &prog.funcs[self.func as usize].code[self.pc as usize - 1]
    }

    fn step(&mut self, inst: &Inst, site: u32, env: &mut Env<'_>) -> Result<Option<Stop>> {
        let prog = env.prog;
        match inst {
            Inst::Const { dst, val } => self.set(*dst, val.clone()),
            Inst::Copy { dst, src } => {
                let v = self.take(*src);
                self.set(*dst, v);
            }
            Inst::ParCopy(pairs) => {
                let mut vals = std::mem::take(&mut self.scratch);
                for (_, src) in pairs.iter() {
                    vals.push(self.take(*src));
                }
                for ((dst, _), v) in pairs.iter().zip(vals.drain(..)) {
                    self.set(*dst, v);
                }
                self.scratch = vals;
            }
            Inst::Op1 { op, dst, a } => {
                let v = match self.get(*a) {
                    Val::S(x) => lane(op.eval(*x), site)?,
                    other => map1(other, site, prog, &|x| op.eval(x))?,
                };
                self.set(*dst, v);
            }
            Inst::Op2 { op, dst, a, b } => {
                let v = match (self.get(*a), self.get(*b)) {
                    (Val::S(x), Val::S(y)) => lane(op.eval(*x, *y), site)?,
                    (x, y) => map_n(&[x, y], site, prog, &|v| op.eval(v[0], v[1]))?,
                };
                self.set(*dst, v);
            }
            Inst::Fma { op, dst, abc } => {
                let vals = abc.map(|r| self.get(r));
                let v = map_n(&vals, site, prog, &|v| op.eval(v[0], v[1], v[2]))?;
                self.set(*dst, v);
            }
            Inst::Select { dst, cond, t, f } => {
                let v = select(self.get(*cond), self.get(*t), self.get(*f), prog)?;
                self.set(*dst, v);
            }
            Inst::Jump(to) => self.pc = *to,
            Inst::BranchFalse { cond, to } => {
                if self.branch_condition(*cond, prog)? == 0 {
                    self.pc = *to;
                }
            }
            Inst::StepCheck {
                step,
                width,
                unsigned,
            } => {
                let s = self.scalar(*step, prog)?;
                if (*unsigned && s == 0) || (!*unsigned && sext(s, *width) <= 0) {
                    return Err(fail!(
                        UndefinedBehavior,
                        "the loop step {} is not positive",
                        sext(s, *width)
                    ));
                }
            }
            Inst::ForCheck {
                iv,
                ub,
                width,
                unsigned,
                exit,
            } => {
                let (i, u) = (self.scalar(*iv, prog)?, self.scalar(*ub, prog)?);
                let less = if *unsigned {
                    i < u
                } else {
                    sext(i, *width) < sext(u, *width)
                };
                if !less {
                    self.pc = *exit;
                }
            }
            Inst::ForNext {
                iv,
                step,
                ub,
                width,
                unsigned,
                body,
            } => {
                let (i, s, u) = (
                    self.scalar(*iv, prog)?,
                    self.scalar(*step, prog)?,
                    self.scalar(*ub, prog)?,
                );
                let wide = |x: u64| {
                    if *unsigned {
                        i128::from(x)
                    } else {
                        i128::from(sext(x, *width))
                    }
                };
                let next = wide(i) + wide(s);
                if next < wide(u) {
                    self.set(*iv, Val::S(next as u64 & mask(*width)));
                    self.pc = *body;
                }
            }
            Inst::LoopInit { map, ivs, exit } => {
                let m = &prog.maps[*map as usize];
                if m.syms[..m.range_vars].iter().any(|r| r.is_empty()) {
                    self.pc = *exit;
                } else {
                    for (k, r) in m.syms[..m.range_vars].iter().enumerate() {
                        self.set(ivs + k as u32, Val::S(r.lo as u64));
                    }
                }
            }
            Inst::LoopPoint {
                map,
                dims,
                ivs,
                results,
                skip,
            } => {
                let m = &prog.maps[*map as usize];
                let (mut d, mut s) = ([0; MAX_RANK], [0i64; MAX_RANK]);
                let d = self.indices(dims, &mut d, prog)?;
                for (k, slot) in s[..m.range_vars].iter_mut().enumerate() {
                    *slot = self.scalar(ivs + k as u32, prog)? as i64;
                }
                let s = &s[..m.range_vars];
                if m.contains(d, s) {
                    for (k, e) in m.results.iter().enumerate() {
                        self.set(results + k as u32, Val::S(e.eval(d, s) as u64));
                    }
                } else {
                    self.pc = *skip;
                }
            }
            Inst::LoopNext { map, ivs, point } => {
                let m = &prog.maps[*map as usize];
                for k in (0..m.range_vars).rev() {
                    let r = m.syms[k];
                    let reg = ivs + k as u32;
                    let v = self.scalar(reg, prog)? as i64;
                    if v < r.hi {
                        self.set(reg, Val::S((v + 1) as u64));
                        self.pc = *point;
                        return Ok(None);
                    }
                    self.set(reg, Val::S(r.lo as u64));
                }
            }
            Inst::Apply { map, args, results } => {
                let m = &prog.maps[*map as usize];
                let mut buf = [0; MAX_RANK];
                let all = self.indices(args, &mut buf, prog)?;
                let (d, s) = all.split_at(m.dims.len());
                for (k, e) in m.results.iter().enumerate() {
                    self.set(results + k as u32, Val::S(e.eval(d, s) as u64));
                }
            }
            Inst::Call {
                func,
                args,
                results,
                pure,
            } => {
                let key = if *pure {
                    self.memo_key(*func, args)
                } else {
                    None
                };
                if let Some(hit) = key.as_ref().and_then(|k| self.memo.get(k)) {
                    let hit = hit.clone();
                    for (&dst, v) in results.iter().zip(hit.into_vec()) {
                        self.set(dst, v);
                    }
                } else {
                    self.call(*func, args, key, prog)?;
                }
            }
            Inst::Return(vals) => {
                if self.frames.is_empty() {
                    let out = vals
                        .iter()
                        .enumerate()
                        .map(|(i, &r)| {
                            let take = !vals[i + 1..].contains(&r);
                            self.take(Src { reg: r, take })
                        })
                        .collect();
                    return Ok(Some(Stop::Exit(out)));
                }
                self.ret(vals, prog);
            }
            Inst::Geometry {
                what,
                width,
                dst,
                range,
            } => {
                let (id, launch) = (self.id, env.launch);
                let v = match *what {
                    Geometry::ThreadId(0) => id.thread,
                    Geometry::BlockId(0) => id.block,
                    Geometry::BlockDim(0) => launch.threads,
                    Geometry::GridDim(0) => launch.blocks,
                    Geometry::ThreadId(_) | Geometry::BlockId(_) => 0,
                    Geometry::BlockDim(_) | Geometry::GridDim(_) => 1,
                    Geometry::LaneId => id.thread % 32,
                    Geometry::WarpSize => 32,
                };
                if let Some((lo, hi)) = *range
                    && !(lo..=hi).contains(&(v as i64))
                {
                    return Err(fail!(
                        UndefinedBehavior,
                        "the value {v} is outside the range [{lo}, {hi}] the IR promises"
                    ));
                }
                self.set(*dst, Val::S(v & mask(*width)));
            }
            Inst::Barrier | Inst::SyncThreads { .. } => return Ok(Some(Stop::Barrier)),
            Inst::Shuffle(_) => return Ok(Some(Stop::Shuffle)),
            Inst::Extract {
                tensor,
                ty,
                indices,
                dst,
                pred,
            } => {
                if let Some((cond, fallback)) = *pred
                    && self.branch_condition(cond, prog)? == 0
                {
                    let v = self.get(fallback).clone();
                    self.set(*dst, v);
                    return Ok(None);
                }
                let tt = &prog.tensors[*ty as usize];
                let mut buf = [0; MAX_RANK];
                let off = tt.offset(self.indices(indices, &mut buf, prog)?)?;
                let bits = read_element(env.mem, self.tensor(*tensor)?, off, tt)?;
                self.set(*dst, Val::S(bits));
            }
            Inst::Insert {
                value,
                tensor,
                ty,
                indices,
                dst,
                pred,
            } => {
                if let Some(cond) = *pred
                    && self.branch_condition(cond, prog)? == 0
                {
                    let v = self.take(*tensor);
                    self.set(*dst, v);
                    return Ok(None);
                }
                let bits = match self.get(*value) {
                    Val::S(b) => *b,
                    Val::Poison(s) => return Err(poison(prog, *s, "written to a tensor")),
                    other => return Err(not_scalar(other, prog)),
                };
                let tt = &prog.tensors[*ty as usize];
                let mut buf = [0; MAX_RANK];
                let off = tt.offset(self.indices(indices, &mut buf, prog)?)?;
                let mut t = self.take_tensor(*tensor)?;
                write_element(Rc::make_mut(&mut t), off, bits);
                self.set(*dst, Val::Tensor(t));
            }
            Inst::Empty { ty, dst } => {
                let tt = &prog.tensors[*ty as usize];
                let store = LocalStore {
                    bytes: vec![0; tt.bytes()],
                    elem_bytes: tt.elem_bytes,
                    init: Some(vec![0; tt.len.div_ceil(64)]),
                };
                let t = Tensor {
                    base: Base::Local(Rc::new(store)),
                    overlay: Default::default(),
                };
                self.set(*dst, Val::Tensor(Rc::new(t)));
            }
            Inst::AllocShared { slot, dst } => {
                let t = Tensor::view(Mem::Shared(*slot));
                self.set(*dst, Val::Tensor(Rc::new(t)));
            }
            Inst::TransferRead(t) => self.transfer_read(t, env)?,
            Inst::TransferWrite(t) => self.transfer_write(t, prog)?,
            Inst::VecExtract {
                vector,
                shape,
                pos,
                dst,
            } => {
                let v = match self.lane_range(shape, pos, prog)? {
                    None => Val::Poison(site),
                    Some(range) => {
                        let Val::Vector(lanes) = self.get(*vector) else {
                            return Err(not_scalar(self.get(*vector), prog));
                        };
                        if pos.len() == shape.len() {
                            lanes[range.start].clone()
                        } else {
                            Val::Vector(Rc::new(lanes[range].to_vec()))
                        }
                    }
                };
                self.set(*dst, v);
            }
            Inst::VecInsert {
                value,
                vector,
                shape,
                pos,
                dst,
            } => {
                let v = match self.lane_range(shape, pos, prog)? {
                    None => Val::Poison(site),
                    Some(range) => {
                        let new: Vec<Val> = match self.get(*value) {
                            Val::Vector(l) => l.to_vec(),
                            scalar => vec![scalar.clone()],
                        };
                        let Val::Vector(mut lanes) = self.take(*vector) else {
                            return Err(fail!(InvalidIr, "expected a vector"));
                        };
                        Rc::make_mut(&mut lanes)[range].clone_from_slice(&new);
                        Val::Vector(lanes)
                    }
                };
                self.set(*dst, v);
            }
            Inst::Broadcast { src, from, to, dst } => {
                let n: usize = to.iter().product::<i64>() as usize;
                let lanes = match (from, self.get(*src)) {
                    (None, v) => vec![v.clone(); n],
                    (Some(from), Val::Vector(src_lanes)) => {
                        let lead = to.len() - from.len();
                        let mut index = vec![0i64; to.len()];
                        let mut out = Vec::with_capacity(n);
                        for _ in 0..n {
                            let mut k = 0usize;
                            for (d, &size) in from.iter().enumerate() {
                                let i = if size == 1 { 0 } else { index[lead + d] };
                                k = k * size as usize + i as usize;
                            }
                            out.push(src_lanes[k].clone());
                            next_index(&mut index, to);
                        }
                        out
                    }
                    (Some(_), other) => return Err(not_scalar(other, prog)),
                };
                self.set(*dst, Val::Vector(Rc::new(lanes)));
            }
            Inst::AddressOf { mem, dst } => self.set(
                *dst,
                Val::Ptr(Ptr {
                    mem: *mem,
                    offset: 0,
                }),
            ),
            Inst::Gep { base, terms, dst } => {
                let mut p = self.ptr(*base, prog)?;
                for term in terms.iter() {
                    let bytes = match *term {
                        GepTerm::Bytes(b) => b,
                        GepTerm::Scaled { reg, width, stride } => match self.get(reg) {
                            Val::S(x) => sext(*x, width).wrapping_mul(stride),
                            Val::Poison(s) => return Err(poison(prog, *s, "used as an address")),
                            other => return Err(not_scalar(other, prog)),
                        },
                    };
                    p.offset = p.offset.wrapping_add(bytes);
                }
                self.set(*dst, Val::Ptr(p));
            }
            Inst::Load {
                ptr,
                ty,
                align,
                dst,
            } => {
                let p = self.ptr(*ptr, prog)?;
                let v = load(env.mem, p, *ty, *align)?;
                self.set(*dst, v);
            }
            Inst::Store {
                value,
                ptr,
                ty,
                align,
            } => {
                let p = self.ptr(*ptr, prog)?;
                store(env.mem, p, *ty, *align, self.get(*value), prog)?;
            }
        }
        Ok(None)
    }

    /// A branch or predicate condition; branching on poison is undefined behaviour.
    fn branch_condition(&self, cond: Reg, prog: &Program) -> Result<u64> {
        match self.get(cond) {
            Val::S(c) => Ok(c & 1),
            Val::Poison(s) => Err(poison(prog, *s, "used as a condition")),
            other => Err(not_scalar(other, prog)),
        }
    }

    fn take_tensor(&mut self, src: Src) -> Result<Rc<Tensor>> {
        match self.take(src) {
            Val::Tensor(t) => Ok(t),
            other => Err(fail!(
                InvalidIr,
                "expected a tensor, found {}",
                kind(&other)
            )),
        }
    }

    /// The memo key of a pure call, if every argument has one.
    fn memo_key(&self, func: u32, args: &[Src]) -> Option<MemoKey> {
        let keys = args
            .iter()
            .map(|a| match self.get(a.reg) {
                Val::S(b) => Some(ArgKey::Bits(*b)),
                Val::Poison(s) => Some(ArgKey::Poison(*s)),
                Val::Tensor(t) => match t.base {
                    Base::Mem(m) if t.overlay.entries().is_empty() => Some(ArgKey::Buffer(m)),
                    _ => None,
                },
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some((func, keys))
    }

    fn call(
        &mut self,
        func: u32,
        args: &[Src],
        memo: Option<MemoKey>,
        prog: &Program,
    ) -> Result<()> {
        if self.frames.len() >= MAX_CALL_DEPTH {
            return Err(fail!(
                Unsupported,
                "calls nested deeper than {MAX_CALL_DEPTH}"
            ));
        }
        let callee = &prog.funcs[func as usize];
        let fp = self.regs.len() as u32;
        for &a in args {
            let v = self.take(a);
            self.regs.push(v);
        }
        self.regs
            .resize((fp + callee.num_regs) as usize, Val::Undef);
        for (i, range) in callee.param_ranges.iter().enumerate() {
            if let (Some((lo, hi)), Val::S(x)) = (range, &self.regs[fp as usize + i])
                && !(*lo..=*hi).contains(&(*x as i64))
            {
                return Err(fail!(
                    UndefinedBehavior,
                    "argument #{i} of @{} is {}, outside its xla.range [{lo}, {hi}]",
                    callee.name,
                    *x as i64
                ));
            }
        }
        self.frames.push(Frame {
            func: self.func,
            pc: self.pc,
            fp: self.fp,
            memo,
        });
        self.func = func;
        self.pc = 0;
        self.fp = fp;
        Ok(())
    }

    /// Returns `vals` to the caller's call instruction.
    fn ret(&mut self, vals: &[Reg], prog: &Program) {
        let mut out = std::mem::take(&mut self.scratch);
        for (i, &r) in vals.iter().enumerate() {
            let take = !vals[i + 1..].contains(&r);
            out.push(self.take(Src { reg: r, take }));
        }
        self.regs.truncate(self.fp as usize);
        let frame = self.frames.pop().expect("a caller");
        self.func = frame.func;
        self.pc = frame.pc;
        self.fp = frame.fp;
        if let Some(key) = frame.memo {
            self.memo.insert(key, out.as_slice().into());
        }
        let Inst::Call { results, .. } = self.stop_inst(prog) else {
            unreachable!("functions return to their call instruction");
        };
        for (&dst, v) in results.iter().zip(out.drain(..)) {
            self.set(dst, v);
        }
        self.scratch = out;
    }

    /// The lanes a `vector.extract`/`insert` position selects, or `None` for a poison
    /// position (`-1`, or a dynamic one out of range).
    fn lane_range(
        &self,
        shape: &[i64],
        pos: &[Pos],
        prog: &Program,
    ) -> Result<Option<std::ops::Range<usize>>> {
        let mut offset = 0usize;
        for (k, p) in pos.iter().enumerate() {
            let i = match *p {
                Pos::Static(i) => i,
                Pos::Dynamic(r) => self.scalar(r, prog)? as i64,
            };
            if !(0..shape[k]).contains(&i) {
                return Ok(None);
            }
            offset = offset * shape[k] as usize + i as usize;
        }
        let inner: usize = shape[pos.len()..].iter().product::<i64>() as usize;
        Ok(Some(offset * inner..(offset + 1) * inner))
    }

    /// The tensor index of each vector lane, or `None` for lanes outside the tensor along a
    /// dimension not marked in-bounds; an out-of-bounds index elsewhere is an error.
    fn transfer_indices(&self, t: &Transfer, prog: &Program) -> Result<Vec<Option<u64>>> {
        let tt = &prog.tensors[t.ty as usize];
        let mut buf = [0; MAX_RANK];
        let base = self.indices(&t.indices, &mut buf, prog)?.to_vec();
        let lanes: usize = t.vector_shape.iter().product::<i64>() as usize;
        let mut pos = vec![0i64; t.vector_shape.len()];
        let mut out = Vec::with_capacity(lanes);
        let mut index = base.clone();
        for _ in 0..lanes {
            index.copy_from_slice(&base);
            for (k, d) in t.dims.iter().enumerate() {
                if let Some(d) = *d {
                    index[d] += pos[k];
                }
            }
            if tt.contains(&index) {
                out.push(Some(tt.offset(&index)?));
            } else {
                let masked = (0..index.len()).all(|d| {
                    (0..tt.shape[d]).contains(&index[d])
                        || t.dims
                            .iter()
                            .zip(t.in_bounds.iter())
                            .any(|(&walked, &ib)| walked == Some(d) && !ib)
                });
                if !masked {
                    return Err(tt.out_of_bounds(&index));
                }
                out.push(None);
            }
            next_index(&mut pos, &t.vector_shape);
        }
        Ok(out)
    }

    fn transfer_read(&mut self, t: &Transfer, env: &mut Env<'_>) -> Result<()> {
        let prog = env.prog;
        let tt = &prog.tensors[t.ty as usize];
        let offsets = self.transfer_indices(t, prog)?;
        let tensor = self.tensor(t.tensor.reg)?;
        let padding = self.get(t.other);
        let lanes = offsets
            .iter()
            .map(|off| match off {
                Some(off) => read_element(env.mem, tensor, *off, tt).map(Val::S),
                None => Ok(padding.clone()),
            })
            .collect::<Result<_>>()?;
        self.set(t.dst, Val::Vector(Rc::new(lanes)));
        Ok(())
    }

    fn transfer_write(&mut self, t: &Transfer, prog: &Program) -> Result<()> {
        let offsets = self.transfer_indices(t, prog)?;
        let Val::Vector(lanes) = self.get(t.other).clone() else {
            return Err(fail!(InvalidIr, "expected a vector"));
        };
        let mut tensor = self.take_tensor(t.tensor)?;
        let owned = Rc::make_mut(&mut tensor);
        for (off, v) in offsets.iter().zip(lanes.iter()) {
            let Some(off) = off else { continue };
            match v {
                Val::S(bits) => write_element(owned, *off, *bits),
                Val::Poison(s) => return Err(poison(prog, *s, "written to a tensor")),
                other => return Err(not_scalar(other, prog)),
            }
        }
        self.set(t.dst, Val::Tensor(tensor));
        Ok(())
    }
}

/// Checks that `p` is aligned for an access.
fn check_alignment(mem: &Memory, p: Ptr, ty: MemTy, align: u64, what: &str) -> Result<()> {
    if p.offset.rem_euclid(align as i64) != 0 {
        return Err(fail!(
            Misaligned,
            "{what} of {ty} at byte offset {} of {} needs {align}-byte alignment",
            p.offset,
            mem.get(p.mem).name
        ));
    }
    Ok(())
}

fn load(mem: &Memory, p: Ptr, ty: MemTy, align: u64) -> Result<Val> {
    check_alignment(mem, p, ty, align, "load")?;
    let storage = mem.get(p.mem);
    let eb = ty.elem.bytes();
    let lane = |i: usize| -> Result<Val> {
        let bits = storage.load(p.offset + (i * eb) as i64, eb)?;
        Ok(Val::S(bits & ty.elem.mask()))
    };
    if ty.lanes == 0 {
        return lane(0);
    }
    let lanes = (0..ty.lanes as usize).map(lane).collect::<Result<_>>()?;
    Ok(Val::Vector(Rc::new(lanes)))
}

fn store(mem: &mut Memory, p: Ptr, ty: MemTy, align: u64, v: &Val, prog: &Program) -> Result<()> {
    check_alignment(mem, p, ty, align, "store")?;
    let eb = ty.elem.bytes();
    let single = [v.clone()];
    let lanes: &[Val] = match v {
        Val::Vector(l) => l,
        _ => &single,
    };
    let storage = mem.get_mut(p.mem);
    for (i, lane) in lanes.iter().enumerate() {
        match lane {
            Val::S(bits) => storage.store(p.offset + (i * eb) as i64, eb, *bits)?,
            Val::Poison(s) => return Err(poison(prog, *s, "stored to memory")),
            other => return Err(not_scalar(other, prog)),
        }
    }
    Ok(())
}
