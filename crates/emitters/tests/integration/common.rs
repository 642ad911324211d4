//! What the area modules share: emitting the fusions of a corpus file, and real MLIR's
//! verifier on what an emitter wrote.

use std::path::Path;

use emitters::{EmittedFusion, emit_fusion, fusions};

/// The name of the HLO file at `path` and every fusion of it, emitted; a refusal panics
/// with its located error.
pub fn emit_file(path: &Path) -> (String, Vec<EmittedFusion>) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).unwrap();
    let (source, module) = hlo::load(&name, text.as_bytes()).unwrap();
    let emitted = fusions(&module)
        .into_iter()
        .map(|id| emit_fusion(&module, id).unwrap_or_else(|d| panic!("{}", d.render(&source))))
        .collect();
    (name, emitted)
}

/// Asserts that real MLIR's verifier accepts `fusion`'s module in generic form.
pub fn assert_mlir_verifies(fusion: &EmittedFusion, context: &str) {
    let generic = fusion.module.print_generic();
    codegen::mlir::verify(&generic, true)
        .unwrap_or_else(|e| panic!("{context}: MLIR rejects it: {e}\n{generic}"));
}
