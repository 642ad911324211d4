//! The pass manager: runs passes in the order they were added, verifies the module after
//! each one (so a broken invariant is blamed on the pass that broke it), and prints the IR
//! after passes the way `mlir-opt --mlir-print-ir-after-all` does.

use crate::pass::Pass;
use crate::timing::Timings;
use ir::{Diagnostic, Loc, Module, PrintOptions};
use std::fmt;
use std::io;
use std::ops::ControlFlow;

/// When to print the module after a pass (MLIR's IR printing instrumentation).
#[derive(Clone, Debug, Default)]
pub struct DumpOptions {
    /// After every pass (`--mlir-print-ir-after-all`, `--dump-after-each-pass`).
    pub after_all: bool,
    /// After the passes with these names (`--print-ir-after=<pass>`).
    pub after: Vec<String>,
    /// Only when the pass changed the printed IR (`--print-ir-after-change`). On its own it
    /// means "after every pass that changed something".
    pub only_on_change: bool,
    /// How to print (custom or generic form).
    pub print: PrintOptions,
}

impl DumpOptions {
    /// Whether the options ask for a dump after `pass` (before the change test).
    fn wants(&self, pass: &str) -> bool {
        self.after_all
            || self.after.iter().any(|p| p == pass)
            || (self.only_on_change && self.after.is_empty())
    }
}

/// The dump header MLIR prints before the module (`Canonicalizer (canonicalize)`).
pub fn dump_header(pass: &dyn Pass) -> String {
    format!(
        "// -----// IR Dump After {} ({}) //----- //",
        pass.display_name(),
        pass.name()
    )
}

/// Why a pipeline stopped.
#[derive(Debug)]
pub enum PassError {
    /// The pass reported an error; the diagnostic ends with a note naming the pass.
    Failed {
        pass: &'static str,
        diagnostic: Diagnostic,
    },
    /// The verifier rejected the module the pass produced; the diagnostic is the verifier's,
    /// with a note naming the pass.
    InvalidIr {
        pass: &'static str,
        diagnostic: Diagnostic,
    },
    /// Writing an IR dump failed.
    Dump(io::Error),
}

impl PassError {
    /// The pass that failed or left invalid IR.
    pub fn pass(&self) -> Option<&'static str> {
        match self {
            PassError::Failed { pass, .. } | PassError::InvalidIr { pass, .. } => Some(pass),
            PassError::Dump(_) => None,
        }
    }

    /// The located error, if there is one (to render with its source line).
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            PassError::Failed { diagnostic, .. } | PassError::InvalidIr { diagnostic, .. } => {
                Some(diagnostic)
            }
            PassError::Dump(_) => None,
        }
    }
}

impl fmt::Display for PassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.diagnostic() {
            Some(d) => write!(f, "{d}"),
            None => write!(f, "error: cannot write the IR dump: {self:?}"),
        }
    }
}

impl std::error::Error for PassError {}

/// What runs around each pass besides the pass itself (MLIR's `PassInstrumentation`): the
/// IR printing of `--dump-after-each-pass` ([`IrPrinting`]), `--check`'s collection of
/// every stage's module. (Timing and verification are the manager's own.)
pub trait Instrumentation {
    /// Before `pass` runs on `module`.
    fn before_pass(&mut self, _pass: &dyn Pass, _module: &Module) {}

    /// After `pass` ran and `module` verified; `Break` ends the pipeline there, without an
    /// error (a checker that has seen a failure needs no later stage).
    fn after_pass(
        &mut self,
        pass: &dyn Pass,
        module: &Module,
    ) -> Result<ControlFlow<()>, PassError>;
}

/// The IR printing instrumentation: the module after the passes `options` names, under
/// MLIR's dump header, to `out`.
pub struct IrPrinting<'w> {
    pub options: DumpOptions,
    pub out: &'w mut dyn io::Write,
    /// The module before the current pass, when only changes are printed.
    before: Option<String>,
}

impl<'w> IrPrinting<'w> {
    pub fn new(options: DumpOptions, out: &'w mut dyn io::Write) -> IrPrinting<'w> {
        IrPrinting {
            options,
            out,
            before: None,
        }
    }
}

impl Instrumentation for IrPrinting<'_> {
    fn before_pass(&mut self, pass: &dyn Pass, module: &Module) {
        let wanted = self.options.wants(pass.name()) && self.options.only_on_change;
        self.before = wanted.then(|| module.print_with(self.options.print));
    }

    fn after_pass(
        &mut self,
        pass: &dyn Pass,
        module: &Module,
    ) -> Result<ControlFlow<()>, PassError> {
        if self.options.wants(pass.name()) {
            let after = module.print_with(self.options.print);
            if self.before.take().is_none_or(|b| b != after) {
                write!(self.out, "{}\n{after}\n\n", dump_header(pass)).map_err(PassError::Dump)?;
            }
        }
        Ok(ControlFlow::Continue(()))
    }
}

/// An ordered list of passes plus the instrumentation around them.
#[derive(Default)]
pub struct PassManager {
    passes: Vec<Box<dyn Pass>>,
    dump: DumpOptions,
}

impl PassManager {
    pub fn new() -> PassManager {
        PassManager::default()
    }

    /// Appends a pass to the pipeline.
    pub fn add(&mut self, pass: Box<dyn Pass>) -> &mut PassManager {
        self.passes.push(pass);
        self
    }

    pub fn set_dump_options(&mut self, dump: DumpOptions) -> &mut PassManager {
        self.dump = dump;
        self
    }

    /// Runs the pipeline on `module`, which must verify. IR dumps (as the dump options say)
    /// go to `dumps`; the time of each pass (by display name) and of verification
    /// (`Verifier`) is added to `timings`.
    pub fn run(
        &self,
        module: &mut Module,
        dumps: &mut dyn io::Write,
        timings: &mut Timings,
    ) -> Result<(), PassError> {
        let mut printing = IrPrinting::new(self.dump.clone(), dumps);
        self.run_instrumented(module, timings, &mut printing)
    }

    /// Runs the pipeline with `instrumentation` around every pass (the manager's own dump
    /// options are not used: the instrumentation decides what it prints).
    pub fn run_instrumented(
        &self,
        module: &mut Module,
        timings: &mut Timings,
        instrumentation: &mut dyn Instrumentation,
    ) -> Result<(), PassError> {
        for pass in &self.passes {
            let name = pass.name();
            instrumentation.before_pass(&**pass, module);
            timings
                .time(&pass.display_name(), || pass.run(module))
                .map_err(|d| PassError::Failed {
                    pass: name,
                    diagnostic: d.with_note(Loc::UNKNOWN, format!("in pass '{name}'")),
                })?;
            timings
                .time("Verifier", || module.verify())
                .map_err(|d| PassError::InvalidIr {
                    pass: name,
                    diagnostic: d.with_note(
                        Loc::UNKNOWN,
                        format!("the IR is invalid after pass '{name}'"),
                    ),
                })?;
            if instrumentation.after_pass(&**pass, module)?.is_break() {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::op_error;
    use ir::{Attribute, Builder, InsertPoint, parse_module_with};

    const SOURCE: &str = "func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  return %0 : i32
}
";

    fn module() -> Module {
        parse_module_with(SOURCE, "t.mlir", ir::Registry::standard()).unwrap()
    }

    /// A pass of these tests: `run`, called `name`.
    struct TestPass {
        name: &'static str,
        run: fn(&mut Module) -> Result<(), Diagnostic>,
    }

    impl Pass for TestPass {
        fn name(&self) -> &'static str {
            self.name
        }
        fn description(&self) -> &'static str {
            "a pass of the pass manager's tests"
        }
        fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
            (self.run)(m)
        }
    }

    /// Makes `return` return an `f32`: invalid IR.
    const BREAK_RETURN: TestPass = TestPass {
        name: "break-return",
        run: |m| {
            let ret = m
                .ops_named(ir::dialects::func::RETURN)
                .first()
                .copied()
                .unwrap();
            let v = Builder::new(m, InsertPoint::Before(ret))
                .constant(Attribute::float(1.0, ir::Type::F32));
            m.set_operand(ret, 0, v);
            Ok(())
        },
    };

    /// Changes nothing.
    const NOTHING: TestPass = TestPass {
        name: "nothing",
        run: |_| Ok(()),
    };

    /// Refuses every `arith.addi`.
    const REFUSE_ADD: TestPass = TestPass {
        name: "refuse-add",
        run: |m| match m.ops_named(ir::dialects::arith::ADDI).first().copied() {
            Some(op) => Err(op_error(m, op, "is not supported")),
            None => Ok(()),
        },
    };

    fn run(passes: Vec<Box<dyn Pass>>, dump: DumpOptions) -> (Result<(), PassError>, String) {
        let mut pm = PassManager::new();
        for p in passes {
            pm.add(p);
        }
        pm.set_dump_options(dump);
        let mut out = Vec::new();
        let mut m = module();
        let r = pm.run(&mut m, &mut out, &mut Timings::default());
        (r, String::from_utf8(out).unwrap())
    }

    /// The error of `passes`, which must fail.
    fn failure(passes: Vec<Box<dyn Pass>>) -> PassError {
        run(passes, DumpOptions::default()).0.unwrap_err()
    }

    #[test]
    fn verifier_failure_names_the_pass() {
        let err = failure(vec![
            Box::new(NOTHING),
            Box::new(BREAK_RETURN),
            Box::new(NOTHING),
        ]);
        assert!(matches!(err, PassError::InvalidIr { .. }));
        assert_eq!(err.pass(), Some("break-return"));
        assert_eq!(
            err.to_string(),
            "t.mlir:4:3: error: 'func.return' op type of return operand 0 ('f32') doesn't match \
             function result type ('i32') in function @f\n\
             t.mlir: note: the IR is invalid after pass 'break-return'"
        );
    }

    #[test]
    fn pass_failure_is_located_and_names_the_pass() {
        let err = failure(vec![Box::new(REFUSE_ADD)]);
        assert!(matches!(err, PassError::Failed { .. }));
        assert_eq!(err.pass(), Some("refuse-add"));
        assert_eq!(
            err.to_string(),
            "t.mlir:3:3: error: 'arith.addi' op is not supported\n\
             t.mlir: note: in pass 'refuse-add'"
        );
    }

    #[test]
    fn dump_after_all_uses_mlir_header() {
        let dump = DumpOptions {
            after_all: true,
            ..DumpOptions::default()
        };
        let (r, out) = run(vec![Box::new(NOTHING)], dump);
        r.unwrap();
        assert_eq!(
            out,
            format!(
                "// -----// IR Dump After Nothing (nothing) //----- //\n{}\n\n",
                module().print()
            )
        );
    }

    #[test]
    fn print_after_change_skips_passes_that_change_nothing() {
        let dump = DumpOptions {
            only_on_change: true,
            ..DumpOptions::default()
        };
        let (r, out) = run(
            vec![
                Box::new(NOTHING),
                Box::new(crate::Canonicalize::default()),
                Box::new(crate::Canonicalize::default()),
            ],
            dump,
        );
        r.unwrap();
        assert_eq!(out.matches("// -----// IR Dump After").count(), 1, "{out}");
        assert!(out.starts_with(
            "// -----// IR Dump After Canonicalizer (canonicalize) //----- //\nmodule {\n"
        ));
        assert!(out.contains("return %a : i32"), "{out}");
    }

    #[test]
    fn print_after_selects_passes_by_name() {
        let dump = DumpOptions {
            after: vec!["nothing".into()],
            print: PrintOptions { generic: true },
            ..DumpOptions::default()
        };
        let (r, out) = run(
            vec![Box::new(crate::Canonicalize::default()), Box::new(NOTHING)],
            dump,
        );
        r.unwrap();
        assert_eq!(out.matches("// -----// IR Dump After").count(), 1, "{out}");
        assert!(out.starts_with("// -----// IR Dump After Nothing (nothing)"));
        assert!(out.contains("\"func.return\"(%a) : (i32) -> ()"), "{out}");
    }
}
