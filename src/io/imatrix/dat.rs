//! llama-imatrix's legacy `.dat` format: entries of name, `ncall`, `nval` and `nval` f32
//! values, then an optional chunk count and dataset name. Every size is checked against the
//! bytes left before it is used.

use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};

use super::{Data, EntryInfo, Imatrix, ImatrixError, ImatrixFormat, Location, Reading, gguf};

/// The longest entry name accepted, in bytes (a tensor name is far shorter).
const MAX_NAME: u64 = 1 << 16;

/// The longest dataset name kept, in bytes.
const MAX_DATASET: u64 = 1 << 12;

/// A reader with its position and the file's length.
struct Cursor<R> {
    r: R,
    at: u64,
    len: u64,
    file: String,
}

/// Why the legacy reading stopped: an I/O error, or a description of what does not fit.
enum Stop {
    Io(std::io::Error),
    Bad(String),
    /// Not the legacy format at all (and not GGUF).
    Neither(String),
}

impl<R: Read + Seek> Cursor<R> {
    fn left(&self) -> u64 {
        self.len.saturating_sub(self.at)
    }

    fn i32(&mut self, what: &dyn Fn() -> String) -> Result<i32, Stop> {
        let mut b = [0u8; 4];
        if self.left() < 4 {
            return Err(Stop::Bad(format!(
                "the file ends inside {} (byte {} of {})",
                what(),
                self.at,
                self.len
            )));
        }
        self.r.read_exact(&mut b).map_err(Stop::Io)?;
        self.at += 4;
        Ok(i32::from_le_bytes(b))
    }

    fn bytes(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<Vec<u8>, Stop> {
        if n > self.left() {
            return Err(Stop::Bad(format!(
                "{} needs {n} bytes at byte {}, only {} remain",
                what(),
                self.at,
                self.left()
            )));
        }
        let mut b = vec![0u8; n as usize];
        self.r.read_exact(&mut b).map_err(Stop::Io)?;
        self.at += n;
        Ok(b)
    }

    fn skip(&mut self, n: u64) -> Result<(), Stop> {
        self.r
            .seek(SeekFrom::Current(i64::try_from(n).unwrap_or(i64::MAX)))
            .map_err(Stop::Io)?;
        self.at += n;
        Ok(())
    }
}

/// Reads the entries' names and sizes (their values are read when asked for).
pub(super) fn read(
    file: String,
    r: impl Read + Seek,
    len: u64,
    data: Data,
) -> Result<Imatrix, ImatrixError> {
    let mut c = Cursor {
        r,
        at: 0,
        len,
        file,
    };
    match entries(&mut c) {
        Ok((entries, chunk_count, datasets)) => Ok(Imatrix {
            file: c.file,
            format: ImatrixFormat::Legacy,
            entries,
            chunk_count,
            chunk_size: None,
            datasets,
            data,
        }),
        Err(Stop::Io(source)) => Err(ImatrixError::Io {
            file: c.file,
            source,
        }),
        Err(Stop::Bad(detail)) => Err(ImatrixError::Legacy {
            file: c.file,
            detail,
        }),
        Err(Stop::Neither(why)) => Err(ImatrixError::NotImatrix { file: c.file, why }),
    }
}

type Entries = (Vec<EntryInfo>, Option<u64>, Vec<String>);

fn entries<R: Read + Seek>(c: &mut Cursor<R>) -> Result<Entries, Stop> {
    let neither = |what: String| {
        Stop::Neither(format!(
            "it does not start with \"GGUF\", and as llama-imatrix's legacy .dat format {what}"
        ))
    };
    let n = match c.i32(&|| "the entry count".to_owned()) {
        Ok(n) => n,
        Err(Stop::Bad(_)) => return Err(neither(format!("it is too short ({} bytes)", c.len))),
        Err(e) => return Err(e),
    };
    // An entry takes at least a name length, a name byte, ncall, nval and one value.
    let most = c.left() / 17;
    if n < 1 || n as u64 > most {
        return Err(neither(format!(
            "its entry count is {n}, where 1 to {most} fit in its {} bytes",
            c.len
        )));
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut seen = HashSet::new();
    for i in 0..n {
        let name_len = c.i32(&|| format!("the name length of entry {i}"))?;
        if name_len < 1 || name_len as u64 > MAX_NAME {
            return Err(Stop::Bad(format!(
                "entry {i}'s name length is {name_len} (1 to {MAX_NAME} bytes expected)"
            )));
        }
        let raw = c.bytes(name_len as u64, &|| format!("the name of entry {i}"))?;
        let name = String::from_utf8(raw).map_err(|e| {
            Stop::Bad(format!(
                "entry {i}'s name is not UTF-8 (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        let shown = crate::io::printable(&name).into_owned();
        let ncall = c.i32(&|| format!("ncall of entry \"{shown}\""))?;
        let nval = c.i32(&|| format!("nval of entry \"{shown}\""))?;
        if nval < 1 {
            return Err(Stop::Bad(format!(
                "entry \"{shown}\" has nval {nval}: it holds no values"
            )));
        }
        let bytes = 4 * nval as u64;
        if bytes > c.left() {
            return Err(Stop::Bad(format!(
                "entry \"{shown}\" holds {nval} values ({bytes} bytes) at byte {}, only {} bytes remain: the file is truncated",
                c.at,
                c.left()
            )));
        }
        if !seen.insert(name.clone()) {
            return Err(Stop::Bad(format!("entry \"{shown}\" appears twice")));
        }
        out.push(EntryInfo {
            name,
            values: nval as usize,
            matrices: 1,
            at: Location::Legacy {
                values: c.at,
                ncall,
            },
        });
        c.skip(bytes)?;
    }
    // The chunk count and the dataset's name, when the file has them.
    let mut chunk_count = None;
    let mut datasets = Vec::new();
    if c.left() >= 4 {
        chunk_count = u64::try_from(c.i32(&String::new)?).ok();
        if c.left() >= 4 {
            let l = c.i32(&String::new)?;
            if l > 0 && (l as u64) <= c.left().min(MAX_DATASET) {
                let raw = c.bytes(l as u64, &String::new)?;
                datasets.push(String::from_utf8_lossy(&raw).into_owned());
            }
        }
    }
    Ok((out, chunk_count, datasets))
}

/// The values divided by `ncall` in f32 (as stored when `ncall` is not positive), as
/// llama-quantize and libgguf make them.
pub(super) fn average(
    im: &Imatrix,
    e: &EntryInfo,
    at: u64,
    ncall: i32,
) -> Result<Reading, ImatrixError> {
    let mut values = gguf::floats(im, at, e.values)?;
    if ncall > 0 {
        let d = ncall as f32;
        for v in &mut values {
            *v /= d;
        }
    }
    Ok(Reading {
        values,
        zero_counts: if ncall > 0 { Vec::new() } else { vec![0] },
        counts: vec![ncall as f32],
    })
}
