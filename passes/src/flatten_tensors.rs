//! `flatten-tensors`: every tensor becomes 1-d, laid out as it sits in memory (XLA's
//! `flatten_tensors.cc`).
//!
//! After this pass a tensor access is one offset into a flat buffer, which is what
//! `vectorize-loads-stores` needs to see contiguous accesses and what `lower-tensors` turns
//! into a `getelementptr`. What changes:
//!
//! * **Types.** A tensor of rank ≥ 2, or of any rank with a layout encoding
//!   (`#xla.layout<"...">`, see [`ir::types`]), becomes `tensor<N x elem>` with `N` the
//!   physical element count: the product of the dimensions, or for a tiled layout the padded
//!   size `∏⌈dᵢ/tᵢ⌉·tᵢ`. Every value of such a type changes in place — function signatures,
//!   block arguments (`scf.for` iter args, `xla_gpu.loop` iter args), results of `scf.for`,
//!   `scf.if`, calls, `xla_gpu.allocate_shared`, `xla_gpu.sync_threads`, `tensor.empty`.
//!   Rank-0 and row-major rank-1 tensors are already flat and stay as they are (XLA's rule:
//!   a `tensor<f32>` access has no index to linearize, and its only offset is 0).
//! * **Accesses.** `tensor.extract`, `tensor.insert`, `xla_gpu.predicated_insert/extract`
//!   and `xla_gpu.atomic_rmw` get one index: the physical offset of the logical index under the tensor's layout
//!   (`minor_to_major`, then every tile), built by [`indexing::physical_offset`] — the same
//!   arithmetic as `hlo::Layout::physical_index`.
//! * **Index maps are folded.** Where an index is a result of `xla_gpu.apply_indexing`, its
//!   map is substituted into the offset (recursively through chains of `apply_indexing`),
//!   and index constants become constants; the remaining values become the dimensions of a
//!   single new map, with the ranges their producers' maps gave them (or `[0, d - 1]` for a
//!   value used directly as an index of a dimension of size `d`; an out-of-bounds index is
//!   undefined). The map is simplified with those ranges, dimensions it no longer uses are
//!   dropped, and one `xla_gpu.apply_indexing` computes the offset — what XLA gets from
//!   its linearized map plus `ApplyIndexingOp`'s folding canonicalizations. Equal offsets
//!   computed in the same block share one op (an extract and an insert at the same index).
//!   The producers left without uses are erased.
//! * **Dense constants** (`arith.constant dense<...>`) are reordered into physical order,
//!   padding elements set to zero.
//!
//! Ops that would have to understand a multi-dimensional tensor but are not listed above
//! (vector transfers on N-d tensors, elementwise arithmetic on tensors, unregistered ops)
//! make the pass fail with an error at the op, before anything changes; so do tensors with
//! dynamic dimensions that need flattening.

use crate::fold::constant_int;
use crate::pass::{Pass, op_error};
use crate::rewrite::{erase_with_dead_operands, is_trivially_dead};
use indexing::{AffineExpr, IndexingMap, Interval, Variable, physical_offset};
use ir::dialects::arith;
use ir::dialects::func;
use ir::dialects::scf;
use ir::dialects::tensor;
use ir::dialects::xla_gpu;
use ir::intern::FxHashMap;
use ir::types::Layout;
use ir::{
    Attribute, BlockId, DYNAMIC, DenseValues, Diagnostic, FloatValue, InsertPoint, Module, OpId,
    Scalar, Type, Value, ValueDef,
};
use std::sync::Arc;

/// The pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlattenTensors;

impl Pass for FlattenTensors {
    crate::pass_names!(
        "flatten-tensors",
        "Make every tensor 1-d in its physical layout; indices become flat offsets"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let ops = m.collect_ops(m.top());
        for &op in &ops {
            check_supported(m, op)?;
        }
        let mut offsets = Offsets::default();
        let mut producers = Vec::new();
        for &op in &ops {
            if let Some((tensor, first_index)) = access_operands(m, op) {
                producers.extend(linearize_access(m, op, tensor, first_index, &mut offsets));
            }
        }
        for &op in &ops {
            retype(m, op);
        }
        for op in producers {
            if m.is_alive(op) && is_trivially_dead(m, op) {
                erase_with_dead_operands(m, op);
            }
        }
        Ok(())
    }
}

/// Ops that pass tensors along without looking at their shape: flattening their operand,
/// result and block argument types is all they need.
const PASS_THROUGH: &[&str] = &[
    func::FUNC,
    func::RETURN,
    func::CALL,
    xla_gpu::PURE_CALL,
    scf::FOR,
    scf::IF,
    scf::YIELD,
    "scf.index_switch",
    xla_gpu::LOOP,
    xla_gpu::YIELD,
    xla_gpu::ALLOCATE_SHARED,
    xla_gpu::SYNC_THREADS,
    tensor::EMPTY,
    // Its `dim` names a dimension of the shape the buffer had before flattening; the sizes
    // follow the data, wherever the data ends.
    xla_gpu::GET_DYNAMIC_DIM_SIZE,
];

/// Ops this pass rewrites beyond their types: accesses and dense constants.
const REWRITTEN: &[&str] = &[
    tensor::EXTRACT,
    tensor::INSERT,
    xla_gpu::PREDICATED_INSERT,
    xla_gpu::PREDICATED_EXTRACT,
    xla_gpu::ATOMIC_RMW,
    arith::CONSTANT,
];

/// Whether values of type `t` change: tensors of rank ≥ 2 and tensors with a layout.
fn needs_flattening(t: Type) -> bool {
    t.is_tensor() && (t.rank().is_some_and(|r| r >= 2) || t.tensor_layout().is_some())
}

/// The layout of a tensor type (row-major when it has none).
fn layout_of(t: Type) -> Layout {
    t.tensor_layout()
        .cloned()
        .unwrap_or_else(|| Layout::row_major(t.rank().unwrap_or(0)))
}

/// `t` with every tensor in it flattened (function types included).
fn flat_type(t: Type) -> Type {
    if let Some((inputs, results)) = t.function_parts() {
        let inputs: Vec<Type> = inputs.iter().map(|&t| flat_type(t)).collect();
        let results: Vec<Type> = results.iter().map(|&t| flat_type(t)).collect();
        return Type::function(&inputs, &results);
    }
    match (needs_flattening(t), t.shape(), t.element_type()) {
        (true, Some(shape), Some(elem)) => {
            Type::tensor(&[layout_of(t).padded_element_count(shape)], elem)
        }
        _ => t,
    }
}

/// The types an op touches: its operands', its results' and its blocks' arguments'.
fn touched_types(m: &Module, op: OpId) -> Vec<Type> {
    let mut types = m.operand_types(op);
    types.extend(m.result_types(op));
    for &r in m.regions(op) {
        for &b in m.region_blocks(r) {
            types.extend(m.block_args(b).iter().map(|&a| m.value_type(a)));
        }
    }
    types
}

/// Fails on an op whose tensors need flattening when this pass does not know the op, or
/// when a tensor has a dynamic shape.
fn check_supported(m: &Module, op: OpId) -> Result<(), Diagnostic> {
    if let Some(t) = touched_types(m, op)
        .into_iter()
        .find(|t| t.thread_layout().is_some())
    {
        return Err(op_error(
            m,
            op,
            format!("unsupported: '{t}': XLA's thread layout encoding has no meaning here"),
        ));
    }
    let flattened: Vec<Type> = touched_types(m, op)
        .into_iter()
        .filter(|&t| needs_flattening(t))
        .collect();
    if flattened.is_empty() {
        return Ok(());
    }
    if let Some(t) = flattened
        .iter()
        .find(|t| t.shape().is_some_and(|s| s.contains(&DYNAMIC)))
    {
        return Err(op_error(
            m,
            op,
            format!("cannot flatten '{t}': dynamic shape"),
        ));
    }
    let name = m.name(op).as_str();
    if PASS_THROUGH.contains(&name) || REWRITTEN.contains(&name) {
        return Ok(());
    }
    Err(op_error(
        m,
        op,
        format!("cannot flatten '{}': unsupported op", flattened[0]),
    ))
}

/// For an access op: the operand positions of its tensor and of its first index.
fn access_operands(m: &Module, op: OpId) -> Option<(usize, usize)> {
    match m.name(op).as_str() {
        tensor::EXTRACT | xla_gpu::ATOMIC_RMW => Some((0, 1)),
        tensor::INSERT => Some((1, 2)),
        xla_gpu::PREDICATED_INSERT | xla_gpu::PREDICATED_EXTRACT => Some((2, 3)),
        _ => None,
    }
}

/// Replaces the indices of access `op` by the physical offset; returns the ops that
/// produced the old indices (to erase once nothing uses them).
fn linearize_access(
    m: &mut Module,
    op: OpId,
    tensor: usize,
    first_index: usize,
    offsets: &mut Offsets,
) -> Vec<OpId> {
    let ty = m.value_type(m.operand(op, tensor));
    if !needs_flattening(ty) {
        return Vec::new();
    }
    let mut operands = m.operand_vec(op);
    let indices = operands.split_off(first_index);
    let offset = offsets.offset(m, op, ty, &indices);
    operands.push(offset);
    m.set_operands(op, &operands);
    indices.iter().filter_map(|&v| m.defining_op(v)).collect()
}

/// The variables of an offset map being built: the values that become its dimensions, with
/// what is known of their ranges.
#[derive(Default)]
struct Leaves {
    values: Vec<Value>,
    vars: Vec<Variable>,
}

impl Leaves {
    /// The dimension standing for `v`, narrowing its range by `range`.
    fn leaf(&mut self, v: Value, name: &str, range: Interval) -> AffineExpr {
        if let Some(i) = self.values.iter().position(|&x| x == v) {
            self.vars[i].bounds = self.vars[i].bounds.intersect(range);
            return AffineExpr::Dim(i);
        }
        self.values.push(v);
        self.vars.push(Variable::new(name, range));
        AffineExpr::Dim(self.values.len() - 1)
    }

    /// `v` as an expression over the leaves: index constants fold, results of
    /// `xla_gpu.apply_indexing` are their map's result over the map's operands (whose names
    /// and ranges the map's variables give), anything else is a leaf called `name` with
    /// `range`.
    fn expr_of(&mut self, m: &Module, v: Value, name: &str, range: Interval) -> AffineExpr {
        if m.value_type(v).is_index()
            && let Some(c) = constant_int(m, v).and_then(|c| i64::try_from(c).ok())
        {
            return AffineExpr::Constant(c);
        }
        if let ValueDef::Result { op, index } = m.value_def(v)
            && m.is(op, xla_gpu::APPLY_INDEXING)
            && let Some(map) = xla_gpu::indexing_map(m, op)
            && map.constraints.is_empty()
        {
            let operands = m.operand_vec(op);
            let (dim_operands, symbol_operands) =
                operands.split_at(map.dims.len().min(operands.len()));
            let symbol_vars = map.range_vars.iter().chain(&map.rt_vars);
            let dims: Vec<AffineExpr> = map
                .dims
                .iter()
                .zip(dim_operands)
                .map(|(var, &x)| self.expr_of(m, x, &var.name, var.bounds))
                .collect();
            let symbols: Vec<AffineExpr> = symbol_vars
                .zip(symbol_operands)
                .map(|(var, &x)| self.expr_of(m, x, &var.name, var.bounds))
                .collect();
            return map.results[index as usize].substitute(&dims, &symbols);
        }
        self.leaf(v, name, range)
    }

    /// The map `(leaves) -> (offset)`, simplified, without the dimensions it does not use;
    /// with the values of the dimensions it keeps.
    fn into_map(self, offset: AffineExpr) -> (IndexingMap, Vec<Value>) {
        let map = IndexingMap::new(self.vars, Vec::new(), Vec::new(), vec![offset]).simplified();
        let mut used = vec![false; map.dims.len()];
        map.results[0].walk(&mut |e| {
            if let AffineExpr::Dim(i) = e {
                used[*i] = true;
            }
        });
        let mut renumber = Vec::with_capacity(used.len());
        let (mut vars, mut values) = (Vec::new(), Vec::new());
        for (i, &keep) in used.iter().enumerate() {
            renumber.push(AffineExpr::Dim(vars.len()));
            if keep {
                vars.push(map.dims[i].clone());
                values.push(self.values[i]);
            }
        }
        let result = map.results[0].substitute(&renumber, &[]);
        let map = IndexingMap::new(vars, Vec::new(), Vec::new(), vec![result]).simplified();
        (map, values)
    }
}

/// The offsets computed so far, by block, map and operands: an access at the same index as
/// an earlier one in its block reuses its `apply_indexing`.
#[derive(Default)]
struct Offsets {
    computed: FxHashMap<(BlockId, Attribute, Vec<Value>), Value>,
}

impl Offsets {
    /// The physical offset of `indices` into a tensor of type `ty`, computed before `at`.
    fn offset(&mut self, m: &mut Module, at: OpId, ty: Type, indices: &[Value]) -> Value {
        let shape = ty.shape().unwrap_or(&[]);
        let mut leaves = Leaves::default();
        let index: Vec<AffineExpr> = indices
            .iter()
            .zip(shape)
            .enumerate()
            .map(|(i, (&v, &d))| leaves.expr_of(m, v, &format!("d{i}"), Interval::index_range(d)))
            .collect();
        let (map, operands) = leaves.into_map(physical_offset(shape, &layout_of(ty), &index));
        let at_point = InsertPoint::Before(at);
        match (&map.results[0], operands.as_slice()) {
            (AffineExpr::Constant(c), _) => {
                ir::dialects::arith::build_index_constant(m, at_point, *c)
            }
            (AffineExpr::Dim(0), &[v]) => v,
            _ => {
                let block = m.parent_block(at).expect("access op in a block");
                let map = Arc::new(map);
                let key = (block, Attribute::IndexingMap(map.clone()), operands);
                if let Some(&v) = self.computed.get(&key) {
                    return v;
                }
                let v = xla_gpu::build_apply_indexing(m, at_point, map, &key.2, &[])[0];
                self.computed.insert(key, v);
                v
            }
        }
    }
}

/// Flattens the types of `op`'s results, of its blocks' arguments and of its type and dense
/// attributes (`function_type`, `arith.constant`'s `value`).
fn retype(m: &mut Module, op: OpId) {
    let mut values: Vec<Value> = m.results(op).collect();
    for &r in m.regions(op) {
        for &b in m.region_blocks(r) {
            values.extend_from_slice(m.block_args(b));
        }
    }
    for v in values {
        let ty = m.value_type(v);
        if needs_flattening(ty) {
            m.set_value_type(v, flat_type(ty));
        }
    }
    for (name, value) in flat_attrs(m.props(op)) {
        m.set_prop(op, &name, value);
    }
    for (name, value) in flat_attrs(m.attrs(op)) {
        m.set_attr(op, &name, value);
    }
}

/// Those of `attrs` that flattening changes ([`flat_attr`]), by name, with their new values.
fn flat_attrs(attrs: &[ir::NamedAttr]) -> Vec<(String, Attribute)> {
    attrs
        .iter()
        .filter_map(|a| Some((a.name.as_str().to_owned(), flat_attr(&a.value)?)))
        .collect()
}

/// `attr` with flattened types, if that changes it: type attributes, and dense elements
/// reordered into the tensor's physical order.
fn flat_attr(attr: &Attribute) -> Option<Attribute> {
    match attr {
        Attribute::Type(t) if flat_type(*t) != *t => Some(Attribute::Type(flat_type(*t))),
        Attribute::Dense { ty, values } if needs_flattening(*ty) => Some(flat_dense(*ty, values)),
        _ => None,
    }
}

/// A dense tensor constant in physical order: element `i` (row-major) moves to its physical
/// offset; padding elements are zero.
fn flat_dense(ty: Type, values: &DenseValues) -> Attribute {
    let flat = flat_type(ty);
    let elements = match values {
        DenseValues::Splat(s) => return Attribute::dense_splat(flat, *s),
        DenseValues::Elements(elements) => elements,
    };
    let shape = ty.shape().unwrap_or(&[]);
    let layout = layout_of(ty);
    let zero = match elements.first() {
        Some(Scalar::Float(_)) => Scalar::Float(FloatValue(0.0)),
        _ => Scalar::Int(0),
    };
    let mut physical = vec![zero; flat.num_elements().unwrap_or(0) as usize];
    for (i, &value) in elements.iter().enumerate() {
        let index = row_major_index(i as i64, shape);
        physical[layout.physical_index(shape, &index) as usize] = value;
    }
    Attribute::dense(flat, physical)
}

/// The multi-index of element `linear` of a row-major array of `shape`.
fn row_major_index(mut linear: i64, shape: &[i64]) -> Vec<i64> {
    let mut index = vec![0; shape.len()];
    for (slot, &d) in index.iter_mut().zip(shape).rev() {
        *slot = linear % d;
        linear /= d;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_index_is_the_inverse_of_linearization() {
        assert_eq!(row_major_index(13, &[3, 5]), vec![2, 3]);
        assert_eq!(row_major_index(0, &[]), Vec::<i64>::new());
        assert_eq!(row_major_index(23, &[2, 3, 4]), vec![1, 2, 3]);
    }

    #[test]
    fn flat_types_have_the_physical_size() {
        let tiled = Type::tensor_with_layout(
            &[3, 5],
            Type::F32,
            &ir::types::parse_layout("{1,0:T(2,2)}").unwrap(),
        )
        .unwrap();
        assert_eq!(flat_type(tiled), Type::tensor(&[24], Type::F32));
        let plain = Type::tensor(&[6, 512, 4096], Type::BF16);
        assert_eq!(flat_type(plain), Type::tensor(&[12582912], Type::BF16));
        let scalar = Type::tensor(&[], Type::F32);
        assert_eq!(flat_type(scalar), scalar);
        let f = Type::function(&[plain, Type::INDEX], &[plain]);
        assert_eq!(
            flat_type(f).to_string(),
            "(tensor<12582912xbf16>, index) -> tensor<12582912xbf16>"
        );
    }
}
