//! `--check` on a whole module: each fusion stage by stage, then the program as a whole.

use std::io::Write;

use hlo::{ComputationId, HloModule, SourceFile};

use super::{CheckOptions, check_fusion_with, passes_to_check};

/// What [`check_module`] checks.
pub struct ModuleCheck<'a> {
    /// The module as written, before the fusion pipeline: the whole program's reference.
    pub reference: &'a HloModule,
    pub fusions: &'a [ComputationId],
    /// The passes, in order (`--pass-pipeline`, or [`crate::pipeline::PASSES`]).
    pub pipeline: &'a [String],
    /// Whether the whole program runs too, kernel after kernel, after the fusions.
    pub whole_program: bool,
}

/// `--check` on a module: each fusion stage by stage (the report goes to `out`), then the
/// whole program against the evaluator on the reference when asked.
pub fn check_module(
    source: &SourceFile,
    module: &HloModule,
    what: &ModuleCheck,
    options: &CheckOptions,
    out: &mut dyn Write,
) -> Result<(), String> {
    if options.inputs == 0 {
        return Err("error: --check=N needs at least one input".to_string());
    }
    let mut failed = Vec::new();
    for &id in what.fusions {
        let passes = passes_to_check(what.pipeline)?;
        if !check_fusion_with(source, module, id, passes, options, out)? {
            failed.push(module.computation(id).name.clone());
        }
    }
    if !failed.is_empty() {
        return Err(format!(
            "error: --check failed for fusion(s) {}",
            failed.join(", ")
        ));
    }
    let whole = what.whole_program;
    if whole
        && !crate::program::check_program(
            source,
            what.reference,
            module,
            (options.inputs, &options.arch),
            out,
        )?
    {
        return Err("error: --check failed for the program as a whole".to_string());
    }
    Ok(())
}
