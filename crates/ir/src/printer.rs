//! Printing in MLIR syntax: the generic form (`"arith.addf"(%a, %b) : (f32, f32) -> f32`,
//! what `mlir-opt --mlir-print-op-generic` prints) for every op, and each registered op's
//! custom form (`arith.addf %a, %b : f32`) otherwise.
//!
//! SSA names are assigned before printing, like MLIR's `SSANameState`: a value keeps its name
//! hint (`%thread_id_x`, from the builder or the parsed text) or the op's default hint
//! (`%cst`, `%c0`), made unique with `_N` suffixes; other results are numbered `%0, %1, ...`
//! and entry block arguments `%arg0, ...`, restarting inside every op that is isolated from
//! above (each function). Names may repeat in sibling regions, as in MLIR. Affine and
//! indexing maps are hoisted into `#map`, `#map1`, ... aliases at the top, for those the text
//! shows (not a map a custom printer leaves out).

use crate::attrs::{self, Attribute, NamedAttr};
use crate::intern::{FxHashMap, FxHashSet};
use crate::module::{BlockId, Module, OpId, RegionId, Value, ValueDef};
use crate::traits::Traits;
use crate::types::Type;
use crate::verifier::VerifyCx;
use std::cell::RefCell;
use std::fmt::Write;

/// How to print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrintOptions {
    /// Print every op in generic form.
    pub generic: bool,
}

#[derive(Clone, Debug)]
enum Name {
    None,
    Num(u32),
    Arg(u32),
    Text(Box<str>),
}

/// The printer state handed to custom op printers.
pub struct Printer<'m> {
    module: &'m Module,
    out: String,
    indent: usize,
    generic: bool,
    names: Vec<Name>,
    block_names: Vec<u32>,
    aliases: FxHashMap<Attribute, String>,
    /// The aliased attributes written so far (custom printers leave some out, such as a
    /// transfer's default permutation map; MLIR defines aliases only for what it prints).
    used_aliases: RefCell<FxHashSet<Attribute>>,
    default_dialect: Vec<&'static str>,
    verify_cx: VerifyCx<'m>,
}

/// Whether an attribute is hoisted into a `#map` alias.
fn is_aliased(a: &Attribute) -> bool {
    match a {
        Attribute::IndexingMap(_) => true,
        Attribute::Opaque(t) => t.starts_with("affine_map<"),
        _ => false,
    }
}

struct Namer<'a> {
    module: &'a Module,
    names: &'a mut Vec<Name>,
    block_names: &'a mut Vec<u32>,
    next_value: u32,
    next_arg: u32,
    next_conflict: u32,
    used: FxHashSet<Box<str>>,
    undo: Vec<Box<str>>,
}

impl Namer<'_> {
    fn unique(&mut self, hint: &str) -> Box<str> {
        let name: Box<str> = if !self.used.contains(hint) {
            hint.into()
        } else {
            loop {
                let candidate = format!("{hint}_{}", self.next_conflict);
                self.next_conflict += 1;
                if !self.used.contains(candidate.as_str()) {
                    break candidate.into_boxed_str();
                }
            }
        };
        self.used.insert(name.clone());
        self.undo.push(name.clone());
        name
    }

    fn name_value(&mut self, v: Value, hint: Option<&str>, arg: bool) {
        let name = match hint {
            Some(h) => Name::Text(self.unique(h)),
            None if arg => {
                self.next_arg += 1;
                Name::Arg(self.next_arg - 1)
            }
            None => {
                self.next_value += 1;
                Name::Num(self.next_value - 1)
            }
        };
        self.names[v.index()] = name;
    }

    fn name_op_regions(&mut self, op: OpId) {
        let m = self.module;
        let isolated = m
            .op_def(op)
            .is_some_and(|d| d.has(Traits::ISOLATED_FROM_ABOVE));
        let saved = if isolated {
            let s = (
                self.next_value,
                self.next_arg,
                self.next_conflict,
                std::mem::take(&mut self.used),
                std::mem::take(&mut self.undo),
            );
            self.next_value = 0;
            self.next_arg = 0;
            self.next_conflict = 0;
            Some(s)
        } else {
            None
        };
        for &region in m.regions(op) {
            let mark = self.undo.len();
            for (bi, &block) in m.region_blocks(region).iter().enumerate() {
                self.block_names[block.index()] = bi as u32;
                let entry = bi == 0;
                for &a in m.block_args(block) {
                    self.name_value(a, m.value_name(a), entry);
                }
            }
            for &block in m.region_blocks(region) {
                for o in m.block_ops(block) {
                    if m.num_results(o) > 0 {
                        let r0 = m.result(o, 0);
                        let hint = m.value_name(r0).map(str::to_owned).or_else(|| {
                            m.op_def(o).and_then(|d| d.name_hint).and_then(|h| h(m, o))
                        });
                        self.name_value(r0, hint.as_deref(), false);
                    }
                    if !m.regions(o).is_empty() {
                        self.name_op_regions(o);
                    }
                }
            }
            for name in self.undo.drain(mark..) {
                self.used.remove(&name);
            }
        }
        if let Some((nv, na, nc, used, undo)) = saved {
            self.next_value = nv;
            self.next_arg = na;
            self.next_conflict = nc;
            self.used = used;
            self.undo = undo;
        }
    }
}

impl<'m> Printer<'m> {
    /// A printer for `root`; with `only`, aliases are defined just for those attributes.
    fn new(
        module: &'m Module,
        root: OpId,
        options: PrintOptions,
        only: Option<&FxHashSet<Attribute>>,
    ) -> Printer<'m> {
        let mut names = vec![Name::None; module.value_capacity()];
        let mut block_names = vec![u32::MAX; module.block_capacity()];
        let mut namer = Namer {
            module,
            names: &mut names,
            block_names: &mut block_names,
            next_value: 0,
            next_arg: 0,
            next_conflict: 0,
            used: FxHashSet::default(),
            undo: Vec::new(),
        };
        if module.num_results(root) > 0 {
            let r0 = module.result(root, 0);
            namer.name_value(r0, module.value_name(r0), false);
        }
        namer.name_op_regions(root);
        let mut p = Printer {
            module,
            out: String::new(),
            indent: 0,
            generic: options.generic,
            names,
            block_names,
            aliases: FxHashMap::default(),
            used_aliases: RefCell::default(),
            default_dialect: vec!["builtin"],
            verify_cx: VerifyCx::new(module),
        };
        p.collect_aliases(root, only);
        p
    }

    fn collect_aliases(&mut self, root: OpId, only: Option<&FxHashSet<Attribute>>) {
        fn visit(a: &Attribute, found: &mut Vec<Attribute>, seen: &mut FxHashSet<Attribute>) {
            match a {
                _ if is_aliased(a) && seen.insert(a.clone()) => found.push(a.clone()),
                _ if is_aliased(a) => {}
                Attribute::Array(items) => items.iter().for_each(|i| visit(i, found, seen)),
                Attribute::Dict(entries) => {
                    entries.iter().for_each(|e| visit(&e.value, found, seen))
                }
                _ => {}
            }
        }
        let m = self.module;
        let mut found = Vec::new();
        let mut seen = FxHashSet::default();
        m.walk(root, |op| {
            for e in m.props(op).iter().chain(m.attrs(op)) {
                visit(&e.value, &mut found, &mut seen);
            }
        });
        found.retain(|a| only.is_none_or(|only| only.contains(a)));
        for (i, a) in found.into_iter().enumerate() {
            let name = if i == 0 {
                "map".to_owned()
            } else {
                format!("map{i}")
            };
            self.out.push('#');
            self.out.push_str(&name);
            self.out.push_str(" = ");
            attrs::write_attr(&mut self.out, &a, false, None);
            self.out.push('\n');
            self.aliases.insert(a, name);
        }
    }

    /// The module being printed.
    pub fn module(&self) -> &'m Module {
        self.module
    }

    /// Whether everything is printed in generic form.
    pub fn is_generic(&self) -> bool {
        self.generic
    }

    /// Appends raw text.
    pub fn write(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// Appends formatted text.
    pub fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(args);
    }

    fn write_name(&mut self, v: Value) {
        match &self.names[v.index()] {
            Name::None => {
                let _ = write!(self.out, "<<UNKNOWN SSA VALUE {}>>", v.index());
            }
            Name::Num(n) => {
                let _ = write!(self.out, "{n}");
            }
            Name::Arg(n) => {
                let _ = write!(self.out, "arg{n}");
            }
            Name::Text(t) => self.out.push_str(t),
        }
    }

    /// Writes a value use: `%name` or `%name#2` for a result of a multi-result op.
    pub fn value(&mut self, v: Value) {
        self.out.push('%');
        match self.module.value_def(v) {
            ValueDef::Result { op, index } if self.module.num_results(op) > 1 => {
                self.write_name(self.module.result(op, 0));
                let _ = write!(self.out, "#{index}");
            }
            _ => self.write_name(v),
        }
    }

    /// Writes each item with `write`, separated by `, ` (MLIR's comma-separated lists).
    pub fn comma_separated<T>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        mut write: impl FnMut(&mut Self, T),
    ) {
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            write(self, item);
        }
    }

    /// Writes values separated by `, `.
    pub fn values(&mut self, vs: impl IntoIterator<Item = Value>) {
        self.comma_separated(vs, Self::value);
    }

    /// Writes an argument declaration `%name: type`.
    pub fn arg_decl(&mut self, v: Value) {
        self.value(v);
        self.out.push_str(": ");
        self.ty(self.module.value_type(v));
    }

    pub fn ty(&mut self, t: Type) {
        let _ = write!(self.out, "{t}");
    }

    /// Writes types separated by `, `.
    pub fn types(&mut self, ts: impl IntoIterator<Item = Type>) {
        self.comma_separated(ts, Self::ty);
    }

    /// Writes a function-result type list: `f32` or `(f32, i1)` or `()`.
    pub fn result_types(&mut self, ts: &[Type]) {
        if let [t] = ts
            && t.function_parts().is_none()
        {
            self.ty(*t);
            return;
        }
        self.out.push('(');
        self.types(ts.iter().copied());
        self.out.push(')');
    }

    /// The alias of `a` (recorded as used), if it has one.
    fn alias<'s>(
        aliases: &'s FxHashMap<Attribute, String>,
        used: &RefCell<FxHashSet<Attribute>>,
        a: &Attribute,
    ) -> Option<&'s str> {
        if !is_aliased(a) {
            return None;
        }
        let name = aliases.get(a)?;
        used.borrow_mut().insert(a.clone());
        Some(name)
    }

    /// Writes an attribute (with `#map` aliases).
    pub fn attr(&mut self, a: &Attribute) {
        let (aliases, used) = (&self.aliases, &self.used_aliases);
        let lookup = |a: &Attribute| Printer::alias(aliases, used, a);
        attrs::write_attr(&mut self.out, a, false, Some(&lookup));
    }

    fn dict(&mut self, entries: &[NamedAttr]) {
        let (aliases, used) = (&self.aliases, &self.used_aliases);
        let lookup = |a: &Attribute| Printer::alias(aliases, used, a);
        attrs::write_dict(&mut self.out, entries, Some(&lookup));
    }

    /// Writes ` {..}` with the op's discardable attributes and the properties not in `elided`
    /// (nothing if empty).
    pub fn attr_dict(&mut self, op: OpId, elided: &[&str]) {
        let entries = self.remaining_attrs(op, elided);
        if !entries.is_empty() {
            self.out.push(' ');
            self.dict(&entries);
        }
    }

    /// Writes ` attributes {..}` like [`Printer::attr_dict`] (for ops with regions).
    pub fn attr_dict_with_keyword(&mut self, op: OpId, elided: &[&str]) {
        let entries = self.remaining_attrs(op, elided);
        if !entries.is_empty() {
            self.out.push_str(" attributes ");
            self.dict(&entries);
        }
    }

    fn remaining_attrs(&self, op: OpId, elided: &[&str]) -> Vec<NamedAttr> {
        let m = self.module;
        let mut entries: Vec<NamedAttr> = m
            .props(op)
            .iter()
            .chain(m.attrs(op))
            .filter(|e| !elided.contains(&e.name.as_str()))
            .cloned()
            .collect();
        attrs::sort_named(&mut entries);
        entries
    }

    /// Writes a dictionary attribute's entries as `{..}` (for argument attributes).
    pub fn dict_attr(&mut self, entries: &[NamedAttr]) {
        self.dict(entries);
    }

    /// Writes `@name`.
    pub fn symbol(&mut self, name: &str) {
        attrs::write_symbol_name(&mut self.out, name);
    }

    /// Writes `^bbN`.
    pub fn block_name(&mut self, b: BlockId) {
        let _ = write!(self.out, "^bb{}", self.block_names[b.index()]);
    }

    fn newline(&mut self) {
        self.out.push('\n');
    }

    /// Starts a new line at the current op's indentation (MLIR's `printNewline`), for
    /// custom printers that spread an op over several lines.
    pub fn line_break(&mut self) {
        self.newline();
        self.write_indent(self.indent);
    }

    fn write_indent(&mut self, n: usize) {
        for _ in 0..n {
            self.out.push(' ');
        }
    }

    /// Writes a region `{ ... }`. Entry block arguments are printed in a block header only with
    /// `print_entry_args` (custom printers print them themselves); with `print_terminators`
    /// false, a trailing terminator without operands or attributes is left out (MLIR's
    /// implicit terminators).
    pub fn region(&mut self, r: RegionId, print_entry_args: bool, print_terminators: bool) {
        self.region_impl(r, print_entry_args, print_terminators, false);
    }

    fn region_impl(
        &mut self,
        r: RegionId,
        print_entry_args: bool,
        print_terminators: bool,
        print_empty_block: bool,
    ) {
        let m = self.module;
        self.out.push('{');
        self.newline();
        let blocks = m.region_blocks(r);
        if let Some((&entry, rest)) = blocks.split_first() {
            let dialect = m
                .region_parent_op(r)
                .and_then(|op| m.op_def(op))
                .and_then(|d| d.default_dialect)
                .unwrap_or("");
            self.default_dialect.push(dialect);
            let header = (print_empty_block && m.block_is_empty(entry))
                || (print_entry_args && !m.block_args(entry).is_empty());
            self.block(entry, header, print_terminators);
            for &b in rest {
                self.block(b, true, true);
            }
            self.default_dialect.pop();
        }
        self.write_indent(self.indent);
        self.out.push('}');
    }

    fn block(&mut self, b: BlockId, header: bool, print_terminators: bool) {
        let m = self.module;
        if header {
            self.write_indent(self.indent);
            self.block_name(b);
            let args = m.block_args(b);
            if !args.is_empty() {
                self.out.push('(');
                self.comma_separated(args.iter().copied(), Self::arg_decl);
                self.out.push(')');
            }
            self.out.push(':');
            self.pred_comment(b);
            self.newline();
        }
        let skip = if print_terminators {
            None
        } else {
            m.last_op(b).filter(|&t| self.is_implicit_terminator(t))
        };
        self.indent += 2;
        for op in m.block_ops(b) {
            if Some(op) == skip {
                continue;
            }
            self.op(op);
            self.newline();
        }
        self.indent -= 2;
    }

    fn is_implicit_terminator(&self, op: OpId) -> bool {
        let m = self.module;
        m.op_def(op).is_some_and(|d| d.has(Traits::TERMINATOR))
            && m.num_operands(op) == 0
            && m.num_results(op) == 0
            && m.props(op).is_empty()
            && m.attrs(op).is_empty()
            && m.regions(op).is_empty()
            && m.successors(op).is_empty()
    }

    fn pred_comment(&mut self, b: BlockId) {
        let m = self.module;
        let Some(region) = m.block_parent_region(b) else {
            return;
        };
        let mut preds = Vec::new();
        for &pb in m.region_blocks(region) {
            if let Some(t) = m.last_op(pb) {
                for &s in m.successors(t) {
                    if s == b {
                        preds.push(pb);
                    }
                }
            }
        }
        if preds.is_empty() {
            if !m.is_entry_block(b) {
                self.out.push_str("  // no predecessors");
            }
            return;
        }
        preds.sort_by_key(|p| self.block_names[p.index()]);
        if preds.len() == 1 {
            self.out.push_str("  // pred: ");
            self.block_name(preds[0]);
        } else {
            let _ = write!(self.out, "  // {} preds: ", preds.len());
            self.comma_separated(preds, Self::block_name);
        }
    }

    /// Writes one op (without indentation of the first line or a trailing newline handled by
    /// the caller's block loop).
    fn op(&mut self, op: OpId) {
        let m = self.module;
        self.write_indent(self.indent);
        let n = m.num_results(op);
        if n > 0 {
            self.out.push('%');
            self.write_name(m.result(op, 0));
            if n > 1 {
                let _ = write!(self.out, ":{n}");
            }
            self.out.push_str(" = ");
        }
        let custom = if self.generic {
            None
        } else {
            // Like MLIR, ops that fail their own checks print in generic form (custom
            // printers may rely on the op's invariants).
            m.op_def(op).filter(|d| {
                d.has_custom_syntax()
                    && d.accepts_regions(m.regions(op).len())
                    && d.check(&self.verify_cx, op).is_ok()
            })
        };
        match custom {
            Some(def) => {
                let name = m.name(op).as_str();
                let dialect = *self.default_dialect.last().unwrap_or(&"");
                let short = name
                    .strip_prefix(dialect)
                    .and_then(|rest| rest.strip_prefix('.'))
                    .filter(|rest| !dialect.is_empty() && !rest.contains('.'));
                self.out.push_str(short.unwrap_or(name));
                def.print_custom(self, op);
            }
            None => self.generic_op(op),
        }
    }

    /// Writes `op` in generic form (after its results).
    pub fn generic_op(&mut self, op: OpId) {
        let m = self.module;
        attrs::write_escaped_string(&mut self.out, m.name(op).as_str());
        self.out.push('(');
        self.values(m.operands(op));
        self.out.push(')');
        let succs = m.successors(op);
        if !succs.is_empty() {
            self.out.push('[');
            self.comma_separated(succs.iter().copied(), Self::block_name);
            self.out.push(']');
        }
        if !m.props(op).is_empty() {
            self.out.push_str(" <");
            self.dict(m.props(op));
            self.out.push('>');
        }
        let regions = m.regions(op);
        if !regions.is_empty() {
            self.out.push_str(" (");
            self.comma_separated(regions.iter().copied(), |p, r| {
                p.region_impl(r, true, true, true)
            });
            self.out.push(')');
        }
        if !m.attrs(op).is_empty() {
            self.out.push(' ');
            self.dict(m.attrs(op));
        }
        self.out.push_str(" : (");
        self.types(m.operands(op).map(|v| m.value_type(v)));
        self.out.push_str(") -> ");
        self.result_types(&m.result_types(op));
    }

    /// Prints `root`; also returns the aliased attributes written when some alias defined at
    /// the top went unused.
    fn finish(mut self, root: OpId) -> (String, Option<FxHashSet<Attribute>>) {
        self.op(root);
        self.newline();
        let used = self.used_aliases.into_inner();
        let unused = (used.len() < self.aliases.len()).then_some(used);
        (self.out, unused)
    }
}

impl Module {
    /// Prints the module with the given options.
    pub fn print_with(&self, options: PrintOptions) -> String {
        self.print_op_with(self.top(), options)
    }

    /// Prints one op (and what is nested in it) on its own, numbering values from scratch;
    /// values defined outside it print as `<<UNKNOWN SSA VALUE N>>`. For debugging.
    pub fn print_op_with(&self, op: OpId, options: PrintOptions) -> String {
        match Printer::new(self, op, options, None).finish(op) {
            (text, None) => text,
            // Again, with only the aliases that are used (numbered without gaps).
            (_, Some(used)) => Printer::new(self, op, options, Some(&used)).finish(op).0,
        }
    }

    /// [`Module::print_op_with`] in custom form.
    pub fn print_op(&self, op: OpId) -> String {
        self.print_op_with(op, PrintOptions::default())
    }

    /// Prints the module with custom syntax where registered.
    pub fn print(&self) -> String {
        self.print_with(PrintOptions::default())
    }

    /// Prints the module in generic form.
    pub fn print_generic(&self) -> String {
        self.print_with(PrintOptions { generic: true })
    }
}

impl std::fmt::Display for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.print())
    }
}
