//! The op traits the core reads (terminators, symbol tables, purity, ...): a leaf the
//! printer, parser and verifier depend on without depending on the registry's hooks.

/// Op traits the core uses (a bit set).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Traits(u32);

impl Traits {
    pub const NONE: Traits = Traits(0);
    /// Ends a block (`func.return`, `scf.yield`).
    pub const TERMINATOR: Traits = Traits(1);
    /// Regions cannot use values defined outside (`func.func`, `builtin.module`).
    pub const ISOLATED_FROM_ABOVE: Traits = Traits(1 << 1);
    /// Blocks of its regions need no terminator (`builtin.module`).
    pub const NO_TERMINATOR: Traits = Traits(1 << 2);
    /// Holds symbols, looked up by name (`builtin.module`).
    pub const SYMBOL_TABLE: Traits = Traits(1 << 3);
    /// Has a `sym_name` (`func.func`).
    pub const SYMBOL: Traits = Traits(1 << 4);
    /// No side effects: may be removed when unused, CSE'd, hoisted.
    pub const PURE: Traits = Traits(1 << 5);
    /// Materializes a constant from its `value` attribute.
    pub const CONSTANT_LIKE: Traits = Traits(1 << 6);
    /// Its regions are graph regions (no dominance order between ops).
    pub const GRAPH_REGION: Traits = Traits(1 << 7);
    /// Each region has at most one block.
    pub const SINGLE_BLOCK: Traits = Traits(1 << 8);
    /// Operand order does not matter.
    pub const COMMUTATIVE: Traits = Traits(1 << 9);
    /// Returns from its enclosing region to the parent op (`func.return`, `scf.yield`).
    pub const RETURN_LIKE: Traits = Traits(1 << 10);

    pub const fn union(self, other: Traits) -> Traits {
        Traits(self.0 | other.0)
    }

    pub const fn contains(self, other: Traits) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Traits {
    type Output = Traits;
    fn bitor(self, rhs: Traits) -> Traits {
        self.union(rhs)
    }
}
