//! Kernels from the loop emitter, run on the evaluator's random inputs and compared with
//! the HLO reference evaluator bit for bit.
//!
//! Both sides compute `f16`/`bf16` ops in `f32` and round after each op, and both use
//! Rust's `f32`/`f64` math functions (`tanh` included), so no tolerance is needed: a
//! comparison against another libm (libdevice on a GPU) would need one for `tanh` and the
//! other transcendental functions, not this one.

use hlo::evaluate::{HostArray, evaluate_fusion, random_arguments};
use interp::{Buffer, Kernel, Launch};

/// The arrays of a shape, nested tuples flattened (the outputs of a multi-output fusion).
fn leaves(shape: &hlo::Shape) -> Vec<hlo::ArrayShape> {
    match shape {
        hlo::Shape::Array(a) => vec![a.clone()],
        hlo::Shape::Tuple(t) => t.iter().flat_map(leaves).collect(),
    }
}

/// Emits the module's only fusion, runs it in the interpreter and in the evaluator on the
/// same random inputs (seed `seed`), and asserts that every output element is identical.
fn check(hlo_text: &str, seed: u64) {
    let (_, module) = hlo::load("test.hlo", hlo_text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let fusion = emitters::fusions(&module)[0];
    let emitted = emitters::emit_fusion(&module, fusion).unwrap_or_else(|e| panic!("{e}"));
    let computation = module.computation(fusion);
    let args = random_arguments(computation, seed).unwrap();
    let expected = evaluate_fusion(&module, fusion, &args).unwrap();
    let params: Vec<hlo::ArrayShape> = computation
        .parameters()
        .into_iter()
        .flat_map(|p| leaves(&computation.instruction(p).shape))
        .collect();
    let mut buffers: Vec<Buffer> = args
        .iter()
        .zip(&params)
        .map(|(a, shape)| {
            Buffer::from_host_array(a.as_array().unwrap(), shape.layout.as_ref()).unwrap()
        })
        .collect();
    let outputs = leaves(&computation.instruction(computation.root).shape);
    for shape in &outputs {
        let zeros = HostArray::new(
            shape.dims.clone(),
            hlo::evaluate::random_array(shape, 0, hlo::evaluate::RandomRange::Between(0.0, 0.0))
                .unwrap()
                .into_elements(),
        )
        .unwrap();
        buffers.push(Buffer::from_host_array(&zeros, shape.layout.as_ref()).unwrap());
    }
    let launch = Launch {
        blocks: emitted.kernel.launch.blocks,
        threads: emitted.kernel.launch.threads_per_block,
    };
    let kernel = Kernel::compile(&emitted.module, "main").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kernel.num_params(), buffers.len());
    let run = kernel
        .run(launch, buffers)
        .unwrap_or_else(|e| panic!("{e}\n{}", emitted.module.print()));
    let n_in = args.len();
    for (k, (shape, want)) in outputs.iter().zip(&expected).enumerate() {
        let got = run.buffers[n_in + k].to_host_array(shape).unwrap();
        assert_eq!(got.dims(), want.dims());
        for i in 0..want.len() {
            let (g, w) = (got.value(i), want.value(i));
            assert!(
                format!("{g:?}") == format!("{w:?}"),
                "output {k} element {i}: interpreter {g:?}, evaluator {w:?}"
            );
        }
    }
}

#[test]
fn gelu_matches_the_evaluator_bit_for_bit() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/models/gelu.hlo"
    ))
    .unwrap()
    .replace("6,512,4096", "2,64,16");
    for seed in 0..3 {
        check(&text, seed);
    }
}

/// Every file of XLA's emitter corpus (`../shared/xla-corpus`) that the emitters compile,
/// except grids too large for a quick test, matches the evaluator bit for bit.
#[test]
fn the_corpus_matches_the_evaluator() {
    /// Larger grids take more than a few seconds in a debug build.
    const MAX_THREADS: u64 = 1 << 18;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/xla-corpus");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .filter(|f| f.extension().is_some_and(|e| e == "hlo"))
        .collect();
    files.sort();
    let (mut checked, mut too_large) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let (_, module) = hlo::load("corpus.hlo", text.as_bytes()).unwrap();
        let Ok(emitted) = emitters::emit_fusion(&module, emitters::fusions(&module)[0]) else {
            continue; // refused by the emitters (listed in their tests)
        };
        let launch = emitted.kernel.launch;
        if launch.blocks * launch.threads_per_block > MAX_THREADS {
            too_large.push(f.file_name().unwrap().to_string_lossy().into_owned());
            continue;
        }
        eprintln!("{}", f.display());
        check(&text, 1);
        checked += 1;
    }
    eprintln!("checked {checked} corpus files; skipped as too large: {too_large:?}");
    assert!(checked >= 50, "only {checked} corpus files were checked");
    assert!(too_large.len() <= 4, "{too_large:?}");
}
