//! Real MLIR, through melior: parse our printed IR, verify it, lower it with the upstream
//! conversion passes to the `llvm` dialect, and translate that to LLVM IR text.
//!
//! Our own IR (crates/ir) imitates MLIR's syntax; this module is where upstream MLIR judges it.
//! Every call builds a fresh context with all upstream dialects and LLVM translations
//! registered, so calls are independent and may run on different threads. Whatever MLIR says
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
    cell::RefCell,
    ffi::CStr,
    fmt::{self, Display, Formatter},
    rc::Rc,
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
    let session = Session::new(allow_unregistered);
    session.parse(text).map(drop)
}

/// Lowers `text` with [`DEFAULT_PIPELINE`] and translates it to LLVM IR text.
pub fn to_llvm_ir(text: &str) -> Result<String, MlirError> {
    to_llvm_ir_with_pipeline(text, DEFAULT_PIPELINE)
}

/// Lowers `text` with `pipeline` (MLIR's textual syntax, anchored on `builtin.module`) and
/// translates the result to LLVM IR text.
pub fn to_llvm_ir_with_pipeline(text: &str, pipeline: &str) -> Result<String, MlirError> {
    let session = Session::new(false);
    let mut module = session.parse(text)?;
    session.run_pipeline(&mut module, pipeline)?;
    session.mark_kernels(&mut module);
    session.translate(&module)
}

/// Lowers `text` with `pipeline` and prints the resulting MLIR, as it goes to translation (to
/// look at what the upstream conversions made of it).
pub fn run_pipeline(text: &str, pipeline: &str) -> Result<String, MlirError> {
    let session = Session::new(false);
    let mut module = session.parse(text)?;
    session.run_pipeline(&mut module, pipeline)?;
    session.mark_kernels(&mut module);
    Ok(module.as_operation().to_string())
}

/// Like [`run_pipeline`], but prints the result in MLIR's generic op form, which our own
/// parser reads back for every op (registered or not) — how `lower-to-llvm` hands the
/// upstream conversions' output back to our IR.
pub fn run_pipeline_generic(text: &str, pipeline: &str) -> Result<String, MlirError> {
    let session = Session::new(false);
    let mut module = session.parse(text)?;
    session.run_pipeline(&mut module, pipeline)?;
    module
        .as_operation()
        .to_string_with_flags(OperationPrintingFlags::new().print_generic_operation_form())
        .map_err(|e| session.error(MlirStage::Pass, &e.to_string()))
}

/// A context with everything registered, and the diagnostics it has emitted so far.
struct Session {
    context: Context,
    diagnostics: Rc<RefCell<Vec<String>>>,
}

impl Session {
    fn new(allow_unregistered: bool) -> Self {
        let registry = DialectRegistry::new();
        register_all_dialects(&registry);
        // Threads would only make diagnostics arrive out of order; our modules are small.
        let context = Context::new_with_registry(&registry, false);
        register_all_llvm_translations(&context);
        register_all_passes();
        context.set_allow_unregistered_dialects(allow_unregistered);

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
        }
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
