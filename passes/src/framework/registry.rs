//! The pass registry: passes by name, with their descriptions and constructors, so tools
//! can list passes (`hlo-opt --help`), make a flag per pass and build pipelines from text.
//! The list of this crate's passes is in `lib.rs` ([`PassRegistry::standard`]).

use crate::pass::Pass;

/// Creates a pass with its default options.
pub type PassConstructor = fn() -> Box<dyn Pass>;

/// What the registry knows about one pass.
#[derive(Clone, Copy, Debug)]
pub struct PassInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub create: PassConstructor,
}

/// Passes by name, listed in name order.
#[derive(Clone, Debug, Default)]
pub struct PassRegistry {
    passes: Vec<PassInfo>,
}

impl PassRegistry {
    /// A registry with nothing registered.
    pub fn empty() -> PassRegistry {
        PassRegistry::default()
    }

    /// A registry of the passes `passes` make.
    pub fn of(passes: &[PassConstructor]) -> PassRegistry {
        let mut r = PassRegistry::empty();
        for &create in passes {
            r.register(create);
        }
        r
    }

    /// Adds the pass `create` makes; its name must be new.
    pub fn register(&mut self, create: PassConstructor) {
        let pass = create();
        let info = PassInfo {
            name: pass.name(),
            description: pass.description(),
            create,
        };
        match self.passes.binary_search_by(|p| p.name.cmp(info.name)) {
            Ok(_) => panic!("pass '{}' is registered twice", info.name),
            Err(at) => self.passes.insert(at, info),
        }
    }

    pub fn get(&self, name: &str) -> Option<&PassInfo> {
        self.passes
            .binary_search_by(|p| p.name.cmp(name))
            .ok()
            .map(|i| &self.passes[i])
    }

    /// A new instance of the pass called `name`.
    pub fn create(&self, name: &str) -> Option<Box<dyn Pass>> {
        self.get(name).map(|info| (info.create)())
    }

    /// The registered passes, by name.
    pub fn iter(&self) -> impl Iterator<Item = &PassInfo> {
        self.passes.iter()
    }

    /// A new instance of the pass called `name` with `options` set: `key=value` pairs
    /// separated by spaces, as MLIR writes them between a pass's braces.
    pub fn create_with_options(&self, name: &str, options: &str) -> Result<Box<dyn Pass>, String> {
        let mut pass = self
            .create(name)
            .ok_or_else(|| format!("unknown pass '{name}'"))?;
        for option in options.split_whitespace() {
            let (key, value) = option.split_once('=').ok_or_else(|| {
                format!("the option '{option}' of the pass '{name}' is not key=value")
            })?;
            pass.set_option(key, value)?;
        }
        Ok(pass)
    }

    /// The passes of a comma-separated list (`canonicalize,cse`), in order; a pass may be
    /// given options between braces (`optimize-loops{max_unroll_factor=16}`).
    pub fn parse_pipeline(&self, text: &str) -> Result<Vec<Box<dyn Pass>>, String> {
        text.split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                let (name, options) = match entry.split_once('{') {
                    Some((name, rest)) => match rest.strip_suffix('}') {
                        Some(options) => (name.trim(), options),
                        None => {
                            return Err(format!(
                                "'{entry}' in the pipeline '{text}': options must end with '}}'"
                            ));
                        }
                    },
                    None => (entry, ""),
                };
                self.create_with_options(name, options)
                    .map_err(|e| format!("{e} in the pipeline '{text}'"))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_passes_are_listed_by_name() {
        let r = PassRegistry::standard();
        let names: Vec<_> = r.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "canonicalize",
                "convert-index-type",
                "convert-pure-call-ops",
                "cse",
                "distribute-vector-layout",
                "erase-dead-functions",
                "expand-float-ops",
                "expand-integer-power",
                "flatten-tensors",
                "inline",
                "lower-tensors",
                "lower-to-llvm",
                "lower-xla-gpu-to-scf",
                "lower-xla-shared",
                "merge-pointers-to-same-slice",
                "optimize-loops",
                "peel-loops",
                "propagate-slice-indices",
                "recover-exp2",
                "safe-integer-arithmetic",
                "simplify-affine",
                "simplify-arith",
                "test-pass-crash",
                "test-pass-failure",
                "test-pass-wrong-result",
                "unroll-loops",
                "unswitch-loops",
                "vectorize-loads-stores",
            ]
        );
        assert_eq!(r.create("cse").unwrap().display_name(), "CSE");
        assert!(r.get("nope").is_none());
    }

    #[test]
    fn pipelines_parse_in_order() {
        let r = PassRegistry::standard();
        let names: Vec<_> = r
            .parse_pipeline("cse, canonicalize,cse")
            .unwrap()
            .iter()
            .map(|p| p.name())
            .collect();
        assert_eq!(names, ["cse", "canonicalize", "cse"]);
        assert_eq!(
            r.parse_pipeline("cse,frob").err().unwrap(),
            "unknown pass 'frob' in the pipeline 'cse,frob'"
        );
    }
}
