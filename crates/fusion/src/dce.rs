//! `hlo-dce`: removes the pure instructions of the entry that nothing live reads, as XLA's
//! `HloDCE`. A JAX program can compute what it never returns (a value traced for a branch
//! not taken, an intermediate left after a rewrite); left in, the fusion pass would give
//! it a kernel, or make it an extra output of a sibling's kernel, and the GPU would compute
//! it for nothing. Live are the root, the parameters, every impure instruction and what
//! they read ([`crate::remove_dead_code`]).

use hlo::{Diagnostic, HloModule};

use crate::remove_dead_code;

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    Ok(crate::rewrite_control_computations(module, |c| {
        let before = c.instructions.len();
        remove_dead_code(c);
        c.instructions.len() != before
    }))
}
