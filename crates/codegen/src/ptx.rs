//! LLVM IR to PTX with LLVM's NVPTX backend, through inkwell.
//!
//! The IR comes from MLIR's translation without a target; here it gets the NVPTX triple and
//! data layout, the `default<O3>` pipeline (the one `opt -O3` runs, including NVPTX's own
//! passes such as NVVM reflection), and is printed as PTX assembly for one SM architecture.

use inkwell::{
    OptimizationLevel,
    context::Context,
    memory_buffer::MemoryBuffer,
    module::{Linkage, Module},
    passes::PassBuilderOptions,
    targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetTriple},
};
use std::{
    fmt::{self, Display, Formatter},
    sync::Once,
};

/// The target triple of 64-bit CUDA code.
pub const NVPTX_TRIPLE: &str = "nvptx64-nvidia-cuda";

/// The step at which LLVM failed; each carries LLVM's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PtxError {
    /// The text is not valid LLVM IR.
    ParseIr(String),
    /// The IR parses but the module verifier rejects it.
    Verify(String),
    /// No NVPTX target machine for this architecture.
    TargetMachine(String),
    /// Linking libdevice failed.
    Link(String),
    /// The optimization pipeline failed.
    Optimize(String),
    /// The backend could not emit PTX.
    Emit(String),
}

impl Display for PtxError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (what, message) = match self {
            Self::ParseIr(message) => ("parsing LLVM IR", message),
            Self::Verify(message) => ("verifying LLVM IR", message),
            Self::TargetMachine(message) => ("creating the NVPTX target machine", message),
            Self::Link(message) => ("linking libdevice", message),
            Self::Optimize(message) => ("optimizing LLVM IR", message),
            Self::Emit(message) => ("emitting PTX", message),
        };
        write!(f, "{what} failed: {message}")
    }
}

impl std::error::Error for PtxError {}

/// Registers the NVPTX backend with LLVM, once per process (LLVM's registry is global).
fn initialize_nvptx() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| Target::initialize_nvptx(&InitializationConfig::default()));
}

/// What the LLVM stages produced: the optimized LLVM IR and the PTX assembly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    pub optimized_ir: String,
    pub ptx: String,
}

/// Optimizes `llvm_ir` at O3 and compiles it to PTX for `arch` (e.g. `"sm_90"`). LLVM picks
/// the PTX ISA version: the lowest that supports `arch`.
pub fn llvm_ir_to_ptx(llvm_ir: &str, arch: &str) -> Result<String, PtxError> {
    compile(llvm_ir, arch, None).map(|c| c.ptx)
}

/// [`llvm_ir_to_ptx`] that also links `libdevice` (the bitcode of CUDA's `__nv_*` math
/// functions) when the module calls one of its functions, and returns the optimized IR too.
///
/// The linked functions become internal, so O3 inlines what is used and drops the rest, as
/// XLA and clang do; NVVM reflection (part of the NVPTX O3 pipeline) resolves libdevice's
/// `__nvvm_reflect` queries (no flush-to-zero, precise division and square root).
pub fn compile(
    llvm_ir: &str,
    arch: &str,
    libdevice: Option<&std::path::Path>,
) -> Result<Compiled, PtxError> {
    initialize_nvptx();
    let context = Context::create();
    let buffer = MemoryBuffer::create_from_memory_range_copy(llvm_ir.as_bytes(), "llvm-ir");
    let module = context
        .create_module_from_ir(buffer)
        .map_err(|error| PtxError::ParseIr(error.to_string()))?;
    let calls_libdevice = module
        .get_functions()
        .any(|f| f.count_basic_blocks() == 0 && f.get_name().to_bytes().starts_with(b"__nv_"));
    if let (true, Some(path)) = (calls_libdevice, libdevice) {
        let library = Module::parse_bitcode_from_path(path, &context)
            .map_err(|error| PtxError::Link(format!("{}: {error}", path.display())))?;
        module
            .link_in_module(library)
            .map_err(|error| PtxError::Link(error.to_string()))?;
        for function in module.get_functions() {
            if function.count_basic_blocks() > 0
                && function.get_name().to_bytes().starts_with(b"__nv")
            {
                function.set_linkage(Linkage::Internal);
            }
        }
    }

    let triple = TargetTriple::create(NVPTX_TRIPLE);
    let target =
        Target::from_triple(&triple).map_err(|error| PtxError::TargetMachine(error.to_string()))?;
    let machine = target
        .create_target_machine(
            &triple,
            arch,
            "",
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or_else(|| PtxError::TargetMachine(format!("no target machine for {arch}")))?;
    module.set_triple(&triple);
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    module
        .verify()
        .map_err(|error| PtxError::Verify(error.to_string()))?;

    module
        .run_passes("default<O3>", &machine, PassBuilderOptions::create())
        .map_err(|error| PtxError::Optimize(error.to_string()))?;
    let optimized_ir = module.print_to_string().to_string();

    let assembly = machine
        .write_to_memory_buffer(&module, FileType::Assembly)
        .map_err(|error| PtxError::Emit(error.to_string()))?;
    let bytes = assembly.as_slice();
    // The buffer may carry LLVM's terminating NUL.
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    Ok(Compiled {
        optimized_ir,
        ptx: String::from_utf8_lossy(bytes).into_owned(),
    })
}
