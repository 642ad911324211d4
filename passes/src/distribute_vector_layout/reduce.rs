//! `vector.multi_reduction` and `vector.transpose` on laid-out vectors: the steps between
//! threads (warp shuffles) and between subgroups (shared memory).
//!
//! A reduction combines, in order: each thread's own elements along the reduced
//! dimensions; the lanes that differ only in a reduced dimension's thread id, by a
//! `gpu.shuffle xor` butterfly (which leaves every lane of a group with the same value, as
//! the combiners are commutative: thread tiles and strides must be powers of two, elements 32
//! bits); the subgroups that differ only in a reduced dimension's subgroup id, through a
//! shared tile of one row per subgroup that every thread reads back in the same order; and
//! last the accumulator. A transpose writes the source's elements to a shared tile in its
//! layout and reads the result's elements in theirs.

use super::{Distributor, SUBGROUP_SIZE, element_index, is_vector, local_elements, project};
use crate::pass::op_error;
use indexing::nested_layout::NestedLayout;
use indexing::{AffineExpr, IndexingMap, Interval, Variable, cst, dim};
use ir::dialects::arith;
use ir::dialects::{gpu, vector, xla_gpu};
use ir::{Builder, Diagnostic, InsertPoint, OpId, Type, Value};

/// The `arith` op combining two values of `elem` for reduction `kind`.
fn combiner(kind: &str, elem: Type) -> Option<&'static str> {
    let float = elem.is_float();
    Some(match (kind, float) {
        ("add", true) => arith::ADDF,
        ("add", false) => arith::ADDI,
        ("mul", true) => arith::MULF,
        ("mul", false) => arith::MULI,
        ("maximumf", true) => arith::MAXIMUMF,
        ("minimumf", true) => arith::MINIMUMF,
        ("maxnumf", true) => arith::MAXNUMF,
        ("minnumf", true) => arith::MINNUMF,
        ("maxsi", false) => arith::MAXSI,
        ("minsi", false) => arith::MINSI,
        ("maxui", false) => arith::MAXUI,
        ("minui", false) => arith::MINUI,
        ("and", false) => arith::ANDI,
        ("or", false) => arith::ORI,
        ("xor", false) => arith::XORI,
        _ => return None,
    })
}

impl Distributor<'_> {
    pub(super) fn multi_reduction(&mut self, op: OpId) -> Result<Value, Diagnostic> {
        let m = &*self.m;
        let (source, acc, result) = (m.operand(op, 0), m.operand(op, 1), m.result(op, 0));
        let layout = self.layouts[&source].clone();
        let dims = vector::reduction_dims(m, op);
        let elem = m.value_type(source).element_type_or_self();
        let kind = vector::reduction_kind(m, op).unwrap_or("").to_string();
        let Some(combine) = combiner(&kind, elem) else {
            return Err(op_error(
                m,
                op,
                format!("unsupported: reduction kind '{kind}'"),
            ));
        };
        let reduced = |d: usize| dims.contains(&(d as i64));
        // Lanes to combine: per reduced dimension, the shuffle offsets of its thread ids. An
        // xor flips bits of the lane id: every distributed dimension's thread id must be bits
        // of its own (power-of-two tiles and strides, which `distributable` keeps apart).
        let across = |d: usize| layout.thread_tile[d] > 1;
        if (0..layout.rank()).any(|d| reduced(d) && across(d)) {
            for d in (0..layout.rank()).filter(|&d| across(d)) {
                let (tile, stride) = (layout.thread_tile[d], layout.thread_strides[d]);
                if tile.count_ones() != 1
                    || stride.count_ones() != 1
                    || elem.bit_width() != Some(32)
                {
                    return Err(op_error(
                        m,
                        op,
                        format!(
                            "unsupported: a reduction across threads needs power-of-two thread \
                             tiles and strides and 32-bit elements (dimension {d}: tile {tile}, \
                             stride {stride}, '{elem}')"
                        ),
                    ));
                }
            }
        }
        let mut offsets = Vec::new();
        for d in (0..layout.rank()).filter(|&d| reduced(d) && across(d)) {
            let (tile, stride) = (layout.thread_tile[d], layout.thread_strides[d]);
            offsets.extend((0..tile.trailing_zeros()).map(|k| stride << k));
        }
        // 1. Each thread's own elements, grouped by their kept local position.
        let per_thread = self.get(source);
        let locals = local_elements(&layout);
        let kept_shape: Vec<i64> = (0..layout.rank())
            .filter(|&d| !reduced(d))
            .map(|d| layout.thread_shape()[d])
            .collect();
        let mut partials: Vec<Option<Value>> =
            vec![None; kept_shape.iter().product::<i64>() as usize];
        for (k, local) in locals.iter().enumerate() {
            let shape = layout.thread_shape();
            let slot = (0..layout.rank())
                .filter(|&d| !reduced(d))
                .fold(0i64, |s, d| {
                    let (b, o, e) = local[d];
                    s * shape[d] + (b * layout.outer_tile[d] + o) * layout.element_tile[d] + e
                }) as usize;
            let x = self.element(op, per_thread, k);
            partials[slot] = Some(match partials[slot] {
                None => x,
                Some(p) => Builder::before(self.m, op).binary(combine, p, x),
            });
        }
        let mut partials: Vec<Value> = partials
            .into_iter()
            .map(|p| p.expect("every slot"))
            .collect();
        // 2. Across the lanes of a reduced dimension.
        for &offset in &offsets {
            let mut b = Builder::before(self.m, op);
            let (offset, width) = (
                b.int(offset.into(), Type::I32),
                b.int(SUBGROUP_SIZE.into(), Type::I32),
            );
            for p in &mut partials {
                let ip = InsertPoint::Before(op);
                let (other, _) = gpu::build_shuffle(self.m, ip, "xor", *p, offset, width);
                *p = Builder::before(self.m, op).binary(combine, *p, other);
            }
        }
        // 3. Across the subgroups of a reduced dimension.
        let subgroup_dims: Vec<usize> = (0..layout.rank())
            .filter(|&d| {
                reduced(d) && layout.subgroup_tile[d] > 1 && layout.subgroup_strides[d] > 0
            })
            .collect();
        if !subgroup_dims.is_empty() {
            partials =
                self.across_subgroups(op, &layout, &dims, &subgroup_dims, partials, combine)?;
        }
        // 4. The accumulator, then the per-thread result.
        let acc = self.get(acc);
        if is_vector(self.m.value_type(result)) {
            let mut out = Vec::with_capacity(partials.len());
            for (k, p) in partials.into_iter().enumerate() {
                let a = self.element(op, acc, k);
                out.push(Builder::before(self.m, op).binary(combine, a, p));
            }
            let ty = self.thread_type(result);
            Ok(self.assemble(op, ty, &out))
        } else {
            Ok(Builder::before(self.m, op).binary(combine, acc, partials[0]))
        }
    }

    /// Step 3: every thread writes its partial results to its subgroup's row of a shared
    /// tile (column: the element's index in the reduced vector), and after a barrier combines
    /// the rows of the subgroups that differ from its own only in `subgroup_dims`' ids, in
    /// ascending order of those ids.
    fn across_subgroups(
        &mut self,
        op: OpId,
        layout: &NestedLayout,
        dims: &[i64],
        subgroup_dims: &[usize],
        partials: Vec<Value>,
        combine: &str,
    ) -> Result<Vec<Value>, Diagnostic> {
        let elem = self.m.value_type(partials[0]);
        let kept = project(layout, dims);
        let kept_shape = kept.shape();
        let columns: i64 = kept_shape.iter().product();
        let rows = self.threads / SUBGROUP_SIZE;
        let at = InsertPoint::Before(op);
        let tile = Type::tensor(&[rows, columns], elem);
        let mut shared = xla_gpu::build_allocate_shared(self.m, at, tile);
        // The column of each partial: its kept element's linear index.
        let columns_of: Vec<AffineExpr> = local_elements(&kept)
            .into_iter()
            .map(|local| {
                (0..kept.rank()).fold(cst(0), |acc, d| {
                    acc * kept_shape[d] + element_index(&kept, d, local[d])
                })
            })
            .collect();
        let row = dim(0).floor_div(SUBGROUP_SIZE);
        let mut exprs = vec![row.clone()];
        exprs.extend(columns_of.iter().cloned());
        let places = self.thread_map(op, exprs);
        for (k, &p) in partials.iter().enumerate() {
            shared =
                Builder::before(self.m, op).insert_element(p, shared, &[places[0], places[k + 1]]);
        }
        shared = xla_gpu::build_sync_threads(self.m, at, &[shared])[0];
        // The rows to read: the own row with each combination of the reduced ids.
        let mut combos = vec![Vec::new()];
        for &d in subgroup_dims {
            combos = combos
                .into_iter()
                .flat_map(|c: Vec<i64>| {
                    (0..layout.subgroup_tile[d]).map(move |id| {
                        let mut c = c.clone();
                        c.push(id);
                        c
                    })
                })
                .collect();
        }
        // The row holding a combination: the canonical subgroup with the thread's own kept
        // ids and the combination's reduced ones (`Σ id_d · stride_d`; replicas of it, where
        // strides leave gaps, hold the same values, and the canonical one always exists).
        let kept_ids = (0..layout.rank())
            .filter(|&d| !subgroup_dims.contains(&d) && layout.subgroup_tile[d] > 1)
            .fold(cst(0), |r, d| {
                let (tile, stride) = (layout.subgroup_tile[d], layout.subgroup_strides[d]);
                r + row.clone().floor_div(stride).modulo(tile) * stride
            });
        let row_exprs = combos
            .iter()
            .map(|combo| {
                subgroup_dims
                    .iter()
                    .zip(combo)
                    .fold(kept_ids.clone(), |r, (&d, &id)| {
                        r + cst(id * layout.subgroup_strides[d])
                    })
            })
            .collect();
        let read_rows = self.thread_map(op, row_exprs);
        let mut out = Vec::with_capacity(partials.len());
        for k in 0..partials.len() {
            let mut value: Option<Value> = None;
            for &r in &read_rows {
                let x = Builder::before(self.m, op).extract(shared, &[r, places[k + 1]]);
                value = Some(match value {
                    None => x,
                    Some(v) => Builder::before(self.m, op).binary(combine, v, x),
                });
            }
            out.push(value.expect("at least one row"));
        }
        self.release_in_loops(op, shared);
        Ok(out)
    }

    /// `apply_indexing` of the thread id alone, one result per expression.
    fn thread_map(&mut self, op: OpId, exprs: Vec<AffineExpr>) -> Vec<Value> {
        let dims = vec![Variable::new("tid", Interval::new(0, self.threads - 1))];
        let map = IndexingMap::new(dims, Vec::new(), Vec::new(), exprs).simplified();
        xla_gpu::build_apply_indexing(self.m, InsertPoint::Before(op), map, &[self.tid], &[])
    }

    /// Through shared memory: the source's elements written in its layout, read back in the
    /// result's.
    pub(super) fn transpose(&mut self, op: OpId) -> Result<Value, Diagnostic> {
        let m = &*self.m;
        let (source, result) = (m.operand(op, 0), m.result(op, 0));
        let (from, to) = (self.layouts[&source].clone(), self.layouts[&result].clone());
        let permutation = vector::permutation(m, op);
        let source_ty = m.value_type(source);
        let elem = source_ty.element_type_or_self();
        let shape = source_ty.shape().unwrap_or(&[]).to_vec();
        let at = InsertPoint::Before(op);
        let mut shared = xla_gpu::build_allocate_shared(self.m, at, Type::tensor(&shape, elem));
        let per_thread = self.get(source);
        for (k, local) in local_elements(&from).into_iter().enumerate() {
            let exprs = (0..from.rank())
                .map(|d| element_index(&from, d, local[d]))
                .collect();
            let indices = self.thread_map(op, exprs);
            let x = self.element(op, per_thread, k);
            shared = Builder::before(self.m, op).insert_element(x, shared, &indices);
        }
        shared = xla_gpu::build_sync_threads(self.m, at, &[shared])[0];
        let mut elements = Vec::new();
        for local in local_elements(&to) {
            let mut exprs = vec![cst(0); to.rank()];
            for (k, &p) in permutation.iter().enumerate() {
                exprs[p as usize] = element_index(&to, k, local[k]);
            }
            let indices = self.thread_map(op, exprs);
            elements.push(Builder::before(self.m, op).extract(shared, &indices));
        }
        self.release_in_loops(op, shared);
        let ty = self.thread_type(result);
        Ok(self.assemble(op, ty, &elements))
    }

    /// After the reads of a shared tile: inside a loop or branch, a barrier too, so that a
    /// next iteration's writes to the tile (one allocation for every iteration) wait for
    /// every thread's reads. In the function's own block the kernel ends first.
    fn release_in_loops(&mut self, op: OpId, shared: Value) {
        let nested = self
            .m
            .parent_block(op)
            .and_then(|b| self.m.block_parent_op(b))
            .is_some_and(|parent| parent != self.f);
        if nested {
            xla_gpu::build_sync_threads(self.m, InsertPoint::Before(op), &[shared]);
        }
    }
}
