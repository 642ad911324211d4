//! The file graph of `crates/ir/src`: which module names which through `crate::` or
//! `super::` paths. The only cycle allowed is the knot the crate's doc comment explains
//! (a module carries its registry, whose hooks are typed by the printer, parser and
//! verifier); any other cycle is a layering mistake this test names.

use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules that may form one strongly connected set.
const KNOT: &[&str] = &["module", "parser", "printer", "registry", "verifier"];

/// `a/b/mod.rs` and `a/b.rs` are module `a::b`; `lib.rs` is the crate root (left out: it
/// only declares and re-exports).
fn module_name(relative: &Path) -> Option<String> {
    let text = relative
        .with_extension("")
        .to_string_lossy()
        .replace('\\', "/");
    let text = text.strip_suffix("/mod").unwrap_or(&text);
    (text != "lib").then(|| text.replace('/', "::"))
}

fn sources(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && let Some(name) = module_name(path.strip_prefix(root).unwrap())
        {
            let text = std::fs::read_to_string(&path).unwrap();
            // Unit tests may reach anywhere.
            let code = text.split("#[cfg(test)]").next().unwrap().to_string();
            out.insert(name, code);
        }
    }
}

/// The longest module that `path` (`a::b::Item`) starts with.
fn owner<'a>(path: &[&str], modules: &'a BTreeMap<String, String>) -> Option<&'a String> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get_key_value(&path[..n].join("::")))
        .map(|(k, _)| k)
}

/// Every path after `crate::` or `super::`, with brace groups one level deep expanded
/// (`crate::{a, b::C}` gives `a` and `b::C`).
fn named_paths(from: &str, code: &str) -> Vec<Vec<String>> {
    let parent: Vec<&str> = from.split("::").collect();
    let mut out = Vec::new();
    for (prefix, base) in [
        ("crate::", vec![]),
        ("super::", parent[..parent.len() - 1].to_vec()),
    ] {
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            let base: Vec<String> = base.iter().map(|s| s.to_string()).collect();
            let head: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut path = base.clone();
            path.extend(head.split("::").filter(|s| !s.is_empty()).map(String::from));
            if rest[head.len()..].starts_with('{') {
                let group = &rest[head.len() + 1..rest.find('}').unwrap_or(rest.len())];
                for item in group.split(',') {
                    let mut p = path.clone();
                    p.extend(item.trim().split("::").map(str::trim).map(String::from));
                    out.push(p);
                }
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn no_import_cycle_outside_the_registry_knot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules = BTreeMap::new();
    sources(&root, &root, &mut modules);
    let mut graph = DiGraph::<&str, ()>::new();
    let nodes: BTreeMap<&str, _> = modules
        .keys()
        .map(|m| (m.as_str(), graph.add_node(m.as_str())))
        .collect();
    for (from, code) in &modules {
        let mut targets = BTreeSet::new();
        for path in named_paths(from, code) {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            if let Some(to) = owner(&path, &modules) {
                // A module naming its own descendants or ancestors is not an edge.
                let nested =
                    to.starts_with(&format!("{from}::")) || from.starts_with(&format!("{to}::"));
                if to != from && !nested {
                    targets.insert(to.as_str());
                }
            }
        }
        for to in targets {
            graph.add_edge(nodes[from.as_str()], nodes[to], ());
        }
    }
    let knot: BTreeSet<&str> = KNOT.iter().copied().collect();
    let cycles: Vec<BTreeSet<&str>> = tarjan_scc(&graph)
        .into_iter()
        .filter(|set| set.len() > 1)
        .map(|set| set.into_iter().map(|n| graph[n]).collect())
        .filter(|set| *set != knot)
        .collect();
    assert!(
        cycles.is_empty(),
        "import cycles between files of crates/ir: {cycles:?}"
    );
    assert!(modules.len() > 30, "read only {} modules", modules.len());
}
