//! What the area modules share: the cases of a lit test, and MLIR's verdict on what a pass
//! makes of them.

use passes::Pass;

/// The cases of the lit test `testdata/lit/passes/<file>`, split at `// -----`.
pub fn lit_cases(file: &str) -> Vec<String> {
    let path = format!(
        "{}/../testdata/lit/passes/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    text.split("// -----").map(str::to_owned).collect()
}

/// Asserts that `pass` turns each case of the lit test `file` into IR that our verifier and
/// real MLIR (generic form) accept.
pub fn assert_lit_cases_agree_with_mlir(file: &str, pass: &dyn Pass) {
    for case in lit_cases(file) {
        let mut m = ir::parse_module(&case).unwrap();
        pass.run(&mut m).unwrap();
        m.verify().unwrap();
        codegen::mlir::verify(&m.print_generic(), false)
            .unwrap_or_else(|e| panic!("MLIR rejects\n{}\n{e}", m.print()));
    }
}
