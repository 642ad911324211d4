//! `convert-pure-call-ops`: every `xla_gpu.pure_call` becomes a `func.call` of the same
//! callee with the same operands and results, as XLA's `ConvertPureCallOpsPass` does.
//!
//! `pure_call` says the call has no side effects, so `cse` may merge equal calls and loop
//! passes may hoist them; XLA drops that knowledge once those passes have run, because the
//! LLVM lowering only knows `func.call`. Attributes other than the callee (`noinline`) are
//! kept on the call.

use ir::dialects::{func, xla_gpu};
use ir::{Diagnostic, InsertPoint, Module};

use crate::pass::Pass;
use crate::rewrite::replace_op;

pub struct ConvertPureCallOps;

impl Pass for ConvertPureCallOps {
    crate::pass_names!(
        "convert-pure-call-ops",
        "Turn xla_gpu.pure_call into func.call (XLA's ConvertPureCallOps)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        for op in m.ops_named(xla_gpu::PURE_CALL) {
            let callee = m
                .prop(op, "callee")
                .and_then(ir::Attribute::as_symbol)
                .expect("the verifier checks a pure_call's callee")
                .to_string();
            let args: Vec<_> = m.operands(op).collect();
            let results: Vec<_> = m.results(op).map(|r| m.value_type(r)).collect();
            let call = func::build_call(m, InsertPoint::Before(op), &callee, &args, &results);
            m.set_loc(call, m.loc(op));
            for attr in m.attrs(op).to_vec() {
                m.set_attr(call, attr.name.as_str(), attr.value);
            }
            let results: Vec<_> = m.results(call).collect();
            replace_op(m, op, &results);
        }
        Ok(())
    }
}
