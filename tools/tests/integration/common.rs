//! What the area modules share: compiling a module's fusions to PTX as `hlo-emit` does,
//! and assembling it with the spill check every corpus test applies.

use driver::pipeline::{self, Options};

/// The PTX of `fusions` of `module` (one module for all of them), through the whole
/// pipeline with `options` and no instrumentation.
pub fn compile_ptx(
    source: &hlo::SourceFile,
    module: &hlo::HloModule,
    fusions: &[hlo::ComputationId],
    options: &Options,
) -> Result<String, String> {
    pipeline::compile(source, module, fusions, options).map(|c| c.output)
}

/// `ptx` assembled for sm_90 by `ptxas`, or why not: its error, or the first function that
/// spills registers to local memory.
pub fn assemble_without_spills(ptx: &str) -> Result<codegen::ptxas::Assembled, String> {
    let assembled = codegen::ptxas::assemble(ptx, "sm_90").map_err(|e| e.to_string())?;
    if let Some(f) = assembled
        .functions()
        .into_iter()
        .find(|f| (f.spill_stores, f.spill_loads) != (0, 0))
    {
        return Err(format!("ptxas spills: {f:?}"));
    }
    Ok(assembled)
}
