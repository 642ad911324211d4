//! Regions, blocks and operations: the generic form (`"dialect.op"(...) ({...}) {attrs} :
//! type`) and the custom forms the registry's parsers read.

use super::*;

impl<'a> Parser<'a> {
    /// Parses a region `{ ... }` whose entry block has `args` (declared by the op's syntax).
    pub fn parse_region(&mut self, args: &[Argument<'a>]) -> DResult<RegionId> {
        if self.block_scopes.len() >= MAX_REGION_NESTING {
            return Err(self.error(format!(
                "regions nested deeper than {MAX_REGION_NESTING} levels"
            )));
        }
        let region = self.module.create_region();
        let isolated = self.op_isolated.last().copied().unwrap_or(false);
        let dialect = self.op_dialect.last().copied().unwrap_or("");
        if isolated {
            self.scopes.push(IsolatedScope::default());
        }
        self.scope().region_defs.push(Vec::new());
        self.block_scopes.push(BlockScope::default());
        self.default_dialect.push(dialect);
        let result = self.parse_region_body(region, args);
        self.default_dialect.pop();
        let blocks = self.block_scopes.pop().expect("block scope");
        let defs = self.scope().region_defs.pop().expect("region defs");
        for name in defs {
            self.scope().values.remove(name);
        }
        let scope = if isolated { self.scopes.pop() } else { None };
        result?;
        if let Some((name, loc)) = blocks
            .blocks
            .iter()
            .filter(|(_, (_, defined, _))| !defined)
            .map(|(name, (_, _, loc))| (*name, *loc))
            .min_by_key(|&(_, loc)| (loc.line, loc.col))
        {
            return Err(self.error_at(loc, format!("reference to an undefined block '^{name}'")));
        }
        if let Some(scope) = scope {
            self.check_forward_refs(scope)?;
        }
        Ok(region)
    }

    /// Parses a region if `{` is next.
    pub fn parse_optional_region(&mut self, args: &[Argument<'a>]) -> DResult<Option<RegionId>> {
        if self.peek() == Token::Punct(b'{') {
            Ok(Some(self.parse_region(args)?))
        } else {
            Ok(None)
        }
    }

    pub(super) fn parse_region_body(
        &mut self,
        region: RegionId,
        args: &[Argument<'a>],
    ) -> DResult<()> {
        self.parse_punct(b'{')?;
        if !args.is_empty() {
            let types: Vec<Type> = args.iter().map(|a| a.ty).collect();
            let block = self.module.create_block(&types);
            self.module.append_block(region, block);
            for (i, a) in args.iter().enumerate() {
                let v = self.module.block_arg(block, i);
                self.define(a.name, vec![v], a.loc)?;
            }
            if let Token::Caret(_) = self.peek() {
                return Err(self.error("invalid block name in region with named arguments"));
            }
            self.parse_block_ops(block)?;
        } else if !matches!(self.peek(), Token::Punct(b'}') | Token::Caret(_)) {
            let block = self.module.create_block(&[]);
            self.module.append_block(region, block);
            self.parse_block_ops(block)?;
        }
        while let Token::Caret(name) = self.peek() {
            let loc = self.loc();
            self.bump();
            let block = self.define_block(name, loc)?;
            self.module.append_block(region, block);
            if self.parse_optional_punct(b'(') {
                loop {
                    let arg = self.parse_argument(true)?;
                    let v = self.module.add_block_arg(block, arg.ty);
                    self.define(arg.name, vec![v], arg.loc)?;
                    if !self.parse_optional_punct(b',') {
                        break;
                    }
                }
                self.parse_punct(b')')?;
            }
            self.parse_punct(b':')?;
            self.parse_block_ops(block)?;
        }
        self.parse_punct(b'}')
    }

    pub(super) fn parse_block_ops(&mut self, block: BlockId) -> DResult<()> {
        loop {
            match self.peek() {
                Token::Caret(_) | Token::Punct(b'}') => return Ok(()),
                Token::Eof => return Err(self.expected("'}'")),
                _ => self.parse_operation(block)?,
            }
        }
    }

    pub(super) fn define_block(&mut self, name: &'a str, loc: Loc) -> DResult<BlockId> {
        let scope = self.block_scopes.last_mut().expect("block scope");
        match scope.blocks.get_mut(name) {
            Some((_, true, _)) => {
                Err(self.error_at(loc, format!("redefinition of block '^{name}'")))
            }
            Some((block, defined, _)) => {
                *defined = true;
                Ok(*block)
            }
            None => Ok(self.new_named_block(name, true, loc)),
        }
    }

    /// A new block named `name` in the innermost block scope: `defined` by its label, or only
    /// referenced so far (as a successor before its label).
    fn new_named_block(&mut self, name: &'a str, defined: bool, loc: Loc) -> BlockId {
        let block = self.module.create_block(&[]);
        self.block_scopes
            .last_mut()
            .expect("block scope")
            .blocks
            .insert(name, (block, defined, loc));
        block
    }

    /// Parses a successor block reference `^bb1`.
    pub fn parse_successor(&mut self) -> DResult<BlockId> {
        let loc = self.loc();
        let Token::Caret(name) = self.peek() else {
            return Err(self.expected("block name"));
        };
        self.bump();
        let Some(scope) = self.block_scopes.last_mut() else {
            return Err(self.error_at(loc, "block reference outside of a region"));
        };
        if let Some(&(b, _, _)) = scope.blocks.get(name) {
            return Ok(b);
        }
        Ok(self.new_named_block(name, false, loc))
    }

    /// Makes sure the last block of `region` ends with a terminator: adds an empty block to an
    /// empty region and appends `name` (with no operands) when the last op is not a
    /// terminator (MLIR's `ensureTerminator` for implicit `scf.yield`).
    pub fn ensure_terminator(&mut self, region: RegionId, name: &str, loc: Loc) {
        let m = &mut self.module;
        let block = match m.region_blocks(region).last() {
            Some(&b) => b,
            None => {
                let b = m.create_block(&[]);
                m.append_block(region, b);
                b
            }
        };
        let has_terminator = m
            .last_op(block)
            .is_some_and(|op| m.op_def(op).is_some_and(|d| d.has(Traits::TERMINATOR)));
        if !has_terminator {
            m.create_op_at(OpState::new(name).loc(loc), InsertPoint::BlockEnd(block));
        }
    }

    // ----- operations -----

    pub(super) fn parse_operation(&mut self, block: BlockId) -> DResult<()> {
        let loc = self.loc();
        let mut bindings: Vec<(&'a str, u32, Loc)> = Vec::new();
        if let Token::Percent(_) = self.peek() {
            loop {
                let bloc = self.loc();
                let Token::Percent(name) = self.bump() else {
                    return Err(self.error_at(bloc, "expected SSA identifier"));
                };
                let mut count = 1;
                if self.parse_optional_punct(b':') {
                    let n = self.parse_integer()?;
                    count = u32::try_from(n)
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| self.error_at(bloc, "expected positive result count"))?;
                }
                bindings.push((name, count, bloc));
                if !self.parse_optional_punct(b',') {
                    break;
                }
            }
            self.parse_punct(b'=')?;
        }
        let op_loc = self.loc();
        let mut state = match self.peek() {
            Token::Str(_) => self.parse_generic_op(op_loc)?,
            Token::Bare(name) => {
                self.bump();
                self.parse_custom_op(name, op_loc)?
            }
            _ => return Err(self.expected("operation name")),
        };
        state.loc = loc;
        self.skip_trailing_loc()?;
        let expected: u32 = bindings.iter().map(|b| b.1).sum();
        let num_results = state.result_types.len();
        if !bindings.is_empty() && expected as usize != num_results {
            return Err(self.error_at(
                loc,
                format!(
                    "operation defines {num_results} results but was provided {expected} to bind"
                ),
            ));
        }
        if !state.attrs.is_empty()
            && let Some(def) = self.registry.get(state.name)
        {
            // Inherent attributes written in the attribute dictionary become properties.
            let (inherent, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut state.attrs)
                .into_iter()
                .partition(|e| def.is_inherent(e.name.as_str()));
            state.attrs = rest;
            for e in inherent {
                attrs::set_named(&mut state.props, e.name, e.value);
            }
        }
        let op = self
            .module
            .create_op_at(state, InsertPoint::BlockEnd(block));
        let mut next = 0usize;
        for (name, count, bloc) in bindings {
            let values: Vec<Value> = (next..next + count as usize)
                .map(|i| self.module.result(op, i))
                .collect();
            next += count as usize;
            self.define(name, values, bloc)?;
        }
        Ok(())
    }

    pub(super) fn skip_trailing_loc(&mut self) -> DResult<()> {
        if self.peek() == Token::Bare("loc") {
            let (_, _, _, end) = self.peek_full();
            let next = lexer::skip_trivia(self.src.as_bytes(), end);
            if self.src.as_bytes().get(next) == Some(&b'(') {
                self.bump();
                self.parse_balanced()?;
            }
        }
        Ok(())
    }

    pub(super) fn with_op_context<T>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Self) -> DResult<T>,
    ) -> DResult<T> {
        let (isolated, dialect) = match self.registry.lookup(name) {
            Some((_, d)) => (
                d.has(Traits::ISOLATED_FROM_ABOVE),
                d.default_dialect.unwrap_or(""),
            ),
            None => (false, ""),
        };
        self.op_isolated.push(isolated);
        self.op_dialect.push(dialect);
        let r = f(self);
        self.op_isolated.pop();
        self.op_dialect.pop();
        r
    }

    pub(super) fn parse_generic_op(&mut self, loc: Loc) -> DResult<OpState> {
        let name: std::borrow::Cow<'a, str> = match self.peek() {
            Token::Str(raw) if !raw.contains('\\') => {
                self.bump();
                raw.into()
            }
            _ => self.parse_string()?.into(),
        };
        if name.is_empty() {
            return Err(self.error_at(loc, "empty operation name is invalid"));
        }
        let name = match super::xla_spelling::op_name(&self.registry, &name) {
            std::borrow::Cow::Owned(ours) => std::borrow::Cow::Owned(ours),
            std::borrow::Cow::Borrowed(_) => name,
        };
        let ident = match &name {
            std::borrow::Cow::Borrowed(s) => *self.idents.entry(s).or_insert_with(|| Ident::new(s)),
            std::borrow::Cow::Owned(s) => Ident::new(s),
        };
        let mut state = OpState::with_ident(ident);
        self.parse_punct(b'(')?;
        let operands = self.parse_operand_list()?;
        self.parse_punct(b')')?;
        if self.parse_optional_punct(b'[') {
            loop {
                state.successors.push(self.parse_successor()?);
                if !self.parse_optional_punct(b',') {
                    break;
                }
            }
            self.parse_punct(b']')?;
        }
        if self.parse_optional_punct(b'<') {
            let mut props = Vec::new();
            self.parse_dict_into(&mut props)?;
            state.props = props;
            self.parse_punct(b'>')?;
        }
        if self.peek() == Token::Punct(b'(') {
            self.bump();
            let regions = self.with_op_context(&name, |p| {
                let mut regions = Vec::new();
                loop {
                    regions.push(p.parse_region(&[])?);
                    if !p.parse_optional_punct(b',') {
                        break;
                    }
                }
                Ok(regions)
            })?;
            state.regions = regions;
            self.parse_punct(b')')?;
        }
        self.parse_optional_attr_dict(&mut state.attrs)?;
        self.parse_punct(b':')?;
        let type_loc = self.loc();
        let (inputs, results) = self.parse_function_type_lists()?;
        if inputs.len() != operands.len() {
            return Err(self.error_at(
                type_loc,
                format!(
                    "expected {} operand type{} but had {}",
                    operands.len(),
                    if operands.len() == 1 { "" } else { "s" },
                    inputs.len()
                ),
            ));
        }
        state.operands = self.resolve_operands(&operands, &inputs, loc)?;
        state.result_types = results;
        Ok(state)
    }

    pub(super) fn parse_custom_op(&mut self, name: &'a str, loc: Loc) -> DResult<OpState> {
        let registry = self.registry.clone();
        let name = super::xla_spelling::op_name(&registry, name);
        let name = name.as_ref();
        let mut found = registry.lookup(name);
        let dialect = *self.default_dialect.last().unwrap_or(&"");
        if found.is_none() && !dialect.is_empty() {
            found = registry.lookup(&format!("{dialect}.{name}"));
        }
        let Some((ident, def)) = found else {
            if let Some(target) = other_target(name) {
                let message = format!(
                    "unsupported: '{name}' is an op for {target}; hlo-emit compiles for NVIDIA GPUs"
                );
                return Err(self.error_at(loc, message));
            }
            return Err(self.error_at(loc, format!("custom op '{name}' is unknown")));
        };
        if !def.has_custom_syntax() {
            return Err(self.error_at(
                loc,
                format!("custom op '{name}' has no custom assembly form; use the generic form"),
            ));
        }
        let mut state = OpState::with_ident(ident);
        state.loc = loc;
        self.with_op_context(def.name, |p| {
            def.parse_custom(p, &mut state).unwrap_or(Ok(()))
        })?;
        Ok(state)
    }
}

/// The target whose dialect `op` belongs to, when that is not ours: XLA's IR for its CPU and
/// AMD backends uses these dialects, which this compiler does not read.
fn other_target(op: &str) -> Option<&'static str> {
    const DIALECTS: [(&str, &str); 4] = [
        ("xla_cpu.", "XLA's CPU backend"),
        ("rocdl.", "AMD GPUs (ROCDL)"),
        ("amdgpu.", "AMD GPUs"),
        ("xegpu.", "Intel GPUs"),
    ];
    DIALECTS
        .iter()
        .find(|(prefix, _)| op.starts_with(prefix))
        .map(|&(_, target)| target)
}
