//! Where the external tools live.
//!
//! Nothing here is installed by Cargo: the LLVM 22 command line tools (`FileCheck`, `not`,
//! `mlir-opt`) come from the Debian packages, `ptxas` and `libdevice.10.bc` from NVIDIA's CUDA
//! compiler wheel, which `tools/setup` unpacks into the git-ignored `.toolchain/cuda` of the
//! project, and `nvdisasm` (for `--emit=sass`) from NVIDIA's wheel of it, in
//! `.toolchain/nvdisasm`. Every lookup checks that the file exists, so a missing tool is reported once, with
//! the fix, instead of as an obscure "No such file" from a spawned process.
//!
//! Each location can be overridden by an environment variable (for a CUDA install elsewhere,
//! or another LLVM build).

use std::{
    env,
    fmt::{self, Display, Formatter},
    path::{Path, PathBuf},
};

/// Overrides the directory of the LLVM 22 command line tools.
pub const LLVM_BIN_ENV: &str = "HLO_EMIT_LLVM_BIN";
/// Overrides the path of the `ptxas` executable.
pub const PTXAS_ENV: &str = "HLO_EMIT_PTXAS";
/// Overrides the path of `libdevice.10.bc`.
pub const LIBDEVICE_ENV: &str = "HLO_EMIT_LIBDEVICE";
/// Overrides the path of the `nvdisasm` executable.
pub const NVDISASM_ENV: &str = "HLO_EMIT_NVDISASM";

/// Debian's LLVM 22 prefix; `/usr/bin/llvm-config` and friends may belong to an older LLVM.
const DEFAULT_LLVM_BIN: &str = "/usr/lib/llvm-22/bin";
/// Where the CUDA compiler wheel puts its files, below `<project root>/.toolchain/cuda`.
const CUDA_NVCC: &str = ".toolchain/cuda/nvidia/cuda_nvcc";
/// Where NVIDIA's `nvdisasm` wheel puts the executable, below the project root.
const NVDISASM: &str = ".toolchain/nvdisasm/nvidia/cu13/bin/nvdisasm";

/// A tool that is not where it should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolchainError {
    /// The tool's name, e.g. `ptxas`.
    pub tool: String,
    /// Where it was looked for.
    pub path: PathBuf,
    /// The environment variable that overrides the location.
    pub env: &'static str,
}

impl Display for ToolchainError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} not found at {}: run tools/setup (or set {} to its location)",
            self.tool,
            self.path.display(),
            self.env
        )
    }
}

impl std::error::Error for ToolchainError {}

/// The project root (the workspace directory), fixed at compile time from this crate's place
/// in it, so tests and tools find `.toolchain` whatever their working directory.
pub fn project_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .and_then(Path::parent)
        .unwrap_or(manifest_dir)
        .to_path_buf()
}

/// The directory of the LLVM 22 command line tools.
pub fn llvm_bin_dir() -> Result<PathBuf, ToolchainError> {
    let (path, overridden) = from_env_or(LLVM_BIN_ENV, || PathBuf::from(DEFAULT_LLVM_BIN));
    if path.is_dir() {
        Ok(path)
    } else {
        Err(missing(
            if overridden {
                "LLVM bin directory"
            } else {
                "LLVM 22"
            },
            path,
            LLVM_BIN_ENV,
        ))
    }
}

/// An LLVM 22 command line tool by name, e.g. `llvm_tool("llvm-dis")`.
pub fn llvm_tool(name: &str) -> Result<PathBuf, ToolchainError> {
    existing_file(name, llvm_bin_dir()?.join(name), LLVM_BIN_ENV)
}

/// LLVM's `FileCheck`, for lit-style tests.
pub fn file_check() -> Result<PathBuf, ToolchainError> {
    llvm_tool("FileCheck")
}

/// LLVM's `not`, which inverts an exit status (`// RUN: not hlo-opt ...`).
pub fn not() -> Result<PathBuf, ToolchainError> {
    llvm_tool("not")
}

/// Upstream `mlir-opt`, to cross-check our dumps against real MLIR from the command line.
pub fn mlir_opt() -> Result<PathBuf, ToolchainError> {
    llvm_tool("mlir-opt")
}

/// NVIDIA's PTX assembler.
pub fn ptxas() -> Result<PathBuf, ToolchainError> {
    let (path, _) = from_env_or(PTXAS_ENV, || {
        project_root().join(CUDA_NVCC).join("bin/ptxas")
    });
    existing_file("ptxas", path, PTXAS_ENV)
}

/// NVIDIA's SASS disassembler.
pub fn nvdisasm() -> Result<PathBuf, ToolchainError> {
    let (path, _) = from_env_or(NVDISASM_ENV, || project_root().join(NVDISASM));
    existing_file("nvdisasm", path, NVDISASM_ENV)
}

/// NVIDIA's device math library (bitcode), linked for `__nv_*` functions such as `__nv_expf`.
pub fn libdevice() -> Result<PathBuf, ToolchainError> {
    let (path, _) = from_env_or(LIBDEVICE_ENV, || {
        project_root()
            .join(CUDA_NVCC)
            .join("nvvm/libdevice/libdevice.10.bc")
    });
    existing_file("libdevice.10.bc", path, LIBDEVICE_ENV)
}

/// The path from `var` when it is set and non-empty, else the default; and whether it was set.
fn from_env_or(var: &str, default: impl FnOnce() -> PathBuf) -> (PathBuf, bool) {
    match env::var_os(var) {
        Some(value) if !value.is_empty() => (PathBuf::from(value), true),
        _ => (default(), false),
    }
}

fn existing_file(tool: &str, path: PathBuf, env: &'static str) -> Result<PathBuf, ToolchainError> {
    if path.is_file() {
        Ok(path)
    } else {
        Err(missing(tool, path, env))
    }
}

fn missing(tool: &str, path: PathBuf, env: &'static str) -> ToolchainError {
    ToolchainError {
        tool: tool.to_string(),
        path,
        env,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_root_holds_the_workspace_manifest() {
        assert!(project_root().join("Cargo.toml").is_file());
        assert!(project_root().join("crates/codegen").is_dir());
    }

    #[test]
    fn missing_tool_says_how_to_fix_it() {
        let error = existing_file("ptxas", PathBuf::from("/nonexistent/ptxas"), PTXAS_ENV)
            .expect_err("the file does not exist");
        let message = error.to_string();
        assert!(message.contains("/nonexistent/ptxas"), "{message}");
        assert!(message.contains("tools/setup"), "{message}");
        assert!(message.contains(PTXAS_ENV), "{message}");
    }
}
