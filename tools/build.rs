//! Links the command-line tools as position-dependent executables (`-no-pie`).
//!
//! With LLVM and MLIR linked in statically, a position-independent `hlo-emit` carries about
//! 300,000 dynamic relocations that the loader applies at every start, before `main`; at a
//! fixed address there are none left to apply. Start-up is a large share of compiling one
//! small fusion (GELU to PTX takes tens of milliseconds), so this is measured in
//! bench/RESULTS.md. The code itself stays position-independent, as rustc emits it.

fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
