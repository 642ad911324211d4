//! `distribute-vector-layout`: vector ops on whole n-d vectors, annotated with nested
//! layouts (seed 004), become each thread's share of the work, as IREE's vector
//! distribution does.
//!
//! **Layouts.** Every vector value of the function gets one nested layout:
//! * an op's result from the op's `xla_gpu.layout` attribute (the anchor; required on
//!   `vector.transpose`, whose result is laid out anew);
//! * elementwise `arith`/`math` ops share one layout between their vector operands and
//!   result, in either direction (a splat constant or a broadcast takes its user's);
//! * a `vector.multi_reduction`'s result and accumulator get the source's layout without the
//!   reduced dimensions (a scalar result is held by every thread).
//!
//! The rules run to a fixpoint; a vector left without a layout, or given two, is an error at
//! its op, before anything changes.
//!
//! **Threads.** The function runs as one block of `32 · subgroups` threads (`gpu.thread_id
//! x`, whose `xla.range` says how many; `subgroups` is the most any layout of the function
//! reaches): a subgroup is a warp of 32, the layout's `thread_id` is the lane (`tid mod 32`)
//! and `subgroup_id` the warp (`tid floordiv 32`).
//!
//! **Each thread's vector.** Under a layout a `vector<S>` becomes, in every thread, a
//! `vector<N>` with `N = ∏ batch · outer · element`: the seed's per-thread shape
//! (`vector<2x16>` for its 64x64 example) held flat, row-major, as the pipeline after this
//! pass lowers 1-d vectors. Local element `(b, o, e)` of dimension `d` is element
//! `(((sg_d · B + b) · O + o) · T + t_d) · E + e` of the whole vector
//! ([`NestedLayout::to_indexing_map`]).
//!
//! **Rewrites.**
//! * `vector.transfer_read`/`transfer_write` (in bounds, minor identity map, static sizes)
//!   → per run of a thread's contiguous elements, a loop of `tensor.extract`/`tensor.insert`
//!   at the index the layout gives (`transfers.rs`), which later passes make one vector
//!   access. Threads holding the same element (replicas: fewer ids than threads) write the
//!   same value; a written tensor may only be returned (another access would race with
//!   other threads' writes).
//! * Elementwise ops → the same op on the per-thread vectors; splat constants and
//!   broadcasts of scalars → per-thread splats.
//! * `vector.multi_reduction` and `vector.transpose` (`reduce.rs`): through warp shuffles and
//!   shared memory.
//!
//! Layouts must also suit the block (`distributable`): strides that nest, at most 1,024
//! threads and 1,024 elements a thread.
//!
//! What remains is ordinary per-thread IR for the rest of the pipeline
//! (`lower-xla-gpu-to-scf`, `flatten-tensors`, ..., `lower-to-llvm`).

mod reduce;
mod transfers;

use crate::pass::{Pass, op_error};
use indexing::nested_layout::NestedLayout;
use indexing::{AffineExpr, cst, dim};
use ir::dialects::arith;
use ir::dialects::func;
use ir::dialects::{gpu, vector};
use ir::intern::FxHashMap;
use ir::{Attribute, Builder, DenseValues, Diagnostic, InsertPoint, Module, OpId, Type, Value};

/// The pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct DistributeVectorLayout;

/// The attribute that gives an op's vector result its layout.
pub const LAYOUT_ATTR: &str = "xla_gpu.layout";

/// The threads of a subgroup (a warp).
pub const SUBGROUP_SIZE: i64 = ir::dialects::gpu::WARP_SIZE;

impl Pass for DistributeVectorLayout {
    crate::pass_names!(
        "distribute-vector-layout",
        "Give each thread its part of vector ops laid out by nested layouts (seed 004)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let funcs: Vec<OpId> = m.ops_named(func::FUNC);
        for f in funcs {
            let layouts = assign_layouts(m, f)?;
            if !layouts.is_empty() {
                Distributor::new(m, f, layouts).run()?;
            }
        }
        Ok(())
    }
}

/// Whether `t` is a vector this pass distributes (rank 1 or more).
fn is_vector(t: Type) -> bool {
    t.is_vector() && t.rank().is_some_and(|r| r > 0)
}

/// Elementwise ops: `arith` and `math` ops other than constants, whose vector operands and
/// result share a shape.
fn is_elementwise(m: &Module, op: OpId) -> bool {
    let name = m.name(op);
    let name = name.as_str();
    (name.starts_with("arith.") || name.starts_with("math.")) && name != arith::CONSTANT
}

/// `layout` without the dimensions `dims` (a reduction's result layout).
fn project(layout: &NestedLayout, dims: &[i64]) -> NestedLayout {
    let keep = |list: &[i64]| -> Vec<i64> {
        (0..list.len())
            .filter(|d| !dims.contains(&(*d as i64)))
            .map(|d| list[d])
            .collect()
    };
    NestedLayout {
        subgroup_tile: keep(&layout.subgroup_tile),
        batch_tile: keep(&layout.batch_tile),
        outer_tile: keep(&layout.outer_tile),
        thread_tile: keep(&layout.thread_tile),
        element_tile: keep(&layout.element_tile),
        subgroup_strides: keep(&layout.subgroup_strides),
        thread_strides: keep(&layout.thread_strides),
    }
}

/// The anchor layout of `op`'s result, checked against its vector shape.
fn anchor(m: &Module, op: OpId) -> Result<Option<NestedLayout>, Diagnostic> {
    let Some(attr) = m.attr(op, LAYOUT_ATTR) else {
        return Ok(None);
    };
    let layout = match attr {
        Attribute::Opaque(text) => NestedLayout::parse(text).ok(),
        _ => None,
    };
    let Some(layout) = layout else {
        return Err(op_error(
            m,
            op,
            format!("'{LAYOUT_ATTR}' must be a nested layout"),
        ));
    };
    let ty = match m.num_results(op) {
        1 => m.value_type(m.result(op, 0)),
        _ => Type::NONE,
    };
    if !is_vector(ty) {
        return Err(op_error(
            m,
            op,
            format!("'{LAYOUT_ATTR}' on an op whose result is not a vector"),
        ));
    }
    layout
        .verify(ty.shape(), Some(SUBGROUP_SIZE))
        .map_err(|e| op_error(m, op, format!("the layout does not fit '{ty}': {e}")))?;
    distributable(&layout).map_err(|e| op_error(m, op, format!("unsupported: {e}")))?;
    Ok(Some(layout))
}

/// The most elements of a vector one thread holds: its part lives in registers, unrolled.
pub const MAX_THREAD_ELEMENTS: i64 = 1024;

/// The most threads of the block the pass sets up (a GPU block's limit).
pub const MAX_THREADS: i64 = 1024;

/// What this pass needs of a layout beyond the seed's rules: every distributed level has a
/// stride (a tile of several ids with stride 0 would leave all but id 0's elements to no
/// thread), the levels' ids nest (sorted by stride, each stride a multiple of the previous
/// stride times its tile: only then does `(id floordiv stride) mod tile` read each
/// dimension's own digits of an id, and `Σ id_d · stride_d` build one), the block stays
/// within [`MAX_THREADS`] and a thread's part within [`MAX_THREAD_ELEMENTS`].
fn distributable(layout: &NestedLayout) -> Result<(), String> {
    for (what, tile, strides) in [
        ("thread", &layout.thread_tile, &layout.thread_strides),
        ("subgroup", &layout.subgroup_tile, &layout.subgroup_strides),
    ] {
        let mut levels: Vec<(i64, i64)> = tile
            .iter()
            .zip(strides.iter())
            .filter(|(t, _)| **t > 1)
            .map(|(&t, &s)| (s, t))
            .collect();
        if let Some((_, t)) = levels.iter().find(|(s, _)| *s == 0) {
            return Err(format!("a {what} tile of {t} with stride 0"));
        }
        levels.sort();
        for pair in levels.windows(2) {
            let ((s0, t0), (s1, _)) = (pair[0], pair[1]);
            if s0.checked_mul(t0).is_none_or(|reach| s1 % reach != 0) {
                return Err(format!(
                    "{what} strides that do not nest: stride {s1} is not a multiple of the \
                     {t0} ids of stride {s0}"
                ));
            }
        }
    }
    let subgroups = layout.id_counts().1;
    if subgroups > MAX_THREADS / SUBGROUP_SIZE {
        return Err(format!(
            "{subgroups} subgroups of {SUBGROUP_SIZE}: more than the {MAX_THREADS} threads of a block"
        ));
    }
    let elements = layout
        .thread_shape()
        .iter()
        .try_fold(1i64, |n, &d| n.checked_mul(d))
        .unwrap_or(i64::MAX);
    if elements > MAX_THREAD_ELEMENTS {
        return Err(format!(
            "each thread would hold {elements} elements, more than {MAX_THREAD_ELEMENTS}"
        ));
    }
    Ok(())
}

/// The layout of every vector value of `f` (empty when `f` has no anchor).
fn assign_layouts(m: &Module, f: OpId) -> Result<FxHashMap<Value, NestedLayout>, Diagnostic> {
    let ops = m.collect_ops(f);
    let mut layouts = FxHashMap::default();
    for &op in &ops {
        if let Some(layout) = anchor(m, op)? {
            layouts.insert(m.result(op, 0), layout);
        }
    }
    if layouts.is_empty() {
        return Ok(layouts);
    }
    // Each value gets its layout once; its defining op and users are then looked at again,
    // so the work is linear in the uses (a chain laid out from its end included).
    let mut queue: std::collections::VecDeque<OpId> = ops.iter().copied().collect();
    let mut queued: ir::intern::FxHashSet<OpId> = ops.iter().copied().collect();
    while let Some(op) = queue.pop_front() {
        queued.remove(&op);
        for v in propagate(m, op, &mut layouts)? {
            let related = m.defining_op(v).into_iter().chain(m.uses(v).map(|u| u.op));
            for o in related.collect::<Vec<_>>() {
                if queued.insert(o) {
                    queue.push_back(o);
                }
            }
        }
    }
    for &v in layouts.keys() {
        if let ir::ValueDef::Arg { block, .. } = m.value_def(v) {
            let at = m.block_parent_op(block).unwrap_or(f);
            return Err(op_error(
                m,
                at,
                "unsupported: a vector with a nested layout that is a block argument \
                 (a function argument or a loop-carried value)",
            ));
        }
    }
    for &op in &ops {
        let values = m.operands(op).chain(m.results(op));
        for v in values.collect::<Vec<_>>() {
            if is_vector(m.value_type(v)) && !layouts.contains_key(&v) {
                let at = m.defining_op(v).unwrap_or(op);
                return Err(op_error(
                    m,
                    at,
                    format!(
                        "no nested layout reaches this vector; give it one with '{LAYOUT_ATTR}'"
                    ),
                ));
            }
        }
    }
    Ok(layouts)
}

/// Gives the values of `op` the layouts its rule implies from those known; returns the
/// values that got one. Elementwise ops and broadcasts share one layout among their vector
/// operands and result; a reduction's result and accumulator get its source's without the
/// reduced dimensions.
fn propagate(
    m: &Module,
    op: OpId,
    layouts: &mut FxHashMap<Value, NestedLayout>,
) -> Result<Vec<Value>, Diagnostic> {
    let (values, layout) = if is_elementwise(m, op) || m.is(op, vector::BROADCAST) {
        let mut values: Vec<Value> = m.operands(op).chain(m.results(op)).collect();
        values.retain(|&v| is_vector(m.value_type(v)));
        if m.is(op, vector::BROADCAST) {
            values.retain(|&v| m.defining_op(v) == Some(op));
        }
        let known = values.iter().find_map(|v| layouts.get(v)).cloned();
        (values, known)
    } else if m.is(op, vector::MULTI_REDUCTION) && is_vector(m.value_type(m.result(op, 0))) {
        let projected = layouts
            .get(&m.operand(op, 0))
            .map(|source| project(source, &vector::reduction_dims(m, op)));
        (vec![m.result(op, 0), m.operand(op, 1)], projected)
    } else {
        return Ok(Vec::new());
    };
    let Some(layout) = layout else {
        return Ok(Vec::new());
    };
    let mut changed = Vec::new();
    for v in values {
        match layouts.get(&v) {
            Some(old) if *old == layout => {}
            Some(old) => {
                return Err(op_error(
                    m,
                    op,
                    format!("conflicting layouts {old} and {layout}"),
                ));
            }
            None => {
                layouts.insert(v, layout.clone());
                changed.push(v);
            }
        }
    }
    Ok(changed)
}

/// A layout's local elements: per element of the thread's flat vector, its `(b, o, e)` per
/// dimension.
fn local_elements(layout: &NestedLayout) -> Vec<Vec<(i64, i64, i64)>> {
    let shape = layout.thread_shape();
    let n: i64 = shape.iter().product();
    (0..n as u64)
        .map(|flat| {
            indexing::delinearize_point(flat, &shape)
                .into_iter()
                .enumerate()
                .map(|(d, local)| {
                    let (o_tile, e_tile) = (layout.outer_tile[d], layout.element_tile[d]);
                    (
                        local / (o_tile * e_tile),
                        local / e_tile % o_tile,
                        local % e_tile,
                    )
                })
                .collect()
        })
        .collect()
}

/// The index along dimension `d` of the element `(b, o, e)` of the thread `dim(0)` (the
/// block's linear thread id: lane `tid mod 32`, subgroup `tid floordiv 32`).
fn element_index(layout: &NestedLayout, d: usize, (b, o, e): (i64, i64, i64)) -> AffineExpr {
    let virtual_id = |id: AffineExpr, tile: i64, stride: i64| {
        if tile == 1 || stride == 0 {
            cst(0)
        } else {
            id.floor_div(stride).modulo(tile)
        }
    };
    let lane = dim(0).modulo(SUBGROUP_SIZE);
    let subgroup = dim(0).floor_div(SUBGROUP_SIZE);
    let sg = virtual_id(
        subgroup,
        layout.subgroup_tile[d],
        layout.subgroup_strides[d],
    );
    let t = virtual_id(lane, layout.thread_tile[d], layout.thread_strides[d]);
    let batch = sg * layout.batch_tile[d] + cst(b);
    let outer = batch * layout.outer_tile[d] + cst(o);
    let thread = outer * layout.thread_tile[d] + t;
    thread * layout.element_tile[d] + cst(e)
}

/// Rewrites one function whose vectors all have layouts.
struct Distributor<'m> {
    m: &'m mut Module,
    f: OpId,
    layouts: FxHashMap<Value, NestedLayout>,
    /// The per-thread value of each rewritten value.
    mapping: FxHashMap<Value, Value>,
    /// The block's linear thread id.
    tid: Value,
    threads: i64,
}

impl<'m> Distributor<'m> {
    fn new(m: &'m mut Module, f: OpId, layouts: FxHashMap<Value, NestedLayout>) -> Distributor<'m> {
        let subgroups = layouts.values().map(|l| l.id_counts().1).max().unwrap_or(1);
        let threads = SUBGROUP_SIZE * subgroups;
        let entry = m.entry_block(m.region(f, 0)).expect("a function body");
        let at = match m.first_op(entry) {
            Some(first) => InsertPoint::Before(first),
            None => InsertPoint::BlockEnd(entry),
        };
        let tid = gpu::build_thread_id(m, at, "x", None);
        let op = m.defining_op(tid).expect("the thread id op");
        let range = [Attribute::index(0), Attribute::index(threads - 1)];
        m.set_attr(op, "xla.range", Attribute::Array(range.to_vec()));
        Distributor {
            m,
            f,
            layouts,
            mapping: FxHashMap::default(),
            tid,
            threads,
        }
    }

    fn run(mut self) -> Result<(), Diagnostic> {
        let ops = self.m.collect_ops(self.f);
        let mut rewritten = Vec::new();
        for op in ops {
            let results: Vec<Value> = self.m.results(op).collect();
            let touches_vectors = self
                .m
                .operands(op)
                .chain(results.iter().copied())
                .any(|v| self.layouts.contains_key(&v));
            if !touches_vectors {
                continue;
            }
            let new = self.rewrite(op)?;
            for (old, new) in results.into_iter().zip(new) {
                self.mapping.insert(old, new);
            }
            rewritten.push(op);
        }
        for &op in rewritten.iter().rev() {
            for old in self.m.results(op).collect::<Vec<_>>() {
                if !self.layouts.contains_key(&old) {
                    let new = self.mapping[&old];
                    self.m.replace_all_uses(old, new);
                }
            }
        }
        for &op in rewritten.iter().rev() {
            self.m.erase_op(op);
        }
        Ok(())
    }

    /// The per-thread type of a value laid out by `layout`.
    fn thread_type(&self, v: Value) -> Type {
        let ty = self.m.value_type(v);
        let n: i64 = self.layouts[&v].thread_shape().iter().product();
        Type::vector(&[n], ty.element_type_or_self())
    }

    /// The per-thread value of `v` (a scalar stays itself).
    fn get(&self, v: Value) -> Value {
        *self.mapping.get(&v).unwrap_or(&v)
    }

    /// The per-thread results of `op`, built before it.
    fn rewrite(&mut self, op: OpId) -> Result<Vec<Value>, Diagnostic> {
        let name = self.m.name(op);
        Ok(match name.as_str() {
            vector::TRANSFER_READ => vec![self.transfer_read(op)?],
            vector::TRANSFER_WRITE => vec![self.transfer_write(op)?],
            vector::MULTI_REDUCTION => vec![self.multi_reduction(op)?],
            vector::TRANSPOSE => vec![self.transpose(op)?],
            vector::BROADCAST => {
                let source = self.m.operand(op, 0);
                if is_vector(self.m.value_type(source)) {
                    return Err(op_error(self.m, op, "unsupported: a broadcast of a vector"));
                }
                let ty = self.thread_type(self.m.result(op, 0));
                vec![vector::build_broadcast(
                    self.m,
                    InsertPoint::Before(op),
                    source,
                    ty,
                )]
            }
            arith::CONSTANT => vec![self.splat_constant(op)?],
            _ if is_elementwise(self.m, op) => {
                let mut mapping = self.mapping.clone();
                let new = self.m.clone_op(op, &mut mapping);
                self.m.insert_op(new, InsertPoint::Before(op));
                // The attribute that anchored the whole vector's layout is not the part's.
                self.m.remove_attr(new, LAYOUT_ATTR);
                let results: Vec<Value> = self.m.results(new).collect();
                for (old, &r) in self
                    .m
                    .results(op)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .zip(&results)
                {
                    if self.layouts.contains_key(&old) {
                        let ty = self.thread_type(old);
                        self.m.set_value_type(r, ty);
                    }
                }
                results
            }
            _ => {
                return Err(op_error(
                    self.m,
                    op,
                    "unsupported: this op on vectors with nested layouts",
                ));
            }
        })
    }

    fn splat_constant(&mut self, op: OpId) -> Result<Value, Diagnostic> {
        let result = self.m.result(op, 0);
        let ty = self.thread_type(result);
        let value = match self.m.prop(op, "value") {
            Some(Attribute::Dense {
                values: DenseValues::Splat(v),
                ..
            }) => *v,
            _ => {
                return Err(op_error(
                    self.m,
                    op,
                    "unsupported: a vector constant that is not a splat",
                ));
            }
        };
        Ok(Builder::before(self.m, op).constant(Attribute::dense_splat(ty, value)))
    }

    /// A flat per-thread vector of `ty` from its elements.
    fn assemble(&mut self, at: OpId, ty: Type, elements: &[Value]) -> Value {
        vector::build_from_elements(self.m, InsertPoint::Before(at), ty, elements)
    }

    /// Element `k` of a flat per-thread vector.
    fn element(&mut self, at: OpId, v: Value, k: usize) -> Value {
        let position = [vector::Position::Static(k as i64)];
        vector::build_extract(self.m, InsertPoint::Before(at), v, &position)
    }
}
