//! Kernels from the loop emitter, run on the evaluator's random inputs and compared with
//! the HLO reference evaluator bit for bit.
//!
//! Both sides compute `f16`/`bf16` ops in `f32` and round after each op, and both use
//! Rust's `f32`/`f64` math functions (`tanh` included), so no tolerance is needed: a
//! comparison against another libm (libdevice on a GPU) would need one for `tanh` and the
//! other transcendental functions, not this one.

use hlo::evaluate::{evaluate_fusion, random_arguments};

use crate::common;

/// Emits the module's only fusion, runs it in the interpreter and in the evaluator on the
/// same random inputs (seed `seed`), and asserts that every output element is identical.
fn check(hlo_text: &str, seed: u64) {
    let (_, module) = hlo::load("test.hlo", hlo_text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let fusion = emitters::fusions(&module)[0];
    let emitted = emitters::emit_fusion(&module, fusion).unwrap_or_else(|e| panic!("{e}"));
    let computation = module.computation(fusion);
    let args = random_arguments(computation, seed).unwrap();
    let expected = evaluate_fusion(&module, fusion, &args).unwrap();
    let got = common::run_emitted(computation, &emitted, &args, 0);
    common::assert_bit_identical(&got, &expected, "");
}

#[test]
fn gelu_matches_the_evaluator_bit_for_bit() {
    let text = common::small_gelu_hlo();
    for seed in 0..3 {
        check(&text, seed);
    }
}

// The corpus after every pass: `tools/tests/integration/check.rs` (`hlo-emit --check`).

/// Reduce-windows with padding, strides and dilations: the interpreter runs the emitted
/// loop over the window, and the evaluator its own walk, on the same inputs. The
/// non-commutative `acc * 10 + x` reducer catches a wrong order or a skipped position.
#[test]
fn reduce_windows_match_the_evaluator_bit_for_bit() {
    let cases = [
        "x = s32[4,10] parameter(0)
  z = s32[] constant(7)
  ROOT rw = s32[4,5] reduce-window(x, z), window={size=1x3 stride=1x2 pad=0_0x1_1}, to_apply=horner",
        "x = s32[5,7] parameter(0)
  z = s32[] parameter(1)
  ROOT rw = s32[3,6] reduce-window(x, z), window={size=2x3 stride=2x2 pad=1_0x1_1 lhs_dilate=1x2 rhs_dilate=1x2}, to_apply=horner",
        "x = s32[6,5] parameter(0)
  n = s32[6,5] negate(x)
  z = s32[] constant(1)
  ROOT rw = s32[2,5] reduce-window(n, z), window={size=3x2 stride=3x1 pad=-1_2x0_1}, to_apply=horner",
        "x = s32[6,8] parameter(0)
  z = s32[] constant(0)
  ROOT rw = s32[3,8] reduce-window(x, z), window={size=1x1 stride=2x1}, to_apply=horner",
    ];
    for case in cases {
        for seed in 0..2 {
            check(
                &format!("{}fusion {{\n  {case}\n}}\n", testkit::horner!()),
                seed,
            );
        }
    }
}

#[test]
fn float_and_variadic_reduce_windows_match_the_evaluator_bit_for_bit() {
    // bf16 sums round after every step in both.
    check(
        "add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
fusion {
  x = bf16[3,17] parameter(0)
  e = bf16[3,17] exponential(x)
  z = bf16[] constant(0)
  ROOT rw = bf16[3,9] reduce-window(e, z), window={size=1x5 stride=1x2 pad=0_0x2_2}, to_apply=add
}",
        3,
    );
    check(
        concat!(testkit::argmax!(), "fusion {
  x = f32[4,9] parameter(0)
  idx = s32[4,9] iota(), iota_dimension=1
  init_v = f32[] constant(-inf)
  init_i = s32[] constant(-1)
  rw = (f32[4,5], s32[4,5]) reduce-window(x, idx, init_v, init_i), window={size=1x3 stride=1x2 pad=0_0x1_1}, to_apply=argmax
  v = f32[4,5] get-tuple-element(rw), index=0
  i = s32[4,5] get-tuple-element(rw), index=1
  ROOT t = (f32[4,5], s32[4,5]) tuple(v, i)
}"),
        4,
    );
}

/// Dynamic-update-slices whose random start indices fall inside and outside the operand
/// (clamped), with an update computed in the fusion and an epilogue.
#[test]
fn dynamic_update_slices_match_the_evaluator_bit_for_bit() {
    let cases = [
        "in = f32[20,30] parameter(0)
  u = f32[5,6] parameter(1)
  i0 = s32[] parameter(2)
  i1 = s32[] parameter(3)
  n = f32[5,6] negate(u)
  d = f32[20,30] dynamic-update-slice(in, n, i0, i1)
  ROOT b = f32[600] bitcast(d)",
        "in = s8[4,6,3] parameter(0)
  u = s8[4,2,3] parameter(1)
  i = u16[] parameter(2)
  ROOT d = s8[4,6,3] dynamic-update-slice(in, u, i, i, i)",
        "in = f64[7] parameter(0)
  u = f64[7] parameter(1)
  i = s64[] parameter(2)
  ROOT d = f64[7] dynamic-update-slice(in, u, i)",
    ];
    for case in cases {
        for seed in 0..4 {
            check(&format!("fusion {{\n  {case}\n}}\n"), seed);
        }
    }
}
