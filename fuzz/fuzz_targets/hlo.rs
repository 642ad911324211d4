//! libFuzzer target: `fuzzing::readers::load_hlo` must not panic, and reject only with a
//! located error.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    if let Err(problem) = fuzzing::readers::load_hlo(input) {
        panic!("{problem}");
    }
});
