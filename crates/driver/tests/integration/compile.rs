//! The driver as a library: HLO text in, one PTX module and its kernels out, with no
//! command line in between (`driver::pipeline::compile_text`).

use std::path::Path;

use driver::pipeline::{Options, Stage, compile_text};
use emitters::EmitterKind;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_fusion_compiles_to_ptx() {
    let compiled = compile_text(
        "gelu.hlo",
        &read("testdata/models/gelu.hlo"),
        &Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(compiled.kernels.len(), 1);
    assert_eq!(compiled.kernels[0].emitter, EmitterKind::Loop);
    assert!(compiled.output.contains(".entry "), "{}", compiled.output);
}

#[test]
fn an_unfused_program_is_fused_then_compiled_whole() {
    let options = Options {
        stop_at: Stage::XlaGpu,
        ..Options::default()
    };
    let text = read("testdata/jax/layer_norm.hlo");
    let compiled =
        compile_text("layer_norm.hlo", &text, &options).unwrap_or_else(|e| panic!("{e}"));
    // The mean, the variance and the normalization: one row-normalization fusion.
    let emitters: Vec<EmitterKind> = compiled.kernels.iter().map(|k| k.emitter).collect();
    assert_eq!(emitters, [EmitterKind::RowNormalization]);
}

#[test]
fn bad_input_is_a_located_error() {
    let error = compile_text(
        "bad.hlo",
        "HloModule m\nENTRY e {\n  x = f32[2] frob()\n}\n",
        &Options::default(),
    )
    .err()
    .expect("an error");
    assert!(error.starts_with("bad.hlo:3:"), "{error}");
}
