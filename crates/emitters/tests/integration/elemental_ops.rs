//! Every op the elemental emitter handles, on every element type it accepts: the emitted
//! module passes our verifier and real MLIR's (generic form), and refused combinations are
//! `unsupported` errors naming the op. What the ops compute is checked by the interpreter
//! against the reference evaluator (`hlo-emit --check`).

use emitters::{emit_fusion, fusions};
use ir::dialects::math;
use ir::dialects::scf;

const FLOATS: &[&str] = &["f16", "bf16", "f32", "f64"];
const INTS: &[&str] = &["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"];
const ALL: &[&str] = &[
    "pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
];

/// Emits `body` (instructions over parameters `x`, `y`: `T[4,6]`) and checks it in MLIR.
fn emits(body: &str) -> Result<(), String> {
    let text = format!("f {{\n{body}\n}}\n");
    let (source, module) =
        hlo::load("op.hlo", text.as_bytes()).map_err(|e| format!("{e}\n{text}"))?;
    let id = fusions(&module)[0];
    let fusion = emit_fusion(&module, id).map_err(|d| d.render(&source))?;
    let generic = fusion.module.print_generic();
    codegen::mlir::verify(&generic, true).map_err(|e| format!("MLIR: {e}\n{text}\n{generic}"))
}

fn unary(op: &str, t: &str, out: &str) -> String {
    format!("  x = {t}[4,6] parameter(0)\n  ROOT r = {out}[4,6] {op}(x)")
}

fn binary(op: &str, t: &str, out: &str) -> String {
    format!(
        "  x = {t}[4,6] parameter(0)\n  y = {t}[4,6] parameter(1)\n  ROOT r = {out}[4,6] {op}(x, y)"
    )
}

/// The binary ops of every integer and float type.
const ARITHMETIC_OPS: [&str; 7] = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "remainder",
    "maximum",
    "minimum",
];

/// Each of `unary_ops` and `binary_ops` on `T[4,6]` operands, with a `T[4,6]` result.
fn same_type_cases(t: &str, unary_ops: &[&str], binary_ops: &[&str]) -> Vec<String> {
    let unaries = unary_ops.iter().map(|op| unary(op, t, t));
    unaries
        .chain(binary_ops.iter().map(|op| binary(op, t, t)))
        .collect()
}

fn check_all(cases: impl IntoIterator<Item = String>) {
    let failures: Vec<String> = cases.into_iter().filter_map(|c| emits(&c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn float_ops() {
    let unary_ops = [
        "abs",
        "negate",
        "exponential",
        "exponential-minus-one",
        "log",
        "log-plus-one",
        "sqrt",
        "rsqrt",
        "cbrt",
        "tanh",
        "sine",
        "cosine",
        "tan",
        "atan",
        "erf",
        "floor",
        "ceil",
        "round-nearest-afz",
        "round-nearest-even",
        "sign",
        "logistic",
        "acos",
        "asin",
        "acosh",
        "asinh",
        "atanh",
        "cosh",
        "sinh",
    ];
    let binary_ops = [ARITHMETIC_OPS.as_slice(), &["power", "atan2"]].concat();
    let mut cases = Vec::new();
    for t in FLOATS {
        cases.extend(same_type_cases(t, &unary_ops, &binary_ops));
        cases.push(unary("is-finite", t, "pred"));
    }
    check_all(cases);
}

#[test]
fn integer_ops() {
    let unary_ops = ["negate", "not", "popcnt", "count-leading-zeros"];
    let bitwise_ops = [
        "and",
        "or",
        "xor",
        "shift-left",
        "shift-right-logical",
        "shift-right-arithmetic",
    ];
    let binary_ops = [ARITHMETIC_OPS.as_slice(), &bitwise_ops].concat();
    let mut cases = Vec::new();
    for t in INTS {
        cases.extend(same_type_cases(t, &unary_ops, &binary_ops));
        if t.starts_with('s') {
            cases.extend(same_type_cases(t, &["abs", "sign"], &[]));
        }
    }
    for op in ["and", "or", "xor", "add", "multiply", "maximum", "minimum"] {
        cases.push(binary(op, "pred", "pred"));
    }
    cases.push(unary("not", "pred", "pred"));
    check_all(cases);
}

#[test]
fn compare_select_clamp() {
    let mut cases = Vec::new();
    for t in ALL {
        for dir in ["EQ", "NE", "LT", "LE", "GT", "GE"] {
            cases.push(format!(
                "  x = {t}[4,6] parameter(0)\n  y = {t}[4,6] parameter(1)\n  ROOT r = pred[4,6] compare(x, y), direction={dir}"
            ));
        }
        cases.push(format!(
            "  c = pred[4,6] parameter(0)\n  x = {t}[4,6] parameter(1)\n  y = {t}[4,6] parameter(2)\n  ROOT r = {t}[4,6] select(c, x, y)"
        ));
        cases.push(format!(
            "  lo = {t}[] parameter(0)\n  x = {t}[4,6] parameter(1)\n  hi = {t}[] parameter(2)\n  ROOT r = {t}[4,6] clamp(lo, x, hi)"
        ));
    }
    for t in FLOATS {
        cases.push(format!(
            "  x = {t}[4,6] parameter(0)\n  y = {t}[4,6] parameter(1)\n  ROOT r = pred[4,6] compare(x, y), direction=LT, type=TOTALORDER"
        ));
    }
    check_all(cases);
}

#[test]
fn every_conversion() {
    let mut cases = Vec::new();
    for from in ALL {
        for to in ALL {
            cases.push(unary("convert", from, to));
        }
    }
    for (from, to) in [
        ("f32", "s32"),
        ("s32", "f32"),
        ("u16", "f16"),
        ("bf16", "s16"),
        ("f64", "u64"),
    ] {
        cases.push(unary("bitcast-convert", from, to));
    }
    check_all(cases);
}

#[test]
fn index_transforms_and_data_movement() {
    check_all([
        "  x = f32[6] parameter(0)\n  ROOT r = f32[4,6] broadcast(x), dimensions={1}".to_owned(),
        "  x = f32[6,4] parameter(0)\n  ROOT r = f32[4,6] transpose(x), dimensions={1,0}".into(),
        "  x = f32[24] parameter(0)\n  ROOT r = f32[4,6] reshape(x)".into(),
        "  x = f32[6,4]{0,1} parameter(0)\n  ROOT r = f32[4,6]{1,0} bitcast(x)".into(),
        "  x = f32[8,13] parameter(0)\n  ROOT r = f32[4,6] slice(x), slice={[0:8:2], [1:13:2]}".into(),
        "  x = f32[4,6] parameter(0)\n  ROOT r = f32[4,6] reverse(x), dimensions={0,1}".into(),
        "  x = f32[4,6] parameter(0)\n  ROOT r = f32[4,6] copy(x)".into(),
        "  x = f32[2,2] parameter(0)\n  v = f32[] parameter(1)\n  ROOT r = f32[4,6] pad(x, v), padding=1_0_1x0_3_1".into(),
        "  x = f32[1,6] parameter(0)\n  y = f32[3,6] parameter(1)\n  ROOT r = f32[4,6] concatenate(x, y), dimensions={0}".into(),
        "  x = s32[8,8] parameter(0)\n  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n  ROOT r = s32[4,6] dynamic-slice(x, i, j), dynamic_slice_sizes={4,6}".into(),
        "  x = s32[8,8] parameter(0)\n  i = u16[] parameter(1)\n  ROOT r = s32[4,6] dynamic-slice(x, i, i), dynamic_slice_sizes={4,6}".into(),
        "  ROOT r = f32[4,6] iota(), iota_dimension=1".into(),
        "  ROOT r = u8[4,6] iota(), iota_dimension=0".into(),
        "  c = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n  ROOT r = f32[2,3] negate(c)".into(),
        "  x = f32[30,20] parameter(0)\n  i = s32[10,2] parameter(1)\n  ROOT g = f32[10,4,8] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={4,8}".into(),
    ]);
}

#[test]
fn reductions_inside_loop_fusions() {
    // The reducer is a computation of its own, emitted as a scalar function.
    let text = "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\nf {\n  x = s32[4,6,5] parameter(0)\n  z = s32[] constant(0)\n  ROOT r = s32[4] reduce(x, z), dimensions={1,2}, to_apply=add\n}\n";
    let (source, module) = hlo::load("r.hlo", text.as_bytes()).unwrap();
    let fusion = emit_fusion(&module, fusions(&module)[0])
        .map_err(|d| d.render(&source))
        .unwrap();
    let printed = fusion.module.print();
    assert_eq!(printed.matches(scf::FOR).count(), 2, "{printed}");
    assert!(printed.contains("func.call @add"), "{printed}");
    codegen::mlir::verify(&fusion.module.print_generic(), true).unwrap();
}

#[test]
fn refused_combinations_name_the_op() {
    for (body, message) in [
        (
            binary("atan2", "c64", "c64"),
            "unsupported: atan2 on c64 in 'r'",
        ),
        (
            binary("atan2", "c128", "c128"),
            "unsupported: atan2 on c128 in 'r'",
        ),
        (unary("negate", "s1", "s1"), "unsupported: element type s1"),
    ] {
        let err = emits(&body).unwrap_err();
        assert!(err.contains(message), "{err}");
        assert!(err.contains("op.hlo:"), "{err}");
    }
}

/// A chain of elementwise ops and index transforms of any length is emitted without
/// recursing along it: 50,000 ops on a thread with 1 MiB of stack (a recursive emission
/// needs hundreds of bytes per op).
#[test]
fn long_operand_chains_need_no_stack() {
    let n = 50_000;
    let mut text = String::from("f {\n  v0 = f32[4,6] parameter(0)\n");
    for i in 1..n {
        let op = ["negate", "copy", "exponential", "reverse"][i % 4];
        let dims = if op == "reverse" {
            ", dimensions={1}"
        } else {
            ""
        };
        text.push_str(&format!("  v{i} = f32[4,6] {op}(v{}){dims}\n", i - 1));
    }
    text.push_str(&format!("  ROOT r = f32[4,6] add(v{}, v0)\n}}\n", n - 1));
    let emitted = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let (source, module) = hlo::load("chain.hlo", text.into_bytes()).unwrap();
            let fusion = emit_fusion(&module, fusions(&module)[0]).map_err(|d| d.render(&source));
            fusion.map(|f| f.module.print().matches(math::EXP).count())
        })
        .unwrap()
        .join()
        .expect("the emitter ran in 1 MiB of stack");
    assert_eq!(emitted, Ok(n / 4));
}
