//! HLO indexing analysis: for an instruction, which element of each operand an
//! element of its output reads, as [`IndexingMap`]s from the output index; and the
//! composition of those maps along a fusion, from the root towards the parameters.
//!
//! Every per-op map has the instruction's output index as its dimensions (`d_i in [0,
//! size_i - 1]`) and one result per dimension of the operand (none for a scalar operand read
//! at every output element, such as a pad value, a reduce's initial value or a scalar
//! predicate of `select`). Range variables (`s_i`) enumerate elements folded into one output
//! element (the reduced dimensions of `reduce`, the window of `reduce-window`, the
//! components of a gather index vector); runtime variables (`rt_i`) stand for values only
//! known on the device (dynamic-slice, dynamic-update-slice and gather start indices,
//! already clamped into range as XLA does).
//! Constraints select the output elements that read an operand at all (pad, concatenate,
//! the padding of a reduce-window, the window of a dynamic-update-slice).
//!
//! What has no map here is refused with [`Unsupported`], naming the op and the reason.

use std::fmt;

use hlo::graph::ComputationGraph;
use hlo::{ArrayShape, AttrValue, Computation, InstrId, Instruction, Opcode, Shape};

use crate::expr::{AffineExpr, cst, dim, sym};
use crate::map::{IndexingMap, Interval, Variable, default_dims, default_range_vars};

/// An instruction whose indexing this analysis does not describe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The instruction's name.
    pub instruction: String,
    pub opcode: Opcode,
    pub reason: String,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unsupported: indexing of {} '{}': {}",
            self.opcode, self.instruction, self.reason
        )
    }
}

impl std::error::Error for Unsupported {}

/// The dimensions of an instruction's output index: its array dimensions, or for a tuple
/// whose elements are arrays of one set of dimensions (a variadic reduce, a multi-output
/// root of one shape), those dimensions. `None` for other tuples and for dynamic shapes.
pub fn index_space(shape: &Shape) -> Option<Vec<i64>> {
    match shape {
        Shape::Array(a) if !a.is_dynamic() => Some(a.dims.clone()),
        Shape::Array(_) => None,
        Shape::Tuple(elements) => {
            let mut spaces = elements.iter().map(|e| match e {
                Shape::Array(a) if !a.is_dynamic() => Some(&a.dims),
                _ => None,
            });
            let first = spaces.next()??;
            spaces.all(|s| s == Some(first)).then(|| first.clone())
        }
    }
}

/// Output→input maps of one instruction: one map per operand position, in operand order
/// (none for parameters, constants and iota). Dimensions are the output index.
///
/// Operands are looked up in `computation`, the computation that holds `instr`.
pub fn output_to_input(
    instr: &Instruction,
    computation: &Computation,
) -> Result<Vec<IndexingMap>, Unsupported> {
    let cx = Cx { instr, computation };
    let out = cx.out_dims()?;
    use Opcode::*;
    match instr.opcode {
        Parameter | Constant | Iota => cx.no_operands(),
        op if op.is_elementwise_unary()
            || op.is_elementwise_binary()
            || matches!(
                op,
                Compare
                    | Select
                    | Clamp
                    | Convert
                    | Complex
                    | Real
                    | Imag
                    | IsFinite
                    | ReducePrecision
                    | StochasticConvert
                    | Map
            ) =>
        {
            cx.elementwise(&out)
        }
        BitcastConvert => cx.bitcast_convert(&out),
        Broadcast => cx.broadcast(&out),
        Transpose => cx.transpose(&out),
        Reshape => cx.reshape(&out),
        Bitcast => cx.bitcast(&out),
        Slice => cx.slice(&out),
        Reverse => cx.reverse(&out),
        Pad => cx.pad(&out),
        Concatenate => cx.concatenate(&out),
        Reduce => cx.reduce(&out),
        Dot => cx.dot(&out),
        ReduceWindow => cx.reduce_window(&out),
        DynamicSlice => cx.dynamic_slice(&out),
        DynamicUpdateSlice => cx.dynamic_update_slice(&out),
        Gather => cx.gather(&out),
        Tuple => cx.tuple(&out),
        GetTupleElement => cx.get_tuple_element(&out),
        _ => Err(cx.unsupported("no indexing map is defined for this op")),
    }
}

/// The maps through which the instructions of a fusion are read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FusionIndexing {
    /// The instructions the maps start from, each read through the identity on its own
    /// output index: the ROOT, or the distinct operands of a tuple ROOT.
    pub roots: Vec<InstrId>,
    /// `maps[i]`: the distinct maps from a root's output index to the index of instruction
    /// `InstrId(i)` at which it is read; empty for instructions no root reaches (and for a
    /// tuple ROOT itself, which has no single index).
    pub maps: Vec<Vec<IndexingMap>>,
}

impl FusionIndexing {
    pub fn maps(&self, id: InstrId) -> &[IndexingMap] {
        &self.maps[id.0]
    }
}

/// For every instruction reachable from the computation's root (from each operand of a
/// tuple root), the distinct maps through which it is read, composed from the root towards
/// the parameters. Maps from several roots of a tuple are gathered into one set per
/// instruction; use [`indexing_from`] to keep the roots apart.
pub fn fusion_indexing(computation: &Computation) -> Result<FusionIndexing, Unsupported> {
    let root = computation.root_instruction();
    let roots: Vec<InstrId> = if root.opcode == Opcode::Tuple {
        let mut roots = Vec::new();
        for &operand in &root.operands {
            if !roots.contains(&operand) {
                roots.push(operand);
            }
        }
        roots
    } else {
        vec![computation.root]
    };
    let mut maps = vec![Vec::new(); computation.instructions.len()];
    for &r in &roots {
        for (all, found) in maps.iter_mut().zip(indexing_from(computation, r)?) {
            for map in found {
                insert_distinct(all, map);
            }
        }
    }
    Ok(FusionIndexing { roots, maps })
}

/// The distinct maps from the output index of `root` to every instruction `root` reaches
/// (indexed by `InstrId`; empty where it reaches none): `root` itself is read through the
/// identity, and an operand through each of its users' maps composed with the user's
/// per-op map for that operand.
pub fn indexing_from(
    computation: &Computation,
    root: InstrId,
) -> Result<Vec<Vec<IndexingMap>>, Unsupported> {
    let root_instr = computation.instruction(root);
    let Some(dims) = index_space(&root_instr.shape) else {
        return Err(Cx {
            instr: root_instr,
            computation,
        }
        .unsupported("the root has no single output index (a dynamic or mixed tuple shape)"));
    };
    let mut maps: Vec<Vec<IndexingMap>> = vec![Vec::new(); computation.instructions.len()];
    maps[root.0].push(IndexingMap::identity(&dims));
    // Users come before their operands in reversed post-order, so every map of a user is
    // known before it is pushed into the operands.
    for id in ComputationGraph::new(computation)
        .post_order_from(root)
        .into_iter()
        .rev()
    {
        if maps[id.0].is_empty() {
            continue;
        }
        let instr = computation.instruction(id);
        let per_op = output_to_input(instr, computation)?;
        let users_maps = maps[id.0].clone();
        for (&operand, op_map) in instr.operands.iter().zip(&per_op) {
            for user_map in &users_maps {
                insert_distinct(&mut maps[operand.0], user_map.compose(op_map).simplified());
            }
        }
    }
    Ok(maps)
}

fn insert_distinct(set: &mut Vec<IndexingMap>, map: IndexingMap) {
    if !set.contains(&map) {
        set.push(map);
    }
}

/// `e + c`, leaving out a zero.
fn plus(e: AffineExpr, c: i64) -> AffineExpr {
    if c == 0 { e } else { e + c }
}

/// `e * c`, leaving out a one.
fn times(e: AffineExpr, c: i64) -> AffineExpr {
    if c == 1 { e } else { e * c }
}

/// The index in `dst` (row-major) of the element whose row-major position in `src` is the
/// position of the index `src_index` (expressions, one per `src` dimension). The dimensions
/// are split into the shortest groups of equal element counts, and each group is linearized
/// and delinearized on its own: expanding `[6] -> [2,3]` gives `(d floordiv 3, d mod 3)`,
/// collapsing gives `d0 * 3 + d1`, and unchanged dimensions stay as they are.
fn reshape_index(
    src: &[i64],
    src_index: &[AffineExpr],
    dst: &[i64],
) -> Result<Vec<AffineExpr>, String> {
    let count = |dims: &[i64]| {
        dims.iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| format!("the element count of {dims:?} overflows"))
    };
    let total = count(src)?;
    if total != count(dst)? {
        return Err(format!("{src:?} and {dst:?} have different element counts"));
    }
    if total == 0 {
        // No element to read: the domain is empty.
        return Ok(vec![cst(0); dst.len()]);
    }
    let mut result = Vec::with_capacity(dst.len());
    let (mut i, mut j) = (0, 0);
    while i < src.len() || j < dst.len() {
        let (i0, j0) = (i, j);
        let (mut p, mut q) = (1i64, 1i64);
        if i < src.len() {
            p *= src[i];
            i += 1;
        }
        if j < dst.len() {
            q *= dst[j];
            j += 1;
        }
        while p != q {
            if p < q && i < src.len() {
                p *= src[i];
                i += 1;
            } else if q < p && j < dst.len() {
                q *= dst[j];
                j += 1;
            } else {
                return Err(format!(
                    "cannot match the dimensions of {src:?} and {dst:?}"
                ));
            }
        }
        // The group's linear index.
        let mut linear: Option<AffineExpr> = None;
        let mut stride = 1i64;
        for k in (i0..i).rev() {
            if src[k] != 1 {
                let term = times(src_index[k].clone(), stride);
                linear = Some(match linear {
                    None => term,
                    Some(rest) => term + rest,
                });
            }
            stride *= src[k];
        }
        let linear = linear.unwrap_or(cst(0));
        let mut major = 1i64;
        for k in j0..j {
            let size = dst[k];
            if size == 1 {
                result.push(cst(0));
                continue;
            }
            let stride: i64 = dst[k + 1..j].iter().product();
            let mut e = linear.clone();
            if stride > 1 {
                e = e.floor_div(stride);
            }
            if major > 1 {
                e = e.modulo(size);
            }
            result.push(e);
            major *= size;
        }
    }
    Ok(result)
}

/// The instruction being analysed and its computation.
struct Cx<'a> {
    instr: &'a Instruction,
    computation: &'a Computation,
}

impl Cx<'_> {
    fn unsupported(&self, reason: impl Into<String>) -> Unsupported {
        Unsupported {
            instruction: self.instr.name.clone(),
            opcode: self.instr.opcode,
            reason: reason.into(),
        }
    }

    fn out_dims(&self) -> Result<Vec<i64>, Unsupported> {
        index_space(&self.instr.shape).ok_or_else(|| {
            self.unsupported(format!(
                "the result {} has no single static index space",
                self.instr.shape
            ))
        })
    }

    fn operand(&self, i: usize) -> Result<&Instruction, Unsupported> {
        let id = self
            .instr
            .operands
            .get(i)
            .ok_or_else(|| self.unsupported(format!("operand {i} is missing")))?;
        Ok(self.computation.instruction(*id))
    }

    fn operand_array(&self, i: usize) -> Result<&ArrayShape, Unsupported> {
        match &self.operand(i)?.shape {
            Shape::Array(a) if !a.is_dynamic() => Ok(a),
            other => {
                Err(self.unsupported(format!("operand {i} has shape {other}, not a static array")))
            }
        }
    }

    fn int_list(&self, name: &str) -> Result<&[i64], Unsupported> {
        self.instr
            .int_list(name)
            .ok_or_else(|| self.unsupported(format!("missing {name}= list")))
    }

    /// Dimension numbers in `0..rank`, as indices.
    fn dims_in(&self, name: &str, dims: &[i64], rank: usize) -> Result<Vec<usize>, Unsupported> {
        dims.iter()
            .map(|&d| {
                usize::try_from(d)
                    .ok()
                    .filter(|&d| d < rank)
                    .ok_or_else(|| self.unsupported(format!("{name}= names dimension {d}")))
            })
            .collect()
    }

    fn map(
        &self,
        out: &[i64],
        range_vars: Vec<Variable>,
        rt_vars: Vec<Variable>,
        results: Vec<AffineExpr>,
    ) -> IndexingMap {
        IndexingMap::new(default_dims(out), range_vars, rt_vars, results)
    }

    fn simple(&self, out: &[i64], results: Vec<AffineExpr>) -> IndexingMap {
        self.map(out, Vec::new(), Vec::new(), results)
    }

    /// The map of a scalar operand read at every output element: `(d..) -> ()`.
    fn scalar(&self, out: &[i64]) -> IndexingMap {
        self.simple(out, Vec::new())
    }

    fn identity(&self, out: &[i64]) -> IndexingMap {
        IndexingMap::identity(out)
    }

    fn no_operands(&self) -> Result<Vec<IndexingMap>, Unsupported> {
        if self.instr.operands.is_empty() {
            Ok(Vec::new())
        } else {
            Err(self.unsupported("expected no operands"))
        }
    }

    fn elementwise(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        (0..self.instr.operands.len())
            .map(|i| {
                let a = self.operand_array(i)?;
                if a.dims == out {
                    Ok(self.identity(out))
                } else if a.rank() == 0 {
                    Ok(self.scalar(out))
                } else {
                    Err(self.unsupported(format!(
                        "operand {i} {a} has neither the result's dimensions nor rank 0"
                    )))
                }
            })
            .collect()
    }

    fn bitcast_convert(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let Shape::Array(result) = &self.instr.shape else {
            return Err(self.unsupported("the result is not an array"));
        };
        let (from, to) = (a.element_type.bit_width(), result.element_type.bit_width());
        let r = a.rank();
        let results: Vec<AffineExpr> = (0..r.min(out.len())).map(dim).collect();
        if from == to && a.dims == out {
            Ok(vec![self.identity(out)])
        } else if from > to && out.len() == r + 1 && out[..r] == a.dims[..] {
            // Each input element becomes `from / to` output elements along a new minor dim.
            Ok(vec![self.simple(out, results)])
        } else if from < to && r == out.len() + 1 && a.dims[..out.len()] == out[..] {
            // Each output element packs the input elements along the minor dimension.
            let mut results = results;
            results.push(sym(0));
            Ok(vec![self.map(
                out,
                default_range_vars(&a.dims[r - 1..]),
                Vec::new(),
                results,
            )])
        } else {
            Err(self.unsupported(format!(
                "cannot relate {a} to the result {}",
                self.instr.shape
            )))
        }
    }

    fn broadcast(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let dims = self.instr.int_list("dimensions").unwrap_or(&[]);
        let dims = self.dims_in("dimensions", dims, out.len())?;
        if dims.len() != a.rank() || dims.iter().zip(&a.dims).any(|(&d, &n)| out[d] != n) {
            return Err(self.unsupported("dimensions= does not match the operand"));
        }
        Ok(vec![self.simple(out, dims.into_iter().map(dim).collect())])
    }

    fn transpose(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let perm = self.dims_in("dimensions", self.int_list("dimensions")?, a.rank())?;
        // Output dimension i is operand dimension perm[i].
        let mut results: Vec<Option<AffineExpr>> = vec![None; a.rank()];
        for (i, &p) in perm.iter().enumerate() {
            results[p] = Some(dim(i));
        }
        let results: Option<Vec<AffineExpr>> = results.into_iter().collect();
        match results {
            Some(results) if perm.len() == out.len() => Ok(vec![self.simple(out, results)]),
            _ => Err(self.unsupported("dimensions= is not a permutation")),
        }
    }

    fn reshape(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let index: Vec<AffineExpr> = (0..out.len()).map(dim).collect();
        let results = reshape_index(out, &index, &a.dims).map_err(|e| self.unsupported(e))?;
        Ok(vec![self.simple(out, results)])
    }

    /// A bitcast reinterprets the buffer: the output index is linearized in the output
    /// layout's physical order (major to minor) and delinearized in the operand's.
    fn bitcast(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let Shape::Array(result) = &self.instr.shape else {
            return Err(self.unsupported("the result is not an array"));
        };
        if a.element_type.bit_width() != result.element_type.bit_width() {
            return Err(self.unsupported(format!(
                "a bitcast between element types of different widths ({} to {})",
                a.element_type, result.element_type
            )));
        }
        let (out_layout, in_layout) = (result.layout_or_default(), a.layout_or_default());
        for (layout, what) in [(&out_layout, "result"), (&in_layout, "operand")] {
            if !layout.tiles.is_empty() {
                return Err(self.unsupported(format!("the {what} has a tiled layout {layout}")));
            }
        }
        let out_order = self.dims_in("layout", &out_layout.minor_to_major, out.len())?;
        let in_order = self.dims_in("layout", &in_layout.minor_to_major, a.rank())?;
        if out_order.len() != out.len() || in_order.len() != a.rank() {
            return Err(self.unsupported("a layout does not match its shape's rank"));
        }
        // Major to minor.
        let out_physical: Vec<i64> = out_order.iter().rev().map(|&d| out[d]).collect();
        let out_index: Vec<AffineExpr> = out_order.iter().rev().map(|&d| dim(d)).collect();
        let in_physical: Vec<i64> = in_order.iter().rev().map(|&d| a.dims[d]).collect();
        let physical = reshape_index(&out_physical, &out_index, &in_physical)
            .map_err(|e| self.unsupported(e))?;
        let mut results = vec![cst(0); a.rank()];
        for (e, &d) in physical.into_iter().zip(in_order.iter().rev()) {
            results[d] = e;
        }
        Ok(vec![self.simple(out, results)])
    }

    fn slice(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let slices = match self.instr.attribute("slice").map(|a| &a.value) {
            Some(AttrValue::Slice(s)) if s.len() == a.rank() && a.rank() == out.len() => s,
            _ => return Err(self.unsupported("missing or malformed slice=")),
        };
        let results = slices
            .iter()
            .enumerate()
            .map(|(i, s)| plus(times(dim(i), s.stride), s.start))
            .collect();
        Ok(vec![self.simple(out, results)])
    }

    fn reverse(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let reversed = self.dims_in("dimensions", self.int_list("dimensions")?, out.len())?;
        let results = (0..out.len())
            .map(|i| {
                if reversed.contains(&i) {
                    plus(-dim(i), out[i] - 1)
                } else {
                    dim(i)
                }
            })
            .collect();
        Ok(vec![self.simple(out, results)])
    }

    /// `(d - low) floordiv (interior + 1)`, where `d - low` lies in the operand's span and is
    /// a multiple of `interior + 1`; other output elements are the padding value.
    fn pad(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let padding = match self.instr.attribute("padding").map(|a| &a.value) {
            Some(AttrValue::Padding(p)) if p.len() == a.rank() && a.rank() == out.len() => p,
            _ => return Err(self.unsupported("missing or malformed padding=")),
        };
        let mut results = Vec::with_capacity(out.len());
        let mut constraints = Vec::new();
        for (i, (p, &n)) in padding.iter().zip(&a.dims).enumerate() {
            let offset = plus(dim(i), -p.low);
            let step = p.interior + 1;
            let span = Interval::new(0, (n - 1) * step);
            // d - low in [-low, out - 1 - low] always; the constraint matters only when that
            // reaches outside the operand's span.
            if !(span.lo <= -p.low && out[i] - 1 - p.low <= span.hi) {
                constraints.push((offset.clone(), span));
            }
            if p.interior == 0 {
                results.push(offset);
            } else {
                constraints.push((offset.clone().modulo(step), Interval::new(0, 0)));
                results.push(offset.floor_div(step));
            }
        }
        let mut map = self.simple(out, results);
        for (e, b) in constraints {
            map.add_constraint(e, b);
        }
        Ok(vec![map, self.scalar(out)])
    }

    /// One map per operand; the constraint on the concatenated dimension selects the output
    /// elements that come from that operand.
    fn concatenate(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let [c] = self.int_list("dimensions")? else {
            return Err(self.unsupported("dimensions= must name one dimension"));
        };
        let c = self.dims_in("dimensions", &[*c], out.len())?[0];
        let mut offset = 0;
        let mut maps = Vec::with_capacity(self.instr.operands.len());
        for i in 0..self.instr.operands.len() {
            let a = self.operand_array(i)?;
            if a.rank() != out.len() {
                return Err(self.unsupported(format!("operand {i} has the wrong rank")));
            }
            let n = a.dims[c];
            let results = (0..out.len())
                .map(|k| {
                    if k == c {
                        plus(dim(k), -offset)
                    } else {
                        dim(k)
                    }
                })
                .collect();
            let mut map = self.simple(out, results);
            if !(offset == 0 && n == out[c]) {
                map.add_constraint(dim(c), Interval::new(offset, offset + n - 1));
            }
            maps.push(map);
            offset += n;
        }
        Ok(maps)
    }

    /// The kept dimensions are the output index; one range variable per reduced dimension
    /// (in increasing dimension order) enumerates the elements folded into it.
    fn reduce(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let n = self.instr.operands.len();
        if n < 2 || !n.is_multiple_of(2) {
            return Err(self.unsupported("expected inputs followed by as many initial values"));
        }
        let a = self.operand_array(0)?;
        let mut reduced = self.dims_in("dimensions", self.int_list("dimensions")?, a.rank())?;
        reduced.sort_unstable();
        reduced.dedup();
        let kept: Vec<usize> = (0..a.rank()).filter(|d| !reduced.contains(d)).collect();
        if kept.iter().map(|&d| a.dims[d]).ne(out.iter().copied()) {
            return Err(self.unsupported("the result does not have the kept dimensions"));
        }
        let results: Vec<AffineExpr> = (0..a.rank())
            .map(|d| match reduced.iter().position(|&r| r == d) {
                Some(s) => sym(s),
                None => dim(kept.iter().position(|&k| k == d).unwrap_or(0)),
            })
            .collect();
        let sizes: Vec<i64> = reduced.iter().map(|&d| a.dims[d]).collect();
        let input = self.map(out, default_range_vars(&sizes), Vec::new(), results);
        let mut maps = Vec::with_capacity(n);
        for i in 0..n / 2 {
            if self.operand_array(i)?.dims != a.dims {
                return Err(self.unsupported(format!("input {i} differs from input 0")));
            }
            maps.push(input.clone());
        }
        for _ in 0..n / 2 {
            maps.push(self.scalar(out));
        }
        Ok(maps)
    }

    /// XLA's `ComputeOutputToInputDotOpIndexing`: the result index is (batch, lhs's free,
    /// rhs's free); both operands read their batch and free dimensions from it and their
    /// contracted dimensions from one range variable per contracted pair, in order.
    fn dot(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let dims = hlo::dot::DotDimensions::of(self.instr)
            .ok_or_else(|| self.unsupported("malformed dimension numbers"))?;
        let (lhs, rhs) = (self.operand_array(0)?, self.operand_array(1)?);
        let lhs_free = dims.free(true, lhs.rank());
        let rhs_free = dims.free(false, rhs.rank());
        if dims.result_dims(&lhs.dims, &rhs.dims) != out {
            return Err(self.unsupported("the result does not have dot's dimensions"));
        }
        let nb = dims.lhs_batch.len();
        let side = |a: &ArrayShape,
                    batch: &[usize],
                    contracting: &[usize],
                    free: &[usize],
                    first: usize| {
            (0..a.rank())
                .map(|d| {
                    if let Some(i) = batch.iter().position(|&b| b == d) {
                        dim(i)
                    } else if let Some(t) = contracting.iter().position(|&c| c == d) {
                        sym(t)
                    } else {
                        dim(first + free.iter().position(|&f| f == d).unwrap_or(0))
                    }
                })
                .collect::<Vec<AffineExpr>>()
        };
        let sizes: Vec<i64> = dims.lhs_contracting.iter().map(|&d| lhs.dims[d]).collect();
        let left = side(lhs, &dims.lhs_batch, &dims.lhs_contracting, &lhs_free, nb);
        let right = side(
            rhs,
            &dims.rhs_batch,
            &dims.rhs_contracting,
            &rhs_free,
            nb + lhs_free.len(),
        );
        Ok(vec![
            self.map(out, default_range_vars(&sizes), Vec::new(), left),
            self.map(out, default_range_vars(&sizes), Vec::new(), right),
        ])
    }

    /// XLA's `ComputeOutputToInputReduceWindowOpIndexing`: the window reads position
    /// `d_i * stride + s_i * window_dilation` of the padded, base-dilated operand, which is
    /// operand element `(that - pad_low) floordiv base_dilation` where it lies on the
    /// operand (constraints: within its span and, with base dilation, on a multiple of it).
    /// One range variable per window dimension of size > 1 (XLA's map after
    /// `RemoveUnusedSymbols`), in dimension order, so the window is walked row-major.
    fn reduce_window(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let n = self.instr.operands.len();
        if n < 2 || !n.is_multiple_of(2) {
            return Err(self.unsupported("expected inputs followed by as many initial values"));
        }
        let a = self.operand_array(0)?;
        let window = hlo::window::window_of(self.instr).map_err(|e| self.unsupported(e))?;
        if window.len() != a.rank() || out.len() != a.rank() {
            return Err(self.unsupported("the window does not match the operand's rank"));
        }
        let mut sizes = Vec::new();
        let mut results = Vec::with_capacity(a.rank());
        let mut constraints = Vec::new();
        for (i, (w, &n)) in window.iter().zip(&a.dims).enumerate() {
            let mut padded = times(dim(i), w.stride);
            if w.size > 1 {
                padded = padded + times(sym(sizes.len()), w.window_dilation);
                sizes.push(w.size);
            }
            let offset = plus(padded, -w.pad_low);
            let step = w.base_dilation;
            constraints.push((offset.clone(), Interval::new(0, (n - 1) * step)));
            if step == 1 {
                results.push(offset);
            } else {
                constraints.push((offset.clone().modulo(step), Interval::new(0, 0)));
                results.push(offset.floor_div(step));
            }
        }
        let mut input = self.map(out, default_range_vars(&sizes), Vec::new(), results);
        for (e, bounds) in constraints {
            input.add_constraint(e, bounds);
        }
        // Constraints the ranges already imply (no padding reached) disappear here.
        let input = input.simplified();
        let mut maps = Vec::with_capacity(n);
        for i in 0..n / 2 {
            if self.operand_array(i)?.dims != a.dims {
                return Err(self.unsupported(format!("input {i} differs from input 0")));
            }
            maps.push(input.clone());
        }
        maps.extend((0..n / 2).map(|_| self.scalar(out)));
        Ok(maps)
    }

    /// `d_i + rt_i`, where runtime variable `rt_i` is start index `i` (operand `i + 1`)
    /// clamped into `[0, operand_i - size_i]` as XLA does. The start indices are scalars.
    fn dynamic_slice(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let r = a.rank();
        if out.len() != r || self.instr.operands.len() != r + 1 {
            return Err(self.unsupported("expected one scalar start index per dimension"));
        }
        let rt_vars = (0..r)
            .map(|i| Variable::new(format!("rt{i}"), Interval::new(0, a.dims[i] - out[i])))
            .collect();
        let results = (0..r).map(|i| dim(i) + sym(i)).collect();
        let mut maps = vec![self.map(out, Vec::new(), rt_vars, results)];
        maps.extend((0..r).map(|_| self.scalar(out)));
        Ok(maps)
    }

    /// XLA's map (`ComputeOutputToInputDynamicUpdateSliceOpIndexing`): the operand is read
    /// at the output index, the update at `d_i - rt_i` (`rt_i` start index `i`, operand
    /// `i + 2`, clamped into `[0, operand_i - update_i]`), the start indices as scalars.
    /// Unlike XLA's, the update map has the constraints `d_i - rt_i in [0, update_i - 1]`,
    /// so that it is exact: the update is read only inside its window. The operand map
    /// over-approximates (it is not read inside the window), as a pad value's does; the
    /// emitter selects between the two with the update map's constraints.
    fn dynamic_update_slice(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let u = self.operand_array(1)?;
        let r = a.rank();
        if a.dims != out || u.rank() != r || self.instr.operands.len() != r + 2 {
            return Err(self.unsupported(
                "expected an operand of the result's shape, an update of its rank and one \
                 scalar start index per dimension",
            ));
        }
        let rt_vars = (0..r)
            .map(|i| Variable::new(format!("rt{i}"), Interval::new(0, out[i] - u.dims[i])))
            .collect();
        let results = (0..r).map(|i| dim(i) - sym(i)).collect();
        let mut update = self.map(out, Vec::new(), rt_vars, results);
        for i in 0..r {
            update.add_constraint(dim(i) - sym(i), Interval::index_range(u.dims[i]));
        }
        let mut maps = vec![self.identity(out), update.simplified()];
        maps.extend((0..r).map(|_| self.scalar(out)));
        Ok(maps)
    }

    /// XLA's canonical gather only (`GatherSimplifier::IsSimplifiedGather`): indices
    /// `[batch, k]` with `index_vector_dim=1`, `start_index_map` naming `k` distinct operand
    /// dimensions in any order, no collapsed or batching dimensions,
    /// `offset_dims={1..rank}`; the result is `[batch, slice_sizes..]`. Operand: dimension
    /// `start_index_map[i]` reads `d_{j+1} + rt_i` (`rt_i` the clamped component `i` of row
    /// `d0`), the others `d_{j+1}`; indices: `(d0, ..)[s0] -> (d0, s0)`, `s0 in [0, k-1]`.
    fn gather(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        let a = self.operand_array(0)?;
        let indices = self.operand_array(1)?;
        let not_canonical = |why: &str| {
            self.unsupported(format!(
                "only XLA's canonical gather is supported (run the gather simplifier): {why}"
            ))
        };
        if indices.rank() != 2 || self.instr.int("index_vector_dim") != Some(1) {
            return Err(not_canonical(
                "indices must be [batch, k] with index_vector_dim=1",
            ));
        }
        let k = indices.dims[1];
        let r = a.rank() as i64;
        let start_index_map = self.int_list("start_index_map")?;
        let mut seen = vec![false; a.rank()];
        let distinct_dims = start_index_map
            .iter()
            .all(|&d| (0..r).contains(&d) && !std::mem::replace(&mut seen[d as usize], true));
        if k > r || start_index_map.len() as i64 != k || !distinct_dims {
            return Err(not_canonical(
                "start_index_map must name k distinct operand dimensions",
            ));
        }
        if !self.int_list("collapsed_slice_dims")?.is_empty()
            || self
                .instr
                .int_list("operand_batching_dims")
                .is_some_and(|d| !d.is_empty())
        {
            return Err(not_canonical("collapsed or batching dimensions"));
        }
        if !self.int_list("offset_dims")?.iter().copied().eq(1..=r) {
            return Err(not_canonical("offset_dims must be {1, .., operand rank}"));
        }
        let sizes = self.int_list("slice_sizes")?;
        if sizes.len() != a.rank() || out.len() != a.rank() + 1 || out[1..] != *sizes {
            return Err(not_canonical("the result must be [batch, slice_sizes..]"));
        }
        let k = k as usize;
        let rt_vars = start_index_map
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                let d = d as usize;
                Variable::new(format!("rt{i}"), Interval::new(0, a.dims[d] - sizes[d]))
            })
            .collect();
        let results = (0..a.rank())
            .map(
                |j| match start_index_map.iter().position(|&d| d as usize == j) {
                    Some(i) => dim(j + 1) + sym(i),
                    None => dim(j + 1),
                },
            )
            .collect();
        let operand = self.map(out, Vec::new(), rt_vars, results);
        let index = self.map(
            out,
            default_range_vars(&[k as i64]),
            Vec::new(),
            vec![dim(0), sym(0)],
        );
        Ok(vec![operand, index])
    }

    /// A tuple of arrays of one set of dimensions: each element read at the output index.
    fn tuple(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        (0..self.instr.operands.len())
            .map(|i| {
                if self.operand_array(i)?.dims == out {
                    Ok(self.identity(out))
                } else {
                    Err(self.unsupported("tuple elements of different dimensions"))
                }
            })
            .collect()
    }

    /// The identity into the tuple operand's index space, which must be the element's (a
    /// variadic reduce, or a tuple of arrays of one set of dimensions).
    fn get_tuple_element(&self, out: &[i64]) -> Result<Vec<IndexingMap>, Unsupported> {
        match index_space(&self.operand(0)?.shape) {
            Some(space) if space == out => Ok(vec![self.identity(out)]),
            _ => {
                Err(self.unsupported("the tuple's elements do not share the element's dimensions"))
            }
        }
    }
}
