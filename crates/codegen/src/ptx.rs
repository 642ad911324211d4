//! LLVM IR to PTX with LLVM's NVPTX backend, through inkwell.
//!
//! The IR comes from MLIR's translation without a target; here it gets the NVPTX triple and
//! data layout, the `default<O3>` pipeline (the one `opt -O3` runs, including NVPTX's own
//! passes such as NVVM reflection), and is printed as PTX assembly for one SM architecture.

use inkwell::{
    OptimizationLevel,
    context::{AsContextRef, Context},
    llvm_sys::{bit_reader::LLVMGetBitcodeModuleInContext2, core::LLVMIsDeclaration},
    memory_buffer::MemoryBuffer,
    module::{Linkage, Module},
    passes::PassBuilderOptions,
    targets::{
        CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple,
    },
    values::AsValueRef,
};
use std::{
    collections::HashSet,
    ffi::{CString, c_char},
    fmt::{self, Display, Formatter},
    path::Path,
    sync::Once,
};

use crate::toolchain;

/// The target triple of 64-bit CUDA code.
pub const NVPTX_TRIPLE: &str = "nvptx64-nvidia-cuda";

/// The processors LLVM 22's NVPTX backend knows (`llc -march=nvptx64 -mcpu=help`; a test
/// keeps the list in step with the LLVM we link). LLVM takes any other name with only a
/// warning on stderr and emits PTX for its oldest target (`.target sm_bogus`, PTX ISA 3.2),
/// so an unknown architecture is refused here instead.
pub const KNOWN_ARCHS: &[&str] = &[
    "sm_20", "sm_21", "sm_30", "sm_32", "sm_35", "sm_37", "sm_50", "sm_52", "sm_53", "sm_60",
    "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89",
    "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_101", "sm_101a", "sm_101f", "sm_103",
    "sm_103a", "sm_103f", "sm_110", "sm_110a", "sm_110f", "sm_120", "sm_120a", "sm_120f", "sm_121",
    "sm_121a", "sm_121f",
];

/// The oldest architecture the kernels are written for: `tanh.approx.f32` (bf16 GELU) needs
/// sm_75, and older ones would need other code paths (LLVM aborts on what they lack).
pub const OLDEST_ARCH: u32 = 75;

/// The number of `sm_NN` (and `sm_NNa`, `sm_NNf`).
pub fn arch_number(arch: &str) -> Option<u32> {
    let digits = arch.strip_prefix("sm_")?;
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// Refuses an architecture LLVM does not know (see [`KNOWN_ARCHS`]) or that is older than
/// [`OLDEST_ARCH`]; drivers call it before compiling anything, [`compile`] calls it too.
pub fn check_arch(arch: &str) -> Result<(), PtxError> {
    if !KNOWN_ARCHS.contains(&arch) {
        return Err(PtxError::UnknownArch(arch.to_string()));
    }
    if arch_number(arch).is_none_or(|n| n < OLDEST_ARCH) {
        return Err(PtxError::OldArch(arch.to_string()));
    }
    Ok(())
}

/// The step at which LLVM failed; each carries LLVM's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PtxError {
    /// The architecture is not one of [`KNOWN_ARCHS`].
    UnknownArch(String),
    /// The architecture is older than [`OLDEST_ARCH`].
    OldArch(String),
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
            Self::UnknownArch(arch) => {
                return write!(
                    f,
                    "unknown GPU architecture '{arch}' (LLVM's NVPTX backend knows {})",
                    KNOWN_ARCHS.join(", ")
                );
            }
            Self::OldArch(arch) => {
                return write!(
                    f,
                    "unsupported GPU architecture '{arch}': the kernels are written for sm_{OLDEST_ARCH} and newer (tanh.approx, warp shuffles with member masks)"
                );
            }
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

/// The LLVM options that make our kernels what XLA's (and Triton's) would be:
/// - `-nvptx-prec-divf32=1`, as XLA's NVPTX backend sets it: f32 division is `div.full.f32`
///   (at most 2 ulp), not the IEEE `div.rn.f32`, whose correction sequence and slow-path
///   call nearly doubled GELU's machine code (280 -> 152 SASS instructions); XLA: "it
///   matters for some float-division heavy benchmarks", while `div.approx.f32` would be
///   wrong for `f32::MAX / f32::MAX`.
/// - `-nvptx-fma-level=2`: a multiply feeding an add becomes one `fma`, what XLA gets from
///   `AllowFPOpFusion = Fast` ("this increases precision instead of decreasing it") and
///   Triton from its default FP fusion; LLVM's C API cannot set that target option, and
///   NVPTX contracts when this option is given. Softmax's sum of exponentials: 416 -> 384
///   SASS instructions, layer norm's variance 168 -> 136.
const LLVM_OPTIONS: &[&str] = &["hlo-emit", "-nvptx-prec-divf32=1", "-nvptx-fma-level=2"];

/// Registers the NVPTX backend with LLVM and sets [`LLVM_OPTIONS`], once per process
/// (LLVM's registry and options are global, and an option given twice is an error).
fn initialize_nvptx() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        Target::initialize_nvptx(&InitializationConfig::default());
        let args: Vec<CString> = LLVM_OPTIONS
            .iter()
            .map(|a| CString::new(*a).expect("no NUL in an option"))
            .collect();
        let argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
        // SAFETY: `argv` holds `args.len()` NUL-terminated strings that outlive the call,
        // and the overview is a NUL-terminated literal. LLVM copies what it keeps.
        unsafe {
            inkwell::llvm_sys::support::LLVMParseCommandLineOptions(
                argv.len() as i32,
                argv.as_ptr(),
                c"hlo-emit".as_ptr(),
            );
        }
    });
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
    compile(llvm_ir, arch).map(|c| c.ptx)
}

/// [`llvm_ir_to_ptx`] with the optimized IR too. When the module calls one of libdevice's
/// functions (the bitcode of CUDA's `__nv_*` math functions), libdevice is linked; where it
/// is not found, that is an error naming the functions and the fix, never a PTX module that
/// declares them unresolved (which assembles only as a relocatable object and fails to load).
///
/// Only the functions the module reaches are read and linked ([`link_libdevice`]); they
/// become internal, so O3 inlines them, as XLA and clang do; NVVM reflection (part of the
/// NVPTX O3 pipeline) resolves libdevice's `__nvvm_reflect` queries (no flush-to-zero,
/// precise division and square root).
pub fn compile(llvm_ir: &str, arch: &str) -> Result<Compiled, PtxError> {
    check_arch(arch)?;
    let context = Context::create();
    let module = parse(&context, llvm_ir)?;
    let called = libdevice_calls(&module);
    if !called.is_empty() {
        let path = toolchain::libdevice().map_err(|e| {
            PtxError::Link(format!("the kernels call {}, but {e}", called.join(", ")))
        })?;
        link_libdevice(&module, &called, &path, &context)?;
    }
    let machine = for_target(&module, arch)?;
    module
        .run_passes("default<O3>", &machine, PassBuilderOptions::create())
        .map_err(|error| PtxError::Optimize(error.to_string()))?;
    let optimized_ir = module.print_to_string().to_string();
    let ptx = emit_assembly(&module, &machine)?;
    Ok(Compiled { optimized_ir, ptx })
}

/// The PTX of LLVM IR that is already optimized (and linked with what it calls): the
/// backend alone, without O3. The driver uses it when a test puts its own optimizer in
/// place of [`compile`]'s O3, so that the PTX is still made from the module the check saw.
pub fn optimized_ir_to_ptx(optimized_ir: &str, arch: &str) -> Result<String, PtxError> {
    check_arch(arch)?;
    let context = Context::create();
    let module = parse(&context, optimized_ir)?;
    let machine = for_target(&module, arch)?;
    emit_assembly(&module, &machine)
}

/// `llvm_ir` parsed into `context`.
fn parse<'ctx>(context: &'ctx Context, llvm_ir: &str) -> Result<Module<'ctx>, PtxError> {
    initialize_nvptx();
    let buffer = MemoryBuffer::create_from_memory_range_copy(llvm_ir.as_bytes(), "llvm-ir");
    context
        .create_module_from_ir(buffer)
        .map_err(|error| PtxError::ParseIr(error.to_string()))
}

/// The target machine of `arch`, with `module` given its NVPTX triple and data layout and
/// verified.
fn for_target(module: &Module<'_>, arch: &str) -> Result<TargetMachine, PtxError> {
    let triple = TargetTriple::create(NVPTX_TRIPLE);
    let target =
        Target::from_triple(&triple).map_err(|error| PtxError::TargetMachine(error.to_string()))?;
    let machine = target
        .create_target_machine(
            &triple,
            arch,
            // Below sm_90 LLVM's default PTX ISA lacks what the kernels use: sm_75's 6.3
            // has no `tanh.approx.f32` (7.0), sm_89's 7.8 no f8 conversions (8.1).
            if arch_number(arch).is_some_and(|n| n < 90) {
                "+ptx81"
            } else {
                ""
            },
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
    Ok(machine)
}

/// `module` as PTX assembly.
fn emit_assembly(module: &Module<'_>, machine: &TargetMachine) -> Result<String, PtxError> {
    let assembly = machine
        .write_to_memory_buffer(module, FileType::Assembly)
        .map_err(|error| PtxError::Emit(error.to_string()))?;
    let bytes = assembly.as_slice();
    // The buffer may carry LLVM's terminating NUL.
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// The libdevice functions `module` declares (and so calls), sorted.
fn libdevice_calls(module: &Module<'_>) -> Vec<String> {
    let mut called: Vec<String> = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() == 0)
        .filter_map(|f| f.get_name().to_str().ok().map(str::to_string))
        .filter(|name| name.starts_with("__nv_"))
        .collect();
    called.sort_unstable();
    called
}

/// Links into `module` the libdevice functions named `called` and what they reach, and
/// makes them internal, so that O3 inlines them, as XLA and clang do.
///
/// libdevice defines about 500 functions and a fusion calls a few. Parsing all of it costs
/// more than the rest of the LLVM stages of a small kernel (~35 ms), so it is read lazily
/// (function bodies stay in the bitcode until something needs them), and everything but the
/// called functions is given `linkonce_odr` linkage first: LLVM's linker moves such a
/// definition only when a moved body references it, so exactly the functions the kernel
/// reaches are read and linked, which is what `llvm-link --only-needed` does.
fn link_libdevice<'ctx>(
    module: &Module<'ctx>,
    called: &[String],
    path: &Path,
    context: &'ctx Context,
) -> Result<(), PtxError> {
    let link_error = |error: String| PtxError::Link(format!("{}: {error}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| link_error(e.to_string()))?;
    let library = lazy_bitcode_module(&bytes, context).map_err(link_error)?;
    for function in library.get_functions() {
        let name = function.get_name().to_string_lossy();
        let defined = function.get_linkage() == Linkage::External && !is_declaration(function);
        if defined && !called.iter().any(|c| *c == name) {
            function.set_linkage(Linkage::LinkOnceODR);
        }
    }
    for global in library.get_globals() {
        if global.get_linkage() == Linkage::External && !is_declaration(global) {
            global.set_linkage(Linkage::LinkOnceODR);
        }
    }
    let own: HashSet<CString> = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .map(|f| f.get_name().to_owned())
        .collect();
    module
        .link_in_module(library)
        .map_err(|error| PtxError::Link(error.to_string()))?;
    for function in module.get_functions() {
        if function.count_basic_blocks() > 0 && !own.contains(function.get_name()) {
            function.set_linkage(Linkage::Internal);
        }
    }
    Ok(())
}

/// Whether `value` (a function or global of a lazily read module) has no definition in the
/// bitcode. `count_basic_blocks` cannot tell: a body not read yet has no blocks.
fn is_declaration(value: impl AsValueRef) -> bool {
    // SAFETY: `value` is a live global value; LLVM answers from its linkage and whether a
    // body is materialized or still to be read, without reading it.
    unsafe { LLVMIsDeclaration(value.as_value_ref()) != 0 }
}

/// The bitcode `bytes` as a module whose function bodies are read when first needed.
fn lazy_bitcode_module<'ctx>(bytes: &[u8], context: &'ctx Context) -> Result<Module<'ctx>, String> {
    let buffer = MemoryBuffer::create_from_memory_range_copy(bytes, "libdevice");
    let mut module = std::ptr::null_mut();
    // SAFETY: the context and buffer are live; on success the module owns the buffer (it
    // reads bodies from it later), on failure LLVM releases it without freeing it, so in
    // both cases this side must not free it (`forget` below).
    let failed = unsafe {
        LLVMGetBitcodeModuleInContext2(context.as_ctx_ref(), buffer.as_mut_ptr(), &mut module)
    };
    std::mem::forget(buffer);
    if failed != 0 || module.is_null() {
        return Err("not a valid bitcode module".to_string());
    }
    // SAFETY: `module` is a module LLVM just created in `context`, owned by nobody else.
    Ok(unsafe { Module::new(module) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain;

    const CALLS_ACOS: &str = r#"
define ptx_kernel void @main(ptr %p) {
  %x = load float, ptr %p
  %y = call float @__nv_acosf(float %x)
  store float %y, ptr %p
  ret void
}
declare float @__nv_acosf(float)
"#;

    #[test]
    fn compiles_with_libdevice_do_not_depend_on_what_was_compiled_before() {
        let first = compile(CALLS_ACOS, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        let in_another_thread = std::thread::spawn(move || {
            compile(CALLS_ACOS, "sm_90").unwrap_or_else(|e| panic!("{e}"))
        })
        .join()
        .expect("the thread panicked");
        assert_eq!(first, in_another_thread);
        assert!(first.ptx.contains(".entry main"), "{}", first.ptx);
    }

    #[test]
    fn known_archs_are_llvms() {
        let llc = toolchain::llvm_tool("llc").unwrap_or_else(|e| panic!("{e}"));
        let output = std::process::Command::new(llc)
            .args(["-march=nvptx64", "-mcpu=help"])
            .output()
            .expect("llc runs");
        // llc prints the table to stderr or stdout depending on the version.
        let text =
            String::from_utf8_lossy(&output.stderr) + String::from_utf8_lossy(&output.stdout);
        let listed: Vec<&str> = text
            .lines()
            .map(str::trim)
            .take_while(|line| !line.starts_with("Available features"))
            .filter_map(|line| line.split_whitespace().next())
            .filter(|word| word.starts_with("sm_"))
            .collect();
        let mut known = KNOWN_ARCHS.to_vec();
        let mut listed_sorted = listed.clone();
        known.sort_unstable();
        listed_sorted.sort_unstable();
        assert_eq!(known, listed_sorted);
    }

    #[test]
    fn an_unknown_arch_is_refused() {
        let error = llvm_ir_to_ptx(CALLS_ACOS, "sm_bogus").expect_err("sm_bogus");
        assert_eq!(error, PtxError::UnknownArch("sm_bogus".to_string()));
        assert!(error.to_string().contains("sm_90a"), "{error}");
    }

    fn names(module: &Module<'_>) -> Vec<String> {
        module
            .get_functions()
            .map(|f| f.get_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn only_what_the_kernel_reaches_is_linked() {
        let path = toolchain::libdevice().unwrap_or_else(|e| panic!("{e}"));
        let context = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(CALLS_ACOS.as_bytes(), "acos");
        let module = context.create_module_from_ir(buffer).expect("valid IR");
        let called = libdevice_calls(&module);
        assert_eq!(called, ["__nv_acosf"]);
        link_libdevice(&module, &called, &path, &context).unwrap_or_else(|e| panic!("{e}"));
        let linked = names(&module);
        assert!(linked.iter().any(|n| n == "__nv_acosf"), "{linked:?}");
        assert!(!linked.iter().any(|n| n == "__nv_expf"), "{linked:?}");
        // libdevice defines about 500 functions; acos needs a handful.
        assert!(linked.len() < 10, "{linked:?}");
        // What is linked is complete and internal: it verifies, and O3 inlines acos.
        module.verify().unwrap_or_else(|e| panic!("{e}"));
        let acos = module.get_function("__nv_acosf").expect("linked");
        assert_eq!(acos.get_linkage(), Linkage::Internal);
        let compiled = compile(CALLS_ACOS, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        assert!(compiled.ptx.contains(".entry main"), "{}", compiled.ptx);
        assert!(!compiled.ptx.contains("__nv_acosf"), "{}", compiled.ptx);
    }
}
