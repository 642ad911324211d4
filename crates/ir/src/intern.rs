//! Interned strings ([`Ident`]) and the fast hasher the IR's hash maps use.
//!
//! Op names and attribute names are few and hot: interning them makes names `Copy` u32s,
//! comparisons integer compares and registry lookups cheap. The table is global and
//! append-only (like MLIR's context-owned identifiers, but without a context to pass
//! around), so an [`Ident`] can be displayed anywhere.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{LazyLock, OnceLock, RwLock};

/// FxHash (rustc's hasher): not DoS-resistant, but several times faster than SipHash on the
/// short keys (names, small ids) the IR hashes.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// A `HashSet` with [`FxHasher`].
pub type FxHashSet<K> = std::collections::HashSet<K, BuildHasherDefault<FxHasher>>;

/// An append-only table readable without locks: chunk `k` holds `64 << k` slots, allocated on
/// first use; writers must be serialized by the caller.
pub(crate) struct AppendOnly<T: 'static> {
    chunks: [OnceLock<Box<[OnceLock<T>]>>; 26],
}

impl<T: 'static> AppendOnly<T> {
    pub(crate) const fn new() -> AppendOnly<T> {
        AppendOnly {
            chunks: [const { OnceLock::new() }; 26],
        }
    }

    fn locate(i: usize) -> (usize, usize) {
        let j = i / 64 + 1;
        let k = (usize::BITS - 1 - j.leading_zeros()) as usize;
        (k, i - 64 * ((1 << k) - 1))
    }

    /// The value at `i`, if set.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        let (k, off) = Self::locate(i);
        self.chunks.get(k)?.get()?.get(off)?.get()
    }

    /// Sets slot `i` (once).
    pub(crate) fn set(&self, i: usize, value: T) {
        let (k, off) = Self::locate(i);
        let chunk =
            self.chunks[k].get_or_init(|| (0..64usize << k).map(|_| OnceLock::new()).collect());
        let _ = chunk[off].set(value);
    }
}

/// An interned string: op names (`arith.addf`), attribute names (`value`), dialect names.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ident(u32);

struct IdentTable {
    map: FxHashMap<&'static str, Ident>,
    len: usize,
}

static IDENTS: LazyLock<RwLock<IdentTable>> = LazyLock::new(|| {
    RwLock::new(IdentTable {
        map: FxHashMap::default(),
        len: 0,
    })
});

static IDENT_STRINGS: AppendOnly<&'static str> = AppendOnly::new();

impl Ident {
    /// Interns `name` (once per distinct string, for the life of the process).
    pub fn new(name: &str) -> Ident {
        if let Some(&id) = IDENTS.read().expect("ident table").map.get(name) {
            return id;
        }
        let mut table = IDENTS.write().expect("ident table");
        if let Some(&id) = table.map.get(name) {
            return id;
        }
        let id = Ident(table.len as u32);
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        IDENT_STRINGS.set(table.len, leaked);
        table.len += 1;
        table.map.insert(leaked, id);
        id
    }

    /// The interned string (no locking).
    #[inline]
    pub fn as_str(self) -> &'static str {
        IDENT_STRINGS.get(self.0 as usize).expect("interned ident")
    }

    /// The dialect prefix of an op name (`arith` of `arith.addf`), or `""`.
    pub fn dialect(self) -> &'static str {
        let s = self.as_str();
        s.split_once('.').map_or("", |(d, _)| d)
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl From<&str> for Ident {
    fn from(s: &str) -> Ident {
        Ident::new(s)
    }
}

/// A lazily interned, cached [`Ident`] for a string literal: `ident!("value")` costs one
/// interning per call site for the whole process.
#[macro_export]
macro_rules! ident {
    ($name:literal) => {{
        static CELL: ::std::sync::OnceLock<$crate::Ident> = ::std::sync::OnceLock::new();
        *CELL.get_or_init(|| $crate::Ident::new($name))
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_only_table_spans_chunks() {
        let t: AppendOnly<usize> = AppendOnly::new();
        for i in [0, 1, 63, 64, 65, 191, 192, 10_000] {
            assert_eq!(t.get(i), None);
            t.set(i, i * 2);
            assert_eq!(t.get(i), Some(&(i * 2)));
        }
        assert_eq!(AppendOnly::<()>::locate(63), (0, 63));
        assert_eq!(AppendOnly::<()>::locate(64), (1, 0));
        assert_eq!(AppendOnly::<()>::locate(191), (1, 127));
        assert_eq!(AppendOnly::<()>::locate(192), (2, 0));
    }

    #[test]
    fn interning_is_stable() {
        let a = Ident::new("arith.addf");
        let b = Ident::new("arith.addf");
        assert_eq!(a, b);
        assert_eq!(a.as_str(), "arith.addf");
        assert_eq!(a.dialect(), "arith");
        assert_ne!(a, Ident::new("arith.mulf"));
        assert_eq!(crate::ident!("arith.addf"), a);
    }
}
