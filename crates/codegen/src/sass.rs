//! The machine code of a kernel: `nvdisasm` on the cubin that `ptxas` assembled.
//!
//! PTX is a virtual ISA: `ptxas` still chooses instructions (a `div.rn.f32` becomes a fast
//! path and a call to a slow one), allocates registers and schedules. Without a GPU, the
//! SASS is the closest look at what will run, and its instruction count is a static measure
//! of a kernel's cost that tests and benchmarks can compare.

use crate::toolchain::{self, ToolchainError};
use std::{
    fmt::{self, Display, Formatter},
    fs, io,
    process::Command,
};

/// Why a cubin could not be disassembled.
#[derive(Debug)]
pub enum SassError {
    /// nvdisasm is not installed.
    Toolchain(ToolchainError),
    /// Writing the cubin or running nvdisasm failed.
    Io(io::Error),
    /// nvdisasm refused the cubin; its output says why.
    Refused { status: String, log: String },
}

impl Display for SassError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Toolchain(error) => error.fmt(f),
            Self::Io(error) => write!(f, "running nvdisasm: {error}"),
            Self::Refused { status, log } => write!(f, "nvdisasm failed ({status}):\n{log}"),
        }
    }
}

impl std::error::Error for SassError {}

impl From<ToolchainError> for SassError {
    fn from(error: ToolchainError) -> Self {
        Self::Toolchain(error)
    }
}

impl From<io::Error> for SassError {
    fn from(error: io::Error) -> Self {
        Self::Io(error)
    }
}

/// The SASS of `cubin` as `nvdisasm` prints it. Its warnings (a CUDA 13 nvdisasm reading a
/// CUDA 12 cubin says it falls back to the older ELF format) are dropped: the listing is the
/// same.
pub fn disassemble(cubin: &[u8]) -> Result<String, SassError> {
    let nvdisasm = toolchain::nvdisasm()?;
    let scratch = tempfile::Builder::new()
        .prefix("hlo-emit-nvdisasm")
        .tempdir()?;
    let input = scratch.path().join("kernel.cubin");
    fs::write(&input, cubin)?;
    // `-c`: the code sections only (no .nv.info, debug frames or symbol tables).
    let result = Command::new(&nvdisasm).arg("-c").arg(&input).output()?;
    if !result.status.success() {
        let mut log = String::from_utf8_lossy(&result.stdout).into_owned();
        log.push_str(&String::from_utf8_lossy(&result.stderr));
        return Err(SassError::Refused {
            status: result.status.to_string(),
            log,
        });
    }
    Ok(String::from_utf8_lossy(&result.stdout).into_owned())
}

/// The instructions of a listing: the lines with an address comment, `/*0a30*/`.
pub fn instructions(sass: &str) -> impl Iterator<Item = &str> {
    sass.lines().filter_map(|line| {
        let rest = line.trim_start().strip_prefix("/*")?;
        let (address, instruction) = rest.split_once("*/")?;
        address
            .chars()
            .all(|c| c.is_ascii_hexdigit())
            .then(|| instruction.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_the_addressed_lines() {
        let listing = "\t.section .text.main\nmain:\n        /*0000*/                   LDC R1, c[0x0][0x28] ;\n        /*0010*/                   S2R R4, SR_CTAID.X ;\n.L_x_0:\n        /*0020*/                   EXIT ;\n";
        let found: Vec<&str> = instructions(listing).collect();
        assert_eq!(
            found,
            ["LDC R1, c[0x0][0x28] ;", "S2R R4, SR_CTAID.X ;", "EXIT ;"]
        );
    }

    #[test]
    fn a_kernel_disassembles() {
        let ptx = "\
.version 7.8
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p) {
  .reg .b64 %rd<3>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, 7;
  st.global.u32 [%rd2], %r1;
  ret;
}
";
        let assembled = crate::ptxas::assemble(ptx, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        let sass = disassemble(&assembled.cubin).unwrap_or_else(|e| panic!("{e}"));
        let found: Vec<&str> = instructions(&sass).collect();
        assert!(found.iter().any(|i| i.starts_with("STG")), "{sass}");
        assert!(found.iter().any(|i| i.starts_with("EXIT")), "{sass}");
    }
}
