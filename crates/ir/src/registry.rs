//! The op registry: what the core knows about an op name (traits, inherent attributes, region
//! count) and the hooks that give it MLIR's custom syntax and verification rules.
//!
//! Dialects are plain functions that add [`OpDef`]s to a [`Registry`]; later crates extend a
//! registry with their own dialects (`gpu`, `xla_gpu`, `llvm`, ...) without touching the core.
//! Ops that are not registered still parse, print (in generic form) and pass through the
//! verifier's structural checks, like MLIR's unregistered ops.

use crate::diag::DResult;
use crate::intern::{FxHashMap, Ident};
use crate::module::{Module, OpId, OpState};
use crate::ods::format::{Format, compile};
use crate::ods::{Arg, OpSpec, Prop, TypeRule, verify_declared};
use crate::parser::Parser;
use crate::printer::Printer;
use crate::traits::Traits;
use crate::verifier::VerifyCx;
use std::sync::Arc;

/// Prints an op's custom syntax after its name (`%0 = arith.addf` is already written).
pub type PrintFn = fn(&mut Printer<'_>, OpId);
/// Parses an op's custom syntax after its name into `state` (operands, result types,
/// attributes, regions).
pub type ParseFn = fn(&mut Parser<'_>, &mut OpState) -> DResult<()>;
/// Checks op-specific rules; the message becomes `'<op name>' op <message>`.
pub type VerifyFn = fn(&VerifyCx<'_>, OpId) -> Result<(), String>;
/// A default name for an op's results when they have none (`%cst`, `%c0`, `%extracted`).
pub type NameHintFn = fn(&Module, OpId) -> Option<String>;

/// What the registry knows about one op.
#[derive(Clone, Debug)]
pub struct OpDef {
    /// The full name (`arith.addf`).
    pub name: &'static str,
    pub traits: Traits,
    /// Names of inherent attributes (properties): printed in `<{...}>` in generic form; a
    /// generic `{...}` entry with one of these names is moved to the properties.
    pub inherent_attrs: &'static [&'static str],
    /// The number of regions: none unless declared, as in MLIR's ODS; the least number
    /// when `variadic_regions` (`scf.index_switch`: a default region, then one a case).
    pub num_regions: usize,
    pub variadic_regions: bool,
    /// Allowed parent ops (MLIR's `HasParent`); empty means any.
    pub parents: &'static [&'static str],
    /// The dialect whose prefix may be left out of op names directly inside this op's regions
    /// (`return` inside `func.func`).
    pub default_dialect: Option<&'static str>,
    pub print: Option<PrintFn>,
    pub parse: Option<ParseFn>,
    pub verify: Option<VerifyFn>,
    pub name_hint: Option<NameHintFn>,
    /// The declared operands, results, properties and type rules ([`crate::ods`]), checked
    /// before `verify`; `None` for an op that declares nothing.
    pub spec: Option<OpSpec>,
    /// The declarative assembly format, read when the op is registered.
    pub format: Option<&'static str>,
    compiled: Option<Arc<Format>>,
}

impl OpDef {
    /// A definition with no traits, no hooks and no regions.
    pub const fn new(name: &'static str) -> OpDef {
        OpDef {
            name,
            traits: Traits::NONE,
            inherent_attrs: &[],
            num_regions: 0,
            variadic_regions: false,
            parents: &[],
            default_dialect: None,
            print: None,
            parse: None,
            verify: None,
            name_hint: None,
            spec: None,
            format: None,
            compiled: None,
        }
    }

    /// A definition of a pure op (MLIR's `Pure`: no side effects, free to move, merge or
    /// drop), as most ops are.
    pub const fn pure(name: &'static str) -> OpDef {
        OpDef::new(name).traits(Traits::PURE)
    }

    /// This definition under another name (one declaration for a family of ops:
    /// `arith.addf`, `arith.mulf`, ...).
    pub const fn named(mut self, name: &'static str) -> OpDef {
        self.name = name;
        self
    }

    const fn declared(&self) -> OpSpec {
        match self.spec {
            Some(spec) => spec,
            None => OpSpec::NONE,
        }
    }

    /// The operand groups.
    pub const fn operands(mut self, operands: &'static [Arg]) -> OpDef {
        self.spec = Some(OpSpec {
            operands,
            ..self.declared()
        });
        self
    }

    /// The result groups.
    pub const fn results(mut self, results: &'static [Arg]) -> OpDef {
        self.spec = Some(OpSpec {
            results,
            ..self.declared()
        });
        self
    }

    /// The properties the format and the verifier know the kinds of; each is inherent
    /// without being named again in [`OpDef::inherent`].
    pub const fn props(mut self, props: &'static [Prop]) -> OpDef {
        self.spec = Some(OpSpec {
            props,
            ..self.declared()
        });
        self
    }

    /// Type rules between groups.
    pub const fn rules(mut self, rules: &'static [TypeRule]) -> OpDef {
        self.spec = Some(OpSpec {
            rules,
            ..self.declared()
        });
        self
    }

    /// The declarative assembly format (instead of [`OpDef::syntax`]).
    pub const fn format(mut self, format: &'static str) -> OpDef {
        self.spec = Some(self.declared());
        self.format = Some(format);
        self
    }

    pub const fn traits(mut self, traits: Traits) -> OpDef {
        self.traits = traits;
        self
    }

    /// Inherent attributes that are not declared properties (no kind to check or print).
    pub const fn inherent(mut self, names: &'static [&'static str]) -> OpDef {
        self.inherent_attrs = names;
        self
    }

    /// The number of regions the op has (zero unless set).
    pub const fn regions(mut self, n: usize) -> OpDef {
        self.num_regions = n;
        self
    }

    /// Any number of regions from [`Self::regions`] up (MLIR's `VariadicRegion`).
    pub const fn variadic_regions(mut self) -> OpDef {
        self.variadic_regions = true;
        self
    }

    /// Whether `n` regions are what the op declares.
    pub fn accepts_regions(&self, n: usize) -> bool {
        n == self.num_regions || (self.variadic_regions && n > self.num_regions)
    }

    pub const fn parents(mut self, parents: &'static [&'static str]) -> OpDef {
        self.parents = parents;
        self
    }

    pub const fn default_dialect(mut self, dialect: &'static str) -> OpDef {
        self.default_dialect = Some(dialect);
        self
    }

    /// Custom syntax: printer and parser.
    pub const fn syntax(mut self, print: PrintFn, parse: ParseFn) -> OpDef {
        self.print = Some(print);
        self.parse = Some(parse);
        self
    }

    pub const fn verify(mut self, verify: VerifyFn) -> OpDef {
        self.verify = Some(verify);
        self
    }

    pub const fn name_hint(mut self, hint: NameHintFn) -> OpDef {
        self.name_hint = Some(hint);
        self
    }

    pub fn has(&self, traits: Traits) -> bool {
        self.traits.contains(traits)
    }

    /// Whether `attr` is one of the op's own attributes (MLIR's properties): a declared
    /// property ([`OpDef::props`]) or one named by [`OpDef::inherent`].
    pub fn is_inherent(&self, attr: &str) -> bool {
        self.inherent_attrs.contains(&attr) || self.declared().props.iter().any(|p| p.name == attr)
    }

    /// Whether the op has a custom syntax (declared or hand-written).
    pub fn has_custom_syntax(&self) -> bool {
        self.compiled.is_some() || self.print.is_some()
    }

    /// Writes the op's custom syntax after its name.
    pub fn print_custom(&self, p: &mut Printer<'_>, op: OpId) {
        match (&self.compiled, self.print) {
            (Some(format), _) => format.print(p, op),
            (None, Some(print)) => print(p, op),
            (None, None) => {}
        }
    }

    /// Parses the op's custom syntax after its name, if it has one.
    pub fn parse_custom(&self, p: &mut Parser<'_>, state: &mut OpState) -> Option<DResult<()>> {
        match (&self.compiled, self.parse) {
            (Some(format), _) => Some(format.parse(p, state)),
            (None, Some(parse)) => Some(parse(p, state)),
            (None, None) => None,
        }
    }

    /// The op's own rules: the declared checks, then the `verify` hook.
    pub fn check(&self, cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
        if let Some(spec) = &self.spec {
            verify_declared(spec, cx.module, op)?;
        }
        match self.verify {
            Some(verify) => verify(cx, op),
            None => Ok(()),
        }
    }
}

/// Op definitions by name.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    ops: FxHashMap<Ident, OpDef>,
    by_name: FxHashMap<&'static str, Ident>,
    /// Ops a dialect knows by name only: read and printed in the generic form, never
    /// verified (the ops MLIR's LLVM IR import makes, which the interpreter runs).
    generic_only: Vec<&'static str>,
}

impl Registry {
    /// A registry with nothing registered.
    pub fn empty() -> Registry {
        Registry::default()
    }

    /// Adds (or replaces) an op definition.
    ///
    /// Panics when the op's declarative format does not read, or when it names a property
    /// again among its other inherent attributes: both are constants of the dialects, and
    /// the registry tests register every op.
    pub fn register(&mut self, mut def: OpDef) {
        if let Some(twice) = def
            .declared()
            .props
            .iter()
            .find(|p| def.inherent_attrs.contains(&p.name))
        {
            panic!(
                "'{}' names its property '{}' twice (a property is inherent already)",
                def.name, twice.name
            );
        }
        if let Some(text) = def.format {
            let format = compile(text, def.declared())
                .unwrap_or_else(|e| panic!("the format of '{}': {e}", def.name));
            def.compiled = Some(Arc::new(format));
        }
        let id = Ident::new(def.name);
        self.by_name.insert(def.name, id);
        self.ops.insert(id, def);
    }

    /// Adds a dialect's declared ops.
    pub fn register_all(&mut self, defs: &[OpDef]) {
        for def in defs {
            self.register(def.clone());
        }
    }

    pub fn get(&self, name: Ident) -> Option<&OpDef> {
        self.ops.get(&name)
    }

    /// Looks up a definition by its full name.
    pub fn lookup(&self, name: &str) -> Option<(Ident, &OpDef)> {
        let id = *self.by_name.get(name)?;
        Some((id, &self.ops[&id]))
    }

    /// Declares `names` as ops known by name only (see [`Registry::knows`]).
    pub fn declare_generic(&mut self, names: &[&'static str]) {
        self.generic_only.extend_from_slice(names);
    }

    /// Whether a dialect declares the op `name`: registered, or known by name only.
    pub fn knows(&self, name: &str) -> bool {
        self.by_name.contains_key(name) || self.generic_only.contains(&name)
    }

    /// Whether any op of `dialect` is registered.
    pub fn has_dialect(&self, dialect: &str) -> bool {
        self.by_name
            .keys()
            .any(|n| n.split_once('.').is_some_and(|(d, _)| d == dialect))
    }

    /// The registered op names, sorted.
    pub fn op_names(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.by_name.keys().copied().collect();
        names.sort_unstable();
        names
    }
}
