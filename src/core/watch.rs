//! A watch over one entry of the format ladder (or any work split by rows) while its rows are encoded on every core: the
//! rows done so far, and a stop asked for by the caller, checked before each row.
//!
//! The ladder runs an entry on a thread of its own and, meanwhile, tells its caller every
//! [`POLL`] how many rows are done ([`run`]); when the caller answers false, the watch is
//! stopped and each core stops at its next row (the entry's result is then
//! [`Stopped`], never a part of the matrix). A row is checked before it is
//! encoded and counted after, so the check changes no code, scale or byte, and its cost is two
//! atomic operations a row (a row of 4096 values takes tens of microseconds or more to encode).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The work was stopped by its caller before it was done (the analysis turns it into its
/// own `Stopped` error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// How often the caller hears of an entry in progress (and may stop it).
pub const POLL: Duration = Duration::from_millis(50);

/// Rows done of an entry, and whether it is to stop.
#[derive(Debug, Default)]
pub struct Watch {
    stop: AtomicBool,
    rows: AtomicUsize,
}

impl Watch {
    /// Err([`Stopped`]) once the entry is to stop: the row loop checks it before each row.
    pub fn check(&self) -> Result<(), Stopped> {
        if self.stop.load(Ordering::Relaxed) {
            Err(Stopped)
        } else {
            Ok(())
        }
    }

    /// Counts one more row done.
    pub fn row_done(&self) {
        self.rows.fetch_add(1, Ordering::Relaxed);
    }

    /// Rows done so far.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.rows.load(Ordering::Relaxed)
    }

    /// Asks every core to stop at its next row.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was asked for.
    #[must_use]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// [`Watch::check`] and [`Watch::row_done`] around `row`, when there is a watch.
pub(crate) fn watched<T, E: From<Stopped>>(
    watch: Option<&Watch>,
    row: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    if let Some(w) = watch {
        w.check()?;
    }
    let out = row()?;
    if let Some(w) = watch {
        w.row_done();
    }
    Ok(out)
}

/// Runs `work` under a new watch on a thread of its own, and every [`POLL`] until it is done
/// calls `rows_done(rows)`; when that returns false, the watch is stopped and `work`'s
/// result (its rows stop at the next one) is replaced by [`Stopped`].
pub fn run<T: Send>(
    work: impl FnOnce(&Watch) -> T + Send,
    rows_done: &mut dyn FnMut(usize) -> bool,
) -> Result<T, Stopped> {
    let watch = Watch::default();
    let caller = std::thread::current();
    let out = std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let out = work(&watch);
            caller.unpark();
            out
        });
        // Woken early by the worker when it is done (or by a wake left over from an
        // earlier entry: the caller is told only once each whole period has passed).
        let mut next = Instant::now() + POLL;
        while !worker.is_finished() {
            std::thread::park_timeout(next.saturating_duration_since(Instant::now()));
            if worker.is_finished() || Instant::now() < next {
                continue;
            }
            next += POLL;
            if !watch.stopped() && !rows_done(watch.rows()) {
                watch.stop();
            }
        }
        worker.join()
    });
    match out {
        Ok(_) if watch.stopped() => Err(Stopped),
        Ok(out) => Ok(out),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
