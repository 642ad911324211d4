//! Real MLIR, through melior: parse our printed IR, verify it, lower it with the upstream
//! conversion passes to the `llvm` dialect, and translate that to LLVM IR text.
//!
//! Our own IR (crates/ir) imitates MLIR's syntax; this module is where upstream MLIR judges it.
//! Each thread keeps one context with all upstream dialects and LLVM translations registered
//! and reuses it for a bounded number of calls (see [`CALLS_PER_CONTEXT`]); a call starts
//! with no diagnostics and its own setting for unregistered dialects, so calls are
//! independent and may run on different threads. Whatever MLIR says
//! (parse errors, verifier messages, pass failures) is captured from the context's diagnostic
//! handler and returned in [`MlirError`] rather than printed to stderr.

use melior::{
    Context,
    diagnostic::{Diagnostic, DiagnosticSeverity},
    dialect::DialectRegistry,
    ir::{
        Attribute, Module,
        block::BlockLike,
        operation::{OperationLike, OperationMutLike, OperationPrintingFlags},
    },
    pass::PassManager,
    utility::{
        parse_pass_pipeline, register_all_dialects, register_all_llvm_translations,
        register_all_passes,
    },
};
use std::{
    cell::{Cell, RefCell},
    ffi::CStr,
    fmt::{self, Display, Formatter},
    rc::Rc,
    sync::Once,
};

/// The upstream lowering from func/scf/cf/arith/math/index/memref/nvvm-level IR to the `llvm`
/// dialect, in MLIR's textual pipeline syntax.
///
/// * `convert-nvvm-to-llvm` first: it rewrites the NVVM ops that are defined as inline PTX.
/// * memrefs use the bare-pointer calling convention: a kernel parameter of a statically shaped
///   memref becomes one `ptr`, as the kernel ABI (one pointer per buffer) wants, instead of a
///   memref descriptor spread over several parameters.
/// * `reconcile-unrealized-casts` last, so leftovers of a partial lowering show up as errors.
pub const DEFAULT_PIPELINE: &str = "builtin.module(\
    convert-nvvm-to-llvm,\
    convert-scf-to-cf,\
    convert-arith-to-llvm,\
    convert-math-to-llvm,\
    convert-index-to-llvm,\
    convert-cf-to-llvm,\
    finalize-memref-to-llvm,\
    convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},\
    reconcile-unrealized-casts)";

/// Marks a kernel: a `func.func` with this unit attribute becomes an `llvm.func` with
/// `nvvm.kernel` (a PTX `.entry`). It is upstream's name for "this function is a kernel" and,
/// unlike `nvvm.kernel`, may sit on a `func.func` (NVVM accepts only `llvm.func`);
/// `convert-func-to-llvm` carries it over and [`to_llvm_ir`] turns it into `nvvm.kernel`.
/// An `llvm.func` written with `nvvm.kernel` directly works too.
pub const KERNEL_ATTRIBUTE: &str = "gpu.kernel";

/// The step at which MLIR rejected the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MlirStage {
    /// The text is not valid MLIR, or fails the op verifiers (MLIR verifies while parsing).
    Parse,
    /// The pass pipeline string does not parse (unknown pass or option).
    Pipeline,
    /// A pass failed (e.g. an op that no conversion knows).
    Pass,
    /// The lowered module holds something without an LLVM IR translation.
    Translate,
}

impl Display for MlirStage {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Parse => "parsing",
            Self::Pipeline => "pass pipeline parsing",
            Self::Pass => "pass pipeline",
            Self::Translate => "translation to LLVM IR",
        })
    }
}

/// MLIR rejected the input; `diagnostics` holds what it said, one entry per diagnostic
/// (`location: severity: message`, notes indented below).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MlirError {
    /// Where it failed.
    pub stage: MlirStage,
    /// A summary from our side (e.g. melior's error), for when MLIR emitted no diagnostic.
    pub message: String,
    /// MLIR's diagnostics, in the order emitted.
    pub diagnostics: Vec<String>,
}

impl Display for MlirError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "MLIR {} failed: {}", self.stage, self.message)?;
        for diagnostic in &self.diagnostics {
            write!(f, "\n{diagnostic}")?;
        }
        Ok(())
    }
}

impl std::error::Error for MlirError {}

/// Parses and verifies `text`. With `allow_unregistered`, ops of unknown dialects (our
/// `xla_gpu` ops, printed in generic form) are accepted as opaque ops.
pub fn verify(text: &str, allow_unregistered: bool) -> Result<(), MlirError> {
    with_session(allow_unregistered, |session| session.parse(text).map(drop))
}

/// Lowers `text` with [`DEFAULT_PIPELINE`] and translates it to LLVM IR text.
pub fn to_llvm_ir(text: &str) -> Result<String, MlirError> {
    to_llvm_ir_with_pipeline(text, DEFAULT_PIPELINE)
}

/// Lowers `text` with `pipeline` (MLIR's textual syntax, anchored on `builtin.module`) and
/// translates the result to LLVM IR text.
pub fn to_llvm_ir_with_pipeline(text: &str, pipeline: &str) -> Result<String, MlirError> {
    with_session(false, |session| {
        let mut module = session.parse(text)?;
        session.run_pipeline(&mut module, pipeline)?;
        session.mark_kernels(&mut module);
        session.translate(&module)
    })
}

/// Lowers `text` with `pipeline` and prints the resulting MLIR, as it goes to translation (to
/// look at what the upstream conversions made of it).
pub fn run_pipeline(text: &str, pipeline: &str) -> Result<String, MlirError> {
    with_session(false, |session| {
        let mut module = session.parse(text)?;
        session.run_pipeline(&mut module, pipeline)?;
        session.mark_kernels(&mut module);
        Ok(module.as_operation().to_string())
    })
}

/// Like [`run_pipeline`], but prints the result in MLIR's generic op form, which our own
/// parser reads back for every op (registered or not) — how `lower-to-llvm` hands the
/// upstream conversions' output back to our IR.
pub fn run_pipeline_generic(text: &str, pipeline: &str) -> Result<String, MlirError> {
    with_session(false, |session| {
        let mut module = session.parse(text)?;
        session.run_pipeline(&mut module, pipeline)?;
        module
            .as_operation()
            .to_string_with_flags(OperationPrintingFlags::new().print_generic_operation_form())
            .map_err(|e| session.error(MlirStage::Pass, &e.to_string()))
    })
}

/// How many calls one thread's context serves before it is rebuilt. Building a context and
/// loading the dialects a module uses costs about as much as lowering a small kernel, and
/// `hlo-emit` calls MLIR twice per fusion (`lower-to-llvm`, then translation); the bound
/// keeps a long-running process (a test run) from holding every attribute and type it
/// ever uniqued.
pub const CALLS_PER_CONTEXT: usize = 64;

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's session, made ready for a new input: no diagnostics from
/// earlier calls, unregistered dialects allowed or not as asked.
fn with_session<T>(allow_unregistered: bool, f: impl FnOnce(&Session) -> T) -> T {
    SESSION.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot
            .as_ref()
            .is_some_and(|session| session.calls.get() >= CALLS_PER_CONTEXT)
        {
            // Drop the old context before building the next.
            *slot = None;
        }
        let session = slot.get_or_insert_with(Session::new);
        session.begin(allow_unregistered);
        f(session)
    })
}

/// A context with everything registered, and the diagnostics it has emitted in this call.
struct Session {
    context: Context,
    diagnostics: Rc<RefCell<Vec<String>>>,
    /// Calls served so far.
    calls: Cell<usize>,
}

impl Session {
    fn new() -> Self {
        let registry = DialectRegistry::new();
        register_all_dialects(&registry);
        // Threads would only make diagnostics arrive out of order; our modules are small.
        let context = Context::new_with_registry(&registry, false);
        register_all_llvm_translations(&context);
        // The pass registry is global: registering once per process is enough.
        static PASSES: Once = Once::new();
        PASSES.call_once(register_all_passes);

        let diagnostics = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::clone(&diagnostics);
        // The handler lives as long as the context (which drops it); returning true marks the
        // diagnostic handled, so MLIR does not also print it to stderr.
        context.attach_diagnostic_handler(move |diagnostic| {
            sink.borrow_mut().push(format_diagnostic(&diagnostic, 0));
            true
        });
        Self {
            context,
            diagnostics,
            calls: Cell::new(0),
        }
    }

    fn begin(&self, allow_unregistered: bool) {
        self.calls.set(self.calls.get() + 1);
        self.diagnostics.borrow_mut().clear();
        self.context
            .set_allow_unregistered_dialects(allow_unregistered);
    }

    fn parse(&self, text: &str) -> Result<Module<'_>, MlirError> {
        // melior needs a C string; an interior NUL would make it panic.
        if text.contains('\0') {
            return Err(self.error(MlirStage::Parse, "input contains a NUL byte"));
        }
        // Parsing includes verification.
        Module::parse(&self.context, text)
            .ok_or_else(|| self.error(MlirStage::Parse, "the input does not parse or verify"))
    }

    fn run_pipeline(&self, module: &mut Module, pipeline: &str) -> Result<(), MlirError> {
        let manager = PassManager::new(&self.context);
        manager.enable_verifier(true);
        parse_pass_pipeline(manager.as_operation_pass_manager(), pipeline)
            .map_err(|error| self.error(MlirStage::Pipeline, &error.to_string()))?;
        manager
            .run(module)
            .map_err(|error| self.error(MlirStage::Pass, &error.to_string()))
    }

    /// Gives every top-level `llvm.func` marked with [`KERNEL_ATTRIBUTE`] `nvvm.kernel`
    /// instead, which the NVVM translation turns into the `ptx_kernel` calling convention.
    fn mark_kernels(&self, module: &mut Module) {
        let mut next = module.body().first_operation_mut();
        while let Some(mut operation) = next {
            let is_llvm_func = operation.name().as_string_ref().as_str() == Ok("llvm.func");
            if is_llvm_func && operation.remove_attribute(KERNEL_ATTRIBUTE).is_ok() {
                operation.set_attribute("nvvm.kernel", Attribute::unit(&self.context));
            }
            next = operation.next_in_block_mut();
        }
    }

    fn translate(&self, module: &Module) -> Result<String, MlirError> {
        // `nvvm.kernel` is translated by the NVVM dialect's translation interface, which only
        // runs when the dialect is loaded; a module that uses no NVVM op (a one-thread kernel
        // whose thread id folded away) would otherwise silently become a plain `.func`.
        self.context.get_or_load_dialect("nvvm");
        translate_to_llvm_ir(module).ok_or_else(|| {
            self.error(
                MlirStage::Translate,
                "the module is not entirely in dialects with an LLVM IR translation",
            )
        })
    }

    fn error(&self, stage: MlirStage, message: &str) -> MlirError {
        MlirError {
            stage,
            message: message.to_string(),
            diagnostics: self.diagnostics.borrow().clone(),
        }
    }
}

/// `location: severity: message`, then the notes, indented.
fn format_diagnostic(diagnostic: &Diagnostic, depth: usize) -> String {
    let severity = match diagnostic.severity() {
        DiagnosticSeverity::Error => "error",
        DiagnosticSeverity::Warning => "warning",
        DiagnosticSeverity::Note => "note",
        DiagnosticSeverity::Remark => "remark",
    };
    let mut text = format!(
        "{}{}: {severity}: {diagnostic}",
        "  ".repeat(depth),
        diagnostic.location()
    );
    for index in 0..diagnostic.note_count() {
        if let Ok(note) = diagnostic.note(index) {
            text.push('\n');
            text.push_str(&format_diagnostic(&note, depth + 1));
        }
    }
    text
}

/// Translates an `llvm`-dialect module to LLVM IR text, or `None` when some op has no
/// translation (MLIR reports why through the context's diagnostics).
///
/// This is `mlirTranslateModuleToLLVMIRToString` with a null check: that function prints the
/// translated module without checking that translation succeeded, so a failure would crash
/// the process instead of returning an error.
fn translate_to_llvm_ir(module: &Module) -> Option<String> {
    use mlir_sys::{
        LLVMContextCreate, LLVMContextDispose, LLVMDisposeMessage, LLVMDisposeModule,
        LLVMPrintModuleToString, mlirTranslateModuleToLLVMIR,
    };
    // SAFETY: `module` is a live MLIR module borrowed for the whole call. The LLVM context is
    // created and disposed here and nothing escapes it: the translated module (owned by the
    // caller per the C API) is disposed before the context, and the printed string (allocated
    // by LLVMPrintModuleToString) is copied into a Rust String and freed with
    // LLVMDisposeMessage, as its documentation requires. A null module (failed translation)
    // is never dereferenced.
    unsafe {
        let llvm_context = LLVMContextCreate();
        let llvm_module = mlirTranslateModuleToLLVMIR(module.as_operation().to_raw(), llvm_context);
        let text = if llvm_module.is_null() {
            None
        } else {
            let raw = LLVMPrintModuleToString(llvm_module);
            let text = CStr::from_ptr(raw).to_string_lossy().into_owned();
            LLVMDisposeMessage(raw);
            LLVMDisposeModule(llvm_module);
            Some(text)
        };
        LLVMContextDispose(llvm_context);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that uses no NVVM op: the NVVM dialect is not loaded by parsing it, yet its
    /// translation must still make it a kernel.
    const ONE_THREAD_KERNEL: &str = r#"
llvm.func @main(%out: !llvm.ptr) attributes {gpu.kernel} {
  %c = llvm.mlir.constant(1.0 : f32) : f32
  llvm.store %c, %out : f32, !llvm.ptr
  llvm.return
}
"#;

    #[test]
    fn a_kernel_without_nvvm_ops_is_still_a_kernel() {
        // A fresh thread: a context no earlier call has loaded dialects into.
        let llvm_ir =
            std::thread::spawn(|| to_llvm_ir_with_pipeline(ONE_THREAD_KERNEL, "builtin.module()"))
                .join()
                .expect("the thread panicked")
                .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            llvm_ir.contains("define ptx_kernel void @main"),
            "{llvm_ir}"
        );
    }

    #[test]
    fn reused_contexts_start_each_call_clean() {
        // The first call fails and leaves a diagnostic; later calls must not report it.
        let error = verify("func.func @f(", false).expect_err("truncated");
        assert_eq!(error.diagnostics.len(), 1, "{error}");
        let with_loop = "func.func @f() { \"xla_gpu.loop\"() : () -> () return }";
        verify(with_loop, true)
            .unwrap_or_else(|e| panic!("allowing unregistered ops must hold for this call: {e}"));
        let error = verify(with_loop, false).expect_err("and must not leak into the next call");
        assert_eq!(error.diagnostics.len(), 1, "{error}");
        assert!(
            error.diagnostics[0].contains("unregistered dialect"),
            "{error}"
        );
        // Enough calls to rebuild the context at least once.
        for _ in 0..CALLS_PER_CONTEXT + 1 {
            let llvm_ir = to_llvm_ir_with_pipeline(ONE_THREAD_KERNEL, "builtin.module()")
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(
                llvm_ir.contains("define ptx_kernel void @main"),
                "{llvm_ir}"
            );
        }
    }
}
