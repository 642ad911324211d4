//! The passes of hlo-emit, one per file, on top of the pass framework
//! ([`framework`]: the [`Pass`] trait, the [`PassRegistry`] that names every pass, the
//! [`PassManager`] that runs them with verification, IR dumps and timing, and the
//! utilities passes share: rewriting, folding, constants, value ranges).
//!
//! * [`Canonicalize`] (`canonicalize`): folding, algebraic identities, dead code, trivial
//!   `scf` control flow, constants hoisted and uniqued — MLIR's canonicalizer for the ops we
//!   have.
//! * [`Cse`] (`cse`): common subexpression elimination scoped by dominance.
//! * [`Inline`] (`inline`): inlines `xla_gpu.pure_call`/`func.call` of private functions
//!   by XLA's rules (small callees always, large ones not when called with different
//!   arguments).
//! * [`EraseDeadFunctions`] (`erase-dead-functions`): erases private functions nothing
//!   public reaches.
//! * [`LowerXlaGpuToScf`] (`lower-xla-gpu-to-scf`): `xla_gpu.loop` → `scf.for` nest with an
//!   `scf.if` domain check; predicated ops → `scf.if`; `shuffle_reduce` → `gpu.shuffle` ladder.
//! * [`FlattenTensors`] (`flatten-tensors`): every tensor 1-d in its physical layout, indices
//!   one `apply_indexing` of the layout's offset.
//! * [`VectorizeLoadsStores`] (`vectorize-loads-stores`): contiguous, aligned accesses in small
//!   loops → `vector.transfer_read/write` hoisted out of the loop.
//! * [`UnrollLoops`] (`unroll-loops`): fully unrolls small `scf.for` loops with constant bounds.
//! * [`LowerTensors`] (`lower-tensors`): tensors → pointers (`llvm.getelementptr` +
//!   `llvm.load`/`llvm.store`, invariant loads of read-only kernel arguments), shared tensors →
//!   address space 3 globals, `sync_threads` → barrier, thread ids → NVVM special registers.
//! * [`SimplifyAffine`] (`simplify-affine`): `xla_gpu.apply_indexing` → `index` arithmetic,
//!   simplified with the operands' ranges (unsigned division where values are non-negative).
//! * [`ExpandFloatOps`] (`expand-float-ops`): tanh and erf → XLA's rational approximations;
//!   bf16/f16 math computed in f32.
//! * [`ExpandIntegerPower`] (`expand-integer-power`): `math.ipowi` → exponentiation by
//!   squaring over every bit of the type, and the rule for negative exponents.
//! * [`PropagateSliceIndices`] (`propagate-slice-indices`): the entry function's buffer
//!   attributes (`xla.slice_index`, `xla.invariant`) on the leading tensor arguments of the
//!   functions it calls.
//! * [`ConvertPureCallOps`] (`convert-pure-call-ops`): `xla_gpu.pure_call` → `func.call`.
//! * [`SafeIntegerArithmetic`] (`safe-integer-arithmetic`): integer divisions marked
//!   `xla.guard_ub` get XLA's results for a zero divisor and `MIN / -1`.
//! * [`UnswitchLoops`] (`unswitch-loops`): a loop whose body is an `scf.if` on a condition
//!   from outside becomes an `scf.if` between two loops.
//! * [`RecoverExp2`] (`recover-exp2`): `exp(x * ln 2)` → `exp2(x)` (not exact: hlo-opt only).
//! * [`ConvertIndexType`] (`convert-index-type`): `index` arithmetic in an integer of the
//!   data layout's index width.
//! * [`MergePointersToSameSlice`] (`merge-pointers-to-same-slice`): arguments of one buffer
//!   slice (`xla.slice_index`) become one; the rest get `llvm.noalias`.
//! * [`OptimizeLoops`] (`optimize-loops`): XLA's unrolling, fully or by a divisor of the trip
//!   count (option `max_unroll_factor`).
//! * [`PeelLoops`] (`peel-loops`): an `xla_gpu.loop` whose map constrains a range variable
//!   becomes a main loop without its last value and a tail.
//!
//! Adding a pass: write `src/<name>.rs` with a type implementing [`Pass`], declare it, and
//! add one line to `PASSES` below; `hlo-opt --<name>`, `--help` and `--pass-pipeline` pick
//! it up from there (and its lit test goes to `testdata/lit/passes/`).
//!
//! ```
//! use passes::{DumpOptions, PassManager, PassRegistry, Timings};
//!
//! let mut m = ir::parse_module(
//!     "func.func @f(%x: i32) -> i32 {
//!        %c0 = arith.constant 0 : i32
//!        %0 = arith.addi %x, %c0 : i32
//!        return %0 : i32
//!      }",
//! )
//! .unwrap();
//! let registry = PassRegistry::standard();
//! let mut pm = PassManager::new();
//! for pass in registry.parse_pipeline("canonicalize,cse").unwrap() {
//!     pm.add(pass);
//! }
//! pm.set_dump_options(DumpOptions { after_all: true, ..DumpOptions::default() });
//! let mut dumps = Vec::new();
//! pm.run(&mut m, &mut dumps, &mut Timings::default()).unwrap();
//! assert!(m.print().contains("return %x : i32"));
//! assert!(String::from_utf8(dumps).unwrap().starts_with(
//!     "// -----// IR Dump After Canonicalizer (canonicalize) //----- //\nmodule {"
//! ));
//! ```

pub mod framework;

pub mod canonicalize;
pub mod convert_index_type;
pub mod convert_pure_call_ops;
pub mod cse;
pub mod distribute_vector_layout;
pub mod erase_dead_functions;
pub mod expand_float_ops;
pub mod expand_integer_power;
pub mod flatten_tensors;
pub mod inline;
pub mod lower_tensors;
pub mod lower_to_llvm;
pub mod lower_xla_gpu_to_scf;
pub mod lower_xla_shared;
pub mod merge_pointers_to_same_slice;
pub mod optimize_loops;
pub mod peel_loops;
pub mod propagate_slice_indices;
pub mod recover_exp2;
pub mod safe_integer_arithmetic;
pub mod simplify_affine;
pub mod simplify_arith;
pub mod test_passes;
pub mod unroll_loops;
pub mod unswitch_loops;
pub mod vectorize_loads_stores;

// The framework's modules keep their short paths (`passes::rewrite`, `crate::fold`).
pub use framework::{constants, fold, manager, pass, ranges, registry, rewrite, timing};

pub use canonicalize::Canonicalize;
pub use convert_index_type::ConvertIndexType;
pub use convert_pure_call_ops::ConvertPureCallOps;
pub use cse::Cse;
pub use distribute_vector_layout::DistributeVectorLayout;
pub use erase_dead_functions::EraseDeadFunctions;
pub use expand_float_ops::ExpandFloatOps;
pub use expand_integer_power::ExpandIntegerPower;
pub use flatten_tensors::FlattenTensors;
pub use inline::Inline;
pub use lower_tensors::LowerTensors;
pub use lower_to_llvm::LowerToLlvm;
pub use lower_xla_gpu_to_scf::LowerXlaGpuToScf;
pub use lower_xla_shared::LowerXlaShared;
pub use manager::{DumpOptions, Instrumentation, IrPrinting, PassError, PassManager, dump_header};
pub use merge_pointers_to_same_slice::MergePointersToSameSlice;
pub use optimize_loops::OptimizeLoops;
pub use pass::{Pass, op_error};
pub use peel_loops::PeelLoops;
pub use propagate_slice_indices::PropagateSliceIndices;
pub use recover_exp2::RecoverExp2;
pub use registry::{PassConstructor, PassInfo, PassRegistry};
pub use safe_integer_arithmetic::SafeIntegerArithmetic;
pub use simplify_affine::SimplifyAffine;
pub use simplify_arith::SimplifyArith;
pub use test_passes::{TestPassCrash, TestPassFailure, TestPassWrongResult};
pub use timing::Timings;
pub use unroll_loops::UnrollLoops;
pub use unswitch_loops::UnswitchLoops;
pub use vectorize_loads_stores::VectorizeLoadsStores;

/// The passes of this crate: the single list `hlo-opt --help`, its flags and every
/// pipeline read. Adding a pass is its file, its `mod` line above and one line here.
const PASSES: &[PassConstructor] = &[
    || Box::new(Canonicalize::default()),
    || Box::new(Cse),
    || Box::new(Inline::default()),
    || Box::new(EraseDeadFunctions),
    || Box::new(DistributeVectorLayout),
    || Box::new(LowerXlaGpuToScf),
    || Box::new(FlattenTensors),
    || Box::new(VectorizeLoadsStores),
    || Box::new(UnrollLoops),
    || Box::new(LowerTensors),
    || Box::new(SimplifyAffine),
    || Box::new(ExpandFloatOps),
    || Box::new(ExpandIntegerPower),
    || Box::new(LowerToLlvm),
    || Box::new(SimplifyArith),
    || Box::new(PropagateSliceIndices),
    || Box::new(ConvertPureCallOps),
    || Box::new(SafeIntegerArithmetic),
    || Box::new(UnswitchLoops),
    || Box::new(RecoverExp2),
    || Box::new(ConvertIndexType),
    || Box::new(MergePointersToSameSlice),
    || Box::new(OptimizeLoops::default()),
    || Box::new(PeelLoops),
    || Box::new(LowerXlaShared),
    || Box::new(TestPassFailure),
    || Box::new(TestPassCrash),
    || Box::new(TestPassWrongResult),
];

impl PassRegistry {
    /// Every pass of this crate.
    pub fn standard() -> PassRegistry {
        PassRegistry::of(PASSES)
    }
}
