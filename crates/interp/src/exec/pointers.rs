//! Pointer instructions: `llvm.mlir.addressof`, `llvm.getelementptr`, `llvm.alloca` (a
//! thread's own memory, uninitialized until stored), and loads and stores with bounds,
//! initialization and alignment checks.

use super::lanes::{not_scalar, poison};
use super::{Env, Thread};
use crate::error::{Result, fail};
use crate::inst::{GepTerm, Inst, Program};
use crate::layout::MemTy;
use crate::memory::Storage;
use crate::scalar::sext;
use crate::value::{Mem, Ptr, Val};
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
                // A poison base or index makes a poison pointer (LLVM's rule): an error only
                // where it is loaded or stored through. O3 computes both arms' addresses of
                // a `select` and picks one.
                if let Val::Poison(s) = self.get(*base) {
                    let v = Val::Poison(*s);
                    self.set(*dst, v);
                    return Ok(());
                }
                let mut p = self.ptr(*base, prog)?;
                for term in terms.iter() {
                    let bytes = match *term {
                        GepTerm::Bytes(b) => b,
                        GepTerm::Scaled { reg, width, stride } => match self.get(reg) {
                            Val::S(x) => sext(*x, width).wrapping_mul(stride),
                            Val::Poison(s) => {
                                let v = Val::Poison(*s);
                                self.set(*dst, v);
                                return Ok(());
                            }
                            other => return Err(not_scalar(other, prog)),
                        },
                    };
                    p.offset = p.offset.wrapping_add(bytes);
                }
                self.set(*dst, Val::Ptr(p));
            }
            Inst::Alloca {
                count,
                width,
                elem_bytes,
                dst,
            } => {
                let n = match self.get(*count) {
                    Val::S(x) => sext(*x, *width),
                    Val::Poison(s) => return Err(poison(prog, *s, "used as an alloca size")),
                    other => return Err(not_scalar(other, prog)),
                };
                let bytes = self.private_bytes_left(n, *elem_bytes)?;
                let slot = self.private.len() as u32;
                let name = format!("stack slot #{slot}");
                self.private.push(Storage::uninit(name, bytes, 1));
                let p = Ptr {
                    mem: Mem::Private(slot),
                    offset: 0,
                };
                self.set(*dst, Val::Ptr(p));
            }
            Inst::Load {
                ptr,
                ty,
                align,
                dst,
            } => {
                let p = self.ptr(*ptr, prog)?;
                let storage = match p.mem {
                    Mem::Private(slot) => self.private_slot(slot)?,
                    _ => env.mem.get(p.mem),
                };
                let v = load(storage, p, *ty, *align)?;
                self.set(*dst, v);
            }
            Inst::Store {
                value,
                ptr,
                ty,
                align,
            } => {
                let p = self.ptr(*ptr, prog)?;
                let v = self.get(*value).clone();
                let storage = match p.mem {
                    Mem::Private(slot) => {
                        self.private_slot(slot)?;
                        &mut self.private[slot as usize]
                    }
                    _ => env.mem.get_mut(p.mem),
                };
                store(storage, p, *ty, *align, &v, prog)?;
                if !self.memo.is_empty() {
                    self.memo.clear();
                }
            }
            Inst::AtomicRmwPtr {
                ptr,
                value,
                op,
                ty,
                dst,
            } => {
                let bits = self.scalar_bits(*value, prog, "stored to memory")?;
                let (storage, p) = self.atomic_target(*ptr, *ty, env)?;
                let eb = ty.elem.bytes();
                let old = storage.load(p.offset, eb)? & ty.elem.mask();
                let new = match op {
                    None => bits,
                    Some(f) => f.eval(old, bits).map_err(|_| {
                        fail!(UndefinedBehavior, "an atomic update that produced poison")
                    })?,
                };
                storage.store(p.offset, eb, new & ty.elem.mask())?;
                self.memo.clear();
                self.set(*dst, Val::S(old));
            }
            Inst::CmpXchg {
                ptr,
                cmp,
                new,
                ty,
                dst,
            } => {
                let expected = self.scalar_bits(*cmp, prog, "compared in memory")?;
                let bits = self.scalar_bits(*new, prog, "stored to memory")?;
                let (storage, p) = self.atomic_target(*ptr, *ty, env)?;
                let eb = ty.elem.bytes();
                let old = storage.load(p.offset, eb)? & ty.elem.mask();
                let equal = old == expected & ty.elem.mask();
                if equal {
                    storage.store(p.offset, eb, bits & ty.elem.mask())?;
                    self.memo.clear();
                }
                let fields = vec![Val::S(old), Val::S(u64::from(equal))];
                self.set(*dst, Val::Vector(Rc::new(fields)));
            }
            _ => unreachable!("not a pointer instruction"),
        }
        Ok(())
    }
}

/// The most private memory a thread may hold at once: CUDA's limit of local memory per
/// thread (512 KiB). A kernel that asks for more is refused rather than simulated.
const MAX_PRIVATE_BYTES: u64 = 512 << 10;

impl Thread {
    /// The byte size of a new private slot of `n` elements of `elem_bytes`, when the
    /// thread's slots stay within [`MAX_PRIVATE_BYTES`].
    fn private_bytes_left(&self, n: i64, elem_bytes: u64) -> Result<usize> {
        let held: u64 = self.private.iter().map(|s| s.bytes.len() as u64).sum();
        let bytes = u64::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(elem_bytes))
            .filter(|&b| held.saturating_add(b) <= MAX_PRIVATE_BYTES);
        bytes.map(|b| b as usize).ok_or_else(|| {
            fail!(
                TooLarge,
                "'llvm.alloca' of {n} x {elem_bytes} bytes: a thread holds at most {MAX_PRIVATE_BYTES} bytes of stack ({held} already)"
            )
        })
    }

    /// A scalar register's bits (`what` says what the value is for, in the poison message).
    fn scalar_bits(&self, reg: crate::inst::Reg, prog: &Program, what: &str) -> Result<u64> {
        match self.get(reg) {
            Val::S(b) => Ok(*b),
            Val::Poison(s) => Err(poison(prog, *s, what)),
            other => Err(not_scalar(other, prog)),
        }
    }

    /// The storage and pointer of an atomic access of `ty` through `ptr`: global or shared
    /// memory, naturally aligned, as the hardware requires.
    fn atomic_target<'e>(
        &mut self,
        ptr: crate::inst::Reg,
        ty: MemTy,
        env: &'e mut Env<'_>,
    ) -> Result<(&'e mut Storage, Ptr)> {
        let p = self.ptr(ptr, env.prog)?;
        if ty.lanes != 0 || matches!(p.mem, Mem::Private(_)) {
            return Err(fail!(
                Unsupported,
                "atomic access of {ty} to {}",
                if ty.lanes != 0 {
                    "a vector"
                } else {
                    "a thread's own memory"
                }
            ));
        }
        let storage = env.mem.get_mut(p.mem);
        check_alignment(storage, p, ty, ty.elem.bytes() as u64, "atomic access")?;
        Ok((storage, p))
    }

    /// Private slot `slot`, when it is still live (its function has not returned).
    fn private_slot(&self, slot: u32) -> Result<&Storage> {
        self.private.get(slot as usize).ok_or_else(|| {
            fail!(
                UndefinedBehavior,
                "access to stack slot #{slot} after its function returned"
            )
        })
    }
}

/// Checks that `p` is aligned for an access to `storage`.
fn check_alignment(storage: &Storage, p: Ptr, ty: MemTy, align: u64, what: &str) -> Result<()> {
    if p.offset.rem_euclid(align as i64) != 0 {
        return Err(fail!(
            Misaligned,
            "{what} of {ty} at byte offset {} of {} needs {align}-byte alignment",
            p.offset,
            storage.name
        ));
    }
    Ok(())
}

fn load(storage: &Storage, p: Ptr, ty: MemTy, align: u64) -> Result<Val> {
    check_alignment(storage, p, ty, align, "load")?;
    if let Some(w) = ty.packed_width() {
        let bytes = (0..ty.bytes())
            .map(|i| Ok(storage.load(p.offset.wrapping_add(i as i64), 1)? as u8))
            .collect::<Result<Vec<u8>>>()?;
        let lanes = (0..ty.lanes as usize)
            .map(|i| Val::S(u64::from(bytes[i * w / 8] >> (i * w % 8)) & ty.elem.mask()))
            .collect();
        return Ok(Val::Vector(Rc::new(lanes)));
    }
    if ty.elem.is_wide() {
        // Two 8-byte words per lane, low first.
        let word = |k: usize| storage.load(p.offset.wrapping_add(8 * k as i64), 8);
        let lane = |i: usize| Ok(Val::W([word(2 * i)?, word(2 * i + 1)?]));
        if ty.lanes == 0 {
            return lane(0);
        }
        let lanes = (0..ty.lanes as usize).map(lane).collect::<Result<_>>()?;
        return Ok(Val::Vector(Rc::new(lanes)));
    }
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

fn store(
    storage: &mut Storage,
    p: Ptr,
    ty: MemTy,
    align: u64,
    v: &Val,
    prog: &Program,
) -> Result<()> {
    check_alignment(storage, p, ty, align, "store")?;
    let eb = ty.elem.bytes();
    let single = [v.clone()];
    let lanes: &[Val] = match v {
        Val::Vector(l) => l,
        _ => &single,
    };
    let mut packed = vec![0u8; ty.packed_width().map_or(0, |_| ty.bytes())];
    for (i, lane) in lanes.iter().enumerate() {
        match (lane, ty.packed_width()) {
            (Val::S(bits), Some(w)) => {
                packed[i * w / 8] |= ((*bits & ty.elem.mask()) as u8) << (i * w % 8)
            }
            (Val::S(bits), None) => {
                storage.store(p.offset.wrapping_add((i * eb) as i64), eb, *bits)?
            }
            (Val::W(words), None) => {
                for (k, &word) in words.iter().enumerate() {
                    storage.store(p.offset.wrapping_add((i * eb + 8 * k) as i64), 8, word)?;
                }
            }
            (Val::Poison(s), _) => return Err(poison(prog, *s, "stored to memory")),
            (other, _) => return Err(not_scalar(other, prog)),
        }
    }
    for (i, &byte) in packed.iter().enumerate() {
        storage.store(p.offset.wrapping_add(i as i64), 1, u64::from(byte))?;
    }
    Ok(())
}
