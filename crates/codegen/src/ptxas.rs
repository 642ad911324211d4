//! Assembling PTX with NVIDIA's `ptxas`: the final check that the PTX is valid for the
//! architecture, and the source of register and spill counts (`-v`).

use crate::toolchain::{self, ToolchainError};
use std::{
    fmt::{self, Display, Formatter},
    fs, io,
    process::Command,
};

/// What `ptxas` produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    /// The cubin (an ELF file).
    pub cubin: Vec<u8>,
    /// ptxas' stdout and stderr, with `-v`'s per-function report.
    pub log: String,
}

impl Assembled {
    /// The per-function resource usage that `-v` reports.
    pub fn functions(&self) -> Vec<FunctionInfo> {
        parse_resource_log(&self.log)
    }
}

/// Registers and spills of one compiled function, from ptxas' `-v` report.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FunctionInfo {
    /// The (mangled) function name.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of spill stores.
    pub spill_stores: u32,
    /// Bytes of spill loads.
    pub spill_loads: u32,
}

/// Why assembling failed.
#[derive(Debug)]
pub enum PtxasError {
    /// ptxas is not installed.
    Toolchain(ToolchainError),
    /// Writing the input, running ptxas, or reading the cubin failed.
    Io(io::Error),
    /// ptxas rejected the PTX; its output says why.
    Rejected {
        /// The exit status, as printed.
        status: String,
        /// ptxas' stdout and stderr.
        log: String,
    },
}

impl Display for PtxasError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Toolchain(error) => error.fmt(f),
            Self::Io(error) => write!(f, "running ptxas: {error}"),
            Self::Rejected { status, log } => write!(f, "ptxas failed ({status}):\n{log}"),
        }
    }
}

impl std::error::Error for PtxasError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Toolchain(error) => Some(error),
            Self::Io(error) => Some(error),
            Self::Rejected { .. } => None,
        }
    }
}

impl From<ToolchainError> for PtxasError {
    fn from(error: ToolchainError) -> Self {
        Self::Toolchain(error)
    }
}

impl From<io::Error> for PtxasError {
    fn from(error: io::Error) -> Self {
        Self::Io(error)
    }
}

/// Runs `ptxas -v -arch=<arch>` on `ptx` (in a scratch directory that is removed afterwards)
/// and returns the cubin and the log.
pub fn assemble(ptx: &str, arch: &str) -> Result<Assembled, PtxasError> {
    let ptxas = toolchain::ptxas()?;
    let scratch = tempfile::Builder::new()
        .prefix("hlo-emit-ptxas")
        .tempdir()?;
    let input = scratch.path().join("kernel.ptx");
    let output = scratch.path().join("kernel.cubin");
    fs::write(&input, ptx)?;

    let result = Command::new(&ptxas)
        .arg("-v")
        .arg(format!("-arch={arch}"))
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()?;
    let mut log = String::from_utf8_lossy(&result.stdout).into_owned();
    log.push_str(&String::from_utf8_lossy(&result.stderr));
    if !result.status.success() {
        return Err(PtxasError::Rejected {
            status: result.status.to_string(),
            log,
        });
    }
    let cubin = fs::read(&output)?;
    Ok(Assembled { cubin, log })
}

/// Reads ptxas' `-v` report:
///
/// ```text
/// ptxas info    : Compiling entry function 'axpy' for 'sm_90'
/// ptxas info    : Function properties for axpy
///     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
/// ptxas info    : Used 8 registers, used 0 barriers, 368 bytes cmem[0]
/// ```
fn parse_resource_log(log: &str) -> Vec<FunctionInfo> {
    let mut functions: Vec<FunctionInfo> = Vec::new();
    for line in log.lines() {
        let line = line.trim();
        if let Some(rest) = line
            .strip_prefix("ptxas info    : Compiling entry function '")
            .or_else(|| line.strip_prefix("ptxas info    : Function properties for "))
        {
            let name = rest.split('\'').next().unwrap_or(rest).trim().to_string();
            if functions
                .last()
                .is_none_or(|function| function.name != name)
            {
                functions.push(FunctionInfo {
                    name,
                    ..FunctionInfo::default()
                });
            }
        } else if let Some(function) = functions.last_mut() {
            if line.contains("spill stores") {
                function.spill_stores = number_before(line, "bytes spill stores");
                function.spill_loads = number_before(line, "bytes spill loads");
            } else if let Some(rest) = line.strip_prefix("ptxas info    : Used ") {
                function.registers = number_before(rest, "registers");
            }
        }
    }
    functions
}

/// The number just before `unit` in `text` ("12 bytes spill stores" → 12), or 0.
fn number_before(text: &str, unit: &str) -> u32 {
    text.find(unit)
        .and_then(|end| text[..end].split_whitespace().last())
        .and_then(|number| number.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_registers_and_spills() {
        let log = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'axpy' for 'sm_90'
ptxas info    : Function properties for axpy
    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers, 368 bytes cmem[0]
";
        assert_eq!(
            parse_resource_log(log),
            vec![FunctionInfo {
                name: "axpy".into(),
                registers: 12,
                spill_stores: 8,
                spill_loads: 4,
            }]
        );
    }
}
