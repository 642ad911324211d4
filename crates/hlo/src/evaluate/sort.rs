//! `sort`, `topk`, the `TopK` custom-call and XLA's call of CUB's radix sort: rows along one
//! dimension put in order.
//!
//! The reference sorts **stably** whatever `is_stable` says: elements the comparator calls
//! equal keep their order. A sort that is not marked stable may put them in any order by
//! XLA's definition; hlo-emit's sort kernel keeps them in order too, so the results are
//! comparable element for element.
//!
//! Every row is sorted by a bottom-up merge sort, and all rows' merges step together: each
//! step compares the heads of every unfinished merge with one call of the comparator on
//! lanes (see `reduce.rs`), so a sort of `n` elements per row costs about `2n` comparator
//! calls whatever the number of rows. A comparator that is no strict weak order (XLA leaves
//! the result undefined then) still gives some permutation of every row.

use super::movement::{offsets, row_major_strides, strided};
use super::reduce::{callee, lanes, shaped_like};
use super::value::{Elements, HostArray, HostValue};
use super::{Evaluator, Plan, R, array, located};
use crate::PrimitiveType;
use crate::literal::Value;
use crate::module::Instruction;

/// `sort` of its operands along `dimensions={d}` by its comparator `to_apply`.
pub(super) fn sort(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&HostValue],
) -> R<HostValue> {
    let inputs = whole_arrays(ev, instr, operands, "sort")?;
    let dimension = match instr.int_list("dimensions") {
        Some(&[d]) => d,
        _ => return Err(located(instr, "sort without one dimension in dimensions=")),
    };
    let rows = Rows::along(inputs[0].dims(), dimension).map_err(|m| located(instr, m))?;
    let order = rows.sort_by_comparator(ev, instr, "to_apply", &inputs)?;
    let results = inputs
        .iter()
        .map(|x| rows.permuted(x, &order, rows.n))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| located(instr, m))?;
    Ok(shaped_like(instr, results))
}

/// `topk(x), k=K, largest=B`: the `K` largest (or smallest) elements of every row of the
/// last dimension in order, ties in index order, and their indices (`s32`). Floats are
/// ordered as XLA's total order (`-NaN < -inf < ... < -0 < +0 < ... < inf < NaN`).
pub(super) fn topk(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&HostValue],
) -> R<HostValue> {
    let (x, rows) = last_dimension_rows(ev, instr, operands, "topk")?;
    let k = instr
        .int("k")
        .ok_or_else(|| located(instr, "topk without k="))?;
    let largest = instr.bool_value("largest").unwrap_or(true);
    if x.element_type().is_complex() {
        return Err(located(instr, "unsupported: topk of complex values"));
    }
    let order = rows.in_total_order(x, largest)?;
    rows.top(instr, x, &order, k)
}

/// The `TopK` custom-call: its comparator (of values and `s32` indices) orders every row of
/// the last dimension, and the first `k` (the result's last dimension) are kept, with their
/// indices.
pub(super) fn topk_call(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&HostValue],
) -> R<HostValue> {
    let (x, rows) = last_dimension_rows(ev, instr, operands, "TopK")?;
    let indices = rows.indices(x.dims()).map_err(|m| located(instr, m))?;
    let order = rows.sort_by_comparator(ev, instr, "called_computations", &[x, &indices])?;
    let k = match &instr.shape {
        crate::Shape::Tuple(leaves) => leaves
            .first()
            .and_then(|s| s.as_array())
            .and_then(|a| a.dims.last().copied()),
        crate::Shape::Array(_) => None,
    }
    .ok_or_else(|| {
        located(
            instr,
            "a TopK custom-call whose result is not (values, indices)",
        )
    })?;
    rows.top(instr, x, &order, k)
}

/// XLA's call of CUB's radix sort (`__cub$DeviceRadixSort`, which `sort-rewriter` makes of a
/// sort the sort emitter cannot hold, as XLA's SortRewriter does): every row of the last
/// dimension stably sorted by the keys (operand 0), ascending or descending
/// ([`Instruction::cub_sort_descending`]), floats in total order (CUB sorts their bit
/// patterns, made monotonic, so); the values (operand 1) move with their keys. The result
/// is the tuple of the sorted operands.
pub(super) fn cub_radix_sort(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&HostValue],
) -> R<HostValue> {
    let inputs = whole_arrays(ev, instr, operands, "a CUB radix sort")?;
    let keys = inputs[0];
    let ty = keys.element_type();
    if inputs.len() > 2 || ty.is_complex() || ty == PrimitiveType::Pred || keys.dims().is_empty() {
        return Err(located(
            instr,
            "unsupported: a CUB radix sort of other than (integer or float keys[, values]) \
             with a dimension to sort",
        ));
    }
    let last = keys.dims().len() as i64 - 1;
    let rows = Rows::along(keys.dims(), last).map_err(|m| located(instr, m))?;
    let order = rows.in_total_order(keys, instr.cub_sort_descending())?;
    let sorted = inputs
        .iter()
        .map(|x| rows.permuted(x, &order, rows.n).map(HostValue::Array))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| located(instr, m))?;
    Ok(HostValue::Tuple(sorted))
}

/// A top-k's operand and its rows along the last dimension.
fn last_dimension_rows<'v>(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&'v HostValue],
    op: &str,
) -> R<(&'v HostArray, Rows)> {
    let x = whole_arrays(ev, instr, operands, op)?[0];
    let last = x.dims().len() as i64 - 1;
    let rows = Rows::along(x.dims(), last).map_err(|m| located(instr, m))?;
    Ok((x, rows))
}

/// XLA's total order of two values of one type.
fn total_order(a: Value, b: Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Float(a), Value::Float(b)) => a.total_cmp(&b),
        (Value::Int(a), Value::Int(b)) => a.cmp(&b),
        (Value::Pred(a), Value::Pred(b)) => a.cmp(&b),
        _ => std::cmp::Ordering::Equal,
    }
}

/// The operands as arrays of one shape; the op is refused inside a per-element computation.
fn whole_arrays<'v>(
    ev: &Evaluator<'_>,
    instr: &Instruction,
    operands: &[&'v HostValue],
    op: &str,
) -> R<Vec<&'v HostArray>> {
    if ev.lanes.is_some() {
        return Err(located(
            instr,
            format!("unsupported: {op} inside a computation applied per element"),
        ));
    }
    let inputs = operands
        .iter()
        .map(|v| array(v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| located(instr, m))?;
    match inputs.first() {
        None => Err(located(instr, format!("{op} without operands"))),
        Some(first) if inputs.iter().any(|x| x.dims() != first.dims()) => Err(located(
            instr,
            format!("{op} of operands with different dimensions"),
        )),
        Some(_) => Ok(inputs),
    }
}

/// The rows of an array along one dimension: where each starts (a flat row-major offset),
/// its length and the distance between its elements.
struct Rows {
    starts: Vec<usize>,
    n: usize,
    stride: usize,
    /// The dimension the rows run along.
    dimension: usize,
}

/// A merge of two neighbouring sorted runs of one row, in progress.
struct Merge {
    row: usize,
    left: std::ops::Range<usize>,
    right: std::ops::Range<usize>,
    out: Vec<usize>,
}

impl Rows {
    fn along(dims: &[i64], dimension: i64) -> Result<Rows, String> {
        let d = usize::try_from(dimension)
            .ok()
            .filter(|&d| d < dims.len())
            .ok_or_else(|| format!("dimension {dimension} out of range for rank {}", dims.len()))?;
        let strides = row_major_strides(dims);
        let kept: Vec<_> = (0..dims.len())
            .filter(|&k| k != d)
            .map(|k| strided(dims[k], 0, 1, strides[k]))
            .collect();
        let starts = if dims.contains(&0) {
            Vec::new()
        } else {
            offsets(&kept)
        };
        Ok(Rows {
            starts,
            n: dims[d] as usize,
            stride: strides[d],
            dimension: d,
        })
    }

    /// An `s32` array of `dims` whose elements are their positions in their row.
    fn indices(&self, dims: &[i64]) -> Result<HostArray, String> {
        let total: usize = dims.iter().map(|&n| n as usize).product();
        let mut position = vec![0usize; total];
        for &start in &self.starts {
            for t in 0..self.n {
                position[start + t * self.stride] = t;
            }
        }
        let elements = Elements::from_values(PrimitiveType::S32, total, |i| {
            Value::Int(position[i] as i128)
        })?;
        HostArray::new(dims.to_vec(), elements)
    }

    /// Every row's flat positions in order of `inputs`' comparator `attribute` (its
    /// parameters: each input's left and right element in turn).
    fn sort_by_comparator(
        &self,
        ev: &Evaluator<'_>,
        instr: &Instruction,
        attribute: &str,
        inputs: &[&HostArray],
    ) -> R<Vec<Vec<usize>>> {
        let comparator = callee(instr, attribute)?;
        let computation = ev.module.computation(comparator);
        if computation.parameters().len() != 2 * inputs.len() {
            return Err(located(
                instr,
                format!(
                    "a comparator of {} parameters for {} operands (two per operand)",
                    computation.parameters().len(),
                    inputs.len()
                ),
            ));
        }
        let plan = Plan::new(computation);
        self.sort_rows(|pairs| {
            let (lhs, rhs): (Vec<usize>, Vec<usize>) = pairs.iter().copied().unzip();
            let args = inputs
                .iter()
                .flat_map(|x| {
                    [
                        lanes(x.elements().take(&lhs, 0)),
                        lanes(x.elements().take(&rhs, 0)),
                    ]
                })
                .collect();
            let verdict = ev
                .for_lanes(pairs.len())
                .run_plan(computation, &plan, args)?;
            let verdict = array(&verdict).map_err(|m| located(instr, m))?;
            if verdict.element_type() != PrimitiveType::Pred || verdict.len() != pairs.len() {
                return Err(located(instr, "a comparator that returns no pred"));
            }
            Ok((0..pairs.len())
                .map(|i| verdict.value(i) == Value::Pred(true))
                .collect())
        })
    }

    /// Every row's flat positions, stably sorted by the total order of `x`'s elements
    /// ([`total_order`]), the greatest first when `descending`.
    fn in_total_order(&self, x: &HostArray, descending: bool) -> R<Vec<Vec<usize>>> {
        self.sort_rows(|pairs| {
            Ok(pairs
                .iter()
                .map(|&(a, b)| {
                    let ordering = total_order(x.value(a), x.value(b));
                    if descending {
                        ordering.is_gt()
                    } else {
                        ordering.is_lt()
                    }
                })
                .collect())
        })
    }

    /// Every row's flat positions, stably sorted by `less`, which answers "is `a` before
    /// `b`" for a batch of position pairs at once.
    fn sort_rows(
        &self,
        mut less: impl FnMut(&[(usize, usize)]) -> R<Vec<bool>>,
    ) -> R<Vec<Vec<usize>>> {
        let mut order: Vec<Vec<usize>> = self
            .starts
            .iter()
            .map(|&s| (0..self.n).map(|t| s + t * self.stride).collect())
            .collect();
        let mut width = 1;
        while width < self.n {
            let mut merges: Vec<Merge> = Vec::new();
            for row in 0..order.len() {
                for start in (0..self.n).step_by(2 * width) {
                    let middle = (start + width).min(self.n);
                    let end = (start + 2 * width).min(self.n);
                    merges.push(Merge {
                        row,
                        left: start..middle,
                        right: middle..end,
                        out: Vec::with_capacity(end - start),
                    });
                }
            }
            loop {
                let active: Vec<usize> = (0..merges.len())
                    .filter(|&m| !merges[m].left.is_empty() && !merges[m].right.is_empty())
                    .collect();
                if active.is_empty() {
                    break;
                }
                // The right head goes first only when strictly before the left one: stable.
                let pairs: Vec<(usize, usize)> = active
                    .iter()
                    .map(|&m| {
                        let (row, merge) = (&order[merges[m].row], &merges[m]);
                        (row[merge.right.start], row[merge.left.start])
                    })
                    .collect();
                for (&m, right_first) in active.iter().zip(less(&pairs)?) {
                    let merge = &mut merges[m];
                    let side = if right_first {
                        &mut merge.right
                    } else {
                        &mut merge.left
                    };
                    merge.out.push(order[merge.row][side.start]);
                    side.start += 1;
                }
            }
            let mut next: Vec<Vec<usize>> = vec![Vec::with_capacity(self.n); order.len()];
            for merge in merges {
                let row = &order[merge.row];
                let out = &mut next[merge.row];
                out.extend(merge.out);
                out.extend(&row[merge.left]);
                out.extend(&row[merge.right]);
            }
            order = next;
            width *= 2;
        }
        Ok(order)
    }

    /// `x` with every row's first `keep` elements taken from the positions `order` lists, as
    /// an array whose sorted dimension has `keep` elements.
    fn permuted(
        &self,
        x: &HostArray,
        order: &[Vec<usize>],
        keep: usize,
    ) -> Result<HostArray, String> {
        let sources: Vec<usize> = order.iter().flat_map(|row| row[..keep].to_vec()).collect();
        let taken = x.elements().take(&sources, 0);
        let mut dims = x.dims().to_vec();
        dims[self.dimension] = keep as i64;
        let out = Rows::along(&dims, self.dimension as i64)?;
        let positions: Vec<usize> = out
            .starts
            .iter()
            .flat_map(|&s| (0..keep).map(move |t| s + t * out.stride))
            .collect();
        let mut elements =
            Elements::from_values(x.element_type(), positions.len(), |_| Value::Int(0))?;
        elements.put(&positions, &taken)?;
        HostArray::new(dims, elements)
    }

    /// top-k's result from the sorted `order`: `(values, s32 indices)` of the first `k`.
    fn top(
        &self,
        instr: &Instruction,
        x: &HostArray,
        order: &[Vec<usize>],
        k: i64,
    ) -> R<HostValue> {
        let keep = usize::try_from(k)
            .ok()
            .filter(|&k| k <= self.n)
            .ok_or_else(|| located(instr, format!("k={k} outside 0..={}", self.n)))?;
        let indices = self.indices(x.dims()).map_err(|m| located(instr, m))?;
        let values = self
            .permuted(x, order, keep)
            .map_err(|m| located(instr, m))?;
        let positions = self
            .permuted(&indices, order, keep)
            .map_err(|m| located(instr, m))?;
        Ok(HostValue::Tuple(vec![
            HostValue::Array(values),
            HostValue::Array(positions),
        ]))
    }
}
