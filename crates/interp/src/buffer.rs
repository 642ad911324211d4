//! Kernel arguments: byte buffers, and their conversion from and to the HLO evaluator's
//! arrays.
//!
//! A buffer holds an array as device memory does: elements little-endian in physical order
//! (row-major, or as the array's layout places them, tile padding included), `pred` as one
//! byte, `f16`/`bf16` as their 16-bit encodings, `s4`/`s2` packed two or four to a byte
//! (the first in the low bits). The same bytes serve every stage of the
//! pipeline: tensors before `flatten-tensors`, their 1-d forms after, pointers after
//! `lower-tensors`.

use crate::error::{Error, Result, fail};
use crate::layout::TensorTy;
use hlo::evaluate::{Elements, HostArray};
use hlo::shape::next_row_major;
use hlo::{ArrayShape, Layout, PrimitiveType};

/// A kernel argument's memory.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Buffer {
    bytes: Vec<u8>,
}

/// Bits per element of an HLO type the evaluator holds, in memory (`pred` is a byte).
fn element_bits(ty: PrimitiveType) -> Option<usize> {
    use PrimitiveType as P;
    Some(match ty {
        P::S2 | P::U2 => 2,
        P::S4 | P::U4 | P::F4E2M1FN => 4,
        P::Pred
        | P::S8
        | P::U8
        | P::F8E3M4
        | P::F8E4M3
        | P::F8E4M3FN
        | P::F8E4M3B11FNUZ
        | P::F8E4M3FNUZ
        | P::F8E5M2
        | P::F8E5M2FNUZ
        | P::F8E8M0FNU => 8,
        P::S16 | P::U16 | P::F16 | P::BF16 => 16,
        P::S32 | P::U32 | P::F32 => 32,
        P::S64 | P::U64 | P::F64 | P::C64 => 64,
        P::C128 => 128,
        _ => return None,
    })
}

/// Bytes of `len` elements of `bits` each: sub-byte elements are packed, the first in the
/// low bits of its byte (XLA's packing of `s4`/`s2` arrays).
fn packed_bytes(len: usize, bits: usize) -> usize {
    (len * bits).div_ceil(8)
}

/// Writes the low `bits` of `pattern` as element `p` of `bytes`.
fn write_element(bytes: &mut [u8], p: usize, bits: usize, pattern: u128) {
    if bits < 8 {
        let (byte, shift) = (p * bits / 8, p * bits % 8);
        let mask = ((1u8 << bits) - 1) << shift;
        bytes[byte] = (bytes[byte] & !mask) | ((pattern as u8) << shift & mask);
    } else {
        let n = bits / 8;
        bytes[p * n..(p + 1) * n].copy_from_slice(&pattern.to_le_bytes()[..n]);
    }
}

/// Element `p` of `bytes`, zero-extended.
fn read_element(bytes: &[u8], p: usize, bits: usize) -> u128 {
    if bits < 8 {
        u128::from(bytes[p * bits / 8] >> (p * bits % 8)) & ((1 << bits) - 1)
    } else {
        let n = bits / 8;
        let mut buf = [0u8; 16];
        buf[..n].copy_from_slice(&bytes[p * n..(p + 1) * n]);
        u128::from_le_bytes(buf)
    }
}

/// Calls `f(linear, physical)` for every element of `dims` in row-major order, `physical`
/// being its position in a buffer laid out by `layout`.
pub fn for_each_element(dims: &[i64], layout: Option<&Layout>, mut f: impl FnMut(usize, usize)) {
    let rank = dims.len() as i64;
    let row_major =
        |l: &&Layout| l.tiles.is_empty() && l.minor_to_major.iter().rev().copied().eq(0..rank);
    let laid_out = layout.filter(|l| !row_major(l));
    let n: i64 = dims.iter().product();
    let mut index = vec![0i64; dims.len()];
    for linear in 0..n as usize {
        let physical = match laid_out {
            Some(l) => l.physical_index(dims, &index) as usize,
            None => linear,
        };
        f(linear, physical);
        next_row_major(&mut index, dims);
    }
}

impl Buffer {
    pub fn new(bytes: Vec<u8>) -> Buffer {
        Buffer { bytes }
    }

    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> Buffer {
        Buffer::new(vec![0; len])
    }

    /// A zeroed buffer of the size a tensor type needs (its layout's padding included).
    pub fn for_tensor(ty: ir::Type) -> std::result::Result<Buffer, Error> {
        Ok(Buffer::zeroed(TensorTy::new(ty)?.bytes()))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The array laid out by `layout` (row-major if `None`); tile padding is zero.
    pub fn from_host_array(
        a: &HostArray,
        layout: Option<&Layout>,
    ) -> std::result::Result<Buffer, String> {
        let bits = element_bits(a.element_type())
            .ok_or_else(|| format!("unsupported: element type {}", a.element_type()))?;
        let dims = a.dims();
        let len = match layout {
            Some(l) => {
                l.validate(dims)?;
                l.padded_element_count(dims) as usize
            }
            None => a.len(),
        };
        let mut bytes = vec![0u8; packed_bytes(len, bits)];
        let e = a.elements();
        for_each_element(dims, layout, |i, p| {
            write_element(&mut bytes, p, bits, e.pattern(i));
        });
        Ok(Buffer { bytes })
    }

    /// The array of `shape` (laid out by its layout) this buffer holds.
    pub fn to_host_array(&self, shape: &ArrayShape) -> std::result::Result<HostArray, String> {
        let ty = shape.element_type;
        let bits = element_bits(ty).ok_or_else(|| format!("unsupported: element type {ty}"))?;
        let layout = shape.layout.as_ref();
        let dims = &shape.dims;
        let len = match layout {
            Some(l) => {
                l.validate(dims)?;
                l.padded_element_count(dims) as usize
            }
            None => dims.iter().product::<i64>() as usize,
        };
        if packed_bytes(len, bits) != self.bytes.len() {
            return Err(format!(
                "a buffer of {} bytes cannot hold {shape} ({} bytes)",
                self.bytes.len(),
                packed_bytes(len, bits)
            ));
        }
        let n: usize = dims.iter().product::<i64>() as usize;
        let mut patterns = vec![0u128; n];
        for_each_element(dims, layout, |i, p| {
            patterns[i] = read_element(&self.bytes, p, bits);
        });
        HostArray::new(dims.clone(), Elements::from_patterns(ty, &patterns)?)
    }
}

/// Checks that `buffer` fits the tensor parameter `i` of type `tt`.
pub(crate) fn check_tensor_argument(i: usize, buffer: &Buffer, tt: &TensorTy) -> Result<()> {
    if buffer.len() != tt.bytes() {
        return Err(fail!(
            InvalidArgument,
            "argument #{i} has {} bytes but '{}' needs {}",
            buffer.len(),
            tt.ty,
            tt.bytes()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_round_trip_through_laid_out_buffers() {
        let a = HostArray::new(
            vec![3, 5],
            Elements::F32((0..15).map(|i| i as f32).collect()),
        )
        .unwrap();
        let tiled = Layout {
            tiles: vec![hlo::Tile { dims: vec![2, 2] }],
            ..Layout::row_major(2)
        };
        let b = Buffer::from_host_array(&a, Some(&tiled)).unwrap();
        assert_eq!(b.len(), 24 * 4);
        // The seeds' example: element (2, 3) sits at 17.
        assert_eq!(&b.bytes()[17 * 4..18 * 4], &13f32.to_le_bytes());
        let mut shape = a.shape();
        shape.layout = Some(tiled);
        assert_eq!(b.to_host_array(&shape).unwrap(), a);
        let row_major = Buffer::from_host_array(&a, None).unwrap();
        assert_eq!(&row_major.bytes()[13 * 4..14 * 4], &13f32.to_le_bytes());
    }

    #[test]
    fn sub_byte_elements_are_packed_low_bits_first() {
        let patterns = [0x8, 0x7, 0x1, 0xf, 0x3];
        let a = HostArray::new(
            vec![5],
            Elements::from_patterns(PrimitiveType::S4, &patterns).unwrap(),
        )
        .unwrap();
        let b = Buffer::from_host_array(&a, None).unwrap();
        assert_eq!(b.bytes(), &[0x78, 0xf1, 0x03]);
        assert_eq!(b.to_host_array(&a.shape()).unwrap(), a);
        let two_bit = HostArray::new(
            vec![5],
            Elements::from_patterns(PrimitiveType::U2, &[1, 2, 3, 0, 2]).unwrap(),
        )
        .unwrap();
        let b = Buffer::from_host_array(&two_bit, None).unwrap();
        assert_eq!(b.bytes(), &[0b00_11_10_01, 0b10]);
        assert_eq!(b.to_host_array(&two_bit.shape()).unwrap(), two_bit);
    }
}
