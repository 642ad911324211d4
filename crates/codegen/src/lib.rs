//! The hand-off from our IR to the real toolchain: upstream MLIR (melior) lowers and
//! translates to LLVM IR, LLVM (inkwell) optimizes and emits PTX, `ptxas` assembles it.
//!
//! One module per step, each with its own error type, so callers (the `hlo-emit` driver, the
//! test harness) can run any prefix of the chain and report exactly which step failed:
//!
//! * [`toolchain`]: where the external tools are (`FileCheck`, `ptxas`, libdevice, ...);
//! * [`mlir`]: MLIR text → verified → `llvm` dialect → LLVM IR text;
//! * [`import`]: LLVM IR text → MLIR's `llvm` dialect (for the interpreter);
//! * [`ptx`]: LLVM IR text → O3 → PTX text;
//! * [`ptxas`]: PTX text → cubin and register/spill report;
//! * [`sass`]: cubin → the machine code (SASS) as `nvdisasm` prints it.

pub mod import;
pub mod mlir;
pub mod ptx;
pub mod ptxas;
pub mod sass;
pub mod toolchain;
