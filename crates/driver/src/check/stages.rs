//! `--check` as an observer of the one pipeline run ([`crate::runner`]): each fusion's
//! module after the emitter and after each pass, and each kernel of the linked module after
//! translation and after O3 (the module the NVPTX backend compiles), run in the interpreter
//! on the thread pool as soon as the runner makes it; the verdicts are reported in stage
//! order once the run is over.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};

use hlo::{ArrayShape, ComputationId, HloModule, SourceFile};
use interp::{Kernel, Launch};
use passes::Pass;

use super::compare::{Comparison, compare_stage};
use super::{
    Case, CheckOptions, Sensitivity, Tolerance, fits_the_host, import_llvm_ir, leaves, make_case,
    report, runs_of_equal, show, show_index,
};
use crate::pipeline::{CompiledKernel, Options, Stage};
use crate::runner::{Chain, Observer, Observers, Output, Runner, StageDone};

/// A stage's comparison, or why its module could not run.
type Verdict = Result<Comparison, String>;

/// What [`check_fusions`] found.
pub(crate) struct Checked {
    /// The fusions whose check failed (reported), each with the index of its first stage
    /// that failed (the emitter's is 0).
    pub failed: Vec<(String, usize)>,
    /// The kernels of the run.
    pub kernels: Vec<CompiledKernel>,
    /// The linked module after O3, imported into the llvm dialect: what became PTX. `None`
    /// when the passes do not end in `lower-to-llvm`.
    pub linked: Option<Arc<ir::Module>>,
}

/// Checks `fusions` of `module` in one pipeline run with `passes` (a stage after each; the
/// LLVM stages too when they end in `lower-to-llvm`) and `observers` beside the check; the
/// report goes to `out`. `Err` when the run fails (after reporting what was checked).
pub(crate) fn check_fusions(
    source: &SourceFile,
    module: &HloModule,
    fusions: &[ComputationId],
    passes: Vec<Box<dyn Pass>>,
    options: &CheckOptions,
    observers: Observers,
    out: &mut dyn Write,
) -> Result<Checked, String> {
    let stop_at = match passes.last().map(|p| p.name()) {
        None => Stage::XlaGpu,
        // Down to PTX: the O3 module checked is the one the backend compiles.
        Some("lower-to-llvm") => Stage::Ptx,
        Some(_) => Stage::Passes,
    };
    let run_options = Options {
        stop_at,
        arch: options.arch.clone(),
        choices: options.choices,
        passes: Vec::new(),
        ..Options::default()
    };
    let (sender, verdicts) = mpsc::channel();
    let (run, checks, linked) = rayon::in_place_scope(|scope| {
        let mut checker = Checker {
            source,
            module,
            fusions,
            inputs: options.inputs,
            scope,
            verdicts: sender,
            checks: Vec::new(),
            linked: None,
        };
        let run = Runner::new(source, &run_options).and_then(|runner| {
            let mut runner = runner
                .with_passes(passes)
                .with_optimizer(options.optimize.clone());
            let mut both = Chain {
                first: &mut checker,
                rest: observers,
            };
            runner.compile(module, fusions, &mut [&mut both])
        });
        (run, checker.checks, checker.linked)
        // The scope waits here for every stage being interpreted.
    });
    let mut received: HashMap<(usize, usize), Verdict> = verdicts
        .try_iter()
        .map(|(f, k, verdict)| ((f, k), verdict))
        .collect();
    let mut failed = Vec::new();
    for (f, check) in checks.iter().enumerate() {
        // After a failed run, the last fusion's stages stop where the run did.
        let complete = run.is_ok() || f + 1 < checks.len();
        if !check.report(out, (options, complete), |k| received.remove(&(f, k)))? {
            let stage = check.first_failure.load(Ordering::Relaxed);
            failed.push((check.checker.name.clone(), stage));
        }
    }
    let compiled = run?;
    Ok(Checked {
        failed,
        kernels: compiled.kernels,
        linked,
    })
}

/// Replays `--check`'s verdict on one pass, from a crash reproducer (`hlo-opt
/// --run-reproducer`): fusion `fusion` of `module` is emitted for `options.arch` (for its
/// launch and its outputs written in place, as in the run), then the pass's input `before`
/// and its output `after` run in the interpreter against the evaluator, reported as
/// `--check` reports stages. `Ok(false)` when either differs (reported).
pub fn check_pass_replay(
    source: &SourceFile,
    module: &HloModule,
    fusion: &str,
    (pass, before, after): (&str, &ir::Module, &ir::Module),
    options: &CheckOptions,
    out: &mut dyn Write,
) -> Result<bool, String> {
    let id = module
        .computations
        .iter()
        .position(|c| c.name == fusion)
        .map(ComputationId)
        .ok_or_else(|| format!("error: the reproducer's HLO has no fusion '{fusion}'"))?;
    codegen::ptx::check_arch(&options.arch).map_err(|e| format!("error: {e}"))?;
    let emitted = emitters::emit_fusion_for(
        module,
        id,
        crate::pipeline::target(&options.arch, options.choices),
    )
    .map_err(|d| module.with_call_stack(d).render(source))?;
    let launch = (&emitted.kernel.launch, &emitted.kernel.in_place[..]);
    let checker = StageChecker::new(source, module, id, launch, options.inputs)?;
    checker.report_head(out, options.inputs)?;
    let mut previous = None;
    let input_matches = checker.report(
        out,
        (0, "input"),
        checker.run(before, "main"),
        &mut previous,
    )?;
    if !input_matches {
        report(
            out,
            format_args!(
                "error: the reproducer's input already differs from the evaluator: the pass is not what changed the result"
            ),
        )?;
        return Ok(false);
    }
    checker.report(out, (1, pass), checker.run(after, "main"), &mut previous)
}

/// The check's observer: starts each fusion's check at its emitter stage and hands every
/// later stage to the thread pool.
struct Checker<'r, 's, 'scope> {
    source: &'r SourceFile,
    module: &'r HloModule,
    /// The fusions of the run, in the order the runner compiles them.
    fusions: &'r [ComputationId],
    inputs: u64,
    scope: &'s rayon::Scope<'scope>,
    verdicts: mpsc::Sender<(usize, usize, Verdict)>,
    checks: Vec<FusionCheck>,
    linked: Option<Arc<ir::Module>>,
}

/// One fusion's check so far.
struct FusionCheck {
    checker: Arc<StageChecker>,
    /// Each stage in order: its name, and whether it left the IR unchanged (then it is not
    /// run again: the interpreter is deterministic).
    stages: Vec<(String, bool)>,
    /// The module after the last stage, printed (to see whether the next one changes it).
    text: String,
    /// The last of our passes seen.
    last_pass: String,
    /// The kernel's name in the linked module.
    kernel: String,
    /// The first stage that failed; later ones that have not started are skipped.
    first_failure: Arc<AtomicUsize>,
}

impl Observer for Checker<'_, '_, '_> {
    fn after(&mut self, stage: &StageDone, output: Output<'_>) -> Result<(), String> {
        match (output, stage.kernel) {
            (Output::Ir(ir), Some(kernel)) if stage.name == "emit" => self.start(kernel, ir),
            (Output::Ir(ir), Some(_)) => {
                let f = self.checks.len() - 1;
                let check = &mut self.checks[f];
                let after = ir.print_generic();
                let changed = after != check.text;
                check.text = after;
                check.last_pass = stage.name.to_string();
                check.stages.push((stage.name.to_string(), !changed));
                if changed {
                    self.interpret(f, Arc::new(ir.clone()), "main".to_string());
                }
                Ok(())
            }
            (Output::Text(llvm_ir), None) if matches!(stage.name, "translate" | "llvm-opt") => {
                let mut like = ir::Module::new();
                like.file = self.source.name.as_str().into();
                let linked = Arc::new(import_llvm_ir(&like, llvm_ir, "(every kernel, linked)")?);
                for f in 0..self.checks.len() {
                    let check = &mut self.checks[f];
                    check.stages.push((stage.name.to_string(), false));
                    let kernel = check.kernel.clone();
                    self.interpret(f, linked.clone(), kernel);
                }
                if stage.name == "llvm-opt" {
                    self.linked = Some(linked);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl Checker<'_, '_, '_> {
    /// Starts the check of the next fusion, whose emitter made `ir` for `kernel`: draws the
    /// inputs and evaluates them, then runs the emitter's stage.
    fn start(&mut self, kernel: &CompiledKernel, ir: &ir::Module) -> Result<(), String> {
        let id = *self
            .fusions
            .get(self.checks.len())
            .ok_or("error: the run compiled more fusions than the check was given")?;
        let emitted = (&kernel.launch, &kernel.in_place[..]);
        let checker = StageChecker::new(self.source, self.module, id, emitted, self.inputs)?;
        self.checks.push(FusionCheck {
            checker: Arc::new(checker),
            stages: vec![("emit".to_string(), false)],
            text: ir.print_generic(),
            last_pass: String::new(),
            kernel: kernel.kernel.clone(),
            first_failure: Arc::new(AtomicUsize::new(usize::MAX)),
        });
        self.interpret(
            self.checks.len() - 1,
            Arc::new(ir.clone()),
            "main".to_string(),
        );
        Ok(())
    }

    /// Runs the last stage of fusion `f` (its kernel `entry` in `ir`) on the thread pool,
    /// unless an earlier stage of it has failed.
    fn interpret(&self, f: usize, ir: Arc<ir::Module>, entry: String) {
        let check = &self.checks[f];
        let k = check.stages.len() - 1;
        let checker = check.checker.clone();
        let first_failure = check.first_failure.clone();
        let verdicts = self.verdicts.clone();
        self.scope.spawn(move |_| {
            if k > first_failure.load(Ordering::Relaxed) {
                return;
            }
            let verdict = checker.run(&ir, &entry);
            if !verdict.as_ref().is_ok_and(Comparison::passes) {
                first_failure.fetch_min(k, Ordering::Relaxed);
            }
            // The receiver outlives the scope.
            let _ = verdicts.send((f, k, verdict));
        });
    }
}

impl FusionCheck {
    /// Reports the check stage by stage (`verdict(k)`: stage `k`'s, when it ran), and that
    /// every stage matched when the fusion went through the whole run (`complete`);
    /// `Ok(false)` after a mismatch or an interpreter error (both reported).
    fn report(
        &self,
        out: &mut dyn Write,
        (options, complete): (&CheckOptions, bool),
        mut verdict: impl FnMut(usize) -> Option<Verdict>,
    ) -> Result<bool, String> {
        let checker = &self.checker;
        checker.report_head(out, options.inputs)?;
        // The last stage that matched, to blame the first one that does not.
        let mut previous = None;
        let mut last_match: Option<Comparison> = None;
        for (k, (stage, unchanged)) in self.stages.iter().enumerate() {
            let compared = if *unchanged {
                let mut same = last_match.clone().expect("the emitter's stage always runs");
                same.unchanged = true;
                Ok(same)
            } else {
                verdict(k).ok_or_else(|| format!("stage {k} ({stage}) was not run"))?
            };
            if let Ok(c) = &compared {
                last_match = Some(c.clone());
                if options.stage_times && !c.unchanged {
                    let elements: f64 = checker
                        .outputs
                        .iter()
                        .map(|s| s.element_count() as f64)
                        .sum();
                    report_time(out, (k, stage), c, elements * options.inputs as f64)?;
                }
            }
            if !checker.report(out, (k, stage), compared, &mut previous)? {
                return Ok(false);
            }
        }
        if !complete {
            return Ok(true);
        }
        report(
            out,
            format_args!(
                "check: fusion '{}': every stage matches the evaluator",
                checker.name
            ),
        )?;
        Ok(true)
    }
}

/// The `time:` line of stage `k`: the interpreter's seconds, instructions and throughput
/// (`elements`: output elements over every case).
fn report_time(
    out: &mut dyn Write,
    (k, stage): (usize, &str),
    c: &Comparison,
    elements: f64,
) -> Result<(), String> {
    report(
        out,
        format_args!(
            "time:  [{k:2}] {stage:<22} {:7.2} s, {:.3e} ops, {:.2e} ops/s, {:.2e} output elements/s",
            c.seconds,
            c.ops as f64,
            c.ops as f64 / c.seconds,
            elements / c.seconds
        ),
    )
}

/// Runs each stage's module and compares it with the evaluator (shared by the workers);
/// reports one line per stage.
struct StageChecker {
    name: String,
    launch: Launch,
    cases: Vec<Case>,
    outputs: Vec<ArrayShape>,
    /// Outputs written in place: only some of their elements are written, any number of
    /// times (a scatter's atomic updates).
    in_place: Vec<usize>,
    sensitivity: Sensitivity,
}

impl StageChecker {
    /// The check of fusion `id` of `module`, emitted with `launch` and `in_place` outputs
    /// (`(output, parameter)`), on `inputs` seeded inputs drawn and evaluated here.
    fn new(
        source: &SourceFile,
        module: &HloModule,
        id: ComputationId,
        (launch, in_place): (&emitters::LaunchDimensions, &[(usize, usize)]),
        inputs: u64,
    ) -> Result<StageChecker, String> {
        let computation = module.computation(id);
        fits_the_host(source, computation, "check", inputs)?;
        let outputs = leaves(&computation.instruction(computation.root).shape);
        let cases = (0..inputs)
            .map(|seed| make_case(source, module, id, seed, &outputs, in_place))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(StageChecker {
            name: computation.name.clone(),
            launch: Launch {
                blocks: launch.blocks,
                threads: launch.threads_per_block,
            },
            cases,
            in_place: in_place.iter().map(|&(output, _)| output).collect(),
            outputs,
            sensitivity: Sensitivity::of(computation),
        })
    }

    /// Compiles and runs kernel `entry` of a stage's module on every case (on a worker
    /// thread).
    fn run(&self, ir: &ir::Module, entry: &str) -> Verdict {
        let start = std::time::Instant::now();
        let mut verdict = Kernel::compile(ir, entry)
            .map_err(|e| e.to_string())
            .and_then(|kernel| {
                let outputs = (&self.outputs[..], &self.in_place[..]);
                compare_stage(&kernel, self.launch, &self.cases, outputs, self.sensitivity)
            });
        if let Ok(c) = &mut verdict {
            c.seconds = start.elapsed().as_secs_f64();
        }
        verdict
    }

    /// The lines before the stages: the inputs, the outputs, the grid, and the factors of
    /// the float bounds.
    fn report_head(&self, out: &mut dyn Write, inputs: u64) -> Result<(), String> {
        let types = runs_of_equal(self.outputs.iter().map(|s| s.to_string()));
        let seeds = match inputs {
            1 => "1 seeded input (seed 0)".to_string(),
            n => format!("{n} seeded inputs (seeds 0..{})", n - 1),
        };
        report(
            out,
            format_args!(
                "check: fusion '{}': {seeds}, outputs {}, grid {} x {} threads",
                self.name,
                types.join(", "),
                self.launch.blocks,
                self.launch.threads
            ),
        )?;
        if let Some(ty) = self.sensitivity.approximated {
            let loosened: Vec<String> = self
                .outputs
                .iter()
                .map(|o| o.element_type)
                .filter(|&o| {
                    let rel = |t| Tolerance::for_type(t).map_or(0.0, |b| b.rel);
                    rel(o) > 0.0 && rel(o) < rel(ty)
                })
                .map(|o| o.to_string())
                .collect();
            if !loosened.is_empty() {
                report(
                    out,
                    format_args!(
                        "check: float bounds: {} outputs get {ty}'s bound (computed from functions kernels approximate in {ty}: libdevice, complex formulas)",
                        loosened.join(", ")
                    ),
                )?;
            }
        }
        let reduced = self.sensitivity.reduced;
        if reduced > 1 {
            report(
                out,
                format_args!(
                    "check: float bounds: relative x {:.1}, absolute x {reduced} (a reduce combines {reduced} elements into one); an element after a float sum may also differ by twice what it moves when the sums are pushed by their rounding bounds",
                    (reduced as f64).sqrt()
                ),
            )?;
        }
        Ok(())
    }

    /// Reports stage `k`'s verdict; `Ok(false)` after a mismatch or an interpreter error
    /// (both reported).
    fn report<'n>(
        &self,
        out: &mut dyn Write,
        (k, stage): (usize, &'n str),
        compared: Verdict,
        previous: &mut Option<&'n str>,
    ) -> Result<bool, String> {
        let label = format!("[{k:2}] {stage}");
        let c = match compared {
            Ok(c) => c,
            Err(e) => {
                report(out, format_args!("check: {label:<28} INTERPRETER ERROR"))?;
                report(
                    out,
                    format_args!(
                        "error: {} the kernel fails in the interpreter: {e}",
                        blame(stage, *previous)
                    ),
                )?;
                return Ok(false);
            }
        };
        let summary = c.summary();
        if let Some(what) = &c.not_written_once {
            report(out, format_args!("check: {label:<28} NOT WRITTEN ONCE"))?;
            report(
                out,
                format_args!(
                    "error: {} the writes of fusion '{}': {what}",
                    blame(stage, *previous),
                    self.name
                ),
            )?;
            return Ok(false);
        }
        let Some(m) = c.mismatch else {
            let unchanged = if c.unchanged {
                " (IR unchanged: not run again)"
            } else {
                ""
            };
            report(
                out,
                format_args!("check: {label:<28} {summary}: ok{unchanged}"),
            )?;
            *previous = Some(stage);
            return Ok(true);
        };
        report(out, format_args!("check: {label:<28} {summary}: MISMATCH"))?;
        let bound =
            match Tolerance::for_output(self.outputs[m.output].element_type, self.sensitivity) {
                Some(t) => format!("bound: absolute {:e} or relative {:e}", t.abs, t.rel),
                None => "bound: exact".to_string(),
            };
        report(
            out,
            format_args!(
                "error: {} the result of fusion '{}': output {} element [{}] (linear {}), input seed {}: got {}, expected {} ({bound})",
                blame(stage, *previous),
                self.name,
                m.output,
                show_index(&m.index),
                m.linear,
                m.seed,
                show(&m.got),
                show(&m.want)
            ),
        )?;
        Ok(false)
    }
}

/// Who changed the result: the first stage, or a pass (or an LLVM stage: the translation
/// to LLVM IR, O3) after stages that matched.
fn blame(stage: &str, previous: Option<&str>) -> String {
    let what = match stage {
        "translate" => "the translation to LLVM IR ('translate')".to_string(),
        "llvm-opt" => "LLVM's O3 with libdevice ('llvm-opt')".to_string(),
        pass => format!("pass '{pass}'"),
    };
    match previous {
        None => "the emitter's IR (before any pass) computes".to_string(),
        Some(p) => format!("{what} changed (after '{p}' it matched)"),
    }
}
