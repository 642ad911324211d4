//! LLVM IR text → MLIR's `llvm` dialect (generic form), so that the code after
//! translation and after O3 can run in the interpreter like every earlier stage.
//!
//! MLIR 22's C API has no LLVM IR import (only the export), so this runs upstream
//! `mlir-translate --import-llvm` (LLVM 22's, from `mlir-22-tools`, installed by
//! `tools/setup`), which calls `translateLLVMIRToModule`: LLVM instructions become `llvm`
//! ops, phis become block arguments, NVVM special-register reads become `nvvm` ops and
//! other intrinsics `llvm.intr.*` or `llvm.call_intrinsic`.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::toolchain;

/// `llvm_ir` imported into MLIR, printed in generic form.
pub fn llvm_ir_to_mlir(llvm_ir: &str) -> Result<String, String> {
    let tool = toolchain::llvm_tool("mlir-translate").map_err(|e| e.to_string())?;
    let mut child = Command::new(&tool)
        .args(["--import-llvm", "--mlir-print-op-generic", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    // Written from another thread: the tool's output may fill its pipe before it has read
    // all of its input.
    let text = llvm_ir.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("{}: {e}", tool.display()))?;
    writer
        .join()
        .map_err(|_| "the writer thread panicked".to_string())?
        .map_err(|e| format!("cannot write to {}: {e}", tool.display()))?;
    if !output.status.success() {
        return Err(format!(
            "mlir-translate --import-llvm failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("mlir-translate printed non-UTF-8: {e}"))
}
