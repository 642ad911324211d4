//! `hlo-emit --gpu-bundle DIR`: everything `tools/gpu-bench` needs to run, check and time a
//! module's kernels on a machine that has a GPU but no Rust and no LLVM.
//!
//! The module's ENTRY is read as a launch sequence ([`crate::program`]): its parameters are
//! buffers filled with seeded values, and each kernel reads buffers and writes new ones; an
//! ENTRY that is not a chain of fusions has each fusion bundled on its own drawn inputs
//! (`"mode": "separate"`, the `note` says which instruction). The HLO reference evaluator
//! runs the chain on the same values, and the bundle holds, per kernel output, what the
//! evaluator computed.
//!
//! # The bundle
//!
//! `DIR/manifest.json` (format `hlo-emit-gpu-bundle 1`) names the `module`, the `source` file
//! and its stem, the `model` (`tools/gpu-bench` finds the JAX version of a model by it), and
//! lists:
//! - `buffers`: `name`, `type` (HLO's: `bf16`, `f32`, `s32`, `pred`, ...), `dims` (logical),
//!   `minor_to_major`, `bytes` (the laid-out size), and `init`, one of
//!   - `{"kind": "draw", "seed", "low", "high", "scale", "checksum"}`: logical row-major
//!     element `i` is `k_i * scale` (`scale` is 1/64 for floats, 1 for integers and `pred`),
//!     with `k_i = low + splitmix64(seed + i) mod (high - low + 1)` in wrapping 64-bit
//!     arithmetic (splitmix64: `z = x + 0x9E3779B97F4A7C15; z = (z ^ z >> 30) *
//!     0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB; z ^ z >> 31`).
//!     `checksum` is the wrapping 64-bit sum of `((i mod 1021) + 1) * k_i`, so that the
//!     reader can prove it drew the same values;
//!   - `{"kind": "constant", "value"}`: every element is `value` (a reducer's identity for a
//!     parameter that is only a reduce's init value; `"inf"`/`"-inf"` for infinities);
//!   - `{"kind": "values", "file"}`: every element given, in `file` as the expected values
//!     are (below), unsampled: the indices of a scatter with `unique_indices=true`, whose
//!     windows must not overlap (drawn ones would; the scatter's stores would then race);
//!   - `{"kind": "output", "kernel", "index"}`: written by that kernel.
//!
//!   A kernel output also has `expected`: `file` holds the evaluator's values at logical
//!   row-major indices `0, stride, 2*stride, ...` (`count` of them), raw little-endian values
//!   of the buffer's type (`s2`/`s4`/`u2`/`u4` packed as in buffers: several to a byte, the
//!   first in the low bits), and `tolerance` is `{"abs", "rel"}` (an element matches within
//!   either; see [`crate::check::Tolerance`]) or `null` for exact.
//! - `kernels`, in launch order: `fusion`, `ptx` (a file), `entry` (`main`), `grid`, `block`,
//!   `shared_memory_bytes`, `emitter`, `arguments` and `outputs` (buffer indices; the kernel
//!   takes one pointer per argument, then one per output), and `in_place`: pairs `[output,
//!   argument]` (positions in those lists) of outputs written in place (a scatter's): the
//!   output buffer must hold the argument's elements before the launch.
//! - `mode` (`chain` or `separate`), `note`, and `parameters` and `results`: the ENTRY's
//!   parameter and result buffers in order (empty for separate kernels).
//!
//! Why the inputs are a formula and not files: the device machine receives at most 64 MiB
//! per call, and a 32x1024x1024 f32 input alone is 128 MiB. Drawing `k/64` with small `k`
//! makes every value exact in every float type of 8 significant bits or more (|k| <= 256
//! even for bf16's 8), so both sides draw bit-identical inputs with a few lines of integer
//! arithmetic; the f4 and f8 types (but f8e8m0fnu, which is not drawn) store the nearest
//! code, ties to even, which the evaluator and ml_dtypes agree on (`testdata/tables`).
//! Expected values are sampled (an odd stride, so that every residue of power-of-two
//! dimensions is visited) down to at most [`BundleOptions::max_expected_elements`] per output
//! for the same reason.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::Path;

use hlo::evaluate::HostArray;
use hlo::{ArrayShape, HloModule, SourceFile};
use interp::Buffer;
use serde_json::{Value as Json, json};

use crate::check::Tolerance;
use crate::pipeline::{self, Options};
use crate::program::{
    FLOAT_SCALE, Init, byte_size, draw, evaluate_chain, minor_to_major, plan_chain,
};

/// What `--gpu-bundle` writes.
#[derive(Clone, Debug)]
pub struct BundleOptions {
    pub arch: String,
    /// Ours or XLA's choices (`--match-xla`): a bundle of XLA's kernels times them on the
    /// GPU beside ours.
    pub choices: emitters::Choices,
    /// At most this many expected values per output (larger outputs are sampled).
    pub max_expected_elements: usize,
}

impl Default for BundleOptions {
    fn default() -> BundleOptions {
        BundleOptions {
            arch: "sm_90".into(),
            choices: emitters::Choices::Tuned,
            max_expected_elements: 1 << 16,
        }
    }
}

/// Writes the bundle of `module` into `dir`; returns a one-line summary per kernel.
pub fn write_bundle(
    source: &SourceFile,
    module: &HloModule,
    dir: &Path,
    options: &BundleOptions,
) -> Result<String, String> {
    let chain = plan_chain(source, module)?;
    for buffer in &chain.buffers {
        untiled(&buffer.shape)
            .map_err(|what| format!("error: unsupported in a GPU bundle: {what}"))?;
    }
    for kernel in &chain.kernels {
        let computation = module.computation(kernel.fusion);
        crate::check::fits_the_host(source, computation, "evaluate for a GPU bundle", 1)?;
    }
    let values = evaluate_chain(source, module, &chain)?;
    // Every kernel compiles before anything is written: no half-written bundle.
    let compile_options = Options {
        arch: options.arch.clone(),
        choices: options.choices,
        ..Options::default()
    };
    let mut compiled = HashMap::new();
    for kernel in &chain.kernels {
        if let Entry::Vacant(e) = compiled.entry(kernel.fusion) {
            e.insert(pipeline::compile(
                source,
                module,
                &[kernel.fusion],
                &compile_options,
            )?);
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("error: cannot create '{}': {e}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes)
            .map_err(|e| format!("error: cannot write '{}': {e}", path.display()))
    };

    let mut kernels = Vec::new();
    let mut summary = chain
        .note
        .as_ref()
        .map_or_else(String::new, |note| format!("note: {note}\n"));
    for (k, kernel) in chain.kernels.iter().enumerate() {
        let name = module.computation(kernel.fusion).name.clone();
        let ptx_file = format!("{k:02}-{}.ptx", file_safe(&name));
        let compiled_module = compiled
            .get(&kernel.fusion)
            .ok_or_else(|| format!("error: fusion '{name}' was not compiled"))?;
        let c = &compiled_module.kernels[0];
        write(&ptx_file, compiled_module.output.as_bytes())?;
        let launch = c.launch;
        summary.push_str(&format!(
            "kernel {k}: fusion {name}: {} emitter, grid {} x {} threads, {} bytes of shared memory\n",
            c.emitter, launch.blocks, launch.threads_per_block, launch.shared_memory_bytes
        ));
        kernels.push(json!({
            "fusion": name,
            "ptx": ptx_file,
            "entry": c.kernel,
            "grid": launch.grid(),
            "block": [launch.threads_per_block, 1, 1],
            "shared_memory_bytes": launch.shared_memory_bytes,
            "emitter": c.emitter.to_string(),
            "arguments": kernel.arguments,
            "outputs": kernel.outputs,
            "in_place": c.in_place,
        }));
    }

    let mut buffers = Vec::new();
    for (b, buffer) in chain.buffers.iter().enumerate() {
        let shape = &buffer.shape;
        let mut entry = json!({
            "name": buffer.name,
            "type": shape.element_type.to_string(),
            "dims": shape.dims,
            "minor_to_major": minor_to_major(shape),
            "bytes": byte_size(shape)
                .map_err(|e| format!("error: unsupported in a GPU bundle: {e}"))?,
        });
        entry["init"] = match buffer.init {
            Init::Draw { seed, low, high } => json!({
                "kind": "draw",
                "seed": seed,
                "low": low as i64,
                "high": high as i64,
                "scale": if shape.element_type.is_float() { FLOAT_SCALE } else { 1.0 },
                "checksum": draws_checksum(seed, low, high, shape.element_count() as u64),
            }),
            Init::Constant(v) => json!({"kind": "constant", "value": constant_json(v)}),
            Init::Values(ref v) => {
                let file = format!("input-{b:02}-{}.bin", file_safe(&buffer.name));
                write(&file, Buffer::from_host_array(v, None)?.bytes())?;
                json!({"kind": "values", "file": file})
            }
            Init::Host => {
                return Err(format!(
                    "error: unsupported in a GPU bundle: '{}' runs on the host",
                    buffer.name
                ));
            }
            Init::Output { kernel, index } => {
                let file = format!("expected-{b:02}-{}.bin", file_safe(&buffer.name));
                let value = &values[b];
                let count = value.len();
                let stride = sample_stride(count, options.max_expected_elements);
                let sample = HostArray::new(
                    vec![count.div_ceil(stride) as i64],
                    value.elements().strided(stride),
                )?;
                write(&file, Buffer::from_host_array(&sample, None)?.bytes())?;
                let tolerance = Tolerance::for_output(shape.element_type, buffer.sensitivity)
                    .map_or(Json::Null, |t| json!({"abs": t.abs, "rel": t.rel}));
                entry["expected"] = json!({
                    "file": file,
                    "stride": stride,
                    "count": sample.len(),
                    "tolerance": tolerance,
                });
                json!({"kind": "output", "kernel": kernel, "index": index})
            }
        };
        buffers.push(entry);
    }

    let manifest = json!({
        "format": "hlo-emit-gpu-bundle 1",
        "module": module.header.as_ref().map_or(module.entry_computation().name.as_str(), |h| h.name.as_str()),
        "model": Path::new(&source.name).file_stem().map(|s| s.to_string_lossy()),
        "source": source.name,
        "arch": options.arch,
        "buffers": buffers,
        "kernels": kernels,
        "mode": if chain.separate { "separate" } else { "chain" },
        "note": chain.note,
        "parameters": chain.parameters,
        "results": chain.results,
    });
    let text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| format!("error: cannot write the manifest: {e}"))?;
    write("manifest.json", format!("{text}\n").as_bytes())?;
    Ok(summary)
}

/// The wrapping sum of `((i mod 1021) + 1) * k_i`.
fn draws_checksum(seed: u64, low: i128, high: i128, count: u64) -> i64 {
    (0..count).fold(0i64, |sum, i| {
        let k = draw(seed, low, high, i) as i64;
        sum.wrapping_add(((i % 1021) as i64 + 1).wrapping_mul(k))
    })
}

fn constant_json(v: f64) -> Json {
    if v.is_infinite() {
        json!(if v < 0.0 { "-inf" } else { "inf" })
    } else {
        json!(v)
    }
}

/// The stride that samples `count` values down to at most `max`: odd (when above 1), so
/// that the samples visit every residue of the power-of-two dimensions.
fn sample_stride(count: usize, max: usize) -> usize {
    match count.div_ceil(max.max(1)) {
        0 | 1 => 1,
        s => s | 1,
    }
}

/// Bundles describe layouts by `minor_to_major` alone (an element size that is the type's
/// own, `s4[..]{1,0:E(4)}`, says nothing more).
fn untiled(shape: &ArrayShape) -> Result<(), String> {
    match &shape.layout {
        Some(l)
            if !l.tiles.is_empty()
                || (l.element_size_in_bits != 0
                    && l.element_size_in_bits != i64::from(shape.element_type.bit_width())) =>
        {
            Err(format!("the tiled layout of {shape}"))
        }
        _ => Ok(()),
    }
}

/// A name usable in a file name.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
