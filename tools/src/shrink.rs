//! Shrinking a failing program (delta debugging over its instructions): the smallest module
//! found that still fails the same way, for `hlo-fuzz --shrink`.
//!
//! The module is in one of the generator's forms (`fuzzing::programs`): one fusion
//! computation, scalar reducers, and an ENTRY that passes its parameters to the fusion; or
//! a flat program, scalar reducers and every instruction in the ENTRY. The instructions of
//! the fusion, or of the flat ENTRY, are shrunk. Three edits are tried,
//! each kept when the result still fails as the original did: drop an output of a tuple
//! ROOT; make an instruction a new parameter of its shape (what computed it goes, unless
//! something else reads it); read an operand of the same shape in place of an instruction.
//! After each edit, instructions nothing reads are removed and the parameters renumbered.

/// One instruction line of the fusion: `name = shape op(operands), attributes`.
#[derive(Clone, Debug)]
struct Line {
    name: String,
    shape: String,
    /// Everything after the shape.
    rest: String,
    root: bool,
}

impl Line {
    fn parse(text: &str) -> Option<Line> {
        let text = text.trim();
        let (root, text) = match text.strip_prefix("ROOT ") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (name, rhs) = text.split_once(" = ")?;
        // The shape ends where the op's name starts: after the first space at nesting depth 0.
        let mut depth = 0;
        let mut split = None;
        for (i, c) in rhs.char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ' ' if depth == 0 => {
                    split = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let at = split?;
        Some(Line {
            name: name.to_string(),
            shape: rhs[..at].to_string(),
            rest: rhs[at + 1..].to_string(),
            root,
        })
    }

    fn print(&self) -> String {
        let root = if self.root { "ROOT " } else { "" };
        format!("  {root}{} = {} {}", self.name, self.shape, self.rest)
    }

    fn is_parameter(&self) -> bool {
        self.rest.starts_with("parameter(")
    }

    /// The names this line reads, among `names`.
    fn reads<'a>(&self, names: &'a [String]) -> Vec<&'a String> {
        let tokens: Vec<&str> = self
            .rest
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .collect();
        names
            .iter()
            .filter(|n| **n != self.name && tokens.contains(&n.as_str()))
            .collect()
    }

    /// `rest` with the name `from` read as `to`.
    fn rename(&mut self, from: &str, to: &str) {
        let mut out = String::new();
        let mut token = String::new();
        for c in self.rest.chars().chain(std::iter::once('\0')) {
            if c.is_alphanumeric() || c == '_' || c == '.' || c == '-' {
                token.push(c);
                continue;
            }
            out.push_str(if token == from { to } else { &token });
            token.clear();
            if c != '\0' {
                out.push(c);
            }
        }
        self.rest = out;
    }
}

/// The computation whose instructions are shrunk: a fusion's, or a flat program's ENTRY.
const FUSION: &str = "fused_computation {\n";
const FLAT_ENTRY: &str = "ENTRY main {\n";

/// A module in one of the generator's forms, taken apart.
#[derive(Clone, Debug)]
struct Module {
    /// Everything before the shrunk computation (header, reducers).
    head: String,
    /// [`FUSION`] or [`FLAT_ENTRY`].
    computation: &'static str,
    body: Vec<Line>,
}

impl Module {
    fn parse(text: &str) -> Option<Module> {
        let computation = if text.contains(FUSION) {
            FUSION
        } else if text.contains(" call(") {
            // A program with calls: not a form the edits keep valid.
            return None;
        } else {
            FLAT_ENTRY
        };
        let start = text.find(computation)?;
        let body_start = start + computation.len();
        let end = body_start + text[body_start..].find("\n}")?;
        let body = text[body_start..end]
            .lines()
            .map(Line::parse)
            .collect::<Option<Vec<_>>>()?;
        Some(Module {
            head: text[..start].to_string(),
            computation,
            body,
        })
    }

    /// The text: the shrunk computation with its parameters renumbered in order, and for
    /// a fusion an ENTRY that passes one parameter of each shape.
    fn print(&self) -> String {
        let mut text = self.head.clone();
        text.push_str(self.computation);
        let mut parameters = Vec::new();
        for line in &self.body {
            let mut line = line.clone();
            if line.is_parameter() {
                line.rest = format!("parameter({})", parameters.len());
                parameters.push(line.shape.clone());
            }
            text.push_str(&line.print());
            text.push('\n');
        }
        if self.computation == FLAT_ENTRY {
            text.push_str("}\n");
            return text;
        }
        text.push_str("}\n\nENTRY main {\n");
        let mut arguments = Vec::new();
        for (k, shape) in parameters.iter().enumerate() {
            text.push_str(&format!("  a{k} = {shape} parameter({k})\n"));
            arguments.push(format!("a{k}"));
        }
        let root = self.body.iter().find(|l| l.root).map_or("", |l| &l.shape);
        text.push_str(&format!(
            "  ROOT fusion = {root} fusion({}), kind=kLoop, calls=fused_computation\n}}\n",
            arguments.join(", ")
        ));
        text
    }

    /// Removes what the ROOT does not reach (parameters included, but one stays).
    fn remove_dead(&mut self) {
        loop {
            let names: Vec<String> = self.body.iter().map(|l| l.name.clone()).collect();
            let read: Vec<String> = self
                .body
                .iter()
                .flat_map(|l| l.reads(&names))
                .cloned()
                .collect();
            let parameters = self.body.iter().filter(|l| l.is_parameter()).count();
            let last_parameter = |l: &Line| l.is_parameter() && parameters == 1;
            let dead = self
                .body
                .iter()
                .position(|l| !(l.root || read.contains(&l.name) || last_parameter(l)));
            match dead {
                Some(at) => {
                    self.body.remove(at);
                }
                None => return,
            }
        }
    }

    /// Every module one edit smaller, most promising first.
    fn candidates(&self) -> Vec<Module> {
        let mut out = Vec::new();
        let names: Vec<String> = self.body.iter().map(|l| l.name.clone()).collect();
        // Drop one output of a tuple ROOT (the ROOT keeps its other outputs).
        if let Some(root) = self.body.iter().position(|l| l.root)
            && self.body[root].rest.starts_with("tuple(")
        {
            let outputs: Vec<&String> = self.body[root].reads(&names);
            for drop in 0..outputs.len() {
                let kept: Vec<usize> = (0..outputs.len()).filter(|&k| k != drop).collect();
                let mut m = self.clone();
                let line = &mut m.body[root];
                if kept.len() == 1 {
                    // The one output left becomes the ROOT.
                    let only = outputs[kept[0]].clone();
                    m.body.remove(root);
                    if let Some(l) = m.body.iter_mut().find(|l| l.name == only) {
                        l.root = true;
                    }
                } else {
                    // The kept items of `all`, comma-separated.
                    let kept_of = |all: &[String]| {
                        let items: Vec<&str> = kept.iter().map(|&k| all[k].as_str()).collect();
                        items.join(", ")
                    };
                    let outputs: Vec<String> = outputs.iter().map(|o| o.to_string()).collect();
                    line.shape = format!("({})", kept_of(&split_tuple_shape(&line.shape)));
                    line.rest = format!("tuple({})", kept_of(&outputs));
                }
                m.remove_dead();
                out.push(m);
            }
        }
        for (at, line) in self.body.iter().enumerate() {
            if line.is_parameter() || line.shape.starts_with('(') {
                continue;
            }
            // Read an operand of the same shape instead.
            for operand in line.reads(&names) {
                let Some(o) = self.body.iter().find(|l| &l.name == operand) else {
                    continue;
                };
                if o.shape != line.shape {
                    continue;
                }
                let mut m = self.clone();
                let old = m.body[at].name.clone();
                for l in &mut m.body {
                    l.rename(&old, operand);
                }
                if m.body[at].root
                    && let Some(l) = m.body.iter_mut().find(|l| &l.name == operand)
                {
                    l.root = true;
                }
                m.body.remove(at);
                m.remove_dead();
                out.push(m);
            }
            // Make it a parameter.
            let mut m = self.clone();
            m.body[at].rest = "parameter(0)".to_string();
            m.remove_dead();
            out.push(m);
        }
        out
    }
}

/// The shapes of a tuple shape `(a, b[2,3], c)`.
fn split_tuple_shape(shape: &str) -> Vec<String> {
    let inner = shape
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(shape);
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in inner.chars() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(current.trim().to_string());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current.trim().to_string());
    parts
}

/// The smallest module found from `text` for which `fails` holds (`fails(text)` must hold),
/// trying at most `budget` candidates; `text` itself when it is not in the generator's
/// form.
pub fn shrink(text: &str, budget: usize, mut fails: impl FnMut(&str) -> bool) -> String {
    let Some(mut best) = Module::parse(text) else {
        return text.to_string();
    };
    let mut tried = 0;
    'progress: loop {
        for candidate in best.candidates() {
            if tried >= budget {
                break 'progress;
            }
            tried += 1;
            let candidate_text = candidate.print();
            if hlo::load("shrunk.hlo", candidate_text.as_bytes()).is_err() {
                continue;
            }
            if fails(&candidate_text) {
                best = candidate;
                continue 'progress;
            }
        }
        break;
    }
    best.print()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shape that is not a tuple is its own one part (no slicing past its ends).
    #[test]
    fn tuple_shapes_split_at_the_top_level() {
        assert_eq!(
            split_tuple_shape("(f32[2,3]{1,0}, s8[])"),
            ["f32[2,3]{1,0}", "s8[]"]
        );
        assert_eq!(split_tuple_shape("("), ["("]);
        assert_eq!(split_tuple_shape(""), [""]);
    }

    /// A program that "fails" when it holds a `sine` (its ROOT) shrinks to one parameter and
    /// the sine.
    #[test]
    fn a_failure_shrinks_to_what_makes_it() {
        let (seed, text) = (0..2000u64)
            .map(|seed| (seed, fuzzing::programs::fusion(seed)))
            .find(|(_, text)| {
                let root_sine = text
                    .lines()
                    .any(|l| l.contains("ROOT") && l.contains(" sine("));
                root_sine && text.lines().count() > 14
            })
            .expect("a generated program with a sine");
        let shrunk = shrink(&text, 2000, |t| t.contains(" sine("));
        assert!(
            hlo::load("shrunk.hlo", shrunk.as_bytes()).is_ok(),
            "{shrunk}"
        );
        let body: Vec<&str> = shrunk
            .split("fused_computation {\n")
            .nth(1)
            .unwrap()
            .split("\n}")
            .next()
            .unwrap()
            .lines()
            .collect();
        assert_eq!(body.len(), 2, "seed {seed}:\n{text}\nshrunk to\n{shrunk}");
        assert!(
            body[0].contains("parameter(0)")
                && body[1].contains("ROOT")
                && body[1].contains(" sine(")
        );
    }

    /// A flat program shrinks in its ENTRY: to its parameters and the one op that fails.
    #[test]
    fn a_flat_program_shrinks_in_its_entry() {
        let text = (0..50000u64)
            .map(fuzzing::programs::flat_program)
            .find(|text| {
                let root_tanh = text
                    .lines()
                    .any(|l| l.contains("ROOT") && l.contains(" tanh("));
                root_tanh && text.lines().count() > 12
            })
            .expect("a generated program whose ROOT is a tanh");
        let shrunk = shrink(&text, 2000, |t| t.contains(" tanh("));
        assert!(
            hlo::load("shrunk.hlo", shrunk.as_bytes()).is_ok(),
            "{shrunk}"
        );
        let entry: Vec<&str> = shrunk.split(FLAT_ENTRY).nth(1).unwrap().lines().collect();
        assert_eq!(entry.len(), 3, "{text}\nshrunk to\n{shrunk}");
        assert!(entry[0].contains("parameter(0)") && entry[1].contains("ROOT"));
        assert!(entry[1].contains(" tanh(") && entry[2] == "}");
    }
}
