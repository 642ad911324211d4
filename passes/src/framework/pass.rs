//! The [`Pass`] trait: one named transformation of a whole [`Module`].

use ir::{Diagnostic, Module, OpId};
use std::borrow::Cow;
use std::fmt;

/// A transformation of a module, run by the [`PassManager`](crate::PassManager) and by
/// `hlo-opt --<name>`.
///
/// A pass either succeeds, leaving IR the verifier accepts (the manager checks), or fails with
/// a diagnostic located at the op it could not handle (see [`op_error`]).
pub trait Pass {
    /// The kebab-case name: the `hlo-opt` flag (`--canonicalize`), the `--pass-pipeline` entry
    /// and the registry key.
    fn name(&self) -> &'static str;

    /// One line for `hlo-opt --help`.
    fn description(&self) -> &'static str;

    /// The name IR dumps show before the flag name, as MLIR shows its pass class
    /// (`// -----// IR Dump After Canonicalizer (canonicalize) //----- //`). Passes that mirror
    /// an MLIR pass return MLIR's class name; the default is the name in CamelCase
    /// (`lower-tensors` → `LowerTensors`).
    fn display_name(&self) -> Cow<'static, str> {
        Cow::Owned(camel_case(self.name()))
    }

    /// Transforms `module` in place.
    fn run(&self, module: &mut Module) -> Result<(), Diagnostic>;

    /// Sets the pass option `name` (`hlo-opt --optimize-loops=max_unroll_factor=16`, or
    /// `optimize-loops{max_unroll_factor=16}` in a pipeline, as MLIR spells pass options).
    /// Passes without options refuse every name.
    fn set_option(&mut self, name: &str, value: &str) -> Result<(), String> {
        let _ = value;
        Err(format!("the pass '{}' has no option '{name}'", self.name()))
    }
}

/// Declares, inside an `impl Pass`, the pass's [`Pass::name`] and its one-line
/// [`Pass::description`], so that a pass file reads as its two strings and its `run`:
/// `impl Pass for Cse { pass_names!("cse", "Eliminate ..."); fn run(..) {..} }`.
#[macro_export]
macro_rules! pass_names {
    ($name:literal, $description:literal) => {
        fn name(&self) -> &'static str {
            $name
        }

        fn description(&self) -> &'static str {
            $description
        }
    };
}

/// `lower-xla-gpu-to-scf` → `LowerXlaGpuToScf`.
fn camel_case(kebab: &str) -> String {
    kebab
        .split('-')
        .flat_map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
        })
        .collect()
}

/// An error located at `op`, worded like the verifier's: `'<op name>' op <message>`.
pub fn op_error(module: &Module, op: OpId, message: impl fmt::Display) -> Diagnostic {
    Diagnostic::new(
        module.file.clone(),
        module.loc(op),
        format!("'{}' op {message}", module.name(op)),
    )
}

/// `text` parsed, run through `pass` and verified: where the passes' unit tests start.
#[cfg(test)]
pub(crate) fn run_verified(pass: &dyn Pass, text: &str) -> Module {
    let mut m = ir::parse_module(text).unwrap();
    pass.run(&mut m).unwrap();
    m.verify().unwrap();
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_display_name_is_camel_case() {
        assert_eq!(camel_case("lower-xla-gpu-to-scf"), "LowerXlaGpuToScf");
        assert_eq!(camel_case("inline"), "Inline");
    }
}
