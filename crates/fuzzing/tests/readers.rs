//! Every text reader, fuzzed in process (issue 17): 100,000 seeded mutations each of HLO
//! modules, IR modules, indexing maps and layouts, with no panic, and every rejection a
//! located error. Seeds are the project's `testdata/` and XLA's corpus (read in place).

use std::path::PathBuf;

use fuzzing::readers::{HLO_GRAMMAR, load_hlo, load_ir, load_layout, parse_map};
use fuzzing::{Verdict, fuzz};

/// Inputs per reader.
const INPUTS: usize = 100_000;
const SEED: u64 = 0x5eed_c0de;

/// Seeds: the files' contents, leaving out files over 20 KB (they slow every input down and
/// add no grammar the small ones lack).
fn seeds(paths: &[PathBuf]) -> Vec<Vec<u8>> {
    paths
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .filter(|bytes| bytes.len() <= 20_000)
        .collect()
}

/// Fuzzes `read` with mutations of `seeds` (at least `min_seeds` of them) drawn from
/// `grammar`; fails with the first failures, and when almost nothing was rejected (the
/// mutations would not be probing the reader).
fn fuzz_clean(
    reader: &str,
    seeds: &[Vec<u8>],
    min_seeds: usize,
    grammar: &[u8],
    read: impl Fn(&[u8]) -> Verdict,
) {
    assert!(
        seeds.len() >= min_seeds,
        "{reader}: only {} seeds",
        seeds.len()
    );
    let outcome = fuzz(seeds, INPUTS, grammar, SEED, read);
    assert!(
        outcome.failures.is_empty(),
        "{reader}: {} of {} inputs failed; the first:\n{}",
        outcome.failed,
        outcome.inputs,
        outcome.failures.join("\n\n")
    );
    assert_eq!(outcome.inputs, INPUTS, "{reader}");
    assert!(
        outcome.rejected * 4 > outcome.inputs,
        "{reader}: only {} of {} inputs rejected",
        outcome.rejected,
        outcome.inputs
    );
    eprintln!(
        "{reader}: {} inputs, {} rejected with located errors, 0 panics",
        outcome.inputs, outcome.rejected
    );
}

#[test]
fn hlo_reader() {
    let dirs = [testkit::testdata(""), testkit::corpus_dir()];
    let seeds = seeds(&testkit::files_ending(&dirs, &[".hlo"]));
    fuzz_clean("HLO", &seeds, 90, HLO_GRAMMAR, load_hlo);
}

#[test]
fn ir_reader() {
    let seeds = seeds(&testkit::files_ending(&[testkit::testdata("")], &[".mlir"]));
    let grammar = b"{}[]()<>=,:%^#!@\"*-_x.0123456789 \nfunc.returnscf.yieldarith.constantindextensorvectori32f32";
    fuzz_clean("IR", &seeds, 20, grammar, load_ir);
}

/// Every text of the files `paths` that stands between `open` and the next `close`.
fn enclosed(paths: &[PathBuf], open: &str, close: &str) -> Vec<String> {
    let mut found = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).unwrap();
        for piece in text.split(open).skip(1) {
            if let Some((inside, _)) = piece.split_once(close) {
                found.push(inside.to_owned());
            }
        }
    }
    found
}

/// Every `#xla_gpu.indexing_map<"...">` in the snapshots and lit tests: maps as printed.
fn printed_maps() -> Vec<Vec<u8>> {
    let files = testkit::files_ending(&[testkit::testdata("")], &[".snap", ".mlir"]);
    let mut maps: Vec<Vec<u8>> = enclosed(&files, "indexing_map<\"", "\">")
        .into_iter()
        .map(String::into_bytes)
        .collect();
    maps.sort();
    maps.dedup();
    maps
}

#[test]
fn indexing_map_reader() {
    let grammar =
        b"()[]{}->,:+-* 0123456789d0s1th_xbl_yinmodfloordivceildivdomainis_simplifiedtrue";
    fuzz_clean("indexing map", &printed_maps(), 20, grammar, parse_map);
}

/// Every layout written in the corpus (`{1,0:T(8,128)(2,1)}` and the like) after a shape.
fn written_layouts() -> Vec<Vec<u8>> {
    let dirs = [testkit::testdata(""), testkit::corpus_dir()];
    let files = testkit::files_ending(&dirs, &[".hlo"]);
    let mut layouts = vec![b"{1,0}".to_vec(), b"{0,1:T(2,2)(1,2)*}".to_vec()];
    layouts.extend(
        enclosed(&files, "]{", "}")
            .into_iter()
            .map(|layout| format!("{{{layout}}}").into_bytes()),
    );
    layouts.sort();
    layouts.dedup();
    layouts
}

#[test]
fn layout_reader() {
    let grammar = b"{}(),:*TLSE0123456789 ";
    fuzz_clean("layout", &written_layouts(), 5, grammar, load_layout);
}

#[test]
fn every_truncation_of_a_small_module_is_located() {
    let text = "HloModule m, entry_computation_layout={(f32[3,5]{1,0:T(2,2)})->f32[3]}\n\
                add { x = f32[] parameter(0) y = f32[] parameter(1) ROOT s = f32[] add(x, y) }\n\
                ENTRY e {\n  p = f32[3,5]{1,0:T(2,2)} parameter(0)\n  c = f32[] constant(-inf)\n\
                  ROOT r = f32[3] reduce(p, c), dimensions={1}, to_apply=add, metadata={op_name=\"r\"}\n}\n";
    assert_eq!(load_hlo(text.as_bytes()), Ok(true));
    for end in 0..text.len() - 2 {
        load_hlo(&text.as_bytes()[..end]).unwrap();
    }
}

#[test]
fn hostile_nesting_is_an_error_not_a_crash() {
    for input in [
        format!("c {{ ROOT x = {}f32[]", "(".repeat(100_000)),
        format!(
            "c {{ ROOT x = f32[{}] constant({})",
            "1,".repeat(5_000) + "1",
            "{".repeat(5_000)
        ),
        format!(
            "c {{ ROOT x = f32[] parameter(0), sharding={}",
            "{".repeat(100_000)
        ),
    ] {
        assert_eq!(load_hlo(input.as_bytes()), Ok(false));
    }
}
