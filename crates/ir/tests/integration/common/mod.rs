//! Test inputs and checks shared by the IR tests.

use ir::{Module, Registry, parse_module_with};

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

/// Parses `text` (named `name`) with the standard dialects; a parse error fails the test with
/// the diagnostic rendered against `text`.
pub fn parse(name: &str, text: &str) -> Module {
    parse_module_with(text, name, Registry::standard())
        .unwrap_or_else(|e| panic!("{}", e.render(text)))
}

/// Parses and verifies `text` (named `name`); a diagnostic fails the test, rendered.
pub fn verified(name: &str, text: &str) -> Module {
    let m = parse(name, text);
    m.verify().unwrap_or_else(|e| panic!("{}", e.render(text)));
    m
}

/// `text` (a data file, named `name`) verifies, prints as itself in custom form (the data
/// files are written in our canonical form), and what it prints reparses to the same text.
pub fn assert_custom_fixed_point(name: &str, text: &str) {
    let printed = verified(name, text).print();
    assert_eq!(
        printed, text,
        "{name}: the data files are written in our canonical form"
    );
    assert_eq!(verified("printed", &printed).print(), printed, "{name}");
}

/// The `generic` form of `custom` (named `name`) reparses, verifies and prints as itself in
/// generic form and as `custom` in custom form.
pub fn assert_generic_fixed_point(name: &str, generic: &str, custom: &str) {
    let reparsed = verified(name, generic);
    assert_eq!(reparsed.print_generic(), generic, "{name}");
    assert_eq!(reparsed.print(), custom, "{name}: generic → custom");
}

/// Parses and verifies `src` (named `t.mlir`); the first diagnostic, rendered, or `ok`.
/// Whatever parses also prints (invalid ops in generic form) and reparses in generic form.
pub fn check(src: &str) -> String {
    match parse_module_with(src, "t.mlir", Registry::standard()) {
        Err(e) => e.to_string(),
        Ok(m) => {
            let _ = m.print();
            let generic = m.print_generic();
            assert!(
                parse_module_with(&generic, "g.mlir", Registry::standard()).is_ok(),
                "{generic}"
            );
            m.verify().map_or_else(|e| e.to_string(), |()| "ok".into())
        }
    }
}

/// Checks each `(what, text, expected)` case with [`check`] and fails the test with every
/// case whose diagnostic differs, named.
pub fn assert_diagnostics<'a>(cases: impl IntoIterator<Item = (&'a str, String, &'a str)>) {
    let failures: Vec<String> = cases
        .into_iter()
        .filter_map(|(what, text, expected)| diagnostic_mismatch(what, &text, expected))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The failure of case `what` when [`check`] of `src` is not `expected`, naming both.
pub fn diagnostic_mismatch(what: &str, src: &str, expected: &str) -> Option<String> {
    let got = check(src);
    (got != expected).then(|| format!("{what}:\n  expected: {expected}\n       got: {got}"))
}

/// Feeds [`check`] every prefix of each text (cut every `cut_step` bytes) and random mutations
/// of it (`IR_FUZZ_ITERS` per text, `default_iters` unless set): each must give a diagnostic
/// or a module, never a panic. A mutation replaces, removes or inserts junk bytes, or
/// duplicates a slice (repeated names, unbalanced regions), one to four times.
pub fn assert_never_panics(texts: &[&str], cut_step: usize, default_iters: usize) {
    let iters: usize = std::env::var("IR_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_iters);
    // xorshift64: reproducible without a dependency.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let junk = b"%^#!@(){}[]<>,:=-x0.|\"\\ \nabcf32?*";
    for text in texts {
        for cut in (0..text.len()).step_by(cut_step) {
            if text.is_char_boundary(cut) {
                let _ = check(&text[..cut]);
            }
        }
        let bytes = text.as_bytes();
        for _ in 0..iters {
            let mut mutated = bytes.to_vec();
            for _ in 0..1 + next() % 4 {
                let at = (next() as usize) % mutated.len();
                match next() % 4 {
                    0 => mutated[at] = junk[(next() as usize) % junk.len()],
                    1 => {
                        mutated.remove(at);
                    }
                    2 => mutated.insert(at, junk[(next() as usize) % junk.len()]),
                    _ => {
                        let len = (next() as usize % 40).min(mutated.len() - at);
                        let piece: Vec<u8> = mutated[at..at + len].to_vec();
                        let to = (next() as usize) % mutated.len();
                        mutated.splice(to..to, piece);
                    }
                }
            }
            if let Ok(s) = String::from_utf8(mutated) {
                let _ = check(&s);
            }
        }
    }
}
