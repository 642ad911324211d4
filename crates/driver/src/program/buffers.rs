//! The host side of a chain's buffers: filled, drawn and evaluated arrays, and their bytes.

use super::{Chain, FLOAT_SCALE, Init};
use hlo::evaluate::{Elements, HostArray, HostValue, RandomRange, evaluate_fusion};
use hlo::{ArrayShape, HloModule, PrimitiveType, SourceFile, Value};

/// An array of `shape` whose every element is `v` (`±inf` is an integer type's extreme).
pub(crate) fn filled(shape: &ArrayShape, v: f64) -> Result<HostArray, String> {
    let count = shape.element_count() as usize;
    let value = if shape.element_type.is_float() {
        Value::Float(v)
    } else if v.is_infinite() {
        let (min, max) = RandomRange::Between(v, v).int_bounds(shape.element_type);
        Value::Int(if v < 0.0 { min } else { max })
    } else {
        Value::Int(v as i128)
    };
    let elements = Elements::from_values(shape.element_type, count, |_| value)?;
    HostArray::new(shape.dims.clone(), elements)
}

/// The evaluator's value of every buffer, in buffer order.
pub(crate) fn evaluate_chain(
    source: &SourceFile,
    module: &HloModule,
    chain: &Chain,
) -> Result<Vec<HostArray>, String> {
    let mut values: Vec<Option<HostArray>> = Vec::with_capacity(chain.buffers.len());
    for buffer in &chain.buffers {
        values.push(match buffer.init {
            Init::Draw { seed, low, high } => Some(drawn(&buffer.shape, seed, low, high)?),
            Init::Constant(v) => Some(filled(&buffer.shape, v)?),
            Init::Values(ref v) => Some(v.clone()),
            Init::Output { .. } | Init::Host => None,
        });
    }
    for kernel in &chain.kernels {
        let args: Vec<HostValue> = kernel
            .arguments
            .iter()
            .map(|&b| {
                values[b].clone().map(HostValue::Array).ok_or_else(|| {
                    "error: a kernel reads a buffer before it is written".to_string()
                })
            })
            .collect::<Result<_, _>>()?;
        let outputs =
            evaluate_fusion(module, kernel.fusion, &args).map_err(|d| d.render(source))?;
        for (&b, value) in kernel.outputs.iter().zip(outputs) {
            values[b] = Some(value);
        }
    }
    values
        .into_iter()
        .map(|v| v.ok_or_else(|| "error: a buffer no kernel writes".to_string()))
        .collect()
}

/// The mixing function of splitmix64 (Steele, Lea and Flood), a bijection of u64.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `k_i` of a draw (see [`crate::bundle`]).
pub(crate) fn draw(seed: u64, low: i128, high: i128, i: u64) -> i128 {
    let span = (high - low + 1) as u128;
    low + (u128::from(splitmix64(seed.wrapping_add(i))) % span) as i128
}

/// The drawn array of `shape`.
fn drawn(shape: &ArrayShape, seed: u64, low: i128, high: i128) -> Result<HostArray, String> {
    let ty = shape.element_type;
    let count = shape.element_count() as usize;
    let elements = Elements::from_values(ty, count, |i| {
        let k = draw(seed, low, high, i as u64);
        if ty.is_float() {
            Value::Float(k as f64 * FLOAT_SCALE)
        } else {
            Value::Int(k)
        }
    })?;
    HostArray::new(shape.dims.clone(), elements)
}

pub(crate) fn minor_to_major(shape: &ArrayShape) -> Vec<i64> {
    shape.layout_or_default().minor_to_major
}

/// The bytes of a buffer of `shape`: `pred` takes a byte, `s2`/`s4`/`u2`/`u4` are packed.
pub(crate) fn byte_size(shape: &ArrayShape) -> Result<u64, String> {
    let bits = u64::from(shape.element_type.bit_width());
    let count = shape.element_count().max(0) as u64;
    match shape.element_type {
        PrimitiveType::Pred => Ok(count),
        PrimitiveType::S2 | PrimitiveType::U2 | PrimitiveType::S4 | PrimitiveType::U4 => {
            Ok((count * bits).div_ceil(8))
        }
        _ if bits.is_multiple_of(8) => Ok(count * bits / 8),
        other => Err(format!("element type {other}")),
    }
}
