//! Static shapes: where a tensor element lives in its buffer, vector shapes, and the byte
//! sizes of LLVM types.
//!
//! A tensor's buffer holds its elements in physical order: row-major, or as the tensor
//! type's layout encoding (`#xla.layout<"{0,1:T(2,128)}">`) places them, tiles and padding
//! included — the same bytes the HLO array has in memory, before and after
//! `flatten-tensors`.

use crate::affine::Affine;
use crate::error::{Error, Result, fail};
use crate::scalar::ScalarTy;
use indexing::{AffineExpr, physical_offset};
use ir::{Type, TypeKind};

/// The deepest tensor rank the interpreter indexes without allocating.
pub const MAX_RANK: usize = 16;

#[derive(Clone, Debug)]
enum Offset {
    /// Row-major: the offset is the dot product with these strides.
    Strides(Box<[i64]>),
    /// A layout's physical offset as an expression of the logical indices.
    Layout(Affine),
}

/// A statically shaped tensor type.
#[derive(Clone, Debug)]
pub(crate) struct TensorTy {
    pub(crate) ty: Type,
    pub(crate) shape: Box<[i64]>,
    pub(crate) elem: ScalarTy,
    /// Bytes of one element in a thread's own tensors (`tensor.empty`, constants).
    pub(crate) elem_bytes: usize,
    /// Bits of one element in memory: `i2` and `i4` are packed, the first element of a
    /// byte in its low bits (XLA's packing); other types take whole bytes (`i1` one).
    pub(crate) elem_bits: usize,
    /// Elements in the buffer (padding included), counted in words for `i128`.
    pub(crate) len: usize,
    /// Words an element takes: 2 for `i128` (low word first), whose tensors are held as
    /// tensors of 64-bit words so that views, overlays and memory stay 64-bit; else 1.
    pub(crate) words: u64,
    offset: Offset,
}

impl TensorTy {
    pub(crate) fn new(ty: Type) -> Result<TensorTy> {
        let TypeKind::Tensor { shape, elem, .. } = ty.kind() else {
            return Err(fail!(Unsupported, "'{ty}' is not a tensor type"));
        };
        let elem = ScalarTy::of(*elem)
            .ok_or_else(|| fail!(Unsupported, "tensors of '{elem}' elements ('{ty}')"))?;
        if shape.iter().any(|&d| d < 0) {
            return Err(fail!(Unsupported, "dynamically shaped tensor '{ty}'"));
        }
        if ty.thread_layout().is_some() {
            return Err(fail!(Unsupported, "XLA's thread layout encoding ('{ty}')"));
        }
        if shape.len() > MAX_RANK {
            return Err(fail!(
                Unsupported,
                "tensor of rank {} ('{ty}')",
                shape.len()
            ));
        }
        let (offset, len) = match ty.tensor_layout() {
            None => {
                let mut strides = vec![1i64; shape.len()];
                for i in (0..shape.len().saturating_sub(1)).rev() {
                    strides[i] = strides[i + 1].saturating_mul(shape[i + 1]);
                }
                let len = shape.iter().try_fold(1i64, |n, &d| n.checked_mul(d));
                (Offset::Strides(strides.into()), len)
            }
            Some(layout) => {
                let index: Vec<AffineExpr> = (0..shape.len()).map(AffineExpr::Dim).collect();
                let e = physical_offset(shape, layout, &index);
                let compiled = Affine::new(&e)
                    .ok_or_else(|| fail!(Unsupported, "layout of '{ty}' is too deep"))?;
                (
                    Offset::Layout(compiled),
                    layout.checked_padded_element_count(shape),
                )
            }
        };
        let words = if elem.is_wide() { 2 } else { 1 };
        let len = len.and_then(|n| n.checked_mul(words as i64));
        let elem_bytes = elem.bytes() / words as usize;
        let elem_bits = elem.memory_bits() / words as usize;
        let bits = len.and_then(|n| u64::try_from(n).ok()?.checked_mul(elem_bits as u64));
        crate::host_bytes(bits.map(|b| b.div_ceil(8)), &format_args!("'{ty}'"))?;
        let len = (bits.unwrap_or(0) / elem_bits as u64) as usize;
        Ok(TensorTy {
            ty,
            shape: shape.clone(),
            elem,
            elem_bytes,
            elem_bits,
            len,
            words,
            offset,
        })
    }

    /// The buffer size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        (self.len * self.elem_bits).div_ceil(8)
    }

    /// The size of a thread's own copy (`tensor.empty`, constants): unpacked elements.
    pub(crate) fn local_bytes(&self) -> usize {
        self.len * self.elem_bytes
    }

    /// Whether `index` lies in the shape.
    pub(crate) fn contains(&self, index: &[i64]) -> bool {
        index
            .iter()
            .zip(self.shape.iter())
            .all(|(&i, &d)| 0 <= i && i < d)
    }

    /// The element offset of an in-bounds index, or an out-of-bounds error.
    #[inline]
    pub(crate) fn offset(&self, index: &[i64]) -> Result<u64> {
        if !self.contains(index) {
            return Err(self.out_of_bounds(index));
        }
        Ok(match &self.offset {
            Offset::Strides(strides) => index
                .iter()
                .zip(strides.iter())
                .map(|(i, s)| i * s)
                .sum::<i64>(),
            Offset::Layout(e) => e.eval(index, &[]),
        } as u64)
    }

    pub(crate) fn out_of_bounds(&self, index: &[i64]) -> Error {
        let (dim, (i, d)) = index
            .iter()
            .zip(self.shape.iter())
            .enumerate()
            .find(|(_, (i, d))| !(0..**d).contains(*i))
            .unwrap_or((0, (&0, &0)));
        fail!(
            OutOfBounds,
            "index {:?} is out of bounds for '{}' (index {i} of dimension {dim} of size {d})",
            index,
            self.ty
        )
    }
}

/// A vector type: its shape and element type (lanes in row-major order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct VecTy {
    pub(crate) shape: Box<[i64]>,
    pub(crate) elem: ScalarTy,
}

impl VecTy {
    pub(crate) fn new(ty: Type) -> Result<VecTy> {
        let TypeKind::Vector { shape, elem } = ty.kind() else {
            return Err(fail!(Unsupported, "'{ty}' is not a vector type"));
        };
        let elem = ScalarTy::of(*elem)
            .filter(|s| !s.is_wide())
            .ok_or_else(|| fail!(Unsupported, "vectors of '{elem}' elements ('{ty}')"))?;
        Ok(VecTy {
            shape: shape.clone(),
            elem,
        })
    }

    pub(crate) fn lanes(&self) -> usize {
        self.shape.iter().product::<i64>() as usize
    }
}

/// What a load or store moves: a scalar or a vector of scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MemTy {
    pub(crate) elem: ScalarTy,
    /// 0 for a scalar.
    pub(crate) lanes: u32,
}

impl MemTy {
    pub(crate) fn new(ty: Type) -> Result<MemTy> {
        if let Some(elem) = ScalarTy::of(ty) {
            return Ok(MemTy { elem, lanes: 0 });
        }
        if ty.is_vector() {
            // Lanes of `i128` are moved whole (LLVM's O3 merges loads of c128 patterns into
            // `<4 x i128>`); `VecTy`, which computes on lanes, refuses them.
            if let (Some(elem), Some(&[n])) = (ty.element_type().and_then(ScalarTy::of), ty.shape())
                && elem.is_wide()
            {
                let lanes = u32::try_from(n)
                    .map_err(|_| fail!(Unsupported, "loads and stores of '{ty}'"))?;
                return Ok(MemTy { elem, lanes });
            }
            let v = VecTy::new(ty)?;
            if v.elem == ScalarTy::Int(1) || v.shape.len() != 1 {
                return Err(fail!(Unsupported, "loads and stores of '{ty}'"));
            }
            let lanes = u32::try_from(v.lanes())
                .map_err(|_| fail!(Unsupported, "loads and stores of '{ty}'"))?;
            return Ok(MemTy {
                elem: v.elem,
                lanes,
            });
        }
        Err(fail!(Unsupported, "loads and stores of '{ty}'"))
    }

    pub(crate) fn bytes(self) -> usize {
        match self.packed_width() {
            Some(w) => (self.lanes as usize * w).div_ceil(8),
            None => self.elem.bytes() * (self.lanes.max(1) as usize),
        }
    }

    /// The width of a vector's lanes when memory packs them (`<32 x i2>` is 8 bytes in
    /// LLVM, the first lane in the low bits); `None` for scalars and byte-sized lanes.
    pub(crate) fn packed_width(self) -> Option<usize> {
        match self.elem {
            ScalarTy::Int(w @ (2 | 4)) if self.lanes > 0 => Some(usize::from(w)),
            _ => None,
        }
    }

    /// The ABI alignment LLVM assumes without an `alignment` attribute: the size, rounded
    /// up to a power of two.
    pub(crate) fn natural_alignment(self) -> u64 {
        (self.bytes() as u64).next_power_of_two()
    }
}

/// The byte size of an LLVM type that `llvm.getelementptr` steps over or a global holds,
/// and the element type its next index steps over (for arrays).
pub(crate) fn llvm_size(t: Type) -> Result<(u64, Option<Type>)> {
    if let Some(s) = ScalarTy::of(t) {
        return Ok((s.bytes() as u64, None));
    }
    match t.kind() {
        TypeKind::LlvmPtr { .. } => Ok((8, None)),
        TypeKind::Vector { .. } => Ok((MemTy::new(t)?.bytes() as u64, None)),
        TypeKind::Opaque(text) => {
            let (n, elem) = parse_array(text)
                .ok_or_else(|| fail!(Unsupported, "the size of LLVM type '{t}'"))?;
            let (size, _) = llvm_size(elem)?;
            let total = n
                .checked_mul(size)
                .ok_or_else(|| fail!(TooLarge, "LLVM type '{t}' has more than 2^64 bytes"))?;
            Ok((total, Some(elem)))
        }
        _ => Err(fail!(Unsupported, "the size of LLVM type '{t}'")),
    }
}

/// `!llvm.array<N x T>` → `(N, T)`, with `T` in its short LLVM spelling (`f32`, `ptr`,
/// `array<...>`) read back as a full type.
fn parse_array(text: &str) -> Option<(u64, Type)> {
    let body = text.strip_prefix("!llvm.array<")?.strip_suffix('>')?;
    let (n, elem) = body.split_once(" x ")?;
    let elem = elem.trim();
    let full = if elem.starts_with("array<") || elem.starts_with("ptr") {
        format!("!llvm.{elem}")
    } else {
        elem.to_owned()
    };
    Some((n.trim().parse().ok()?, ir::parse_type(&full).ok()?))
}

impl std::fmt::Display for MemTy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let elem = match self.elem {
            ScalarTy::Int(w) => format!("i{w}"),
            ScalarTy::Index => "index".into(),
            ScalarTy::Float(k) => Type::float(k).to_string(),
        };
        if self.lanes == 0 {
            f.write_str(&elem)
        } else {
            write!(f, "vector<{}x{elem}>", self.lanes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        ir::parse_type(text).unwrap()
    }

    #[test]
    fn row_major_and_laid_out_offsets() {
        let t = TensorTy::new(ty("tensor<2x3x4xf32>")).unwrap();
        assert_eq!(t.offset(&[1, 2, 3]).unwrap(), 23);
        assert_eq!(t.len, 24);
        assert!(t.offset(&[0, 3, 0]).is_err());
        // Column-major 6x4: element (i, j) at j * 6 + i.
        let c = TensorTy::new(ty("tensor<6x4xf32, #xla.layout<\"{0,1}\">>")).unwrap();
        assert_eq!(c.offset(&[2, 3]).unwrap(), 20);
        // The seeds' example: (2, 3) of F32[3,5]{1,0:T(2,2)} sits at 17; 4x6 = 24 elements.
        let tiled = TensorTy::new(ty("tensor<3x5xf32, #xla.layout<\"{1,0:T(2,2)}\">>")).unwrap();
        assert_eq!(tiled.offset(&[2, 3]).unwrap(), 17);
        assert_eq!(tiled.len, 24);
    }

    #[test]
    fn llvm_sizes() {
        assert_eq!(
            llvm_size(ty("!llvm.array<128 x f32>")).unwrap(),
            (512, Some(Type::F32))
        );
        assert_eq!(
            llvm_size(ty("!llvm.array<2 x array<3 x i16>>")).unwrap().0,
            12
        );
        assert_eq!(llvm_size(ty("vector<4xbf16>")).unwrap(), (8, None));
        assert_eq!(llvm_size(Type::int(1)).unwrap(), (1, None));
        assert!(llvm_size(ty("!llvm.struct<(i32)>")).is_err());
        assert_eq!(
            MemTy::new(ty("vector<3xf32>")).unwrap().natural_alignment(),
            16
        );
    }
}
