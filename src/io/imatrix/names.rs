//! How a checkpoint's tensor name finds its entry in an importance matrix.
//!
//! llama-imatrix names its entries by the GGUF tensor names llama.cpp gives a model's
//! weights (`blk.3.ffn_down.weight`, `output.weight`). A tensor of a GGUF file has that name
//! already. A tensor of a Hugging Face checkpoint (safetensors) has the name the model's
//! Python code gives it: [`gguf_name`] translates the common ones the way llama.cpp's
//! converter (`convert_hf_to_gguf.py`, with gguf-py's `tensor_mapping.py`) does:
//!
//! | checkpoint name (`N` a layer) | GGUF name |
//! |---|---|
//! | `model.layers.N.self_attn.{q,k,v,o}_proj.weight` (Llama, Mistral, Qwen, Gemma) | `blk.N.attn_{q,k,v,output}.weight` |
//! | `model.layers.N.mlp.{gate,up,down}_proj.weight` | `blk.N.ffn_{gate,up,down}.weight` |
//! | `encoder.layer.N.attention.self.{query,key,value}.weight` (BERT, MiniLM) | `blk.N.attn_{q,k,v}.weight` |
//! | `encoder.layer.N.attention.output.dense.weight` | `blk.N.attn_output.weight` |
//! | `encoder.layer.N.intermediate.dense.weight` | `blk.N.ffn_up.weight` |
//! | `encoder.layer.N.output.dense.weight` | `blk.N.ffn_down.weight` |
//! | `lm_head.weight` | `output.weight` |
//!
//! The layer prefixes `model.layers.N.`, `model.language_model.layers.N.`,
//! `language_model.model.layers.N.`, `encoder.layer.N.` and `bert.encoder.layer.N.` are
//! recognised. Any other name is looked up as it is, and `--imatrix-tensor NAME` picks an
//! entry by hand.

/// Layer prefixes: the text before the layer number.
const PREFIXES: [&str; 5] = [
    "model.layers.",
    "model.language_model.layers.",
    "language_model.model.layers.",
    "bert.encoder.layer.",
    "encoder.layer.",
];

/// A layer's tensors: the checkpoint's suffix after `N.` and the GGUF name's after `blk.N.`.
const SUFFIXES: [(&str, &str); 13] = [
    ("self_attn.q_proj.weight", "attn_q.weight"),
    ("self_attn.k_proj.weight", "attn_k.weight"),
    ("self_attn.v_proj.weight", "attn_v.weight"),
    ("self_attn.o_proj.weight", "attn_output.weight"),
    ("mlp.gate_proj.weight", "ffn_gate.weight"),
    ("mlp.up_proj.weight", "ffn_up.weight"),
    ("mlp.down_proj.weight", "ffn_down.weight"),
    ("attention.self.query.weight", "attn_q.weight"),
    ("attention.self.key.weight", "attn_k.weight"),
    ("attention.self.value.weight", "attn_v.weight"),
    ("attention.output.dense.weight", "attn_output.weight"),
    ("intermediate.dense.weight", "ffn_up.weight"),
    ("output.dense.weight", "ffn_down.weight"),
];

/// The GGUF name llama.cpp gives a checkpoint's tensor, when it is one of the table's.
#[must_use]
pub fn gguf_name(name: &str) -> Option<String> {
    if name == "lm_head.weight" {
        return Some("output.weight".to_owned());
    }
    for p in PREFIXES {
        let Some(rest) = name.strip_prefix(p) else {
            continue;
        };
        let (layer, tail) = rest.split_once('.')?;
        if layer.is_empty() || !layer.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let layer: u32 = layer.parse().ok()?;
        return SUFFIXES
            .iter()
            .find(|(hf, _)| *hf == tail)
            .map(|(_, g)| format!("blk.{layer}.{g}"));
    }
    None
}

/// Entries shown when a name is not found.
const SHOWN: usize = 4;

/// Entries like `name` (sharing its layer and tensor words), or how many entries there are.
pub(crate) fn hint<'a>(entries: impl Iterator<Item = &'a str> + Clone, name: &str) -> String {
    let split = |s: &'a str| s.split(['.', '_']).filter(|w| !w.is_empty());
    let words: Vec<&str> = name
        .split(['.', '_'])
        .filter(|w| !w.is_empty() && *w != "weight" && *w != "blk")
        .collect();
    let mut scored: Vec<(usize, &str)> = entries
        .clone()
        .map(|e| {
            let parts: Vec<&str> = split(e).collect();
            (words.iter().filter(|w| parts.contains(w)).count(), e)
        })
        .filter(|(s, _)| *s > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let total = entries.count();
    if scored.is_empty() {
        return format!(
            " (it has {total} entr{})",
            if total == 1 { "y" } else { "ies" }
        );
    }
    let shown: Vec<String> = scored
        .iter()
        .take(SHOWN)
        .map(|(_, e)| format!("\"{}\"", crate::io::printable(e)))
        .collect();
    format!("; similar entries: {}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_names_map_to_llama_cpps() {
        for (hf, g) in [
            (
                "model.layers.3.mlp.down_proj.weight",
                "blk.3.ffn_down.weight",
            ),
            (
                "model.layers.12.self_attn.o_proj.weight",
                "blk.12.attn_output.weight",
            ),
            (
                "model.language_model.layers.0.self_attn.q_proj.weight",
                "blk.0.attn_q.weight",
            ),
            (
                "encoder.layer.0.output.dense.weight",
                "blk.0.ffn_down.weight",
            ),
            (
                "encoder.layer.5.attention.output.dense.weight",
                "blk.5.attn_output.weight",
            ),
            (
                "bert.encoder.layer.2.intermediate.dense.weight",
                "blk.2.ffn_up.weight",
            ),
            ("lm_head.weight", "output.weight"),
        ] {
            assert_eq!(gguf_name(hf).as_deref(), Some(g), "{hf}");
        }
        for other in [
            "blk.3.ffn_down.weight",
            "model.layers.x.mlp.down_proj.weight",
            "model.layers.3.mlp.down_proj.bias",
            "encoder.layer.0.output.LayerNorm.weight",
            "model.layers.",
        ] {
            assert_eq!(gguf_name(other), None, "{other}");
        }
    }

    #[test]
    fn hints_name_entries_of_the_same_layer_or_tensor() {
        let e = [
            "blk.0.attn_q.weight",
            "blk.1.ffn_down.weight",
            "output.weight",
        ];
        let h = hint(e.iter().copied(), "blk.1.ffn_up.weight");
        assert_eq!(h, "; similar entries: \"blk.1.ffn_down.weight\"");
        assert_eq!(hint(e.iter().copied(), "x"), " (it has 3 entries)");
    }
}
