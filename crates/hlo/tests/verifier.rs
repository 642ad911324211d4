//! Verifier tests: for every rule, a small HLO snippet that breaks it, with the exact
//! message and the `line:col` the diagnostic points at; and valid snippets (one per group
//! of ops) that must verify. At the end, mutated copies of the valid snippets go through
//! parse + verify, which must never panic.

use hlo::{SourceFile, parse_module, verify_module};

/// The first line of the rendered diagnostic (`t.hlo:L:C: error: ...`) for `text`, which
/// must parse and then fail to verify.
fn error(text: &str) -> String {
    let source = SourceFile::new("t.hlo", text);
    let module = parse_module(&source)
        .unwrap_or_else(|d| panic!("snippet must parse:\n{}", d.render(&source)));
    let diag = verify_module(&module).expect_err("snippet must fail to verify");
    diag.render(&source)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// `text` parses and verifies.
fn verifies(text: &str) {
    let source = SourceFile::new("t.hlo", text);
    let module = parse_module(&source)
        .unwrap_or_else(|d| panic!("snippet must parse:\n{}", d.render(&source)));
    if let Err(d) = verify_module(&module) {
        panic!("snippet must verify:\n{}", d.render(&source));
    }
}

// ---- Layouts ---------------------------------------------------------------------------

#[test]
fn layout_instr() {
    assert_eq!(
        error(
            r#"c {
  ROOT p = f32[2]{1,0} parameter(0)
}
"#
        ),
        "t.hlo:2:12: error: parameter: invalid layout in f32[2]{1,0}: layout has 2 dimensions but the shape has rank 1",
    );
}

#[test]
fn layout_tuple() {
    assert_eq!(
        error(
            r#"c {
  ROOT p = (f32[2]{0}, f32[3,4]{0,0}) parameter(0)
}
"#
        ),
        "t.hlo:2:12: error: parameter: invalid layout in f32[3,4]{0,0}: layout dimension 0 appears twice",
    );
}

#[test]
fn layout_signature() {
    assert_eq!(
        error(
            r#"c (x: f32[2]{1}) -> f32[2] {
  ROOT x = f32[2] parameter(0)
}
"#
        ),
        "t.hlo:1:3: error: signature of 'c': invalid layout in f32[2]{1}: layout dimension 1 is out of range for rank 1",
    );
}

#[test]
fn layout_entry() {
    assert_eq!(
        error(
            r#"HloModule m, entry_computation_layout={(f32[2]{1,0})->f32[2]{0}}
ENTRY c {
  ROOT p = f32[2] parameter(0)
}
"#
        ),
        "t.hlo:1:14: error: entry_computation_layout: invalid layout in f32[2]{1,0}: layout has 2 dimensions but the shape has rank 1",
    );
}

#[test]
fn entry_layout_mismatch() {
    assert_eq!(
        error(
            r#"HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}
ENTRY c {
  ROOT p = f32[2] parameter(0)
}
"#
        ),
        "t.hlo:1:14: error: entry_computation_layout gives parameter 0 the shape f32[3] but parameter 0 of 'c' has shape f32[2]",
    );
}

// ---- Parameters and signatures ---------------------------------------------------------

#[test]
fn param_out_of_range() {
    assert_eq!(
        error(
            r#"c {
  p0 = f32[] parameter(0)
  p2 = f32[] parameter(2)
  ROOT a = f32[] add(p0, p2)
}
"#
        ),
        "t.hlo:3:23: error: parameter number 2 is out of range: computation 'c' has 2 parameters, numbered from 0",
    );
}

#[test]
fn param_twice() {
    assert_eq!(
        error(
            r#"c {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(0)
  ROOT a = f32[] add(p0, p1)
}
"#
        ),
        "t.hlo:3:23: error: parameter number 0 is used twice in computation 'c'",
    );
}

#[test]
fn signature_count() {
    assert_eq!(
        error(
            r#"c (x: f32[], y: f32[]) -> f32[] {
  ROOT x = f32[] parameter(0)
}
"#
        ),
        "t.hlo:1:3: error: the signature of 'c' lists 2 parameters but the computation has 1",
    );
}

#[test]
fn signature_param() {
    assert_eq!(
        error(
            r#"c (x: f32[3]) -> f32[2] {
  ROOT x = f32[2] parameter(0)
}
"#
        ),
        "t.hlo:2:12: error: parameter 0 has shape f32[2] but the signature of 'c' says f32[3]",
    );
}

#[test]
fn signature_root() {
    assert_eq!(
        error(
            r#"c (x: f32[2]) -> f32[3] {
  ROOT x = f32[2] parameter(0)
}
"#
        ),
        "t.hlo:2:12: error: the root has shape f32[2] but the signature of 'c' returns f32[3]",
    );
}

// ---- Elementwise unary -----------------------------------------------------------------

#[test]
fn unary_type() {
    assert_eq!(
        error(
            r#"c {
  p = s32[4] parameter(0)
  ROOT s = s32[4] sqrt(p)
}
"#
        ),
        "t.hlo:3:24: error: sqrt: operand type s32[4] is not floating-point or complex",
    );
}

#[test]
fn unary_abs_complex() {
    assert_eq!(
        error(
            r#"c {
  p = c64[4] parameter(0)
  ROOT s = c64[4] abs(p)
}
"#
        ),
        "t.hlo:3:12: error: abs: result c64[4] does not match the inferred shape f32[4]",
    );
}

#[test]
fn unary_is_finite() {
    assert_eq!(
        error(
            r#"c {
  p = f32[4] parameter(0)
  ROOT s = f32[4] is-finite(p)
}
"#
        ),
        "t.hlo:3:12: error: is-finite: result f32[4] does not match the inferred shape pred[4]",
    );
}

#[test]
fn unary_not_float() {
    assert_eq!(
        error(
            r#"c {
  p = f32[4] parameter(0)
  ROOT s = f32[4] not(p)
}
"#
        ),
        "t.hlo:3:23: error: not: operand type f32[4] is not pred or integer",
    );
}

#[test]
fn unary_result() {
    assert_eq!(
        error(
            r#"c {
  p = f32[4] parameter(0)
  ROOT s = f32[5] exponential(p)
}
"#
        ),
        "t.hlo:3:12: error: exponential: result f32[5] does not match the inferred shape f32[4]",
    );
}

// ---- Elementwise binary ----------------------------------------------------------------

#[test]
fn binary_shapes() {
    assert_eq!(
        error(
            r#"c {
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT s = f32[2] add(a, b)
}
"#
        ),
        "t.hlo:4:26: error: add: operands must have the same shape, got f32[2] and f32[3]",
    );
}

#[test]
fn binary_types() {
    assert_eq!(
        error(
            r#"c {
  a = f32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT s = f32[2] multiply(a, b)
}
"#
        ),
        "t.hlo:4:31: error: multiply: operands must have the same shape, got f32[2] and s32[2]",
    );
}

#[test]
fn binary_and_float() {
    assert_eq!(
        error(
            r#"c {
  a = f32[2] parameter(0)
  ROOT s = f32[2] and(a, a)
}
"#
        ),
        "t.hlo:3:23: error: and: operand type f32[2] is not pred or integer",
    );
}

#[test]
fn binary_shift_pred() {
    assert_eq!(
        error(
            r#"c {
  a = pred[2] parameter(0)
  ROOT s = pred[2] shift-left(a, a)
}
"#
        ),
        "t.hlo:3:31: error: shift-left: operand type pred[2] is not integer",
    );
}

#[test]
fn binary_atan2_int() {
    assert_eq!(
        error(
            r#"c {
  a = s32[2] parameter(0)
  ROOT s = s32[2] atan2(a, a)
}
"#
        ),
        "t.hlo:3:25: error: atan2: operand type s32[2] is not floating-point or complex",
    );
}

#[test]
fn remainder_complex() {
    assert_eq!(
        error(
            r#"c {
  a = c64[2] parameter(0)
  ROOT r = c64[2] remainder(a, a)
}
"#
        ),
        "t.hlo:3:29: error: remainder: operand type c64[2] is not integer or floating-point",
    );
}

#[test]
fn binary_result() {
    assert_eq!(
        error(
            r#"c {
  a = f32[2] parameter(0)
  ROOT s = f16[2] subtract(a, a)
}
"#
        ),
        "t.hlo:3:12: error: subtract: result f16[2] does not match the inferred shape f32[2]",
    );
}

#[test]
fn binary_arity() {
    assert_eq!(
        error(
            r#"c {
  a = f32[2] parameter(0)
  ROOT s = f32[2] add(a)
}
"#
        ),
        "t.hlo:3:19: error: add: expected 2 operands, got 1",
    );
}

// ---- Compare, select, clamp, complex ---------------------------------------------------

#[test]
fn compare_direction() {
    assert_eq!(
        error(
            r#"c {
  a = f32[2] parameter(0)
  ROOT s = pred[2] compare(a, a)
}
"#
        ),
        "t.hlo:3:20: error: compare: missing direction= attribute",
    );
}

#[test]
fn compare_result() {
    assert_eq!(
        error(
            r#"c {
  a = f32[2] parameter(0)
  ROOT s = f32[2] compare(a, a), direction=LT
}
"#
        ),
        "t.hlo:3:12: error: compare: result f32[2] does not match the inferred shape pred[2]",
    );
}

#[test]
fn select_pred_type() {
    assert_eq!(
        error(
            r#"c {
  p = s32[2] parameter(0)
  a = f32[2] parameter(1)
  ROOT s = f32[2] select(p, a, a)
}
"#
        ),
        "t.hlo:4:26: error: select: predicate type s32[2] is not pred",
    );
}

#[test]
fn select_pred_dims() {
    assert_eq!(
        error(
            r#"c {
  p = pred[3] parameter(0)
  a = f32[2] parameter(1)
  ROOT s = f32[2] select(p, a, a)
}
"#
        ),
        "t.hlo:4:26: error: select: predicate pred[3] must be a scalar or have the dimensions of the operands f32[2]",
    );
}

#[test]
fn select_branches() {
    assert_eq!(
        error(
            r#"c {
  p = pred[2] parameter(0)
  a = f32[2] parameter(1)
  b = f16[2] parameter(2)
  ROOT s = f32[2] select(p, a, b)
}
"#
        ),
        "t.hlo:5:32: error: select: on-true and on-false operands must have the same shape, got f32[2] and f16[2]",
    );
}

#[test]
fn clamp_min() {
    assert_eq!(
        error(
            r#"c {
  lo = f32[3] parameter(0)
  x = f32[2] parameter(1)
  ROOT s = f32[2] clamp(lo, x, x)
}
"#
        ),
        "t.hlo:4:25: error: clamp: min f32[3] must be a scalar or have the shape of the operand f32[2]",
    );
}

#[test]
fn clamp_max_type() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2] parameter(0)
  hi = s32[] parameter(1)
  ROOT s = f32[2] clamp(x, x, hi)
}
"#
        ),
        "t.hlo:4:31: error: clamp: max has element type s32 but the operand has f32",
    );
}

#[test]
fn complex_types() {
    assert_eq!(
        error(
            r#"c {
  a = s32[2] parameter(0)
  ROOT t = c64[2] complex(a, a)
}
"#
        ),
        "t.hlo:3:27: error: complex: operand type s32[2] is not f32 or f64",
    );
}

#[test]
fn complex_result() {
    assert_eq!(
        error(
            r#"c {
  a = f64[2] parameter(0)
  ROOT t = c64[2] complex(a, a)
}
"#
        ),
        "t.hlo:3:12: error: complex: result c64[2] does not match the inferred shape c128[2]",
    );
}

// ---- Conversions and bitcasts ----------------------------------------------------------

#[test]
fn convert_dims() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2] parameter(0)
  ROOT s = s8[3] convert(x)
}
"#
        ),
        "t.hlo:3:12: error: convert: result s8[3] does not have the dimensions of the operand f32[2]",
    );
}

#[test]
fn bitcast_convert_same_width() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2] parameter(0)
  ROOT s = u32[3] bitcast-convert(x)
}
"#
        ),
        "t.hlo:3:12: error: bitcast-convert: result u32[3] does not match operand f32[2]",
    );
}

#[test]
fn bitcast_convert_narrower() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2] parameter(0)
  ROOT s = u8[2] bitcast-convert(x)
}
"#
        ),
        "t.hlo:3:12: error: bitcast-convert: result u8[2] does not match operand f32[2]: converting to the narrower u8 adds a minor dimension of size 4",
    );
}

#[test]
fn bitcast_convert_wider() {
    assert_eq!(
        error(
            r#"c {
  x = u8[2,3] parameter(0)
  ROOT s = f32[2] bitcast-convert(x)
}
"#
        ),
        "t.hlo:3:35: error: bitcast-convert: converting u8[2,3] to the wider f32 needs a minor dimension of size 4",
    );
}

#[test]
fn bitcast_count() {
    assert_eq!(
        error(
            r#"c {
  x = f32[6] parameter(0)
  ROOT s = f32[7] bitcast(x)
}
"#
        ),
        "t.hlo:3:12: error: bitcast: result f32[7] has 7 elements but the operand f32[6] has 6",
    );
}

#[test]
fn bitcast_bits() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2] parameter(0)
  ROOT s = s16[3] bitcast(x)
}
"#
        ),
        "t.hlo:3:12: error: bitcast: result s16[3] has 48 bits but the operand f32[2] has 64",
    );
}

#[test]
fn copy_result() {
    assert_eq!(
        error(
            r#"c {
  a = f32[2] parameter(0)
  ROOT t = f32[3] copy(a)
}
"#
        ),
        "t.hlo:3:12: error: copy: result f32[3] does not match the inferred shape f32[2]",
    );
}

// ---- Broadcast, reshape, transpose, reverse --------------------------------------------

#[test]
fn broadcast_range() {
    assert_eq!(
        error(
            r#"c {
  x = f32[3] parameter(0)
  ROOT b = f32[2,3] broadcast(x), dimensions={2}
}
"#
        ),
        "t.hlo:3:35: error: broadcast: dimension 2 is out of range for result of rank 2",
    );
}

#[test]
fn broadcast_twice() {
    assert_eq!(
        error(
            r#"c {
  x = f32[3,3] parameter(0)
  ROOT b = f32[3,3] broadcast(x), dimensions={1,1}
}
"#
        ),
        "t.hlo:3:35: error: broadcast: dimension 1 appears twice in dimensions={1,1}",
    );
}

#[test]
fn broadcast_sizes() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4] parameter(0)
  ROOT b = f32[2,3] broadcast(x), dimensions={1}
}
"#
        ),
        "t.hlo:3:12: error: broadcast: result f32[2,3] does not match operand f32[4]: operand dimension 0 (size 4) maps to result dimension 1 (size 3)",
    );
}

#[test]
fn broadcast_count() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3] parameter(0)
  ROOT b = f32[2,3,4] broadcast(x), dimensions={0}
}
"#
        ),
        "t.hlo:3:37: error: broadcast: dimensions= has 1 entry but the operand f32[2,3] has rank 2",
    );
}

#[test]
fn broadcast_type() {
    assert_eq!(
        error(
            r#"c {
  x = f32[3] parameter(0)
  ROOT b = f16[2,3] broadcast(x), dimensions={1}
}
"#
        ),
        "t.hlo:3:12: error: broadcast: result f16[2,3] does not have the element type of the operand f32[3]",
    );
}

#[test]
fn broadcast_missing() {
    assert_eq!(
        error(
            r#"c {
  x = f32[3] parameter(0)
  ROOT b = f32[2,3] broadcast(x)
}
"#
        ),
        "t.hlo:3:21: error: broadcast: missing dimensions= attribute",
    );
}

#[test]
fn reshape_count() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3] parameter(0)
  ROOT r = f32[7] reshape(x)
}
"#
        ),
        "t.hlo:3:12: error: reshape: result f32[7] has 7 elements but the operand f32[2,3] has 6",
    );
}

#[test]
fn transpose_twice() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3] parameter(0)
  ROOT t = f32[3,2] transpose(x), dimensions={1,1}
}
"#
        ),
        "t.hlo:3:35: error: transpose: dimension 1 appears twice in dimensions={1,1}",
    );
}

#[test]
fn transpose_count() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3] parameter(0)
  ROOT t = f32[3,2] transpose(x), dimensions={1}
}
"#
        ),
        "t.hlo:3:35: error: transpose: dimensions= has 1 entry but the operand f32[2,3] has rank 2",
    );
}

#[test]
fn transpose_result() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3,4] parameter(0)
  ROOT t = f32[3,2,4] transpose(x), dimensions={2,0,1}
}
"#
        ),
        "t.hlo:3:12: error: transpose: result f32[3,2,4] does not match the inferred shape f32[4,2,3]",
    );
}

#[test]
fn reverse_range() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reverse(x), dimensions={2}
}
"#
        ),
        "t.hlo:3:33: error: reverse: dimension 2 is out of range for operand of rank 2",
    );
}

// ---- Slice, pad, concatenate, iota -----------------------------------------------------

#[test]
fn slice_count() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4,6] parameter(0)
  ROOT s = f32[2] slice(x), slice={[0:2]}
}
"#
        ),
        "t.hlo:3:29: error: slice: slice= has 1 entry but the operand f32[4,6] has rank 2",
    );
}

#[test]
fn slice_stride() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4] parameter(0)
  ROOT s = f32[2] slice(x), slice={[0:2:0]}
}
"#
        ),
        "t.hlo:3:29: error: slice: stride 0 of dimension 0 must be positive",
    );
}

#[test]
fn slice_start_limit() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4] parameter(0)
  ROOT s = f32[0] slice(x), slice={[3:2]}
}
"#
        ),
        "t.hlo:3:29: error: slice: start 3 of dimension 0 exceeds its limit 2",
    );
}

#[test]
fn slice_limit() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4,6] parameter(0)
  ROOT s = f32[4,2] slice(x), slice={[0:4], [5:7]}
}
"#
        ),
        "t.hlo:3:31: error: slice: limit 7 of dimension 1 exceeds its size 6",
    );
}

#[test]
fn slice_result() {
    assert_eq!(
        error(
            r#"c {
  x = f32[10] parameter(0)
  ROOT s = f32[2] slice(x), slice={[1:8:3]}
}
"#
        ),
        "t.hlo:3:12: error: slice: result f32[2] does not match the inferred shape f32[3]",
    );
}

#[test]
fn pad_interior() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[4] pad(x, z), padding=0_0_-1
}
"#
        ),
        "t.hlo:4:30: error: pad: interior padding -1 of dimension 0 is negative",
    );
}

#[test]
fn pad_value() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4] parameter(0)
  z = f32[1] parameter(1)
  ROOT p = f32[4] pad(x, z), padding=0_0
}
"#
        ),
        "t.hlo:4:26: error: pad: padding value must be a scalar of type f32, got f32[1]",
    );
}

#[test]
fn pad_result() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4,3] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[8,3] pad(x, z), padding=1_2_1x0_-1
}
"#
        ),
        "t.hlo:4:12: error: pad: result f32[8,3] does not match the inferred shape f32[10,2]",
    );
}

#[test]
fn pad_count() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4,3] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[5,3] pad(x, z), padding=1_0
}
"#
        ),
        "t.hlo:4:32: error: pad: padding= has 1 entry but the operand f32[4,3] has rank 2",
    );
}

#[test]
fn concat_dims() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3] parameter(0)
  ROOT c = f32[4,3] concatenate(x, x), dimensions={0,1}
}
"#
        ),
        "t.hlo:3:40: error: concatenate: dimensions= must name exactly one dimension, got {0,1}",
    );
}

#[test]
fn concat_other() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3] parameter(0)
  y = f32[2,4] parameter(1)
  ROOT c = f32[4,3] concatenate(x, y), dimensions={0}
}
"#
        ),
        "t.hlo:4:36: error: concatenate: operand 1 f32[2,4] differs from operand 0 f32[2,3] in dimension 1, which is not the concatenated dimension 0",
    );
}

#[test]
fn concat_result() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3] parameter(0)
  y = f32[5,3] parameter(1)
  ROOT c = f32[8,3] concatenate(x, y), dimensions={0}
}
"#
        ),
        "t.hlo:4:12: error: concatenate: result f32[8,3] does not match the inferred shape f32[7,3]",
    );
}

#[test]
fn iota_range() {
    assert_eq!(
        error(
            r#"c {
  ROOT i = s32[2,3] iota(), iota_dimension=2
}
"#
        ),
        "t.hlo:2:29: error: iota: iota_dimension 2 is out of range for result of rank 2",
    );
}

#[test]
fn iota_missing() {
    assert_eq!(
        error(
            r#"c {
  ROOT i = s32[2,3] iota()
}
"#
        ),
        "t.hlo:2:21: error: iota: missing iota_dimension= attribute",
    );
}

// ---- Reductions ------------------------------------------------------------------------

#[test]
fn reduce_range() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={3}, to_apply=add
}
"#
        ),
        "t.hlo:9:33: error: reduce: dimension 3 is out of range for operand of rank 2",
    );
}

#[test]
fn reduce_twice() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={1,1}, to_apply=add
}
"#
        ),
        "t.hlo:9:33: error: reduce: dimension 1 appears twice in dimensions={1,1}",
    );
}

#[test]
fn reduce_result() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=add
}
"#
        ),
        "t.hlo:9:12: error: reduce: result f32[3] does not match the inferred shape f32[2]",
    );
}

#[test]
fn reduce_init_scalar() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  x = f32[2,3] parameter(0)
  z = f32[2] parameter(1)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add
}
"#
        ),
        "t.hlo:9:29: error: reduce: initial value 0 must be a scalar, got f32[2]",
    );
}

#[test]
fn reduce_odd() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z, z), dimensions={1}, to_apply=add
}
"#
        ),
        "t.hlo:9:19: error: reduce: expected k inputs followed by k initial values, got 3 operands",
    );
}

#[test]
fn reduce_variadic_input_dims() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  ROOT t = (f32[], s32[]) tuple(a, b)
}
c {
  x = f32[2,3] parameter(0)
  y = s32[3,2] parameter(1)
  z = f32[] constant(0)
  w = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, y, z, w), dimensions={1}, to_apply=add
}
"#
        ),
        "t.hlo:13:39: error: reduce: input 1 s32[3,2] does not have the dimensions of input 0 f32[2,3]",
    );
}

#[test]
fn reducer_params() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  d = f32[] parameter(2)
  ROOT s = f32[] add(a, b)
}
c {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add
}
"#
        ),
        "t.hlo:10:49: error: reduce: reducer 'add' must take 2 parameters, it takes 3",
    );
}

#[test]
fn reducer_variadic_result() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT s = f32[] add(a, b)
}
c {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = (f32[2], f32[2]) reduce(x, x, z, z), dimensions={1}, to_apply=add
}
"#
        ),
        "t.hlo:11:65: error: reduce: reducer 'add' must return a tuple of 2 scalars, it returns f32[]",
    );
}

#[test]
fn reducer_init_type() {
    assert_eq!(
        error(
            r#"add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
c {
  x = s32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add
}
"#
        ),
        "t.hlo:9:49: error: reduce: initial value 0 has type f32 but reducer 'add' accumulates s32",
    );
}

#[test]
fn reducer_missing() {
    assert_eq!(
        error(
            r#"c {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={1}
}
"#
        ),
        "t.hlo:4:19: error: reduce: missing to_apply= attribute",
    );
}

#[test]
fn reduce_window_result() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5,6] reduce-window(x, z), window={size=3x1 stride=2x1 pad=1_1x0_0}, to_apply=add
}
"#
        ),
        "t.hlo:9:12: error: reduce-window: result f32[5,6] does not match the inferred shape f32[4,6]",
    );
}

// ---- Dynamic slices --------------------------------------------------------------------

#[test]
fn dynamic_slice_index() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4,4] parameter(0)
  i = s32[2] parameter(1)
  j = s32[] parameter(2)
  ROOT d = f32[2,2] dynamic-slice(x, i, j), dynamic_slice_sizes={2,2}
}
"#
        ),
        "t.hlo:5:38: error: dynamic-slice: start index 0 must be an integer scalar, got s32[2]",
    );
}

#[test]
fn dynamic_slice_count() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4,4] parameter(0)
  j = s32[] parameter(1)
  ROOT d = f32[2,2] dynamic-slice(x, j), dynamic_slice_sizes={2,2}
}
"#
        ),
        "t.hlo:4:21: error: dynamic-slice: expected 2 start indices for the operand f32[4,4], got 1",
    );
}

#[test]
fn dynamic_slice_size() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4,4] parameter(0)
  j = s32[] parameter(1)
  ROOT d = f32[2,5] dynamic-slice(x, j, j), dynamic_slice_sizes={2,5}
}
"#
        ),
        "t.hlo:4:45: error: dynamic-slice: slice size 5 of dimension 1 is out of range [0, 4]",
    );
}

#[test]
fn dynamic_slice_float_index() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4] parameter(0)
  j = f32[] parameter(1)
  ROOT d = f32[2] dynamic-slice(x, j), dynamic_slice_sizes={2}
}
"#
        ),
        "t.hlo:4:36: error: dynamic-slice: start index 0 must be an integer scalar, got f32[]",
    );
}

#[test]
fn dus_larger() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4,4] parameter(0)
  u = f32[2,5] parameter(1)
  j = s32[] parameter(2)
  ROOT d = f32[4,4] dynamic-update-slice(x, u, j, j)
}
"#
        ),
        "t.hlo:5:45: error: dynamic-update-slice: update f32[2,5] is larger than the operand f32[4,4] in dimension 1",
    );
}

#[test]
fn dus_index_types() {
    assert_eq!(
        error(
            r#"c {
  x = f32[4,4] parameter(0)
  u = f32[2,2] parameter(1)
  i = s32[] parameter(2)
  j = s64[] parameter(3)
  ROOT d = f32[4,4] dynamic-update-slice(x, u, i, j)
}
"#
        ),
        "t.hlo:6:51: error: dynamic-update-slice: start indices must all have one type, got s32 and s64",
    );
}

// ---- Gather ----------------------------------------------------------------------------

#[test]
fn gather_offset_range() {
    assert_eq!(
        error(
            r#"c {
  operand = f32[30,20] parameter(0)
  indices = s32[10,2] parameter(1)
  ROOT g = f32[10,4,8] gather(operand, indices), offset_dims={1,3}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={4,8}
}
"#
        ),
        "t.hlo:4:50: error: gather: dimension 3 in offset_dims is out of range for result of rank 3",
    );
}

#[test]
fn gather_index_map() {
    assert_eq!(
        error(
            r#"c {
  operand = f32[30,20] parameter(0)
  indices = s32[10,2] parameter(1)
  ROOT g = f32[10,4,8] gather(operand, indices), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1}, index_vector_dim=1, slice_sizes={4,8}
}
"#
        ),
        "t.hlo:4:94: error: gather: start_index_map= has 1 entry but the index vector (dimension 1 of the indices) has 2",
    );
}

#[test]
fn gather_slice_size() {
    assert_eq!(
        error(
            r#"c {
  operand = f32[30,20] parameter(0)
  indices = s32[10,2] parameter(1)
  ROOT g = f32[10,4,8] gather(operand, indices), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={4,21}
}
"#
        ),
        "t.hlo:4:137: error: gather: slice size 21 of dimension 1 is out of range [0, 20]",
    );
}

#[test]
fn gather_collapsed() {
    assert_eq!(
        error(
            r#"c {
  operand = f32[30,20] parameter(0)
  indices = s32[10,1] parameter(1)
  ROOT g = f32[10,8] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,8}
}
"#
        ),
        "t.hlo:4:132: error: gather: dimension 0 is collapsed or a batching dimension, so its slice size must be 0 or 1, got 2",
    );
}

#[test]
fn gather_cover() {
    assert_eq!(
        error(
            r#"c {
  operand = f32[30,20] parameter(0)
  indices = s32[10,1] parameter(1)
  ROOT g = f32[10,8] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
}
"#
        ),
        "t.hlo:4:48: error: gather: offset_dims, collapsed_slice_dims and operand_batching_dims must together name the operand's 2 dimensions, they name 1",
    );
}

#[test]
fn gather_result() {
    assert_eq!(
        error(
            r#"c {
  operand = f32[30,20] parameter(0)
  indices = s32[10,2] parameter(1)
  ROOT g = f32[10,8,4] gather(operand, indices), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={4,8}
}
"#
        ),
        "t.hlo:4:12: error: gather: result f32[10,8,4] does not match the inferred shape f32[10,4,8]",
    );
}

#[test]
fn gather_index_vector_dim() {
    assert_eq!(
        error(
            r#"c {
  operand = f32[30,20] parameter(0)
  indices = s32[10,2] parameter(1)
  ROOT g = f32[10,4,8] gather(operand, indices), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=3, slice_sizes={4,8}
}
"#
        ),
        "t.hlo:4:117: error: gather: index_vector_dim=3 is out of range for indices s32[10,2] (it may be at most the rank 2)",
    );
}

#[test]
fn gather_float_indices() {
    assert_eq!(
        error(
            r#"c {
  operand = f32[30,20] parameter(0)
  indices = f32[10,2] parameter(1)
  ROOT g = f32[10,4,8] gather(operand, indices), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={4,8}
}
"#
        ),
        "t.hlo:4:40: error: gather: indices type f32[10,2] is not integer",
    );
}

// ---- Scatter ---------------------------------------------------------------------------

#[test]
fn scatter_rank() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  operand = f32[10,5] parameter(0)
  indices = s32[8,1] parameter(1)
  update = f32[8,2] parameter(2)
  ROOT s = f32[10,5] scatter(operand, indices, update), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"#
        ),
        "t.hlo:10:48: error: scatter: updates 0 f32[8,2] must have rank 3",
    );
}

#[test]
fn scatter_window() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  operand = f32[10,5] parameter(0)
  indices = s32[8,1] parameter(1)
  update = f32[8,1,6] parameter(2)
  ROOT s = f32[10,5] scatter(operand, indices, update), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"#
        ),
        "t.hlo:10:48: error: scatter: updates 0 f32[8,1,6]: window dimension 2 has size 6 but the operand dimension it updates has 5",
    );
}

#[test]
fn scatter_scatter_dim() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  operand = f32[10,5] parameter(0)
  indices = s32[8,1] parameter(1)
  update = f32[7,1,2] parameter(2)
  ROOT s = f32[10,5] scatter(operand, indices, update), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"#
        ),
        "t.hlo:10:48: error: scatter: updates 0 f32[7,1,2]: scatter dimension 0 has size 7 but the indices give 8",
    );
}

#[test]
fn scatter_cover() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  operand = f32[10,5] parameter(0)
  indices = s32[8,1] parameter(1)
  update = f32[8,2] parameter(2)
  ROOT s = f32[10,5] scatter(operand, indices, update), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"#
        ),
        "t.hlo:10:57: error: scatter: update_window_dims, inserted_window_dims and input_batching_dims must together name the operand's 2 dimensions, they name 1",
    );
}

#[test]
fn scatter_map() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  operand = f32[10,5] parameter(0)
  indices = s32[8,1] parameter(1)
  update = f32[8,1,2] parameter(2)
  ROOT s = f32[10,5] scatter(operand, indices, update), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={2}, index_vector_dim=1, to_apply=add
}
"#
        ),
        "t.hlo:10:108: error: scatter: dimension 2 in scatter_dims_to_operand_dims is out of range for operand of rank 2",
    );
}

#[test]
fn scatter_result() {
    assert_eq!(
        error(
            r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  operand = f32[10,5] parameter(0)
  indices = s32[8,1] parameter(1)
  update = f32[8,1,2] parameter(2)
  ROOT s = f32[10,6] scatter(operand, indices, update), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"#
        ),
        "t.hlo:10:12: error: scatter: result f32[10,6] does not match the inferred shape f32[10,5]",
    );
}

#[test]
fn scatter_reducer() {
    assert_eq!(
        error(
            r#"add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
c {
  operand = f32[10,5] parameter(0)
  indices = s32[8,1] parameter(1)
  update = f32[8,1,2] parameter(2)
  ROOT s = f32[10,5] scatter(operand, indices, update), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"#
        ),
        "t.hlo:10:162: error: scatter: initial value 0 has type f32 but reducer 'add' accumulates s32",
    );
}

// ---- Tuples ----------------------------------------------------------------------------

#[test]
fn gte_range() {
    assert_eq!(
        error(
            r#"c {
  t = (f32[], s32[]) parameter(0)
  ROOT g = f32[] get-tuple-element(t), index=2
}
"#
        ),
        "t.hlo:3:40: error: get-tuple-element: index 2 is out of range for a tuple of 2 elements",
    );
}

#[test]
fn gte_array() {
    assert_eq!(
        error(
            r#"c {
  t = f32[2] parameter(0)
  ROOT g = f32[] get-tuple-element(t), index=0
}
"#
        ),
        "t.hlo:3:36: error: get-tuple-element: operand must be a tuple, got f32[2]",
    );
}

#[test]
fn gte_result() {
    assert_eq!(
        error(
            r#"c {
  t = (f32[], s32[]) parameter(0)
  ROOT g = f32[] get-tuple-element(t), index=1
}
"#
        ),
        "t.hlo:3:12: error: get-tuple-element: result f32[] does not match the inferred shape s32[]",
    );
}

#[test]
fn tuple_result() {
    assert_eq!(
        error(
            r#"c {
  a = f32[] parameter(0)
  ROOT t = (f32[], f32[]) tuple(a)
}
"#
        ),
        "t.hlo:3:12: error: tuple: result (f32[], f32[]) does not match the inferred shape (f32[])",
    );
}

// ---- Called computations ---------------------------------------------------------------

#[test]
fn fusion_count() {
    assert_eq!(
        error(
            r#"fused {
  p0 = f32[2] parameter(0)
  ROOT n = f32[2] negate(p0)
}
ENTRY main {
  a = f32[2] parameter(0)
  ROOT f = f32[2] fusion(a, a), kind=kLoop, calls=fused
}
"#
        ),
        "t.hlo:7:45: error: fusion: 'fused' takes 1 parameter but the fusion has 2 operands",
    );
}

#[test]
fn fusion_operand() {
    assert_eq!(
        error(
            r#"fused {
  p0 = f32[2] parameter(0)
  ROOT n = f32[2] negate(p0)
}
ENTRY main {
  a = f32[3] parameter(0)
  ROOT f = f32[2] fusion(a), kind=kLoop, calls=fused
}
"#
        ),
        "t.hlo:7:26: error: fusion: operand 0 has shape f32[3] but parameter 0 of 'fused' has shape f32[2]",
    );
}

#[test]
fn fusion_root() {
    assert_eq!(
        error(
            r#"fused {
  p0 = f32[2] parameter(0)
  ROOT n = f32[2] negate(p0)
}
ENTRY main {
  a = f32[2] parameter(0)
  ROOT f = f16[2] fusion(a), kind=kLoop, calls=fused
}
"#
        ),
        "t.hlo:7:12: error: fusion: result f16[2] does not match the root of 'fused', which has shape f32[2]",
    );
}

#[test]
fn fusion_missing_calls() {
    assert_eq!(
        error(
            r#"ENTRY main {
  a = f32[2] parameter(0)
  ROOT f = f32[2] fusion(a), kind=kLoop
}
"#
        ),
        "t.hlo:3:19: error: fusion: missing calls= attribute",
    );
}

#[test]
fn call_operand() {
    assert_eq!(
        error(
            r#"f {
  p0 = f32[2] parameter(0)
  ROOT n = f32[2] negate(p0)
}
ENTRY main {
  a = s32[2] parameter(0)
  ROOT f = f32[2] call(a), to_apply=f
}
"#
        ),
        "t.hlo:7:24: error: call: operand 0 has shape s32[2] but parameter 0 of 'f' has shape f32[2]",
    );
}

#[test]
fn while_condition() {
    assert_eq!(
        error(
            r#"cond {
  p = s32[] parameter(0)
  ROOT c = s32[] copy(p)
}
body {
  p = s32[] parameter(0)
  ROOT c = s32[] copy(p)
}
ENTRY main {
  a = s32[] parameter(0)
  ROOT w = s32[] while(a), condition=cond, body=body
}
"#
        ),
        "t.hlo:11:28: error: while: condition 'cond' must return pred[], it returns s32[]",
    );
}

#[test]
fn while_body() {
    assert_eq!(
        error(
            r#"cond {
  p = s32[] parameter(0)
  ROOT c = pred[] compare(p, p), direction=LT
}
body {
  p = s32[] parameter(0)
  ROOT c = f32[] convert(p)
}
ENTRY main {
  a = s32[] parameter(0)
  ROOT w = s32[] while(a), condition=cond, body=body
}
"#
        ),
        "t.hlo:11:44: error: while: body 'body' returns f32[] but the loop state has shape s32[]",
    );
}

#[test]
fn sort_comparator() {
    assert_eq!(
        error(
            r#"cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8] parameter(0)
  ROOT s = f32[8] sort(x), dimensions={0}, to_apply=cmp
}
"#
        ),
        "t.hlo:8:44: error: sort: comparator 'cmp' must return pred[], it returns f32[]",
    );
}

#[test]
fn sort_dimension() {
    assert_eq!(
        error(
            r#"cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[8] parameter(0)
  ROOT s = f32[8] sort(x), dimensions={1}, to_apply=cmp
}
"#
        ),
        "t.hlo:8:28: error: sort: dimension 1 is out of range for operand of rank 1",
    );
}

#[test]
fn map_params() {
    assert_eq!(
        error(
            r#"f {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
ENTRY main {
  x = f32[8] parameter(0)
  ROOT m = f32[8] map(x, x), dimensions={0}, to_apply=f
}
"#
        ),
        "t.hlo:7:46: error: map: mapped computation 'f' must take 2 parameters, it takes 1",
    );
}

#[test]
fn map_result() {
    assert_eq!(
        error(
            r#"f {
  a = f32[] parameter(0)
  ROOT n = s32[] convert(a)
}
ENTRY main {
  x = f32[8] parameter(0)
  ROOT m = f32[8] map(x), dimensions={0}, to_apply=f
}
"#
        ),
        "t.hlo:7:12: error: map: result f32[8] does not match the inferred shape s32[8]",
    );
}

#[test]
fn conditional_selector() {
    assert_eq!(
        error(
            r#"t {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
ENTRY main {
  p = s32[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(p, x, x), true_computation=t, false_computation=t
}
"#
        ),
        "t.hlo:8:30: error: conditional: the branch selector must be pred[], got s32[]",
    );
}

// ---- Rendering, the parser's inference, unchecked ops ----------------------------------

#[test]
fn the_caret_underlines_the_attribute() {
    let text = r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={3}, to_apply=add
}
"#;
    let source = SourceFile::new("t.hlo", text);
    let module = parse_module(&source).unwrap();
    assert_eq!(
        verify_module(&module).unwrap_err().render(&source),
        format!(
            "t.hlo:9:33: error: reduce: dimension 3 is out of range for operand of rank 2\n\
             {line}\n{}^{}",
            " ".repeat(32),
            "~".repeat(13),
            line = "  ROOT r = f32[2] reduce(x, z), dimensions={3}, to_apply=add",
        )
    );
}

/// The parser fills in omitted shapes with the same rules, and points at the operand.
#[test]
fn inferred_shape_error_points_at_operand() {
    let source = SourceFile::new(
        "t.hlo",
        r#"c {
  x = f32[4] parameter(0)
  y = f32[5] parameter(1)
  ROOT s = add(x, y)
}
"#,
    );
    let rendered = parse_module(&source).unwrap_err().render(&source);
    assert_eq!(
        rendered.lines().next().unwrap_or_default(),
        "t.hlo:4:19: error: add: operands must have the same shape, got f32[4] and f32[5]"
    );
}

/// Ops outside DESIGN §5 (dot, custom-call, collectives, ...) get only the generic checks:
/// this dot's result is wrong, and passes.
#[test]
fn dot_is_generic() {
    verifies(
        r#"c {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"#,
    );
}

// ---- Valid modules ---------------------------------------------------------------------

const ELEMENTWISE_AND_FRIENDS: &str = r#"c {
  a = f32[2,3]{0,1} parameter(0)
  b = f32[2,3] parameter(1)
  z = c64[2,3] parameter(2)
  i = s32[2,3] parameter(3)
  p = pred[] parameter(4)
  s = f32[2,3] add(a, b)
  m = f32[2,3]{1,0} multiply(s, b)
  n = f32[2,3] negate(m)
  absz = f32[2,3] abs(z)
  re = f32[2,3] real(z)
  fin = pred[2,3] is-finite(n)
  cmp = pred[2,3] compare(a, b), direction=GT, type=TOTALORDER
  sel = f32[2,3] select(cmp, a, b)
  sel_scalar = f32[2,3] select(p, a, b)
  lo = f32[] constant(0)
  cl = f32[2,3] clamp(lo, sel, lo)
  sh = s32[2,3] shift-right-logical(i, i)
  x = s32[2,3] xor(i, sh)
  nt = s32[2,3] not(x)
  pw = f32[2,3] power(cl, a)
  at = f32[2,3] atan2(pw, a)
  cx = c64[2,3] complex(at, re)
  cv = s8[2,3] convert(at)
  ROOT t = (f32[2,3], c64[2,3], pred[2,3], s8[2,3], s32[2,3], f32[2,3]) tuple(absz, cx, fin, cv, nt, sel_scalar)
}
"#;

const BITCASTS: &str = r#"c {
  a = f32[2] parameter(0)
  u = u32[2] bitcast-convert(a)
  bytes = u8[2,4] bitcast-convert(a)
  back = f32[2] bitcast-convert(bytes)
  h = s16[4] bitcast(a)
  r = f32[1,2] bitcast(back)
  ROOT t = (u32[2], s16[4], f32[1,2]) tuple(u, h, r)
}
"#;

const INDEX_TRANSFORMS: &str = r#"c {
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  s = f32[3] parameter(1)
  scalar_b = f32[2,3] broadcast(z)
  b = f32[3,2] broadcast(s), dimensions={0}
  b2 = f32[2,3] broadcast(s), dimensions={1}
  b4 = f32[4,3] broadcast(s), dimensions={1}
  r = f32[24] reshape(x)
  t = f32[6,4] transpose(x), dimensions={1,0}
  sl = f32[2,2] slice(x), slice={[0:4:2], [1:6:3]}
  rv = f32[4,6] reverse(x), dimensions={0,1}
  p = f32[7,5] pad(x, z), padding=1_2x0_-1
  pi = f32[13,6] pad(x, z), padding=1_2_2x0_0
  cc = f32[4,9] concatenate(x, b4), dimensions={1}
  io = s32[4,6] iota(), iota_dimension=1
  ROOT tuple = (f32[2,3], f32[3,2], f32[24], f32[6,4], f32[2,2], f32[4,6], f32[7,5], f32[13,6], f32[4,9], s32[4,6], f32[2,3]) tuple(scalar_b, b, r, t, sl, rv, p, pi, cc, io, b2)
}
"#;

const OMITTED_SHAPES_ARE_INFERRED_WITH_THE_SAME_RULES: &str = r#"c {
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  sl = slice(x), slice={[0:4:2], [1:6:3]}
  t = transpose(sl), dimensions={1,0}
  p = pad(t, z), padding=1_1x0_0
  ROOT tuple = tuple(sl, t, p)
}
"#;

const REDUCTIONS: &str = r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
c {
  x = f32[8,6] parameter(0)
  xi = s32[8,6] iota(), iota_dimension=0
  bf = bf16[8,6] parameter(1)
  z = f32[] constant(0)
  zi = s32[] constant(0)
  r = f32[6] reduce(x, z), dimensions={0}, to_apply=add
  all = f32[] reduce(x, z), dimensions={0,1}, to_apply=add
  mixed = f32[6] reduce(bf, z), dimensions={0}, to_apply=add
  am = (f32[6], s32[6]) reduce(x, xi, z, zi), dimensions={0}, to_apply=argmax
  rw = f32[4,6] reduce-window(x, z), window={size=3x1 stride=2x1 pad=1_1x0_0}, to_apply=add
  ROOT t = (f32[6], f32[], f32[6], (f32[6], s32[6]), f32[4,6]) tuple(r, all, mixed, am, rw)
}
"#;

const DYNAMIC_SLICES: &str = r#"c {
  x = f32[20,30] parameter(0)
  u = f32[5,6] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  d = f32[5,6] dynamic-slice(x, i, j), dynamic_slice_sizes={5,6}
  ROOT dus = f32[20,30] dynamic-update-slice(x, d, i, j)
}
"#;

const GATHER_LIKE_XLA: &str = r#"c {
  operand = f32[30,20] parameter(0)
  indices = s32[10,2] parameter(1)
  ROOT g = f32[10,4,8] gather(operand, indices), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={4,8}
}
"#;

const GATHER_COLLAPSED_AND_IMPLICIT_INDEX_VECTOR: &str = r#"c {
  operand = f32[30,20] parameter(0)
  indices = s32[10] parameter(1)
  ROOT g = f32[10,20] gather(operand, indices), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,20}
}
"#;

const GATHER_BATCHING: &str = r#"c {
  operand = f32[5,10,20] parameter(0)
  indices = s32[5,7,1] parameter(1)
  ROOT g = f32[5,7,20] gather(operand, indices), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,20}
}
"#;

const SCATTERS: &str = r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add2 {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  t = s32[] add(b, d)
  ROOT r = (f32[], s32[]) tuple(s, t)
}
c {
  operand = f32[10,5] parameter(0)
  operand_i = s32[10,5] parameter(1)
  indices = s32[8,1] parameter(2)
  update = f32[8,1,2] parameter(3)
  update_i = s32[8,1,2] parameter(4)
  s = f32[10,5] scatter(operand, indices, update), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  v = (f32[10,5], s32[10,5]) scatter(operand, operand_i, indices, update, update_i), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2
  rows = f32[8,5] parameter(5)
  ins = f32[10,5] scatter(operand, indices, rows), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT t = (f32[10,5], (f32[10,5], s32[10,5]), f32[10,5]) tuple(s, v, ins)
}
"#;

const SCATTER_BATCHING: &str = r#"add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
c {
  operand = f32[5,10,20] parameter(0)
  indices = s32[5,7,1] parameter(1)
  updates = f32[5,7,20] parameter(2)
  ROOT s = f32[5,10,20] scatter(operand, indices, updates), update_window_dims={2}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=add
}
"#;

const CALLS: &str = r#"HloModule m, entry_computation_layout={(f32[8]{0}, s32[])->(f32[8], f32[8], s32[], f32[8], f32[8])}
fused (p0: f32[8], p1: f32[8]) -> f32[8] {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  ROOT a = f32[8] add(p0, p1)
}
neg {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
cond {
  p = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT c = pred[] compare(p, ten), direction=LT
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT s = s32[] add(p, one)
}
double {
  a = f32[8] parameter(0)
  ROOT d = f32[8] add(a, a)
}
ENTRY main {
  x = f32[8]{0} parameter(0)
  i = s32[] parameter(1)
  f = f32[8]{0} fusion(x, x), kind=kLoop, calls=fused
  m = f32[8] map(f), dimensions={0}, to_apply=neg
  w = s32[] while(i), condition=cond, body=body
  s = f32[8] sort(m), dimensions={0}, to_apply=lt
  k = f32[8] call(s), to_apply=double
  ROOT t = (f32[8], f32[8], s32[], f32[8], f32[8]) tuple(f, m, w, s, k)
}
"#;

const CONDITIONAL_AND_GENERIC_OPS: &str = r#"neg {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
ENTRY main {
  p = pred[] parameter(0)
  x = f32[] parameter(1)
  c = f32[] conditional(p, x, x), true_computation=neg, false_computation=neg
  b = s32[] parameter(2)
  c2 = f32[] conditional(b, x, x, x), branch_computations={neg, neg, neg}
  l = f32[2,3] parameter(3)
  r = f32[3,4] parameter(4)
  d = f32[2,4] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  cc = f32[9] custom-call(l), custom_call_target="foo"
  ROOT t = (f32[], f32[], f32[2,4], f32[9]) tuple(c, c2, d, cc)
}
"#;

const TILED_LAYOUTS: &str = r#"c {
  p = f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)(2,1)} parameter(0)
  ROOT n = f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)} negate(p)
}
"#;

const VALID: &[&str] = &[
    ELEMENTWISE_AND_FRIENDS,
    BITCASTS,
    INDEX_TRANSFORMS,
    OMITTED_SHAPES_ARE_INFERRED_WITH_THE_SAME_RULES,
    REDUCTIONS,
    DYNAMIC_SLICES,
    GATHER_LIKE_XLA,
    GATHER_COLLAPSED_AND_IMPLICIT_INDEX_VECTOR,
    GATHER_BATCHING,
    SCATTERS,
    SCATTER_BATCHING,
    CALLS,
    CONDITIONAL_AND_GENERIC_OPS,
    TILED_LAYOUTS,
];

#[test]
fn accepts_elementwise_and_friends() {
    verifies(ELEMENTWISE_AND_FRIENDS);
}

#[test]
fn accepts_bitcasts() {
    verifies(BITCASTS);
}

#[test]
fn accepts_index_transforms() {
    verifies(INDEX_TRANSFORMS);
}

#[test]
fn accepts_omitted_shapes_are_inferred_with_the_same_rules() {
    verifies(OMITTED_SHAPES_ARE_INFERRED_WITH_THE_SAME_RULES);
}

#[test]
fn accepts_reductions() {
    verifies(REDUCTIONS);
}

#[test]
fn accepts_dynamic_slices() {
    verifies(DYNAMIC_SLICES);
}

#[test]
fn accepts_gather_like_xla() {
    verifies(GATHER_LIKE_XLA);
}

#[test]
fn accepts_gather_collapsed_and_implicit_index_vector() {
    verifies(GATHER_COLLAPSED_AND_IMPLICIT_INDEX_VECTOR);
}

#[test]
fn accepts_gather_batching() {
    verifies(GATHER_BATCHING);
}

#[test]
fn accepts_scatters() {
    verifies(SCATTERS);
}

#[test]
fn accepts_scatter_batching() {
    verifies(SCATTER_BATCHING);
}

#[test]
fn accepts_calls() {
    verifies(CALLS);
}

#[test]
fn accepts_conditional_and_generic_ops() {
    verifies(CONDITIONAL_AND_GENERIC_OPS);
}

#[test]
fn accepts_tiled_layouts() {
    verifies(TILED_LAYOUTS);
}

// ---- Never panic ------------------------------------------------------------------------

/// Small edits of the valid snippets: numbers, types and attribute names swapped, text cut
/// out, lines swapped. Parse + verify must return, never panic; and enough of the mutants
/// must parse and then fail verification for the test to exercise the verifier.
#[test]
fn mutated_snippets_never_panic() {
    const NUMBERS: &[&str] = &[
        "0",
        "1",
        "2",
        "3",
        "7",
        "-1",
        "64",
        "4294967296",
        "9223372036854775807",
        "-9223372036854775808",
    ];
    const WORDS: &[&str] = &[
        "f32",
        "s32",
        "pred",
        "c64",
        "u8",
        "s4",
        "token",
        "bf16",
        "f64",
        "dimensions",
        "slice_sizes",
        "offset_dims",
        "index",
        "iota_dimension",
        "to_apply",
        "add",
        "?",
        "<=3",
        "{0}",
        "{}",
        "(f32[], s32[])",
        "T(2)",
        ":T(*,2)",
    ];
    let mut rng = fastrand::Rng::with_seed(0x5eed_ab1e);
    let (mut parsed, mut rejected) = (0, 0);
    for round in 0..4000 {
        let mut text = VALID[round % VALID.len()].to_string();
        for _ in 0..rng.usize(1..4) {
            text = mutate(&mut rng, &text, NUMBERS, WORDS);
        }
        let source = SourceFile::new("m.hlo", text.as_str());
        let Ok(module) = parse_module(&source) else {
            continue;
        };
        parsed += 1;
        if let Err(d) = verify_module(&module) {
            rejected += 1;
            // Rendering must not panic either.
            d.render(&source);
        }
    }
    assert!(parsed > 400, "only {parsed} mutants parsed");
    assert!(
        rejected > 200,
        "only {rejected} parsed mutants were rejected"
    );
}

fn mutate(rng: &mut fastrand::Rng, text: &str, numbers: &[&str], words: &[&str]) -> String {
    let bytes = text.as_bytes();
    let at = rng.usize(..bytes.len());
    match rng.u8(..4) {
        // Replace the number under `at` (or the next one).
        0 => {
            let Some(start) = (at..bytes.len()).find(|&i| bytes[i].is_ascii_digit()) else {
                return text.to_string();
            };
            let end = (start..bytes.len())
                .find(|&i| !bytes[i].is_ascii_digit())
                .unwrap_or(bytes.len());
            let number = numbers[rng.usize(..numbers.len())];
            format!("{}{number}{}", &text[..start], &text[end..])
        }
        // Replace the word under `at` (or the next one).
        1 => {
            let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
            let Some(start) = (at..bytes.len()).find(|&i| bytes[i].is_ascii_alphabetic()) else {
                return text.to_string();
            };
            let end = (start..bytes.len())
                .find(|&i| !is_word(bytes[i]))
                .unwrap_or(bytes.len());
            let word = words[rng.usize(..words.len())];
            format!("{}{word}{}", &text[..start], &text[end..])
        }
        // Cut a few characters.
        2 => {
            let end = (at + rng.usize(1..6)).min(bytes.len());
            format!("{}{}", &text[..at], &text[end..])
        }
        // Swap two lines.
        _ => {
            let mut lines: Vec<&str> = text.lines().collect();
            let (a, b) = (rng.usize(..lines.len()), rng.usize(..lines.len()));
            lines.swap(a, b);
            lines.join("\n")
        }
    }
}
