//! The front of the pass pipeline (`inline`, `erase-dead-functions`, `lower-xla-gpu-to-scf`,
//! `canonicalize`, `cse`, then `unroll-loops`) on what the emitters make of every model in
//! `testdata/models` and every file of XLA's loop-fusion corpus they accept: the manager
//! verifies after each pass, the `xla_gpu` control-flow ops are gone, the only calls left are
//! the ones XLA's inliner declines, and real MLIR accepts the result. Hand-written modules
//! check that lowered output without `xla_gpu` ops is plain MLIR (no unregistered ops).

use ir::dialects::func;
use ir::dialects::gpu;
use ir::dialects::math;
use ir::dialects::scf;
use ir::dialects::xla_gpu;
use std::path::Path;

use ir::{Attribute, Module, OpId};
use passes::inline::SMALL_CALLEE_OPS;
use passes::{PassManager, PassRegistry, Timings};

/// The passes before flattening, in the pipeline's order.
const FRONT: &str = "inline,erase-dead-functions,lower-xla-gpu-to-scf,canonicalize,cse";

/// `xla_gpu` ops no module keeps after `lower-xla-gpu-to-scf` (`apply_indexing` stays for
/// `simplify-affine`, shared memory ops for later passes).
const LOWERED: &[&str] = &[
    xla_gpu::LOOP,
    xla_gpu::SHUFFLE_REDUCE,
    xla_gpu::PREDICATED_INSERT,
    xla_gpu::PREDICATED_EXTRACT,
];

fn run_pipeline(m: &mut Module, pipeline: &str) -> Result<(), String> {
    let mut pm = PassManager::new();
    for pass in PassRegistry::standard().parse_pipeline(pipeline)? {
        pm.add(pass);
    }
    pm.run(m, &mut std::io::sink(), &mut Timings::default())
        .map_err(|e| e.to_string())
}

fn ops_named(m: &Module, root: OpId, name: &str) -> Vec<OpId> {
    m.collect_ops(root)
        .into_iter()
        .filter(|&o| m.is(o, name))
        .collect()
}

/// Every call left calls a function too large to copy (the inliner's other reasons — one
/// use, recursion, `noinline` — do not occur in emitted modules).
fn check_calls_left(m: &Module, name: &str) {
    for call in ops_named(m, m.top(), xla_gpu::PURE_CALL) {
        let callee = m
            .prop(call, "callee")
            .and_then(Attribute::as_symbol)
            .and_then(|c| m.lookup_symbol(m.top(), c))
            .unwrap();
        let ops = m.collect_ops(callee).len() - 2;
        assert!(
            ops > SMALL_CALLEE_OPS,
            "{name}: a call to a small function is left\n{}",
            m.print()
        );
    }
}

/// Emits every fusion of `path` the emitters accept and runs `pipeline` on it; returns the
/// lowered modules.
fn lower_file(path: &Path, pipeline: &str) -> Vec<Module> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.display().to_string();
    let Ok((_, module)) = hlo::load(&name, text.as_bytes()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for fusion in emitters::fusions(&module) {
        let Ok(emitted) = emitters::emit_fusion(&module, fusion) else {
            continue;
        };
        let mut m = emitted.module;
        run_pipeline(&mut m, pipeline).unwrap_or_else(|e| panic!("{name}: {e}\n{}", m.print()));
        for op in LOWERED {
            assert!(
                ops_named(&m, m.top(), op).is_empty(),
                "{name}: {op} left\n{}",
                m.print()
            );
        }
        check_calls_left(&m, &name);
        let generic = m.print_generic();
        codegen::mlir::verify(&generic, true)
            .unwrap_or_else(|e| panic!("{name}: MLIR rejects the lowered module: {e}\n{generic}"));
        out.push(m);
    }
    out
}

#[test]
fn models_and_the_loop_corpus_go_through_the_front_of_the_pipeline() {
    let models = testkit::hlo_files(testkit::testdata("models"));
    let corpus = testkit::corpus(&["loop"]);
    let pipeline = format!("{FRONT},unroll-loops");
    let lowered_models: usize = models.iter().map(|p| lower_file(p, &pipeline).len()).sum();
    let lowered_corpus = corpus
        .iter()
        .filter(|p| !lower_file(p, &pipeline).is_empty())
        .count();
    assert!(
        lowered_models >= models.len(),
        "{lowered_models} of {models:?}"
    );
    // The emitters accept 20 of the corpus's 25 files (see docs/tests.md).
    assert!(
        lowered_corpus >= 20,
        "only {lowered_corpus} corpus files lowered"
    );
}

#[test]
fn gelu_becomes_one_function_with_the_seeds_loop() {
    let gelu = testkit::testdata("models/gelu.hlo");
    let lowered = lower_file(&gelu, FRONT);
    let [m] = lowered.as_slice() else {
        panic!("gelu.hlo has one fusion");
    };
    let functions: Vec<&str> = m
        .block_ops(m.body())
        .filter_map(|op| m.symbol_name(op))
        .collect();
    assert_eq!(functions, ["main"], "{}", m.print());
    let main = m.lookup_symbol(m.top(), "main").unwrap();
    let count = |name| ops_named(m, main, name).len();
    assert_eq!(count(xla_gpu::PURE_CALL), 0, "{}", m.print());
    assert_eq!(count(scf::FOR), 1, "{}", m.print());
    assert_eq!(count(scf::IF), 1, "{}", m.print());
    assert_eq!(count(math::TANH), 1, "{}", m.print());
    assert_eq!(count(xla_gpu::APPLY_INDEXING), 3, "{}", m.print());
    // Unrolled (here without vectorization), the loop over vector_index is eight copies
    // (8 bf16 per thread: one 16-byte access).
    let unrolled = lower_file(&gelu, &format!("{FRONT},unroll-loops"));
    let m = &unrolled[0];
    let main = m.lookup_symbol(m.top(), "main").unwrap();
    assert!(ops_named(m, main, scf::FOR).is_empty(), "{}", m.print());
    assert_eq!(ops_named(m, main, math::TANH).len(), 8, "{}", m.print());
}

/// Lowered modules without `xla_gpu` ops parse and verify in MLIR with no unregistered ops.
#[test]
fn lowered_control_flow_is_plain_mlir() {
    let mut m = ir::parse_module(
        "func.func @kernel(%t: tensor<8xf32>, %i: index, %c: i1, %a: f32, %b: bf16, %d: f64)
            -> (tensor<8xf32>, f32, f32, bf16, f64, f32) {
           %0 = xla_gpu.predicated_insert %a into %t[%i] if %c : tensor<8xf32>
           %1 = xla_gpu.predicated_extract %t[%i] if %c else %a : tensor<8xf32>
           %2:3 = xla_gpu.shuffle_reduce(%a, %b, %d) to 16 combiner=@combine : f32, bf16, f64
           %c0 = arith.constant 0 : index
           %c1 = arith.constant 1 : index
           %c4 = arith.constant 4 : index
           %3 = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %a) -> (f32) {
             %e = tensor.extract %t[%k] : tensor<8xf32>
             %s = arith.addf %acc, %e : f32
             scf.yield %s : f32
           }
           return %0, %1, %2#0, %2#1, %2#2, %3 : tensor<8xf32>, f32, f32, bf16, f64, f32
         }
         func.func private @combine(%a: f32, %b: bf16, %c: f64, %a2: f32, %b2: bf16, %c2: f64)
            -> (f32, bf16, f64) {
           %0 = arith.addf %a, %a2 : f32
           %1 = arith.maximumf %b, %b2 : bf16
           %2 = arith.addf %c, %c2 : f64
           return %0, %1, %2 : f32, bf16, f64
         }",
    )
    .unwrap();
    run_pipeline(
        &mut m,
        "lower-xla-gpu-to-scf,unroll-loops,inline,erase-dead-functions",
    )
    .unwrap();
    let text = m.print();
    assert!(!text.contains("xla_gpu"), "{text}");
    assert!(!text.contains(scf::FOR), "{text}");
    assert_eq!(ops_named(&m, m.top(), gpu::SHUFFLE).len(), 5 * 4, "{text}");
    assert_eq!(ops_named(&m, m.top(), func::FUNC).len(), 1, "{text}");
    codegen::mlir::verify(&m.print_generic(), false)
        .unwrap_or_else(|e| panic!("MLIR rejects: {e}\n{text}"));
    codegen::mlir::verify(&text, false).unwrap_or_else(|e| panic!("MLIR rejects: {e}\n{text}"));
}
