//! Control flow and calls: `scf.for` (iter args, unsigned bounds, permuted yields),
//! `scf.if`, `xla_gpu.loop` (domains with constraints), `xla_gpu.apply_indexing`,
//! `func.call` and `xla_gpu.pure_call` (with `xla.range` promises).

use crate::common;

use common::{expect_error, i64s, run, to_i64s};
use interp::ErrorKind;

/// Runs a one-thread kernel writing four i64 results; returns them.
fn results(body: &str, funcs: &str) -> Result<Vec<i64>, interp::Error> {
    results_in("", body, funcs)
}

/// `@main` of `body` (which defines `%r0`..`%r3`) between `prelude` and `funcs`, run on
/// one thread; its four results.
fn results_in(prelude: &str, body: &str, funcs: &str) -> Result<Vec<i64>, interp::Error> {
    let text = format!(
        r#"{prelude}
func.func @main(%out: tensor<4xi64>) -> tensor<4xi64> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  {body}
  %o0 = tensor.insert %r0 into %out[%c0] : tensor<4xi64>
  %o1 = tensor.insert %r1 into %o0[%c1] : tensor<4xi64>
  %o2 = tensor.insert %r2 into %o1[%c2] : tensor<4xi64>
  %o3 = tensor.insert %r3 into %o2[%c3] : tensor<4xi64>
  return %o3 : tensor<4xi64>
}}
{funcs}"#
    );
    Ok(to_i64s(&run(&text, 1, 1, vec![i64s(&[0; 4])])?[0]))
}

#[test]
fn scf_for_carries_iter_args_and_swaps_them() {
    let body = r#"
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %c10 = arith.constant 10 : index
  %sum, %a, %b = scf.for %i = %c0 to %c10 step %c3 iter_args(%s = %zero, %x = %zero, %y = %one) -> (i64, i64, i64) {
    %ii = arith.index_cast %i : index to i64
    %s2 = arith.addi %s, %ii : i64
    scf.yield %s2, %y, %x : i64, i64, i64
  }
  %lb = arith.constant 250 : i8
  %ub = arith.constant 253 : i8
  %st = arith.constant 1 : i8
  %n = scf.for unsigned %j = %lb to %ub step %st iter_args(%k = %zero) -> (i64) : i8 {
    %k2 = arith.addi %k, %one : i64
    scf.yield %k2 : i64
  }
  %empty = scf.for %j = %c10 to %c0 step %c1 iter_args(%k = %one) -> (i64) {
    scf.yield %zero : i64
  }
  %r0 = arith.addi %sum, %zero : i64
  %r1 = arith.addi %a, %b : i64
  %r2 = arith.muli %a, %n : i64
  %r3 = arith.addi %empty, %zero : i64"#;
    // i = 0, 3, 6, 9: sum 18; four swaps leave (x, y) = (0, 1); the unsigned loop runs
    // 3 times (250..253 as i8 would be negative signed); the empty loop keeps its init.
    assert_eq!(results(body, "").unwrap(), [18, 1, 0, 1]);
}

#[test]
fn scf_for_with_a_zero_step_is_undefined() {
    let body = r#"
  %zero = arith.constant 0 : i64
  %c10 = arith.constant 10 : index
  %r0 = scf.for %i = %c0 to %c10 step %c0 iter_args(%s = %zero) -> (i64) {
    scf.yield %s : i64
  }
  %r1 = arith.addi %r0, %r0 : i64
  %r2 = arith.addi %r0, %r0 : i64
  %r3 = arith.addi %r0, %r0 : i64"#;
    expect_error(
        results(body, ""),
        ErrorKind::UndefinedBehavior,
        &["loop step 0 is not positive", "'scf.for'"],
    );
}

#[test]
fn scf_if_yields_from_the_branch_taken() {
    let body = r#"
  %t = arith.constant true
  %f = arith.constant false
  %five = arith.constant 5 : i64
  %six = arith.constant 6 : i64
  %r0 = scf.if %t -> (i64) {
    scf.yield %five : i64
  } else {
    scf.yield %six : i64
  }
  %r1 = scf.if %f -> (i64) {
    scf.yield %five : i64
  } else {
    scf.yield %six : i64
  }
  scf.if %f {
    %bad = arith.divsi %five, %r0 : i64
  }
  %r2 = arith.addi %r0, %r1 : i64
  %r3 = arith.muli %r0, %r1 : i64"#;
    assert_eq!(results(body, "").unwrap(), [5, 6, 11, 30]);
}

#[test]
fn xla_loops_visit_their_domain_and_skip_points_outside_it() {
    // (d0)[s0, s1] with s0 in [0, 3], s1 in [0, 4] and s0 + s1 in [2, 5]: 14 of 20 points;
    // the result d0 * 100 + s0 * 10 + s1 is summed over them.
    let prelude = r##"
#map = #xla_gpu.indexing_map<"(d0)[s0, s1] -> (d0 * 100 + s0 * 10 + s1, s1), domain: d0 in [0, 9], s0 in [0, 3], s1 in [0, 4], s0 + s1 in [2, 5]">
#apply = #xla_gpu.indexing_map<"(d0, d1)[s0] -> (d0 floordiv 4 + d1 * 3, (d0 + s0) mod 5), domain: d0 in [0, 100], d1 in [0, 10], s0 in [0, 10]">"##;
    let body = r#"
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %c7 = arith.constant 7 : index
  %sum, %count, %last = xla_gpu.loop (%c7)[%i, %j] -> (%v, %w) in #map iter_args(%s = %zero, %n = %zero, %l = %zero) -> (i64, i64, i64) {
    %vv = arith.index_cast %v : index to i64
    %s2 = arith.addi %s, %vv : i64
    %n2 = arith.addi %n, %one : i64
    %ww = arith.index_cast %w : index to i64
    xla_gpu.yield %s2, %n2, %ww : i64, i64, i64
  }
  %c13 = arith.constant 13 : index
  %a:2 = xla_gpu.apply_indexing #apply(%c13, %c2)[%c7]
  %a0 = arith.index_cast %a#0 : index to i64
  %a1 = arith.index_cast %a#1 : index to i64
  %r0 = arith.addi %sum, %zero : i64
  %r1 = arith.addi %count, %zero : i64
  %r2 = arith.addi %last, %zero : i64
  %r3 = arith.addi %a0, %a1 : i64"#;
    let mut expected_sum = 0;
    let mut count = 0;
    for s0 in 0..=3 {
        for s1 in 0..=4 {
            if (2..=5).contains(&(s0 + s1)) {
                expected_sum += 700 + s0 * 10 + s1;
                count += 1;
            }
        }
    }
    // The last point visited is s0 = 3, s1 = 2 (the last symbol varies fastest).
    // apply_indexing: 13 floordiv 4 + 2 * 3 = 9, (13 + 7) mod 5 = 0.
    let got = results_with_prelude(prelude, body).unwrap();
    assert_eq!(got, [expected_sum, count, 2, 9]);
}

/// Like [`results`], with attribute aliases before the module.
fn results_with_prelude(prelude: &str, body: &str) -> Result<Vec<i64>, interp::Error> {
    results_in(prelude, body, "")
}

#[test]
fn calls_return_their_results_and_check_argument_ranges() {
    let funcs = r#"
func.func private @twice(%x: i64) -> (i64, i64) {
  %two = arith.constant 2 : i64
  %y = arith.muli %x, %two : i64
  %z = func.call @inc(%y) : (i64) -> i64
  return %y, %z : i64, i64
}
func.func private @inc(%x: i64) -> i64 {
  %one = arith.constant 1 : i64
  %y = arith.addi %x, %one : i64
  return %y : i64
}
func.func private @at(%i: index {xla.range = [0 : index, 3 : index]}) -> i64 {
  %v = arith.index_cast %i : index to i64
  return %v : i64
}"#;
    let body = r#"
  %x = arith.constant 20 : i64
  %r0, %r1 = func.call @twice(%x) : (i64) -> (i64, i64)
  %r2 = xla_gpu.pure_call @at(%c3) : (index) -> i64
  %r3 = xla_gpu.pure_call @at(%c3) : (index) -> i64"#;
    assert_eq!(results(body, funcs).unwrap(), [40, 41, 3, 3]);
    let bad = r#"
  %c4 = arith.constant 4 : index
  %r0 = xla_gpu.pure_call @at(%c4) : (index) -> i64
  %r1 = arith.addi %r0, %r0 : i64
  %r2 = arith.addi %r0, %r0 : i64
  %r3 = arith.addi %r0, %r0 : i64"#;
    expect_error(
        results(bad, funcs),
        ErrorKind::UndefinedBehavior,
        &[
            "argument #0 of @at is 4, outside its xla.range [0, 3]",
            "'xla_gpu.pure_call'",
        ],
    );
}

#[test]
fn unknown_ops_and_missing_functions_are_reported_before_running() {
    let text = r#"
func.func @main(%out: tensor<1xf32>) -> tensor<1xf32> {
  %v = "test.frobnicate"() : () -> f32
  %c0 = arith.constant 0 : index
  %o = tensor.insert %v into %out[%c0] : tensor<1xf32>
  return %o : tensor<1xf32>
}"#;
    let m = common::parse(text);
    let e = interp::Kernel::compile(&m, "main").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.thread.is_none());
    assert_eq!(
        e.to_string(),
        "test.mlir:3:3: error: unsupported: the interpreter does not execute this op in 'test.frobnicate'"
    );
    let e = interp::Kernel::compile(&m, "nope").unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    // IR that does not verify (a use before its definition) is refused as a whole.
    let text = r#"
func.func @main(%out: tensor<1xf32>) -> tensor<1xf32> {
  %c0 = arith.constant 0 : index
  %o = tensor.insert %v into %out[%c0] : tensor<1xf32>
  %v = arith.constant 1.0 : f32
  return %o : tensor<1xf32>
}"#;
    let m = common::parse(text);
    let e = interp::Kernel::compile(&m, "main").unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidIr);
    assert!(
        e.to_string().contains("does not verify: test.mlir:4:"),
        "{e}"
    );
}
