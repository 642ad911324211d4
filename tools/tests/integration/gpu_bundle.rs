//! `hlo-emit --gpu-bundle` (issue 9): the interpreter plays the GPU. For each input, the test
//! reads only the bundle, as `tools/gpu-bench` does on the GPU machine: it draws the inputs
//! by the formula the manifest documents (its own splitmix64, checked against the manifest's
//! checksum), lays them out by `minor_to_major`, runs every kernel in order on the manifest's
//! grid with the arguments and outputs the manifest names, and compares every output with
//! the evaluator's sampled values under the manifest's tolerance. The kernels run as the
//! interpreter can follow them (the pipeline up to lower-to-llvm); the PTX files are checked
//! to hold an `.entry main` with one pointer per argument and output.

use std::path::{Path, PathBuf};
use std::process::Command;

use hlo::evaluate::{Elements, HostArray};
use hlo::{ArrayShape, Layout, PrimitiveType, Value};
use interp::{Buffer, Kernel, Launch};
use passes::{PassManager, Timings};
use serde_json::Value as Json;

/// Writes the bundle of `file` into a fresh directory.
fn bundle(file: &Path) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "hlo-emit-gpu-bundle-{}-{}",
        std::process::id(),
        file.file_stem().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_hlo-emit"))
        .arg(file)
        .arg("--gpu-bundle")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn shape_of(buffer: &Json) -> ArrayShape {
    let ty = PrimitiveType::from_name(buffer["type"].as_str().unwrap()).unwrap();
    let dims = buffer["dims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect();
    let mut shape = ArrayShape::new(ty, dims);
    let mut layout = Layout::row_major(shape.dims.len());
    layout.minor_to_major = buffer["minor_to_major"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect();
    shape.layout = Some(layout);
    shape
}

/// `count` values of `ty` from a file of the bundle (raw, little-endian, logical order).
fn read_values(dir: &Path, file: &Json, ty: PrimitiveType, count: usize) -> HostArray {
    let bytes = std::fs::read(dir.join(file.as_str().unwrap())).unwrap();
    Buffer::new(bytes)
        .to_host_array(&ArrayShape::new(ty, vec![count as i64]))
        .unwrap()
}

/// The logical value of an input buffer, drawn or read as the manifest says.
fn input(dir: &Path, buffer: &Json) -> HostArray {
    let shape = shape_of(buffer);
    let init = &buffer["init"];
    let count = shape.element_count() as usize;
    let elements = match init["kind"].as_str().unwrap() {
        "values" => Ok(read_values(dir, &init["file"], shape.element_type, count)
            .elements()
            .clone()),
        "draw" => {
            let seed = init["seed"].as_u64().unwrap();
            let (low, high) = (
                init["low"].as_i64().unwrap(),
                init["high"].as_i64().unwrap(),
            );
            let scale = init["scale"].as_f64().unwrap();
            let ks: Vec<i64> = (0..count as u64)
                .map(|i| low + (splitmix64(seed.wrapping_add(i)) % (high - low + 1) as u64) as i64)
                .collect();
            let checksum = ks.iter().enumerate().fold(0i64, |sum, (i, &k)| {
                sum.wrapping_add(((i % 1021) as i64 + 1).wrapping_mul(k))
            });
            assert_eq!(checksum, init["checksum"].as_i64().unwrap(), "{buffer}");
            Elements::from_values(shape.element_type, count, |i| {
                if shape.element_type.is_float() {
                    Value::Float(ks[i] as f64 * scale)
                } else {
                    Value::Int(i128::from(ks[i]))
                }
            })
        }
        "constant" => {
            let v = match &init["value"] {
                Json::String(s) if s == "-inf" => f64::NEG_INFINITY,
                Json::String(s) if s == "inf" => f64::INFINITY,
                v => v.as_f64().unwrap(),
            };
            Elements::from_values(shape.element_type, count, |_| Value::Float(v))
        }
        other => panic!("not an input: {other}"),
    };
    HostArray::new(shape.dims.clone(), elements.unwrap()).unwrap()
}

/// Runs the bundle's kernels in the interpreter; returns the outputs compared and checked.
fn run_bundle(file: &Path) -> usize {
    let dir = bundle(file);
    let manifest: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["format"], "hlo-emit-gpu-bundle 1");
    let buffers = manifest["buffers"].as_array().unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let (_, module) = hlo::load(&file.display().to_string(), text.as_bytes()).unwrap();

    let mut memory: Vec<Buffer> = buffers
        .iter()
        .map(|b| {
            let shape = shape_of(b);
            let bytes = b["bytes"].as_u64().unwrap() as usize;
            if b["init"]["kind"] == "output" {
                Buffer::new(vec![0xff; bytes])
            } else {
                let laid_out =
                    Buffer::from_host_array(&input(&dir, b), shape.layout.as_ref()).unwrap();
                assert_eq!(laid_out.len(), bytes, "{b}");
                laid_out
            }
        })
        .collect();

    let mut compared = 0;
    for kernel in manifest["kernels"].as_array().unwrap() {
        let index = |key: &str| -> Vec<usize> {
            kernel[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_u64().unwrap() as usize)
                .collect()
        };
        let (arguments, outputs) = (index("arguments"), index("outputs"));
        let ptx = std::fs::read_to_string(dir.join(kernel["ptx"].as_str().unwrap())).unwrap();
        let params = arguments.len() + outputs.len();
        let entry = kernel["entry"].as_str().unwrap();
        assert!(ptx.contains(&format!(".entry {entry}(")), "{ptx}");
        assert!(
            ptx.contains(&format!("{entry}_param_{}", params - 1)),
            "{ptx}"
        );
        assert!(!ptx.contains(&format!("{entry}_param_{params}")), "{ptx}");

        let fusion = module
            .computation_by_name(kernel["fusion"].as_str().unwrap())
            .unwrap();
        let mut ir = emitters::emit_fusion(&module, fusion).unwrap().module;
        let mut pm = PassManager::new();
        for pass in driver::check::checked_passes() {
            pm.add(pass);
        }
        pm.run(&mut ir, &mut std::io::sink(), &mut Timings::default())
            .unwrap();
        let launch = Launch {
            blocks: kernel["grid"][0].as_u64().unwrap(),
            threads: kernel["block"][0].as_u64().unwrap(),
        };
        // As tools/gpu-bench does: an output written in place starts as its argument.
        for pair in kernel["in_place"].as_array().unwrap() {
            let (output, argument) = (pair[0].as_u64().unwrap(), pair[1].as_u64().unwrap());
            memory[outputs[output as usize]] = memory[arguments[argument as usize]].clone();
        }
        let args = arguments
            .iter()
            .chain(&outputs)
            .map(|&b| memory[b].clone())
            .collect();
        let run = Kernel::compile(&ir, "main")
            .unwrap()
            .run(launch, args)
            .unwrap();
        for (k, &b) in outputs.iter().enumerate() {
            memory[b] = run.buffers[arguments.len() + k].clone();
            compare(&dir, &buffers[b], &memory[b]);
            compared += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    compared
}

/// Every sampled value of output `buffer` (laid out in `got`) within the manifest's bounds.
fn compare(dir: &Path, buffer: &Json, got: &Buffer) {
    let shape = shape_of(buffer);
    let got = got.to_host_array(&shape).unwrap();
    let expected = &buffer["expected"];
    let stride = expected["stride"].as_u64().unwrap() as usize;
    let count = expected["count"].as_u64().unwrap() as usize;
    let want = read_values(dir, &expected["file"], shape.element_type, count);
    assert_eq!(count, got.len().div_ceil(stride), "{buffer}");
    let tolerance = &expected["tolerance"];
    for j in 0..count {
        let (g, w) = (got.value(j * stride), want.value(j));
        let ok = match (g, w) {
            (Value::Float(g), Value::Float(w)) if !tolerance.is_null() => {
                (g.is_nan() && w.is_nan())
                    || g == w
                    || (g - w).abs() <= tolerance["abs"].as_f64().unwrap()
                    || (g - w).abs() <= tolerance["rel"].as_f64().unwrap() * w.abs()
            }
            (g, w) => g == w,
        };
        assert!(
            ok,
            "{}: element {} got {g:?}, expected {w:?}",
            buffer["name"],
            j * stride
        );
    }
}

#[test]
fn softmax_chain_runs_from_its_bundle() {
    let file = testkit::testdata("models/softmax.hlo");
    let dir = bundle(&file);
    let manifest: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["mode"], "chain");
    assert_eq!(manifest["note"], Json::Null);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run_bundle(&file), 3);
}

#[test]
fn layernorm_chain_with_three_parameters_runs_from_its_bundle() {
    assert_eq!(run_bundle(&testkit::testdata("models/layernorm.hlo")), 3);
}

/// A multi-output fusion taken apart by get-tuple-element, a column-major parameter.
#[test]
fn chain_with_tuple_outputs_and_a_layout_runs_from_its_bundle() {
    assert_eq!(run_bundle(&testkit::testdata("bundle/chain.hlo")), 3);
}

/// XLA's emitter tests have no ENTRY chain: the fusion is the kernel, its reduce's init
/// parameter a constant (the reducer's identity).
#[test]
fn corpus_fusion_with_an_init_parameter_runs_from_its_bundle() {
    let corpus = testkit::corpus_dir();
    assert_eq!(run_bundle(&corpus.join("reduce_row/epilogue.hlo")), 1);
    assert_eq!(
        run_bundle(&corpus.join("transpose/fused_transpose_102.hlo")),
        1
    );
    assert_eq!(
        run_bundle(&corpus.join("reduce_row/mof_scalar_variadic.hlo")),
        4
    );
}

/// An ENTRY that computes more than fusions (XLA's tests copy parameters, add scalars):
/// each fusion is bundled on its own drawn inputs, and the manifest says so.
#[test]
fn fusions_of_an_entry_that_is_not_a_chain_run_separately() {
    let corpus = testkit::corpus_dir();
    for (file, kernels) in [
        ("loop/no_duplication.hlo", 1),
        ("dynamic_update_slice/simple.hlo", 1),
    ] {
        let dir = bundle(&corpus.join(file));
        let manifest: Json =
            serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap())
                .unwrap();
        assert_eq!(manifest["mode"], "separate", "{file}");
        assert!(
            manifest["note"].as_str().unwrap().contains("not a chain"),
            "{file}"
        );
        assert_eq!(manifest["parameters"], serde_json::json!([]), "{file}");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(run_bundle(&corpus.join(file)), kernels, "{file}");
    }
}

/// Large outputs are sampled with an odd stride, at most 2^16 values per output.
#[test]
fn large_outputs_are_sampled() {
    let dir = bundle(&testkit::testdata("models/gelu.hlo"));
    let manifest: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let expected = &manifest["buffers"][1]["expected"];
    let (stride, count) = (
        expected["stride"].as_u64().unwrap(),
        expected["count"].as_u64().unwrap(),
    );
    assert_eq!(stride % 2, 1);
    assert!(count <= 1 << 16);
    assert_eq!(count, (6 * 512 * 4096u64).div_ceil(stride));
    let file = dir.join(expected["file"].as_str().unwrap());
    assert_eq!(std::fs::metadata(file).unwrap().len(), count * 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The indices of a scatter that promises `unique_indices=true` are given in the bundle,
/// not drawn: drawn ones overlapped (rows 5-6 and 6-7 of the c128 scatter of
/// `testdata/lit/check/complex128.hlo`), and the scatter's plain stores then raced on the
/// GPU, while the interpreter, one thread at a time, matched.
#[test]
fn unique_scatter_indices_are_given_windows_that_do_not_overlap() {
    let file = std::env::temp_dir().join(format!(
        "hlo-emit-unique-scatter-{}.hlo",
        std::process::id()
    ));
    std::fs::write(
        &file,
        "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n\
         scatter {\n  operand = f32[10,5] parameter(0)\n  indices = s32[4,1] parameter(1)\n  \
         updates = f32[4,2,5] parameter(2)\n  ROOT s = f32[10,5] scatter(operand, indices, updates), \
         update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, \
         index_vector_dim=1, unique_indices=true, to_apply=add\n}\n",
    )
    .unwrap();
    let dir = bundle(&file);
    let manifest: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let indices = &manifest["buffers"][1];
    assert_eq!(indices["init"]["kind"], "values", "{indices}");
    let starts = input(&dir, indices);
    let mut rows: Vec<i128> = (0..4)
        .map(|i| match starts.value(i) {
            Value::Int(v) => v,
            other => panic!("{other:?}"),
        })
        .collect();
    rows.sort_unstable();
    // Four windows of two rows in ten: each in bounds, none overlapping the next.
    assert!(rows.iter().all(|&r| (0..=8).contains(&r)), "{rows:?}");
    assert!(rows.windows(2).all(|w| w[1] - w[0] >= 2), "{rows:?}");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run_bundle(&file), 1);
    let _ = std::fs::remove_file(&file);
}
