//! Fails when the files of a crate import each other, directly or round a loop: such modules can
//! only be understood and changed together. A file's imports are its `crate::` paths (including
//! names re-exported at the crate root by `pub use`) and, in a top-level file, its `super::`
//! paths; comments are skipped.

use anyhow::{bail, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Checks every crate under `crates/` and `bins/`.
pub fn check() -> Result<()> {
    let mut found = Vec::new();
    for parent in ["crates", "bins"] {
        let Ok(entries) = std::fs::read_dir(parent) else { continue };
        let mut crates: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("src")).filter(|p| p.is_dir()).collect();
        crates.sort();
        for src in crates {
            for cycle in cycles(&imports(&src)?) {
                found.push(format!("{}: {}", src.display(), cycle.join(" -> ")));
            }
        }
    }
    if !found.is_empty() {
        bail!("modules that import each other (split out what they share):\n  {}", found.join("\n  "));
    }
    eprintln!("xtask: no module imports another that imports it back");
    Ok(())
}

/// The top-level modules of the crate at `src` and the other top-level modules each one uses.
fn imports(src: &Path) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let mut files: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    collect(src, src, &mut files)?;
    let roots: Vec<&PathBuf> = ["lib", "main"].iter().filter_map(|r| files.get(*r)).flatten().collect();
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    for root in roots {
        for (module, names) in reexports(&code_of(root)?) {
            for name in names {
                reexported.insert(name, module.clone());
            }
        }
    }
    let modules: BTreeSet<String> = files.keys().filter(|m| *m != "lib" && *m != "main").cloned().collect();
    let mut graph = BTreeMap::new();
    for module in &modules {
        let mut used = BTreeSet::new();
        for file in &files[module] {
            let code = code_of(file)?;
            let top_level = file.parent() == Some(src);
            for path in paths_after(&code, "crate::").into_iter().chain(if top_level {
                paths_after(&code, "super::")
            } else {
                Vec::new()
            }) {
                let target = if modules.contains(&path) { Some(&path) } else { reexported.get(&path) };
                if let Some(target) = target.filter(|t| *t != module) {
                    used.insert(target.clone());
                }
            }
        }
        graph.insert(module.clone(), used);
    }
    Ok(graph)
}

/// Files of each top-level module (`x.rs` and everything under `x/`).
fn collect(src: &Path, dir: &Path, files: &mut BTreeMap<String, Vec<PathBuf>>) -> Result<()> {
    for entry in std::fs::read_dir(dir)?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(src, &path, files)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src)?;
            let top = relative.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned());
            if let Some(top) = top {
                files.entry(top.trim_end_matches(".rs").to_string()).or_default().push(path);
            }
        }
    }
    Ok(())
}

/// A file's code without comments and without its `#[cfg(test)] mod tests` (tests may use
/// anything).
fn code_of(file: &Path) -> Result<String> {
    let text = std::fs::read_to_string(file)?;
    let tests = text.match_indices("\nmod tests").map(|(at, _)| at).find(|&at| {
        let attribute = text[..at].lines().last().unwrap_or_default();
        attribute.starts_with("#[cfg(") && attribute.contains("test")
    });
    let text = match tests {
        Some(at) => &text[..at],
        None => &text,
    };
    Ok(text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n"))
}

/// The first segment of every path after `prefix`, including each name of a `prefix{a, b::c}`
/// group.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let boundary = code[..at].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if !boundary {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            found.extend(group.split(',').map(first_identifier).filter(|n| !n.is_empty()));
        } else {
            found.push(first_identifier(rest));
        }
    }
    found
}

fn first_identifier(text: &str) -> String {
    text.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// `pub use module::{A, B}` and `pub use module::A` of a crate root: the module of each name.
fn reexports(root: &str) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for statement in root.split(';') {
        let Some(used) = statement.trim().strip_prefix("pub use ") else { continue };
        let used = used.trim_start_matches("self::").trim_start_matches("crate::");
        let Some((module, names)) = used.split_once("::") else { continue };
        let names = names.trim().trim_start_matches('{').trim_end_matches('}');
        let names = names
            .split(',')
            .map(|n| n.rsplit("::").next().unwrap_or_default())
            .map(|n| n.split(" as ").last().unwrap_or_default().trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        found.push((module.trim().to_string(), names));
    }
    found
}

/// Every cycle of `graph`, one per strongly connected group of modules, as a loop of names.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for start in graph.keys() {
        if seen.contains(start) {
            continue;
        }
        if let Some(path) = path_back(graph, start) {
            seen.extend(path.iter().cloned());
            let mut cycle = path;
            cycle.push(start.clone());
            found.push(cycle);
        }
    }
    found
}

/// A shortest path from `start` through its imports back to `start`, if there is one.
fn path_back(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut previous: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.to_string()]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(&node).into_iter().flatten() {
            if next == start {
                let mut path = vec![node.clone()];
                while let Some(p) = previous.get(path.last()?) {
                    path.push(p.clone());
                }
                path.reverse();
                return Some(path);
            }
            if next != start && !previous.contains_key(next) {
                previous.insert(next.clone(), node.clone());
                queue.push_back(next.clone());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_loop_through_a_reexport_and_ignores_comments() {
        let graph = BTreeMap::from([
            ("a".to_string(), BTreeSet::from(["b".to_string()])),
            ("b".to_string(), BTreeSet::from(["c".to_string()])),
            ("c".to_string(), BTreeSet::from(["a".to_string()])),
            ("d".to_string(), BTreeSet::from(["a".to_string()])),
        ]);
        assert_eq!(cycles(&graph), vec![vec!["a".to_string(), "b".to_string(), "c".to_string(), "a".to_string()]]);
        assert_eq!(paths_after("use crate::{x, y::Z};\nlet v = crate::w::f();", "crate::"), ["x", "y", "w"]);
        assert_eq!(
            reexports("pub use jobs::{Job, Kind as K};"),
            [("jobs".to_string(), vec!["Job".into(), "K".into()])]
        );
    }
}
