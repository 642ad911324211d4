//! `lower-xla-shared`: XLA's work-item form back to the threads it stands for, as XLA's
//! `LowerXlaSharedPass` does for its GPU backend.
//!
//! XLA's newer emitters write a kernel's threads as `scf.forall (%i, ..) in (N, ..)
//! shared_outs(%o = %init)`, the body writing its results into the shared outputs and the
//! terminator putting each output back whole (`tensor.parallel_insert_slice %r into
//! %o[0, ..][N, ..][1, ..]`). On a GPU the loop is the block's threads: its induction
//! variables become `gpu.thread_id x`, `y`, `z` (with their `xla.range`), the body runs
//! once in their place with the shared outputs replaced by their initial tensors, and the
//! loop's results are the tensors the terminator inserts. (`xla.workgroup_id`, the other
//! op of the form, is read as `gpu.block_id` already.)
//!
//! Refused, at the loop: more than three induction variables, a lower bound that is not 0
//! or a step that is not 1, a dynamic bound, and a terminator write that is not the whole
//! shared output — forms XLA's pass does not lower either.

use ir::dialects::{gpu, scf, tensor};
use ir::{Diagnostic, InsertPoint, Module, OpId, Value};

use crate::pass::{Pass, op_error};
use crate::rewrite::{inline_block_before, replace_op};

pub struct LowerXlaShared;

impl Pass for LowerXlaShared {
    crate::pass_names!(
        "lower-xla-shared",
        "Lower XLA's work-item form (scf.forall over the block's threads) to gpu.thread_id (XLA's LowerXlaShared)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        for op in m.ops_named(scf::FORALL) {
            check(m, op)?;
        }
        // Inner loops first, so that an outer body never moves a loop not yet lowered.
        for op in m.ops_named(scf::FORALL).into_iter().rev() {
            lower(m, op)?;
        }
        Ok(())
    }
}

fn check(m: &Module, op: OpId) -> Result<(), Diagnostic> {
    let upper = scf::static_bounds(m, op, "staticUpperBound");
    let normalized = scf::static_bounds(m, op, "staticLowerBound")
        .iter()
        .all(|&b| b == 0)
        && scf::static_bounds(m, op, "staticStep")
            .iter()
            .all(|&s| s == 1);
    if upper.len() > gpu::DIMENSIONS.len() {
        let message = format!(
            "unsupported: {} induction variables (a block's threads have three dimensions)",
            upper.len()
        );
        return Err(op_error(m, op, message));
    }
    if !normalized || upper.iter().any(|&u| u <= 0) {
        return Err(op_error(
            m,
            op,
            "unsupported: only loops from 0 by 1 to constant bounds are the block's threads",
        ));
    }
    Ok(())
}

fn lower(m: &mut Module, op: OpId) -> Result<(), Diagnostic> {
    let upper = scf::static_bounds(m, op, "staticUpperBound");
    let body = m
        .entry_block(m.region(op, 0))
        .expect("the verifier checks the body");
    let terminator = m.last_op(body).expect("the verifier checks the terminator");
    let shared: Vec<Value> = m.block_args(body)[upper.len()..].to_vec();
    let inits: Vec<Value> = m.operand_vec(op)[m.num_operands(op) - shared.len()..].to_vec();
    let results = inserted_results(m, op, terminator, &shared)?;
    let at = InsertPoint::Before(op);
    let mut args: Vec<Value> = upper
        .iter()
        .zip(gpu::DIMENSIONS)
        .map(|(&count, axis)| gpu::build_ranged_id(m, at, gpu::THREAD_ID, axis, count))
        .collect();
    args.extend(&inits);
    inline_block_before(m, body, op, &args);
    // The inserted tensors were computed from the shared outputs, now the initial tensors.
    let results: Vec<Value> = results
        .into_iter()
        .map(|v| shared.iter().position(|&s| s == v).map_or(v, |i| inits[i]))
        .collect();
    replace_op(m, op, &results);
    Ok(())
}

/// For each shared output, in order, the tensor the terminator writes into it whole.
fn inserted_results(
    m: &Module,
    op: OpId,
    terminator: OpId,
    shared: &[Value],
) -> Result<Vec<Value>, Diagnostic> {
    let block = m.entry_block(m.region(terminator, 0));
    let writes: Vec<OpId> = block.map(|b| m.block_ops(b).collect()).unwrap_or_default();
    shared
        .iter()
        .map(|&out| {
            let write = writes
                .iter()
                .copied()
                .find(|&w| m.is(w, tensor::PARALLEL_INSERT_SLICE) && m.operand(w, 1) == out)
                .ok_or_else(|| op_error(m, op, "a shared output is never written"))?;
            let shape = m.value_type(out).shape().unwrap_or(&[]).to_vec();
            if !slice_is_whole(m, write, &shape) {
                return Err(op_error(
                    m,
                    write,
                    "unsupported: a parallel write of part of a shared output (only whole outputs are lowered)",
                ));
            }
            Ok(m.operand(write, 0))
        })
        .collect()
}

/// Whether a `tensor.parallel_insert_slice` writes its destination whole: static offsets
/// 0, sizes the destination's shape, strides 1.
fn slice_is_whole(m: &Module, write: OpId, shape: &[i64]) -> bool {
    let ints = |prop| ir::dialects::dense_ints(m.prop(write, prop)).unwrap_or_default();
    m.num_operands(write) == 2
        && ints("static_offsets").iter().all(|&o| o == 0)
        && ints("static_sizes") == shape
        && ints("static_strides").iter().all(|&s| s == 1)
}
