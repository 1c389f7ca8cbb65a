//! The command palette (Ctrl-P, or `:` in the panes): every action of the explorer's keymap
//! by name, with its keys, filtered by what is typed (the letters in order, not necessarily
//! together: `gra` finds "granularity"), so that nothing needs to be remembered. The list
//! is generated from the keymap table, as the help is, so it cannot drift from the keys.

use ratatui_textarea::TextArea;

use crate::app::keymap::{Action, BINDINGS, Combo, Mode};

/// The keymap tables whose actions the palette offers: what the explorer does, from the
/// editor or the panes.
const MODES: [Mode; 3] = [Mode::Global, Mode::Editor, Mode::Panes];

/// One command of the palette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// What it does.
    pub action: Action,
    /// Its short name (the hint line's label).
    pub name: &'static str,
    /// The help's sentence.
    pub what: &'static str,
    /// Its keys, as the help writes them: the editor's first, then the panes'.
    pub keys: String,
}

/// Actions that answer an overlay or open the palette: nothing to run from it.
fn offered(action: Action) -> bool {
    !matches!(
        action,
        Action::Close | Action::Yes | Action::No | Action::Palette
    )
}

/// Every command, in keymap order, each action once.
#[must_use]
pub fn commands() -> Vec<Command> {
    let mut out: Vec<Command> = Vec::new();
    for mode in MODES {
        for b in BINDINGS.iter().filter(|b| b.mode == mode) {
            if !offered(b.action) {
                continue;
            }
            let keys: Vec<String> = b.keys.iter().map(Combo::label).collect();
            if let Some(c) = out.iter_mut().find(|c| c.action == b.action) {
                for k in keys {
                    if !c.keys.split(", ").any(|have| have == k) {
                        c.keys.push_str(", ");
                        c.keys.push_str(&k);
                    }
                }
                continue;
            }
            out.push(Command {
                action: b.action,
                name: b.action.short_in(mode),
                what: b.action.describe_in(mode),
                keys: keys.join(", "),
            });
        }
    }
    out
}

/// How well `query` matches `text`: `None` when its letters are not all in `text` in order;
/// else lower is better (a match at a word's start, then fewer letters skipped).
#[must_use]
pub fn score(query: &str, text: &str) -> Option<usize> {
    let query: Vec<char> = query
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if query.is_empty() {
        return Some(0);
    }
    let text: Vec<char> = text.to_lowercase().chars().collect();
    // The earliest start from which every letter is found in order; a start at a word's
    // beginning counts as better than any start inside a word.
    let mut best: Option<usize> = None;
    for start in (0..text.len()).filter(|&i| text[i] == query[0]) {
        let mut at = start;
        let mut skipped = 0;
        let mut ok = true;
        for &q in &query[1..] {
            let Some(p) = text[at + 1..].iter().position(|&c| c == q) else {
                ok = false;
                break;
            };
            skipped += p;
            at += p + 1;
        }
        if !ok {
            continue;
        }
        let word_start = start == 0 || !text[start - 1].is_alphanumeric();
        let s = skipped * 2 + usize::from(!word_start) * 1000 + start;
        best = Some(best.map_or(s, |b| b.min(s)));
    }
    best
}

/// The palette's state: the filter typed and the selected line.
#[derive(Debug, Clone)]
pub struct Palette {
    /// What is typed.
    pub filter: TextArea<'static>,
    /// The selected line of [`Palette::visible`].
    pub selected: usize,
}

impl Default for Palette {
    fn default() -> Self {
        let mut filter = TextArea::default();
        filter.set_placeholder_text("type to find a command by name");
        Self {
            filter,
            selected: 0,
        }
    }
}

impl Palette {
    /// The text typed.
    #[must_use]
    pub fn query(&self) -> String {
        self.filter.lines().join(" ")
    }

    /// The commands that match what is typed, best first (all, in keymap order, when
    /// nothing is typed).
    #[must_use]
    pub fn visible(&self) -> Vec<Command> {
        let query = self.query();
        let mut found: Vec<(usize, usize, Command)> = commands()
            .into_iter()
            .enumerate()
            .filter_map(|(i, c)| {
                // The name by its letters in order; the sentence by the words typed, whole
                // (letters scattered over a long sentence match almost anything).
                let by_name = score(&query, c.name);
                let by_words = c
                    .what
                    .to_lowercase()
                    .find(query.trim().to_lowercase().as_str())
                    .map(|at| at + 5000);
                let s = by_name.into_iter().chain(by_words).min()?;
                Some((s, i, c))
            })
            .collect();
        found.sort_by_key(|(s, i, _)| (*s, *i));
        found.into_iter().map(|(_, _, c)| c).collect()
    }
}

/// The message that runs `command` (an editing key as if pressed in the editor).
#[must_use]
pub fn message(command: &Command) -> crate::app::Message {
    match command.action {
        Action::Edit(action) => crate::app::Message::Editor {
            action,
            select: false,
        },
        other => crate::app::Message::Action(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_in_order_match_and_a_words_start_ranks_first() {
        assert!(score("gra", "granularity").is_some());
        assert!(score("gnl", "granularity").is_some());
        assert_eq!(score("xyz", "granularity"), None);
        assert!(score("dem", "demo") < score("dem", "undemanding"));
        assert!(score("fmt", "formats") < score("fmt", "free metadata"));
    }

    #[test]
    fn a_sentence_matches_by_the_words_typed_not_scattered_letters() {
        let mut p = Palette::default();
        p.filter.insert_str("worst");
        let found: Vec<&str> = p.visible().iter().map(|c| c.name).collect();
        assert_eq!(found.first(), Some(&"worst"), "{found:?}");
        assert!(!found.contains(&"clear"), "{found:?}");
        // A word of a sentence finds its command: "perplexity" is in none, "recall" in one.
        let mut p = Palette::default();
        p.filter.insert_str("recall");
        assert!(p.visible().iter().any(|c| c.action == Action::Practice));
    }

    #[test]
    fn every_action_of_the_explorer_is_a_command_once_with_its_keys() {
        let all = commands();
        for mode in MODES {
            for b in BINDINGS
                .iter()
                .filter(|b| b.mode == mode && offered(b.action))
            {
                let c = all
                    .iter()
                    .find(|c| c.action == b.action)
                    .unwrap_or_else(|| panic!("{:?} is not in the palette", b.action));
                for k in b.keys {
                    assert!(c.keys.contains(&k.label()), "{:?}: {}", b.action, c.keys);
                }
            }
        }
        let mut actions: Vec<Action> = all.iter().map(|c| c.action).collect();
        actions.dedup();
        assert_eq!(actions.len(), all.len());
    }
}
