//! Runtime values: scalars, poison, vectors, tensors and pointers.
//!
//! Tensors have value semantics (`tensor.insert` returns a new tensor), but copying a
//! 12-million-element output per insert is out of the question, and so is a copy per
//! thread. A [`Tensor`] is therefore a *view*: a base (a global buffer, a block's shared
//! buffer, or a thread-local store) plus an [`Overlay`] of the elements this value has
//! written on top of it. Values are `Rc`-shared and copied on write; the compiler moves a
//! tensor out of its register at its last use, so the usual chain of inserts finds the
//! `Rc` unique and appends to the overlay in place. Overlays of global and shared bases are
//! published to the buffer at `xla_gpu.sync_threads` and when the kernel returns (see
//! [`crate::grid`]); local stores (`tensor.empty`, dense constants) are written directly.

use crate::layout::TensorTy;
use std::collections::HashMap;
use std::rc::Rc;

/// Where a pointer or tensor view points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Mem {
    /// A kernel argument's buffer or a module global (index into the global storages).
    Global(u32),
    /// A block's shared memory (index into the shared storages).
    Shared(u32),
    /// A thread's own memory (`llvm.alloca`; index into the thread's private storages,
    /// which only pointer instructions reach).
    Private(u32),
}

/// A pointer: a storage and a byte offset into it (which may lie outside it: only accesses
/// are checked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ptr {
    pub(crate) mem: Mem,
    pub(crate) offset: i64,
}

/// A register's value.
#[derive(Clone, Debug, Default)]
pub(crate) enum Val {
    /// Not yet written (reading one is an internal error).
    #[default]
    Undef,
    /// A scalar's bit pattern (see [`crate::scalar`]).
    S(u64),
    /// An `i128`'s bit pattern, low word first ([`crate::wide`]).
    W([u64; 2]),
    /// Poison, with the site (op) that produced it.
    Poison(u32),
    /// Vector lanes in row-major order, each `S` or `Poison`.
    Vector(Rc<Vec<Val>>),
    Tensor(Rc<Tensor>),
    Ptr(Ptr),
}

/// The storage under a tensor view.
#[derive(Clone, Debug)]
pub(crate) enum Base {
    Mem(Mem),
    Local(Rc<LocalStore>),
}

/// A tensor value: a base and this value's own writes over it.
#[derive(Clone, Debug)]
pub(crate) struct Tensor {
    pub(crate) base: Base,
    pub(crate) overlay: Overlay,
}

impl Tensor {
    pub(crate) fn view(mem: Mem) -> Tensor {
        Tensor {
            base: Base::Mem(mem),
            overlay: Overlay::default(),
        }
    }

    /// A thread's own tensor (`tensor.empty`, a dense constant) over `store`.
    pub(crate) fn local(store: LocalStore) -> Tensor {
        Tensor {
            base: Base::Local(Rc::new(store)),
            overlay: Overlay::default(),
        }
    }
}

/// A thread-local tensor's elements (little-endian, `elem_bytes` each) and which of them
/// have been written (`tensor.empty` starts with none).
#[derive(Clone, Debug)]
pub(crate) struct LocalStore {
    pub(crate) bytes: Vec<u8>,
    pub(crate) elem_bytes: usize,
    /// One bit per element; `None` when all are initialized.
    pub(crate) init: Option<Vec<u64>>,
}

impl LocalStore {
    /// The elements of a tensor of type `tt`, none of them written yet.
    pub(crate) fn unwritten(tt: &TensorTy) -> LocalStore {
        LocalStore {
            bytes: vec![0; tt.local_bytes()],
            elem_bytes: tt.elem_bytes,
            init: Some(vec![0; tt.len.div_ceil(64)]),
        }
    }

    pub(crate) fn read(&self, elem: usize) -> Option<u64> {
        if let Some(init) = &self.init
            && init[elem / 64] >> (elem % 64) & 1 == 0
        {
            return None;
        }
        Some(read_le(
            &self.bytes[elem * self.elem_bytes..][..self.elem_bytes],
        ))
    }

    pub(crate) fn write(&mut self, elem: usize, bits: u64) {
        write_le(
            &mut self.bytes[elem * self.elem_bytes..][..self.elem_bytes],
            bits,
        );
        if let Some(init) = &mut self.init {
            init[elem / 64] |= 1 << (elem % 64);
        }
    }
}

/// Overlays longer than this get a hash index.
const INDEX_AFTER: usize = 16;

/// A value's writes over its base: element offsets and bit patterns, the latest per element.
#[derive(Clone, Debug, Default)]
pub(crate) struct Overlay {
    entries: Vec<(u64, u64)>,
    index: Option<HashMap<u64, usize>>,
}

impl Overlay {
    pub(crate) fn get(&self, elem: u64) -> Option<u64> {
        match &self.index {
            Some(index) => index.get(&elem).map(|&i| self.entries[i].1),
            None => self
                .entries
                .iter()
                .find(|(e, _)| *e == elem)
                .map(|&(_, v)| v),
        }
    }

    pub(crate) fn set(&mut self, elem: u64, bits: u64) {
        let existing = match &self.index {
            Some(index) => index.get(&elem).copied(),
            None => self.entries.iter().position(|(e, _)| *e == elem),
        };
        match existing {
            Some(i) => self.entries[i].1 = bits,
            None => {
                self.entries.push((elem, bits));
                if let Some(index) = &mut self.index {
                    index.insert(elem, self.entries.len() - 1);
                } else if self.entries.len() > INDEX_AFTER {
                    self.index = Some(
                        self.entries
                            .iter()
                            .enumerate()
                            .map(|(i, &(e, _))| (e, i))
                            .collect(),
                    );
                }
            }
        }
    }

    /// The writes, in first-write order.
    pub(crate) fn entries(&self) -> &[(u64, u64)] {
        &self.entries
    }
}

/// The little-endian integer in `bytes` (at most 8).
#[inline]
pub(crate) fn read_le(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(buf)
}

/// Writes the low `bytes.len()` bytes of `bits`, little-endian.
#[inline]
pub(crate) fn write_le(bytes: &mut [u8], bits: u64) {
    let n = bytes.len();
    bytes.copy_from_slice(&bits.to_le_bytes()[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlays_keep_the_latest_write_per_element() {
        let mut o = Overlay::default();
        for i in 0..40u64 {
            o.set(i % 25, i);
        }
        assert_eq!(o.entries().len(), 25);
        assert_eq!(o.get(3), Some(28));
        assert_eq!(o.get(24), Some(24));
        assert_eq!(o.get(25), None);
    }

    #[test]
    fn local_stores_track_initialization() {
        let mut s = LocalStore {
            bytes: vec![0; 6],
            elem_bytes: 2,
            init: Some(vec![0]),
        };
        assert_eq!(s.read(1), None);
        s.write(1, 0xBEEF);
        assert_eq!(s.read(1), Some(0xBEEF));
        assert_eq!(s.bytes, [0, 0, 0xEF, 0xBE, 0, 0]);
    }
}
