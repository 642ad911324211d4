//! Kernels from the transpose emitter (shared tiles, a barrier, two loops), run on the
//! evaluator's random inputs in the interpreter and compared with the HLO reference
//! evaluator bit for bit: the seed's example, 021/210/102 transposes with partial tiles,
//! bf16 and f32, vectors, side outputs and several heroes.
//!
//! Output buffers start as NaN / all-ones bytes, so an element no thread writes is a
//! mismatch; the interpreter itself reports a read of shared memory no thread wrote and two
//! threads writing one element.

use emitters::transpose::{Tiling, TransposePlan, TransposeTiling};
use emitters::{EmittedFusion, EmitterKind};
use hlo::evaluate::{evaluate_fusion, random_arguments};
use ir::dialects::xla_gpu;

use crate::common;

fn load(text: &str) -> hlo::HloModule {
    let (_, module) = hlo::load("test.hlo", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    module
}

/// Parses `text` and emits its only fusion with the emitter its heroes pick, which must be
/// the transpose emitter.
fn load_and_emit(text: &str) -> (hlo::HloModule, EmittedFusion) {
    let module = load(text);
    let emitted = emitters::emit_fusion(&module, emitters::fusions(&module)[0])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(emitted.emitter, EmitterKind::Transpose);
    (module, emitted)
}

/// Emits with the transpose emitter's classic (padded) tiling, vectors of `vector_size`
/// forced.
fn emit_vectorized(module: &hlo::HloModule, vector_size: i64) -> EmittedFusion {
    let fusion = emitters::fusions(module)[0];
    let c = module.computation(fusion);
    let analysis = emitters::analyze(c);
    let (_, heroes) = emitters::choose_emitter(&analysis);
    let mut plan = TransposePlan::new(&analysis, &heroes).expect("a transpose plan");
    let description =
        emitters::transpose::tiled_transpose(c, heroes[0]).expect("a tiled transpose");
    plan.tiling = TransposeTiling::Padded(Tiling::with_vector_size(description, vector_size));
    emitters::FusionEmitter::emit(&plan, &analysis, module, fusion, emitters::Target::DEFAULT)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `emitted` on the random inputs of `seed` and asserts that every output element is
/// the evaluator's, bit for bit; a failure names `case`.
fn check(case: &str, module: &hlo::HloModule, emitted: &EmittedFusion, seed: u64) {
    let fusion = emitters::fusions(module)[0];
    let computation = module.computation(fusion);
    let text = emitted.module.print();
    assert!(text.contains(xla_gpu::ALLOCATE_SHARED), "{case}:\n{text}");
    assert!(text.contains(xla_gpu::SYNC_THREADS), "{case}:\n{text}");
    let args = random_arguments(computation, seed).unwrap();
    let expected = evaluate_fusion(module, fusion, &args).unwrap();
    let got = common::run_emitted(computation, emitted, &args, 0xff);
    common::assert_bit_identical(&got, &expected, &format!("{case}:\n{text}\n"));
}

fn check_text(case: &str, text: &str) {
    let (module, emitted) = load_and_emit(text);
    check(case, &module, &emitted, 1);
}

/// Asserts that `emitted` allocates `count` shared tiles.
fn assert_shared_tiles(emitted: &EmittedFusion, count: usize) {
    let printed = emitted.module.print();
    assert_eq!(
        printed.matches(xla_gpu::ALLOCATE_SHARED).count(),
        count,
        "{printed}"
    );
}

#[test]
fn the_seeds_example_on_a_smaller_shape() {
    // exp -> transpose(0,2,1) -> abs, both tiled dimensions partial (40 and 50 are not
    // multiples of 32).
    let (module, emitted) = load_and_emit(
        "fusion {
      p0 = f32[3,40,50] parameter(0)
      exp = f32[3,40,50] exponential(p0)
      transpose = f32[3,50,40] transpose(exp), dimensions={0,2,1}
      ROOT abs = f32[3,50,40] abs(transpose)
    }",
    );
    let printed = emitted.module.print();
    assert!(
        printed.contains("allocate_shared : tensor<1x32x33xf32>"),
        "{printed}"
    );
    assert!(printed.contains("@fusion__epilogue__abs"), "{printed}");
    assert_eq!(emitted.kernel.launch.shared_memory_bytes, 32 * 33 * 4);
    assert_eq!(emitted.kernel.launch.blocks, 3 * 2 * 2);
    for seed in 0..2 {
        check(&format!("seed {seed}"), &module, &emitted, seed);
    }
}

/// Each permutation the emitter tiles, with partial tiles (dimensions that are not
/// multiples of 32), and the shared tile it allocates where that is the point.
#[test]
fn each_permutation_with_partial_tiles() {
    let cases = [
        (
            "021, bf16",
            "fusion {
      p0 = bf16[2,33,70] parameter(0)
      t = bf16[2,70,33] transpose(p0), dimensions={0,2,1}
      ROOT n = bf16[2,70,33] negate(t)
    }",
            None,
        ),
        (
            "210, f32",
            "fusion {
      p0 = f32[40,3,50] parameter(0)
      ROOT t = f32[50,3,40] transpose(p0), dimensions={2,1,0}
    }",
            Some("32x1x33xf32"),
        ),
        (
            "210, bf16, with an epilogue that converts",
            "fusion {
      p0 = bf16[36,2,20] parameter(0)
      t = bf16[20,2,36] transpose(p0), dimensions={2,1,0}
      ROOT c = f32[20,2,36] convert(t)
    }",
            None,
        ),
        (
            "102 keeps the minor dimension in the tile",
            "fusion {
      p0 = s8[40,50,3] parameter(0)
      ROOT t = s8[50,40,3] transpose(p0), dimensions={1,0,2}
    }",
            Some("32x33x3xi8"),
        ),
        (
            // The identity permutation between a {1,2,0} and a {2,1,0} layout swaps the
            // two minor dimensions in memory: a 021 transpose of f32[3,50,40].
            "layouts decide what moves",
            "fusion {
      p0 = f32[3,40,50]{1,2,0} parameter(0)
      ROOT t = f32[3,40,50]{2,1,0} transpose(p0), dimensions={0,1,2}
    }",
            None,
        ),
    ];
    for (case, text, tile) in cases {
        let (module, emitted) = load_and_emit(text);
        if let Some(tile) = tile {
            let printed = emitted.module.print();
            assert!(
                printed.contains(&format!("allocate_shared : tensor<{tile}>")),
                "{case}:\n{printed}"
            );
        }
        check(case, &module, &emitted, 1);
    }
}

#[test]
fn vectors_of_two_and_four() {
    for (text, v) in [
        (
            "fusion {
          p0 = bf16[2,66,130] parameter(0)
          ROOT t = bf16[2,130,66] transpose(p0), dimensions={0,2,1}
        }",
            2,
        ),
        (
            "fusion {
          p0 = s8[132,68] parameter(0)
          ROOT t = s8[68,132] transpose(p0), dimensions={1,0}
        }",
            4,
        ),
    ] {
        let module = load(text);
        let emitted = emit_vectorized(&module, v);
        assert_eq!(emitted.kernel.vector_factor, v);
        check(&format!("vectors of {v}"), &module, &emitted, 1);
    }
}

/// The packed tiling (8- and 16-bit elements, several to a shared-memory word, padding
/// words per group of `32 / bits` rows, accesses of one, two or four words):
/// a 2-d transpose with partial tiles, short minor rows packed side by side (XLA's
/// `packed_transpose_s16` shape), 8-bit elements four to a word, and `pred`.
#[test]
fn packed_transposes() {
    for (case, text) in [
        (
            "2-d, partial tiles",
            "fusion {
          p0 = bf16[70,130] parameter(0)
          t = bf16[130,70] transpose(p0), dimensions={1,0}
          ROOT e = bf16[130,70] exponential(t)
        }",
        ),
        (
            "short minor rows side by side",
            "fusion {
          p0 = s16[2,4,64,10,6] parameter(0)
          ROOT t = s16[4,2,6,10,64] transpose(p0), dimensions={1,0,4,3,2}
        }",
        ),
        (
            "8-bit, four to a word",
            "fusion {
          p0 = s8[3,52,200] parameter(0)
          ROOT t = s8[3,200,52] transpose(p0), dimensions={0,2,1}
        }",
        ),
        (
            "pred",
            "fusion {
          p0 = f32[44,60] parameter(0)
          c = pred[44,60] compare(p0, p0), direction=GT
          ROOT t = pred[60,44] transpose(c), dimensions={1,0}
        }",
        ),
    ] {
        let (module, emitted) = load_and_emit(text);
        let packed = emitted.module.print();
        // 32 groups of `vs` rows of 32 words plus one, two, four or eight padding words.
        assert!(
            [
                "32x130x", "32x132x", "32x136x", "32x516x", "32x520x", "32x528x", "32x544x",
            ]
            .iter()
            .any(|t| packed.contains(&format!("allocate_shared : tensor<{t}"))),
            "{case}: no padded packed tile:\n{packed}"
        );
        check(case, &module, &emitted, 3);
    }
}

#[test]
fn side_outputs_and_several_roots() {
    // A side output of another parameter, the transpose itself, an epilogue root and a
    // side output of the input; all of one element count.
    check_text(
        "side outputs of both parameters",
        "fusion {
      p0 = f32[24,2,36] parameter(0)
      p1 = f32[36,2,24] parameter(1)
      tr = f32[36,2,24] transpose(p0), dimensions={2,1,0}
      neg = f32[36,2,24] negate(p1)
      log = f32[24,2,36] log(p0)
      ROOT t = (f32[36,2,24], f32[36,2,24], f32[24,2,36]) tuple(neg, tr, log)
    }",
    );
    check_text(
        "a reshaped epilogue and the transpose's operand",
        "fusion {
      p0 = bf16[4,48,40] parameter(0)
      e = bf16[4,48,40] exponential(p0)
      t = bf16[4,40,48] transpose(e), dimensions={0,2,1}
      a = bf16[4,40,48] abs(t)
      r = bf16[160,48] reshape(a)
      ROOT tuple = (bf16[160,48], bf16[4,48,40]) tuple(r, e)
    }",
    );
}

#[test]
fn several_heroes_with_the_same_permutation() {
    let text = "fusion {
      p0 = f32[2,40,64] parameter(0)
      p1 = bf16[2,40,64] parameter(1)
      t0 = f32[2,64,40] transpose(p0), dimensions={0,2,1}
      s = bf16[2,40,64] sqrt(p1)
      t1 = bf16[2,64,40] transpose(s), dimensions={0,2,1}
      c = f32[2,64,40] convert(t1)
      ROOT tuple = (f32[2,64,40], f32[2,64,40]) tuple(t0, c)
    }";
    let (module, emitted) = load_and_emit(text);
    assert_shared_tiles(&emitted, 2);
    assert_eq!(emitted.kernel.launch.shared_memory_bytes, 32 * 33 * (4 + 2));
    check("two heroes", &module, &emitted, 1);
}

#[test]
fn a_transpose_of_another_permutation_is_a_side_output() {
    // Both are tiled transposes, but one kernel tiles one permutation: the 210 transpose
    // is computed at the input's index like any side output.
    let text = "fusion {
      p0 = f32[40,36,40] parameter(0)
      t0 = f32[40,40,36] transpose(p0), dimensions={0,2,1}
      t1 = f32[40,36,40] transpose(p0), dimensions={2,1,0}
      ROOT tuple = (f32[40,40,36], f32[40,36,40]) tuple(t0, t1)
    }";
    let (module, emitted) = load_and_emit(text);
    assert_shared_tiles(&emitted, 1);
    check("a 210 side output", &module, &emitted, 1);
}
