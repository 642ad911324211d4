//! Tensor and vector instructions: element reads and writes through a value's overlay,
//! `tensor.empty`, shared tensors, transfers with padding and masking, and vector
//! positions and broadcasts.

use super::lanes::{lane as lane_result, not_scalar, poison};
use super::{Env, Thread};
use crate::error::{Result, fail};
use crate::inst::{Inst, Pos, Program, Transfer};
use crate::layout::{MAX_RANK, TensorTy};
use crate::memory::Memory;
use crate::value::{Base, LocalStore, Mem, Tensor, Val};
use hlo::shape::next_row_major;
use std::rc::Rc;

/// Reads element `off` of a tensor value: its own write, else its base's element.
fn read_element(mem: &Memory, t: &Tensor, off: u64, tt: &TensorTy) -> Result<u64> {
    let bits = match t.overlay.get(off) {
        Some(b) => b,
        None => match &t.base {
            Base::Mem(m) => mem.get(*m).read_elem(off, tt.elem_bits)?,
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

/// Reads the element at element offset `off`: an `i128` as its two words.
fn read_value(mem: &Memory, t: &Tensor, off: u64, tt: &TensorTy) -> Result<Val> {
    if tt.words == 1 {
        return read_element(mem, t, off, tt).map(Val::S);
    }
    let low = read_element(mem, t, 2 * off, tt)?;
    Ok(Val::W([low, read_element(mem, t, 2 * off + 1, tt)?]))
}

/// Writes the words of an element at element offset `off`.
fn write_value(t: &mut Tensor, off: u64, words: &[u64]) {
    let n = words.len() as u64;
    for (k, &w) in words.iter().enumerate() {
        write_element(t, n * off + k as u64, w);
    }
}

/// The words of an element written to a tensor.
enum Words {
    One([u64; 1]),
    Two([u64; 2]),
}

impl Words {
    fn as_slice(&self) -> &[u64] {
        match self {
            Words::One(w) => w,
            Words::Two(w) => w,
        }
    }
}

/// The lanes of a vector value.
fn vector_lanes(v: &Val, prog: &Program) -> Result<Rc<Vec<Val>>> {
    match v {
        Val::Vector(lanes) => Ok(lanes.clone()),
        other => Err(not_scalar(other, prog)),
    }
}

impl Thread {
    /// The words of scalar `value` (one, or two for an `i128`) and the element offset of
    /// the element `indices` of a tensor of type `ty` that it is written to.
    fn element_write(
        &self,
        value: crate::inst::Reg,
        ty: u32,
        indices: &[crate::inst::Reg],
        prog: &Program,
    ) -> Result<(Words, u64)> {
        let bits = match self.get(value) {
            Val::S(b) => Words::One([*b]),
            Val::W(w) => Words::Two(*w),
            Val::Poison(s) => return Err(poison(prog, *s, "written to a tensor")),
            other => return Err(not_scalar(other, prog)),
        };
        Ok((bits, self.element_offset(ty, indices, prog)?))
    }

    /// The element offset of element `indices` of a tensor of type `ty`.
    fn element_offset(&self, ty: u32, indices: &[crate::inst::Reg], prog: &Program) -> Result<u64> {
        let mut buf = [0; MAX_RANK];
        prog.tensors[ty as usize].offset(self.indices(indices, &mut buf, prog)?)
    }

    /// Executes a tensor or vector instruction.
    pub(super) fn data(&mut self, inst: &Inst, site: u32, env: &mut Env<'_>) -> Result<()> {
        let prog = env.prog;
        match inst {
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
                    return Ok(());
                }
                let off = self.element_offset(*ty, indices, prog)?;
                let tt = &prog.tensors[*ty as usize];
                let v = read_value(env.mem, self.tensor(*tensor)?, off, tt)?;
                self.set(*dst, v);
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
                    return Ok(());
                }
                let (words, off) = self.element_write(*value, *ty, indices, prog)?;
                let mut t = self.take_tensor(*tensor)?;
                write_value(Rc::make_mut(&mut t), off, words.as_slice());
                self.set(*dst, Val::Tensor(t));
            }
            Inst::AtomicWrite {
                value,
                tensor,
                ty,
                indices,
                dst,
            } => {
                let (words, off) = self.element_write(*value, *ty, indices, prog)?;
                let words = words.as_slice();
                let mut t = self.take_tensor(*tensor)?;
                match t.base {
                    Base::Mem(mem) => {
                        // Each word at once (threads run one at a time between barriers).
                        let elem_bits = prog.tensors[*ty as usize].elem_bits;
                        for (k, &bits) in words.iter().enumerate() {
                            let word = words.len() as u64 * off + k as u64;
                            env.mem.get_mut(mem).write_elem(word, elem_bits, bits)?;
                            if t.overlay.get(word).is_some() {
                                Rc::make_mut(&mut t).overlay.set(word, bits);
                            }
                        }
                        self.memo.clear();
                    }
                    Base::Local(_) => write_value(Rc::make_mut(&mut t), off, words),
                }
                self.set(*dst, Val::Tensor(t));
            }
            Inst::Empty { ty, dst } => {
                let store = LocalStore::unwritten(&prog.tensors[*ty as usize]);
                self.set(*dst, Val::Tensor(Rc::new(Tensor::local(store))));
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
            Inst::ShuffleVector { a, b, mask, dst } => {
                let (Val::Vector(a), Val::Vector(b)) = (self.get(*a), self.get(*b)) else {
                    return Err(fail!(InvalidIr, "shufflevector of a non-vector"));
                };
                let lanes = mask
                    .iter()
                    .map(|&k| match usize::try_from(k) {
                        Ok(k) if k < a.len() => a[k].clone(),
                        Ok(k) if k - a.len() < b.len() => b[k - a.len()].clone(),
                        _ => Val::Poison(site),
                    })
                    .collect();
                self.set(*dst, Val::Vector(Rc::new(lanes)));
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
                            next_row_major(&mut index, to);
                        }
                        out
                    }
                    (Some(_), other) => return Err(not_scalar(other, prog)),
                };
                self.set(*dst, Val::Vector(Rc::new(lanes)));
            }
            Inst::MultiReduction {
                combine,
                src,
                acc,
                shape,
                reduced,
                dst,
            } => {
                let lanes = vector_lanes(self.get(*src), prog)?;
                let (mut out, scalar) = match self.get(*acc) {
                    Val::Vector(l) => (l.to_vec(), false),
                    v => (vec![v.clone()], true),
                };
                let mut index = vec![0i64; shape.len()];
                for lane in lanes.iter() {
                    let mut k = 0usize;
                    for (d, &size) in shape.iter().enumerate() {
                        if !reduced[d] {
                            k = k * size as usize + index[d] as usize;
                        }
                    }
                    out[k] = match (&out[k], lane) {
                        (Val::S(a), Val::S(b)) => lane_result(combine.eval(*a, *b), site)?,
                        (Val::S(_), p @ Val::Poison(_)) | (p @ Val::Poison(_), _) => p.clone(),
                        (other, _) => return Err(not_scalar(other, prog)),
                    };
                    next_row_major(&mut index, shape);
                }
                let value = if scalar {
                    out.pop().unwrap_or_default()
                } else {
                    Val::Vector(Rc::new(out))
                };
                self.set(*dst, value);
            }
            Inst::Transpose {
                src,
                shape,
                permutation,
                dst,
            } => {
                let lanes = vector_lanes(self.get(*src), prog)?;
                let to: Vec<i64> = permutation.iter().map(|&p| shape[p as usize]).collect();
                let mut index = vec![0i64; to.len()];
                let mut out = Vec::with_capacity(lanes.len());
                for _ in 0..lanes.len() {
                    let mut source = vec![0i64; shape.len()];
                    for (i, &p) in permutation.iter().enumerate() {
                        source[p as usize] = index[i];
                    }
                    let k = source
                        .iter()
                        .zip(shape.iter())
                        .fold(0usize, |k, (&i, &size)| k * size as usize + i as usize);
                    out.push(lanes[k].clone());
                    next_row_major(&mut index, &to);
                }
                self.set(*dst, Val::Vector(Rc::new(out)));
            }
            _ => unreachable!("not a tensor or vector instruction"),
        }
        Ok(())
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
            next_row_major(&mut pos, &t.vector_shape);
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
