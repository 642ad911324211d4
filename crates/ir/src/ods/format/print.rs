//! Printing an op by its format.

use super::{Anchor, Element, Format, TypeOf};
use crate::attrs::Attribute;
use crate::module::OpId;
use crate::ods::enum_case;
use crate::ods::{PropKind, group_ranges};
use crate::printer::Printer;

impl Format {
    /// Writes the op's custom syntax after its name. The op has passed its declared checks
    /// (the printer falls back to the generic form otherwise), so its groups and properties
    /// are as declared.
    pub fn print(&self, p: &mut Printer<'_>, op: OpId) {
        self.print_elements(p, op, &self.elements);
    }

    fn print_elements(&self, p: &mut Printer<'_>, op: OpId, elements: &[Element]) {
        for element in elements {
            self.print_element(p, op, element);
        }
    }

    fn print_element(&self, p: &mut Printer<'_>, op: OpId, element: &Element) {
        let m = p.module();
        let space = |p: &mut Printer<'_>, space: bool| {
            if space {
                p.write(" ");
            }
        };
        match element {
            Element::Literal { text, space: s } => {
                space(p, *s);
                p.write(text);
            }
            Element::Operand { group, space: s } => {
                space(p, *s);
                let range = self.operand_range(p, op, *group);
                p.values(m.operands(op).skip(range.start).take(range.len()));
            }
            Element::AllOperands { space: s } => {
                space(p, *s);
                p.values(m.operands(op));
            }
            Element::Prop { index, space: s } => {
                space(p, *s);
                self.print_prop(p, op, *index);
            }
            Element::Type { of, space: s } => {
                space(p, *s);
                let types = match *of {
                    TypeOf::Operands => m.operand_types(op),
                    TypeOf::Results => m.result_types(op),
                    TypeOf::Operand(g) => {
                        let r = self.operand_range(p, op, g);
                        m.operand_types(op)[r].to_vec()
                    }
                    TypeOf::Result(g) => {
                        let ranges = group_ranges(self.spec.results, m.num_results(op));
                        let r = ranges.and_then(|mut r| r.nth(g)).unwrap_or(0..0);
                        m.result_types(op)[r].to_vec()
                    }
                };
                p.types(types);
            }
            Element::AttrDict => p.attr_dict(op, &self.elided),
            Element::Optional { anchor, then } => {
                if self.present(p, op, *anchor) {
                    self.print_elements(p, op, then);
                }
            }
        }
    }

    fn operand_range(&self, p: &Printer<'_>, op: OpId, group: usize) -> std::ops::Range<usize> {
        let ranges = group_ranges(self.spec.operands, p.module().num_operands(op));
        ranges.and_then(|mut r| r.nth(group)).unwrap_or(0..0)
    }

    fn present(&self, p: &Printer<'_>, op: OpId, anchor: Anchor) -> bool {
        match anchor {
            Anchor::Operand(g) => !self.operand_range(p, op, g).is_empty(),
            Anchor::Prop(index) => {
                let (name, kind) = self.prop_kind(index);
                match (p.module().prop(op, name), kind) {
                    (None, _) => false,
                    (Some(Attribute::Opaque(text)), PropKind::EnumBody { prefix, default }) => {
                        text.strip_prefix(prefix) != Some(default)
                    }
                    (Some(_), _) => true,
                }
            }
        }
    }

    fn print_prop(&self, p: &mut Printer<'_>, op: OpId, index: usize) {
        let (name, kind) = self.prop_kind(index);
        let Some(attr) = p.module().prop(op, name) else {
            return;
        };
        match kind {
            PropKind::Attr => {
                let attr = attr.clone();
                p.attr(&attr);
            }
            PropKind::Index => {
                let v = attr.as_i64().unwrap_or_default();
                p.write_fmt(format_args!("{v}"));
            }
            PropKind::Symbol => {
                let name = attr.as_symbol().unwrap_or_default().to_owned();
                p.symbol(&name);
            }
            PropKind::EnumBody { prefix, .. } => {
                if let Attribute::Opaque(text) = attr {
                    let body = text.strip_prefix(prefix).unwrap_or_default().to_owned();
                    p.write(&body);
                }
            }
            PropKind::EnumCase { open, .. } => {
                let case = enum_case(Some(attr), open).unwrap_or_default().to_owned();
                p.write(" ");
                p.write(&case);
            }
            PropKind::IntEnum { cases } => {
                let case = attr
                    .as_i64()
                    .and_then(|v| usize::try_from(v).ok())
                    .and_then(|v| cases.get(v));
                p.write(case.unwrap_or(&""));
            }
        }
    }
}
