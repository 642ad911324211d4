//! The fusion pipeline: HLO-to-HLO passes run before partitioning, on modules that hold no
//! fusion yet (what `jax.jit(f).lower(x).as_text(dialect="hlo")` gives: XLA's input, before
//! any of its passes). Each pass is one file; the pipeline is the list below, in order, each
//! step with why it is there; the verifier runs after every step, and `hlo-emit
//! --dump-after-each-pass` prints the module after each.

mod dead_computations;
mod inline_calls;

use hlo::{Diagnostic, HloModule, Opcode};

/// An HLO-to-HLO pass: `Ok(true)` when it changed the module.
pub struct HloPass {
    /// The flag-style name (`inline-calls`).
    pub name: &'static str,
    /// The name in dump headers (`InlineCalls`), as MLIR prints pass names.
    pub display_name: &'static str,
    pub run: fn(&mut HloModule) -> Result<bool, Diagnostic>,
}

/// The passes, in order.
pub const PIPELINE: &[HloPass] = &[
    // JAX wraps every `jax.nn.*` function, `jnp.where`, `argmax`... in a `call`; the
    // emitters index through fusions, not calls. XLA's CallInliner runs first for the
    // same reason.
    HloPass {
        name: "inline-calls",
        display_name: "InlineCalls",
        run: inline_calls::run,
    },
    // The callees are now unreachable; leaving them would make `--emit=hlo` print dead
    // code and every later pass walk it.
    HloPass {
        name: "remove-dead-computations",
        display_name: "RemoveDeadComputations",
        run: dead_computations::run,
    },
];

/// Whether the pipeline runs by default: a module with an `HloModule` header (a whole
/// program) whose entry holds no fusion. A bare list of computations is XLA's emitter
/// test form, whose last computation already is one fusion body.
pub fn wants_fusion(module: &HloModule) -> bool {
    module.header.is_some()
        && !module
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .any(|i| i.opcode == Opcode::Fusion)
}

/// Runs the pipeline on `module`; `after(pass, module)` sees the module after each pass
/// that changed it. A pass that leaves a module the verifier rejects is a bug here, and is
/// reported as such (at the offending instruction, naming the pass).
pub fn run_pipeline(
    module: &mut HloModule,
    mut after: impl FnMut(&HloPass, &HloModule),
) -> Result<(), Diagnostic> {
    for pass in PIPELINE {
        if (pass.run)(module)? {
            hlo::verify_module(module).map_err(|mut d| {
                d.notes.push(format!(
                    "the module is invalid after the fusion pass '{}' (a bug in hlo-emit)",
                    pass.name
                ));
                d
            })?;
            after(pass, module);
        }
    }
    Ok(())
}
