//! XLA's reduction corpus (`../shared/xla-corpus/{reduce_row,reduce_column,
//! reduce_column_small,reduce_multirow}`) through the reduction emitters: each file must be
//! emitted by the reduction emitter (IR our verifier accepts), compile to PTX that `ptxas`
//! assembles without spills, and compute in the interpreter — on the emitted IR and after
//! every pass before `lower-to-llvm` — exactly what the evaluator computes. The files that
//! do not get that far are listed with the reason; docs/tests.md repeats the list.
//!
//! Inputs are the evaluator's seeded random ones, with two changes that make the comparison
//! exact and meaningful (the kernels reduce in another order than the evaluator):
//!
//! * floats are rounded to multiples of 1/8: with the evaluator's range [-2, 2], every partial
//!   sum of the corpus's reductions (at most 2^21 elements) is a multiple of 1/8 below 2^22,
//!   exact in f32 and f64, and the f16 sums of 64 elements stay below 2^7, exact in f16 —
//!   so any summation order gives the evaluator's bits;
//! * a parameter used as a reduce's init value gets the reducer's identity (0 for `add`, 1
//!   for `multiply`), as XLA's test inputs do: HLO leaves a reduce whose init is not an
//!   identity unspecified, and the kernels apply the init once per thread.

use std::path::Path;

use crate::common;
use driver::check::checked_passes;
use driver::pipeline::Options;
use hlo::evaluate::{HostArray, HostValue, evaluate_fusion, random_arguments, random_array};
use hlo::{ArrayShape, Computation, HloModule, InstrId, Opcode, Shape};
use interp::{Buffer, Kernel, Launch};
use passes::{PassManager, Timings};

/// Files that do not pass every step, and why.
const NOT_PASSING: &[(&str, &str)] = &[
    ("f32_32_v2.hlo", "too large for the interpreter"),
    ("odd_sizes.hlo", "too large for the interpreter"),
];

/// Inputs with more elements take minutes in the interpreter.
const MAX_INTERPRETED_ELEMENTS: i64 = 1 << 21;

fn leaves(shape: &Shape) -> Vec<ArrayShape> {
    match shape {
        Shape::Array(a) => vec![a.clone()],
        Shape::Tuple(t) => t.iter().flat_map(leaves).collect(),
    }
}

/// The identity of `reducer` when it is a plain `add` or `multiply`.
fn identity(module: &HloModule, reducer: hlo::ComputationId) -> Option<f64> {
    match module.computation(reducer).root_instruction().opcode {
        Opcode::Add => Some(0.0),
        Opcode::Multiply => Some(1.0),
        _ => None,
    }
}

/// The identity for each parameter that is a reduce's init value.
fn init_identities(module: &HloModule, c: &Computation) -> Vec<(InstrId, f64)> {
    let mut out = Vec::new();
    for instr in &c.instructions {
        if instr.opcode != Opcode::Reduce {
            continue;
        }
        let Some(reducer) = instr.called("to_apply").map(|r| r.id) else {
            continue;
        };
        let arity = instr.operands.len() / 2;
        for &init in &instr.operands[arity..] {
            if c.instruction(init).opcode == Opcode::Parameter
                && let Some(v) = identity(module, reducer)
            {
                out.push((init, v));
            }
        }
    }
    out
}

fn quantized(a: &HostArray) -> HostArray {
    let mut literal = a.to_literal();
    for v in &mut literal.values {
        if let hlo::Value::Float(f) = v {
            *f = (*f * 8.0).round() / 8.0;
        }
    }
    HostArray::from_literal(&literal, a.element_type()).unwrap()
}

/// Runs the interpreter on `ir` and compares every output element with `expected`.
fn interpret(
    ir: &ir::Module,
    launch: Launch,
    arguments: &[Buffer],
    outputs: &[ArrayShape],
    expected: &[HostArray],
) -> Result<(), String> {
    let kernel = Kernel::compile(ir, "main").map_err(|e| e.to_string())?;
    let run = kernel
        .run(launch, arguments.to_vec())
        .map_err(|e| e.to_string())?;
    let first_output = arguments.len() - outputs.len();
    for (k, (shape, want)) in outputs.iter().zip(expected).enumerate() {
        let got = run.buffers[first_output + k].to_host_array(shape)?;
        for i in 0..want.len() {
            let (g, w) = (got.value(i), want.value(i));
            if format!("{g:?}") != format!("{w:?}") {
                return Err(format!("output {k} element {i}: got {g:?}, expected {w:?}"));
            }
        }
    }
    Ok(())
}

/// Emits, compiles and interprets one file; `Err` says at which step it stopped.
fn check_file(path: &Path) -> Result<(), String> {
    let text = std::fs::read(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let (source, module) = hlo::load(&name, &text[..])?;
    let id = emitters::fusions(&module)[0];
    let c = module.computation(id);
    let emitted = emitters::emit_fusion(&module, id).map_err(|d| d.render(&source))?;
    if emitted.emitter != emitters::EmitterKind::Reduction {
        return Err(format!("emitted by the {} emitter", emitted.emitter));
    }
    let ptx = common::compile_ptx(&source, &module, &[id], &Options::default())?;
    common::assemble_without_spills(&ptx)?;

    let inputs: i64 = c
        .parameters()
        .iter()
        .flat_map(|&p| leaves(&c.instruction(p).shape))
        .map(|a| a.element_count())
        .sum();
    let reduced: i64 = c
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Reduce)
        .map(|i| {
            c.instruction(i.operands[0])
                .shape
                .as_array()
                .map_or(0, |a| a.element_count())
        })
        .max()
        .unwrap_or(0);
    if inputs.max(reduced) > MAX_INTERPRETED_ELEMENTS {
        return Err("too large for the interpreter".into());
    }
    let identities = init_identities(&module, c);
    let params = c.parameters();
    let args: Vec<HostValue> = random_arguments(c, 1)
        .map_err(|d| d.render(&source))?
        .into_iter()
        .zip(&params)
        .map(
            |(arg, p)| match (&arg, identities.iter().find(|(i, _)| i == p)) {
                (HostValue::Array(a), Some((_, v))) => {
                    let range = hlo::evaluate::RandomRange::Between(*v, *v);
                    HostValue::Array(random_array(&a.shape(), 0, range).unwrap())
                }
                (HostValue::Array(a), None) => HostValue::Array(quantized(a)),
                _ => arg,
            },
        )
        .collect();
    let expected: Vec<HostArray> = evaluate_fusion(&module, id, &args)
        .map_err(|d| d.render(&source))?
        .into_iter()
        .collect();
    let outputs = leaves(&c.root_instruction().shape);
    let mut arguments = Vec::new();
    for (arg, p) in args.iter().zip(&params) {
        let shape = c.instruction(*p).shape.as_array().unwrap();
        arguments.push(Buffer::from_host_array(
            arg.as_array().unwrap(),
            shape.layout.as_ref(),
        )?);
    }
    for shape in &outputs {
        let zeros = random_array(shape, 0, hlo::evaluate::RandomRange::Between(0.0, 0.0))?;
        let laid_out = Buffer::from_host_array(&zeros, shape.layout.as_ref())?;
        arguments.push(Buffer::new(vec![0xff; laid_out.len()]));
    }
    let launch = Launch {
        blocks: emitted.kernel.launch.blocks,
        threads: emitted.kernel.launch.threads_per_block,
    };
    let mut ir = emitted.module;
    interpret(&ir, launch, &arguments, &outputs, &expected).map_err(|e| format!("emit: {e}"))?;
    for pass in checked_passes() {
        let pass_name = pass.name();
        let mut pm = PassManager::new();
        pm.add(pass);
        pm.run(&mut ir, &mut std::io::sink(), &mut Timings::default())
            .map_err(|e| e.to_string())?;
        if pass_name == "lower-xla-gpu-to-scf" || pass_name == "lower-tensors" {
            interpret(&ir, launch, &arguments, &outputs, &expected)
                .map_err(|e| format!("{pass_name}: {e}"))?;
        }
    }
    interpret(&ir, launch, &arguments, &outputs, &expected).map_err(|e| format!("last pass: {e}"))
}

#[test]
fn the_reduction_corpus_compiles_and_matches_the_evaluator() {
    let files = testkit::corpus(&[
        "reduce_row",
        "reduce_column",
        "reduce_column_small",
        "reduce_multirow",
    ]);
    let passed = testkit::check_files(&files, NOT_PASSING, check_file);
    eprintln!("{passed} of {} reduction corpus files pass", files.len());
    assert_eq!(files.len(), 23);
    assert!(
        passed * 10 >= files.len() * 7,
        "{passed} of {}",
        files.len()
    );
}
