//! `reduce-window` and `dynamic-update-slice` inside loop fusions: the structure XLA's
//! elemental emitter gives them (a loop over the window, an `scf.if` on the update's
//! window), IR that our verifier and real MLIR accept; and XLA's dynamic-update-slice
//! corpus, written in place. What the kernels compute is checked against the evaluator by the interpreter
//! (`crates/interp/tests/integration/emitted.rs`).

use crate::common;
use emitters::{emit_fusion, fusions};
use ir::dialects::arith;
use ir::dialects::func;
use ir::dialects::math;
use ir::dialects::scf;
use ir::dialects::tensor;
use ir::dialects::xla_gpu;

/// Emits the only fusion of `text`, checks real MLIR's verifier on the generic form, and
/// returns the pretty text.
fn emit(text: &str) -> String {
    let (source, module) = hlo::load("t.hlo", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let fusion = emit_fusion(&module, fusions(&module)[0])
        .unwrap_or_else(|d| panic!("{}", d.render(&source)));
    common::assert_mlir_verifies(&fusion, "the generic form");
    fusion.module.print()
}

/// The text of the private function `@name` (up to the next function).
fn function<'t>(text: &'t str, name: &str) -> &'t str {
    let start = text
        .find(&format!("func.func private @{name}("))
        .unwrap_or_else(|| panic!("no function @{name}:\n{text}"));
    let rest = &text[start..];
    let end = rest[1..].find(func::FUNC).map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

const ADD: &str = testkit::add_f32!();

#[test]
fn reduce_window_loops_over_the_window_and_skips_padding() {
    let text = emit(&format!(
        "{ADD}fusion {{
  p = f32[4,10] parameter(0)
  e = f32[4,10] exponential(p)
  z = f32[] constant(0)
  ROOT rw = f32[4,5] reduce-window(e, z), window={{size=1x3 stride=1x2 pad=0_0x1_1}}, to_apply=add
}}"
    ));
    // One range variable (the window of size 1 has none); padding is a constraint.
    assert!(
        text.contains(
            "(d0, d1)[s0] -> (d0, d1 * 2 + s0 - 1), domain: d0 in [0, 3], d1 in [0, 4], \
             s0 in [0, 2], d1 * 2 + s0 in [1, 10]"
        ),
        "{text}"
    );
    let f = function(&text, "fusion_rw");
    assert_eq!(f.matches(xla_gpu::LOOP).count(), 1, "{f}");
    // The operand is computed inside the loop, at the window position, and combined by
    // the reducer starting from the init value.
    assert!(f.contains("iter_args(%iter = %cst)"), "{f}");
    assert!(f.contains("tensor.extract %arg0[%ra, %rb]"), "{f}");
    assert!(f.contains(math::EXP), "{f}");
    assert!(f.contains("xla_gpu.pure_call @add(%iter, "), "{f}");
}

#[test]
fn a_one_element_window_without_padding_is_one_call() {
    let text = emit(&format!(
        "{ADD}fusion {{
  p = f32[6,8] parameter(0)
  z = f32[] constant(0)
  ROOT rw = f32[3,8] reduce-window(p, z), window={{size=1x1 stride=2x1}}, to_apply=add
}}"
    ));
    let f = function(&text, "fusion_rw");
    assert!(!f.contains(xla_gpu::LOOP), "{f}");
    assert_eq!(f.matches("xla_gpu.pure_call @add").count(), 1, "{f}");
}

#[test]
fn variadic_and_dilated_windows_on_every_element_type() {
    for t in [
        "pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
    ] {
        emit(&format!(
            "max {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT m = {t}[] maximum(a, b)
}}
fusion {{
  p = {t}[5,7] parameter(0)
  z = {t}[] parameter(1)
  ROOT rw = {t}[3,6] reduce-window(p, z), window={{size=2x3 stride=2x2 pad=1_0x1_1 lhs_dilate=1x2 rhs_dilate=1x2}}, to_apply=max
}}"
        ));
    }
    let text = emit(
        concat!(testkit::argmax!(), "fusion {
  x = f32[4,9] parameter(0)
  idx = s32[4,9] iota(), iota_dimension=1
  init_v = f32[] constant(-inf)
  init_i = s32[] constant(-1)
  rw = (f32[4,4], s32[4,4]) reduce-window(x, idx, init_v, init_i), window={size=1x3 stride=1x2}, to_apply=argmax
  v = f32[4,4] get-tuple-element(rw), index=0
  i = s32[4,4] get-tuple-element(rw), index=1
  ROOT t = (f32[4,4], s32[4,4]) tuple(v, i)
}"),
    );
    assert!(text.contains("-> (f32, i32)"), "{text}");
}

#[test]
fn dynamic_update_slice_selects_the_update_inside_its_window() {
    let text = emit(
        "fusion {
  in = f32[2,3] parameter(0)
  updates = f32[2,2] parameter(1)
  i0 = s32[] parameter(2)
  i1 = s32[] parameter(3)
  updated = f32[2,3] dynamic-update-slice(in, updates, i0, i1)
  ROOT negated = f32[2,3] negate(updated)
}",
    );
    let f = function(&text, "fusion_negated");
    // As in XLA's test: the update spans dimension 0, so i0 is never read.
    assert!(!f.contains("tensor.extract %arg2"), "{f}");
    let i1 = f.find("tensor.extract %arg3").expect("i1 is read");
    let branch = f.find(scf::IF).expect("an scf.if on the window");
    let update = f.find("tensor.extract %arg1").expect("the update is read");
    let operand = f.find("tensor.extract %arg0").expect("the operand is read");
    let otherwise = f.find("} else {").unwrap();
    assert!(i1 < branch && branch < update && update < otherwise && otherwise < operand);
    // The start is clamped into [0, 3 - 2].
    assert!(f.contains(arith::MAXSI) && f.contains(arith::MINSI), "{f}");
}

#[test]
fn dynamic_update_slices_of_every_element_type_and_index_type() {
    for (t, i) in [
        ("pred", "s32"),
        ("s8", "u8"),
        ("s16", "s16"),
        ("s32", "s64"),
        ("s64", "u32"),
        ("u8", "s8"),
        ("u16", "u16"),
        ("u32", "u64"),
        ("u64", "s32"),
        ("f16", "s32"),
        ("bf16", "u32"),
        ("f32", "s64"),
        ("f64", "s32"),
    ] {
        // The update with `root` after it: an epilogue keeps it in the loop emitter, as the
        // ROOT it is written in place.
        let fusion = |root: String| {
            format!(
                "fusion {{
  in = {t}[4,6] parameter(0)
  u = {t}[2,3] parameter(1)
  i = {i}[] parameter(2)
  j = {i}[] parameter(3)
  {root}
}}"
            )
        };
        let text = emit(&fusion(format!(
            "d = {t}[4,6] dynamic-update-slice(in, u, i, j)\n  ROOT c = {t}[4,6] copy(d)"
        )));
        assert!(text.contains(scf::IF), "{t}: {text}");
        // In place: a loop over the update only, its start clamped (unsigned indices with an
        // unsigned minimum).
        let text = emit(&fusion(format!(
            "ROOT d = {t}[4,6] dynamic-update-slice(in, u, i, j)"
        )));
        let clamp = if i.starts_with('u') {
            arith::MINUI
        } else {
            arith::MAXSI
        };
        assert!(
            !text.contains(scf::IF) && text.contains(clamp) && text.contains(tensor::INSERT),
            "{t}, {i}: {text}"
        );
    }
}

#[test]
fn a_dynamic_update_slice_of_the_whole_array_reads_only_the_update() {
    let text = emit(
        "fusion {
  in = s8[4,6] parameter(0)
  updates = s8[4,6] parameter(1)
  i = u32[] parameter(2)
  d = s8[4,6] dynamic-update-slice(in, updates, i, i)
  ROOT c = s8[4,6] copy(d)
}",
    );
    let f = function(&text, "fusion_c");
    assert!(!f.contains(scf::IF) && !f.contains("%arg0["), "{f}");
}

#[test]
fn the_dynamic_update_slice_corpus_emits_verified_ir() {
    let files = testkit::corpus(&["dynamic_update_slice"]);
    let mut count = 0;
    for path in &files {
        let (name, emitted) = common::emit_file(path);
        for fusion in &emitted {
            // Every file's DUS can be written in place (one of them, `mof`, two).
            let printed = fusion.module.print();
            assert_eq!(
                fusion.emitter,
                emitters::EmitterKind::InPlaceDynamicUpdateSlice,
                "{name}"
            );
            assert_eq!(
                fusion.kernel.in_place.len(),
                printed.matches(tensor::INSERT).count(),
                "{name}: {printed}"
            );
            common::assert_mlir_verifies(fusion, &name);
            count += 1;
        }
    }
    assert_eq!((count, files.len()), (6, 6));
}
