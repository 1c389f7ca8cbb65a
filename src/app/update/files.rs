//! Saving, exporting and the file-name prompts they open; copying a tensor's channels into
//! the editor; keeping the settings in the text.

use std::path::PathBuf;
use std::sync::Arc;

use crate::app::editor::Editor;
use crate::app::model::{Effect, Focus, Model, Overlay, Source};

/// What an export with nothing analysed says.
const NO_RESULTS: &str = "nothing to export yet: no results";

/// Why nothing can be exported now, if so: no results yet, or an analysis still running
/// (its results would not be the ones on screen).
fn not_ready(model: &Model) -> Option<&'static str> {
    if model.analysis.report.is_none() {
        Some(NO_RESULTS)
    } else if model.analysis.pending {
        Some("not exported: the analysis is still running; export again when it is done")
    } else {
        None
    }
}

/// Writes the reconstructed matrix of the active configuration to `name` (`.npy` or
/// `.safetensors`), as `report --write-dequantized` does.
fn write_dequantized(model: &mut Model, name: &str) {
    if let Some(why) = not_ready(model) {
        model.status = Some(why.into());
        return;
    }
    let Some(report) = &model.analysis.report else {
        return;
    };
    // A tensor of a checkpoint keeps its name, to be put back in its place.
    let tensor = match &model.source {
        Source::Tensor { name, .. } => name.rsplit(" / ").next().unwrap_or(name).to_string(),
        Source::Text { .. } => "dequantized".to_string(),
    };
    model.effects.push(Effect::WriteDequantized {
        path: PathBuf::from(name),
        report: Arc::clone(report),
        tensor,
    });
    model.status = Some(format!("writing the reconstructed matrix to {name}…"));
}

pub(super) fn save(model: &mut Model) {
    match &model.source {
        Source::Tensor { name, .. } => {
            model.status = Some(format!("{name} is read-only: nothing to save"));
        }
        Source::Text { path: Some(path) } => model.effects.push(Effect::Save {
            path: path.clone(),
            text: model.text(),
        }),
        Source::Text { path: None } => model.overlay = Some(save_as_prompt("channels.txt")),
    }
}

/// Saves typed text under a name asked for; a loaded file is saved where it is.
pub(super) fn save_as(model: &mut Model) {
    if matches!(model.source, Source::Text { .. }) {
        let name = model
            .path()
            .map_or_else(|| "channels.txt".to_string(), |p| p.display().to_string());
        model.overlay = Some(save_as_prompt(&name));
    } else {
        save(model);
    }
}

/// Alt-Shift-E: asks for the name of an HTML or PDF report of the data and configuration.
pub(super) fn export(model: &mut Model) {
    if model.analysis.report.is_none() {
        model.status = Some("nothing to export yet: no results".into());
        return;
    }
    let stem = match &model.source {
        Source::Text { path: Some(p) } => p.file_stem().map(|s| s.to_string_lossy().into_owned()),
        // `model.safetensors / layer.0.weight`: the tensor's name, spelled for a file name.
        Source::Tensor { name, .. } => Some(
            name.rsplit(" / ")
                .next()
                .unwrap_or(name)
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect(),
        ),
        Source::Text { path: None } => None,
    };
    let name = stem.map_or_else(
        || "quantscope-report.html".to_string(),
        |s| format!("{s}-report.html"),
    );
    model.overlay = Some(export_prompt(&name));
}

/// Exports the report to `name` (HTML or PDF by its ending), or says why not.
pub(super) fn export_to(model: &mut Model, name: &str) {
    let document = std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .and_then(|e| e.parse::<crate::io::export::rich::Document>().ok());
    let dequantized = crate::io::dequantized::Kind::of(std::path::Path::new(name)).is_some();
    if document.is_none() && dequantized {
        write_dequantized(model, name);
        return;
    }
    let Some(document) = document else {
        model.status = Some(if name.is_empty() {
            "not exported: no file name given".to_string()
        } else {
            "not exported: the name must end in .html or .pdf (the report), or .npy or .safetensors (the reconstructed matrix); Esc cancels".to_string()
        });
        if !name.is_empty() {
            model.overlay = Some(export_prompt(name));
        }
        return;
    };
    if let Some(why) = not_ready(model) {
        model.status = Some(why.into());
        return;
    }
    let (Some(matrix), Some(report)) = (&model.analysis.matrix, &model.analysis.report) else {
        model.status = Some(NO_RESULTS.into());
        return;
    };
    let versus = match (&model.analysis.pinned, &model.analysis.comparison) {
        (Some(a), Some(c)) if model.pinned.is_some() => Some((Arc::clone(a), Arc::clone(c))),
        _ => None,
    };
    model.effects.push(Effect::Export {
        path: PathBuf::from(name),
        document,
        job: Box::new(crate::app::model::ExportJob {
            matrix: Arc::clone(matrix),
            report: Arc::clone(report),
            versus,
            format_ladder: model.analysis.format_ladder.clone(),
            methods: model.analysis.methods.clone(),
        }),
    });
    let of = if model.stale() {
        " (of the last data that parsed: the text has an error)"
    } else {
        ""
    };
    model.status = Some(format!("exporting {name}{of}…"));
}

/// Writes the preset and the settings changed from it into the text's first lines, as the
/// `#!` directives scenario files use (replacing such lines already there, keeping a title,
/// `look` lines and `activations`); the data lines are not touched. Opening the saved file applies them.
pub(super) fn keep_settings(model: &mut Model) {
    if !matches!(model.source, Source::Text { .. }) {
        model.status = Some("a loaded tensor has no text to keep settings in".into());
        return;
    }
    let lines = model.editor.lines();
    let header = lines
        .iter()
        .take_while(|l| l.trim_start().starts_with("#!"))
        .count();
    let mut new: Vec<String> = lines[..header]
        .iter()
        .filter(|l| {
            let key = l.trim_start()[2..].split(':').next().unwrap_or("").trim();
            key.eq_ignore_ascii_case("title")
                || key.eq_ignore_ascii_case("look")
                || key.eq_ignore_ascii_case("activations")
        })
        .map(|l| l.as_str().to_owned())
        .collect();
    new.push(format!("#! preset: {}", model.preset));
    for (key, value) in crate::core::names::settings(&model.overrides) {
        new.push(format!("#! {key}: {value}"));
    }
    let mut text = new.join("\n");
    text.push('\n');
    if model.editor.replace_rows(0..header, &text) {
        model.request_analysis();
    }
    model.status = Some(format!(
        "the settings are in the first {} lines (#!); Ctrl-S saves them with the data",
        new.len()
    ));
}

/// The "Save as" prompt, holding `name`.
pub(super) fn save_as_prompt(name: &str) -> Overlay {
    Overlay::SaveAs(name_prompt(name))
}

/// The "Export report" prompt, holding `name`.
pub(super) fn export_prompt(name: &str) -> Overlay {
    Overlay::Export(name_prompt(name))
}

/// A one-line file name prompt proposing `name`, selected as a file dialog does: typing
/// or pasting replaces it, and a cursor key (Home, End, Left, Right) keeps it to edit.
pub(super) fn name_prompt(name: &str) -> Box<ratatui_textarea::TextArea<'static>> {
    let mut prompt = ratatui_textarea::TextArea::default();
    prompt.insert_str(name);
    prompt.select_all();
    // Reversed, which shows with colours and without.
    prompt.set_selection_style(
        ratatui::style::Style::new().add_modifier(ratatui::style::Modifier::REVERSED),
    );
    Box::new(prompt)
}

/// The file name typed into a name prompt, trimmed.
pub(super) fn typed_name(prompt: &ratatui_textarea::TextArea<'_>) -> String {
    prompt
        .lines()
        .first()
        .map(|l| l.trim().to_string())
        .unwrap_or_default()
}

/// Most channels copied from a tensor into the editor at once.
pub const COPY_LIMIT: usize = 32;

pub(super) fn copy_to_editor(model: &mut Model) {
    let Source::Tensor { name, matrix, .. } = &model.source else {
        model.status = Some("the data is already text in the editor".into());
        return;
    };
    let all: Vec<usize> = (0..matrix.shape().0).collect();
    let order = if model.order.is_empty() {
        &all
    } else {
        &model.order
    };
    let start = order
        .iter()
        .position(|&c| c == model.selected_channel)
        .unwrap_or(0);
    let picked: Vec<usize> = order.iter().copied().skip(start).take(COPY_LIMIT).collect();
    let values = matrix.values();
    let cols = values.ncols();
    let mut flat = Vec::with_capacity(picked.len() * cols);
    for &r in &picked {
        flat.extend(values.row(r).iter().copied());
    }
    let labels: Vec<Option<String>> = picked
        .iter()
        .map(|&r| {
            Some(
                matrix.labels()[r]
                    .clone()
                    .unwrap_or_else(|| format!("ch{r}")),
            )
        })
        .collect();
    let sub = ndarray::Array2::from_shape_vec((picked.len(), cols), flat)
        .ok()
        .and_then(|v| crate::core::Matrix::with_labels(v, labels).ok());
    let Some(sub) = sub else {
        model.status = Some("nothing to copy".into());
        return;
    };
    let text = format!(
        "# {} of {} of {name}, from channel {}\n{}",
        picked.len(),
        crate::io::export::num::count(all.len(), "channel"),
        picked[0],
        crate::io::text::format_text(&sub)
    );
    model.editor = Editor::unsaved(&text);
    model.editor.move_to_end();
    model.source = Source::Text { path: None };
    model.focus = Focus::Editor;
    model.selected_channel = 0;
    model.status = Some(format!(
        "copied {} into the editor (Ctrl-S saves them)",
        crate::io::export::num::count(picked.len(), "channel")
    ));
    model.request_analysis();
}
