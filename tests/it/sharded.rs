//! A sharded safetensors checkpoint written by the safetensors package
//! (tests/data/sharded/generate.py): listed across shards, tensors found in their shard,
//! scanned whole, and the errors of an index that lies.

use std::path::PathBuf;

use quantscope::io::checkpoint::Checkpoint;
use quantscope::io::safetensors::Safetensors;
use quantscope::io::sharded::{INDEX_NAME, Sharded, ShardedError};
use tempfile::TempDir;

use crate::common::explorer;
use crate::common::files;
use crate::common::run;

use files::temp_dir;
use run::quantscope;

fn model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/sharded/model")
}

/// A copy of the checkpoint in a new temporary directory, with `index` as its index
/// (`None`: none).
fn copy(index: Option<&str>) -> TempDir {
    let dir = temp_dir();
    for f in [
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    ] {
        std::fs::copy(model().join(f), dir.path().join(f)).unwrap();
    }
    if let Some(index) = index {
        std::fs::write(dir.path().join(INDEX_NAME), index).unwrap();
    }
    dir
}

#[test]
fn the_index_and_the_directory_open_every_shard() {
    let without_index = copy(None);
    for path in [
        model(),
        model().join(INDEX_NAME),
        without_index.path().to_path_buf(),
    ] {
        let c = Checkpoint::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let listed: Vec<(String, Option<String>)> =
            c.entries().into_iter().map(|e| (e.name, e.shard)).collect();
        let first = Some("model-00001-of-00002.safetensors".to_owned());
        let second = Some("model-00002-of-00002.safetensors".to_owned());
        assert_eq!(
            listed,
            [
                ("embed.weight".to_owned(), first.clone()),
                ("layers.0.bias".to_owned(), first.clone()),
                ("layers.0.weight".to_owned(), first),
                ("layers.1.weight".to_owned(), second.clone()),
                ("lm_head.weight".to_owned(), second),
            ],
            "{}",
            path.display()
        );
        // A tensor loads from its shard exactly as from the shard file itself.
        let shard = Safetensors::open(&model().join("model-00002-of-00002.safetensors")).unwrap();
        assert_eq!(
            c.load("layers.1.weight").unwrap(),
            shard.load("layers.1.weight").unwrap()
        );
    }
}

#[test]
fn an_index_that_lies_is_a_clear_error() {
    let missing = copy(Some(
        r#"{"weight_map": {"embed.weight": "model-00001-of-00002.safetensors", "x": "model-00003-of-00003.safetensors"}}"#,
    ));
    let e = Sharded::open(missing.path()).unwrap_err();
    assert!(
        matches!(&e, ShardedError::MissingShard { tensor, .. } if tensor == "x"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("model-00003-of-00003.safetensors, which does not exist"),
        "{e}"
    );

    let wrong = copy(Some(
        r#"{"weight_map": {"lm_head.weight": "model-00001-of-00002.safetensors"}}"#,
    ));
    let e = Sharded::open(wrong.path()).unwrap_err();
    assert!(
        matches!(&e, ShardedError::NotInShard { tensor, .. } if tensor == "lm_head.weight"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("but that shard has no tensor of that name"),
        "{e}"
    );

    let not_json = copy(Some("{\"weight_map\": [1, 2]"));
    assert!(matches!(
        Sharded::open(not_json.path()),
        Err(ShardedError::Index { .. })
    ));

    // Both refuse at the command line too, with status 2.
    for dir in [&missing, &wrong] {
        for args in [
            vec!["report", dir.path().to_str().unwrap(), "--list-tensors"],
            vec!["scan", dir.path().to_str().unwrap()],
        ] {
            let o = quantscope(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert!(o.stdout.is_empty());
        }
    }
}

#[test]
fn report_and_scan_cover_every_shard() {
    let index = model().join(INDEX_NAME);
    let file = index.to_str().unwrap();
    let o = quantscope(&["report", file, "--list-tensors", "--format", "csv"]);
    assert!(o.status.success());
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(
        csv.starts_with("name,dtype,shape,bytes,loadable,kind,shard\n"),
        "{csv}"
    );
    assert!(
        csv.contains("layers.1.weight,BF16,4x8,64,true,float,model-00002-of-00002.safetensors"),
        "{csv}"
    );

    let o = quantscope(&[
        "report",
        file,
        "--tensor",
        "lm_head.weight",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["shape"], serde_json::json!([5, 4]));

    let o = quantscope(&["report", file, "--tensor", "lm_head"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did you mean \"lm_head.weight\""), "{err}");

    let o = quantscope(&["scan", model().to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut names: Vec<&str> = v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "embed.weight",
            "layers.0.weight",
            "layers.1.weight",
            "lm_head.weight"
        ]
    );
    assert_eq!(v["skipped"][0]["name"], "layers.0.bias");
}

#[test]
fn a_directory_without_shards_is_refused() {
    let dir = temp_dir();
    let e = Sharded::open(dir.path()).unwrap_err();
    assert!(matches!(e, ShardedError::Empty { .. }), "{e:?}");
}

#[test]
fn the_explorers_picker_lists_every_shard_and_opens_a_tensor_from_its_shard() {
    use quantscope::app::{Overlay, Source, translate, update};
    use quantscope::runtime::settle;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut m = explorer::open_picker(model());
    let Some(Overlay::Tensors(picker)) = &m.overlay else {
        panic!("no picker: {:?}", m.status)
    };
    let listed: Vec<(&str, &str)> = picker
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t.dtype.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("embed.weight", "F16"),
            ("layers.0.bias", "F32"),
            ("layers.0.weight", "F32"),
            ("layers.1.weight", "BF16"),
            ("lm_head.weight", "F32"),
        ]
    );
    for c in "layers.1".chars() {
        if let Some(msg) = translate(&m, &KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)) {
            update(&mut m, msg);
        }
    }
    if let Some(msg) = translate(&m, &KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)) {
        update(&mut m, msg);
    }
    settle(&mut m);
    let Source::Tensor {
        name,
        dtype,
        matrix,
        stored,
    } = &m.source
    else {
        panic!("not loaded: {:?}", m.status)
    };
    assert_eq!(
        (name.as_str(), dtype.as_str()),
        ("model-00002-of-00002.safetensors / layers.1.weight", "bf16")
    );
    assert!(stored.is_none());
    let shard = Safetensors::open(&model().join("model-00002-of-00002.safetensors")).unwrap();
    assert_eq!(**matrix, shard.load("layers.1.weight").unwrap());
    assert_eq!(m.analysis.report.as_ref().map(|r| r.shape), Some((4, 8)));
}
