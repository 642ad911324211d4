//! The readers as the tools use them, each answering a [`Verdict`] for one input: shared by
//! the bounded test (`tests/readers.rs`) and the libFuzzer targets (`fuzz/`).

use crate::{Verdict, check_located};

/// `hlo::load`, the front door of the tools: loads, or fails with a located error.
pub fn load_hlo(input: &[u8]) -> Verdict {
    match hlo::load("f.hlo", input) {
        Ok(_) => Ok(true),
        Err(rendered) => check_located("f.hlo", input, &rendered).map(|()| false),
    }
}

/// Bytes that matter to the HLO grammar.
pub const HLO_GRAMMAR: &[u8] = b"{}[]()=,:%*-_x.0123456789 \n\"/TELS?<>fsuepredROOTENTRY";

/// The IR reader as `hlo-opt` uses it: parse, then verify; both errors are located.
pub fn load_ir(input: &[u8]) -> Verdict {
    let Ok(text) = std::str::from_utf8(input) else {
        return Ok(false); // the tools refuse invalid UTF-8 before parsing
    };
    let module = match ir::parse_module_with(text, "f.mlir", ir::Registry::standard()) {
        Ok(m) => m,
        Err(d) => return check_located("f.mlir", input, &d.render(text)).map(|()| false),
    };
    match module.verify() {
        Ok(()) => Ok(true),
        Err(d) => check_located("f.mlir", input, &d.render(text)).map(|()| false),
    }
}

/// The indexing-map reader: parses, or fails at a column inside the input; a parsed map
/// prints.
pub fn parse_map(input: &[u8]) -> Verdict {
    let Ok(text) = std::str::from_utf8(input) else {
        return Ok(false);
    };
    match indexing::IndexingMap::parse(text) {
        Ok(map) => {
            let _ = map.to_string();
            Ok(true)
        }
        Err(e) if e.offset <= text.len() && e.column <= text.chars().count() + 1 => Ok(false),
        Err(e) => Err(format!("error outside the input: {e}")),
    }
}

/// A layout in a module: `f32[8,128]<layout>` as a parameter, loaded and verified.
pub fn load_layout(layout: &[u8]) -> Verdict {
    let mut module = b"HloModule m\nENTRY e {\n  ROOT p = f32[8,128]".to_vec();
    module.extend_from_slice(layout);
    module.extend_from_slice(b" parameter(0)\n}\n");
    load_hlo(&module)
}
