//! Imports flow downward. Read from the source: each file of `src/` and the modules its
//! code names (`crate::a::b` anywhere, `use crate::{a, b}` groups, `super::` paths), with
//! comments and `#[cfg(test)]` modules left out (a test may use any module). Two rules:
//!
//! - each top-level module imports only the modules below it ([`LAYERS`]);
//! - the modules of the core import one another without a circle (the core's modules are
//!   layered too: a circle would make any of them depend on all the others).
//!
//! docs/ARCHITECTURE.md draws the layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module of the crate and the top-level modules it may import (besides
/// itself). Drawing (`ui`) and the event loop (`tui`) sit above the explorer's state
/// (`app`); the headless commands (`cli`) above everything.
const LAYERS: &[(&str, &[&str])] = &[
    ("core", &[]),
    ("io", &["core"]),
    ("teach", &["core", "io"]),
    ("scan", &["core", "io"]),
    ("app", &["core", "io", "teach"]),
    ("runtime", &["app", "core", "io", "teach"]),
    ("ui", &["app", "core", "io", "teach"]),
    ("tui", &["app", "core", "io", "runtime", "teach", "ui"]),
    (
        "cli",
        &["app", "core", "io", "runtime", "scan", "teach", "tui", "ui"],
    ),
];

/// A module's path in the crate, `["core", "clip", "mse"]` for `src/core/clip/mse.rs`.
type ModPath = Vec<String>;

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module `file` (a path under `src/`) defines.
fn module_of(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts == ["lib"] || parts == ["main"] {
        Vec::new()
    } else {
        parts
    }
}

/// The code of a file without its comments and its test modules: every line from the first
/// `#[cfg(test)]` that opens a module on (test modules come last in this crate's files; a
/// file of tests, `tests.rs`, is left out whole by the caller).
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let end = (0..lines.len())
        .find(|&i| {
            lines[i].trim() == "#[cfg(test)]"
                && lines[i + 1..]
                    .iter()
                    .find(|l| !l.trim_start().starts_with("#["))
                    .is_some_and(|l| l.trim_start().starts_with("mod "))
        })
        .unwrap_or(lines.len());
    lines[..end]
        .iter()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers of a path starting at `at` in `s`: `a::b::c`.
fn path_at(s: &str, at: usize) -> Vec<String> {
    let rest = &s[at..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(rest.len());
    rest[..end]
        .split("::")
        .take_while(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The module paths `code` (of module `me`) names: after `crate::`, the first names of a
/// `use crate::{...}` group, and `super::` paths made absolute.
fn named_paths(code: &str, me: &ModPath) -> Vec<ModPath> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let at = i + "crate::".len();
        if code[at..].starts_with('{') {
            let group = &code[at + 1..at + code[at..].find('}').unwrap_or(0)];
            for part in group.split(',') {
                let p = path_at(part.trim(), 0);
                if !p.is_empty() {
                    out.push(p);
                }
            }
        } else {
            out.push(path_at(code, at));
        }
    }
    for (i, _) in code.match_indices("super::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut at = i;
        let mut up = 0;
        while code[at..].starts_with("super::") {
            at += "super::".len();
            up += 1;
        }
        let mut p: ModPath = me[..me.len().saturating_sub(up)].to_vec();
        p.extend(path_at(code, at));
        out.push(p);
    }
    out
}

/// Every module of `src/` (but test files) and the module paths its code names.
fn imports() -> BTreeMap<ModPath, Vec<ModPath>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .iter()
        .filter(|f| f.file_stem().is_none_or(|s| s != "tests"))
        .map(|f| {
            let me = module_of(&src, f);
            let text = std::fs::read_to_string(f).unwrap();
            let named = named_paths(&code(&text), &me);
            (me, named)
        })
        .collect()
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let mut wrong = Vec::new();
    let layers: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    for (module, named) in imports() {
        let Some(top) = module.first() else { continue };
        let allowed = layers
            .get(top.as_str())
            .unwrap_or_else(|| panic!("src/{top} is not in LAYERS: give it its place"));
        for path in named {
            let Some(other) = path.first() else { continue };
            if other != top
                && layers.contains_key(other.as_str())
                && !allowed.contains(&other.as_str())
            {
                wrong.push(format!("{} imports {}", module.join("::"), path.join("::")));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports that run upward:\n{}",
        wrong.join("\n")
    );
}

/// The modules of the core (each `core::x` with its submodules as one) that `core::x` names.
fn core_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, named) in imports() {
        if module.len() < 2 || module[0] != "core" {
            continue;
        }
        let from = module[1].clone();
        let edges = graph.entry(from.clone()).or_default();
        for path in named {
            if path.len() >= 2 && path[0] == "core" && path[1] != from {
                edges.insert(path[1].clone());
            }
        }
    }
    graph
}

/// The modules on a circle of `graph`, each circle as one sorted list (Tarjan's strongly
/// connected components of more than one module).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.stack.contains(&w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let at = s.stack.iter().position(|&x| x == v).unwrap();
            let mut component: Vec<String> = s.stack.drain(at..).map(str::to_owned).collect();
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found
}

#[test]
fn the_cores_modules_import_one_another_without_a_circle() {
    let found = circles(&core_graph());
    assert!(
        found.is_empty(),
        "circles of imports in the core: {found:?}"
    );
}

/// The reader finds what the rules are about, so that they cannot pass by reading nothing.
#[test]
fn the_reader_sees_imports_and_circles() {
    let graph = core_graph();
    assert!(graph["analyse"].contains("pass"), "{:?}", graph["analyse"]);
    assert!(graph["kernel"].contains("params"), "{:?}", graph["kernel"]);
    let me: ModPath = vec!["core".into(), "clip".into()];
    let code = code(
        "use crate::{io::load, core::x};\n// crate::ui::no\nfn f() { super::simd::g(); }\n\
         #[cfg(test)]\nmod tests {\n    use crate::app::Model;\n}\n",
    );
    let named = named_paths(&code, &me);
    let names: Vec<String> = named.iter().map(|p| p.join("::")).collect();
    assert_eq!(names, ["io::load", "core::x", "core::simd::g"]);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    g.entry("d".into()).or_default().insert("a".into());
    assert_eq!(circles(&g), [vec!["a", "b", "c"]]);
}
