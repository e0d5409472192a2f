//! The workspace's shape, checked on its sources by this crate's tests: inside every crate the
//! `crate::`/`super::` references between modules form a DAG (no import
//! circles), no source file holds more than 800 lines before its test module,
//! and the binary crate stays under its line budget.
//!
//! Module graph rules (what counts as an edge):
//! - a parent module (`lib.rs`, `main.rs`, `x/mod.rs`, or `x.rs` with `x/`)
//!   depends on every child it declares, so a child that reaches back into
//!   an item *defined* in an ancestor closes a circle; items an ancestor only
//!   re-exports (`pub use child::Item`) resolve to the module defining them;
//! - `crate::a::b::item` and `super::item` resolve to the deepest module named
//!   on the path;
//! - code after `#[cfg(test)] mod …` and modules declared under `#[cfg(test)]`
//!   are tests, not architecture, and are left out.

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest a file may be before its `#[cfg(test)]` module.
pub const MAX_FILE_LINES: usize = 800;
/// Budget of the thin binary crate (`crates/cli/src`, every line).
pub const MAX_CLI_LINES: usize = 2800;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One source file as a module of its crate.
pub struct Module {
    /// `a::b` for `src/a/b.rs` (empty for the crate root).
    path: Vec<String>,
    pub file: PathBuf,
    /// Source up to the test module, comments removed.
    code: String,
    children: Vec<String>,
    /// Item name → module path (relative to this module) it is re-exported from.
    reexports: BTreeMap<String, Vec<String>>,
}

/// The source without comments and string contents, and the line where the
/// test module starts (if any).
pub fn production_part(src: &str) -> (String, usize) {
    let lines: Vec<&str> = src.lines().collect();
    let mut end = lines.len();
    for (i, l) in lines.iter().enumerate() {
        if l.trim() == "#[cfg(test)]" {
            let next = lines.get(i + 1).map(|s| s.trim()).unwrap_or("");
            let is_mod = ["mod ", "pub mod ", "pub(crate) mod ", "pub(super) mod "]
                .iter()
                .any(|m| next.starts_with(m));
            if is_mod && next.ends_with('{') {
                end = i;
                break;
            }
        }
    }
    let mut out = String::new();
    let mut skip_next_mod = false;
    for l in &lines[..end] {
        let t = l.trim();
        if t == "#[cfg(test)]" {
            skip_next_mod = true;
            continue;
        }
        let declares_mod = ["mod ", "pub mod ", "pub(crate) mod ", "pub(super) mod "]
            .iter()
            .any(|m| t.starts_with(m));
        if skip_next_mod && declares_mod {
            skip_next_mod = false;
            continue;
        }
        skip_next_mod = false;
        out.push_str(strip_comment_and_strings(l).as_str());
        out.push('\n');
    }
    (out, end)
}

/// A line without its `//` comment and with string literal contents blanked
/// (a message may mention `crate::` without being a reference).
pub fn strip_comment_and_strings(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            if c == '\\' {
                chars.next();
            } else if c == '"' {
                in_str = false;
                out.push('"');
            }
            continue;
        }
        if c == '/' && chars.peek() == Some(&'/') {
            break;
        }
        if c == '"' {
            in_str = true;
        }
        out.push(c);
    }
    out
}

pub fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Expands `a::{b, c::d}` (the text after `crate::` or `super::`) into paths.
pub fn expand_paths(text: &str) -> Vec<Vec<String>> {
    let text = text.trim_start();
    if let Some(rest) = text.strip_prefix('{') {
        let mut depth = 0;
        let mut parts = Vec::new();
        let mut cur = String::new();
        for c in rest.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
            cur.push(c);
        }
        parts.push(cur);
        return parts
            .iter()
            .filter(|p| !p.trim().is_empty())
            .flat_map(|p| expand_paths(p))
            .collect();
    }
    let ident: String = text.chars().take_while(|&c| is_ident(c)).collect();
    if ident.is_empty() || ident == "self" {
        return vec![vec![]];
    }
    let rest = &text[ident.len()..];
    if rest.starts_with('!') {
        // A macro: textually scoped, not a module dependency.
        return vec![];
    }
    match rest.strip_prefix("::") {
        Some(more) => expand_paths(more)
            .into_iter()
            .map(|mut p| {
                p.insert(0, ident.clone());
                p
            })
            .collect(),
        None => vec![vec![ident]],
    }
}

/// Every `crate::…` and `super::…` path in the code, as (number of `super`s,
/// or `None` for `crate`, path).
pub fn references(code: &str) -> Vec<(Option<usize>, Vec<String>)> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for (start, kw) in [("crate::", None), ("super::", Some(1usize))]
        .iter()
        .flat_map(|&(k, s)| code.match_indices(k).map(move |(i, _)| (i, (k, s))))
    {
        let (k, supers) = kw;
        if start > 0 && (is_ident(bytes[start - 1] as char) || bytes[start - 1] == b'$') {
            continue;
        }
        if start >= 7 && &bytes[start - 7..start] == b"super::" {
            continue; // counted by the first `super::` of the chain
        }
        let mut rest = &code[start + k.len()..];
        let mut ups = supers;
        while let Some(r) = rest.strip_prefix("super::") {
            ups = ups.map(|n| n + 1);
            rest = r;
        }
        for p in expand_paths(rest) {
            out.push((ups, p));
        }
    }
    out
}

/// `pub use x::{A, B as C}` lines: item name → path of the module it comes from.
pub fn reexports(code: &str) -> BTreeMap<String, Vec<String>> {
    let mut map = BTreeMap::new();
    for stmt in code.split(';') {
        let t = stmt.trim();
        let Some(body) = t
            .strip_prefix("pub use ")
            .or_else(|| t.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let body = body.strip_prefix("self::").unwrap_or(body);
        if body.starts_with("crate::") || body.starts_with("super::") {
            continue;
        }
        for path in expand_paths(body) {
            if path.len() < 2 {
                continue;
            }
            let name = path.last().cloned().unwrap_or_default();
            let (name, module) = match name.split_once(" as ") {
                Some((_, alias)) => (alias.trim().to_string(), path[..path.len() - 1].to_vec()),
                None => (name, path[..path.len() - 1].to_vec()),
            };
            map.insert(name, module);
        }
    }
    map
}

pub fn declared_children(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in code.lines() {
        let mut t = l.trim();
        for vis in ["pub(crate) ", "pub(super) ", "pub "] {
            if let Some(r) = t.strip_prefix(vis) {
                t = r;
            }
        }
        if let Some(r) = t.strip_prefix("mod ") {
            let name: String = r.chars().take_while(|&c| is_ident(c)).collect();
            if r[name.len()..].trim_start().starts_with(';') {
                out.push(name);
            }
        }
    }
    out
}

pub fn load(root_file: &Path) -> Vec<Module> {
    let mut modules = Vec::new();
    let mut todo = vec![(Vec::<String>::new(), root_file.to_path_buf())];
    while let Some((path, file)) = todo.pop() {
        let src = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let (code, _) = production_part(&src);
        let children = declared_children(&code);
        let dir = if path.is_empty() || file.ends_with("mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for c in &children {
            let flat = dir.join(format!("{c}.rs"));
            let nested = dir.join(c).join("mod.rs");
            let f = if flat.exists() { flat } else { nested };
            let mut p = path.clone();
            p.push(c.clone());
            todo.push((p, f));
        }
        let reexports = reexports(&code);
        modules.push(Module {
            path,
            file,
            code,
            children,
            reexports,
        });
    }
    modules
}

/// The module a path (absolute, from the crate root) names.
pub fn resolve(modules: &BTreeMap<Vec<String>, &Module>, path: &[String]) -> Vec<String> {
    let mut at: Vec<String> = Vec::new();
    let mut i = 0;
    while i < path.len() {
        let m = modules[&at];
        let seg = &path[i];
        if m.children.contains(seg) {
            at.push(seg.clone());
            i += 1;
            continue;
        }
        if let Some(from) = m.reexports.get(seg) {
            let mut target = at.clone();
            target.extend(from.iter().cloned());
            if modules.contains_key(&target) && target != at {
                let mut rest = target.clone();
                rest.push(seg.clone());
                return resolve(modules, &rest);
            }
        }
        break;
    }
    at
}

/// The module graph of one crate: module → modules it depends on.
/// Module path → the module paths it depends on.
pub type Edges = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

pub fn graph(root_file: &Path) -> (Vec<Module>, Edges) {
    let list = load(root_file);
    // `#[macro_export]` macros live at the crate root whatever module
    // defines them; importing one (`use crate::usage;`) is not a module edge.
    let macros: BTreeSet<String> = list
        .iter()
        .flat_map(|m| m.code.split("macro_rules!").skip(1))
        .map(|rest| rest.trim_start().chars().take_while(|&c| is_ident(c)).collect())
        .collect();
    let by_path: BTreeMap<Vec<String>, &Module> = list.iter().map(|m| (m.path.clone(), m)).collect();
    let mut edges: Edges = BTreeMap::new();
    for m in &list {
        let out = edges.entry(m.path.clone()).or_default();
        for c in &m.children {
            let mut p = m.path.clone();
            p.push(c.clone());
            out.insert(p);
        }
        for (ups, p) in references(&m.code) {
            if ups.is_none() && p.len() == 1 && macros.contains(&p[0]) {
                continue;
            }
            let abs = match ups {
                None => p,
                Some(n) => {
                    let keep = m.path.len().saturating_sub(n);
                    let mut base = m.path[..keep].to_vec();
                    base.extend(p);
                    base
                }
            };
            let target = resolve(&by_path, &abs);
            if target != m.path && !target.starts_with(&m.path) {
                out.insert(target);
            }
        }
    }
    (list, edges)
}

/// Strongly connected components with more than one module (Tarjan).
pub fn circles(edges: &Edges) -> Vec<Vec<String>> {
    struct St<'a> {
        edges: &'a Edges,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on: BTreeSet<&'a Vec<String>>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut St<'a>, v: &'a Vec<String>) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(name(w));
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = St {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

pub fn name(p: &[String]) -> String {
    if p.is_empty() {
        "(crate root)".into()
    } else {
        p.join("::")
    }
}

pub fn crates() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let dir = workspace().join("crates");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let src = e.path().join("src");
        for root in ["lib.rs", "main.rs"] {
            if src.join(root).exists() {
                out.push((e.file_name().to_string_lossy().into_owned(), src.join(root)));
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_imports_form_a_dag_in_every_crate() {
        let mut found = Vec::new();
        for (krate, root) in crates() {
            let (_, edges) = graph(&root);
            for c in circles(&edges) {
                found.push(format!("{krate}: {}", c.join(" ↔ ")));
            }
        }
        assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
    }

    #[test]
    fn no_source_file_is_over_the_line_limit_before_its_tests() {
        let mut long = Vec::new();
        for (_, root) in crates() {
            for m in load(&root) {
                let src = std::fs::read_to_string(&m.file).unwrap();
                let (_, n) = production_part(&src);
                if n > MAX_FILE_LINES {
                    long.push(format!("{} ({n} lines)", m.file.display()));
                }
            }
        }
        assert!(
            long.is_empty(),
            "files over {MAX_FILE_LINES} lines before their tests:\n{}",
            long.join("\n")
        );
    }

    #[test]
    fn the_binary_crate_stays_thin() {
        let mut total = 0;
        let mut todo = vec![workspace().join("crates/cli/src")];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    todo.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    total += std::fs::read_to_string(&p).unwrap().lines().count();
                }
            }
        }
        assert!(
            total < MAX_CLI_LINES,
            "crates/cli/src is {total} lines (budget {MAX_CLI_LINES})"
        );
    }

    /// The checker itself: a circle through a parent's own item is found, one
    /// through a re-export is not.
    #[test]
    fn the_checker_finds_a_known_circle_and_passes_a_facade() {
        let dir = std::env::temp_dir().join(format!("hwcal-arch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("a")).unwrap();
        let w = |p: &str, s: &str| std::fs::write(dir.join(p), s).unwrap();
        w(
            "lib.rs",
            "mod a;\nmod b;\npub use a::Thing;\npub fn root_item() {}\n",
        );
        w("a/mod.rs", "mod x;\npub use x::Thing;\n");
        w("a/x.rs", "pub struct Thing;\n// crate::b is only a comment\n");
        w(
            "b.rs",
            "use crate::Thing;\nfn f() { let _ = \"crate::root_item\"; }\n",
        );
        let (_, edges) = graph(&dir.join("lib.rs"));
        assert!(circles(&edges).is_empty(), "{edges:?}");
        w("b.rs", "use crate::{Thing, say};\n");
        w(
            "lib.rs",
            "mod a;\nmod b;\npub use a::Thing;\npub fn root_item() {}\nmacro_rules! say { () => {} }\n",
        );
        let (_, edges) = graph(&dir.join("lib.rs"));
        assert!(circles(&edges).is_empty(), "a macro is not a module: {edges:?}");
        w("b.rs", "use crate::{Thing, root_item};\n");
        let (_, edges) = graph(&dir.join("lib.rs"));
        assert_eq!(
            circles(&edges),
            vec![vec!["(crate root)".to_string(), "b".to_string()]]
        );
        w("b.rs", "");
        w("a/x.rs", "pub struct Thing;\nuse super::super::b;\n");
        w("b.rs", "use crate::a::x::Thing;\n");
        let (_, edges) = graph(&dir.join("lib.rs"));
        assert_eq!(circles(&edges), vec![vec!["a::x".to_string(), "b".to_string()]]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
