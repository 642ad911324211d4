//! An interpreter for hlo-emit's IR with a simulated GPU grid: it runs a kernel
//! at any stage of the pipeline before `lower-to-llvm` on the host, so that what every pass
//! produces can be compared with the HLO reference evaluator without a GPU.
//!
//! * **Levels.** Tensor level (`xla_gpu`, `scf`, `arith`, `math`, `tensor`, `vector`, `func`,
//!   `gpu`): the entry takes its input tensors, then its output tensors, and returns the
//!   outputs. Pointer level (after `lower-tensors`): `!llvm.ptr` parameters, `llvm`
//!   getelementptr/load/store over the buffers, address space 3 globals as per-block shared
//!   memory, `nvvm` special registers, barriers and shuffles. Both can mix.
//! * **Execution.** [`Kernel::compile`] turns the entry and its callees into flat
//!   instructions over registers (`inst`); [`Kernel::run`] runs every block and thread
//!   (`grid`), each thread as a resumable state machine (`exec`) so that barriers and
//!   warp shuffles synchronize as on a GPU.
//! * **Tensors** have value semantics at the cost of their writes only (`value`): a
//!   thread's writes to an output (or shared) tensor are kept as an overlay and published
//!   at `xla_gpu.sync_threads` and at exit, where two threads writing different values to
//!   one element is a write conflict.
//! * **Errors** ([`Error`]) name the op, its `file:line:col` and the block and thread:
//!   out-of-bounds accesses, reads of uninitialized shared memory, barrier and warp
//!   divergence, write conflicts, used poison (MLIR's deferred UB: out-of-range shifts and
//!   `fptosi`, overflow flags), immediate UB (division by zero, broken `xla.range`
//!   promises), misaligned loads, and ops the interpreter does not execute.
//! * **Numerics** follow MLIR/LLVM: integers wrap, `f16`/`bf16` ops compute in `f32` and
//!   round after each op, math functions are Rust's `f32`/`f64` ones (the HLO evaluator's),
//!   so results match the evaluator bit for bit where both define them.

mod affine;
mod buffer;
mod carry_chain;
mod compile;
mod error;
mod exec;
mod grid;
mod inst;
mod layout;
mod math;
mod memory;
mod ops;
mod plain;
mod scalar;
mod value;
mod wide;

pub use buffer::{Buffer, for_each_element};
pub use layout::MAX_RANK;

/// The largest single buffer the interpreter allocates: a kernel argument, a tensor value
/// (`tensor.empty`, a dense constant), a shared or global array. Sizes are computed with
/// checked arithmetic and compared with this before anything is allocated, so a huge
/// shape is a "too large for the host" error, not an allocation abort.
pub const HOST_BYTES_LIMIT: u64 = 1 << 32;

/// `bytes` (`None`: past `u64`) of `what` as a size to allocate, or the error that says it
/// exceeds [`HOST_BYTES_LIMIT`].
pub fn host_bytes(bytes: Option<u64>, what: &dyn std::fmt::Display) -> Result<usize, Error> {
    match bytes {
        Some(n) if n <= HOST_BYTES_LIMIT => Ok(n as usize),
        _ => Err(error::fail!(
            TooLarge,
            "{what} takes {} bytes, more than the {HOST_BYTES_LIMIT} the interpreter allocates at once",
            bytes.map_or("over 2^64".to_string(), |n| n.to_string())
        )),
    }
}
pub use error::{Error, ErrorKind, Site, ThreadId};
pub use exec::Launch;

use inst::{GlobalDef, Param, Program};
use memory::{Memory, Storage};

/// The instructions one simulated thread may execute by default before the run stops with
/// [`ErrorKind::StepLimit`]: IR with an endless loop (an `scf.while` whose condition stays
/// true, an `llvm.br` cycle) would otherwise never return. 2^32 is minutes of interpretation
/// for one thread, far past any kernel `--check` runs (a thread of the largest host-sized
/// reduction executes well under 2^31).
pub const DEFAULT_STEP_LIMIT: u64 = 1 << 32;

/// A compiled kernel, ready to run on any launch and arguments.
#[derive(Clone, Debug)]
pub struct Kernel {
    prog: Program,
    step_limit: u64,
}

/// The outcome of a kernel run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Every argument buffer after the kernel, in parameter order: the outputs hold the
    /// results (at tensor level, the published writes over their initial contents).
    pub buffers: Vec<Buffer>,
    /// Instructions executed, over all threads (for throughput figures).
    pub ops: u64,
    /// Per argument buffer and byte, how many times it was written (stores, and tensor
    /// writes published by a thread other than the last writer), saturating at 255: an
    /// output element written 0 or 2+ times breaks the one-writer rule of a kernel.
    pub write_counts: Vec<Vec<u8>>,
}

impl Kernel {
    /// Compiles the function `entry` of `module` (a `func.func` or `llvm.func`) and every
    /// function it calls. The module must verify (the compiler relies on dominance and
    /// types); ops the interpreter does not execute are rejected here.
    pub fn compile(module: &ir::Module, entry: &str) -> Result<Kernel, Error> {
        if let Err(d) = module.verify() {
            return Err(error::fail!(InvalidIr, "the module does not verify: {d}"));
        }
        Ok(Kernel {
            prog: compile::compile(module, entry)?,
            step_limit: DEFAULT_STEP_LIMIT,
        })
    }

    /// The same kernel with another per-thread instruction limit (see [`DEFAULT_STEP_LIMIT`]).
    pub fn with_step_limit(mut self, limit: u64) -> Kernel {
        self.step_limit = limit;
        self
    }

    /// The number of parameters (buffers [`Kernel::run`] takes).
    pub fn num_params(&self) -> usize {
        self.prog.params.len()
    }

    /// The bytes parameter `i` promises to be readable (`llvm.dereferenceable`), if it is a
    /// pointer that says so.
    pub fn pointer_bytes(&self, i: usize) -> Option<u64> {
        match self.prog.params.get(i)? {
            Param::Ptr(bytes) => *bytes,
            Param::Tensor(_) => None,
        }
    }

    /// Runs the grid on `args` (one buffer per parameter: at tensor level sized exactly as
    /// the tensor type needs).
    pub fn run(&self, launch: Launch, args: Vec<Buffer>) -> Result<Run, Error> {
        let prog = &self.prog;
        if args.len() != prog.params.len() {
            return Err(error::fail!(
                InvalidArgument,
                "the kernel takes {} arguments, but {} were given",
                prog.params.len(),
                args.len()
            ));
        }
        let mut mem = Memory::default();
        for (i, (buffer, param)) in args.into_iter().zip(&prog.params).enumerate() {
            let elem_bits = match param {
                Param::Tensor(ty) => {
                    let tt = &prog.tensors[*ty as usize];
                    buffer::check_tensor_argument(i, &buffer, tt)?;
                    tt.elem_bits
                }
                Param::Ptr(dereferenceable) => {
                    if let Some(n) = *dereferenceable
                        && (buffer.len() as u64) < n
                    {
                        return Err(error::fail!(
                            InvalidArgument,
                            "argument #{i} has {} bytes but the kernel may read {n} (llvm.dereferenceable)",
                            buffer.len()
                        ));
                    }
                    8
                }
            };
            let name = format!("argument #{i}");
            let mut storage = Storage::global(name, buffer.into_bytes(), elem_bits);
            storage.write_counts = Some(vec![0; storage.bytes.len()]);
            mem.globals.push(storage);
        }
        for g in &prog.globals {
            mem.globals.push(global_storage(g));
        }
        for s in &prog.shared {
            mem.shared
                .push(Storage::uninit(s.name.clone(), s.bytes, s.elem_bits));
        }
        let ops = grid::run(prog, &mut mem, launch, self.step_limit)?;
        let (buffers, write_counts) = mem
            .globals
            .into_iter()
            .take(prog.params.len())
            .map(|s| (Buffer::new(s.bytes), s.write_counts.unwrap_or_default()))
            .unzip();
        Ok(Run {
            buffers,
            ops,
            write_counts,
        })
    }
}

fn global_storage(g: &GlobalDef) -> Storage {
    let mut s = match &g.init {
        Some(bytes) => Storage::global(g.name.clone(), bytes.clone(), 1),
        None => Storage::uninit(g.name.clone(), g.bytes, 1),
    };
    s.constant = g.constant;
    s
}

/// Compiles and runs `entry` of `module` on `args`; returns the argument buffers after
/// the run (see [`Run::buffers`]).
pub fn run_kernel(
    module: &ir::Module,
    entry: &str,
    launch: Launch,
    args: Vec<Buffer>,
) -> Result<Vec<Buffer>, Error> {
    Ok(Kernel::compile(module, entry)?.run(launch, args)?.buffers)
}
