//! `builtin.module` and `builtin.unrealized_conversion_cast`.

use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::module::{OpId, OpState};
use crate::ods::constraints::ANY;
use crate::ods::variadic;
use crate::parser::Parser;
use crate::printer::Printer;
use crate::registry::{OpDef, Registry};
use crate::traits::Traits;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const MODULE: &str = "builtin.module";
pub const UNREALIZED_CONVERSION_CAST: &str = "builtin.unrealized_conversion_cast";

pub fn register(r: &mut Registry) {
    r.register(
        OpDef::new(MODULE)
            .traits(
                Traits::ISOLATED_FROM_ABOVE
                    .union(Traits::NO_TERMINATOR)
                    .union(Traits::SYMBOL_TABLE)
                    .union(Traits::GRAPH_REGION)
                    .union(Traits::SINGLE_BLOCK),
            )
            .inherent(&["sym_name", "sym_visibility"])
            .regions(1)
            .default_dialect("builtin")
            .syntax(print_module, parse_module_op),
    );
    // MLIR's cast between type systems during a conversion (XLA's tests write it): read,
    // verified and printed; no pass of ours makes or removes it, and lowering refuses it.
    r.register(CAST);
}

const CAST: OpDef = OpDef::pure(UNREALIZED_CONVERSION_CAST)
    .operands(&[variadic("inputs", &ANY)])
    .results(&[variadic("outputs", &ANY)])
    .format("($inputs^ `:` type($inputs))? `to` type($outputs) attr-dict");

/// `module @name attributes {..} { ... }`
fn print_module(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    if let Some(name) = m.prop(op, "sym_name").and_then(Attribute::as_str) {
        p.write(" ");
        p.symbol(name);
    }
    p.attr_dict_with_keyword(op, &["sym_name"]);
    p.write(" ");
    p.region(m.region(op, 0), false, false);
}

fn parse_module_op(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    if let crate::lexer::Token::At(_) | crate::lexer::Token::AtString(_) = p.peek() {
        let name = p.parse_symbol_name()?;
        attrs::set_named(
            &mut state.props,
            Ident::new("sym_name"),
            Attribute::String(name),
        );
    }
    p.parse_optional_attr_dict_with_keyword(&mut state.attrs)?;
    let region = p.parse_region(&[])?;
    let m = p.module_mut();
    if m.region_blocks(region).is_empty() {
        let block = m.create_block(&[]);
        m.append_block(region, block);
    }
    state.regions.push(region);
    Ok(())
}
