//! `hlo-emit --check`: does every pass keep the kernel computing what the HLO means?
//!
//! For each fusion, the HLO reference evaluator computes the outputs on `N` seeded random
//! inputs (`hlo::evaluate::random_arguments`, seeds `0..N`). Then the emitted `xla_gpu`
//! module, the module after every pass of the pipeline (`lower-to-llvm` included), the
//! translated LLVM IR and the O3-optimized LLVM IR (both imported back into the llvm
//! dialect, `codegen::import`) run in the interpreter (`crates/interp`) on the same inputs,
//! over the kernel's real grid. One line per stage reports the largest error over every
//! output element and input; the first stage whose result is out of tolerance is named with
//! the fusion, the element, the input seed, both values and the bound. The NVPTX backend
//! and ptxas, after the last stage, are not interpreted; the GPU runs check their result.
//!
//! Output buffers start filled with `0xff` bytes (NaN for floats, -1 for integers), so an
//! element no thread writes shows up as a mismatch instead of hiding behind a zero.
//!
//! **Tolerances** ([`Tolerance::for_type`]). Integers and `pred` must match exactly. A float
//! element matches when both are NaN, when both are the same infinity, or when it is within
//! the absolute *or* the relative bound of its type (XLA's `ErrorSpec` rule): `bf16` 2^-7
//! (one unit in the last place at 1.0), `f16` 2^-10, `f32` 1e-5, `f64` 1e-12. Up to
//! `expand-float-ops` the interpreter and the evaluator compute bit for bit the same (both
//! round `f16`/`bf16` after each op and share Rust's math functions), which the report shows
//! as `bit-exact`; after it, `tanh` and `erf` are XLA's rational approximations (at most 4.90
//! and 5.92 ulp in `f32`, measured in `passes/tests/integration/expand_float_ops.rs`), which one rounding
//! to `bf16`/`f16` can turn into one unit of that type — and in `1 + tanh(x)` near
//! `tanh(x) = -1` into an absolute error of that size on a small result, which is why the
//! absolute bound is one unit at 1.0 and not a relative one. A complex element is a point of
//! the plane: it matches when its distance to the evaluator's is within the bound, absolute
//! or relative to the evaluator's modulus (numpy's `isclose`); where a part is not finite,
//! part by part.
//!
//! Approximated functions: from LLVM's O3 on, libdevice's bodies compute `expf`, `log1pf`...
//! (within the few ulps of CUDA's table), and complex functions are scaled formulas in the
//! part type from the emitter on; the evaluator's are within an ulp of the exact value. An
//! output of a wider type than such a function's (`convert(log-plus-one(x))` to f64, a dot of
//! `|z|` of c64 values into f64) gets the function type's bound ([`Sensitivity`]; the report
//! says so): its value is only as close as that type allows. Found by the fuzzer, each with
//! a lit test (`testdata/lit/check/complex-abs-into-f64.hlo`).
//!
//! Reductions: the reduction emitters combine elements in another order than the evaluator's
//! row-major one (per-thread strips, then warp shuffles, then across warps), so a float sum of
//! `n` elements differs by rounding errors that grow, for random-sign inputs, like `sqrt(n)`
//! units of the partial sums, which themselves grow like `sqrt(n)` times the inputs (drawn
//! from [-2, 2]): a fusion whose largest reduce combines `n` elements into one gets the type's
//! relative bound times `sqrt(n)` and its absolute bound times `n`
//! ([`Tolerance::for_output`]; `f16` sums of 64 elements differ by up to 0.08 in XLA's
//! `reduce_multirow/f16_v4.hlo`). The report prints the factors it used. Init
//! values of reduces are their reducer's identity (`hlo::evaluate::fusion_arguments`): XLA
//! combines the init value with every partial result, which only an identity makes
//! independent of the launch shape.

use std::io::Write;
use std::sync::Arc;

use hlo::evaluate::{fusion_arguments, random_array};
use hlo::{ArrayShape, ComputationId, HloModule, Shape, SourceFile, Value};
use interp::Buffer;
use passes::{Pass, PassRegistry};

use crate::pipeline::PASSES;
pub use crate::runner::Optimize;

mod compare;
mod module;
mod stages;

use compare::host_leaves;
pub(crate) use compare::{Comparison, Reference, compare_array, show_index};
pub use compare::{Sensitivity, Tolerance};
pub use module::{ModuleCheck, check_module};
use stages::check_fusions;
pub use stages::check_pass_replay;

/// The standard pipeline's passes, all of which the interpreter follows.
pub fn checked_passes() -> Vec<Box<dyn Pass>> {
    let standard: Vec<String> = PASSES.iter().map(|p| p.to_string()).collect();
    passes_to_check(&standard).expect("PASSES names registered passes")
}

/// The passes of `pipeline` (names); when it ends in `lower-to-llvm`, the LLVM stages
/// are checked after them.
pub fn passes_to_check(pipeline: &[String]) -> Result<Vec<Box<dyn Pass>>, String> {
    let registry = PassRegistry::standard();
    pipeline
        .iter()
        .map(|p| {
            registry
                .create(p)
                .ok_or_else(|| format!("error: --pass-pipeline: unknown pass '{p}'"))
        })
        .collect()
}

/// One seeded input: the argument buffers and what the evaluator computed from them.
pub(crate) struct Case {
    seed: u64,
    arguments: Vec<Buffer>,
    expected: Reference,
}

/// Checks fusion `id` of `module` after the emitter and after each of `passes` (in order),
/// on `inputs` seeded inputs; the report goes to `out`. `Ok(true)` when every stage matches,
/// `Ok(false)` after a mismatch or an interpreter error (reported), `Err` when the fusion
/// cannot be emitted, evaluated or compiled.
pub fn check_fusion(
    source: &SourceFile,
    module: &HloModule,
    id: ComputationId,
    passes: Vec<Box<dyn Pass>>,
    inputs: u64,
    out: &mut dyn Write,
) -> Result<bool, String> {
    let options = CheckOptions {
        inputs,
        ..CheckOptions::default()
    };
    check_fusion_with(source, module, id, passes, &options, out)
}

/// How `--check` checks.
#[derive(Clone)]
pub struct CheckOptions {
    /// Seeded inputs per stage.
    pub inputs: u64,
    /// In place of LLVM's O3 (tests only: see [`Optimize`]).
    pub optimize: Option<Arc<Optimize>>,
    /// After each stage's line, a `time:` line: the interpreter's seconds on one core,
    /// instructions executed and output elements per second (`--check --time-passes`).
    pub stage_times: bool,
    /// The GPU the checked kernels are emitted and optimized for (`--arch`): the code
    /// checked is the code that becomes that GPU's PTX, in the same run.
    pub arch: String,
    /// Ours or XLA's choices (`--match-xla`): the kernels checked are the ones compiled.
    pub choices: emitters::Choices,
    /// Where a reproducer of each pass the check blames goes (`--crash-reproducer`), with
    /// the record of the run (a [`crate::reproducer::Recorder`] among its observers).
    pub crash_reproducer: Option<CrashReproducer>,
}

/// Where `--check` writes crash reproducers, and the run's record they are made from.
#[derive(Clone)]
pub struct CrashReproducer {
    pub dir: std::path::PathBuf,
    pub record: crate::reproducer::SharedRecord,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            inputs: 1,
            optimize: None,
            stage_times: false,
            arch: crate::pipeline::Options::default().arch,
            choices: emitters::Choices::Tuned,
            crash_reproducer: None,
        }
    }
}

/// LLVM's O3 as the pipeline runs it, libdevice linked, for `arch`: what a test's
/// [`Optimize`] starts from.
pub fn optimize_o3(llvm_ir: &str, arch: &str) -> Result<String, String> {
    codegen::ptx::compile(llvm_ir, arch)
        .map(|c| c.optimized_ir)
        .map_err(|e| e.to_string())
}

/// [`check_fusion`] with every option.
pub fn check_fusion_with(
    source: &SourceFile,
    module: &HloModule,
    id: ComputationId,
    passes: Vec<Box<dyn Pass>>,
    options: &CheckOptions,
    out: &mut dyn Write,
) -> Result<bool, String> {
    let checked = check_fusions(source, module, &[id], passes, options, &mut [], out)?;
    Ok(checked.failed.is_empty())
}

/// LLVM IR imported into our IR (the llvm dialect), to run in the interpreter.
pub(crate) fn import_llvm_ir(
    like: &ir::Module,
    llvm_ir: &str,
    fusion: &str,
) -> Result<ir::Module, String> {
    let text = codegen::import::llvm_ir_to_mlir(llvm_ir)
        .map_err(|e| format!("error: {e}\nnote: checking fusion '{fusion}'"))?;
    // Its locations are lines of the imported text, not of the input file: named so.
    let file = format!("<LLVM IR of {fusion}>");
    ir::parse_module_with(&text, &file, like.registry().clone()).map_err(|d| {
        format!(
            "{}\nnote: importing the LLVM IR of fusion '{fusion}'",
            d.render(&text)
        )
    })
}

/// The most array elements, parameters and outputs of a fusion together, that `--check`
/// takes on: the evaluator holds every element as a [`Value`] (16 bytes) and the
/// interpreter the laid-out buffers, each input once per seed: the largest model, a bf16
/// transpose of 2 x 50M elements (2^26.6), peaks at 1.16 GB resident, so 2^27 elements stay
/// under about 2 GB.
pub const HOST_ELEMENT_LIMIT: u128 = 1 << 27;

/// Refuses, before anything is allocated, a fusion too large for the host to `task` (what
/// the evaluator and interpreter are for: "check") on `seeds` inputs (each seed's buffers
/// are held together): an error at the fusion's computation rather than an allocation
/// failure that aborts.
pub(crate) fn fits_the_host(
    source: &SourceFile,
    computation: &hlo::Computation,
    task: &str,
    seeds: u64,
) -> Result<(), String> {
    // The interpreter keeps indices in fixed arrays (its hot loop).
    let too_deep = computation.instructions.iter().find_map(|i| {
        leaves(&i.shape)
            .iter()
            .find(|a| a.rank() > interp::MAX_RANK)
            .map(|a| (i, a.rank()))
    });
    if let Some((instr, rank)) = too_deep {
        return Err(hlo::Diagnostic::new(
            instr.spans.whole,
            format!(
                "unsupported: cannot {task} on the host: '{}' has rank {rank}, the interpreter takes ranks up to {}",
                instr.name,
                interp::MAX_RANK
            ),
        )
        .render(source));
    }
    // A dot's work is its result times its contracted size, which small arrays can make
    // hours: [4096,4096] x [4096,4096] is 2^36 multiply-adds in the evaluator and as many
    // steps in the interpreter.
    let heavy_dot = computation.instructions.iter().find_map(|i| {
        let work = dot_work(computation, i)?;
        (work > HOST_DOT_WORK_LIMIT).then_some((i, work))
    });
    if let Some((instr, work)) = heavy_dot {
        return Err(hlo::Diagnostic::new(
            instr.spans.whole,
            format!(
                "too large to {task} on the host: dot '{}' does {work} multiply-adds, limit {HOST_DOT_WORK_LIMIT}; use a smaller shape",
                instr.name
            ),
        )
        .render(source));
    }
    let shapes = computation
        .parameters()
        .into_iter()
        .chain(std::iter::once(computation.root))
        .map(|i| &computation.instruction(i).shape);
    let elements: u128 = shapes
        .flat_map(leaves)
        .map(|a| padded_elements(&a))
        .fold(0u128, u128::saturating_add)
        .saturating_mul(u128::from(seeds));
    // The evaluator also holds each instruction's value in turn.
    let largest = computation
        .instructions
        .iter()
        .flat_map(|i| leaves(&i.shape))
        .map(|a| padded_elements(&a))
        .max()
        .unwrap_or(0);
    if elements.max(largest) <= HOST_ELEMENT_LIMIT {
        return Ok(());
    }
    let elements = elements.max(largest);
    Err(hlo::Diagnostic::new(
        computation.span,
        format!(
            "too large to {task} on the host: fusion '{}' has {elements} elements (padding included) in its parameters and outputs (times {seeds} seeded input(s)) or in one instruction, limit {HOST_ELEMENT_LIMIT}; use a smaller shape or fewer inputs",
            computation.name
        ),
    )
    .render(source))
}

/// The most multiply-adds of one dot `--check` takes on (a few seconds in the evaluator,
/// under a minute in the interpreter).
pub const HOST_DOT_WORK_LIMIT: u128 = 1 << 28;

/// A dot's multiply-adds: its result's elements times the size of its contracted
/// dimensions, times 16 for complex results (`None` for other instructions).
fn dot_work(computation: &hlo::Computation, instr: &hlo::Instruction) -> Option<u128> {
    if instr.opcode != hlo::Opcode::Dot {
        return None;
    }
    let dims = hlo::dot::DotDimensions::of(instr)?;
    let lhs = computation
        .instruction(*instr.operands.first()?)
        .shape
        .as_array()?;
    let contracted = dims
        .lhs_contracting
        .iter()
        .map(|&d| u128::try_from(*lhs.dims.get(d)?).ok())
        .try_fold(1u128, |n, d| Some(n.saturating_mul(d?)))?;
    let result = instr.shape.as_array()?;
    let out = u128::try_from(result.element_count()).ok()?;
    // A complex step is four real products and four sums, and more ops again to take the
    // parts apart and put them together: it counts as 16 (2^24 c128 steps take about 70 s
    // in `--check`, as long as 2^28 real ones).
    let weight = if result.element_type.is_complex() {
        16
    } else {
        1
    };
    Some(out.saturating_mul(contracted).saturating_mul(weight))
}

/// The elements of `a`'s buffer, padding included (saturating: the verifier bounds them).
fn padded_elements(a: &ArrayShape) -> u128 {
    a.layout_or_default()
        .checked_padded_element_count(&a.dims)
        .map_or(u128::MAX, |n| n.max(0) as u128)
}

/// `a, 3 x b, a` from `a, b, b, b, a`: a fusion with 94 outputs of one shape reads as one.
pub(crate) fn runs_of_equal(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut runs: Vec<(String, usize)> = Vec::new();
    for item in items {
        match runs.last_mut() {
            Some((last, n)) if *last == item => *n += 1,
            _ => runs.push((item, 1)),
        }
    }
    runs.into_iter()
        .map(|(item, n)| {
            if n == 1 {
                item
            } else {
                format!("{n} x {item}")
            }
        })
        .collect()
}

/// The most elements one reduce of `computation` combines into one result element.
pub(crate) fn largest_reduction(computation: &hlo::Computation) -> u64 {
    let count = |shape: &Shape| {
        leaves(shape)
            .first()
            .map_or(1, |a| a.element_count().max(1))
    };
    computation
        .instructions
        .iter()
        .filter(|i| i.opcode == hlo::Opcode::Reduce)
        .map(|i| {
            let input = count(&computation.instruction(i.operands[0]).shape);
            (input / count(&i.shape)).max(1) as u64
        })
        .max()
        .unwrap_or(1)
}

/// Whether computation `id` reduces, itself or in the computations it calls or fuses.
fn reduces(module: &HloModule, id: ComputationId) -> bool {
    let mut stack = vec![id];
    let mut seen = std::collections::HashSet::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        for instr in &module.computation(id).instructions {
            match instr.opcode {
                hlo::Opcode::Reduce => return true,
                hlo::Opcode::Call => stack.extend(instr.called("to_apply").map(|c| c.id)),
                hlo::Opcode::Fusion => stack.extend(instr.called("calls").map(|c| c.id)),
                _ => {}
            }
        }
    }
    false
}

pub(crate) fn report(out: &mut dyn Write, line: std::fmt::Arguments) -> Result<(), String> {
    writeln!(out, "{line}").map_err(|e| format!("error: cannot write the check report: {e}"))
}

pub(crate) fn show(v: &Value) -> String {
    match v {
        Value::Pred(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:e}"),
        Value::Complex(re, im) => format!("({re:e}, {im:e})"),
    }
}

/// The arrays of a shape, nested tuples flattened (parameters and multi-output roots).
pub(crate) fn leaves(shape: &Shape) -> Vec<ArrayShape> {
    match shape {
        Shape::Array(a) => vec![a.clone()],
        Shape::Tuple(t) => t.iter().flat_map(leaves).collect(),
    }
}

/// The evaluator's result on the inputs of `seed`, and those inputs as buffers laid out as
/// the parameters' layouts say, followed by the output buffers: `0xff`-filled, or for an
/// output written in place (`in_place`: output, parameter), a copy of the parameter's.
pub(crate) fn make_case(
    source: &SourceFile,
    module: &HloModule,
    id: ComputationId,
    seed: u64,
    outputs: &[ArrayShape],
    in_place: &[(usize, usize)],
) -> Result<Case, String> {
    let computation = module.computation(id);
    let located = |d: hlo::Diagnostic| d.render(source);
    let args = fusion_arguments(module, id, seed).map_err(located)?;
    let expected = Reference::of(module, id, &args).map_err(located)?;
    let mut arguments = Vec::new();
    for (arg, p) in args.iter().zip(computation.parameters()) {
        let shapes = leaves(&computation.instruction(p).shape);
        for (array, shape) in host_leaves(arg).into_iter().zip(&shapes) {
            arguments.push(Buffer::from_host_array(array, shape.layout.as_ref())?);
        }
    }
    for (k, shape) in outputs.iter().enumerate() {
        // In-place outputs alias array parameters, whose leaf is their argument.
        let buffer = match in_place.iter().find(|&&(output, _)| output == k) {
            Some(&(_, param)) => arguments[param].clone(),
            None => unwritten_output(shape)?,
        };
        arguments.push(buffer);
    }
    Ok(Case {
        seed,
        arguments,
        expected,
    })
}

/// An output buffer of `shape` as laid out, every byte `0xff` (so that a write the kernel
/// misses shows).
pub(crate) fn unwritten_output(shape: &ArrayShape) -> Result<Buffer, String> {
    let any = random_array(shape, 0, hlo::evaluate::RandomRange::Between(0.0, 0.0))?;
    let laid_out = Buffer::from_host_array(&any, shape.layout.as_ref())?;
    Ok(Buffer::new(vec![0xff; laid_out.len()]))
}

#[cfg(test)]
mod tests {
    use super::compare::{delinearize, difference};
    use super::*;
    use hlo::PrimitiveType;

    #[test]
    fn floats_match_within_either_bound() {
        let t = Tolerance::for_type(PrimitiveType::BF16);
        assert_eq!(
            Tolerance::for_output(
                PrimitiveType::F32,
                Sensitivity {
                    reduced: 4096,
                    approximated: None
                }
            )
            .map(|t| t.rel),
            Some(64e-5)
        );
        let f = |x: f64| Value::Float(x);
        // 1 + 2^-8: within the relative bound.
        assert!(difference(&f(1.0 + 1.0 / 256.0), &f(1.0), t).3);
        // A small result off by less than one unit at 1.0: within the absolute bound.
        assert!(difference(&f(0.004), &f(0.001), t).3);
        assert!(!difference(&f(1.5), &f(1.0), t).3);
        assert!(difference(&f(f64::NAN), &f(f64::NAN), t).3);
        assert!(!difference(&f(f64::NAN), &f(1.0), t).3);
        assert!(!difference(&f(f64::INFINITY), &f(f64::NEG_INFINITY), t).3);
    }

    /// Locations in imported LLVM IR are lines of the imported text: its module is named
    /// for that, never for the input file (whose lines they are not).
    #[test]
    fn imported_llvm_ir_is_named_as_such() {
        let like = ir::parse_module_with("module {}", "input.hlo", ir::Registry::standard())
            .expect("an empty module");
        let llvm_ir = "define void @k() {\n  ret void\n}\n";
        let imported = import_llvm_ir(&like, llvm_ir, "fused_r").expect("imports");
        assert_eq!(&*imported.file, "<LLVM IR of fused_r>");
    }

    #[test]
    fn integers_match_exactly() {
        assert!(difference(&Value::Int(3), &Value::Int(3), None).3);
        assert!(!difference(&Value::Int(3), &Value::Int(4), None).3);
        assert!(!difference(&Value::Pred(true), &Value::Pred(false), None).3);
    }

    #[test]
    fn delinearize_is_row_major() {
        assert_eq!(delinearize(&[2, 3, 4], 23), vec![1, 2, 3]);
        assert_eq!(delinearize(&[2, 3, 4], 4), vec![0, 1, 0]);
        assert_eq!(delinearize(&[], 0), Vec::<i64>::new());
    }

    #[test]
    fn equal_neighbours_are_counted() {
        let items = ["a", "b", "b", "b", "a"].map(String::from);
        assert_eq!(runs_of_equal(items.into_iter()), ["a", "3 x b", "a"]);
    }
}
