//! README.md documents things the code defines; these tests keep the two in step.

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

#[test]
fn readme_key_table_matches_the_keymap() {
    let table = quantscope::ui::help::markdown_key_table();
    assert!(
        readme().contains(table.trim()),
        "README's key table is out of date; it should read:\n{table}"
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
fn every_flag_of_every_command_is_in_the_readme() {
    use clap::CommandFactory as _;
    let readme = readme();
    let top = quantscope::cli::Cli::command();
    let mut missing = Vec::new();
    let commands = std::iter::once(&top).chain(top.get_subcommands());
    for command in commands {
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if matches!(long, "help" | "version") {
                continue;
            }
            if !readme.contains(&format!("--{long}")) {
                missing.push(format!("{} --{long}", command.get_name()));
            }
        }
    }
    assert!(missing.is_empty(), "README does not mention: {missing:?}");
}

#[test]
fn readme_states_the_html_and_pdf_bounds_the_code_keeps() {
    use quantscope::core::figures::{MAX_CHANNELS, MAX_LEVELS, MAX_PLOTTED, MAX_SAMPLES, WORST};
    use quantscope::io::export::rich::MAX_FORMULA_LINES;
    let readme = readme();
    for stated in [
        format!("at most {MAX_PLOTTED} channels' values are plotted"),
        format!("{MAX_SAMPLES} values each"),
        format!("grid levels are drawn up to {MAX_LEVELS} codes"),
        format!("a matrix of more than {MAX_CHANNELS} channels lists its {WORST} worst"),
        format!("stops after {MAX_FORMULA_LINES} lines"),
    ] {
        let flowed = readme.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flowed.contains(&stated), "README should say: {stated}");
    }
    for format in ["html", "pdf"] {
        assert!(readme.contains(&format!("--format {format}")), "{format}");
    }
}
