//! Values lane by lane: applying scalar ops to scalars and vectors with poison
//! propagation, and the errors for values of the wrong kind.

use crate::error::{Error, Result, fail};
use crate::inst::Program;
use crate::ops::Fault;
use crate::value::Val;
use crate::wide::WideOp;
use std::rc::Rc;

/// The error for using `v` where a scalar is needed.
pub(super) fn not_scalar(v: &Val, prog: &Program) -> Error {
    match v {
        Val::Poison(site) => poison(prog, *site, "used"),
        Val::Undef => fail!(InvalidIr, "a register is read before it is written"),
        Val::W(_) => fail!(
            Unsupported,
            "an i128 where a scalar of at most 64 bits is computed on (i128 values are moved, \
             taken apart and put together only)"
        ),
        _ => fail!(InvalidIr, "expected a scalar, found {}", kind(v)),
    }
}

pub(super) fn kind(v: &Val) -> &'static str {
    match v {
        Val::Undef => "nothing",
        Val::S(_) => "a scalar",
        Val::W(_) => "an i128",
        Val::Poison(_) => "poison",
        Val::Vector(_) => "a vector",
        Val::Tensor(_) => "a tensor",
        Val::Ptr(_) => "a pointer",
    }
}

/// A poison value from `site` reached a place where it matters (`how`).
pub(crate) fn poison(prog: &Program, site: u32, how: &str) -> Error {
    let s = &prog.sites[site as usize];
    fail!(
        Poison,
        "a poison value (produced by '{}' at {}:{}:{}) is {how}",
        s.op,
        s.file,
        s.loc.line,
        s.loc.col
    )
}

/// An op result: the value, poison from this site, or immediate undefined behaviour.
#[inline]
pub(super) fn lane(r: std::result::Result<u64, Fault>, site: u32) -> Result<Val> {
    match r {
        Ok(v) => Ok(Val::S(v)),
        Err(Fault::Poison) => Ok(Val::Poison(site)),
        Err(Fault::Ub(what)) => Err(fail!(UndefinedBehavior, "{what}")),
    }
}

/// The result of a [`crate::wide`] op on two scalar operands (an `i128` is a
/// [`Val::W`], a narrower integer a [`Val::S`]); a poison operand makes it poison.
pub(super) fn wide(op: WideOp, a: &Val, b: &Val, site: u32, prog: &Program) -> Result<Val> {
    if let Val::Vector(lanes) = a {
        // Lane by lane (`b` a vector of as many lanes, or `a` again for casts).
        let other = |i: usize| match b {
            Val::Vector(bs) => bs
                .get(i)
                .ok_or_else(|| fail!(InvalidIr, "vectors of different lengths")),
            _ => Err(not_scalar(b, prog)),
        };
        let out = lanes
            .iter()
            .enumerate()
            .map(|(i, x)| wide(op, x, other(i)?, site, prog))
            .collect::<Result<_>>()?;
        return Ok(Val::Vector(Rc::new(out)));
    }
    let bits = |v: &Val| match v {
        Val::S(x) => Ok(Some(u128::from(*x))),
        Val::W(w) => Ok(Some(crate::wide::join(*w))),
        Val::Poison(_) => Ok(None),
        other => Err(not_scalar(other, prog)),
    };
    // Casts have one operand: `b` is then `a` again.
    let (Some(x), Some(y)) = (bits(a)?, bits(b)?) else {
        return Ok(Val::Poison(site));
    };
    Ok(match crate::wide::eval(op, x, y) {
        Ok(r) if op.gives_wide() => Val::W(crate::wide::words(r)),
        Ok(r) => Val::S(r as u64),
        Err(fault) => lane(Err(fault), site)?,
    })
}

/// A lane function: the lanes of the operands in, the result lane out.
pub(super) type LaneFn<'a> = &'a dyn Fn(&[u64]) -> std::result::Result<u64, Fault>;

/// Applies `f` lane by lane to operands of one shape (scalars, or vectors of scalar lanes)
/// and writes the result to `out`; poison stays poison. A vector in `out` that no other
/// value shares and that has the right length is overwritten in place: registers keep the
/// previous thread's vectors, so vector code allocates nothing per op (allocating and
/// freeing each result was a quarter of the work of O3's vectorized code).
pub(super) fn map_n(
    out: &mut Val,
    vals: &[&Val],
    site: u32,
    prog: &Program,
    f: LaneFn<'_>,
) -> Result<()> {
    let Some(Val::Vector(first)) = vals.first() else {
        *out = scalar_lane(vals, site, prog, f)?;
        return Ok(());
    };
    let n = first.len();
    // Lane `i` of every operand (at most three), without allocating per lane.
    let lane_i = |i: usize| -> Result<Val> {
        let mut lanes = [vals[0]; 3];
        for (slot, v) in lanes.iter_mut().zip(vals) {
            *slot = match v {
                Val::Vector(l) => l
                    .get(i)
                    .ok_or_else(|| fail!(InvalidIr, "vector lengths differ"))?,
                other => return Err(not_scalar(other, prog)),
            };
        }
        scalar_lane(&lanes[..vals.len()], site, prog, f)
    };
    if let Val::Vector(rc) = out
        && let Some(lanes) = Rc::get_mut(rc)
        && lanes.len() == n
    {
        for (i, slot) in lanes.iter_mut().enumerate() {
            *slot = lane_i(i)?;
        }
    } else {
        *out = Val::Vector(Rc::new((0..n).map(lane_i).collect::<Result<_>>()?));
    }
    Ok(())
}

/// `f` of scalar operands; a poison operand makes poison.
fn scalar_lane(vals: &[&Val], site: u32, prog: &Program, f: LaneFn<'_>) -> Result<Val> {
    let mut scalars = [0u64; 3];
    for (slot, v) in scalars.iter_mut().zip(vals) {
        match v {
            Val::S(x) => *slot = *x,
            Val::Poison(s) => return Ok(Val::Poison(*s)),
            other => return Err(not_scalar(other, prog)),
        }
    }
    lane(f(&scalars[..vals.len()]), site)
}

/// `select` of one lane (or scalar): poison conditions make poison.
pub(super) fn select(cond: &Val, t: &Val, f: &Val, prog: &Program) -> Result<Val> {
    match cond {
        Val::S(c) => Ok(if c & 1 != 0 { t.clone() } else { f.clone() }),
        Val::Poison(s) => Ok(Val::Poison(*s)),
        Val::Vector(cs) => {
            let (Val::Vector(ts), Val::Vector(fs)) = (t, f) else {
                return Err(fail!(
                    InvalidIr,
                    "a vector condition selects between vectors"
                ));
            };
            let lanes = cs
                .iter()
                .zip(ts.iter().zip(fs.iter()))
                .map(|(c, (t, f))| select(c, t, f, prog))
                .collect::<Result<_>>()?;
            Ok(Val::Vector(Rc::new(lanes)))
        }
        other => Err(not_scalar(other, prog)),
    }
}

/// The bits of `lanes` (each `from_bits` wide, lane 0 lowest) as lanes of `to.0` bits, a
/// vector when `to.1`: what a bitcast between a packed vector and another shape gives. A
/// result lane is poison where one of its bits came from a poison lane.
pub(super) fn regroup(
    lanes: &[Val],
    from_bits: u32,
    to: (u32, bool),
    site: u32,
    prog: &Program,
) -> Result<Val> {
    let (to_bits, to_vector) = to;
    let total = lanes.len() as u64 * u64::from(from_bits);
    let bit = |at: u64| -> Result<Option<u64>> {
        let (lane, offset) = (at / u64::from(from_bits), at % u64::from(from_bits));
        match &lanes[lane as usize] {
            Val::S(x) => Ok(Some(x >> offset & 1)),
            Val::Poison(_) => Ok(None),
            other => Err(not_scalar(other, prog)),
        }
    };
    let mut out = Vec::with_capacity((total / u64::from(to_bits)) as usize);
    for first in (0..total).step_by(to_bits as usize) {
        let mut value = Some(0u64);
        for k in 0..u64::from(to_bits) {
            value = match (value, bit(first + k)?) {
                (Some(v), Some(b)) => Some(v | b << k),
                _ => None,
            };
        }
        out.push(value.map_or(Val::Poison(site), Val::S));
    }
    Ok(if to_vector {
        Val::Vector(Rc::new(out))
    } else {
        out.pop().unwrap_or_default()
    })
}
