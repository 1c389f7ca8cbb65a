//! README.md and the user pages under docs/user/ document things the code defines; these
//! tests keep the two in step.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(relative: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(relative)).unwrap()
}

fn readme() -> String {
    read("README.md")
}

/// The Markdown files of `dir` (relative to the crate), sorted, recursively.
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

#[test]
fn explorer_page_key_table_matches_the_keymap() {
    let table = quantscope::ui::help::markdown_key_table();
    assert!(
        read("docs/user/explorer.md").contains(table.trim()),
        "docs/user/explorer.md's key table is out of date; it should read:\n{table}"
    );
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
fn readme_gives_the_two_commands() {
    let readme = readme();
    assert!(readme.contains("cargo run --release"));
    assert!(readme.contains("cargo test"));
}

#[test]
fn every_flag_of_every_command_is_documented() {
    use clap::CommandFactory as _;
    let docs = user_docs();
    let top = quantscope::cli::Cli::command();
    let mut missing = Vec::new();
    let commands = std::iter::once(&top).chain(top.get_subcommands());
    for command in commands {
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if matches!(long, "help" | "version") {
                continue;
            }
            if !docs.contains(&format!("--{long}")) {
                missing.push(format!("{} --{long}", command.get_name()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "neither README nor docs/user/ mentions: {missing:?}"
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
