//! The elemental emitter: the value of an HLO instruction at one index, as
//! `arith`/`math`/`tensor`/`scf` ops.
//!
//! Index transforms (broadcast, transpose, reshape, slice, ...) emit nothing themselves: the
//! operand is read at the index the op's indexing map gives. Values are cached per
//! (instruction, index values) inside the region where they were emitted, so an operand read
//! twice at the same index is computed once, and a value computed inside an `scf.if` branch
//! or loop body is never used outside it.
//!
//! Operand chains are walked with an explicit stack, not by recursion: a fusion may chain
//! any number of elementwise ops and index transforms (a 2-million-op chain overflowed a
//! 1 GiB stack), and deep recursion also made emission superlinear (every level a fresh
//! stack frame, out of the caches). Ops that read their operands themselves (reduce, pad,
//! gather, dynamic slices, ...) still recurse into them: chains of those are bounded by
//! [`MAX_OPERAND_RECURSION`], and the regions they open inside each other by
//! [`MAX_REGION_DEPTH`].
//!
//! Semantics follow XLA's elemental emitter: integer division by zero gives -1 (unsigned:
//! all ones) and remainder by zero gives the dividend; `INT_MIN / -1` is `INT_MIN`; shifts by
//! the bit width or more give 0 (arithmetic right shifts: the sign); float→int conversion
//! saturates and maps NaN to 0; float `maximum`/`minimum` propagate NaN; `compare NE` on
//! floats is unordered (true for NaN), the other directions ordered.

use std::collections::HashMap;
use std::rc::Rc;

use hlo::{
    Computation, ComputationId, Diagnostic, HloModule, InstrId, Instruction, Opcode, PrimitiveType,
    Shape,
};
use indexing::hlo_indexing::output_to_input;
use indexing::{AffineExpr, IndexingMap};
use ir::dialects::{func as irfunc, scf, xla_gpu};
use ir::intern::FxHashMap;
use ir::{Attribute, Builder, InsertPoint, OpState, Type, Value};

use crate::partition::PartitionedComputation;
use crate::types::parameter_types;
pub use crate::types::{range_array, range_attr};
use crate::unsupported;

mod arith;
mod complex;
mod narrow_float;
mod range;
mod walk;

use crate::types::{element_type, leaf_element_types, leaf_range, leaves, tensor_type};
use walk::RegionCache;

/// The innermost step of [`ElementalEmitter::range_var_loops`]: the next accumulators from
/// the current ones and the induction variables.
type LoopStep<'s, E> = dyn FnMut(&mut E, Vec<Value>, &[Value]) -> R<Vec<Value>> + 's;
pub use walk::{MAX_OPERAND_RECURSION, MAX_REGION_DEPTH};

/// What the emitters share about one fusion while emitting its functions.
pub struct FusionContext<'a> {
    pub module: &'a HloModule,
    pub fusion: &'a Computation,
    pub partition: PartitionedComputation,
    /// Function names of the partition's subgraphs.
    pub subgraph_functions: Vec<String>,
    /// Function names of the scalar computations the fusion calls (reducers, `map`).
    pub scalar_functions: HashMap<ComputationId, String>,
    /// The GPU the kernel is for.
    pub target: crate::Target,
}

/// Where the instructions being emitted live.
#[derive(Clone, Copy)]
pub enum Scope {
    /// A subgraph of the fusion: parameters are tensors read at an index; instructions of
    /// other subgraphs are called.
    Subgraph(usize),
    /// A scalar computation (a reducer): parameters are the function's scalar arguments.
    Scalar(ComputationId),
}

/// Emits instruction values into one function.
pub struct ElementalEmitter<'a, 'm> {
    pub cx: &'a FusionContext<'a>,
    pub b: Builder<'m>,
    computation: &'a Computation,
    scope: Scope,
    /// The function's leading arguments: the fusion's parameter tensors, or the scalar
    /// computation's parameters.
    params: Vec<Value>,
    /// One cache per open region, innermost last.
    cache: Vec<RegionCache>,
    per_op: FxHashMap<InstrId, Rc<[IndexingMap]>>,
    /// How many ops that read their operands themselves (see
    /// [`Self::plain_operand_count`]) are being emitted one inside the other's operands.
    operand_recursion: usize,
}

type R<T> = Result<T, Diagnostic>;

/// The start of a `reduce` or `reduce-window` (see `ElementalEmitter::reduction`).
struct Reduction<'a> {
    n: usize,
    inits: Vec<Value>,
    map: OperandMap<'a>,
    callee: String,
    types: Vec<Type>,
}

/// One operand's indexing map of an op: the partition's (which lives as long as the fusion
/// context) or the per-op analysis's, shared rather than copied for every use.
enum OperandMap<'a> {
    Partition(&'a IndexingMap),
    Computed(Rc<[IndexingMap]>, usize),
}

impl std::ops::Deref for OperandMap<'_> {
    type Target = IndexingMap;

    fn deref(&self) -> &IndexingMap {
        match self {
            OperandMap::Partition(map) => map,
            OperandMap::Computed(maps, k) => &maps[*k],
        }
    }
}

impl<'a, 'm> ElementalEmitter<'a, 'm> {
    pub fn new(
        cx: &'a FusionContext<'a>,
        b: Builder<'m>,
        scope: Scope,
        params: Vec<Value>,
    ) -> ElementalEmitter<'a, 'm> {
        let computation = match scope {
            Scope::Subgraph(_) => cx.fusion,
            Scope::Scalar(id) => cx.module.computation(id),
        };
        ElementalEmitter {
            cx,
            b,
            computation,
            scope,
            params,
            cache: vec![RegionCache::default()],
            per_op: FxHashMap::default(),
            operand_recursion: 0,
        }
    }

    fn instr(&self, id: InstrId) -> &'a Instruction {
        self.computation.instruction(id)
    }

    /// The single value of an array-shaped instruction.
    fn emit1(&mut self, id: InstrId, index: &[Value]) -> R<Value> {
        let values = self.emit(id, index)?;
        Ok(values[0])
    }

    fn emit_uncached(&mut self, id: InstrId, index: &[Value]) -> R<Vec<Value>> {
        let instr = self.instr(id);
        if self.belongs_to_other_subgraph(id)
            && let Some(owner) = self.cx.partition.subgraph_of(id)
        {
            return self.call_subgraph(owner, index);
        }
        let span = instr.spans.whole;
        let types = self.element_types(instr)?;
        use Opcode::*;
        let v = match instr.opcode {
            Parameter => return self.parameter(instr, index),
            Constant => self.constant(instr, index)?,
            Tuple => {
                let mut values = Vec::new();
                for k in 0..instr.operands.len() {
                    values.extend(self.operand(id, k, index, &[])?);
                }
                return Ok(values);
            }
            GetTupleElement => {
                let tuple = self.operand(id, 0, index, &[])?;
                let shape = &self.instr(instr.operands[0]).shape;
                let i = instr.int("index").unwrap_or(0) as usize;
                let range = leaf_range(shape, i)
                    .ok_or_else(|| unsupported(span, "get-tuple-element of a non-tuple"))?;
                return Ok(tuple[range].to_vec());
            }
            Broadcast | Transpose | Reshape | Slice | Reverse | Copy => {
                return self.operand(id, 0, index, &[]);
            }
            Bitcast => {
                // A bitcast may also reinterpret the element type (of the same width).
                let v = self.operand(id, 0, index, &[])?[0];
                if self.b.module.value_type(v) == types[0] {
                    v
                } else {
                    self.b.cast(ir::dialects::arith::BITCAST, v, types[0])
                }
            }
            Gather => self.gather(id, index)?,
            Reduce => return self.reduce(id, index),
            Dot => self.dot(id, index, types[0])?,
            ReduceWindow => return self.reduce_window(id, index),
            DynamicUpdateSlice => self.dynamic_update_slice(id, index, types[0])?,
            Pad => self.pad(id, index, types[0])?,
            Concatenate => self.concatenate(id, index, types[0])?,
            DynamicSlice => self.dynamic_slice(id, index)?,
            Iota => self.iota(instr, index, types[0])?,
            Map => {
                let args = self.elementwise_operands(id, index)?;
                let callee = self.scalar_function(instr, "to_apply")?;
                let op = self.b.call(&callee, &args, &types);
                return Ok(self.b.module.results(op).collect());
            }
            _ => {
                let args = self.elementwise_operands(id, index)?;
                self.elementwise(instr, &args, types[0])?
            }
        };
        Ok(vec![v])
    }

    /// The values of operand `k` of `id`, read at the operand index that `id`'s indexing
    /// map gives for `index` (and `symbols`: range variables, then runtime variables).
    fn operand(
        &mut self,
        id: InstrId,
        k: usize,
        index: &[Value],
        symbols: &[Value],
    ) -> R<Vec<Value>> {
        let operand_index = if symbols.is_empty() {
            self.operand_index(id, k, index)?
        } else {
            let map = self.per_op_map(id, k)?;
            self.apply(&map, index, symbols)
        };
        let operand = self.instr(id).operands[k];
        self.emit(operand, &operand_index)
    }

    fn elementwise_operands(&mut self, id: InstrId, index: &[Value]) -> R<Vec<Value>> {
        (0..self.instr(id).operands.len())
            .map(|k| Ok(self.operand(id, k, index, &[])?[0]))
            .collect()
    }

    fn per_op_map(&mut self, id: InstrId, k: usize) -> R<OperandMap<'a>> {
        let cx: &'a FusionContext<'a> = self.cx;
        if let Scope::Subgraph(_) = self.scope
            && let Some(maps) = cx.partition.operand_maps(id)
        {
            return Ok(OperandMap::Partition(&maps[k]));
        }
        let maps = match self.per_op.get(&id) {
            Some(maps) => maps.clone(),
            None => {
                let instr = self.instr(id);
                let maps: Rc<[IndexingMap]> = output_to_input(instr, self.computation)
                    .map_err(|e| Diagnostic::new(instr.spans.whole, e.to_string()))?
                    .into();
                self.per_op.insert(id, maps.clone());
                maps
            }
        };
        Ok(OperandMap::Computed(maps, k))
    }

    /// The map's results at (`dims`, `symbols`): a result that is a plain dimension, symbol
    /// or constant is used directly; others become `xla_gpu.apply_indexing`.
    pub fn apply(&mut self, map: &IndexingMap, dims: &[Value], symbols: &[Value]) -> Vec<Value> {
        let mut out = Vec::with_capacity(map.results.len());
        for e in &map.results {
            let v = match e {
                AffineExpr::Dim(i) => dims[*i],
                AffineExpr::Symbol(i) => symbols[*i],
                AffineExpr::Constant(c) => self.b.index(*c),
                _ => {
                    let mut single = map.clone();
                    single.results = vec![e.clone()];
                    single.constraints.clear();
                    let ip = self.b.insertion_point();
                    xla_gpu::build_apply_indexing(self.b.module, ip, single, dims, symbols)[0]
                }
            };
            out.push(v);
        }
        out
    }

    /// Whether every constraint of `map` holds at (`dims`, `symbols`), as an `i1`.
    fn constraints_hold(
        &mut self,
        map: &IndexingMap,
        dims: &[Value],
        symbols: &[Value],
    ) -> Option<Value> {
        let mut cond: Option<Value> = None;
        // Bounds the variables' ranges already imply need no check.
        let mut unconstrained = map.clone();
        unconstrained.constraints.clear();
        for (e, bounds) in &map.constraints {
            let mut single = map.clone();
            single.results = vec![e.clone()];
            single.constraints.clear();
            let v = self.apply(&single, dims, symbols)[0];
            let range = unconstrained.range_of(e);
            let mut checks = Vec::new();
            if range.lo < bounds.lo {
                let lo = self.b.index(bounds.lo);
                checks.push(self.b.cmpi("sge", v, lo));
            }
            if range.hi > bounds.hi {
                let hi = self.b.index(bounds.hi);
                checks.push(self.b.cmpi("sle", v, hi));
            }
            for c in checks {
                cond = Some(match cond {
                    Some(acc) => self.b.binary(ir::dialects::arith::ANDI, acc, c),
                    None => c,
                });
            }
        }
        cond
    }

    fn call_subgraph(&mut self, subgraph: usize, index: &[Value]) -> R<Vec<Value>> {
        let sg = &self.cx.partition.subgraphs[subgraph];
        let root = self.instr(sg.root);
        let types =
            leaf_element_types(&root.shape).map_err(|e| unsupported(root.spans.whole, e))?;
        let mut args = self.params.clone();
        args.extend_from_slice(index);
        let name = self.cx.subgraph_functions[subgraph].clone();
        let ip = self.b.insertion_point();
        let op = xla_gpu::build_pure_call(self.b.module, ip, &name, &args, &types);
        Ok(self.b.module.results(op).collect())
    }

    fn parameter(&mut self, instr: &Instruction, index: &[Value]) -> R<Vec<Value>> {
        let n = instr.parameter_number().unwrap_or(0) as usize;
        match self.scope {
            Scope::Scalar(_) => Ok(vec![self.params[n]]),
            Scope::Subgraph(_) => {
                if instr.shape.is_tuple() {
                    return Err(unsupported(
                        instr.spans.whole,
                        format!("tuple-shaped parameter '{}'", instr.name),
                    ));
                }
                Ok(vec![self.b.extract(self.params[n], index)])
            }
        }
    }

    fn constant(&mut self, instr: &Instruction, index: &[Value]) -> R<Value> {
        let span = instr.spans.whole;
        let Some(hlo::Literal::Array(lit)) = instr.literal() else {
            return Err(unsupported(
                span,
                format!("constant '{}' is not an array literal", instr.name),
            ));
        };
        let Shape::Array(shape) = &instr.shape else {
            return Err(unsupported(span, "a tuple constant"));
        };
        let ty = element_type(shape.element_type).map_err(|e| unsupported(span, e))?;
        let narrow = hlo::narrow_float::Format::of(shape.element_type);
        let scalar = |v: &hlo::Value| -> R<ir::Scalar> {
            Ok(match *v {
                hlo::Value::Pred(b) => ir::Scalar::Int(b as i128),
                hlo::Value::Int(i) => ir::Scalar::Int(ir::attrs::normalize_int(i, ty)),
                hlo::Value::Float(f) if let Some(format) = narrow => {
                    let bits = format.encode(f);
                    ir::Scalar::Int(ir::attrs::normalize_int(i128::from(bits), ty))
                }
                hlo::Value::Float(f) => match ty.float_kind() {
                    Some(kind) => ir::Scalar::Float(ir::FloatValue(ir::float::round_to(kind, f))),
                    None => return Err(unsupported(span, "a float literal of an integer type")),
                },
                hlo::Value::Complex(re, im) => {
                    let bits = match shape.element_type {
                        PrimitiveType::C64 => hlo::evaluate::C64 {
                            re: re as f32,
                            im: im as f32,
                        }
                        .bits(),
                        PrimitiveType::C128 => hlo::evaluate::C128 { re, im }.bits(),
                        _ => return Err(unsupported(span, "complex constants")),
                    };
                    ir::Scalar::Int(ir::attrs::normalize_int(bits as i128, ty))
                }
            })
        };
        if lit.values.len() == 1 {
            let s = scalar(&lit.values[0])?;
            let attr = match s {
                ir::Scalar::Int(i) => Attribute::int(i, ty),
                ir::Scalar::Float(f) => Attribute::Float(f, ty),
            };
            return Ok(self.b.constant(attr));
        }
        let tensor = tensor_type(shape).map_err(|e| unsupported(span, e))?;
        let values = lit.values.iter().map(scalar).collect::<R<Vec<_>>>()?;
        let t = self.b.constant(Attribute::dense(tensor, values));
        Ok(self.b.extract(t, index))
    }

    fn iota(&mut self, instr: &Instruction, index: &[Value], ty: Type) -> R<Value> {
        let element = instr.shape.as_array().map(|a| a.element_type);
        if let Some(t) = element.filter(|&t| hlo::narrow_float::Format::of(t).is_some()) {
            let what = format!("iota of {t} in '{}'", instr.name);
            return Err(unsupported(instr.spans.whole, what));
        }
        let d = instr.int("iota_dimension").unwrap_or(0) as usize;
        let i = index[d];
        // Of a complex type: the index as the real part, a zero imaginary part.
        if let Some(part) = element.and_then(PrimitiveType::complex_component) {
            let part_ty =
                crate::types::element_type(part).map_err(|e| unsupported(instr.spans.whole, e))?;
            let i64v = self.b.cast(ir::dialects::arith::INDEX_CAST, i, Type::I64);
            let re = self.b.cast(ir::dialects::arith::SITOFP, i64v, part_ty);
            return Ok(complex::real_to_complex(&mut self.b, re));
        }
        Ok(if ty.is_float() {
            let i64v = self.b.cast(ir::dialects::arith::INDEX_CAST, i, Type::I64);
            self.b.cast(ir::dialects::arith::SITOFP, i64v, ty)
        } else {
            self.b.cast(ir::dialects::arith::INDEX_CASTUI, i, ty)
        })
    }

    /// `pad`: the operand where the index lands on it, the padding value elsewhere.
    fn pad(&mut self, id: InstrId, index: &[Value], ty: Type) -> R<Value> {
        let map = self.per_op_map(id, 0)?;
        let pad_value = self.operand(id, 1, index, &[])?[0];
        let Some(cond) = self.constraints_hold(&map, index, &[]) else {
            return Ok(self.operand(id, 0, index, &[])?[0]);
        };
        self.if_else(
            id,
            cond,
            ty,
            |e| Ok(e.operand(id, 0, index, &[])?[0]),
            |_| Ok(pad_value),
        )
    }

    /// `concatenate`: a chain of `scf.if` on the concatenated dimension.
    fn concatenate(&mut self, id: InstrId, index: &[Value], ty: Type) -> R<Value> {
        self.concatenate_from(id, 0, index, ty)
    }

    fn concatenate_from(&mut self, id: InstrId, k: usize, index: &[Value], ty: Type) -> R<Value> {
        let last = self.instr(id).operands.len() - 1;
        let map = self.per_op_map(id, k)?;
        let cond = if k == last {
            None
        } else {
            self.constraints_hold(&map, index, &[])
        };
        match cond {
            None => Ok(self.operand(id, k, index, &[])?[0]),
            Some(c) => self.if_else(
                id,
                c,
                ty,
                |e| Ok(e.operand(id, k, index, &[])?[0]),
                |e| e.concatenate_from(id, k + 1, index, ty),
            ),
        }
    }

    /// `dynamic-slice`: start indices are read, clamped into `[0, dim - size]` as XLA
    /// does, and passed as the map's runtime variables.
    fn dynamic_slice(&mut self, id: InstrId, index: &[Value]) -> R<Value> {
        let instr = self.instr(id);
        let map = self.per_op_map(id, 0)?;
        let mut starts = Vec::new();
        for (k, var) in map.rt_vars.iter().enumerate() {
            let start = self.operand(id, k + 1, index, &[])?[0];
            starts.push(self.clamped_index(start, instr.operands[k + 1], var.bounds.hi));
        }
        let operand_index = self.apply(&map, index, &starts);
        self.emit1(instr.operands[0], &operand_index)
    }

    /// `dynamic-update-slice` as XLA's loop emitter computes it inside a loop fusion: the
    /// clamped start indices are read, and the element is the update's where the index
    /// lies in the update's window (the update map's constraints), the operand's
    /// elsewhere. Start indices of dimensions the update covers are always 0 (their runtime
    /// variable's range is `[0, 0]`) and are not read.
    fn dynamic_update_slice(&mut self, id: InstrId, index: &[Value], ty: Type) -> R<Value> {
        let instr = self.instr(id);
        let update_map = self.per_op_map(id, 1)?;
        let mut starts = Vec::with_capacity(update_map.rt_vars.len());
        for (k, var) in update_map.rt_vars.iter().enumerate() {
            starts.push(if var.bounds.hi == 0 {
                self.b.index(0)
            } else {
                let start = self.operand(id, k + 2, index, &[])?[0];
                self.clamped_index(start, instr.operands[k + 2], var.bounds.hi)
            });
        }
        let update = instr.operands[1];
        let update_index = self.apply(&update_map, index, &starts);
        let Some(in_window) = self.constraints_hold(&update_map, index, &starts) else {
            return self.emit1(update, &update_index);
        };
        self.if_else(
            id,
            in_window,
            ty,
            |e| e.emit1(update, &update_index),
            |e| Ok(e.operand(id, 0, index, &[])?[0]),
        )
    }

    /// `gather` (canonical form): component `i` of the index row is read, clamped into
    /// its operand dimension, and passed as runtime variable `i` of the operand map.
    fn gather(&mut self, id: InstrId, index: &[Value]) -> R<Value> {
        let instr = self.instr(id);
        let operand_map = self.per_op_map(id, 0)?;
        let mut starts = Vec::new();
        for (i, var) in operand_map.rt_vars.iter().enumerate() {
            let component = self.b.index(i as i64);
            let start = self.operand(id, 1, index, &[component])?[0];
            starts.push(self.clamped_index(start, instr.operands[1], var.bounds.hi));
        }
        let operand_index = self.apply(&operand_map, index, &starts);
        self.emit1(instr.operands[0], &operand_index)
    }

    /// An integer start index as an `index` clamped into `[0, hi]` (XLA's clamp). The
    /// clamp happens in the index's own type, signed or unsigned as its HLO type says, and
    /// only then is the value cast: a cast first would read an unsigned index past the
    /// signed range as negative (clamped to 0 instead of `hi`), and a 32-bit `index`
    /// would truncate a 64-bit one before it is clamped.
    fn clamped_index(&mut self, start: Value, from: InstrId, hi: i64) -> Value {
        let unsigned = self
            .instr(from)
            .shape
            .as_array()
            .is_some_and(|a| a.element_type.is_unsigned_int());
        let ty = self.b.module.value_type(start);
        let bits = ty.int_width().expect("start indices are integers");
        let type_max: i128 = if unsigned {
            (1i128 << bits) - 1
        } else {
            (1i128 << (bits - 1)) - 1
        };
        let mut i = start;
        if !unsigned {
            let zero = self.b.int(0, ty);
            i = self.b.binary(ir::dialects::arith::MAXSI, i, zero);
        }
        if i128::from(hi) < type_max {
            let hi = self.b.int(hi.into(), ty);
            i = self.b.binary(
                if unsigned {
                    ir::dialects::arith::MINUI
                } else {
                    ir::dialects::arith::MINSI
                },
                i,
                hi,
            );
        }
        let cast = if unsigned {
            ir::dialects::arith::INDEX_CASTUI
        } else {
            ir::dialects::arith::INDEX_CAST
        };
        self.b.cast(cast, i, Type::INDEX)
    }

    /// `reduce`: loops over the reduced dimensions (the map's range variables, outermost
    /// first, so elements are combined in row-major order) carrying the accumulators, calling
    /// the reducer function on (accumulators, inputs).
    fn reduce(&mut self, id: InstrId, index: &[Value]) -> R<Vec<Value>> {
        let r = self.reduction(id, index)?;
        let (callee, types) = (r.callee.as_str(), &r.types);
        self.range_var_loops(id, &r.map, r.inits, Vec::new(), &mut |this, accs, ivs| {
            let mut args = accs;
            for k in 0..r.n {
                args.push(this.operand(id, k, index, ivs)?[0]);
            }
            let op = this.b.call(callee, &args, types);
            Ok(this.b.module.results(op).collect())
        })
    }

    /// `dot` as XLA's elemental emitter writes it: a loop nest over the contracted
    /// dimensions (the operands' maps' range variables) carrying `acc += lhs * rhs` from 0
    /// in the result's type (bf16 in f32, truncated at the end), the operands converted to
    /// it first; the evaluator computes the same sequence.
    fn dot(&mut self, id: InstrId, index: &[Value], ty: Type) -> R<Value> {
        let instr = self.instr(id);
        let result = instr
            .shape
            .as_array()
            .map_or(PrimitiveType::F32, |a| a.element_type);
        let operand_type = |k: usize| {
            self.instr(instr.operands[k])
                .shape
                .as_array()
                .map_or(PrimitiveType::F32, |a| a.element_type)
        };
        let (lhs_type, rhs_type) = (operand_type(0), operand_type(1));
        if result.is_complex() {
            return self.complex_dot(id, index, ty, (lhs_type, rhs_type, result));
        }
        let (acc_prim, acc_ty) = match result {
            PrimitiveType::BF16 => (PrimitiveType::F32, Type::F32),
            PrimitiveType::F16 | PrimitiveType::F32 | PrimitiveType::F64 | PrimitiveType::Pred => {
                (result, ty)
            }
            t if t.is_int() => (result, ty),
            t => {
                let what = format!("dot producing {t} in '{}'", instr.name);
                return Err(unsupported(instr.spans.whole, what));
            }
        };
        let map = self.per_op_map(id, 0)?;
        let zero = if acc_ty.is_float() {
            self.b.float(0.0, acc_ty)
        } else {
            self.b.int(0, acc_ty)
        };
        let (mul, add) = match acc_prim {
            PrimitiveType::Pred => (ir::dialects::arith::ANDI, ir::dialects::arith::ORI),
            t if t.is_float() => (ir::dialects::arith::MULF, ir::dialects::arith::ADDF),
            _ => (ir::dialects::arith::MULI, ir::dialects::arith::ADDI),
        };
        let sum =
            self.range_var_loops(id, &map, vec![zero], Vec::new(), &mut |this, accs, ivs| {
                let lhs = this.operand(id, 0, index, ivs)?[0];
                let rhs = this.operand(id, 1, index, ivs)?[0];
                let lhs = arith::convert(&mut this.b, lhs, lhs_type, acc_prim, acc_ty);
                let rhs = arith::convert(&mut this.b, rhs, rhs_type, acc_prim, acc_ty);
                let product = this.b.binary(mul, lhs, rhs);
                Ok(vec![this.b.binary(add, accs[0], product)])
            })?[0];
        Ok(arith::convert(&mut self.b, sum, acc_prim, result, ty))
    }

    /// A dot with a complex result: both operands converted to it, `acc + l · r` from zero
    /// (the textbook product, each step rounded to the part type, as the evaluator).
    fn complex_dot(
        &mut self,
        id: InstrId,
        index: &[Value],
        ty: Type,
        (lhs_type, rhs_type, result): (PrimitiveType, PrimitiveType, PrimitiveType),
    ) -> R<Value> {
        let span = self.instr(id).spans.whole;
        let map = self.per_op_map(id, 0)?;
        let part = result.complex_component().unwrap_or(PrimitiveType::F32);
        let part_ty = crate::types::element_type(part).map_err(|e| unsupported(span, e))?;
        let zero = self.b.float(0.0, part_ty);
        let zero = complex::real_to_complex(&mut self.b, zero);
        let sum =
            self.range_var_loops(id, &map, vec![zero], Vec::new(), &mut |this, accs, ivs| {
                let lhs = this.operand(id, 0, index, ivs)?[0];
                let rhs = this.operand(id, 1, index, ivs)?[0];
                let mut to_result = |v: Value, from: PrimitiveType| {
                    complex::convert_complex(&mut this.b, v, from, result, ty, this.cx.target)
                        .map_err(|e| unsupported(span, e))
                };
                let (lhs, rhs) = (to_result(lhs, lhs_type)?, to_result(rhs, rhs_type)?);
                Ok(vec![complex::multiply_add(&mut this.b, accs[0], lhs, rhs)])
            })?;
        Ok(sum[0])
    }

    /// What `reduce` and `reduce-window` start from: the number of inputs, the init values
    /// (read at `index`), the input map, the reducer function and the accumulator types.
    fn reduction(&mut self, id: InstrId, index: &[Value]) -> R<Reduction<'a>> {
        let instr = self.instr(id);
        let n = instr.operands.len() / 2;
        let mut inits = Vec::with_capacity(n);
        for k in 0..n {
            inits.push(self.operand(id, n + k, index, &[])?[0]);
        }
        let map = self.per_op_map(id, 0)?;
        let callee = self.scalar_function(instr, "to_apply")?;
        let types: Vec<Type> = inits.iter().map(|&v| self.b.module.value_type(v)).collect();
        Ok(Reduction {
            n,
            inits,
            map,
            callee,
            types,
        })
    }

    /// One `scf.for` per range variable of `map` still without an induction variable in
    /// `ivs`, carrying `accs`; innermost, `step(accumulators, all induction variables)`
    /// gives the next accumulators (`reduce` and `dot`).
    fn range_var_loops(
        &mut self,
        id: InstrId,
        map: &IndexingMap,
        accs: Vec<Value>,
        ivs: Vec<Value>,
        step: &mut LoopStep<'_, Self>,
    ) -> R<Vec<Value>> {
        let depth = ivs.len();
        if depth == map.range_vars.len() {
            return step(self, accs, &ivs);
        }
        let bounds = map.range_vars[depth].bounds;
        let lb = self.b.index(bounds.lo);
        let ub = self.b.index(bounds.hi + 1);
        let one = self.b.index(1);
        let (op, body) =
            scf::build_for(self.b.module, self.b.insertion_point(), lb, ub, one, &accs);
        let args = self.b.module.block_args(body).to_vec();
        let saved = self.b.insertion_point();
        self.b.set_insertion_point(InsertPoint::BlockEnd(body));
        let mut ivs = ivs;
        ivs.push(args[0]);
        let result = self.in_region(id, |this| {
            this.range_var_loops(id, map, args[1..].to_vec(), ivs, step)
        });
        let yielded = result?;
        scf::build_yield(self.b.module, body, &yielded);
        self.b.set_insertion_point(saved);
        Ok(self.b.module.results(op).collect())
    }

    /// `reduce-window` as XLA's elemental emitter writes it: an `xla_gpu.loop` over the
    /// window (the input map's range variables, at the output index) whose map constraints
    /// skip padding and base-dilation holes, carrying the accumulators from the init values
    /// and calling the reducer on (accumulators, inputs at the map's results) with
    /// `xla_gpu.pure_call` (a `func.call` would not verify in real MLIR: the unregistered
    /// loop op might be a symbol table, which hides `@reducer` from it).
    fn reduce_window(&mut self, id: InstrId, index: &[Value]) -> R<Vec<Value>> {
        let Reduction {
            n,
            inits,
            map,
            callee,
            types,
        } = self.reduction(id, index)?;
        let inputs = self.instr(id).operands[..n].to_vec();
        let map = with_full_output_domain(IndexingMap::clone(&map), &self.instr(id).shape);
        if map.range_vars.is_empty() && map.constraints.is_empty() {
            // A window of one element that never reaches padding.
            let input_index = self.apply(&map, index, &[]);
            let mut args = inits;
            for &x in &inputs {
                args.push(self.emit1(x, &input_index)?);
            }
            let ip = self.b.insertion_point();
            let op = xla_gpu::build_pure_call(self.b.module, ip, &callee, &args, &types);
            return Ok(self.b.module.results(op).collect());
        }
        let ip = self.b.insertion_point();
        let (op, body) = xla_gpu::build_loop(self.b.module, ip, map.clone(), index, &inits);
        // Body arguments: the window's induction variables, the input index, the
        // accumulators.
        let args = self.b.module.block_args(body).to_vec();
        let (input_index, accs) = args[map.range_vars.len()..].split_at(map.results.len());
        let saved = self.b.insertion_point();
        self.b.set_insertion_point(InsertPoint::BlockEnd(body));
        let mut call_args = accs.to_vec();
        let read: R<()> = self.in_region(id, |this| {
            inputs.iter().try_for_each(|&x| {
                call_args.push(this.emit1(x, input_index)?);
                Ok(())
            })
        });
        read?;
        let ip = self.b.insertion_point();
        let call = xla_gpu::build_pure_call(self.b.module, ip, &callee, &call_args, &types);
        let yielded: Vec<Value> = self.b.module.results(call).collect();
        xla_gpu::build_yield(self.b.module, body, &yielded);
        self.b.set_insertion_point(saved);
        Ok(self.b.module.results(op).collect())
    }

    /// `scf.if cond -> ty { then } else { otherwise }`, each branch in its own cache scope.
    fn if_else(
        &mut self,
        id: InstrId,
        cond: Value,
        ty: Type,
        then: impl FnOnce(&mut Self) -> R<Value>,
        otherwise: impl FnOnce(&mut Self) -> R<Value>,
    ) -> R<Value> {
        let (op, then_block, else_block) =
            scf::build_if(self.b.module, self.b.insertion_point(), cond, &[ty], true);
        let else_block = else_block.expect("an else block was asked for");
        let saved = self.b.insertion_point();
        self.b
            .set_insertion_point(InsertPoint::BlockEnd(then_block));
        let v = self.in_region(id, then);
        scf::build_yield(self.b.module, then_block, &[v?]);
        self.b
            .set_insertion_point(InsertPoint::BlockEnd(else_block));
        let v = self.in_region(id, otherwise);
        scf::build_yield(self.b.module, else_block, &[v?]);
        self.b.set_insertion_point(saved);
        Ok(self.b.module.result(op, 0))
    }

    fn scalar_function(&self, instr: &Instruction, attr: &str) -> R<String> {
        let called = instr.called(attr).ok_or_else(|| {
            unsupported(
                instr.spans.whole,
                format!("{} without {attr}=", instr.opcode),
            )
        })?;
        Ok(self.cx.scalar_functions[&called.id].clone())
    }
}
/// `map` over every index of the output `shape`: simplifying a window of one element whose
/// padding some outputs reach turns its bounds constraint into narrower ranges of the
/// output dimensions (`d0 in [1, 1]`), which a caller at any output index would not test;
/// they become constraints again, so that the window of an output in the padding is empty
/// and the result is the init value.
fn with_full_output_domain(mut map: IndexingMap, shape: &Shape) -> IndexingMap {
    let Some(out) = leaves(shape).into_iter().next() else {
        return map;
    };
    let mut narrowed = Vec::new();
    for (i, (d, &size)) in map.dims.iter_mut().zip(&out.dims).enumerate() {
        let full = indexing::Interval::new(0, size - 1);
        if d.bounds != full {
            narrowed.push((indexing::dim(i), d.bounds));
            d.bounds = full;
        }
    }
    for (e, bounds) in narrowed {
        map.add_constraint(e, bounds);
    }
    map
}

/// The leaves of `shape` as tensor types.
pub fn leaf_tensor_types(shape: &Shape) -> Result<Vec<Type>, String> {
    leaves(shape).into_iter().map(tensor_type).collect()
}

/// Emits a scalar computation (a reducer) as `func.func private @name(scalars) -> scalars`.
pub fn emit_scalar_function(
    cx: &FusionContext<'_>,
    m: &mut ir::Module,
    id: ComputationId,
) -> R<()> {
    let computation = cx.module.computation(id);
    let span = computation.span;
    let mut inputs = Vec::new();
    for p in computation.parameters() {
        let shape = &computation.instruction(p).shape;
        match shape {
            Shape::Array(a) if a.dims.is_empty() => {
                inputs.push(element_type(a.element_type).map_err(|e| unsupported(span, e))?)
            }
            _ => {
                return Err(unsupported(
                    span,
                    format!(
                        "computation '{}' has a non-scalar parameter",
                        computation.name
                    ),
                ));
            }
        }
    }
    let root = computation.root_instruction();
    let results = leaf_element_types(&root.shape).map_err(|e| unsupported(span, e))?;
    let name = &cx.scalar_functions[&id];
    let (func, entry) = irfunc::build_func(m, name, &inputs, &results);
    m.set_prop(func, "sym_visibility", Attribute::string("private"));
    let body = m.body();
    m.insert_op(func, InsertPoint::BlockEnd(body));
    let params = m.block_args(entry).to_vec();
    let b = Builder::at_end(m, entry);
    let mut e = ElementalEmitter::new(cx, b, Scope::Scalar(id), params);
    let values = e.emit(computation.root, &[])?;
    e.b.ret(&values);
    Ok(())
}

/// Emits subgraph `index` of the fusion as
/// `func.func private @name(%params: tensors, %indices: index) -> (element types)`.
pub fn emit_subgraph_function(cx: &FusionContext<'_>, m: &mut ir::Module, index: usize) -> R<()> {
    let fusion = cx.fusion;
    let sg = &cx.partition.subgraphs[index];
    let span = fusion.instruction(sg.root).spans.whole;
    let mut inputs = parameter_types(fusion)?;
    let num_params = inputs.len();
    inputs.extend(sg.index_space.iter().map(|_| Type::INDEX));
    let results =
        leaf_element_types(&fusion.instruction(sg.root).shape).map_err(|e| unsupported(span, e))?;
    let (func, entry) = irfunc::build_func(m, &cx.subgraph_functions[index], &inputs, &results);
    m.set_prop(func, "sym_visibility", Attribute::string("private"));
    let mut arg_attrs = vec![Attribute::dict(Vec::new()); num_params];
    arg_attrs.extend(sg.index_space.iter().map(|&d| range_attr(0, d - 1)));
    m.set_prop(func, "arg_attrs", Attribute::Array(arg_attrs));
    let body = m.body();
    m.insert_op(func, InsertPoint::BlockEnd(body));
    let args = m.block_args(entry).to_vec();
    let (params, indices) = args.split_at(num_params);
    let b = Builder::at_end(m, entry);
    let mut e = ElementalEmitter::new(cx, b, Scope::Subgraph(index), params.to_vec());
    let values = e.emit(sg.root, indices)?;
    e.b.ret(&values);
    Ok(())
}
