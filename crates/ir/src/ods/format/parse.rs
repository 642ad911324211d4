//! Parsing an op by its format: the elements in order, then the types the text leaves out
//! inferred from the declarations (buildable constraints, type rules), as MLIR's generated
//! parsers do.

use super::{Element, Format, TypeOf};
use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::lexer::Token;
use crate::module::{Loc, OpState};
use crate::ods::{PropKind, TypeRule, enum_attr};
use crate::parser::{Parser, UnresolvedOperand};
use crate::types::Type;

/// What has been read so far: operands and types by group.
struct Parsed<'a> {
    operands: Vec<Vec<UnresolvedOperand<'a>>>,
    operand_types: Vec<Option<Vec<Type>>>,
    result_types: Vec<Option<Vec<Type>>>,
}

impl Format {
    /// Parses the op's custom syntax after its name into `state`.
    pub fn parse<'a>(&self, p: &mut Parser<'a>, state: &mut OpState) -> DResult<()> {
        let loc = p.loc();
        let mut parsed = Parsed {
            operands: vec![Vec::new(); self.spec.operands.len()],
            operand_types: vec![None; self.spec.operands.len()],
            result_types: vec![None; self.spec.results.len()],
        };
        self.parse_elements(p, state, &mut parsed, &self.elements)?;
        self.infer_types(&mut parsed);
        for (i, arg) in self.spec.operands.iter().enumerate() {
            let uses = &parsed.operands[i];
            let types = match &parsed.operand_types[i] {
                Some(types) => types.clone(),
                None if uses.is_empty() => Vec::new(),
                None => {
                    let what = format!("cannot infer the type of operand '{}'", arg.name);
                    return Err(p.error_at(loc, what));
                }
            };
            let at = uses.first().map_or(loc, |u| u.loc);
            let values = p.resolve_operands(uses, &types, at)?;
            state.operands.extend(values);
        }
        for (i, arg) in self.spec.results.iter().enumerate() {
            let Some(types) = &parsed.result_types[i] else {
                let what = format!("cannot infer the type of result '{}'", arg.name);
                return Err(p.error_at(loc, what));
            };
            state.result_types.extend(types);
        }
        Ok(())
    }

    fn parse_elements<'a>(
        &self,
        p: &mut Parser<'a>,
        state: &mut OpState,
        parsed: &mut Parsed<'a>,
        elements: &[Element],
    ) -> DResult<()> {
        for element in elements {
            self.parse_element(p, state, parsed, element)?;
        }
        Ok(())
    }

    fn parse_element<'a>(
        &self,
        p: &mut Parser<'a>,
        state: &mut OpState,
        parsed: &mut Parsed<'a>,
        element: &Element,
    ) -> DResult<()> {
        match element {
            Element::Literal { text, .. } => parse_literal(p, text),
            Element::Operand { group, .. } => {
                parsed.operands[*group] = match self.spec.operands[*group].variadic {
                    true => p.parse_operand_list()?,
                    false => vec![p.parse_operand()?],
                };
                Ok(())
            }
            Element::AllOperands { .. } => {
                let uses = p.parse_operand_list()?;
                self.assign(&mut parsed.operands, uses, p)
            }
            Element::Prop { index, .. } => self.parse_prop(p, state, *index),
            Element::Type { of, .. } => {
                let loc = p.loc();
                let types = match self.is_variadic(*of) {
                    true => p.parse_type_list()?,
                    false => vec![p.parse_type()?],
                };
                self.check_class(p, *of, &types, loc)?;
                match *of {
                    TypeOf::Operand(g) => parsed.operand_types[g] = Some(types),
                    TypeOf::Result(g) => parsed.result_types[g] = Some(types),
                    TypeOf::Operands => {
                        let groups = self.split(types.len(), p)?;
                        for (g, r) in groups.into_iter().enumerate() {
                            parsed.operand_types[g] = Some(types[r].to_vec());
                        }
                    }
                    TypeOf::Results => {
                        let ranges = crate::ods::group_ranges(self.spec.results, types.len());
                        let Some(groups) = ranges else {
                            return Err(p.error("wrong number of result types"));
                        };
                        for (g, r) in groups.into_iter().enumerate() {
                            parsed.result_types[g] = Some(types[r].to_vec());
                        }
                    }
                }
                Ok(())
            }
            Element::AttrDict => p.parse_optional_attr_dict(&mut state.attrs),
            Element::Optional { then, .. } => {
                let Some((first, rest)) = then.split_first() else {
                    return Ok(());
                };
                if self.parse_optional_first(p, state, parsed, first)? {
                    self.parse_elements(p, state, parsed, rest)?;
                }
                Ok(())
            }
        }
    }

    /// Parses the first element of an optional group if it is there; returns whether it was.
    fn parse_optional_first<'a>(
        &self,
        p: &mut Parser<'a>,
        state: &mut OpState,
        parsed: &mut Parsed<'a>,
        first: &Element,
    ) -> DResult<bool> {
        match first {
            Element::Literal { text, .. } => Ok(parse_optional_literal(p, text)),
            Element::Operand { group, .. } => {
                let Some(first) = p.parse_optional_operand()? else {
                    return Ok(false);
                };
                let mut uses = vec![first];
                if self.spec.operands[*group].variadic {
                    while p.parse_optional_punct(b',') {
                        uses.push(p.parse_operand()?);
                    }
                }
                parsed.operands[*group] = uses;
                Ok(true)
            }
            Element::Prop { index, .. } => {
                let PropKind::EnumCase { cases, .. } = self.spec.props[*index].kind else {
                    return Err(p.error(format!("a group cannot start with {first:?}")));
                };
                let starts = matches!(p.peek(), Token::Bare(k) if cases.contains(&k));
                if starts {
                    self.parse_prop(p, state, *index)?;
                }
                Ok(starts)
            }
            _ => Err(p.error(format!("a group cannot start with {first:?}"))),
        }
    }

    /// Rejects a parsed type outside its constraint's class: `invalid kind of type
    /// specified: expected builtin.vector, but found 'f32'`.
    fn check_class(&self, p: &Parser<'_>, of: TypeOf, types: &[Type], loc: Loc) -> DResult<()> {
        let constraint = match of {
            TypeOf::Operand(g) => self.spec.operands[g].constraint,
            TypeOf::Result(g) => self.spec.results[g].constraint,
            TypeOf::Operands | TypeOf::Results => return Ok(()),
        };
        let Some(class) = constraint.class else {
            return Ok(());
        };
        match types.iter().find(|&&t| !(constraint.check)(t)) {
            Some(t) => Err(p.error_at(
                loc,
                format!("invalid kind of type specified: expected {class}, but found '{t}'"),
            )),
            None => Ok(()),
        }
    }

    fn is_variadic(&self, of: TypeOf) -> bool {
        match of {
            TypeOf::Operand(g) => self.spec.operands[g].variadic,
            TypeOf::Result(g) => self.spec.results[g].variadic,
            TypeOf::Operands | TypeOf::Results => true,
        }
    }

    fn split(&self, count: usize, p: &mut Parser<'_>) -> DResult<Vec<std::ops::Range<usize>>> {
        let ranges = crate::ods::group_ranges(self.spec.operands, count);
        ranges.map(Iterator::collect).ok_or_else(|| {
            p.error(format!(
                "{count} operands present, but expected {}",
                self.spec.operands.len()
            ))
        })
    }

    /// Splits the uses of `operands` over the groups.
    fn assign<'a>(
        &self,
        groups: &mut [Vec<UnresolvedOperand<'a>>],
        uses: Vec<UnresolvedOperand<'a>>,
        p: &mut Parser<'a>,
    ) -> DResult<()> {
        let ranges = self.split(uses.len(), p)?;
        for (g, r) in ranges.into_iter().enumerate() {
            groups[g] = uses[r].to_vec();
        }
        Ok(())
    }

    fn parse_prop(&self, p: &mut Parser<'_>, state: &mut OpState, index: usize) -> DResult<()> {
        let (name, kind) = self.prop_kind(index);
        let loc = p.loc();
        let attr = match kind {
            PropKind::Attr => p.parse_attribute()?,
            PropKind::Index => {
                let v = p.parse_integer()?;
                let v = i64::try_from(v).map_err(|_| p.error_at(loc, "integer out of range"))?;
                Attribute::index(v)
            }
            PropKind::Symbol => Attribute::symbol(p.parse_symbol_name()?),
            PropKind::EnumBody { prefix, .. } => {
                let body = p.parse_balanced()?;
                Attribute::Opaque(format!("{prefix}{body}"))
            }
            PropKind::EnumCase {
                open,
                cases,
                cpp_name,
            } => {
                let case = p.parse_optional_any_keyword().filter(|c| cases.contains(c));
                let Some(case) = case else {
                    let all = cases.join(", ");
                    let what = format!("expected {cpp_name} to be one of: {all}");
                    return Err(p.error_at(loc, what));
                };
                enum_attr(open, case)
            }
            PropKind::IntEnum { cases } => {
                let kw = p.parse_any_keyword()?;
                let Some(v) = cases.iter().position(|&c| c == kw) else {
                    return Err(p.error_at(loc, format!("invalid {name} '{kw}'")));
                };
                Attribute::i64(v as i64)
            }
        };
        attrs::set_named(&mut state.props, Ident::new(name), attr);
        Ok(())
    }

    /// Fills in the types the text leaves out: buildable constraints first, then the type
    /// rules until nothing changes.
    fn infer_types(&self, parsed: &mut Parsed<'_>) {
        for (g, arg) in self.spec.operands.iter().enumerate() {
            if let (None, Some(t)) = (&parsed.operand_types[g], arg.constraint.buildable) {
                parsed.operand_types[g] = Some(vec![t; parsed.operands[g].len()]);
            }
        }
        for (g, arg) in self.spec.results.iter().enumerate() {
            if let (None, Some(t), false) = (
                &parsed.result_types[g],
                arg.constraint.buildable,
                arg.variadic,
            ) {
                parsed.result_types[g] = Some(vec![t]);
            }
        }
        let mut changed = true;
        while changed {
            changed = false;
            for rule in self.spec.rules {
                changed |= self.apply(rule, parsed);
            }
        }
    }

    /// Applies one type rule forward; returns whether it filled anything in.
    fn apply(&self, rule: &TypeRule, parsed: &mut Parsed<'_>) -> bool {
        match *rule {
            TypeRule::AllSame => {
                let known = parsed
                    .operand_types
                    .iter()
                    .chain(&parsed.result_types)
                    .flatten()
                    .find_map(|ts| ts.first().copied());
                let Some(t) = known else {
                    return false;
                };
                let mut changed = false;
                for (g, types) in parsed.operand_types.iter_mut().enumerate() {
                    if types.is_none() {
                        *types = Some(vec![t; parsed.operands[g].len()]);
                        changed = true;
                    }
                }
                for types in &mut parsed.result_types {
                    if types.is_none() {
                        *types = Some(vec![t]);
                        changed = true;
                    }
                }
                changed
            }
            TypeRule::Derived {
                from, to, derive, ..
            } => {
                let Some(source) = self.known(parsed, from) else {
                    return false;
                };
                let Some(t) = derive(source) else {
                    return false;
                };
                let slot = match (self.spec.operand_group(to), self.spec.result_group(to)) {
                    (Some(g), _) => &mut parsed.operand_types[g],
                    (None, Some(g)) => &mut parsed.result_types[g],
                    _ => return false,
                };
                if slot.is_some() {
                    return false;
                }
                *slot = Some(vec![t]);
                true
            }
        }
    }

    /// The one known type of the group `name`.
    fn known(&self, parsed: &Parsed<'_>, name: &str) -> Option<Type> {
        let types = match (self.spec.operand_group(name), self.spec.result_group(name)) {
            (Some(g), _) => parsed.operand_types[g].as_ref(),
            (None, Some(g)) => parsed.result_types[g].as_ref(),
            _ => None,
        }?;
        types.first().copied()
    }
}

fn parse_literal(p: &mut Parser<'_>, text: &str) -> DResult<()> {
    match text.as_bytes() {
        [] => Ok(()),
        b"->" => p.parse_arrow(),
        [c] if !c.is_ascii_alphabetic() => p.parse_punct(*c),
        _ => p.parse_keyword(text),
    }
}

fn parse_optional_literal(p: &mut Parser<'_>, text: &str) -> bool {
    match text.as_bytes() {
        [] => true,
        b"->" => p.parse_optional_arrow(),
        [c] if !c.is_ascii_alphabetic() => p.parse_optional_punct(*c),
        _ => p.parse_optional_keyword(text),
    }
}
