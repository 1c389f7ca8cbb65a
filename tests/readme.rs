//! README.md and the user pages under docs/user/ document things the code defines; these
//! tests keep the two in step, and keep every relative link of the documentation working.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(relative: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(relative)).unwrap()
}

fn readme() -> String {
    read("README.md")
}

/// The Markdown files under `dir` (relative to the crate), recursively, sorted.
fn markdown_under(dir: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(ROOT).join(dir), &mut out);
    out.sort();
    out
}

/// README.md and every page of docs/user/, one after the other: where a user reads about
/// the keys, flags and presets.
fn user_docs() -> String {
    let mut text = readme();
    for page in markdown_under("docs/user") {
        text.push('\n');
        text.push_str(&std::fs::read_to_string(page).unwrap());
    }
    text
}

/// The text without the fenced blocks that run another program (`python3 ...`, `pip ...`),
/// whose flags are that program's.
fn without_other_programs(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if !line.trim_start().starts_with("```") {
            continue;
        }
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .collect();
        let first = block.first().map_or("", |l| l.trim_start());
        if !(first.starts_with("python3 ") || first.starts_with("pip ")) {
            for l in block {
                out.push_str(l);
                out.push('\n');
            }
        }
        out.push_str("```\n");
    }
    out
}

/// Every long flag of every command (`report`, `scan`, ...), without the leading `--`.
fn cli_flags() -> BTreeSet<String> {
    use clap::CommandFactory as _;
    let top = quantscope::cli::Cli::command();
    let mut flags = BTreeSet::new();
    for command in std::iter::once(&top).chain(top.get_subcommands()) {
        for arg in command.get_arguments() {
            if let Some(long) = arg.get_long() {
                flags.insert(long.to_string());
            }
        }
    }
    flags.extend(["help", "version"].map(String::from));
    flags
}

#[test]
fn explorer_page_key_table_matches_the_keymap() {
    let table = quantscope::ui::help::markdown_key_table();
    assert!(
        read("docs/user/explorer.md").contains(table.trim()),
        "docs/user/explorer.md's key table is out of date; it should read:\n{table}"
    );
}

#[test]
fn readme_short_key_list_is_rows_of_the_keymap() {
    let table = quantscope::ui::help::markdown_key_table();
    let generated: BTreeSet<&str> = table.lines().collect();
    let readme = readme();
    let rows: Vec<&str> = readme
        .lines()
        .skip_while(|l| *l != "| keys | action |")
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(
        rows.len() >= 8,
        "README should list the keys that matter in a | keys | action | table: {rows:?}"
    );
    for row in rows {
        assert!(
            generated.contains(row),
            "README's key row {row:?} is not a row of the keymap's table (docs/user/explorer.md)"
        );
    }
}

#[test]
fn readme_lists_every_preset() {
    let readme = readme();
    for p in quantscope::core::PRESETS {
        assert!(
            readme.contains(&format!("`{}`", p.name)),
            "README does not mention preset {}",
            p.name
        );
    }
}

#[test]
fn readme_lists_every_preset_and_format_the_binary_lists() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quantscope"))
        .args(["report", "--list-presets"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let listed = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = listed
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("Formats with") && !l.starts_with("Clipping ("))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.len() > 20, "{listed}");
    let readme = readme();
    let missing: Vec<&&str> = names
        .iter()
        .filter(|n| !readme.contains(&format!("`{n}`")))
        .collect();
    assert!(missing.is_empty(), "README's tables lack: {missing:?}");
}

#[test]
fn readme_gives_the_two_commands() {
    let readme = readme();
    assert!(readme.contains("cargo run --release"));
    // The test command is the one CI runs.
    let ci = read(".ci/run");
    let test = ci
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cargo test"))
        .expect(".ci/run runs cargo test");
    assert!(
        readme.contains(test),
        "README should give the test command .ci/run runs: {test}"
    );
}

#[test]
fn every_flag_of_every_command_is_documented() {
    let docs = user_docs();
    let missing: Vec<String> = cli_flags()
        .into_iter()
        .filter(|f| !matches!(f.as_str(), "help" | "version"))
        .filter(|f| !docs.contains(&format!("--{f}")))
        .collect();
    assert!(
        missing.is_empty(),
        "neither README nor docs/user/ mentions: {missing:?}"
    );
}

#[test]
fn every_flag_the_user_docs_name_exists() {
    // cargo's own flags, which the docs name in build commands.
    const CARGO: [&str; 3] = ["release", "features", "path"];
    let flags = cli_flags();
    let docs = without_other_programs(&user_docs());
    let mut unknown = BTreeSet::new();
    let bytes = docs.as_bytes();
    for (at, _) in docs.match_indices("--") {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b == b'-' || b.is_ascii_alphanumeric()) {
            continue;
        }
        let name: String = docs[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
            .collect();
        let name = name.trim_end_matches('-');
        if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
            continue;
        }
        if !flags.contains(name) && !CARGO.contains(&name) {
            unknown.insert(name.to_string());
        }
    }
    assert!(
        unknown.is_empty(),
        "README or docs/user/ names flags no command has: {unknown:?}"
    );
}

#[test]
fn report_page_states_the_html_and_pdf_bounds_the_code_keeps() {
    use quantscope::core::figures::{MAX_CHANNELS, MAX_LEVELS, MAX_PLOTTED, MAX_SAMPLES, WORST};
    use quantscope::io::export::rich::MAX_FORMULA_LINES;
    let docs = read("docs/user/report.md");
    let flowed = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    for stated in [
        format!("at most {MAX_PLOTTED} channels' values are plotted"),
        format!("{MAX_SAMPLES} values each"),
        format!("grid levels are drawn up to {MAX_LEVELS} codes"),
        format!("a matrix of more than {MAX_CHANNELS} channels lists its {WORST} worst"),
        format!("stops after {MAX_FORMULA_LINES} lines"),
    ] {
        assert!(
            flowed.contains(&stated),
            "docs/user/report.md should say: {stated}"
        );
    }
    for format in ["html", "pdf"] {
        assert!(docs.contains(&format!("--format {format}")), "{format}");
    }
}

/// The text of a Markdown file outside fenced code blocks and inline code spans, and its
/// headings (their text, in order).
fn prose_and_headings(markdown: &str) -> (String, Vec<String>) {
    let mut prose = String::new();
    let mut headings = Vec::new();
    let mut fence: Option<&str> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let text = rest.trim_start_matches('#');
            if text.starts_with(' ') {
                headings.push(text.trim().trim_end_matches('#').trim().to_string());
            }
        }
        // Inline code spans hold no links.
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                prose.push_str(part);
            }
        }
        prose.push('\n');
    }
    (prose, headings)
}

/// GitHub's anchor for a heading: the rendered text (link targets dropped, code spans kept)
/// in lower case, with everything but letters, digits, spaces, `-` and `_` removed, and
/// spaces turned into `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](target)` renders as `text`.
    while let Some(open) = rest.find("](") {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        rest = &rest[open + close + 1..];
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings, with GitHub's `-1`, `-2` for repeats.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for heading in prose_and_headings(markdown).1 {
        let base = slug(&heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The targets of a Markdown file's links and images outside code: `[text](target)` and
/// reference definitions `[name]: target`.
fn link_targets(markdown: &str) -> Vec<String> {
    let prose = prose_and_headings(markdown).0;
    let mut targets = Vec::new();
    for (at, _) in prose.match_indices("](") {
        let rest = &prose[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(rest[..end].trim().to_string());
        }
    }
    for line in prose.lines() {
        if let Some(def) = line.trim_start().strip_prefix('[')
            && let Some((_, target)) = def.split_once("]: ")
        {
            targets.push(target.trim().to_string());
        }
    }
    targets
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let root = Path::new(ROOT);
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    files.extend(markdown_under("docs"));
    assert!(files.len() > 8, "{files:?}");
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(root).unwrap().display().to_string();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !linked.exists() {
                broken.push(format!("{name}: {target} (no such file)"));
                continue;
            }
            if anchor.is_empty() {
                continue;
            }
            let Ok(linked_text) = std::fs::read_to_string(&linked) else {
                broken.push(format!("{name}: {target} (an anchor into a directory)"));
                continue;
            };
            if !anchors(&linked_text).contains(anchor) {
                broken.push(format!("{name}: {target} (no heading with that anchor)"));
            }
        }
    }
    assert!(checked > 30, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_github_slugs() {
    assert_eq!(slug("`quantscope report`"), "quantscope-report");
    assert_eq!(
        slug("Formats: `--preset q4_k` and `--formats`"),
        "formats---preset-q4_k-and---formats"
    );
    assert_eq!(
        slug("The formats models ship in (`core::format`)"),
        "the-formats-models-ship-in-coreformat"
    );
    assert_eq!(
        slug("Where the seed documents' arithmetic is wrong"),
        "where-the-seed-documents-arithmetic-is-wrong"
    );
    let twice = anchors("# A\n\n## Keys\n\n```text\n## Keys\n```\n\n## Keys\n");
    assert_eq!(
        twice,
        ["a", "keys", "keys-1"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    assert_eq!(
        link_targets("[a](x.md#b) `[c](no.md)` ![d](e.png)\n```\n[f](no.md)\n```\n[g]: h.md\n"),
        ["x.md#b", "e.png", "h.md"]
    );
}
