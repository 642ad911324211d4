//! One simulated thread: runs compiled instructions until it exits or reaches a point where
//! it must wait for other threads (a barrier, `xla_gpu.sync_threads`, a warp shuffle).
//!
//! A thread is a program counter, a register stack (one frame per active call) and a call
//! stack, so stopping and resuming is free: [`Thread::run`] returns a [`Stop`], and the
//! scheduler in [`crate::grid`] completes the waiting instruction for all threads
//! together (publishing shared writes, exchanging shuffle values) before resuming them.

mod calls;
mod data;
mod lanes;
mod pointers;

pub(crate) use lanes::poison;

use calls::MemoKey;
use lanes::{LaneFn, kind, lane, map_n, not_scalar, select};

use crate::error::{Result, ThreadId, fail};
use crate::inst::{Geometry, Inst, Program, Reg, Src};
use crate::layout::MAX_RANK;
use crate::memory::{Memory, Storage};
use crate::ops::Fault;
use crate::scalar::{mask, sext};
use crate::value::{Ptr, Tensor, Val};
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
    /// How many private slots the caller had: the callee's are freed when it returns.
    private_slots: usize,
}

/// What a thread runs against.
pub(crate) struct Env<'a> {
    pub(crate) prog: &'a Program,
    pub(crate) mem: &'a mut Memory,
    pub(crate) launch: Launch,
    /// Instructions executed so far (for throughput reports).
    pub(crate) ops: u64,
    /// The instructions one thread may execute ([`crate::Kernel::with_step_limit`]).
    pub(crate) step_limit: u64,
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
    /// Results of this thread's calls of read-only functions since it last wrote or waited. The emitters'
    /// subgraph functions call each other at the same indices from several places (XLA's
    /// CSE merges those calls after inlining); without a memo the interpreter would
    /// recompute shared subgraphs once per path, exponentially often.
    memo: HashMap<MemoKey, Box<[Val]>>,
    /// The thread's `llvm.alloca` slots ([`Mem::Private`]), freed when the function that
    /// made them returns.
    pub(crate) private: Vec<Storage>,
    /// Instructions this thread has executed since it started.
    steps: u64,
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
            private: Vec::new(),
            steps: 0,
        }
    }

    /// Resets the thread to the entry of `prog` with `args` as parameters.
    pub(crate) fn start(&mut self, prog: &Program, id: ThreadId, args: impl Iterator<Item = Val>) {
        let f = &prog.funcs[prog.entry as usize];
        // The registers keep what the previous thread left in them: the verifier has
        // checked that every use is dominated by its definition, so a thread writes a
        // register before it reads it, and resetting them all for every simulated thread
        // was a tenth of the work of a short kernel. (A register a value was moved out of
        // is still `Undef`, so the compiler's last-use analysis stays checked.)
        self.regs.truncate(f.num_regs as usize);
        self.regs.resize_with(f.num_regs as usize, || Val::Undef);
        for (slot, a) in self.regs.iter_mut().zip(args) {
            *slot = a;
        }
        self.frames.clear();
        self.memo.clear();
        self.private.clear();
        self.func = prog.entry;
        self.pc = 0;
        self.fp = 0;
        self.id = id;
        self.steps = 0;
    }

    #[inline(always)]
    pub(crate) fn get(&self, r: Reg) -> &Val {
        &self.regs[(self.fp + r) as usize]
    }

    /// Writes a register. Scalars go through [`Thread::set_scalar`]: a `Val` built on the
    /// stack by two narrow stores and moved with one 16-byte load stalls store
    /// forwarding, the largest single cost of scalar code.
    #[inline(always)]
    pub(crate) fn set(&mut self, r: Reg, v: Val) {
        match v {
            Val::S(x) => self.set_scalar(r, x),
            v => self.regs[(self.fp + r) as usize] = v,
        }
    }

    /// Writes a scalar, in place over a scalar register.
    #[inline(always)]
    fn set_scalar(&mut self, r: Reg, x: u64) {
        match &mut self.regs[(self.fp + r) as usize] {
            Val::S(slot) => *slot = x,
            // An unwritten register holds nothing to drop.
            slot @ Val::Undef => std::mem::forget(std::mem::replace(slot, Val::S(x))),
            slot => *slot = Val::S(x),
        }
    }

    /// Writes a scalar op's result: its value, or poison from `site`.
    #[inline(always)]
    fn set_lane(
        &mut self,
        r: Reg,
        v: std::result::Result<u64, Fault>,
        site: u32,
    ) -> Result<Option<Stop>> {
        match v {
            Ok(x) => self.set_scalar(r, x),
            v => {
                let v = lane(v, site)?;
                self.set(r, v);
            }
        }
        Ok(None)
    }

    #[inline(always)]
    pub(crate) fn take(&mut self, s: Src) -> Val {
        let slot = &mut self.regs[(self.fp + s.reg) as usize];
        if s.take {
            std::mem::take(slot)
        } else {
            slot.clone()
        }
    }

    #[inline(always)]
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
            self.steps += 1;
            let site = func.sites[pc];
            if self.steps > env.step_limit {
                let e = fail!(
                    StepLimit,
                    "the thread has run {} instructions without finishing (an endless loop?); \
                     hlo-interp --max-steps raises the limit",
                    env.step_limit
                );
                return Err(e.at(&prog.sites[site as usize]).in_thread(self.id));
            }
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

    #[inline(always)]
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
                if let Val::S(x) = self.get(*a) {
                    return self.set_lane(*dst, op.eval(*x), site);
                }
                self.map_into(*dst, &[*a], site, prog, &|v| op.eval(v[0]))?;
            }
            Inst::Op2 { op, dst, a, b } => {
                if let (Val::S(x), Val::S(y)) = (self.get(*a), self.get(*b)) {
                    return self.set_lane(*dst, op.eval(*x, *y), site);
                }
                self.map_into(*dst, &[*a, *b], site, prog, &|v| op.eval(v[0], v[1]))?;
            }
            Inst::Fma { op, dst, abc } => {
                if let [Val::S(a), Val::S(b), Val::S(c)] = abc.map(|r| self.get(r)) {
                    return self.set_lane(*dst, op.eval(*a, *b, *c), site);
                }
                self.map_into(*dst, abc, site, prog, &|v| op.eval(v[0], v[1], v[2]))?;
            }
            Inst::CarryChain {
                chain,
                args,
                widths,
                dst,
            } => {
                let inputs = args
                    .iter()
                    .map(|&r| match self.get(r) {
                        Val::S(x) => Ok(*x),
                        Val::Poison(s) => Err(lanes::poison(prog, *s, "used in inline assembly")),
                        other => Err(not_scalar(other, prog)),
                    })
                    .collect::<Result<Vec<u64>>>()?;
                let outputs = chain.run(&inputs)?;
                let mut fields = outputs
                    .into_iter()
                    .zip(widths.iter())
                    .map(|(v, &w)| Val::S(v & mask(w)));
                let value = if widths.len() == 1 {
                    fields.next().unwrap_or_default()
                } else {
                    Val::Vector(Rc::new(fields.collect()))
                };
                self.set(*dst, value);
            }
            Inst::Wide { op, dst, a, b } => {
                let v = lanes::wide(*op, self.get(*a), self.get(*b), site, prog)?;
                self.set(*dst, v);
            }
            Inst::Regroup { src, from, to, dst } => {
                let lanes = match self.get(*src) {
                    Val::Vector(lanes) if from.1 => lanes.to_vec(),
                    v @ (Val::S(_) | Val::Poison(_)) if !from.1 => vec![v.clone()],
                    other => return Err(not_scalar(other, prog)),
                };
                let value = lanes::regroup(&lanes, from.0, *to, site, prog)?;
                self.set(*dst, value);
            }
            Inst::WidenF8x2 { cvt, src, dst } => {
                let pair = match self.get(*src) {
                    Val::S(x) => *x as u32,
                    Val::Poison(s) => return Err(lanes::poison(prog, *s, "converted")),
                    other => return Err(not_scalar(other, prog)),
                };
                let halves = [pair, pair >> 8].map(|code| Val::S(cvt.widen(code).into()));
                self.set(*dst, Val::Vector(Rc::new(halves.to_vec())));
            }
            Inst::FunnelShl { width, dst, abc } => {
                let w = *width;
                self.map_into(*dst, abc, site, prog, &|v| {
                    Ok(crate::ops::funnel_shl(v[0], v[1], v[2], w))
                })?;
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
                memo,
            } => {
                let key = if *memo {
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
            Inst::Extract { .. }
            | Inst::Insert { .. }
            | Inst::AtomicWrite { .. }
            | Inst::Empty { .. }
            | Inst::AllocShared { .. }
            | Inst::TransferRead(_)
            | Inst::TransferWrite(_)
            | Inst::VecExtract { .. }
            | Inst::VecInsert { .. }
            | Inst::ShuffleVector { .. }
            | Inst::Broadcast { .. }
            | Inst::MultiReduction { .. }
            | Inst::Transpose { .. } => self.data(inst, site, env)?,
            Inst::AddressOf { .. }
            | Inst::Gep { .. }
            | Inst::Alloca { .. }
            | Inst::Load { .. }
            | Inst::Store { .. }
            | Inst::AtomicRmwPtr { .. }
            | Inst::CmpXchg { .. } => self.memory(inst, env)?,
        }
        Ok(None)
    }

    /// Applies a lane function to the registers `srcs` (at most three) into `dst`, reusing
    /// the vector `dst` holds where it can (see [`map_n`]).
    fn map_into(
        &mut self,
        dst: Reg,
        srcs: &[Reg],
        site: u32,
        prog: &Program,
        f: LaneFn<'_>,
    ) -> Result<()> {
        let mut out = std::mem::take(&mut self.regs[(self.fp + dst) as usize]);
        let mut vals = [&Val::Undef; 3];
        for (slot, &r) in vals.iter_mut().zip(srcs) {
            *slot = self.get(r);
        }
        let result = map_n(&mut out, &vals[..srcs.len()], site, prog, f);
        self.set(dst, out);
        result
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
}
