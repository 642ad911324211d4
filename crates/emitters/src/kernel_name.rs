//! Kernel names: each fusion's kernel is an entry named after the fusion, as in XLA.
//!
//! PTX identifiers are `[A-Za-z][A-Za-z0-9_$]*` or `[_$%][A-Za-z0-9_$]+`, and one PTX module
//! holds every kernel of an input, so a fusion's name is made an identifier (XLA's
//! `SanitizeFunctionName`: every other character becomes `_`, a leading digit gets a `_`
//! before it) and then unique in the module (`_1`, `_2`, ... after a name already given, in
//! the module's fusion order). Names that libdevice's functions (`__nv_*`) or LLVM's
//! intrinsics use get a `k` before them, so a kernel never takes a callee's name.
//! The names depend on the whole module, not on which fusions are compiled: `--fusion`
//! gives a kernel the name it has in the whole module's output.
//!
//! XLA emits each fusion into a module of its own whose entry is `@main` (its emitter
//! tests and its dumps show that name) and names the kernel after the fusion instruction
//! rather than the computation it calls. With [`Choices::Xla`] a module of one kernel calls
//! it `main`, and the kernels of a module of several, which share one output module, take
//! their fusion instruction's name.

use std::collections::{HashMap, HashSet};

use hlo::{ComputationId, HloModule, Opcode};

use crate::Choices;

/// The kernel name of every fusion of `module` ([`crate::fusions`]), as we or XLA name it.
pub fn kernel_names(module: &HloModule, choices: Choices) -> HashMap<ComputationId, String> {
    let mut given = HashSet::new();
    let mut names = HashMap::new();
    let fusions = crate::fusions(module);
    for &id in &fusions {
        let base = match choices {
            Choices::Xla if fusions.len() == 1 => "main".to_string(),
            Choices::Xla => identifier(fusion_instruction(module, id).unwrap_or(
                // Unreachable: every fusion but a bare entry is called by a fusion.
                &module.computation(id).name,
            )),
            Choices::Tuned => identifier(&module.computation(id).name),
        };
        let mut name = base.clone();
        let mut k = 0;
        while !given.insert(name.clone()) {
            k += 1;
            name = format!("{base}_{k}");
        }
        names.insert(id, name);
    }
    names
}

/// The name of the first `fusion` instruction that calls computation `id`.
fn fusion_instruction(module: &HloModule, id: ComputationId) -> Option<&str> {
    let calls = |i: &&hlo::Instruction| {
        i.opcode == Opcode::Fusion && i.called("calls").is_some_and(|c| c.id == id)
    };
    module
        .computations
        .iter()
        .find_map(|c| c.instructions.iter().find(calls))
        .map(|i| i.name.as_str())
}

/// `name` as a PTX identifier that no callee of a kernel uses.
pub fn identifier(name: &str) -> String {
    let mut out = crate::partition::sanitize(name);
    // `_` alone is not a PTX identifier (`[_$%]` needs a character after it).
    if out == "_" {
        out.push('_');
    }
    if out.starts_with("__nv") || out.starts_with("llvm") {
        out.insert(0, 'k');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::identifier;

    #[test]
    fn identifiers_are_ptx_identifiers() {
        assert_eq!(identifier("fusion.1"), "fusion_1");
        assert_eq!(identifier("loop-add"), "loop_add");
        assert_eq!(identifier("1st"), "_1st");
        assert_eq!(identifier("_"), "__");
        assert_eq!(identifier("__nv_expf"), "k__nv_expf");
        assert_eq!(identifier("llvm_fma"), "kllvm_fma");
        assert_eq!(identifier("ünï"), "_n_");
        assert_eq!(identifier(""), "__");
    }
}
