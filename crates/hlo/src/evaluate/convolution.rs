//! `convolution` as XLA's operation semantics define it, for float elements: each output
//! element `(b, o, s...)` sums `lhs[b, c, s'...] * rhs[w..., c', o]` over the window
//! positions `w` and the input features `c` of the output feature's group (`c' = c` within
//! the group, `feature_group_count` groups), where `s'` is the input position the window
//! reads (`hlo::window::WindowDim::source`: stride, padding, both dilations); positions on
//! padding or between dilated elements read nothing. `dim_labels` (`b01f_01io->b01f`) says
//! which dimension of each array is batch, feature and each spatial one. The sum is in f64,
//! rounded once to the result's type: XLA:GPU hands a convolution to cuDNN, whose order is
//! its own, so the reference is the most accurate one; `--check` computes a program's
//! convolutions on the host with this same code.

use super::value::{Elements, HostArray, Num};
use crate::module::{AttrValue, Instruction};
use crate::shape::ArrayShape;
use crate::window::window_of;

/// Where the two named dimensions and the spatial ones are in one array: batch and feature
/// of the input and output (`b`, `f`), output and input feature of the kernel (`o`, `i`).
struct Labels {
    batch: usize,
    feature: usize,
    spatial: Vec<usize>,
}

/// The positions of `batch`, `feature` and of the digits in `text`.
fn labels(text: &str, batch: char, feature: char) -> Result<Labels, String> {
    let find = |c: char| {
        text.find(c)
            .ok_or_else(|| format!("dim_labels '{text}' has no '{c}'"))
    };
    let mut spatial: Vec<(u32, usize)> = text
        .chars()
        .enumerate()
        .filter_map(|(i, c)| c.to_digit(10).map(|d| (d, i)))
        .collect();
    spatial.sort_unstable();
    if spatial
        .iter()
        .enumerate()
        .any(|(k, &(d, _))| d as usize != k)
    {
        return Err(format!(
            "dim_labels '{text}': spatial dimensions 0..n each once"
        ));
    }
    Ok(Labels {
        batch: find(batch)?,
        feature: find(feature)?,
        spatial: spatial.into_iter().map(|(_, i)| i).collect(),
    })
}

pub(super) fn convolution(
    instr: &Instruction,
    lhs: &HostArray,
    rhs: &HostArray,
    result: &ArrayShape,
) -> Result<HostArray, String> {
    if !result.element_type.is_float() {
        return Err(format!(
            "unsupported: convolution producing {}",
            result.element_type
        ));
    }
    let dim_labels = match instr.attribute("dim_labels").map(|a| &a.value) {
        Some(AttrValue::Raw(text) | AttrValue::Str(text) | AttrValue::Enum(text)) => text.clone(),
        _ => return Err("convolution without dim_labels=".into()),
    };
    let (operands, output) = dim_labels
        .split_once("->")
        .ok_or_else(|| format!("dim_labels '{dim_labels}' without '->'"))?;
    let (lhs_text, rhs_text) = operands
        .split_once('_')
        .ok_or_else(|| format!("dim_labels '{dim_labels}' without '_'"))?;
    let (l, k, out) = (
        labels(lhs_text, 'b', 'f')?,
        labels(rhs_text, 'o', 'i')?,
        labels(output, 'b', 'f')?,
    );
    let window = window_of(instr)?;
    let n = l.spatial.len();
    if k.spatial.len() != n || out.spatial.len() != n || window.len() != n {
        return Err(format!(
            "dim_labels '{dim_labels}' and the window disagree on the spatial dimensions"
        ));
    }
    let groups = instr.int("feature_group_count").unwrap_or(1);
    if groups < 1 {
        return Err(format!(
            "convolution: feature_group_count={groups} (at least 1)"
        ));
    }
    if instr.int("batch_group_count").unwrap_or(1) != 1 {
        return Err("unsupported: convolution with batch_group_count".into());
    }
    let (ld, kd, od) = (lhs.dims(), rhs.dims(), &result.dims);
    let out_features = od[out.feature];
    let per_group_in = kd[k.feature];
    let per_group_out = out_features / groups;
    if per_group_out == 0 || ld[l.feature] != per_group_in * groups {
        return Err(format!(
            "convolution: {} input features in {groups} groups for a kernel of {per_group_in}",
            ld[l.feature]
        ));
    }
    let float = |a: &HostArray, i: usize| match a.elements().num(i) {
        Num::Float(f) => f,
        Num::Int(v) => v as f64,
    };
    let strides = |dims: &[i64]| {
        let mut s = vec![1usize; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            s[d] = s[d + 1] * dims[d + 1] as usize;
        }
        s
    };
    let (ls, ks) = (strides(ld), strides(kd));
    let count: usize = od.iter().product::<i64>() as usize;
    let window_count: usize = window.iter().map(|w| w.size as usize).product();
    let mut values = Vec::with_capacity(count);
    let mut index = vec![0i64; od.len()];
    for _ in 0..count {
        let (b, o) = (index[out.batch], index[out.feature]);
        let group = o / per_group_out;
        let mut sum = 0.0;
        for w in 0..window_count {
            // The window position, spatial dimension by spatial dimension (the last fastest).
            let mut rest = w;
            let mut position = vec![0i64; n];
            for d in (0..n).rev() {
                let size = window[d].size as usize;
                position[d] = (rest % size) as i64;
                rest /= size;
            }
            let mut lhs_at = b as usize * ls[l.batch];
            let mut rhs_at = o as usize * ks[k.batch];
            let mut inside = true;
            for d in 0..n {
                match window[d].source(index[out.spatial[d]], position[d], ld[l.spatial[d]]) {
                    Some(s) => lhs_at += s as usize * ls[l.spatial[d]],
                    None => inside = false,
                }
                rhs_at += position[d] as usize * ks[k.spatial[d]];
            }
            if !inside {
                continue;
            }
            for c in 0..per_group_in {
                let feature = (group * per_group_in + c) as usize;
                sum += float(lhs, lhs_at + feature * ls[l.feature])
                    * float(rhs, rhs_at + c as usize * ks[k.feature]);
            }
        }
        values.push(Num::Float(sum));
        crate::shape::next_row_major(&mut index, od);
    }
    let elements = Elements::build(result.element_type, count, |i| values[i])?;
    HostArray::new(od.clone(), elements)
}
