//! `merge-pointers-to-same-slice`: arguments that are the same buffer slice become one
//! argument, and the others promise LLVM they alias nothing, as XLA's
//! `MergePointersToSameSlicePass` does after `lower-tensors`.
//!
//! XLA marks each buffer argument with the slice it is (`xla.slice_index`); two arguments
//! with one slice (an input that is also the output, an operand passed twice) are one
//! pointer. So, in each function, every argument whose slice an earlier argument has is
//! replaced by that argument; it is removed, with the matching operand of every call of
//! the function (`func.call` and `xla_gpu.pure_call`), except from an entry function (`xla.entry`: its signature is the kernel's
//! launch ABI), where it is only left unused, and except from a declaration (its
//! signature is its definition's: its arguments of one slice stay, without `llvm.noalias`). Then the slice marks go, and each argument
//! that had one gets `llvm.noalias`: no other argument reaches its memory. An argument
//! marked `xla.not_invariant` (written through another name) gets no `llvm.noalias`, and
//! loses one `lower-tensors` gave it.
//!
//! The emitters here give each buffer one argument, so the standard pipeline has no slice
//! marks and no need for this pass: it is `hlo-opt`'s, for XLA's IR.

use ir::dialects::{attr_list, attr_lists_prop, func, xla_gpu};
use ir::intern::FxHashMap;
use ir::{Attribute, Diagnostic, Module, NamedAttr, OpId, Type, Value};

use crate::pass::Pass;

const SLICE_INDEX: &str = "xla.slice_index";
const NOT_INVARIANT: &str = "xla.not_invariant";
const NOALIAS: &str = "llvm.noalias";

pub struct MergePointersToSameSlice;

impl Pass for MergePointersToSameSlice {
    crate::pass_names!(
        "merge-pointers-to-same-slice",
        "Make arguments of one buffer slice one argument and mark the rest llvm.noalias (XLA's MergePointersToSameSlice)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let functions = func::functions(m);
        let merges: FxHashMap<String, Merges> = functions
            .iter()
            .filter_map(|&f| Some((m.symbol_name(f)?.to_string(), Merges::of(m, f))))
            .collect();
        let calls = [func::CALL, xla_gpu::PURE_CALL].map(|name| m.ops_named(name));
        for call in calls.into_iter().flatten() {
            let Some(merges) = m
                .prop(call, "callee")
                .and_then(Attribute::as_symbol)
                .and_then(|callee| merges.get(callee))
            else {
                continue;
            };
            let kept: Vec<Value> = m
                .operands(call)
                .enumerate()
                .filter(|&(i, _)| !merges.erased.get(i).copied().unwrap_or(false))
                .map(|(_, v)| v)
                .collect();
            m.set_operands(call, &kept);
        }
        for f in functions {
            if let Some(merges) = m.symbol_name(f).and_then(|name| merges.get(name)) {
                let merges = merges.clone();
                merge_arguments(m, f, &merges);
            }
        }
        Ok(())
    }
}

/// Which arguments of a function an earlier argument of the same slice replaces.
#[derive(Clone)]
struct Merges {
    /// Argument `i` is replaced by argument `replacement[i]` (itself when kept).
    replacement: Vec<usize>,
    /// Argument `i` is removed (a replaced argument of a function that is not an entry).
    erased: Vec<bool>,
    /// Argument `i` of a declaration shares its slice with another: no `llvm.noalias`.
    aliased: Vec<bool>,
}

impl Merges {
    fn of(m: &Module, f: OpId) -> Merges {
        let arguments = func::function_type(m, f).map_or(0, |(inputs, _)| inputs.len());
        let entry = m.attr(f, "xla.entry").is_some();
        // A declaration's signature is its definition's, elsewhere: nothing is merged.
        let declaration = m.region_blocks(m.region(f, 0)).is_empty();
        let mut first_of_slice: FxHashMap<i128, usize> = FxHashMap::default();
        let mut merges = Merges {
            replacement: (0..arguments).collect(),
            erased: vec![false; arguments],
            aliased: vec![false; arguments],
        };
        for i in 0..arguments {
            let Some(slice) =
                ir::dialects::arg_attr(m, f, i, SLICE_INDEX).and_then(Attribute::as_int)
            else {
                continue;
            };
            match first_of_slice.get(&slice) {
                Some(&first) if declaration => {
                    merges.aliased[first] = true;
                    merges.aliased[i] = true;
                }
                Some(&first) => {
                    merges.replacement[i] = first;
                    merges.erased[i] = !entry;
                }
                None => {
                    first_of_slice.insert(slice, i);
                }
            }
        }
        merges
    }
}

fn merge_arguments(m: &mut Module, f: OpId, merges: &Merges) {
    let Some((inputs, results)) = func::function_type(m, f) else {
        return;
    };
    let mut lists: Vec<Vec<NamedAttr>> = (0..inputs.len())
        .map(|i| attr_list(m, f, "arg_attrs", i))
        .collect();
    if let Some(body) = m.entry_block(m.region(f, 0)) {
        let args = m.block_args(body).to_vec();
        for (i, &r) in merges.replacement.iter().enumerate() {
            if r != i {
                m.replace_all_uses(args[i], args[r]);
            }
        }
        for i in (0..args.len()).rev().filter(|&i| merges.erased[i]) {
            m.erase_block_arg(body, i);
        }
    }
    let mut kept_inputs: Vec<Type> = Vec::new();
    let mut kept_lists = Vec::new();
    for (i, (&ty, mut list)) in inputs.iter().zip(lists.drain(..)).enumerate() {
        if merges.erased[i] {
            continue;
        }
        let had_slice = list.iter().any(|a| a.name.as_str() == SLICE_INDEX);
        if had_slice {
            let not_invariant = list.iter().any(|a| a.name.as_str() == NOT_INVARIANT);
            list.retain(|a| ![SLICE_INDEX, NOT_INVARIANT, NOALIAS].contains(&a.name.as_str()));
            if !not_invariant && !merges.aliased[i] {
                list.push(NamedAttr {
                    name: ir::Ident::new(NOALIAS),
                    value: Attribute::Unit,
                });
            }
            ir::attrs::sort_named(&mut list);
        }
        kept_inputs.push(ty);
        kept_lists.push(list);
    }
    let results = results.to_vec();
    m.set_prop(
        f,
        "function_type",
        Attribute::Type(Type::function(&kept_inputs, &results)),
    );
    match attr_lists_prop(kept_lists) {
        Some(prop) => m.set_prop(f, "arg_attrs", prop),
        None => {
            m.remove_prop(f, "arg_attrs");
        }
    }
}
