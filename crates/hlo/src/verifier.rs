//! The HLO verifier: the rules a parsed module must follow before anything compiles it.
//!
//! [`verify_module`] returns the first violation as a [`Diagnostic`] located as precisely
//! as the model allows: the attribute's span for a bad attribute, the operand's span for a
//! bad operand, the written shape for a wrong result, the opcode otherwise. Messages name
//! the op: `reduce: dimension 3 is out of range for operand of rank 2`.
//!
//! What is checked, in this order:
//!
//! 1. `entry_computation_layout`: valid layouts, and it agrees with the entry computation's
//!    parameters and root.
//! 2. Per computation: layouts of the old-style signature; parameter numbers are `0..n-1`,
//!    each once; the signature (when written) agrees with the parameters and the root.
//! 3. Per instruction, in text order: operands exist; every array shape's layout is valid
//!    for its bounds and the array, padding included, is under
//!    [`crate::shape::ARRAY_SIZE_LIMIT`] (into tuples); the op's shape rules ([`crate::shape_inference`]: the
//!    written shape must be compatible with the inferred one, or pass the op's own
//!    checks); called computations exist and have the parameters and results the caller
//!    needs — `fusion` and `call` (parameters match the operands, root matches the
//!    result), `map`, `reduce`, `reduce-window`, `scatter`, `all-reduce`,
//!    `all-reduce-start` and `reduce-scatter` (`to_apply` is a reducer: `2k` scalar
//!    parameters and `k` scalar results of the right types), `sort` (a comparator of `2k`
//!    scalars returning `pred[]`), `while` (condition returns `pred[]`, body keeps the
//!    loop state's shape) and `conditional` (each branch takes its operand and returns
//!    the result).
//!
//! Decision: ops the emitters do not compile and outside XLA's emitter corpus — collectives other than the
//! reducer check above, custom-call, convolution, dot, fft, triangular-solve, rng,
//! send/recv, async wrappers and the like — get only the generic checks (operands exist,
//! layouts are valid, called computations exist). This compiler refuses to emit them, and
//! their full shape rules would add much code that nothing here exercises.
//!
//! Never panics: every index into the module is checked, and size arithmetic is checked
//! (see [`crate::shape_inference`]).

use crate::diag::{Diagnostic, Span};
use crate::module::{AttrValue, Computation, HloModule, Instruction, Payload};
use crate::opcode::Opcode;
use crate::primitive::PrimitiveType;
use crate::shape::Shape;
use crate::shape_inference::{check_shape, count, same_type_ignoring_fp_precision};

type VResult<T = ()> = Result<T, Diagnostic>;

/// Checks every rule above; the first violation comes back as a located [`Diagnostic`].
pub fn verify_module(module: &HloModule) -> VResult {
    check_entry_computation_layout(module)?;
    for computation in &module.computations {
        check_interface(computation)?;
    }
    for computation in &module.computations {
        for instr in &computation.instructions {
            check_instruction(module, computation, instr)?;
        }
    }
    Ok(())
}

/// The first array in `shape` (into tuples) over [`crate::shape::ARRAY_SIZE_LIMIT`], as a
/// message. For shapes whose layouts are valid.
fn size_error(shape: &Shape) -> Option<String> {
    match shape {
        Shape::Array(a) => a.check_size().err(),
        Shape::Tuple(elements) => elements.iter().find_map(size_error),
    }
}

/// The first invalid layout in `shape` (into tuples), as a message.
fn layout_error(shape: &Shape) -> Option<String> {
    match shape {
        Shape::Array(a) => a
            .layout
            .as_ref()?
            .validate(&a.dims)
            .err()
            .map(|e| format!("invalid layout in {a}: {e}")),
        Shape::Tuple(elements) => elements.iter().find_map(layout_error),
    }
}

fn check_entry_computation_layout(module: &HloModule) -> VResult {
    let Some(header) = &module.header else {
        return Ok(());
    };
    let Some(attr) = header
        .attributes
        .iter()
        .find(|a| a.name == "entry_computation_layout")
    else {
        return Ok(());
    };
    let AttrValue::ProgramShape(params, result) = &attr.value else {
        return Ok(());
    };
    let fail = |message: String| Err(Diagnostic::new(attr.span, message));
    for shape in params.iter().chain(std::iter::once(result)) {
        if let Some(e) = layout_error(shape) {
            return fail(format!("entry_computation_layout: {e}"));
        }
    }
    let Some(entry) = module.computations.get(module.entry.0) else {
        return fail("the module has no entry computation".into());
    };
    let entry_params = parameters_by_number(entry);
    if entry_params.len() != params.len() {
        return fail(format!(
            "entry_computation_layout has {} but the entry computation '{}' has {}",
            count(params.len(), "parameter", "parameters"),
            entry.name,
            entry_params.len()
        ));
    }
    for (i, (layout_shape, param)) in params.iter().zip(&entry_params).enumerate() {
        if let Some(param) = param
            && !layout_shape.compatible(&param.shape)
        {
            return fail(format!(
                "entry_computation_layout gives parameter {i} the shape {} but parameter {i} \
                 of '{}' has shape {}",
                layout_shape.without_layout(),
                entry.name,
                param.shape.without_layout()
            ));
        }
    }
    if let Some(root) = root_of(entry)
        && !result.compatible(&root.shape)
    {
        return fail(format!(
            "entry_computation_layout gives the result shape {} but the root of '{}' has \
             shape {}",
            result.without_layout(),
            entry.name,
            root.shape.without_layout()
        ));
    }
    Ok(())
}

fn root_of(computation: &Computation) -> Option<&Instruction> {
    computation.instructions.get(computation.root.0)
}

/// The parameter instructions, in the order the computation lists them.
fn parameter_instructions(computation: &Computation) -> Vec<&Instruction> {
    computation
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Parameter)
        .collect()
}

/// The parameter instructions indexed by parameter number; `None` where a number is
/// missing (only before [`check_interface`] has passed).
fn parameters_by_number(computation: &Computation) -> Vec<Option<&Instruction>> {
    let params = parameter_instructions(computation);
    let mut by_number = vec![None; params.len()];
    for p in params {
        if let Some(slot) = p
            .parameter_number()
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| by_number.get_mut(n))
        {
            *slot = Some(p);
        }
    }
    by_number
}

/// Parameters numbered `0..n-1` once each, valid signature layouts, and a signature that
/// agrees with the parameters and the root.
fn check_interface(computation: &Computation) -> VResult {
    let name = &computation.name;
    let Some(root) = root_of(computation) else {
        return Err(Diagnostic::new(
            computation.span,
            format!("computation '{name}' has no root instruction"),
        ));
    };
    if let Some(signature) = &computation.signature {
        let shapes = signature.params.iter().map(|(_, s)| s);
        for shape in shapes.chain(std::iter::once(&signature.result)) {
            if let Some(e) = layout_error(shape) {
                return Err(Diagnostic::new(
                    signature.span,
                    format!("signature of '{name}': {e}"),
                ));
            }
        }
    }
    let params = parameter_instructions(computation);
    let mut seen = vec![false; params.len()];
    for p in &params {
        let Payload::Parameter(number) = p.payload else {
            return Err(Diagnostic::new(
                p.spans.opcode,
                "parameter: missing parameter number",
            ));
        };
        let Some(slot) = usize::try_from(number).ok().and_then(|n| seen.get_mut(n)) else {
            return Err(Diagnostic::new(
                p.spans.payload,
                format!(
                    "parameter number {number} is out of range: computation '{name}' has {}, \
                     numbered from 0",
                    count(params.len(), "parameter", "parameters")
                ),
            ));
        };
        if std::mem::replace(slot, true) {
            return Err(Diagnostic::new(
                p.spans.payload,
                format!("parameter number {number} is used twice in computation '{name}'"),
            ));
        }
    }
    let Some(signature) = &computation.signature else {
        return Ok(());
    };
    if signature.params.len() != params.len() {
        return Err(Diagnostic::new(
            signature.span,
            format!(
                "the signature of '{name}' lists {} but the computation has {}",
                count(signature.params.len(), "parameter", "parameters"),
                params.len()
            ),
        ));
    }
    for (i, (param, (_, shape))) in parameters_by_number(computation)
        .iter()
        .zip(&signature.params)
        .enumerate()
    {
        if let Some(param) = param
            && !param.shape.compatible(shape)
        {
            return Err(Diagnostic::new(
                param.spans.shape,
                format!(
                    "parameter {i} has shape {} but the signature of '{name}' says {}",
                    param.shape.without_layout(),
                    shape.without_layout()
                ),
            ));
        }
    }
    if !root.shape.compatible(&signature.result) {
        return Err(Diagnostic::new(
            root.spans.shape,
            format!(
                "the root has shape {} but the signature of '{name}' returns {}",
                root.shape.without_layout(),
                signature.result.without_layout()
            ),
        ));
    }
    Ok(())
}

fn check_instruction(
    module: &HloModule,
    computation: &Computation,
    instr: &Instruction,
) -> VResult {
    let op = instr.opcode;
    let mut operands = Vec::with_capacity(instr.operands.len());
    for (i, id) in instr.operands.iter().enumerate() {
        let Some(operand) = computation.instructions.get(id.0) else {
            let span = instr
                .spans
                .operands
                .get(i)
                .copied()
                .unwrap_or(instr.spans.opcode);
            return Err(Diagnostic::new(
                span,
                format!("{op}: operand {i} does not exist"),
            ));
        };
        operands.push(&operand.shape);
    }
    if let Some(e) = layout_error(&instr.shape).or_else(|| size_error(&instr.shape)) {
        return Err(Diagnostic::new(instr.spans.shape, format!("{op}: {e}")));
    }
    check_shape(instr, &operands, &instr.shape).map_err(|e| e.to_diagnostic(instr))?;
    for callee in instr.called_computations() {
        if module.computations.get(callee.id.0).is_none() {
            return Err(Diagnostic::new(
                callee.span,
                format!("{op}: unknown computation '{}'", callee.name),
            ));
        }
    }
    let check = Calls {
        module,
        instr,
        operands: &operands,
    };
    match op {
        Opcode::Fusion => check.call("calls"),
        Opcode::Call => check.call("to_apply"),
        Opcode::Map => check.map(),
        Opcode::Reduce | Opcode::ReduceWindow => check.reduce(),
        Opcode::Scatter => check.scatter(),
        Opcode::Sort => check.sort(),
        Opcode::AllReduce | Opcode::AllReduceStart | Opcode::ReduceScatter => check.all_reduce(),
        Opcode::While => check.while_loop(),
        Opcode::Conditional => check.conditional(),
        _ => Ok(()),
    }
}

/// A called computation, with its parameters by number.
struct Callee<'m> {
    name: &'m str,
    params: Vec<&'m Instruction>,
    root: &'m Instruction,
    /// The attribute that names it.
    span: Span,
}

/// Checks of one instruction against the computations it calls.
struct Calls<'a> {
    module: &'a HloModule,
    instr: &'a Instruction,
    operands: &'a [&'a Shape],
}

impl<'a> Calls<'a> {
    fn op(&self) -> Opcode {
        self.instr.opcode
    }

    fn error(&self, span: Span, message: impl std::fmt::Display) -> Diagnostic {
        Diagnostic::new(span, format!("{}: {message}", self.op()))
    }

    /// The single computation attribute `attr` names.
    fn callee(&self, attr: &'static str) -> VResult<Callee<'a>> {
        let Some(attribute) = self.instr.attribute(attr) else {
            return Err(self.error(
                self.instr.spans.opcode,
                format!("missing {attr}= attribute"),
            ));
        };
        let Some(reference) = self.instr.called(attr) else {
            return Err(self.error(attribute.span, format!("{attr}= must name one computation")));
        };
        self.resolve(reference.id.0, attribute.span)
    }

    fn resolve(&self, id: usize, span: Span) -> VResult<Callee<'a>> {
        let computation = self
            .module
            .computations
            .get(id)
            .ok_or_else(|| self.error(span, "unknown computation"))?;
        let root = root_of(computation)
            .ok_or_else(|| self.error(span, format!("'{}' has no root", computation.name)))?;
        // Numbers are 0..n-1 once each: the interfaces were checked first.
        let params = parameters_by_number(computation)
            .into_iter()
            .flatten()
            .collect();
        Ok(Callee {
            name: &computation.name,
            params,
            root,
            span,
        })
    }

    fn operand_span(&self, i: usize) -> Span {
        self.instr
            .spans
            .operands
            .get(i)
            .copied()
            .unwrap_or(self.instr.spans.opcode)
    }

    fn expect_params(&self, callee: &Callee, what: &str, n: usize) -> VResult {
        if callee.params.len() != n {
            return Err(self.error(
                callee.span,
                format!(
                    "{what} '{}' must take {}, it takes {}",
                    callee.name,
                    count(n, "parameter", "parameters"),
                    callee.params.len()
                ),
            ));
        }
        Ok(())
    }

    /// `fusion` (`calls=`) and `call` (`to_apply=`): parameters match the operands, the
    /// root matches the result.
    fn call(&self, attr: &'static str) -> VResult {
        let callee = self.callee(attr)?;
        if callee.params.len() != self.operands.len() {
            return Err(self.error(
                callee.span,
                format!(
                    "'{}' takes {} but the {} has {}",
                    callee.name,
                    count(callee.params.len(), "parameter", "parameters"),
                    self.op(),
                    count(self.operands.len(), "operand", "operands")
                ),
            ));
        }
        for (i, (param, operand)) in callee.params.iter().zip(self.operands).enumerate() {
            if !param.shape.compatible(operand) {
                return Err(self.error(
                    self.operand_span(i),
                    format!(
                        "operand {i} has shape {} but parameter {i} of '{}' has shape {}",
                        operand.without_layout(),
                        callee.name,
                        param.shape.without_layout()
                    ),
                ));
            }
        }
        if !callee.root.shape.compatible(&self.instr.shape) {
            return Err(self.error(
                self.instr.spans.shape,
                format!(
                    "result {} does not match the root of '{}', which has shape {}",
                    self.instr.shape.without_layout(),
                    callee.name,
                    callee.root.shape.without_layout()
                ),
            ));
        }
        Ok(())
    }

    /// `to_apply` of a reduction over `k` values: parameters `0..k` are the accumulators,
    /// `k..2k` the inputs, all scalars; it returns the `k` accumulators (a tuple when
    /// `k > 1`). With types given, accumulator `i` has the type of initial value `i` and
    /// input `i` the element type of input `i` (up to floating-point precision, as XLA).
    fn reducer(&self, k: usize, types: Option<(&[PrimitiveType], &[PrimitiveType])>) -> VResult {
        let callee = self.callee("to_apply")?;
        let name = callee.name;
        self.expect_params(&callee, "reducer", 2 * k)?;
        let fail = |message: String| Err(self.error(callee.span, message));
        let results: Vec<&Shape> = match &callee.root.shape {
            Shape::Tuple(elements) if elements.len() == k => elements.iter().collect(),
            array @ Shape::Array(_) if k == 1 => vec![array],
            other => {
                return fail(format!(
                    "reducer '{name}' must return {}, it returns {}",
                    if k == 1 {
                        "a scalar".to_string()
                    } else {
                        format!("a tuple of {k} scalars")
                    },
                    other.without_layout()
                ));
            }
        };
        for (i, result) in results.iter().enumerate() {
            let Some(result) = result.as_array().filter(|a| a.rank() == 0) else {
                return fail(format!(
                    "reducer '{name}' must return scalars, it returns {}",
                    callee.root.shape.without_layout()
                ));
            };
            for j in [i, k + i] {
                let param = &callee.params[j].shape;
                if param.as_array().is_none_or(|p| p.rank() != 0) {
                    return fail(format!(
                        "parameter {j} of reducer '{name}' must be a scalar, it is {}",
                        param.without_layout()
                    ));
                }
            }
            let accumulator = &callee.params[i].shape;
            if !accumulator.compatible(results[i]) {
                return fail(format!(
                    "parameter {i} of reducer '{name}' is {} but its result {i} is {}",
                    accumulator.without_layout(),
                    results[i].without_layout()
                ));
            }
            let input = callee.params[k + i].shape.as_array();
            if let Some(input) = input
                && !same_type_ignoring_fp_precision(input.element_type, result.element_type)
            {
                return fail(format!(
                    "parameter {} of reducer '{name}' has type {} but its result {i} has {}",
                    k + i,
                    input.element_type,
                    result.element_type
                ));
            }
            let Some((inits, inputs)) = types else {
                continue;
            };
            if let Some(&init) = inits.get(i)
                && !same_type_ignoring_fp_precision(init, result.element_type)
            {
                return fail(format!(
                    "initial value {i} has type {init} but reducer '{name}' accumulates {}",
                    result.element_type
                ));
            }
            if let (Some(&element), Some(input)) = (inputs.get(i), input)
                && !same_type_ignoring_fp_precision(element, input.element_type)
            {
                return fail(format!(
                    "input {i} has element type {element} but parameter {} of reducer \
                     '{name}' has type {}",
                    k + i,
                    input.element_type
                ));
            }
        }
        Ok(())
    }

    fn element_type(&self, i: usize) -> PrimitiveType {
        self.operands
            .get(i)
            .and_then(|s| s.as_array())
            .map_or(PrimitiveType::Token, |a| a.element_type)
    }

    /// `reduce` and `reduce-window`: `k` inputs, `k` initial values.
    fn reduce(&self) -> VResult {
        let k = self.operands.len() / 2;
        let inputs: Vec<PrimitiveType> = (0..k).map(|i| self.element_type(i)).collect();
        let inits: Vec<PrimitiveType> = (k..2 * k).map(|i| self.element_type(i)).collect();
        self.reducer(k, Some((&inits, &inputs)))
    }

    /// `scatter`: `k` operands, the indices, `k` updates.
    fn scatter(&self) -> VResult {
        let k = self.operands.len() / 2;
        let operands: Vec<PrimitiveType> = (0..k).map(|i| self.element_type(i)).collect();
        let updates: Vec<PrimitiveType> =
            (k + 1..2 * k + 1).map(|i| self.element_type(i)).collect();
        self.reducer(k, Some((&operands, &updates)))
    }

    /// Collectives apply a binary scalar reducer to every operand; its types are checked
    /// when all operands share one element type.
    fn all_reduce(&self) -> VResult {
        let mut types: Vec<PrimitiveType> = (0..self.operands.len())
            .map(|i| self.element_type(i))
            .collect();
        types.dedup();
        match types[..] {
            [t] if t != PrimitiveType::Token => self.reducer(1, Some((&[t], &[t]))),
            _ => self.reducer(1, None),
        }
    }

    /// `sort`: a comparator of two scalars per operand returning `pred[]`.
    fn sort(&self) -> VResult {
        let callee = self.callee("to_apply")?;
        let name = callee.name;
        self.expect_params(&callee, "comparator", 2 * self.operands.len())?;
        for (j, param) in callee.params.iter().enumerate() {
            let expected = Shape::scalar(self.element_type(j / 2));
            if !param.shape.compatible(&expected) {
                return Err(self.error(
                    callee.span,
                    format!(
                        "parameter {j} of comparator '{name}' must be {expected} for operand {}, \
                         it is {}",
                        j / 2,
                        param.shape.without_layout()
                    ),
                ));
            }
        }
        self.returns_pred(&callee, "comparator")?;
        Ok(())
    }

    /// `map`: operands of one shape, a computation of one scalar per operand returning a
    /// scalar; the result has the operands' dimensions and the computation's result type.
    fn map(&self) -> VResult {
        let callee = self.callee("to_apply")?;
        let name = callee.name;
        let Some(first) = self.operands.first().and_then(|s| s.as_array()) else {
            return Err(self.error(
                self.instr.spans.opcode,
                "expected at least one array operand",
            ));
        };
        for (i, operand) in self.operands.iter().enumerate() {
            if operand.as_array().is_none_or(|a| a.dims != first.dims) {
                return Err(self.error(
                    self.operand_span(i),
                    format!(
                        "operand {i} {} does not have the dimensions of operand 0 {}",
                        operand.without_layout(),
                        Shape::Array(first.clone()).without_layout()
                    ),
                ));
            }
        }
        self.expect_params(&callee, "mapped computation", self.operands.len())?;
        for (i, param) in callee.params.iter().enumerate() {
            let expected = Shape::scalar(self.element_type(i));
            if !param.shape.compatible(&expected) {
                return Err(self.error(
                    callee.span,
                    format!(
                        "parameter {i} of '{name}' must be {expected} for operand {i}, it is {}",
                        param.shape.without_layout()
                    ),
                ));
            }
        }
        let Some(result) = callee.root.shape.as_array().filter(|a| a.rank() == 0) else {
            return Err(self.error(
                callee.span,
                format!(
                    "'{name}' must return a scalar, it returns {}",
                    callee.root.shape.without_layout()
                ),
            ));
        };
        let mut expected = first.clone();
        expected.element_type = result.element_type;
        expected.layout = None;
        let expected = Shape::Array(expected);
        if !expected.compatible(&self.instr.shape) {
            return Err(self.error(
                self.instr.spans.shape,
                format!(
                    "result {} does not match the inferred shape {expected}",
                    self.instr.shape.without_layout()
                ),
            ));
        }
        Ok(())
    }

    /// Checks that `callee`, the `what` of the instruction, returns `shape`, the shape of
    /// `whose` ("the result", "the loop state").
    fn returns(&self, callee: &Callee, what: &str, shape: &Shape, whose: &str) -> VResult {
        if callee.root.shape.compatible(shape) {
            return Ok(());
        }
        Err(self.error(
            callee.span,
            format!(
                "{what} '{}' returns {} but {whose} has shape {}",
                callee.name,
                callee.root.shape.without_layout(),
                shape.without_layout()
            ),
        ))
    }

    /// Checks that `callee`, the `what` of the instruction, returns `pred[]`.
    fn returns_pred(&self, callee: &Callee, what: &str) -> VResult {
        if callee
            .root
            .shape
            .compatible(&Shape::scalar(PrimitiveType::Pred))
        {
            return Ok(());
        }
        Err(self.error(
            callee.span,
            format!(
                "{what} '{}' must return pred[], it returns {}",
                callee.name,
                callee.root.shape.without_layout()
            ),
        ))
    }

    /// `callee` takes one parameter of shape `state`.
    fn takes_state(&self, callee: &Callee, what: &str, state: &Shape) -> VResult {
        self.expect_params(callee, what, 1)?;
        let param = &callee.params[0].shape;
        if !param.compatible(state) {
            return Err(self.error(
                callee.span,
                format!(
                    "the parameter of {what} '{}' has shape {} but the operand has shape {}",
                    callee.name,
                    param.without_layout(),
                    state.without_layout()
                ),
            ));
        }
        Ok(())
    }

    fn while_loop(&self) -> VResult {
        let Some(state) = self.operands.first() else {
            return Ok(());
        };
        let condition = self.callee("condition")?;
        self.takes_state(&condition, "condition", state)?;
        self.returns_pred(&condition, "condition")?;
        let body = self.callee("body")?;
        self.takes_state(&body, "body", state)?;
        self.returns(&body, "body", state, "the loop state")?;
        Ok(())
    }

    /// `conditional`: a `pred[]` selector with `true_computation`/`false_computation`, or
    /// an `s32[]` index with `branch_computations`; branch `i` takes operand `i + 1`.
    fn conditional(&self) -> VResult {
        let (selector, branches) = match self.instr.attribute("branch_computations") {
            Some(attr) => {
                let AttrValue::Computations(refs) = &attr.value else {
                    return Err(
                        self.error(attr.span, "branch_computations= must list computations")
                    );
                };
                let branches = refs
                    .iter()
                    .map(|r| self.resolve(r.id.0, r.span))
                    .collect::<VResult<Vec<_>>>()?;
                (PrimitiveType::S32, branches)
            }
            None => (
                PrimitiveType::Pred,
                vec![
                    self.callee("true_computation")?,
                    self.callee("false_computation")?,
                ],
            ),
        };
        let expected = Shape::scalar(selector);
        match self.operands.first() {
            Some(s) if s.compatible(&expected) => {}
            other => {
                return Err(self.error(
                    self.operand_span(0),
                    format!(
                        "the branch selector must be {expected}, got {}",
                        other.map_or("nothing".to_string(), |s| s.without_layout().to_string())
                    ),
                ));
            }
        }
        if self.operands.len() != branches.len() + 1 {
            return Err(self.error(
                self.instr.spans.opcode,
                format!(
                    "expected {} (the selector and one per branch), got {}",
                    count(branches.len() + 1, "operand", "operands"),
                    self.operands.len()
                ),
            ));
        }
        for (i, branch) in branches.iter().enumerate() {
            self.takes_state(branch, "branch", self.operands[i + 1])?;
            self.returns(branch, "branch", &self.instr.shape, "the result")?;
        }
        Ok(())
    }
}
