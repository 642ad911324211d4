//! The pass pipeline of hlo-emit (DESIGN §7): the [`Pass`] trait, the [`PassRegistry`] that
//! names every pass, the [`PassManager`] that runs them with verification, IR dumps and
//! timing, and the passes themselves, one per file.
//!
//! * [`Canonicalize`] (`canonicalize`): folding, algebraic identities, dead code, trivial
//!   `scf` control flow, constants hoisted and uniqued — MLIR's canonicalizer for the ops we
//!   have.
//! * [`Cse`] (`cse`): common subexpression elimination scoped by dominance.
//!
//! Adding a pass: write `src/<name>.rs` with a type implementing [`Pass`], and add one line to
//! the list in `registry.rs`; `hlo-opt --<name>` and `--help` pick it up from there.
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

pub mod canonicalize;
pub mod constants;
pub mod cse;
pub mod fold;
pub mod manager;
pub mod pass;
pub mod registry;
pub mod rewrite;
pub mod timing;

pub use canonicalize::Canonicalize;
pub use cse::Cse;
pub use manager::{DumpOptions, PassError, PassManager, dump_header};
pub use pass::{Pass, op_error};
pub use registry::{PassConstructor, PassInfo, PassRegistry};
pub use timing::Timings;
