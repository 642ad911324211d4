//! `inline-fusions`: replaces every `fusion` by a copy of its fused computation, so that the
//! passes after it decide the kernels anew. It only finds work under `hlo-emit --fuse` on a
//! module that is already fused (by default the pipeline runs on unfused modules alone):
//! XLA's printed modules and XLA's classic softmax and layer norm, three kernels that read
//! the input three times, become one row-normalization kernel here. Multi-output fusions
//! leave `get-tuple-element(tuple(...))` pairs, which `algebraic-simplifier` folds.

use hlo::{Diagnostic, HloModule};

use crate::inline_calls::{FUSIONS, inline_all};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    inline_all(module, FUSIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusions_become_their_bodies_and_tuples_stay_for_the_simplifier() {
        let mut module = hlo::load(
            "t.hlo",
            b"HloModule m\n\
              fused {\n  a = f32[4] parameter(0)\n  n = f32[4] negate(a)\n  e = f32[4] exponential(a)\n  ROOT t = (f32[4], f32[4]) tuple(n, e)\n}\n\
              ENTRY main {\n  x = f32[4] parameter(0)\n  f = (f32[4], f32[4]) fusion(x), kind=kLoop, calls=fused\n  g = f32[4] get-tuple-element(f), index=1\n  ROOT y = f32[4] add(g, x)\n}\n",
        )
        .unwrap()
        .1;
        assert!(run(&mut module).unwrap());
        hlo::verify_module(&module).unwrap();
        let ops: Vec<String> = module
            .entry_computation()
            .instructions
            .iter()
            .map(|i| i.opcode.to_string())
            .collect();
        assert_eq!(
            ops,
            [
                "parameter",
                "negate",
                "exponential",
                "tuple",
                "get-tuple-element",
                "add"
            ]
        );
        assert!(!run(&mut module).unwrap(), "a second run finds no fusion");
    }
}
