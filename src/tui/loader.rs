//! Loading a tensor chosen in the explorer's picker, off the input thread.
//!
//! Reading a large tensor from a checkpoint takes long enough to be felt (a 4096 x 4096 f32
//! tensor is 64 MiB), so each load runs on a thread of its own and the event loop collects
//! the result as it collects analyses. When a second tensor is chosen before the first has
//! arrived, only the newest choice is delivered.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;

/// What a load delivers: the tensor, or a message.
pub(crate) type Loaded = Result<crate::app::LoadedTensor, String>;

/// Loads in flight and their results.
pub(crate) struct Loader {
    /// The number of the newest request (0: none yet).
    newest: u64,
    /// Requests not yet answered.
    waiting: usize,
    tx: Sender<(u64, Loaded)>,
    rx: Receiver<(u64, Loaded)>,
}

impl Loader {
    pub(crate) fn new() -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            newest: 0,
            waiting: 0,
            tx,
            rx,
        }
    }

    /// Starts loading tensor `name` of `path`; any earlier request still loading will be
    /// dropped when it arrives.
    pub(crate) fn request(&mut self, path: PathBuf, name: String) {
        self.request_with(move || crate::app::load_tensor_named(&path, &name));
    }

    /// Starts `load` on a thread of its own as the newest request.
    fn request_with(&mut self, load: impl FnOnce() -> Loaded + Send + 'static) {
        self.newest += 1;
        self.waiting += 1;
        let (number, tx) = (self.newest, self.tx.clone());
        let started = thread::Builder::new().name("load".into()).spawn(move || {
            // The receiver outlives the explorer's loop; a send after it has gone is
            // of no interest.
            let _ = tx.send((number, load()));
        });
        if let Err(e) = started {
            let _ = self
                .tx
                .send((number, Err(format!("could not start loading: {e}"))));
        }
    }

    /// Whether a request has not been answered yet.
    pub(crate) fn busy(&self) -> bool {
        self.waiting > 0
    }

    /// The newest request's result, once it has arrived (older ones are dropped).
    pub(crate) fn poll(&mut self) -> Option<Loaded> {
        let mut newest = None;
        while let Ok((number, loaded)) = self.rx.try_recv() {
            self.waiting = self.waiting.saturating_sub(1);
            if number == self.newest {
                newest = Some(loaded);
            }
        }
        newest
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier};
    use std::time::{Duration, Instant};

    use super::*;

    /// Polls until `loader` is idle (or a few seconds have passed), collecting deliveries.
    fn drain(loader: &mut Loader) -> Vec<Loaded> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut got = Vec::new();
        while loader.busy() && Instant::now() < deadline {
            got.extend(loader.poll());
            thread::sleep(Duration::from_millis(1));
        }
        got
    }

    #[test]
    fn only_the_newest_request_is_delivered() {
        let mut loader = Loader::new();
        assert!(!loader.busy() && loader.poll().is_none());
        // The first load finishes after the second was requested, and after it arrived.
        let gate = Arc::new(Barrier::new(2));
        let first = Arc::clone(&gate);
        loader.request_with(move || {
            first.wait();
            Err("first".into())
        });
        loader.request_with(|| Err("second".into()));
        assert!(loader.busy());
        let second = {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Some(got) = loader.poll() {
                    break Some(got);
                }
                if Instant::now() > deadline {
                    break None;
                }
                thread::sleep(Duration::from_millis(1));
            }
        };
        assert_eq!(
            second.map(|r| r.map(|t| t.name)),
            Some(Err("second".into()))
        );
        assert!(loader.busy(), "the first load is still running");
        gate.wait();
        assert!(drain(&mut loader).is_empty(), "the older result is dropped");
        assert!(!loader.busy());
    }

    #[test]
    fn a_missing_file_is_a_message() {
        let mut loader = Loader::new();
        loader.request("/nonexistent/model.safetensors".into(), "w".into());
        let got = drain(&mut loader);
        assert_eq!(got.len(), 1);
        let message = got[0].as_ref().err().cloned().unwrap_or_default();
        assert!(message.contains("model.safetensors"), "{message}");
    }
}
