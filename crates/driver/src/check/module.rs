//! `--check` on a whole module: each fusion stage by stage, then the program as a whole.

use std::io::Write;

use hlo::{ComputationId, HloModule, SourceFile};

use super::{CheckOptions, check_fusions, passes_to_check};
use crate::reproducer::lock;
use crate::runner::Observers;

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
/// whole program against the evaluator on the reference when asked, all from one pipeline
/// run, which `observers` (`--dump-after-each-pass`...) see too.
pub fn check_module(
    source: &SourceFile,
    module: &HloModule,
    what: &ModuleCheck,
    options: &CheckOptions,
    observers: Observers,
    out: &mut dyn Write,
) -> Result<(), String> {
    if options.inputs == 0 {
        return Err("error: --check=N needs at least one input".to_string());
    }
    let passes = passes_to_check(what.pipeline)?;
    let checked = check_fusions(
        source,
        module,
        what.fusions,
        passes,
        options,
        observers,
        out,
    )?;
    if !checked.failed.is_empty() {
        let names: Vec<&str> = checked.failed.iter().map(|(f, _)| f.as_str()).collect();
        let mut message = format!("error: --check failed for fusion(s) {}", names.join(", "));
        if let Some(r) = &options.crash_reproducer {
            for (fusion, stage) in &checked.failed {
                let failure = format!("error: --check failed for fusion '{fusion}'");
                let reproducer =
                    lock(&r.record).failed_check(fusion, *stage, options.inputs, &failure);
                match reproducer {
                    Some(reproducer) => {
                        let path = reproducer.write(&r.dir)?;
                        message.push_str(&format!(
                            "\nnote: crash reproducer of pass '{}' on fusion '{fusion}' written to {}",
                            reproducer.pass,
                            path.display()
                        ));
                    }
                    None => message.push_str(&format!(
                        "\nnote: no crash reproducer for fusion '{fusion}': the stage that failed is not one of our passes (the emitter or an LLVM stage)"
                    )),
                }
            }
        }
        return Err(message);
    }
    let linked = (&checked.kernels[..], checked.linked.as_deref());
    if what.whole_program
        && !crate::program::check_program(
            source,
            (what.reference, module),
            linked,
            options.inputs,
            out,
        )?
    {
        return Err("error: --check failed for the program as a whole".to_string());
    }
    Ok(())
}
