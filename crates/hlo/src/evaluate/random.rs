//! Seeded random inputs: finite values in ranges where the ops under test are defined.
//!
//! | range | floats | integers | pred |
//! |---|---|---|---|
//! | `Default` | uniform in [-2, 2] | 8/16-bit: the full range; 32/64-bit: [-65536, 65536] (unsigned: [0, 65536]) | fair coin |
//! | `Between(lo, hi)` | uniform in [lo, hi] | [⌈lo⌉, ⌊hi⌋] within the type (at least one value) | fair coin |
//!
//! Floats are drawn in f64 and rounded to the type once; the named ranges have bounds
//! every float type represents, so rounding never leaves them. For ops defined on part
//! of the line, ask for [`RandomRange::POSITIVE`] (log, log-plus-one, sqrt, rsqrt, the
//! base of power), [`RandomRange::UNIT`] (acos, asin, atanh; strictly inside (-1, 1), so
//! atanh stays finite even after rounding to bf16) or [`RandomRange::AT_LEAST_ONE`]
//! (acosh); [`RandomRange::for_parameter`] picks one from a parameter's users.
//!
//! `Between(v, v)` gives exactly `v` (infinities included; an integer type's lowest or
//! highest value for -inf/+inf): [`fusion_arguments`] feeds reducers their identities so.
//!
//! The same seed gives the same values on every run and machine (fastrand's generator).

use fastrand::Rng;

use super::value::{Elements, HostArray, HostValue, Num};
use crate::diag::Diagnostic;
use crate::module::{Computation, ComputationId, HloModule, InstrId, Instruction};
use crate::opcode::Opcode;
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Shape};

/// Where random values are drawn from (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RandomRange {
    Default,
    Between(f64, f64),
}

impl RandomRange {
    /// Domain of log, sqrt, rsqrt, log-plus-one and power's base.
    pub const POSITIVE: RandomRange = RandomRange::Between(0.125, 2.0);
    /// Domain of acos, asin and atanh, kept off ±1.
    pub const UNIT: RandomRange = RandomRange::Between(-0.875, 0.875);
    /// Domain of acosh.
    pub const AT_LEAST_ONE: RandomRange = RandomRange::Between(1.0, 3.0);

    /// A range that suits every direct user of `parameter`: the intersection of what each
    /// needs (the first need wins when two cannot both hold). Start indices of
    /// dynamic-slice and gather get [-1, largest operand dimension], which exercises the
    /// clamping on both sides.
    pub fn for_parameter(computation: &Computation, parameter: InstrId) -> RandomRange {
        computation
            .instructions
            .iter()
            .flat_map(|user| {
                user.operands
                    .iter()
                    .enumerate()
                    .filter(move |&(_, &o)| o == parameter)
                    .map(move |(k, _)| domain(computation, user, k))
            })
            .fold(RandomRange::Default, RandomRange::intersect)
    }

    fn intersect(self, other: RandomRange) -> RandomRange {
        match (self, other) {
            (RandomRange::Default, r) | (r, RandomRange::Default) => r,
            (RandomRange::Between(a, b), RandomRange::Between(c, d)) if a.max(c) <= b.min(d) => {
                RandomRange::Between(a.max(c), b.min(d))
            }
            (first, _) => first,
        }
    }

    /// The range fusion `fusion`'s `parameter` draws from in [`fusion_arguments`]: its
    /// reducer's identity (`Between(v, v)`) when it is a reduce's init value (read otherwise too or not), else
    /// [`RandomRange::for_parameter`].
    pub fn for_fusion_parameter(
        module: &HloModule,
        fusion: ComputationId,
        parameter: InstrId,
    ) -> RandomRange {
        let computation = module.computation(fusion);
        match reducer_identity(module, computation, parameter) {
            Some(identity) => RandomRange::Between(identity, identity),
            None => RandomRange::for_parameter(computation, parameter),
        }
    }

    /// The bounds of float draws: [-2, 2] by default.
    pub fn float_bounds(self) -> (f64, f64) {
        match self {
            RandomRange::Default => (-2.0, 2.0),
            RandomRange::Between(lo, hi) => (lo, hi),
        }
    }

    /// The inclusive bounds of integer draws of type `ty` (see the module documentation).
    pub fn int_bounds(self, ty: PrimitiveType) -> (i128, i128) {
        let bits = ty.bit_width();
        let (min, max) = if ty.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        match self {
            RandomRange::Default if bits <= 16 => (min, max),
            RandomRange::Default => (min.max(-65536), max.min(65536)),
            RandomRange::Between(lo, hi) => {
                let lo = (lo.ceil() as i128).clamp(min, max);
                (lo, (hi.floor() as i128).clamp(lo, max))
            }
        }
    }
}

/// What operand `k` of `user` needs of its values.
fn domain(computation: &Computation, user: &Instruction, k: usize) -> RandomRange {
    use Opcode::*;
    match user.opcode {
        Log | Log1p | Sqrt | Rsqrt => RandomRange::POSITIVE,
        Power if k == 0 => RandomRange::POSITIVE,
        Acos | Asin | Atanh => RandomRange::UNIT,
        Acosh => RandomRange::AT_LEAST_ONE,
        DynamicSlice | Gather if k >= 1 => start_indices(computation, user),
        DynamicUpdateSlice if k >= 2 => start_indices(computation, user),
        Scatter if k == user.operands.len() / 2 => start_indices(computation, user),
        _ => RandomRange::Default,
    }
}

/// Start indices of dynamic-slice, gather, dynamic-update-slice and scatter: mostly inside the
/// operand, some just outside it (-1, or past `dim - size`) so that clamping is exercised.
fn start_indices(computation: &Computation, user: &Instruction) -> RandomRange {
    let operand = &computation.instruction(user.operands[0]).shape;
    let largest = operand
        .as_array()
        .and_then(|a| a.dims.iter().max().copied())
        .unwrap_or(0);
    RandomRange::Between(-1.0, largest as f64)
}

fn fill_array(shape: &ArrayShape, rng: &mut Rng, range: RandomRange) -> Result<HostArray, String> {
    let ty = shape.element_type;
    let count = shape.element_count().max(0) as usize;
    let elements = if let RandomRange::Between(lo, hi) = range
        && lo == hi
    {
        // A single value (an identity such as -inf): exact, without drawing.
        if ty == PrimitiveType::Pred {
            Elements::Pred(vec![lo != 0.0; count])
        } else if ty.is_int() {
            let (v, _) = range.int_bounds(ty);
            Elements::build(ty, count, |_| Num::Int(v))?
        } else {
            Elements::build(ty, count, |_| Num::Float(lo))?
        }
    } else if ty == PrimitiveType::Pred {
        Elements::Pred((0..count).map(|_| rng.bool()).collect())
    } else if ty.is_complex() {
        // Both parts drawn, so that a kernel that drops one cannot pass.
        let (lo, hi) = range.float_bounds();
        let mut part = || lo + (hi - lo) * rng.f64();
        let parts: Vec<(f64, f64)> = (0..count).map(|_| (part(), part())).collect();
        if ty == PrimitiveType::C64 {
            Elements::C64(
                parts
                    .iter()
                    .map(|&(re, im)| super::C64 {
                        re: re as f32,
                        im: im as f32,
                    })
                    .collect(),
            )
        } else {
            Elements::C128(
                parts
                    .iter()
                    .map(|&(re, im)| super::C128 { re, im })
                    .collect(),
            )
        }
    } else if ty.is_int() {
        let (lo, hi) = range.int_bounds(ty);
        Elements::build(ty, count, |_| Num::Int(rng.i128(lo..=hi)))?
    } else {
        let (lo, hi) = range.float_bounds();
        Elements::build(ty, count, |_| Num::Float(lo + (hi - lo) * rng.f64()))?
    };
    HostArray::new(shape.dims.clone(), elements)
}

fn fill_value(shape: &Shape, rng: &mut Rng, range: RandomRange) -> Result<HostValue, String> {
    match shape {
        Shape::Array(a) => fill_array(a, rng, range).map(HostValue::Array),
        Shape::Tuple(elements) => elements
            .iter()
            .map(|e| fill_value(e, rng, range))
            .collect::<Result<_, _>>()
            .map(HostValue::Tuple),
    }
}

/// A random array of `shape` (its layout is ignored) from `seed`.
pub fn random_array(
    shape: &ArrayShape,
    seed: u64,
    range: RandomRange,
) -> Result<HostArray, String> {
    fill_array(shape, &mut Rng::with_seed(seed), range)
}

/// A random value of `shape`; tuple elements draw one after another from one generator.
pub fn random_value(shape: &Shape, seed: u64, range: RandomRange) -> Result<HostValue, String> {
    fill_value(shape, &mut Rng::with_seed(seed), range)
}

/// One random value per parameter of `computation`, in parameter order, each in the range
/// [`RandomRange::for_parameter`] picks and from its own seed derived from `seed`.
pub fn random_arguments(
    computation: &Computation,
    seed: u64,
) -> Result<Vec<HostValue>, Diagnostic> {
    computation
        .parameters()
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let instr = computation.instruction(p);
            let range = RandomRange::for_parameter(computation, p);
            random_value(&instr.shape, parameter_seed(seed, i), range)
                .map_err(|m| Diagnostic::new(instr.spans.whole, format!("{m} in '{}'", instr.name)))
        })
        .collect()
}

/// [`random_arguments`] for fusion `fusion` of `module`, except that a parameter used as the
/// init value of reduces or reduce-windows (whatever else reads it) gets its reducer's identity (0 for add,
/// or, xor; 1 for multiply, and; -inf for maximum; +inf for minimum; the type's lowest or
/// highest value for integers). XLA's reduction emitters combine the init value with every
/// thread's partial result, which XLA permits because reductions are only defined for an
/// init value that is an identity; with any other value the result would depend on the
/// launch shape. XLA's own tests feed identities the same way.
pub fn fusion_arguments(
    module: &HloModule,
    fusion: ComputationId,
    seed: u64,
) -> Result<Vec<HostValue>, Diagnostic> {
    let computation = module.computation(fusion);
    let mut args = random_arguments(computation, seed)?;
    for (arg, p) in args.iter_mut().zip(computation.parameters()) {
        let range = RandomRange::for_fusion_parameter(module, fusion, p);
        if let RandomRange::Between(lo, hi) = range
            && lo == hi
        {
            let instr = computation.instruction(p);
            *arg = random_value(&instr.shape, 0, range)
                .map_err(|m| Diagnostic::new(instr.spans.whole, m))?;
        }
        if let Some(indices) = unique_scatter_indices(computation, p, seed) {
            *arg = HostValue::Array(indices);
        }
    }
    if computation.root_instruction().sorts_bitonic_rows() {
        args = bitonic_rows(module, fusion, args)?;
    }
    Ok(args)
}

/// For a fusion that only sorts its parameters and claims each row is bitonic (the tiles of
/// a merge stage of `split-long-sorts`, whose last operand holds each element's position in
/// its row, which the comparator breaks ties with): the drawn rows made what the kernel is
/// written for: distinct positions (`0, 1, ...` per row: the order is then total), each row
/// sorted and its second half reversed. Other forms are left as drawn (the claim then fails
/// the check, as a wrong claim should).
fn bitonic_rows(
    module: &HloModule,
    fusion: ComputationId,
    mut args: Vec<HostValue>,
) -> Result<Vec<HostValue>, Diagnostic> {
    let computation = module.computation(fusion);
    let sort = computation.root_instruction();
    let parameters = computation.parameters();
    let last = |a: &HostArray| a.dims().len().checked_sub(1);
    let sorted_last = args
        .iter()
        .filter_map(HostValue::as_array)
        .all(|a| last(a).is_some_and(|d| sort.int_list("dimensions") == Some(&[d as i64])));
    let positions = args.last().and_then(HostValue::as_array);
    let Some(positions) = positions.filter(|a| a.element_type() == PrimitiveType::S32) else {
        return Ok(args);
    };
    if sort.operands != parameters || !sorted_last {
        return Ok(args);
    }
    let n = positions.dims().last().copied().unwrap_or(1).max(1);
    let counted: Vec<u128> = (0..positions.len() as i64)
        .map(|i| (i % n) as u128)
        .collect();
    let counted = Elements::from_patterns(PrimitiveType::S32, &counted)
        .and_then(|e| HostArray::new(positions.dims().to_vec(), e))
        .map_err(|m| Diagnostic::new(sort.spans.whole, m))?;
    *args.last_mut().expect("a positions operand") = HostValue::Array(counted);
    let sorted = super::evaluate_fusion(module, fusion, &args)?;
    let arrays = sorted.into_iter().map(|a| {
        let n = *a.dims().last().expect("a sorted dimension") as usize;
        let offsets: Vec<usize> = (0..a.len())
            .map(|i| {
                let (row, k) = (i - i % n, i % n);
                row + if k < n / 2 { k } else { n - 1 - (k - n / 2) }
            })
            .collect();
        let elements = a.elements().take(&offsets, 0);
        HostArray::new(a.dims().to_vec(), elements).map(HostValue::Array)
    });
    arrays
        .collect::<Result<_, _>>()
        .map_err(|m| Diagnostic::new(sort.spans.whole, m))
}

/// For the indices of a scatter with `unique_indices=true` (the program promises that no two
/// updates address one operand element, which XLA's tests draw with `--bijection_inputs`):
/// starts of windows that do not overlap, in random order (sorted with
/// `indices_are_sorted=true`). Each index row picks a distinct cell of the grid of
/// window-sized cells over the scattered operand dimensions; `None` when `parameter` is not
/// such a scatter's indices or the grid has fewer cells than rows (the promise cannot hold).
/// The GPU bundles draw such indices with it too: a drawn index that breaks the promise makes
/// the scatter's plain stores race on the hardware (the interpreter runs threads one at a
/// time and would not see it).
pub fn unique_scatter_indices(
    computation: &Computation,
    parameter: InstrId,
    seed: u64,
) -> Option<HostArray> {
    let scatter = computation.instructions.iter().find(|u| {
        u.opcode == Opcode::Scatter
            && u.operands.get(u.operands.len() / 2) == Some(&parameter)
            && u.bool_value("unique_indices") == Some(true)
    })?;
    let k = scatter.operands.len() / 2;
    let array = |i: usize| {
        computation
            .instruction(scatter.operands[i])
            .shape
            .as_array()
    };
    let (operand, indices, updates) = (array(0)?, array(k)?, array(k + 1)?);
    let n = crate::scatter::ScatterDimensions::of(scatter, indices.rank()).ok()?;
    let window = n.window_sizes(operand.rank(), &updates.dims);
    let to_operand = &n.scatter_dims_to_operand_dims;
    // Cells per scattered dimension, and the rows that need one each.
    let cells: Vec<i64> = to_operand
        .iter()
        .map(|&d| operand.dims[d] / window[d])
        .collect();
    let total = cells.iter().try_fold(1i64, |acc, &c| acc.checked_mul(c))?;
    let vector_dim = n.index_vector_dim;
    let rows: i64 = (0..indices.rank())
        .filter(|&d| d != vector_dim)
        .map(|d| indices.dims[d])
        .product();
    if rows > total || rows > 1 << 24 {
        return None;
    }
    let mut rng = Rng::with_seed(seed ^ 0x5ca7_7e12);
    let mut chosen = std::collections::BTreeSet::new();
    let mut order = Vec::with_capacity(rows as usize);
    while (order.len() as i64) < rows {
        let cell = rng.i64(0..total);
        if chosen.insert(cell) {
            order.push(cell);
        }
    }
    if scatter.bool_value("indices_are_sorted") == Some(true) {
        order.sort_unstable();
    }
    // Row r's components, then laid out with the vector dimension where it is.
    let components = to_operand.len();
    let mut values = vec![0i64; (rows as usize) * components];
    for (r, &cell) in order.iter().enumerate() {
        let mut rest = cell;
        for c in (0..components).rev() {
            values[r * components + c] = (rest % cells[c]) * window[to_operand[c]];
            rest /= cells[c];
        }
    }
    let strides = super::movement::row_major_strides(&indices.dims);
    let count = indices.element_count() as usize;
    let mut laid_out = vec![0i64; count];
    for (i, slot) in laid_out.iter_mut().enumerate() {
        let (mut row, mut component, mut rest) = (0usize, 0usize, i);
        for (d, (&stride, &size)) in strides.iter().zip(&indices.dims).enumerate() {
            let coordinate = rest / stride;
            rest %= stride;
            if d == vector_dim {
                component = coordinate;
            } else {
                row = row * size as usize + coordinate;
            }
        }
        *slot = values[row * components + component];
    }
    let elements = Elements::build(indices.element_type, count, |i| {
        Num::Int(laid_out[i].into())
    })
    .ok()?;
    HostArray::new(indices.dims.clone(), elements).ok()
}

/// The identity of the reducer of every reduce and reduce-window that uses `parameter` as an
/// init value, when it is used only so and all of them agree.
fn reducer_identity(
    module: &HloModule,
    computation: &Computation,
    parameter: InstrId,
) -> Option<f64> {
    let mut identity = None;
    for user in &computation.instructions {
        for (k, _) in user
            .operands
            .iter()
            .enumerate()
            .filter(|&(_, &o)| o == parameter)
        {
            let is_init = matches!(user.opcode, Opcode::Reduce | Opcode::ReduceWindow)
                && k >= user.operands.len() / 2;
            // Read otherwise too (a constant 0 that CSE made one value with a broadcast of
            // zeros): the kernel is only right for an identity init, so that is drawn.
            if !is_init {
                continue;
            }
            let reducer = module.computation(user.called("to_apply")?.id);
            let ty = computation
                .instruction(parameter)
                .shape
                .as_array()?
                .element_type;
            let this = identity_of(reducer.root_instruction().opcode, ty)?;
            if identity.is_some_and(|i| i != this) {
                return None;
            }
            identity = Some(this);
        }
    }
    identity
}

/// The identity of `op` on elements of type `ty`, as a value the parameter's range holds
/// (a bound past the type's range saturates to it: `+inf` is an integer type's largest).
/// In the type, not in f64: `maximum`'s identity is 0 for unsigned integers, which is also
/// `add`'s (one parameter may be the init of both), and `and`'s is all ones.
fn identity_of(op: Opcode, ty: PrimitiveType) -> Option<f64> {
    let lowest = if ty.is_float() {
        f64::NEG_INFINITY
    } else if ty.is_unsigned_int() || ty == PrimitiveType::Pred {
        0.0
    } else {
        -(2f64.powi(ty.bit_width() as i32 - 1))
    };
    Some(match op {
        Opcode::Add | Opcode::Or | Opcode::Xor => 0.0,
        Opcode::Multiply => 1.0,
        Opcode::And if ty == PrimitiveType::Pred => 1.0,
        Opcode::And if ty.is_signed_int() => -1.0,
        Opcode::And if ty.is_unsigned_int() => f64::INFINITY,
        Opcode::Maximum => lowest,
        Opcode::Minimum => f64::INFINITY,
        _ => return None,
    })
}

/// Distinct, well-mixed seeds for the parameters of one run.
fn parameter_seed(seed: u64, parameter: usize) -> u64 {
    seed ^ (parameter as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
