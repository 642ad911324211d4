//! The checks an op's declaration implies, with MLIR's wording: group counts, type
//! constraints, properties, type rules.

use super::{OpSpec, PropKind, TypeRule, enum_case, group_ranges};
use crate::attrs::Attribute;
use crate::module::{Module, OpId};
use crate::types::Type;

/// Checks `op` against its declaration; the message becomes `'<op name>' op <message>`.
pub fn verify_declared(spec: &OpSpec, m: &Module, op: OpId) -> Result<(), String> {
    let (num_operands, num_results) = (m.num_operands(op), m.num_results(op));
    let Some(operand_groups) = group_ranges(spec.operands, num_operands) else {
        return Err(count_error(spec.operands, num_operands, "operands"));
    };
    let Some(result_groups) = group_ranges(spec.results, num_results) else {
        return Err(
            match (spec.results.iter().any(|r| r.variadic), spec.results.len()) {
                (false, 0) => "requires zero results".to_owned(),
                (false, 1) => "requires one result".to_owned(),
                _ => count_error(spec.results, num_results, "results"),
            },
        );
    };
    let operand_type = |i: usize| m.value_type(m.operand(op, i));
    let result_type = |i: usize| m.value_type(m.result(op, i));
    for (arg, range) in spec.operands.iter().zip(operand_groups.clone()) {
        check_group("operand", arg, range, operand_type)?;
    }
    for (arg, range) in spec.results.iter().zip(result_groups.clone()) {
        check_group("result", arg, range, result_type)?;
    }
    for prop in spec.props {
        match m.prop(op, prop.name) {
            None if prop.required => {
                return Err(match prop.kind {
                    PropKind::IntEnum { .. } => {
                        format!("requires a valid '{}' attribute", prop.name)
                    }
                    _ => format!("requires attribute '{}'", prop.name),
                });
            }
            None => {}
            Some(attr) => check_prop(prop.name, prop.kind, attr)?,
        }
    }
    let group_type = |name: &str| -> Option<Type> {
        if let Some(g) = spec.operand_group(name) {
            return operand_groups.clone().nth(g)?.next().map(operand_type);
        }
        let g = spec.result_group(name)?;
        result_groups.clone().nth(g)?.next().map(result_type)
    };
    for rule in spec.rules {
        match *rule {
            TypeRule::AllSame => {
                let mut all = (0..num_operands)
                    .map(operand_type)
                    .chain((0..num_results).map(result_type));
                let Some(first) = all.next() else {
                    return Err("requires at least one operand or result".into());
                };
                if all.any(|t| t != first) {
                    return Err("requires the same type for all operands and results".into());
                }
            }
            TypeRule::Derived {
                from,
                to,
                derive,
                message,
            } => {
                let (Some(source), Some(found)) = (group_type(from), group_type(to)) else {
                    continue;
                };
                if derive(source) != Some(found) {
                    return Err(message
                        .replace("{to}", &found.to_string())
                        .replace("{from}", &source.to_string()));
                }
            }
        }
    }
    Ok(())
}

/// Every value of a group meets its constraint: `operand #1 must be index, but got 'f32'`.
fn check_group(
    kind: &str,
    arg: &super::Arg,
    range: std::ops::Range<usize>,
    type_of: impl Fn(usize) -> Type,
) -> Result<(), String> {
    for i in range {
        let t = type_of(i);
        if !(arg.constraint.check)(t) {
            let variadic = if arg.variadic { "variadic of " } else { "" };
            let summary = arg.constraint.summary;
            return Err(format!(
                "{kind} #{i} must be {variadic}{summary}, but got '{t}'"
            ));
        }
    }
    Ok(())
}

/// `expected 2 operands, but found 3`, or `expected 1 or more operands, ...` with a variadic
/// group.
fn count_error(groups: &[super::Arg], found: usize, what: &str) -> String {
    let fixed = groups.iter().filter(|g| !g.variadic).count();
    let more = if groups.iter().any(|g| g.variadic) {
        " or more"
    } else {
        ""
    };
    format!("expected {fixed}{more} {what}, but found {found}")
}

fn check_prop(name: &str, kind: PropKind, attr: &Attribute) -> Result<(), String> {
    let ok = match kind {
        PropKind::Attr => true,
        PropKind::Index => matches!(attr, Attribute::Int(_, t) if t.is_index()),
        PropKind::Symbol => attr.as_symbol().is_some(),
        PropKind::EnumBody { prefix, .. } => {
            matches!(attr, Attribute::Opaque(text) if text.starts_with(prefix))
        }
        PropKind::EnumCase { open, cases, .. } => {
            if !enum_case(Some(attr), open).is_some_and(|c| cases.contains(&c)) {
                return Err(format!(
                    "attribute '{name}' must be one of: {}",
                    cases.join(", ")
                ));
            }
            true
        }
        PropKind::IntEnum { cases } => {
            if !attr
                .as_i64()
                .is_some_and(|v| usize::try_from(v).is_ok_and(|v| v < cases.len()))
            {
                return Err(format!("requires a valid '{name}' attribute"));
            }
            true
        }
    };
    if ok {
        return Ok(());
    }
    let what = match kind {
        PropKind::Index => "index attribute".to_owned(),
        PropKind::Symbol => "flat symbol reference attribute".to_owned(),
        PropKind::EnumBody { prefix, .. } => format!("{prefix} attribute"),
        _ => "attribute".to_owned(),
    };
    Err(format!(
        "attribute '{name}' failed to satisfy constraint: {what}"
    ))
}
