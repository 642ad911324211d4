//! `hlo-cse`: one instruction for each value computed twice, as XLA's `HloCSE`. JAX traces
//! `x - mean` once per use in a layer norm, and every `jnp.where` brings its own
//! `constant(0)`; merged, the fusion pass sees one producer with several users instead of
//! two kernels' worth of the same work.
//!
//! Two pure instructions (see [`crate::is_pure`]) are the same value when they have the
//! same opcode, shape (layout included), operands (after merging), constant or parameter
//! number, called computations and attributes, `metadata` aside. The entry is visited
//! operands first, so a duplicated chain merges from its start to its end. The first
//! instruction in that order stays; later ones are replaced in their users, then removed.
//! As in `algebraic-simplifier`, the program's results (the root, or a tuple root's
//! elements) keep their instructions and names.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{BuildHasher, Hash, Hasher};

use hlo::{AttrValue, Diagnostic, HloModule, InstrId, Instruction, Opcode, Payload, Value};

use crate::{is_pure, operands_first, program_results, remove_dead_code, same_shape};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    Ok(crate::rewrite_control_computations(module, deduplicate))
}

/// One instruction per value in `c`: whether any went.
fn deduplicate(c: &mut hlo::Computation) -> bool {
    let results = program_results(c);
    let mut replacement: Vec<InstrId> = (0..c.instructions.len()).map(InstrId).collect();
    // Values seen so far by hash (the first of each hash; others of the same hash, rare,
    // apart); equal hashes are compared in full.
    let n = c.instructions.len();
    let mut first_of: HashMap<u64, InstrId, Hashed> = HashMap::with_capacity_and_hasher(n, Hashed);
    let mut others: HashMap<u64, Vec<InstrId>, Hashed> = HashMap::with_hasher(Hashed);
    let mut changed = false;
    for i in operands_first(c) {
        for o in &mut c.instructions[i.0].operands {
            *o = replacement[o.0];
        }
        let instr = &c.instructions[i.0];
        if !is_pure(instr.opcode) || instr.opcode == Opcode::Parameter {
            continue;
        }
        let hash = value_hash(instr);
        let same = |f: &InstrId| same_value(&c.instructions[f.0], instr);
        let found = match first_of.get(&hash) {
            None => {
                first_of.insert(hash, i);
                continue;
            }
            Some(f) if same(f) => Some(*f),
            Some(_) => others
                .get(&hash)
                .and_then(|o| o.iter().find(|f| same(f)).copied()),
        };
        match found {
            Some(first) if !results.contains(&i) => {
                replacement[i.0] = first;
                changed = true;
            }
            Some(_) => {}
            None => others.entry(hash).or_default().push(i),
        }
    }
    if changed {
        remove_dead_code(c);
    }
    changed
}

/// Keys that are hashes already are their own hash.
#[derive(Clone, Copy, Default)]
struct Hashed;

impl BuildHasher for Hashed {
    type Hasher = HashOfHash;
    fn build_hasher(&self) -> HashOfHash {
        HashOfHash(0)
    }
}

#[derive(Default)]
struct HashOfHash(u64);

impl Hasher for HashOfHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// A hash of what determines a pure instruction's value (see [`same_value`]); attributes
/// other than integer lists are left to the full comparison.
fn value_hash(instr: &Instruction) -> u64 {
    let mut h = DefaultHasher::new();
    instr.opcode.hash(&mut h);
    if let Some(array) = instr.shape.as_array() {
        (array.element_type, &array.dims).hash(&mut h);
    }
    instr.operands.hash(&mut h);
    match &instr.payload {
        Payload::Literal(literal) => {
            if let hlo::Literal::Array(array) = literal.as_ref() {
                array.values.len().hash(&mut h);
                for v in array.values.iter().take(16) {
                    match *v {
                        Value::Pred(b) => b.hash(&mut h),
                        Value::Int(n) => n.hash(&mut h),
                        Value::Float(f) => f.to_bits().hash(&mut h),
                        Value::Complex(re, im) => (re.to_bits(), im.to_bits()).hash(&mut h),
                    }
                }
            }
        }
        Payload::Parameter(n) => n.hash(&mut h),
        Payload::None => {}
    }
    for a in instr.attributes.iter().filter(|a| a.name != "metadata") {
        a.name.hash(&mut h);
        if let AttrValue::IntList(values) = &a.value {
            values.hash(&mut h);
        }
    }
    h.finish()
}

/// Whether two pure instructions compute the same array: same opcode, shape (layout
/// included), operands, constant or parameter number, called computations and attributes,
/// `metadata` aside (attributes compared as printed, where locations do not show).
fn same_value(a: &Instruction, b: &Instruction) -> bool {
    let attributes = |i: &Instruction| {
        i.attributes
            .iter()
            .filter(|a| a.name != "metadata")
            .map(|a| (a.name.clone(), a.value.to_string()))
            .collect::<Vec<_>>()
    };
    a.opcode == b.opcode
        && same_shape(&a.shape, &b.shape)
        && a.operands == b.operands
        && a.payload == b.payload
        && attributes(a) == attributes(b)
}
