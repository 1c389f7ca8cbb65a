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
