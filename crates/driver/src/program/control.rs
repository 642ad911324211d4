//! `--check` of a whole program with control flow: the fused module run as the runtime runs
//! it, instruction by instruction from the ENTRY, with each `while` looped on the host.
//!
//! A program whose ENTRY is a chain of fusions is checked as a chain ([`super::check`]). One
//! with a `while` or a `conditional` (JAX's `lax.fori_loop`, `lax.scan`, `lax.cond`) is not a
//! chain: its loop body's kernels run once an iteration, on the loop state the previous
//! iteration wrote. Here each computation is run recursively: a `fusion` launches its
//! kernel (from the linked module after O3) on the buffers of its operands; `tuple` and
//! `get-tuple-element` move buffers; a `while` runs its condition's computation, reads the
//! predicate back, and runs its body's while it holds (at most [`MAX_ITERATIONS`] times,
//! refused past that with a located error); a `conditional` runs the branch its index or
//! predicate picks; any other instruction (a constant, a copy, a matrix product left to a
//! library) is evaluated on the host, as the runtime runs it.

use std::collections::HashMap;

use hlo::evaluate::{HostArray, HostValue, evaluate_instruction};
use hlo::graph::ComputationGraph;
use hlo::{
    ArrayShape, ComputationId, Diagnostic, HloModule, Instruction, Opcode, SourceFile, Value,
};
use interp::{Buffer, Kernel, Launch};

use super::kernel_name;
use crate::check::unwritten_output;
use crate::pipeline::CompiledKernel;

/// The most iterations one run of a loop may take in the interpreter: a loop of JAX's
/// (`fori_loop`, `scan` over a small test's steps) takes far fewer; one past it is refused
/// rather than run for minutes.
pub(crate) const MAX_ITERATIONS: u64 = 1000;

/// A value of the running program: an array in a buffer, or a tuple of values.
#[derive(Clone)]
pub(crate) enum Held {
    Array(Buffer, ArrayShape),
    Tuple(Vec<Held>),
}

impl Held {
    /// The arrays, nested tuples flattened, as host arrays.
    pub(crate) fn leaves(&self) -> Result<Vec<HostArray>, String> {
        match self {
            Held::Array(buffer, shape) => Ok(vec![buffer.to_host_array(shape)?]),
            Held::Tuple(elements) => {
                let mut out = Vec::new();
                for e in elements {
                    out.extend(e.leaves()?);
                }
                Ok(out)
            }
        }
    }

    fn to_host(&self) -> Result<HostValue, String> {
        match self {
            Held::Array(buffer, shape) => Ok(HostValue::Array(buffer.to_host_array(shape)?)),
            Held::Tuple(elements) => Ok(HostValue::Tuple(
                elements
                    .iter()
                    .map(Held::to_host)
                    .collect::<Result<_, _>>()?,
            )),
        }
    }

    pub(crate) fn of_host(value: &HostValue, shape: &hlo::Shape) -> Result<Held, String> {
        match (value, shape) {
            (HostValue::Array(array), hlo::Shape::Array(a)) => Ok(Held::Array(
                Buffer::from_host_array(array, a.layout.as_ref())?,
                a.clone(),
            )),
            (HostValue::Tuple(values), hlo::Shape::Tuple(shapes)) => Ok(Held::Tuple(
                values
                    .iter()
                    .zip(shapes)
                    .map(|(v, s)| Held::of_host(v, s))
                    .collect::<Result<_, _>>()?,
            )),
            _ => Err("a value whose shape is not its instruction's".to_string()),
        }
    }
}

/// A kernel compiled for the run: its name, launch, code and in-place outputs.
struct Compiled {
    name: String,
    launch: Launch,
    code: Kernel,
    in_place: Vec<(usize, usize)>,
}

/// What a run did: kernel launches, loop iterations, instructions on the host, ops.
#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) launches: u64,
    pub(crate) iterations: u64,
    pub(crate) host: u64,
    pub(crate) ops: u64,
}

/// Runs a fused module with control flow.
pub(crate) struct Runner<'m> {
    source: &'m SourceFile,
    module: &'m HloModule,
    kernels: &'m [CompiledKernel],
    linked: &'m ir::Module,
    names: HashMap<ComputationId, String>,
    compiled: HashMap<ComputationId, Compiled>,
    pub(crate) counts: Counts,
}

impl<'m> Runner<'m> {
    pub(crate) fn new(
        source: &'m SourceFile,
        module: &'m HloModule,
        (kernels, linked): (&'m [CompiledKernel], &'m ir::Module),
    ) -> Runner<'m> {
        Runner {
            source,
            module,
            kernels,
            linked,
            names: super::launch::compiled_names(module, kernels),
            compiled: HashMap::new(),
            counts: Counts::default(),
        }
    }

    /// The value of computation `id` on `args`.
    pub(crate) fn run(&mut self, id: ComputationId, args: &[Held]) -> Result<Held, String> {
        let module = self.module;
        let computation = module.computation(id);
        let mut values: Vec<Option<Held>> = vec![None; computation.instructions.len()];
        for instr_id in ComputationGraph::new(computation).post_order() {
            let instr = computation.instruction(instr_id);
            let operands = instr
                .operands
                .iter()
                .map(|o| {
                    values[o.0]
                        .clone()
                        .ok_or("an operand read before it is computed")
                })
                .collect::<Result<Vec<Held>, _>>()?;
            let value = match instr.opcode {
                Opcode::Parameter => {
                    let n = instr.parameter_number().unwrap_or(-1);
                    usize::try_from(n)
                        .ok()
                        .and_then(|n| args.get(n).cloned())
                        .ok_or_else(|| self.located(instr, "a parameter without an argument"))?
                }
                Opcode::Tuple => Held::Tuple(operands),
                Opcode::GetTupleElement => {
                    let index = instr.int("index").and_then(|i| usize::try_from(i).ok());
                    match (&operands[0], index) {
                        (Held::Tuple(elements), Some(i)) if i < elements.len() => {
                            elements[i].clone()
                        }
                        _ => return Err(self.located(instr, "a tuple index out of range")),
                    }
                }
                Opcode::Fusion => self.launch(instr, operands)?,
                Opcode::While => self.run_loop(instr, operands)?,
                Opcode::Conditional => self.run_branch(instr, operands)?,
                _ => {
                    let host = operands
                        .iter()
                        .map(Held::to_host)
                        .collect::<Result<Vec<_>, _>>()?;
                    let value = evaluate_instruction(module, id, instr_id, &host)
                        .map_err(|d| d.render(self.source))?;
                    self.counts.host += 1;
                    Held::of_host(&value, &instr.shape)?
                }
            };
            values[instr_id.0] = Some(value);
        }
        values[computation.root.0]
            .take()
            .ok_or_else(|| format!("computation '{}' has no root value", computation.name))
    }

    /// Launches the kernel of fusion instruction `instr` on its operands' buffers.
    fn launch(&mut self, instr: &Instruction, operands: Vec<Held>) -> Result<Held, String> {
        let fusion = instr
            .called("calls")
            .ok_or_else(|| self.located(instr, "a fusion without calls="))?
            .id;
        if !self.compiled.contains_key(&fusion) {
            let name = kernel_name(self.module, &self.names, fusion)?.clone();
            let compiled = self
                .kernels
                .iter()
                .find(|k| k.kernel == name)
                .ok_or_else(|| format!("error: kernel {name} was not compiled"))?;
            let code =
                Kernel::compile(self.linked, &name).map_err(|e| format!("error: {name}: {e}"))?;
            let kernel = Compiled {
                launch: Launch {
                    blocks: compiled.launch.blocks,
                    threads: compiled.launch.threads_per_block,
                },
                in_place: compiled.in_place.clone(),
                code,
                name,
            };
            self.compiled.insert(fusion, kernel);
        }
        let kernel = &self.compiled[&fusion];
        let mut arguments = Vec::new();
        for operand in &operands {
            match operand {
                Held::Array(buffer, _) => arguments.push(buffer.clone()),
                Held::Tuple(_) => {
                    return Err(self.located(instr, "a fusion operand that is a tuple"));
                }
            }
        }
        let outputs: Vec<ArrayShape> = crate::check::leaves(&instr.shape);
        for (k, shape) in outputs.iter().enumerate() {
            // An output written in place starts as a copy of its parameter's buffer.
            let buffer = match kernel.in_place.iter().find(|&&(output, _)| output == k) {
                Some(&(_, param)) => arguments[param].clone(),
                None => unwritten_output(shape)?,
            };
            arguments.push(buffer);
        }
        let run = kernel.code.run(kernel.launch, arguments).map_err(|e| {
            format!(
                "error: kernel {} fails in the interpreter: {e}",
                kernel.name
            )
        })?;
        self.counts.launches += 1;
        self.counts.ops += run.ops;
        let first = run.buffers.len() - outputs.len();
        let mut results: Vec<Held> = run.buffers[first..]
            .iter()
            .zip(outputs)
            .map(|(b, shape)| Held::Array(b.clone(), shape))
            .collect();
        Ok(if instr.shape.as_array().is_some() {
            results.remove(0)
        } else {
            Held::Tuple(results)
        })
    }

    /// A `while`: the body run on the state while the condition holds.
    fn run_loop(&mut self, instr: &Instruction, mut operands: Vec<Held>) -> Result<Held, String> {
        let (Some(condition), Some(body)) = (instr.called("condition"), instr.called("body"))
        else {
            return Err(self.located(instr, "a while without condition= and body="));
        };
        let (condition, body) = (condition.id, body.id);
        let mut state = operands.remove(0);
        for iteration in 0.. {
            let holds = self.run(condition, std::slice::from_ref(&state))?;
            if !self.truth(instr, &holds)? {
                break;
            }
            if iteration == MAX_ITERATIONS {
                return Err(self.located(
                    instr,
                    &format!(
                        "unsupported: the loop '{}' runs past {MAX_ITERATIONS} iterations: \
                         --check runs loops in the interpreter up to that many",
                        instr.name
                    ),
                ));
            }
            state = self.run(body, std::slice::from_ref(&state))?;
            self.counts.iterations += 1;
        }
        Ok(state)
    }

    /// A `conditional`: the branch its predicate (true, false) or index (clamped, as XLA
    /// runs the last branch for an index out of range) picks, on its operand.
    fn run_branch(&mut self, instr: &Instruction, operands: Vec<Held>) -> Result<Held, String> {
        let branches: Vec<ComputationId> = instr.called_computations().map(|c| c.id).collect();
        let picked = match self.scalar(instr, &operands[0])? {
            Value::Pred(p) => usize::from(!p),
            Value::Int(i) => usize::try_from(i)
                .unwrap_or(usize::MAX)
                .min(branches.len() - 1),
            _ => return Err(self.located(instr, "a branch index that is not an integer")),
        };
        let branch = *branches
            .get(picked)
            .ok_or_else(|| self.located(instr, "a conditional without branches"))?;
        self.run(branch, &operands[1 + picked..2 + picked])
    }

    fn truth(&self, instr: &Instruction, value: &Held) -> Result<bool, String> {
        match self.scalar(instr, value)? {
            Value::Pred(p) => Ok(p),
            _ => Err(self.located(instr, "a loop condition that is not a predicate")),
        }
    }

    /// The one element of a scalar value.
    fn scalar(&self, instr: &Instruction, value: &Held) -> Result<Value, String> {
        match value {
            Held::Array(buffer, shape) if shape.element_count() == 1 => {
                Ok(buffer.to_host_array(shape)?.value(0))
            }
            _ => Err(self.located(instr, "a scalar was expected")),
        }
    }

    fn located(&self, instr: &Instruction, message: &str) -> String {
        let message = if message.starts_with("unsupported:") {
            message.to_string()
        } else {
            format!("{message} in '{}'", instr.name)
        };
        Diagnostic::new(instr.spans.whole, message).render(self.source)
    }
}

/// Whether the ENTRY has a loop or a conditional, which [`Runner`] runs.
pub(crate) fn has_control_flow(module: &HloModule) -> bool {
    module
        .entry_computation()
        .instructions
        .iter()
        .any(|i| matches!(i.opcode, Opcode::While | Opcode::Conditional))
}
