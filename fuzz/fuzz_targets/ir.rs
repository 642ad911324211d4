//! libFuzzer target: `fuzzing::readers::load_ir` must not panic, and reject only with a
//! located error.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    if let Err(problem) = fuzzing::readers::load_ir(input) {
        panic!("{problem}");
    }
});
