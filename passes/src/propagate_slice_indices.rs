//! `propagate-slice-indices`: the kernel's buffer attributes reach the functions it calls, as
//! XLA's `PropagateSliceIndicesPass` does before `lower-tensors`.
//!
//! XLA marks the entry function (`xla.entry`) of a fusion's module; each of its tensor
//! arguments says which buffer slice it is (`xla.slice_index`), whether the kernel only reads
//! it (`xla.invariant`) and whether it is read once (`xla.streamed_once`). The functions the
//! emitters make for subgraphs take the kernel's tensors first, in the kernel's order, so the
//! leading tensor arguments of every other function get the entry argument's attributes at the
//! same position; the first argument that is not a tensor ends them. A module without an
//! entry function is an error, as in XLA.

use ir::dialects::{arg_attr, func, set_arg_attr};
use ir::{Diagnostic, Module};

use crate::pass::{Pass, op_error};

/// The argument attributes copied from the entry function.
const KERNEL_ARGUMENT_ATTRS: &[&str] = &["xla.slice_index", "xla.invariant", "xla.streamed_once"];

pub struct PropagateSliceIndices;

impl Pass for PropagateSliceIndices {
    crate::pass_names!(
        "propagate-slice-indices",
        "Give the leading tensor arguments of every function the entry function's slice index and invariance (XLA's PropagateSliceIndices)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let functions = func::functions(m);
        let Some(&entry) = functions
            .iter()
            .find(|&&f| m.attr(f, "xla.entry").is_some())
        else {
            return Err(op_error(
                m,
                m.top(),
                "no entry function (marked xla.entry) found",
            ));
        };
        for f in functions.into_iter().filter(|&f| f != entry) {
            let Some((inputs, _)) = func::function_type(m, f) else {
                continue;
            };
            for (i, ty) in inputs.iter().enumerate() {
                if !ty.is_tensor() {
                    break;
                }
                for &name in KERNEL_ARGUMENT_ATTRS {
                    if let Some(value) = arg_attr(m, entry, i, name).cloned() {
                        set_arg_attr(m, f, inputs.len(), i, name, value);
                    }
                }
            }
        }
        Ok(())
    }
}
