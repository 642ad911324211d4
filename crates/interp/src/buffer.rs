//! Kernel arguments: byte buffers, and their conversion from and to the HLO evaluator's
//! arrays.
//!
//! A buffer holds an array as device memory does: elements little-endian in physical order
//! (row-major, or as the array's layout places them, tile padding included), `pred` as one
//! byte, `f16`/`bf16` as their 16-bit encodings. The same bytes serve every stage of the
//! pipeline: tensors before `flatten-tensors`, their 1-d forms after, pointers after
//! `lower-tensors`.

use crate::error::{Error, Result, fail};
use crate::layout::TensorTy;
use half::{bf16, f16};
use hlo::evaluate::{Elements, HostArray};
use hlo::{ArrayShape, Layout, PrimitiveType};

/// A kernel argument's memory.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Buffer {
    bytes: Vec<u8>,
}

/// Bytes per element of an HLO type the evaluator holds.
fn element_bytes(ty: PrimitiveType) -> Option<usize> {
    use PrimitiveType as P;
    Some(match ty {
        P::Pred | P::S8 | P::U8 => 1,
        P::S16 | P::U16 | P::F16 | P::BF16 => 2,
        P::S32 | P::U32 | P::F32 => 4,
        P::S64 | P::U64 | P::F64 => 8,
        _ => return None,
    })
}

/// Element `i`'s little-endian bits.
fn element_bits(e: &Elements, i: usize) -> u64 {
    match e {
        Elements::Pred(v) => u64::from(v[i]),
        Elements::S8(v) => v[i] as u8 as u64,
        Elements::S16(v) => v[i] as u16 as u64,
        Elements::S32(v) => v[i] as u32 as u64,
        Elements::S64(v) => v[i] as u64,
        Elements::U8(v) => u64::from(v[i]),
        Elements::U16(v) => u64::from(v[i]),
        Elements::U32(v) => u64::from(v[i]),
        Elements::U64(v) => v[i],
        Elements::F16(v) => u64::from(v[i].to_bits()),
        Elements::BF16(v) => u64::from(v[i].to_bits()),
        Elements::F32(v) => u64::from(v[i].to_bits()),
        Elements::F64(v) => v[i].to_bits(),
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
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
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
        let eb = element_bytes(a.element_type())
            .ok_or_else(|| format!("unsupported: element type {}", a.element_type()))?;
        let dims = a.dims();
        let len = match layout {
            Some(l) => {
                l.validate(dims)?;
                l.padded_element_count(dims) as usize
            }
            None => a.len(),
        };
        let mut bytes = vec![0u8; len * eb];
        let e = a.elements();
        for_each_element(dims, layout, |i, p| {
            let bits = element_bits(e, i).to_le_bytes();
            bytes[p * eb..(p + 1) * eb].copy_from_slice(&bits[..eb]);
        });
        Ok(Buffer { bytes })
    }

    /// The array of `shape` (laid out by its layout) this buffer holds.
    pub fn to_host_array(&self, shape: &ArrayShape) -> std::result::Result<HostArray, String> {
        let ty = shape.element_type;
        let eb = element_bytes(ty).ok_or_else(|| format!("unsupported: element type {ty}"))?;
        let layout = shape.layout.as_ref();
        let dims = &shape.dims;
        let len = match layout {
            Some(l) => {
                l.validate(dims)?;
                l.padded_element_count(dims) as usize
            }
            None => dims.iter().product::<i64>() as usize,
        };
        if len * eb != self.bytes.len() {
            return Err(format!(
                "a buffer of {} bytes cannot hold {shape} ({} bytes)",
                self.bytes.len(),
                len * eb
            ));
        }
        let n: usize = dims.iter().product::<i64>() as usize;
        let mut bits = vec![0u64; n];
        for_each_element(dims, layout, |i, p| {
            let mut buf = [0u8; 8];
            buf[..eb].copy_from_slice(&self.bytes[p * eb..(p + 1) * eb]);
            bits[i] = u64::from_le_bytes(buf);
        });
        use PrimitiveType as P;
        let elements = match ty {
            P::Pred => Elements::Pred(bits.iter().map(|&b| b & 1 != 0).collect()),
            P::S8 => Elements::S8(bits.iter().map(|&b| b as i8).collect()),
            P::S16 => Elements::S16(bits.iter().map(|&b| b as i16).collect()),
            P::S32 => Elements::S32(bits.iter().map(|&b| b as i32).collect()),
            P::S64 => Elements::S64(bits.iter().map(|&b| b as i64).collect()),
            P::U8 => Elements::U8(bits.iter().map(|&b| b as u8).collect()),
            P::U16 => Elements::U16(bits.iter().map(|&b| b as u16).collect()),
            P::U32 => Elements::U32(bits.iter().map(|&b| b as u32).collect()),
            P::U64 => Elements::U64(bits),
            P::F16 => Elements::F16(bits.iter().map(|&b| f16::from_bits(b as u16)).collect()),
            P::BF16 => Elements::BF16(bits.iter().map(|&b| bf16::from_bits(b as u16)).collect()),
            P::F32 => Elements::F32(bits.iter().map(|&b| f32::from_bits(b as u32)).collect()),
            P::F64 => Elements::F64(bits.iter().map(|&b| f64::from_bits(b)).collect()),
            _ => return Err(format!("unsupported: element type {ty}")),
        };
        HostArray::new(dims.clone(), elements)
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
}
