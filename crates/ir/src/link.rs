//! Linking: several modules into one, as `llvm-link` does for LLVM IR.
//!
//! The compiler emits and lowers each fusion in a module of its own, whose kernel is the
//! function `@main`. What a user gets is one module per input, with one uniquely named
//! kernel per fusion (PTX has one namespace of entries), so the per-fusion modules are
//! linked: each module's entry is renamed to its kernel name, and the other symbols are
//! merged the way a linker merges them.
//!
//! * A declaration (a function without a body) that the destination already holds with the
//!   same type is dropped: libdevice's `@__nv_expf` is declared once.
//! * Any other symbol whose name is taken (each fusion has a `@shared_0` tile, and a helper
//!   `@a_b` of fusion `a` may meet the kernel of a fusion named `a.b`) is renamed in the
//!   module it comes from, `@name_1`, `@name_2`, ..., with every reference to it. Kernel
//!   names are never renamed: they are unique, and launches find kernels by them.
//! * Ops are deep-copied (regions, blocks, block arguments, successors); the types and
//!   names they use are interned globally, so the copy shares them.

use crate::dialects::func;
use crate::dialects::llvm;
use std::collections::HashSet;

use crate::attrs::{Attribute, NamedAttr, SymbolRef};
use crate::intern::FxHashMap;
use crate::module::{BlockId, InsertPoint, Module, OpId, OpState, RegionId, Value};

/// One module to link, the name of its entry function and the kernel name it takes.
pub struct LinkInput {
    pub module: Module,
    pub entry: String,
    pub kernel: String,
}

/// Links `inputs` into one module: the first one's, which keeps its module attributes (an
/// empty module when there are none). Fails when two kernels have one name or an entry is
/// missing.
pub fn link(inputs: Vec<LinkInput>) -> Result<Module, String> {
    let kernels: HashSet<String> = inputs.iter().map(|i| i.kernel.clone()).collect();
    if kernels.len() != inputs.len() {
        return Err("two kernels of the linked modules have the same name".to_string());
    }
    let mut linked: Option<Module> = None;
    for LinkInput {
        mut module,
        entry,
        kernel,
    } in inputs
    {
        let Some(entry_op) = module.lookup_symbol(module.top(), &entry) else {
            return Err(format!(
                "the module of kernel '{kernel}' has no function @{entry}"
            ));
        };
        // Kernel names are reserved: a symbol that holds one (helpers and tiles are named
        // after fusions too) gives way, so that afterwards holding a kernel name means
        // being that kernel.
        let top_ops: Vec<OpId> = module.block_ops(module.body()).collect();
        for op in top_ops {
            if op != entry_op
                && let Some(name) = module.symbol_name(op).map(str::to_owned)
                && kernels.contains(&name)
            {
                let fresh = fresh_name(&name, |n| taken(&module, linked.as_ref(), n, &kernels));
                rename_symbol(&mut module, op, &fresh);
            }
        }
        rename_symbol(&mut module, entry_op, &kernel);
        match &mut linked {
            None => linked = Some(module),
            Some(dst) => merge_into(dst, module, &kernels),
        }
    }
    // No kernel (a program whose results are all constants): an empty module, which every
    // later stage takes (an empty PTX module is valid for ptxas).
    Ok(linked.unwrap_or_default())
}

/// Moves the top-level ops of `src` into `dst` (see the module comment).
fn merge_into(dst: &mut Module, mut src: Module, kernels: &HashSet<String>) {
    let src_ops: Vec<OpId> = src.block_ops(src.body()).collect();
    let mut dropped = HashSet::new();
    for &op in &src_ops {
        let Some(name) = src.symbol_name(op).map(str::to_owned) else {
            continue;
        };
        let Some(existing) = dst.lookup_symbol(dst.top(), &name) else {
            continue;
        };
        if same_declaration(dst, existing, &src, op) {
            dropped.insert(op);
        } else {
            let fresh = fresh_name(&name, |n| taken(&src, Some(dst), n, kernels));
            rename_symbol(&mut src, op, &fresh);
        }
    }
    let body = dst.body();
    let mut copier = Copier::default();
    for op in src_ops {
        if !dropped.contains(&op) {
            let copy = copy_op(dst, &src, op, &mut copier);
            dst.insert_op(copy, InsertPoint::BlockEnd(body));
        }
    }
}

/// Whether `name` is a kernel's or a symbol's of `m` or `linked`.
fn taken(m: &Module, linked: Option<&Module>, name: &str, kernels: &HashSet<String>) -> bool {
    kernels.contains(name)
        || m.lookup_symbol(m.top(), name).is_some()
        || linked.is_some_and(|l| l.lookup_symbol(l.top(), name).is_some())
}

/// `name_1`, `name_2`, ...: the first that `taken` refuses.
fn fresh_name(name: &str, taken: impl Fn(&str) -> bool) -> String {
    (1..)
        .map(|k| format!("{name}_{k}"))
        .find(|n| !taken(n))
        .expect("an unbounded sequence")
}

/// A function without a body, declared identically (same op, type and attributes) in both.
/// A global without an initializer is a definition (each kernel's shared tile), never
/// merged with another.
fn same_declaration(a: &Module, a_op: OpId, b: &Module, b_op: OpId) -> bool {
    let bodiless =
        |m: &Module, op: OpId| m.regions(op).iter().all(|&r| m.region_blocks(r).is_empty());
    (a.is(a_op, func::FUNC) || a.is(a_op, llvm::FUNC))
        && a.name(a_op) == b.name(b_op)
        && bodiless(a, a_op)
        && bodiless(b, b_op)
        && a.props(a_op) == b.props(b_op)
        && a.attrs(a_op) == b.attrs(b_op)
}

/// Renames the symbol `op` to `new` and every flat reference to it in `m`.
pub fn rename_symbol(m: &mut Module, op: OpId, new: &str) {
    let Some(old) = m.symbol_name(op).map(str::to_owned) else {
        return;
    };
    let rename_in = |attrs: &[NamedAttr]| -> Option<Vec<NamedAttr>> {
        let mut changed = false;
        let renamed = attrs
            .iter()
            .map(|a| {
                let mut a = a.clone();
                if rename_reference(&mut a.value, &old, new) {
                    changed = true;
                }
                a
            })
            .collect();
        changed.then_some(renamed)
    };
    for o in m.collect_ops(m.top()) {
        if let Some(props) = rename_in(m.props(o)) {
            for a in props {
                m.set_prop(o, &a.name.to_string(), a.value);
            }
        }
        if let Some(attrs) = rename_in(m.attrs(o)) {
            for a in attrs {
                m.set_attr(o, &a.name.to_string(), a.value);
            }
        }
    }
    if m.prop(op, "sym_name").is_some() {
        m.set_prop(op, "sym_name", Attribute::String(new.to_owned()));
    } else {
        m.set_attr(op, "sym_name", Attribute::String(new.to_owned()));
    }
}

/// Rewrites references to `@old` inside `a` (also inside arrays and dictionaries).
fn rename_reference(a: &mut Attribute, old: &str, new: &str) -> bool {
    match a {
        Attribute::Symbol(SymbolRef { root, .. }) if root == old => {
            *root = new.to_owned();
            true
        }
        Attribute::Array(items) => items.iter_mut().fold(false, |changed, item| {
            rename_reference(item, old, new) | changed
        }),
        Attribute::Dict(entries) => entries.iter_mut().fold(false, |changed, entry| {
            rename_reference(&mut entry.value, old, new) | changed
        }),
        _ => false,
    }
}

/// What a deep copy from one module into another has mapped so far. A value used before
/// its definition in block order (a branch to a block defined further down) is stood in
/// for by a detached value, replaced when the definition is copied.
#[derive(Default)]
struct Copier {
    values: FxHashMap<Value, Value>,
    pending: FxHashMap<Value, Value>,
    blocks: FxHashMap<BlockId, BlockId>,
}

impl Copier {
    fn operand(&mut self, dst: &mut Module, src: &Module, v: Value) -> Value {
        if let Some(&mapped) = self.values.get(&v) {
            return mapped;
        }
        *self
            .pending
            .entry(v)
            .or_insert_with(|| dst.create_detached_value(src.value_type(v)))
    }

    fn define(&mut self, dst: &mut Module, old: Value, new: Value) {
        if let Some(placeholder) = self.pending.remove(&old) {
            dst.replace_all_uses(placeholder, new);
        }
        self.values.insert(old, new);
    }
}

/// Deep-copies `op` of `src` into a new detached op of `dst`.
fn copy_op(dst: &mut Module, src: &Module, op: OpId, cx: &mut Copier) -> OpId {
    let regions: Vec<RegionId> = src
        .regions(op)
        .iter()
        .map(|&r| copy_region(dst, src, r, cx))
        .collect();
    let operands: Vec<Value> = src.operands(op).map(|v| cx.operand(dst, src, v)).collect();
    let state = OpState {
        name: src.name(op),
        operands,
        result_types: src.result_types(op),
        props: src.props(op).to_vec(),
        attrs: src.attrs(op).to_vec(),
        regions,
        successors: src.successors(op).iter().map(|b| cx.blocks[b]).collect(),
        loc: src.loc(op),
        result_name: None,
    };
    let new = dst.create_op(state);
    for i in 0..src.num_results(op) {
        let (old_v, new_v) = (src.result(op, i), dst.result(new, i));
        dst.set_value_name(new_v, src.value_name(old_v));
        cx.define(dst, old_v, new_v);
    }
    new
}

fn copy_region(dst: &mut Module, src: &Module, from: RegionId, cx: &mut Copier) -> RegionId {
    let to = dst.create_region();
    let blocks = src.region_blocks(from).to_vec();
    for &b in &blocks {
        let args = src.block_args(b).to_vec();
        let nb = dst.create_block(&src.block_arg_types(b));
        for (i, &a) in args.iter().enumerate() {
            let new_a = dst.block_arg(nb, i);
            dst.set_value_name(new_a, src.value_name(a));
            cx.define(dst, a, new_a);
        }
        dst.append_block(to, nb);
        cx.blocks.insert(b, nb);
    }
    for &b in &blocks {
        let nb = cx.blocks[&b];
        for op in src.block_ops(b) {
            let new = copy_op(dst, src, op, cx);
            dst.insert_op(new, InsertPoint::BlockEnd(nb));
        }
    }
    to
}
