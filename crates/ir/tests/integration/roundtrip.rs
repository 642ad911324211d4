//! Print → parse → print is the identity, in custom and generic form, and what we print is
//! valid MLIR 22 (parsed and verified by upstream MLIR through melior).

use std::sync::LazyLock;

use crate::common::{self, parse};

/// The standard-dialect chunk of `testdata/ir/ops.mlir`.
static STANDARD_OPS: LazyLock<String> = LazyLock::new(|| common::ops_chunk(0));

/// Modules in standard dialects only: (name, text).
static FILES: LazyLock<[(&str, &str); 2]> = LazyLock::new(|| {
    [
        ("gelu.mlir", include_str!("data/gelu.mlir")),
        ("ops.mlir", STANDARD_OPS.as_str()),
    ]
});

#[test]
fn custom_form_is_a_fixed_point() {
    for &(name, text) in FILES.iter() {
        common::assert_custom_fixed_point(name, text);
    }
}

#[test]
fn generic_form_is_a_fixed_point_and_agrees_with_custom() {
    for &(name, text) in FILES.iter() {
        let m = parse(name, text);
        let generic = m.print_generic();
        assert!(generic.contains("\"func.func\"()"), "{generic}");
        common::assert_generic_fixed_point(name, &generic, text);
    }
}

/// The seed's `@gelu` (the emitters document) prints exactly as the seed shows it.
#[test]
fn seed_gelu_prints_as_in_the_seed() {
    let seed = "\
func.func private @gelu(%arg0: tensor<6x512x4096xbf16>, %i: index, %j: index, %k: index) -> bf16 {
  %cst = arith.constant 5.000000e-01 : bf16
  %cst_0 = arith.constant 1.000000e+00 : bf16
  %cst_1 = arith.constant 7.968750e-01 : bf16
  %cst_2 = arith.constant 4.467770e-02 : bf16
  %extracted = tensor.extract %arg0[%i, %j, %k] : tensor<6x512x4096xbf16>
  %0 = arith.mulf %extracted, %extracted : bf16
  %1 = arith.mulf %0, %extracted : bf16
  %2 = arith.mulf %1, %cst_2 : bf16
  %3 = arith.addf %extracted, %2 : bf16
  %4 = arith.mulf %3, %cst_1 : bf16
  %5 = math.tanh %4 : bf16
  %6 = arith.addf %5, %cst_0 : bf16
  %7 = arith.mulf %6, %cst : bf16
  %8 = arith.mulf %extracted, %7 : bf16
  return %8 : bf16
}
";
    let m = parse("seed", seed);
    m.verify().unwrap();
    let expected: String = std::iter::once("module {\n".to_owned())
        .chain(seed.lines().map(|l| format!("  {l}\n")))
        .chain(std::iter::once("}\n".to_owned()))
        .collect();
    assert_eq!(m.print(), expected);

    // Without name hints, MLIR's own default names come out (%cst, %extracted, %0, ...).
    let stripped = seed
        .replace("%i", "%arg1")
        .replace("%j", "%arg2")
        .replace("%k", "%arg3");
    let mut numbered = stripped.clone();
    for (i, hint) in ["%cst_2", "%cst_1", "%cst_0", "%cst", "%extracted"]
        .iter()
        .enumerate()
    {
        numbered = numbered.replace(hint, &format!("%{}", 100 + i));
    }
    let m = parse("numbered", &numbered);
    assert!(
        m.print()
            .contains("%cst_2 = arith.constant 4.467770e-02 : bf16")
    );
    assert!(
        m.print()
            .contains("%extracted = tensor.extract %arg0[%arg1, %arg2, %arg3]")
    );
}

#[test]
fn mlir_parses_and_verifies_what_we_print() {
    for &(name, text) in FILES.iter() {
        let m = parse(name, text);
        for printed in [m.print(), m.print_generic()] {
            codegen::mlir::verify(&printed, false)
                .unwrap_or_else(|e| panic!("{name}: {e}\n{printed}"));
        }
    }
}

#[test]
fn text_mlir_prints_parses_into_the_same_module() {
    // What mlir-opt prints for ops.mlir (its own SSA names), parsed by us, prints as ours.
    let m = parse("ops.mlir", &STANDARD_OPS);
    let ours = m.print();
    let theirs =
        codegen::mlir::run_pipeline(&ours, "builtin.module()").unwrap_or_else(|e| panic!("{e}"));
    let reparsed = parse("mlir-output", &theirs);
    reparsed.verify().unwrap();
    let a = ours.lines().filter(|l| !l.trim().is_empty()).count();
    let b = reparsed
        .print()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    assert_eq!(a, b, "{theirs}");
}

/// For a flat function written with MLIR's own default names, MLIR prints exactly what we
/// print: same custom syntax, float formatting, type elision, hex dense data.
#[test]
fn mlir_prints_exactly_what_we_print() {
    let dense: Vec<String> = (0..120).map(|i| format!("{}.5", i)).collect();
    let text = format!(
        "\
func.func @f(%arg0: f32, %arg1: bf16, %arg2: i32, %arg3: index) -> (f32, tensor<120xf32>) {{
  %cst = arith.constant 0.1 : f32
  %cst_0 = arith.constant 3.14159 : bf16
  %cst_1 = arith.constant 1.234567 : f32
  %cst_2 = arith.constant 0x7FC00000 : f32
  %cst_3 = arith.constant 123456789.0 : f64
  %cst_4 = arith.constant dense<[{}]> : tensor<120xf32>
  %cst_5 = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
  %c-1_i8 = arith.constant -1 : i8
  %c42 = arith.constant 42 : index
  %true = arith.constant true
  %0 = arith.addf %arg0, %cst fastmath<fast> : f32
  %1 = arith.cmpf ogt, %0, %cst_1 : f32
  %2 = arith.select %1, %0, %cst_2 : f32
  %3 = arith.extf %arg1 : bf16 to f32
  %4 = math.powf %2, %3 : f32
  %5 = arith.index_cast %arg3 : index to i32
  %6 = arith.muli %5, %arg2 overflow<nsw> : i32
  %7 = arith.sitofp %6 : i32 to f32
  %8 = arith.addf %4, %7 : f32
  return %8, %cst_4 : f32, tensor<120xf32>
}}
",
        dense.join(", ")
    );
    let ours = parse("flat", &text).print();
    assert!(
        ours.contains("%cst_4 = arith.constant dense<\"0x0000003F0000C03F"),
        "{ours}"
    );
    let theirs =
        codegen::mlir::run_pipeline(&ours, "builtin.module()").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(theirs.trim_end(), ours.trim_end());
    // And MLIR's text parses back into the same module.
    assert_eq!(parse("theirs", &theirs).print(), ours);
}

/// Every module under `testdata/ir` (each `// -----` chunk; `invalid.mlir` excepted) is
/// accepted by MLIR 22: in both forms when it uses only upstream dialects, in generic form
/// with unregistered dialects allowed when it has xla_gpu ops.
#[test]
fn mlir_accepts_every_module_in_testdata_ir() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/ir");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".mlir") || name == "invalid.mlir" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for chunk in text.split("\n// -----\n") {
            let m = parse(&name, chunk);
            m.verify().unwrap_or_else(|e| panic!("{}", e.render(chunk)));
            let has_xla_gpu = m.print().contains("xla_gpu.");
            let mut forms = vec![m.print_generic()];
            if !has_xla_gpu {
                forms.push(m.print());
            }
            for printed in forms {
                codegen::mlir::verify(&printed, has_xla_gpu)
                    .unwrap_or_else(|e| panic!("{name}: {e}\n{printed}"));
                checked += 1;
            }
        }
    }
    assert!(checked >= 5, "only {checked} modules checked");
}
