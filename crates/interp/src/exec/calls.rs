//! Calls and returns, and the memo of pure calls.

use super::{Frame, MAX_CALL_DEPTH, Thread};
use crate::error::{Result, fail};
use crate::inst::{Inst, Program, Reg, Src};
use crate::value::{Base, Mem, Val};

/// What identifies a pure call's argument: a scalar's bits (or poison), a buffer the thread
/// has not written, or a pointer. Memory only changes under a thread's memo through its own
/// stores, which drop the memo, and while it waits, which drops it too.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum ArgKey {
    Bits(u64),
    Poison(u32),
    Buffer(Mem),
    Ptr(Mem, i64),
}

pub(super) type MemoKey = (u32, Box<[ArgKey]>);

impl Thread {
    /// The memo key of a pure call, if every argument has one.
    pub(super) fn memo_key(&self, func: u32, args: &[Src]) -> Option<MemoKey> {
        let keys = args
            .iter()
            .map(|a| match self.get(a.reg) {
                Val::S(b) => Some(ArgKey::Bits(*b)),
                Val::Poison(s) => Some(ArgKey::Poison(*s)),
                Val::Tensor(t) => match t.base {
                    Base::Mem(m) if t.overlay.entries().is_empty() => Some(ArgKey::Buffer(m)),
                    _ => None,
                },
                Val::Ptr(p) => Some(ArgKey::Ptr(p.mem, p.offset)),
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some((func, keys))
    }

    pub(super) fn call(
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
            .resize_with((fp + callee.num_regs) as usize, || Val::Undef);
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
            private_slots: self.private.len(),
        });
        self.func = func;
        self.pc = 0;
        self.fp = fp;
        Ok(())
    }

    /// Returns `vals` to the caller's call instruction.
    pub(super) fn ret(&mut self, vals: &[Reg], prog: &Program) {
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
        self.private.truncate(frame.private_slots);
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
}
