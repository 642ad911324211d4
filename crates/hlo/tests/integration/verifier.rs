//! Verifier tests beside the lit files: the rules themselves, one small HLO snippet per rule
//! with its exact message and position, are `testdata/lit/hlo/verifier/*.hlo` (pieces of
//! `hlo-emit --split-input-file`). Here: how diagnostics render, valid snippets (one per
//! group of ops) that must verify, and mutated copies of those that parse + verify must
//! never panic on.

use hlo::{SourceFile, parse_module, verify_module};

/// `text` parses and verifies.
fn verifies(text: &str) {
    let source = SourceFile::new("t.hlo", text);
    let module = parse_module(&source)
        .unwrap_or_else(|d| panic!("snippet must parse:\n{}", d.render(&source)));
    if let Err(d) = verify_module(&module) {
        panic!("snippet must verify:\n{}", d.render(&source));
    }
}

// ---- Rendering, the parser's inference, unchecked ops ----------------------------------

#[test]
fn the_caret_underlines_the_attribute() {
    let text = concat!(
        testkit::add_f32!(),
        r#"c {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={3}, to_apply=add
}
"#
    );
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

/// Ops the emitters do not compile (custom-call, collectives, ...) get only the generic checks: this
/// custom-call's result is whatever it says.
#[test]
fn custom_calls_are_generic() {
    verifies(
        r#"c {
  a = f32[2,3] parameter(0)
  ROOT d = f32[7] custom-call(a), custom_call_target="foo"
}
"#,
    );
}

/// A dot's result is its batch dimensions, then the left operand's others, then the right
/// operand's (testdata/lit/hlo/verifier/dot.hlo has the refusals).
#[test]
fn dots_have_batch_then_free_dimensions() {
    verifies(
        r#"c {
  a = f32[5,2,3] parameter(0)
  b = f32[3,5,4] parameter(1)
  ROOT d = f32[5,2,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_contracting_dims={0}
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

const REDUCTIONS: &str = concat!(
    testkit::add_f32!(),
    testkit::argmax!(),
    r#"c {
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
"#
);

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

const SCATTERS: &str = concat!(
    testkit::add_f32!(),
    testkit::add2!(),
    r#"c {
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
"#
);

const SCATTER_BATCHING: &str = concat!(
    testkit::add_f32!(),
    r#"c {
  operand = f32[5,10,20] parameter(0)
  indices = s32[5,7,1] parameter(1)
  updates = f32[5,7,20] parameter(2)
  ROOT s = f32[5,10,20] scatter(operand, indices, updates), update_window_dims={2}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=add
}
"#
);

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
