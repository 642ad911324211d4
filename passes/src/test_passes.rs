//! Passes that go wrong on purpose, as MLIR's `test-pass-failure` and `test-pass-crash`:
//! they stand for a broken pass wherever a tool must be seen handling one (a `--check`
//! that blames a pass by name, a crash reproducer written and replayed). No pipeline of
//! the compiler lists them; a test names them in `--pass-pipeline`.

use crate::pass::{Pass, op_error};
use ir::dialects::arith;
use ir::{Diagnostic, Module};

/// Fails with an error at the module.
#[derive(Clone, Copy, Debug, Default)]
pub struct TestPassFailure;

impl Pass for TestPassFailure {
    crate::pass_names!(
        "test-pass-failure",
        "Test only: fail with an error, as a broken pass would"
    );

    fn run(&self, module: &mut Module) -> Result<(), Diagnostic> {
        Err(op_error(
            module,
            module.top(),
            "failed on purpose (test-pass-failure)",
        ))
    }
}

/// Panics.
#[derive(Clone, Copy, Debug, Default)]
pub struct TestPassCrash;

impl Pass for TestPassCrash {
    crate::pass_names!(
        "test-pass-crash",
        "Test only: panic, as a pass with an internal error would"
    );

    fn run(&self, _module: &mut Module) -> Result<(), Diagnostic> {
        panic!("test-pass-crash: a panic on purpose");
    }
}

/// Makes the first `arith.addf` add its first operand to itself: valid IR that computes
/// something else.
#[derive(Clone, Copy, Debug, Default)]
pub struct TestPassWrongResult;

impl Pass for TestPassWrongResult {
    crate::pass_names!(
        "test-pass-wrong-result",
        "Test only: make the first arith.addf add its first operand to itself (valid IR, a wrong result)"
    );

    fn run(&self, module: &mut Module) -> Result<(), Diagnostic> {
        if let Some(&add) = module.ops_named(arith::ADDF).first() {
            let first = module.operand(add, 0);
            module.set_operand(add, 1, first);
        }
        Ok(())
    }
}
