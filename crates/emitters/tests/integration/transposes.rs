//! The transpose emitter's structure: which functions it emits and which it drops, how the
//! partition splits outputs, its launch dimensions, and the fusions it leaves to the loop
//! emitter. Meaning is checked in `crates/interp/tests/integration/transposes.rs`.

use emitters::{EmitterKind, PartitionedComputation, SplitReason};

fn load(text: &str) -> hlo::HloModule {
    hlo::load("test.hlo", text.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"))
        .1
}

const SEED: &str = "fusion {
  p0 = f32[20,160,170] parameter(0)
  exp = f32[20,160,170] exponential(p0)
  transpose = f32[20,170,160] transpose(exp), dimensions={0,2,1}
  ROOT abs = f32[20,170,160] abs(transpose)
}";

#[test]
fn the_epilogue_takes_the_hero_instead_of_recomputing_it() {
    let module = load(SEED);
    let emitted = emitters::emit_fusion(&module, module.entry).unwrap();
    assert_eq!(emitted.emitter, EmitterKind::Transpose);
    let text = emitted.module.print();
    let functions: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("func.func "))
        .map(|l| l.split('(').next().unwrap())
        .collect();
    // The transpose's own function (reading the input at the transposed index) is gone.
    assert_eq!(
        functions,
        [
            "@main",
            "private @fusion_exp",
            "private @fusion__epilogue__abs"
        ],
        "{text}"
    );
    let epilogue = &text[text.find("@fusion__epilogue__abs(%arg0").unwrap()..];
    assert!(!epilogue.contains("pure_call"), "{text}");
    assert!(!epilogue.contains("apply_indexing"), "{text}");
    let launch = emitted.kernel.launch;
    assert_eq!(
        (
            launch.blocks,
            launch.threads_per_block,
            launch.shared_memory_bytes
        ),
        (600, 128, 32 * 33 * 4)
    );
    assert_eq!(emitted.kernel.vector_factor, 1);
    assert_eq!(emitted.kernel.thread_map.dims.len(), 2);
    assert_eq!(emitted.kernel.thread_map.results.len(), 3);
}

#[test]
fn every_output_roots_its_own_subgraph() {
    let module = load(
        "fusion {
      p0 = f32[24,2,36] parameter(0)
      p1 = f32[36,2,24] parameter(1)
      tr = f32[36,2,24] transpose(p0), dimensions={2,1,0}
      neg = f32[36,2,24] negate(p1)
      log = f32[24,2,36] log(p0)
      ROOT t = (f32[36,2,24], f32[24,2,36], f32[36,2,24]) tuple(neg, log, tr)
    }",
    );
    let c = module.computation(module.entry);
    let partition =
        PartitionedComputation::with_output_roots(&emitters::analyze(c), |_| false).unwrap();
    let mut roots: Vec<&str> = partition
        .subgraphs
        .iter()
        .map(|s| {
            assert_eq!(s.reason, SplitReason::FusionRoot);
            c.instruction(s.root).name.as_str()
        })
        .collect();
    roots.sort();
    assert_eq!(roots, ["log", "neg", "tr"]);
    let tr = c.instructions.iter().position(|i| i.name == "tr").unwrap();
    assert!(partition.subgraph_rooted_at(hlo::InstrId(tr)).is_some());
}

#[test]
fn outputs_of_another_size_leave_the_fusion_to_the_loop_emitter() {
    let text = "fusion {
  p0 = f32[64,64] parameter(0)
  t = f32[64,64] transpose(p0), dimensions={1,0}
  s = f32[32,64] slice(p0), slice={[0:32], [0:64]}
  ROOT tuple = (f32[64,64], f32[32,64]) tuple(t, s)
}";
    let module = load(text);
    let c = module.computation(module.entry);
    let analysis = emitters::analyze(c);
    let (kind, heroes) = emitters::choose_emitter(&analysis);
    assert_eq!(kind, EmitterKind::Transpose);
    assert!(emitters::transpose::TransposePlan::new(&analysis, &heroes).is_none());
    // The loop emitter refuses what it cannot index either, with a located diagnostic.
    let Err(e) = emitters::emit_fusion(&module, module.entry) else {
        panic!("the loop emitter writes outputs of different sizes");
    };
    assert!(
        e.message.starts_with("unsupported: a multi-output fusion"),
        "{}",
        e.message
    );
}

#[test]
fn small_or_kept_minor_dimensions_are_loop_fusions() {
    for text in [
        // 8 x 8: too small to tile.
        "fusion {\n  p0 = f32[4,8,8] parameter(0)\n  ROOT t = f32[4,8,8] transpose(p0), dimensions={0,2,1}\n}",
        // 102 with 4 KiB rows: read and written whole.
        "fusion {\n  p0 = f32[64,32,1024] parameter(0)\n  ROOT t = f32[32,64,1024] transpose(p0), dimensions={1,0,2}\n}",
    ] {
        let module = load(text);
        let emitted = emitters::emit_fusion(&module, module.entry).unwrap();
        assert_eq!(emitted.emitter, EmitterKind::Loop, "{text}");
        assert!(!emitted.module.print().contains("allocate_shared"));
    }
}
