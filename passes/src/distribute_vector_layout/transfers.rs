//! Transfers between tensors and laid-out vectors: each thread reads or writes its own
//! elements at the indices its layout gives.
//!
//! A thread's elements come in runs: the `element_tile` of the vector's last dimension (in
//! pieces of at most 128 bits), consecutive in the thread's flat vector and in the tensor's
//! minor dimension (the transfer's map is the minor identity). Each run is an `scf.for` over its elements with
//! one `tensor.extract` (or `tensor.insert`) at `apply_indexing(tid, offsets, e)`: the loop
//! `vectorize-loads-stores` turns into one vector access where the run is a power of two
//! the offsets prove aligned, and `unroll-loops` unrolls otherwise.

use super::{Distributor, element_index, local_elements};
use crate::pass::op_error;
use indexing::nested_layout::NestedLayout;
use indexing::{AffineExpr, IndexingMap, Interval, Variable, dim};
use ir::dialects::func;
use ir::dialects::{scf, vector, xla_gpu};
use ir::{Attribute, Builder, Diagnostic, InsertPoint, OpId, Scalar, Type, Value};

/// Where a transfer is: the indices of the tensor dimensions the vector does not walk, and
/// for each one it walks, the offset and the dimension's size.
type TransferPlace = (Vec<Value>, Vec<(Value, i64)>);

/// One run of a thread's elements: the flat position of its first element and, per
/// dimension, that element's `(batch, outer, element)` (the last dimension's element 0).
struct Run {
    first: usize,
    local: Vec<(i64, i64, i64)>,
}

/// The widest access a GPU thread makes: 128 bits.
const MAX_ACCESS_BITS: i64 = 128;

/// The length of a run of `elem`: the last dimension's element tile, halved while its
/// elements take more than [`MAX_ACCESS_BITS`] (`vectorize-loads-stores` makes no wider
/// access).
fn run_length(layout: &NestedLayout, elem: Type) -> i64 {
    let bits = i64::from(elem.bit_width().unwrap_or(32)).max(8);
    let mut length = layout.element_tile[layout.rank() - 1];
    while length % 2 == 0 && length * bits > MAX_ACCESS_BITS {
        length /= 2;
    }
    length
}

/// The runs of `layout`'s local elements along the last dimension, `length` elements each,
/// in flat order.
fn runs(layout: &NestedLayout, length: i64) -> Vec<Run> {
    let last = layout.rank() - 1;
    local_elements(layout)
        .into_iter()
        .enumerate()
        .filter(|(_, local)| local[last].2 % length == 0)
        .map(|(first, local)| Run { first, local })
        .collect()
}

impl Distributor<'_> {
    /// A transfer's tensor, its leading indices (not walked by the vector) and the bases of
    /// the walked dimensions with their sizes; refused unless in bounds with the minor
    /// identity map.
    fn transfer_parts(
        &self,
        op: OpId,
        tensor: Value,
        first_index: usize,
        rank: usize,
    ) -> Result<TransferPlace, Diagnostic> {
        let m = &*self.m;
        let tensor_rank = m.value_type(tensor).rank().unwrap_or(0);
        if rank > tensor_rank {
            return Err(op_error(
                m,
                op,
                format!(
                    "unsupported: a transfer of a rank-{rank} vector to a rank-{tensor_rank} tensor"
                ),
            ));
        }
        let (in_bounds, identity) = (
            vector::is_in_bounds(m, op),
            vector::has_minor_identity_map(m, op),
        );
        if !in_bounds || !identity {
            return Err(op_error(
                m,
                op,
                "unsupported: a transfer with a layout must be in bounds, with the minor identity map",
            ));
        }
        let shape = m.value_type(tensor).shape().unwrap_or(&[]).to_vec();
        if shape.iter().any(|&d| d < 0) {
            return Err(op_error(
                m,
                op,
                "unsupported: a transfer with a layout on a tensor of dynamic size",
            ));
        }
        let indices: Vec<Value> = m.operands(op).skip(first_index).take(shape.len()).collect();
        let lead = shape.len() - rank;
        let bases = indices[lead..]
            .iter()
            .zip(&shape[lead..])
            .map(|(&v, &s)| (v, s))
            .collect();
        Ok((indices[..lead].to_vec(), bases))
    }

    /// One run's loop: `scf.for %e = 0 to length` threading `init`, whose body `body`
    /// fills from the run's tensor indices and flat position (`e` added to both), returning
    /// what the body yields; the loop's result.
    #[allow(clippy::too_many_arguments)]
    fn run_loop(
        &mut self,
        op: OpId,
        layout: &NestedLayout,
        (lead, bases): (&[Value], &[(Value, i64)]),
        (run, length): (&Run, i64),
        init: Value,
        body: impl FnOnce(&mut Builder<'_>, &[Value], Value, Value) -> Value,
    ) -> Value {
        let last = layout.rank() - 1;
        let mut b = Builder::before(self.m, op);
        let (lb, ub, step) = (b.index(0), b.index(length), b.index(1));
        let (for_op, block) =
            scf::build_for(self.m, InsertPoint::Before(op), lb, ub, step, &[init]);
        let args = self.m.block_args(block).to_vec();
        let (e, carried) = (args[0], args[1]);
        // The indices: dims (tid, offsets.., e); the last dimension's index moves with e.
        let e_dim = 1 + bases.len();
        let mut dims = vec![Variable::new("tid", Interval::new(0, self.threads - 1))];
        dims.extend(
            bases.iter().enumerate().map(|(k, &(_, size))| {
                Variable::new(format!("base{k}"), Interval::new(0, size - 1))
            }),
        );
        dims.push(Variable::new("e", Interval::new(0, length - 1)));
        let results: Vec<AffineExpr> = (0..layout.rank())
            .map(|d| {
                let index = dim(d + 1) + element_index(layout, d, run.local[d]);
                if d == last { index + dim(e_dim) } else { index }
            })
            .collect();
        let map = IndexingMap::new(dims, Vec::new(), Vec::new(), results).simplified();
        let mut operands = vec![self.tid];
        operands.extend(bases.iter().map(|&(v, _)| v));
        operands.push(e);
        let at = InsertPoint::BlockEnd(block);
        let mut indices = lead.to_vec();
        indices.extend(xla_gpu::build_apply_indexing(
            self.m,
            at,
            map,
            &operands,
            &[],
        ));
        let position_map = IndexingMap::new(
            vec![Variable::new("e", Interval::new(0, length - 1))],
            Vec::new(),
            Vec::new(),
            vec![dim(0) + indexing::cst(run.first as i64)],
        );
        let position = xla_gpu::build_apply_indexing(self.m, at, position_map, &[e], &[])[0];
        let mut inner = Builder::at_end(self.m, block);
        let yielded = body(&mut inner, &indices, position, carried);
        scf::build_yield(self.m, block, &[yielded]);
        self.m.result(for_op, 0)
    }

    pub(super) fn transfer_read(&mut self, op: OpId) -> Result<Value, Diagnostic> {
        let (tensor, result) = (self.m.operand(op, 0), self.m.result(op, 0));
        let layout = self.layouts[&result].clone();
        let (lead, bases) = self.transfer_parts(op, tensor, 1, layout.rank())?;
        let ty = self.thread_type(result);
        let elem = ty.element_type_or_self();
        let zero = if elem.is_float() {
            Scalar::Float(ir::FloatValue(0.0))
        } else {
            Scalar::Int(0)
        };
        let mut v = Builder::before(self.m, op).constant(Attribute::dense_splat(ty, zero));
        let length = run_length(&layout, elem);
        for run in runs(&layout, length) {
            v = self.run_loop(
                op,
                &layout,
                (&lead, &bases),
                (&run, length),
                v,
                |b, indices, position, vec| {
                    let x = b.extract(tensor, indices);
                    let at = b.insertion_point();
                    vector::build_insert(
                        b.module,
                        at,
                        x,
                        vec,
                        &[vector::Position::Dynamic(position)],
                    )
                },
            );
        }
        Ok(v)
    }

    pub(super) fn transfer_write(&mut self, op: OpId) -> Result<Value, Diagnostic> {
        let (value, tensor) = (self.m.operand(op, 0), self.m.operand(op, 1));
        // Threads write their own elements: a later access to the tensor by another thread
        // (a read in another layout, an overlapping write) would need a barrier between
        // them, and writes of different threads to global memory are not ordered even then.
        let result = self.m.result(op, 0);
        if self.m.uses(result).any(|u| !self.m.is(u.op, func::RETURN)) {
            return Err(op_error(
                self.m,
                op,
                "unsupported: a tensor written by a distributed transfer and then used again \
                 (its threads' writes are ordered with no other access); return it",
            ));
        }
        let layout = self.layouts[&value].clone();
        let (lead, bases) = self.transfer_parts(op, tensor, 2, layout.rank())?;
        let per_thread = self.get(value);
        let mut out = self.get(tensor);
        let length = run_length(&layout, self.m.value_type(value).element_type_or_self());
        for run in runs(&layout, length) {
            out = self.run_loop(
                op,
                &layout,
                (&lead, &bases),
                (&run, length),
                out,
                |b, indices, position, t| {
                    let at = b.insertion_point();
                    let x = vector::build_extract(
                        b.module,
                        at,
                        per_thread,
                        &[vector::Position::Dynamic(position)],
                    );
                    b.insert_element(x, t, indices)
                },
            );
        }
        Ok(out)
    }
}
