//! Pointer instructions: `llvm.mlir.addressof`, `llvm.getelementptr`, and loads and stores
//! with bounds, initialization and alignment checks.

use super::lanes::{not_scalar, poison};
use super::{Env, Thread};
use crate::error::{Result, fail};
use crate::inst::{GepTerm, Inst, Program};
use crate::layout::MemTy;
use crate::memory::Memory;
use crate::scalar::sext;
use crate::value::{Ptr, Val};
use std::rc::Rc;

impl Thread {
    /// Executes a pointer instruction.
    pub(super) fn memory(&mut self, inst: &Inst, env: &mut Env<'_>) -> Result<()> {
        let prog = env.prog;
        match inst {
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
                if !self.memo.is_empty() {
                    self.memo.clear();
                }
            }
            _ => unreachable!("not a pointer instruction"),
        }
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
        let bits = storage.load(p.offset.wrapping_add((i * eb) as i64), eb)?;
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
            Val::S(bits) => storage.store(p.offset.wrapping_add((i * eb) as i64), eb, *bits)?,
            Val::Poison(s) => return Err(poison(prog, *s, "stored to memory")),
            other => return Err(not_scalar(other, prog)),
        }
    }
    Ok(())
}
