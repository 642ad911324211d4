//! `convert-index-type`: `index` arithmetic (`addi`, `subi`, `muli`, `divui`, `remui`) is
//! done in an integer of the module's index width, cast from and back to `index`, as XLA's
//! `ConvertIndexTypePass` does before the LLVM lowering.
//!
//! The width is the module's data layout's (`dlti.dl_spec = #dlti.dl_spec<#dlti.dl_entry<index,
//! 32 : i32>>`, which XLA's emitters set to 32 when every buffer has fewer than 2^31
//! elements), 64 without one. Each op becomes `index_cast` of both operands, the op on the
//! integer type and an `index_cast` back; the canonicalizer then folds casts of constants
//! and cancels a cast back followed by a cast there, so chains of index arithmetic stay in
//! the narrow type and only their result is cast. Other ops on `index` (comparisons, signed
//! division, shifts) and ops on vectors are left alone, as in XLA.
//!
//! The standard pipeline does the same through MLIR's own lowering (`lower-to-llvm` lowers
//! `index` to 32 bits when every shape has fewer than 2^31 elements), so this pass is
//! `hlo-opt`'s, for XLA's IR.

use ir::dialects::arith;
use ir::{Attribute, Builder, Diagnostic, InsertPoint, Module, Type};

use crate::canonicalize::Canonicalize;
use crate::pass::{Pass, op_error};

/// The ops XLA narrows.
const NARROWED: &[&str] = &[
    arith::ADDI,
    arith::SUBI,
    arith::MULI,
    arith::DIVUI,
    arith::REMUI,
];

pub struct ConvertIndexType;

impl Pass for ConvertIndexType {
    crate::pass_names!(
        "convert-index-type",
        "Compute index addi/subi/muli/divui/remui in an integer of the data layout's index width (XLA's ConvertIndexType)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let width = index_width(m)?;
        let narrow = Type::int(width);
        let mut changed = false;
        for &name in NARROWED {
            for op in m.ops_named(name) {
                let (lhs, rhs) = (m.operand(op, 0), m.operand(op, 1));
                let result = m.result(op, 0);
                if ![lhs, rhs, result]
                    .iter()
                    .all(|&v| m.value_type(v).is_index())
                {
                    continue;
                }
                let loc = m.loc(op);
                let mut b = Builder::new(m, InsertPoint::Before(op));
                b.set_loc(loc);
                let l = b.cast(arith::INDEX_CAST, lhs, narrow);
                let r = b.cast(arith::INDEX_CAST, rhs, narrow);
                let n = b.binary(name, l, r);
                let back = b.cast(arith::INDEX_CAST, n, Type::INDEX);
                m.replace_all_uses(result, back);
                m.erase_op(op);
                changed = true;
            }
        }
        if changed {
            Canonicalize::default().run(m)?;
        }
        Ok(())
    }
}

/// The index width of the module's data layout (`#dlti.dl_entry<index, W : iK>`), 64 when it
/// has no entry for `index`.
fn index_width(m: &Module) -> Result<u32, Diagnostic> {
    let Some(spec) = m.attr(m.top(), "dlti.dl_spec") else {
        return Ok(64);
    };
    let entry = match spec {
        Attribute::Opaque(text) => text
            .split("#dlti.dl_entry<")
            .skip(1)
            .find_map(|entry| entry.trim_start().strip_prefix("index")),
        _ => None,
    };
    let Some(entry) = entry else {
        return Ok(64);
    };
    // `, W : iK>`: W must be a value of iK, as MLIR's integer attributes are.
    let width = entry.trim_start().strip_prefix(',').and_then(|rest| {
        let (w, ty) = rest.split_once(':')?;
        let w = w.trim().parse::<u32>().ok()?;
        let bits: u32 = ty
            .trim_start()
            .strip_prefix('i')?
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        (bits > 1 && (bits > 32 || u64::from(w) < 1u64 << (bits - 1))).then_some(w)
    });
    match width {
        Some(w @ 1..=64) => Ok(w),
        _ => Err(op_error(
            m,
            m.top(),
            format!(
                "unsupported: data layout {spec}: expected an index width from 1 to 64 in #dlti.dl_entry<index, W : iK>, or no entry"
            ),
        )),
    }
}
