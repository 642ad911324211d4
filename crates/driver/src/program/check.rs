//! `--check` of a whole program: its kernels in launch order against the evaluator.

use std::io::Write;

use hlo::evaluate::{HostValue, evaluate_instruction, fusion_arguments};
use hlo::{HloModule, SourceFile};
use interp::{Buffer, Kernel, Launch};

use super::control::{self, Held, Runner};
use super::{Chain, HostStep, Init, filled, kernel_name, plan_checked_chain};
use crate::check::{
    Comparison, Reference, Sensitivity, compare_array, fits_the_host, show, show_index,
    unwritten_output,
};
use crate::pipeline::CompiledKernel;

/// `--check` on a whole program: the kernels of `module` run in launch order in the
/// interpreter, each reading the buffers earlier ones wrote, from the module a user runs
/// (`linked`: every kernel of `kernels` linked into one module, translated to LLVM IR and
/// optimized at O3 with libdevice, in the run that `--check` checked stage by stage: what
/// becomes PTX); the ENTRY's results are compared with the evaluator's on `reference` (the
/// module before the fusion pipeline, or `module` itself). This checks what a per-fusion
/// check cannot: the fusion pipeline, and that the kernels pass their buffers as the ENTRY
/// says. `Ok(true)` when it matches or when the ENTRY is not a chain of fusions (then
/// nothing is run, and the report says why, unless the module is a single fusion as in
/// XLA's emitter tests: the fusion's own check is the program's). `inputs` seeded inputs.
pub fn check_program(
    source: &SourceFile,
    (reference, module): (&HloModule, &HloModule),
    (kernels, linked): (&[CompiledKernel], Option<&ir::Module>),
    inputs: u64,
    out: &mut dyn Write,
) -> Result<bool, String> {
    let not_run = |out: &mut dyn Write, why: &str| {
        writeln!(out, "check: program: not run as a whole: {why}")
            .map_err(|e| format!("error: cannot write the report: {e}"))
    };
    // A program with a loop or a conditional is no chain: it runs as the runtime runs it.
    let chain = if control::has_control_flow(module) {
        None
    } else {
        match plan_checked_chain(source, module) {
            Ok(chain) => Some(chain),
            // What the program's buffers cannot hold (an f8 parameter to draw): the
            // fusions' own checks stand, as for a module that is not a chain of fusions.
            Err(why) => {
                // A note, not an error: the located reason without its `error:` tag.
                not_run(out, &why.replacen(": error: ", ": ", 1))?;
                return Ok(true);
            }
        }
    };
    if let Some(chain) = &chain
        && chain.separate
    {
        // Without a note the module is its one fusion, which the fusion check has run.
        if let Some(why) = &chain.note {
            not_run(out, why)?;
        }
        return Ok(true);
    }
    let Some(linked) = linked else {
        not_run(
            out,
            "the pass pipeline does not reach LLVM (it ends before 'lower-to-llvm')",
        )?;
        return Ok(true);
    };
    let Some(chain) = chain else {
        return check_with_control_flow(
            source,
            (reference, module),
            (kernels, linked),
            inputs,
            out,
        );
    };
    let entry = reference.computation(reference.entry);
    fits_the_host(source, entry, "check", inputs)?;
    let names = super::launch::compiled_names(module, kernels);
    let mut launches = Vec::new();
    for kernel in &chain.kernels {
        let name = kernel_name(module, &names, kernel.fusion)?;
        let compiled = kernels
            .iter()
            .find(|k| &k.kernel == name)
            .ok_or_else(|| format!("error: kernel {name} was not compiled"))?;
        let launch = Launch {
            blocks: compiled.launch.blocks,
            threads: compiled.launch.threads_per_block,
        };
        let code = Kernel::compile(linked, name).map_err(|e| format!("error: {name}: {e}"))?;
        launches.push((name, launch, code, compiled.in_place.clone()));
    }
    let sensitivity = chain
        .results
        .iter()
        .map(|&b| chain.buffers[b].sensitivity)
        .fold(Sensitivity::NONE, Sensitivity::join);
    let mut c = Comparison::new();
    for seed in 0..inputs {
        let located = |d: hlo::Diagnostic| d.render(source);
        let args = fusion_arguments(reference, reference.entry, seed).map_err(located)?;
        let expected = Reference::of(reference, reference.entry, &args).map_err(located)?;
        let mut buffers: Vec<Option<Buffer>> = chain.buffers.iter().map(|_| None).collect();
        if args.len() != chain.parameters.len() {
            return Err(format!(
                "error: the fused ENTRY has {} parameters, the unfused one {}",
                chain.parameters.len(),
                args.len()
            ));
        }
        for (b, buffer) in chain.buffers.iter().enumerate() {
            if let Init::Constant(v) = buffer.init {
                let array = filled(&buffer.shape, v)?;
                buffers[b] = Some(Buffer::from_host_array(
                    &array,
                    buffer.shape.layout.as_ref(),
                )?);
            }
        }
        for (arg, &b) in args.iter().zip(&chain.parameters) {
            let HostValue::Array(array) = arg else {
                return Err("error: a tuple parameter in a launch sequence".to_string());
            };
            buffers[b] = Some(Buffer::from_host_array(
                array,
                chain.buffers[b].shape.layout.as_ref(),
            )?);
        }
        for (k, step) in launches
            .iter()
            .enumerate()
            .map(Some)
            .chain([None])
            .enumerate()
        {
            for host in chain.host_steps.iter().filter(|h| h.after == k) {
                run_host_step(source, module, &chain, host, &mut buffers)?;
            }
            let Some((kernel, (name, launch, code, in_place))) =
                step.map(|(k, launch)| (&chain.kernels[k], launch))
            else {
                continue;
            };
            let mut arguments = Vec::new();
            for &b in &kernel.arguments {
                let buffer = buffers[b].clone().ok_or_else(|| {
                    format!("error: kernel {name} reads buffer {b} before it is written")
                })?;
                arguments.push(buffer);
            }
            for (k, &b) in kernel.outputs.iter().enumerate() {
                // An output written in place starts as a copy of its parameter's buffer.
                let buffer = match in_place.iter().find(|&&(output, _)| output == k) {
                    Some(&(_, param)) => arguments[param].clone(),
                    None => unwritten_output(&chain.buffers[b].shape)?,
                };
                arguments.push(buffer);
            }
            let run = code
                .run(*launch, arguments)
                .map_err(|e| format!("error: kernel {name} fails in the interpreter: {e}"))?;
            c.ops += run.ops;
            let first_output = run.buffers.len() - kernel.outputs.len();
            for (&b, buffer) in kernel.outputs.iter().zip(&run.buffers[first_output..]) {
                buffers[b] = Some(buffer.clone());
            }
        }
        for (k, (&b, want)) in chain.results.iter().zip(&expected.values).enumerate() {
            let got = buffers[b]
                .as_ref()
                .ok_or_else(|| format!("error: result {k} is never written"))?
                .to_host_array(&chain.buffers[b].shape)
                .map_err(|m| format!("result {k}: {m}"))?;
            compare_array(
                &mut c,
                (seed, k),
                sensitivity,
                &got,
                want,
                expected.slack(k),
            );
        }
    }
    let against = against(reference);
    let mut launches = match chain.kernels.len() {
        1 => "1 kernel launch".to_string(),
        n => format!("{n} kernel launches in order"),
    };
    match chain.host_steps.len() {
        0 => {}
        1 => launches.push_str(" and 1 instruction evaluated on the host"),
        n => launches.push_str(&format!(" and {n} instructions evaluated on the host")),
    }
    let head = format!("check: program: {launches}, the linked module after O3, against {against}");
    report_program(out, &head, &c, |k| {
        Some(chain.buffers[chain.results[k]].name.clone())
    })
}

/// What the program's results are compared with: the evaluator on the module as written,
/// before the fusion pipeline's passes, which it checks too (a sort split into merge
/// kernels, a sort handed to CUB, a top-k rewritten are compared with what was written):
/// an unfused program, or the ENTRY of one fused already.
fn against(reference: &HloModule) -> &'static str {
    if fusion::wants_fusion(reference) {
        "the evaluator on the unfused module"
    } else {
        "the evaluator on the ENTRY"
    }
}

/// Reports a whole program's comparison under `head`: `ok`, or `MISMATCH` and the first
/// element out of bounds, in the result `name` names (its buffer's name, where it has one).
fn report_program(
    out: &mut dyn Write,
    head: &str,
    c: &Comparison,
    name: impl Fn(usize) -> Option<String>,
) -> Result<bool, String> {
    let report = |out: &mut dyn Write, line: String| {
        writeln!(out, "{line}").map_err(|e| format!("error: cannot write the report: {e}"))
    };
    let summary = c.summary();
    let Some(m) = &c.mismatch else {
        report(out, format!("{head}: {summary}: ok"))?;
        return Ok(true);
    };
    report(out, format!("{head}: {summary}: MISMATCH"))?;
    let named = name(m.output)
        .map(|n| format!(" ('{n}')"))
        .unwrap_or_default();
    report(
        out,
        format!(
            "error: the program's result {}{named} element [{}], input seed {}: got {}, expected {}",
            m.output,
            show_index(&m.index),
            m.seed,
            show(&m.got),
            show(&m.want)
        ),
    )?;
    Ok(false)
}

/// Runs a [`HostStep`] in the evaluator on the buffers it reads, as the runtime would run
/// it between the kernels.
fn run_host_step(
    source: &SourceFile,
    module: &HloModule,
    chain: &Chain,
    step: &HostStep,
    buffers: &mut [Option<Buffer>],
) -> Result<(), String> {
    let mut operands = Vec::new();
    for &b in &step.arguments {
        let buffer = buffers[b]
            .as_ref()
            .ok_or_else(|| format!("error: buffer {b} is read before it is written"))?;
        operands.push(HostValue::Array(
            buffer.to_host_array(&chain.buffers[b].shape)?,
        ));
    }
    let value = evaluate_instruction(module, module.entry, step.instruction, &operands)
        .map_err(|d| d.render(source))?;
    let arrays = match value {
        HostValue::Array(array) => vec![array],
        HostValue::Tuple(elements) => elements
            .into_iter()
            .map(|e| match e {
                HostValue::Array(array) => Ok(array),
                HostValue::Tuple(_) => {
                    Err("error: a nested tuple computed on the host".to_string())
                }
            })
            .collect::<Result<_, _>>()?,
    };
    if arrays.len() != step.outputs.len() {
        return Err("error: a host step's result does not match its buffers".to_string());
    }
    for (array, &b) in arrays.iter().zip(&step.outputs) {
        let layout = chain.buffers[b].shape.layout.as_ref();
        buffers[b] = Some(Buffer::from_host_array(array, layout)?);
    }
    Ok(())
}

/// [`check_program`] for a module with a `while` or a `conditional`: the fused module run
/// as the runtime runs it ([`Runner`]: kernels launched, loops looped on the host), its
/// results against the evaluator's on `reference`.
fn check_with_control_flow(
    source: &SourceFile,
    (reference, module): (&HloModule, &HloModule),
    (kernels, linked): (&[CompiledKernel], &ir::Module),
    inputs: u64,
    out: &mut dyn Write,
) -> Result<bool, String> {
    let entry = reference.computation(reference.entry);
    fits_the_host(source, entry, "check", inputs)?;
    let sensitivity = emitters::fusions(module)
        .into_iter()
        .map(|id| Sensitivity::of(module.computation(id)))
        .fold(Sensitivity::NONE, Sensitivity::join);
    let mut runner = Runner::new(source, module, (kernels, linked));
    let mut c = Comparison::new();
    for seed in 0..inputs {
        let located = |d: hlo::Diagnostic| d.render(source);
        let args = fusion_arguments(reference, reference.entry, seed).map_err(located)?;
        let expected = Reference::of(reference, reference.entry, &args).map_err(located)?;
        let fused_entry = module.computation(module.entry);
        let held = args
            .iter()
            .zip(fused_entry.parameters())
            .map(|(arg, p)| Held::of_host(arg, &fused_entry.instruction(p).shape))
            .collect::<Result<Vec<_>, _>>()?;
        let results = runner.run(module.entry, &held)?.leaves()?;
        for (k, (got, want)) in results.iter().zip(&expected.values).enumerate() {
            compare_array(&mut c, (seed, k), sensitivity, got, want, expected.slack(k));
        }
    }
    let counts = &runner.counts;
    let against = against(reference);
    let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let head = format!(
        "check: program: {}, {} and {} in the interpreter, the linked module after O3, against {against}",
        count(counts.launches, "kernel launch", "kernel launches"),
        count(counts.iterations, "loop iteration", "loop iterations"),
        count(
            counts.host,
            "instruction on the host",
            "instructions on the host"
        ),
    );
    report_program(out, &head, &c, |_| None)
}
