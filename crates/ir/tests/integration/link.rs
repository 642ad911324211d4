//! `ir::link`: per-fusion modules into one (see `crates/ir/src/link.rs`).

use ir::link::{LinkInput, link};
use ir::parse_module;

fn input(text: &str, kernel: &str) -> LinkInput {
    LinkInput {
        module: parse_module(text).unwrap_or_else(|e| panic!("{e}")),
        entry: "main".to_string(),
        kernel: kernel.to_string(),
    }
}

/// A kernel with a shared tile, a helper, a libdevice declaration and a branch to a block
/// that uses a value defined further down in block order.
const KERNEL: &str = r#"
llvm.mlir.global private @shared_0() {addr_space = 3 : i32} : !llvm.array<8 x f32>
llvm.func @__nv_expf(f32) -> f32
llvm.func @helper(%x: f32) -> f32 {
  %0 = llvm.call @__nv_expf(%x) : (f32) -> f32
  llvm.return %0 : f32
}
llvm.func @main(%p: !llvm.ptr, %x: f32) {
  %a = llvm.mlir.addressof @shared_0 : !llvm.ptr<3>
  "llvm.br"()[^bb2] : () -> ()
^bb1:
  %y = llvm.call @helper(%z) : (f32) -> f32
  llvm.store %y, %p : f32, !llvm.ptr
  llvm.return
^bb2:
  %z = llvm.call @helper(%x) : (f32) -> f32
  "llvm.br"()[^bb1] : () -> ()
}
"#;

#[test]
fn kernels_are_renamed_clashes_resolved_and_declarations_merged() {
    let linked = link(vec![input(KERNEL, "k0"), input(KERNEL, "helper")]).unwrap();
    linked
        .verify()
        .unwrap_or_else(|e| panic!("{e}\n{}", linked.print()));
    let text = linked.print();
    // Both kernels under their names. The second module's kernel is named `helper`, so its
    // own helper gave way (`helper_1`), and so did the first module's, which met a kernel
    // name (`helper_2`): two renamed helpers, one kernel `@helper`.
    assert!(text.contains("llvm.func @k0("), "{text}");
    assert!(text.contains("llvm.func @helper(%p"), "{text}");
    assert_eq!(
        text.matches("llvm.func @__nv_expf(f32) -> f32").count(),
        1,
        "{text}"
    );
    assert!(text.contains("@shared_0_1"), "{text}");
    assert_eq!(text.matches("llvm.func @helper_").count(), 2, "{text}");
    assert!(!text.contains("@main"), "{text}");
}

#[test]
fn two_kernels_of_one_name_are_refused() {
    let e = link(vec![input(KERNEL, "k"), input(KERNEL, "k")])
        .err()
        .unwrap();
    assert!(e.contains("same name"), "{e}");
}
