//! How a stage's outputs compare with the evaluator's: the tolerance per element type,
//! the reference with its slack after float sums, the first mismatch, and the check that
//! every output element was written exactly once.

use hlo::evaluate::{HostArray, HostValue, evaluate_fusion, evaluate_fusion_with_sums_pushed};
use hlo::{ArrayShape, ComputationId, HloModule, PrimitiveType, Value};
use interp::{Kernel, Launch};

use super::{Case, reduces};

/// How far a float result may be from the evaluator's (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub abs: f64,
    pub rel: f64,
}

/// What an output element's bound depends on besides its own type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sensitivity {
    /// The most elements one reduce upstream combines into one (1 without reduces).
    pub reduced: u64,
    /// The loosest float type of a function upstream that kernels approximate
    /// (`hlo::evaluate::is_approximated`: libdevice's `expf`, a complex function in f32...):
    /// an output of a wider type is only as close as that type allows.
    pub approximated: Option<PrimitiveType>,
}

impl Sensitivity {
    /// Nothing upstream: an element computed directly from the inputs.
    pub const NONE: Sensitivity = Sensitivity {
        reduced: 1,
        approximated: None,
    };

    /// What `computation` (a fusion) computes its outputs from.
    pub fn of(computation: &hlo::Computation) -> Sensitivity {
        let approximated = computation
            .instructions
            .iter()
            .filter(|i| {
                i.operands.first().is_some_and(|&o| {
                    let operand = computation.instruction(o).shape.as_array();
                    operand
                        .is_some_and(|a| hlo::evaluate::is_approximated(i.opcode, a.element_type))
                })
            })
            .filter_map(|i| i.shape.as_array().map(|a| a.element_type))
            .map(|ty| ty.complex_component().unwrap_or(ty))
            .fold(None, loosest);
        Sensitivity {
            reduced: super::largest_reduction(computation),
            approximated,
        }
    }

    /// An element computed from elements of both sensitivities.
    pub fn join(self, other: Sensitivity) -> Sensitivity {
        Sensitivity {
            reduced: self.reduced.max(other.reduced),
            approximated: [self.approximated, other.approximated]
                .into_iter()
                .flatten()
                .fold(None, loosest),
        }
    }
}

/// Of a type so far (`None`: none yet) and `ty`, the one with the looser bound.
fn loosest(so_far: Option<PrimitiveType>, ty: PrimitiveType) -> Option<PrimitiveType> {
    let rel = |t: PrimitiveType| Tolerance::for_type(t).map_or(0.0, |b| b.rel);
    match so_far {
        Some(s) if rel(s) >= rel(ty) => Some(s),
        _ => Some(ty),
    }
}

impl Tolerance {
    /// The bound for elements of `ty` computed with `sensitivity`: the type's bound (or
    /// the approximated type's, when that is looser), relative times `sqrt(n)` and
    /// absolute times `n` for a reduce of `n` elements into one; `None` means exact.
    pub fn for_output(ty: PrimitiveType, sensitivity: Sensitivity) -> Option<Tolerance> {
        let n = sensitivity.reduced.max(1) as f64;
        let own = Tolerance::for_type(ty)?;
        let base = match sensitivity.approximated.and_then(Tolerance::for_type) {
            Some(t) if t.rel > own.rel => t,
            _ => own,
        };
        Some(Tolerance {
            abs: base.abs * n,
            rel: base.rel * n.sqrt(),
        })
    }

    /// The bound for elements of `ty`; `None` means exact.
    pub fn for_type(ty: PrimitiveType) -> Option<Tolerance> {
        let both = |t: f64| Some(Tolerance { abs: t, rel: t });
        match ty {
            PrimitiveType::BF16 => both(2f64.powi(-7)),
            PrimitiveType::F16 => both(2f64.powi(-10)),
            // Per part: the kernel's multiplies and adds may be contracted to FMAs.
            PrimitiveType::F32 | PrimitiveType::C64 => both(1e-5),
            PrimitiveType::F64 | PrimitiveType::C128 => both(1e-12),
            _ => None,
        }
    }
}

/// What the evaluator computes from one seed's arguments, and how much each output element
/// depends on the rounding of the float sums before it.
pub(crate) struct Reference {
    pub(crate) values: Vec<HostArray>,
    /// Per output, per element: twice the farthest the element moves when every float sum
    /// of the computation is pushed by its rounding bound, up and down
    /// ([`evaluate_fusion_with_sums_pushed`]). A kernel that sums in another order is
    /// correct within it: an element after a division by a sum of terms of both signs may
    /// move by far more than the type's tolerance, and still be right. Empty when the
    /// computation sums no floats.
    pub(crate) slack: Vec<Vec<f64>>,
}

impl Reference {
    /// The evaluator's outputs of computation `id` on `args`, with their slack.
    pub(crate) fn of(
        module: &HloModule,
        id: ComputationId,
        args: &[HostValue],
    ) -> Result<Reference, hlo::Diagnostic> {
        let values = evaluate_fusion(module, id, args)?;
        let mut slack = Vec::new();
        if reduces(module, id) {
            let up = evaluate_fusion_with_sums_pushed(module, id, args, 1.0)?;
            let down = evaluate_fusion_with_sums_pushed(module, id, args, -1.0)?;
            for ((value, up), down) in values.iter().zip(&up).zip(&down) {
                // An infinity or a NaN on one side only (a sum that overflows in some
                // order; `log1p` of a product that crosses -1) moved without bound.
                // An integer converted from a sum moves by whole steps.
                let moved = |other: &HostArray, i| match (value.value(i), other.value(i)) {
                    (Value::Float(a), Value::Float(b)) if a != b && !(a.is_nan() && b.is_nan()) => {
                        if a.is_finite() && b.is_finite() {
                            (a - b).abs()
                        } else {
                            f64::INFINITY
                        }
                    }
                    (Value::Int(a), Value::Int(b)) => a.abs_diff(b) as f64,
                    _ => 0.0,
                };
                slack.push(
                    (0..value.len())
                        .map(|i| 2.0 * moved(up, i).max(moved(down, i)))
                        .collect(),
                );
            }
        }
        Ok(Reference { values, slack })
    }

    /// Output `k`'s slack (empty when there is none).
    pub(crate) fn slack(&self, k: usize) -> &[f64] {
        self.slack.get(k).map_or(&[], Vec::as_slice)
    }
}

/// The first element out of tolerance at a stage.
#[derive(Clone, Debug)]
pub(crate) struct Mismatch {
    pub(crate) seed: u64,
    pub(crate) output: usize,
    pub(crate) linear: usize,
    pub(crate) index: Vec<i64>,
    pub(crate) got: Value,
    pub(crate) want: Value,
}

/// How one stage compares with the evaluator over every case.
#[derive(Clone, Debug, Default)]
pub(crate) struct Comparison {
    pub(crate) max_abs: f64,
    pub(crate) max_rel: f64,
    pub(crate) bit_exact: bool,
    pub(crate) mismatch: Option<Mismatch>,
    /// The first output element not written exactly once (what is wrong with it).
    pub(crate) not_written_once: Option<String>,
    /// Interpreter instructions executed and seconds taken (module compilation included).
    pub(crate) ops: u64,
    pub(crate) seconds: f64,
    /// The stage's IR is the previous stage's, whose comparison this is: not run again.
    pub(crate) unchanged: bool,
}

impl Comparison {
    /// Nothing compared yet: bit-exact until an element differs.
    pub(crate) fn new() -> Comparison {
        Comparison {
            bit_exact: true,
            ..Comparison::default()
        }
    }

    /// `bit-exact`, or the largest errors.
    pub(crate) fn summary(&self) -> String {
        if self.bit_exact {
            "bit-exact".to_string()
        } else {
            format!(
                "max abs err {:.3e}, max rel err {:.3e}",
                self.max_abs, self.max_rel
            )
        }
    }

    pub(crate) fn passes(&self) -> bool {
        self.mismatch.is_none() && self.not_written_once.is_none()
    }
}

pub(super) fn host_leaves(v: &HostValue) -> Vec<&HostArray> {
    match v {
        HostValue::Array(a) => vec![a],
        HostValue::Tuple(t) => t.iter().flat_map(host_leaves).collect(),
    }
}

/// Runs `kernel` on every case and compares its outputs with the evaluator's.
pub(super) fn compare_stage(
    kernel: &Kernel,
    launch: Launch,
    cases: &[Case],
    (outputs, in_place): (&[ArrayShape], &[usize]),
    sensitivity: Sensitivity,
) -> Result<Comparison, String> {
    let mut c = Comparison::new();
    for case in cases {
        let run = kernel
            .run(launch, case.arguments.clone())
            .map_err(|e| e.to_string())?;
        c.ops += run.ops;
        let first_output = case.arguments.len() - outputs.len();
        for (k, shape) in outputs.iter().enumerate() {
            if c.not_written_once.is_none() && !in_place.contains(&k) {
                c.not_written_once =
                    written_once(&run.write_counts[first_output + k], shape, k).err();
            }
        }
        for (k, (shape, want)) in outputs.iter().zip(&case.expected.values).enumerate() {
            let got = run.buffers[first_output + k]
                .to_host_array(shape)
                .map_err(|m| format!("output {k}: {m}"))?;
            let slack = case.expected.slack(k);
            compare_array(&mut c, (case.seed, k), sensitivity, &got, want, slack);
        }
    }
    Ok(c)
}

/// Every element of output `k` written exactly once (XLA's `gpu_test_correctness` checks the
/// same bijection between threads and outputs): `counts` has one entry per byte, in memory
/// order; an element's first byte stands for it. Sub-byte elements share a byte, which is
/// then written once per element it holds (each merged in by a compare-and-swap) or once
/// in all (a thread's whole bytes, one plain store); an element that neither writes shows
/// up as a wrong value, as outputs start filled with a pattern. The padding of a tiled
/// layout is nobody's to write.
fn written_once(counts: &[u8], shape: &ArrayShape, k: usize) -> Result<(), String> {
    let bits = (shape.element_type.bit_width() as usize).max(1);
    let first_byte = |physical: usize| match bits {
        1..8 => physical * bits / 8,
        _ => physical * bits.div_ceil(8),
    };
    // Elements per byte, for the bytes that hold an element.
    let mut holds = vec![0u8; counts.len()];
    interp::for_each_element(&shape.dims, shape.layout.as_ref(), |_, physical| {
        if let Some(h) = holds.get_mut(first_byte(physical)) {
            *h += 1;
        }
    });
    let mut bad = None;
    interp::for_each_element(&shape.dims, shape.layout.as_ref(), |linear, physical| {
        let byte = first_byte(physical);
        let n = counts.get(byte).copied().unwrap_or(0);
        let want = holds.get(byte).copied().unwrap_or(1);
        if n != want && !(bits < 8 && n == 1) && bad.is_none() {
            bad = Some((linear, n, want));
        }
    });
    let Some((linear, n, want)) = bad else {
        return Ok(());
    };
    let index = show_index(&delinearize(&shape.dims, linear));
    let element = format!("output {k} element [{index}] (linear {linear})");
    let times = match n {
        0 => "is never written".to_string(),
        u8::MAX => format!("is written at least {n} times"),
        n if want > 1 => format!("shares a byte with {} others, written {n} times", want - 1),
        n => format!("is written {n} times"),
    };
    Err(format!(
        "{element} {times}: every output element must be written exactly once"
    ))
}

/// Folds the differences of one output into `c`, keeping the first mismatch.
pub(crate) fn compare_array(
    c: &mut Comparison,
    case: (u64, usize),
    sensitivity: Sensitivity,
    got: &HostArray,
    want: &HostArray,
    slack: &[f64],
) {
    let (seed, output) = case;
    let tolerance = Tolerance::for_output(want.element_type(), sensitivity);
    for i in 0..want.len() {
        let (g, w) = (got.value(i), want.value(i));
        let (abs, rel, same_bits, within) = difference(&g, &w, tolerance);
        // An unbounded slack takes any value, NaN included.
        let within = within
            || slack
                .get(i)
                .is_some_and(|&s| abs <= s || s == f64::INFINITY);
        c.bit_exact &= same_bits;
        c.max_abs = c.max_abs.max(abs);
        c.max_rel = c.max_rel.max(rel);
        if !within && c.mismatch.is_none() {
            c.mismatch = Some(Mismatch {
                seed,
                output,
                linear: i,
                index: delinearize(want.dims(), i),
                got: g,
                want: w,
            });
        }
    }
}

/// (absolute error, relative error, identical, within tolerance) of one element.
pub(super) fn difference(
    g: &Value,
    w: &Value,
    tolerance: Option<Tolerance>,
) -> (f64, f64, bool, bool) {
    match (g, w, tolerance) {
        // A complex number is a point of the plane: its error is the distance to the wanted
        // one, absolute or relative to the wanted modulus (numpy's `isclose` on complex
        // numbers, which JAX's tests use). A part that is tiny beside the other carries the
        // other's rounding (`(1e10 i)^1` is `1e10 · cis(π/2)`, whose real part f32's π/2
        // makes -437 where f64's gives 6e-7). Non-finite parts compare part by part.
        (Value::Complex(gr, gi), Value::Complex(wr, wi), Some(t)) => {
            let finite = [gr, gi, wr, wi].iter().all(|x| x.is_finite());
            let re = difference(&Value::Float(*gr), &Value::Float(*wr), tolerance);
            let im = difference(&Value::Float(*gi), &Value::Float(*wi), tolerance);
            if !finite {
                return (re.0.max(im.0), re.1.max(im.1), re.2 && im.2, re.3 && im.3);
            }
            let abs = (gr - wr).hypot(gi - wi);
            let modulus = wr.hypot(*wi);
            let rel = if modulus == 0.0 { abs } else { abs / modulus };
            (abs, rel, re.2 && im.2, abs <= t.abs || rel <= t.rel)
        }
        (Value::Float(g), Value::Float(w), Some(t)) => {
            if g.is_nan() || w.is_nan() || g.is_infinite() || w.is_infinite() {
                let same = (g.is_nan() && w.is_nan()) || g == w;
                let err = if same { 0.0 } else { f64::INFINITY };
                return (err, err, same && g.to_bits() == w.to_bits(), same);
            }
            let abs = (g - w).abs();
            let rel = if *w == 0.0 { abs } else { abs / w.abs() };
            let within = abs <= t.abs || rel <= t.rel;
            (abs, rel, g.to_bits() == w.to_bits(), within)
        }
        _ => {
            // Exact types (integers, f8/f4 encodings read as their values): NaN matches NaN.
            // An integer's distance is kept: one converted from a float sum may be off by
            // what the sum's slack allows.
            let nan = |v: &Value| matches!(v, Value::Float(x) if x.is_nan());
            let same = g == w || (nan(g) && nan(w));
            let err = match (g, w) {
                _ if same => 0.0,
                (Value::Int(a), Value::Int(b)) => a.abs_diff(*b) as f64,
                _ => f64::INFINITY,
            };
            (err, err, same, same)
        }
    }
}

/// `1, 2, 3` for the index `[1, 2, 3]`.
pub(crate) fn show_index(index: &[i64]) -> String {
    index
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The row-major multi-index of element `linear` of an array with `dims`.
pub(super) fn delinearize(dims: &[i64], linear: usize) -> Vec<i64> {
    indexing::delinearize_point(linear as u64, dims)
}
