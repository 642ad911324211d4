//! Test inputs shared by the IR tests.

/// Chunk `index` of `testdata/ir/ops.mlir` (chunks are separated by `// -----` lines, as
/// `hlo-opt --split-input-file` reads them), without its comment lines: 0 is the standard
/// dialects, 1 vector/gpu/llvm/nvvm, 2 xla_gpu. Each chunk is a module printed in canonical
/// form, so tests can compare printed text with it byte for byte.
pub fn ops_chunk(index: usize) -> String {
    const ALL: &str = include_str!("../../../../../testdata/ir/ops.mlir");
    let chunk = ALL
        .split("\n// -----\n")
        .nth(index)
        .unwrap_or_else(|| panic!("testdata/ir/ops.mlir has no chunk {index}"));
    chunk
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect()
}
