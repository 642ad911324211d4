//! Simulated memory: the kernel's global buffers (arguments and module globals) and each
//! block's shared memory.
//!
//! Shared memory starts uninitialized in every block and remembers which bytes were
//! written, so reading one nobody wrote is an error rather than a silent zero. Tensor-level
//! writes arrive as published overlays (see [`crate::value`]) and remember which thread
//! wrote each element (and, for shared memory, in which barrier phase), so that two threads
//! writing different values to one element is reported as a write conflict. Pointer-level
//! stores write bytes directly, as the hardware does; races between them are not tracked,
//! but kernel arguments count the writes of every byte ([`Storage::write_counts`]: stores,
//! and publications by a new writer), so that a caller can tell that every output element
//! was written exactly once.

use crate::error::{Result, fail};
use crate::value::{Mem, read_le, write_le};

/// One buffer.
#[derive(Clone, Debug)]
pub(crate) struct Storage {
    /// What the buffer is, for messages (`argument #1`, `@shared_0`).
    pub(crate) name: String,
    pub(crate) bytes: Vec<u8>,
    /// One bit per byte: written or not. `None`: every byte is initialized.
    init: Option<Vec<u64>>,
    /// Bits per element of tensor-level reads and writes: 2 and 4 are packed into bytes
    /// (the first element in the low bits), anything else is a multiple of 8.
    elem_bits: usize,
    /// Per element, the thread (linear id + 1) whose write was published last, 0 for none,
    /// or [`MANY_WRITERS`]. Allocated on the first publication.
    writers: Vec<u32>,
    /// Per element, the barrier phase of that write (shared memory only).
    phases: Vec<u32>,
    /// Module constants cannot be stored to.
    pub(crate) constant: bool,
    /// Per byte, how many stores (or publications by a thread other than the last writer)
    /// wrote it, saturating at 255; `None` when not counted.
    pub(crate) write_counts: Option<Vec<u8>>,
}

/// A publication that collides with another thread's.
pub(crate) struct Conflict {
    /// The other writer, or `None` when several threads wrote the element's value.
    pub(crate) other_thread: Option<u32>,
    pub(crate) other_bits: u64,
}

/// The writer entry of an element that several threads wrote (with one value).
const MANY_WRITERS: u32 = u32::MAX;

impl Storage {
    /// A buffer holding `bytes`, all initialized.
    pub(crate) fn global(name: String, bytes: Vec<u8>, elem_bits: usize) -> Storage {
        Storage {
            name,
            bytes,
            init: None,
            elem_bits: elem_bits.max(1),
            writers: Vec::new(),
            phases: Vec::new(),
            constant: false,
            write_counts: None,
        }
    }

    /// An uninitialized buffer of `len` bytes (shared memory).
    pub(crate) fn uninit(name: String, len: usize, elem_bits: usize) -> Storage {
        Storage {
            init: Some(vec![0; len.div_ceil(64)]),
            ..Storage::global(name, vec![0; len], elem_bits)
        }
    }

    /// Forgets every write (a new block's shared memory).
    pub(crate) fn reset(&mut self) {
        if let Some(init) = &mut self.init {
            init.fill(0);
        }
        self.writers.fill(0);
        self.phases.fill(0);
    }

    /// The byte range `[offset, offset + n)`, if inside the buffer.
    fn range(&self, offset: i64, n: usize) -> Result<std::ops::Range<usize>> {
        match usize::try_from(offset) {
            Ok(start)
                if start
                    .checked_add(n)
                    .is_some_and(|end| end <= self.bytes.len()) =>
            {
                Ok(start..start + n)
            }
            _ => Err(fail!(
                OutOfBounds,
                "access of {n} bytes at byte offset {offset} is outside {} ({} bytes)",
                self.name,
                self.bytes.len()
            )),
        }
    }

    fn is_init(&self, range: &std::ops::Range<usize>) -> bool {
        match &self.init {
            None => true,
            Some(init) => range.clone().all(|b| init[b / 64] >> (b % 64) & 1 != 0),
        }
    }

    fn mark_init(&mut self, range: std::ops::Range<usize>) {
        if let Some(init) = &mut self.init {
            for b in range {
                init[b / 64] |= 1 << (b % 64);
            }
        }
    }

    /// Reads `n` bytes at `offset`.
    pub(crate) fn load(&self, offset: i64, n: usize) -> Result<u64> {
        let range = self.range(offset, n)?;
        if !self.is_init(&range) {
            return Err(fail!(
                UninitializedRead,
                "read of {n} bytes at byte offset {offset} of {}, which no thread has written",
                self.name
            ));
        }
        Ok(read_le(&self.bytes[range]))
    }

    /// Writes the low `n` bytes of `bits` at `offset`.
    pub(crate) fn store(&mut self, offset: i64, n: usize, bits: u64) -> Result<()> {
        let range = self.range(offset, n)?;
        if self.constant {
            return Err(fail!(
                UndefinedBehavior,
                "store to the constant {}",
                self.name
            ));
        }
        write_le(&mut self.bytes[range.clone()], bits);
        self.count_writes(range.clone());
        self.mark_init(range);
        Ok(())
    }

    fn count_writes(&mut self, range: std::ops::Range<usize>) {
        if let Some(counts) = &mut self.write_counts {
            for c in &mut counts[range] {
                *c = c.saturating_add(1);
            }
        }
    }

    /// Where element `elem` of a tensor view lies: its bytes, and for a sub-byte element
    /// its shift in the (one) byte.
    fn element_place(&self, elem: u64, elem_bits: usize) -> Result<(std::ops::Range<usize>, u32)> {
        if elem_bits < 8 {
            let bit = elem.wrapping_mul(elem_bits as u64);
            Ok((self.range((bit / 8) as i64, 1)?, (bit % 8) as u32))
        } else {
            let n = elem_bits / 8;
            Ok((self.range((elem as i64).wrapping_mul(n as i64), n)?, 0))
        }
    }

    /// Reads element `elem` of a tensor view with `elem_bits`-bit elements (zero-extended).
    pub(crate) fn read_elem(&self, elem: u64, elem_bits: usize) -> Result<u64> {
        let (range, shift) = self.element_place(elem, elem_bits)?;
        let bits = self.load(range.start as i64, range.len())?;
        Ok(if elem_bits < 8 {
            bits >> shift & crate::scalar::mask(elem_bits as u32)
        } else {
            bits
        })
    }

    /// Writes `bits` as element `elem` (`elem_bits` wide): a sub-byte element keeps the
    /// other elements of its byte.
    pub(crate) fn write_elem(&mut self, elem: u64, elem_bits: usize, bits: u64) -> Result<()> {
        let (range, shift) = self.element_place(elem, elem_bits)?;
        let word = if elem_bits < 8 {
            let mask = crate::scalar::mask(elem_bits as u32) << shift;
            u64::from(self.bytes[range.start]) & !mask | (bits << shift & mask)
        } else {
            bits
        };
        self.store(range.start as i64, range.len(), word)
    }

    /// Publishes a thread's write of element `elem`: `thread` is the writer's linear id,
    /// `phase` the block's barrier phase for shared memory (`None` for global buffers,
    /// where writes of different threads are never ordered). Fails on a different value
    /// from another thread in the same phase.
    pub(crate) fn publish(
        &mut self,
        elem: u64,
        bits: u64,
        thread: u32,
        phase: Option<u32>,
    ) -> Result<std::result::Result<(), Conflict>> {
        let eb = self.elem_bits;
        let (range, shift) = self.element_place(elem, eb)?;
        if self.writers.is_empty() {
            let n = self.bytes.len() * 8 / eb;
            self.writers = vec![0; n];
            if phase.is_some() {
                self.phases = vec![0; n];
            }
        }
        let i = elem as usize;
        let me = thread + 1;
        let previous = self.writers[i];
        let same_phase = phase.is_none_or(|p| self.phases[i] == p);
        let mask = if eb < 8 {
            crate::scalar::mask(eb as u32) << shift
        } else {
            u64::MAX
        };
        let old = read_le(&self.bytes[range.clone()]);
        let mut writer = me;
        if previous != 0 && previous != me && same_phase {
            let other = (old & mask) >> shift;
            if other != bits {
                return Ok(Err(Conflict {
                    other_thread: (previous != MANY_WRITERS).then(|| previous - 1),
                    other_bits: other,
                }));
            }
            writer = MANY_WRITERS;
        }
        write_le(
            &mut self.bytes[range.clone()],
            old & !mask | (bits << shift & mask),
        );
        if previous != me {
            self.count_writes(range.clone());
        }
        self.mark_init(range);
        self.writers[i] = writer;
        if let Some(p) = phase {
            self.phases[i] = p;
        }
        Ok(Ok(()))
    }
}

/// All storages of one kernel run.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    pub(crate) globals: Vec<Storage>,
    pub(crate) shared: Vec<Storage>,
}

impl Memory {
    pub(crate) fn get(&self, mem: Mem) -> &Storage {
        match mem {
            Mem::Global(i) => &self.globals[i as usize],
            Mem::Shared(i) => &self.shared[i as usize],
            Mem::Private(_) => unreachable!("a thread's private memory is the thread's"),
        }
    }

    pub(crate) fn get_mut(&mut self, mem: Mem) -> &mut Storage {
        match mem {
            Mem::Global(i) => &mut self.globals[i as usize],
            Mem::Shared(i) => &mut self.shared[i as usize],
            Mem::Private(_) => unreachable!("a thread's private memory is the thread's"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn shared_memory_reports_uninitialized_reads_and_bounds() {
        let mut s = Storage::uninit("@shared_0".into(), 8, 4);
        assert_eq!(s.load(0, 4).unwrap_err().kind, ErrorKind::UninitializedRead);
        s.store(0, 4, 0x1234_5678).unwrap();
        assert_eq!(s.load(0, 4).unwrap(), 0x1234_5678);
        assert_eq!(s.load(2, 4).unwrap_err().kind, ErrorKind::UninitializedRead);
        assert_eq!(s.load(6, 4).unwrap_err().kind, ErrorKind::OutOfBounds);
        assert_eq!(s.load(-1, 1).unwrap_err().kind, ErrorKind::OutOfBounds);
        s.reset();
        assert_eq!(s.load(0, 4).unwrap_err().kind, ErrorKind::UninitializedRead);
    }

    #[test]
    fn publications_conflict_only_across_threads_in_one_phase() {
        let mut s = Storage::uninit("shared".into(), 8, 4);
        assert!(s.publish(0, 5, 3, Some(0)).unwrap().is_ok());
        assert!(s.publish(0, 6, 3, Some(0)).unwrap().is_ok()); // a thread rewrites its own
        let conflict = s.publish(0, 9, 2, Some(0)).unwrap().unwrap_err();
        assert_eq!((conflict.other_thread, conflict.other_bits), (Some(3), 6));
        assert!(s.publish(1, 7, 0, Some(0)).unwrap().is_ok());
        assert!(s.publish(1, 7, 1, Some(0)).unwrap().is_ok()); // same value
        let conflict = s.publish(1, 8, 1, Some(0)).unwrap().unwrap_err(); // thread 0 wrote 7
        assert_eq!((conflict.other_thread, conflict.other_bits), (None, 7));
        assert!(s.publish(1, 9, 2, Some(1)).unwrap().is_ok()); // a later phase
        let mut g = Storage::global("out".into(), vec![0; 8], 4);
        assert!(g.publish(0, 1, 0, None).unwrap().is_ok());
        assert!(g.publish(0, 2, 5, None).unwrap().is_err());
    }
}
