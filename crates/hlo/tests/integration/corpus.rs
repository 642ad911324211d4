//! XLA's own emitter-test inputs (`../shared/xla-corpus`) as a conformance corpus: every
//! file must parse, and printing is a fixed point (print → parse → print is identical).
//! The corpus is read in place, never copied into the project.

use std::path::Path;

use hlo::{SourceFile, parse_module};

fn parse_file(path: &Path) -> Result<hlo::HloModule, String> {
    let text = std::fs::read_to_string(path).unwrap();
    let source = SourceFile::new(path.display().to_string(), text);
    parse_module(&source).map_err(|d| d.render(&source))
}

#[test]
fn corpus_has_all_89_files() {
    assert_eq!(testkit::corpus(&[]).len(), 89);
}

#[test]
fn every_corpus_file_parses_and_prints_to_a_fixed_point() {
    let mut failures = Vec::new();
    for path in testkit::corpus(&[]) {
        let module = match parse_file(&path) {
            Ok(m) => m,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        if let Err(d) = hlo::verify_module(&module) {
            let text = std::fs::read_to_string(&path).unwrap();
            failures.push(d.render(&SourceFile::new(path.display().to_string(), text)));
        }
        let printed = module.to_string();
        let source = SourceFile::new(format!("{} (printed)", path.display()), printed.clone());
        match parse_module(&source) {
            Ok(reparsed) => {
                let reprinted = reparsed.to_string();
                if reprinted != printed {
                    failures.push(format!("{}: print is not a fixed point", path.display()));
                }
            }
            Err(d) => failures.push(d.render(&source)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
