//! `dot` as XLA's elemental emitter computes it: for each result element, a loop over the
//! contracted dimensions (row-major, the last fastest) that adds `lhs * rhs` to an
//! accumulator starting at 0, each step rounded. The accumulator has the result's type,
//! except bf16, which accumulates in f32 and rounds once at the end (as XLA does);
//! operands are converted to the accumulator's type first. Integers wrap; pred is or of ands.
//! Complex results (c64, c128) add textbook products, each step rounded to the part type.

use super::complex::{Complex, Part, multiply};
use super::elementwise::convert;
use super::value::{Elements, HostArray, Num};
use crate::dot::DotDimensions;
use crate::module::Instruction;
use crate::primitive::PrimitiveType;
use crate::shape::ArrayShape;
use crate::shape::next_row_major;
use half::f16;

pub(super) fn dot(
    instr: &Instruction,
    lhs: &HostArray,
    rhs: &HostArray,
    result: &ArrayShape,
) -> Result<HostArray, String> {
    let ty = result.element_type;
    let elements = match ty {
        // Complex results: both operands converted to the result type, then `acc + l * r`
        // with the textbook product, each step rounded to the part type (the kernel's).
        PrimitiveType::C64 | PrimitiveType::C128 => {
            let (le, re) = (convert(lhs.elements(), ty)?, convert(rhs.elements(), ty)?);
            match (&le, &re) {
                (Elements::C64(l), Elements::C64(r)) => {
                    Elements::C64(complex_dot(instr, lhs, rhs, result, l, r)?)
                }
                (Elements::C128(l), Elements::C128(r)) => {
                    Elements::C128(complex_dot(instr, lhs, rhs, result, l, r)?)
                }
                _ => return Err(format!("unsupported: dot producing {ty}")),
            }
        }
        _ => {
            let accumulate = Accumulator::for_type(ty)?;
            let (le, re) = (lhs.elements(), rhs.elements());
            let out = contract(instr, lhs, rhs, result, accumulate.zero(), |acc, l, r| {
                accumulate.step(acc, le.num(l), re.num(r))
            })?;
            Elements::build(ty, out.len(), |i| out[i])?
        }
    };
    HostArray::new(result.dims.clone(), elements)
}

/// A dot of complex numbers of one type.
fn complex_dot<T: Part>(
    instr: &Instruction,
    lhs: &HostArray,
    rhs: &HostArray,
    result: &ArrayShape,
    l: &[Complex<T>],
    r: &[Complex<T>],
) -> Result<Vec<Complex<T>>, String> {
    contract(instr, lhs, rhs, result, Complex::default(), |acc, i, j| {
        let p = multiply(l[i], r[j]);
        Complex {
            re: acc.re + p.re,
            im: acc.im + p.im,
        }
    })
}

/// For each result element in row-major order, `step` folded from `zero` over the
/// contracted dimensions (row-major, the last fastest), with the offsets of the lhs and
/// rhs elements each step multiplies.
fn contract<A: Copy>(
    instr: &Instruction,
    lhs: &HostArray,
    rhs: &HostArray,
    result: &ArrayShape,
    zero: A,
    mut step: impl FnMut(A, usize, usize) -> A,
) -> Result<Vec<A>, String> {
    let dims = DotDimensions::of(instr).ok_or("malformed dot dimension numbers")?;
    let (ld, rd) = (lhs.dims(), rhs.dims());
    let lhs_free = dims.free(true, ld.len());
    let rhs_free = dims.free(false, rd.len());
    let sizes: Vec<i64> = dims.lhs_contracting.iter().map(|&d| ld[d]).collect();
    let steps: i64 = sizes.iter().product();
    let out_count: i64 = result.dims.iter().product();
    let strides = |d: &[i64]| -> Vec<i64> {
        let mut s = vec![1; d.len()];
        for i in (0..d.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * d[i + 1];
        }
        s
    };
    let (ls, rs) = (strides(ld), strides(rd));
    let nb = dims.lhs_batch.len();
    let mut out = Vec::with_capacity(out_count as usize);
    let mut index = vec![0i64; result.dims.len()];
    let mut k = vec![0i64; sizes.len()];
    for _ in 0..out_count {
        // The operands' offsets for this result element, contracted dimensions at 0.
        let mut lo = 0;
        let mut ro = 0;
        for (i, (&l, &r)) in dims.lhs_batch.iter().zip(&dims.rhs_batch).enumerate() {
            lo += index[i] * ls[l];
            ro += index[i] * rs[r];
        }
        for (j, &l) in lhs_free.iter().enumerate() {
            lo += index[nb + j] * ls[l];
        }
        for (j, &r) in rhs_free.iter().enumerate() {
            ro += index[nb + lhs_free.len() + j] * rs[r];
        }
        let mut acc = zero;
        k.fill(0);
        for _ in 0..steps {
            let mut l = lo;
            let mut r = ro;
            for (t, &kt) in k.iter().enumerate() {
                l += kt * ls[dims.lhs_contracting[t]];
                r += kt * rs[dims.rhs_contracting[t]];
            }
            acc = step(acc, l as usize, r as usize);
            next_row_major(&mut k, &sizes);
        }
        out.push(acc);
        next_row_major(&mut index, &result.dims);
    }
    Ok(out)
}

/// How one result type accumulates.
#[derive(Clone, Copy)]
enum Accumulator {
    /// f32 steps (f32, and bf16 rounded at the end).
    F32,
    /// f16 steps, each rounded to f16.
    F16,
    F64,
    /// Integers in i128, wrapped to the result type at the end (exact modulo 2^n).
    Int,
    Pred,
}

impl Accumulator {
    fn for_type(ty: PrimitiveType) -> Result<Accumulator, String> {
        use PrimitiveType::*;
        Ok(match ty {
            F32 | BF16 => Accumulator::F32,
            F16 => Accumulator::F16,
            F64 => Accumulator::F64,
            Pred => Accumulator::Pred,
            t if t.is_int() => Accumulator::Int,
            t => return Err(format!("unsupported: dot producing {t}")),
        })
    }

    fn zero(self) -> Num {
        match self {
            Accumulator::Int | Accumulator::Pred => Num::Int(0),
            _ => Num::Float(0.0),
        }
    }

    fn step(self, acc: Num, a: Num, b: Num) -> Num {
        let float = |n: Num| match n {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        };
        let int = |n: Num| match n {
            Num::Int(i) => i,
            Num::Float(f) => f as i128,
        };
        match self {
            Accumulator::F32 => {
                let p = float(a) as f32 * float(b) as f32;
                Num::Float(f64::from(float(acc) as f32 + p))
            }
            Accumulator::F16 => {
                let h = |x: f64| f16::from_f64(x);
                let p = h(f64::from(h(float(a)).to_f32() * h(float(b)).to_f32()));
                let sum = h(float(acc)).to_f32() + p.to_f32();
                Num::Float(f64::from(h(f64::from(sum)).to_f32()))
            }
            Accumulator::F64 => Num::Float(float(acc) + float(a) * float(b)),
            Accumulator::Int => Num::Int(int(acc).wrapping_add(int(a).wrapping_mul(int(b)))),
            Accumulator::Pred => {
                Num::Int(i128::from(int(acc) != 0 || (int(a) != 0 && int(b) != 0)))
            }
        }
    }
}
