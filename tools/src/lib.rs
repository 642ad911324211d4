//! What the binaries share beyond the driver crate (which holds everything they run):
//! reading the command line and the input, writing the output, and the allocator.

pub mod fuzz;
pub mod shrink;

/// `eprintln!` that never panics: standard error may be a closed pipe, and a message that
/// cannot be written must not turn a located error into a crash (the exit status still
/// says what happened).
#[macro_export]
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics, as [`report!`].
#[macro_export]
macro_rules! report_text {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

use std::process::ExitCode;

/// Parses the command line with `command`, as clap's `get_matches` does, except that
/// `--help` and `--version` whose text cannot be written (standard output on a full
/// device, a closed pipe) end in status 1 with an error instead of clap's silent 0.
/// Usage errors keep clap's message and status 2.
pub fn parse_command_line(command: clap::Command) -> Result<clap::ArgMatches, ExitCode> {
    use clap::error::ErrorKind;
    match command.try_get_matches() {
        Ok(matches) => Ok(matches),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            // clap writes help to standard output; `print` reports a failed write, which
            // `exit` ignores.
            let written = e
                .print()
                .and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
            Err(match written {
                Ok(()) => ExitCode::SUCCESS,
                Err(io) => {
                    report!("error: cannot write standard output: {io}");
                    ExitCode::FAILURE
                }
            })
        }
        Err(e) => e.exit(),
    }
}

/// Writes `text` to `path`, or to standard output; the error names what could not be
/// written.
pub fn write_output(path: Option<&std::path::PathBuf>, text: &str) -> Result<(), String> {
    match path {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("error: cannot write '{}': {e}", path.display())),
        None => std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes())
            .map_err(|e| format!("error: cannot write standard output: {e}")),
    }
}

/// [`parse_command_line`] for a binary whose whole command line is the derived `C`.
pub fn parse_cli<C: clap::Parser>() -> Result<C, ExitCode> {
    let matches = parse_command_line(C::command())?;
    C::from_arg_matches(&matches).map_err(|e| e.exit())
}

/// mimalloc instead of glibc's malloc, for every binary and test that links this library:
/// the compiler and the interpreter make and free many small objects, and glibc's free-list
/// consolidation was a fifth of the emitter's time on long chains. Measured (release, this
/// machine): 16,000-op chains 25-35% faster whole process (`add` 2.15 s -> 1.41 s, `select`
/// 0.65 s -> 0.48 s), peak memory 10-20% higher.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The input's bytes, from the file `path` or from standard input for `-`, and the name
/// diagnostics give it (`<stdin>` for standard input).
pub fn read_input(path: &std::path::Path) -> Result<(String, Vec<u8>), String> {
    use std::io::Read;
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("error: cannot read standard input: {e}"))?;
        return Ok(("<stdin>".to_string(), bytes));
    }
    let bytes =
        std::fs::read(path).map_err(|e| format!("error: cannot read '{}': {e}", path.display()))?;
    Ok((path.display().to_string(), bytes))
}

/// [`read_input`] as text: input that is not UTF-8 is an error naming the first bad byte.
pub fn read_input_text(path: &std::path::Path) -> Result<(String, String), String> {
    let (name, bytes) = read_input(path)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{name}: error: the input is not UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok((name, text))
}
