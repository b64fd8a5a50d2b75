//! How a run from Python is controlled: its memory limit, Ctrl-C, and progress reports.
//!
//! The event loop runs without the GIL, so Python's signal handlers cannot run while it does;
//! every [`ccbench_sim::world::WATCH_EVERY`] events the loop looks up, and at most every
//! [`LOOK_EVERY`] of wall time we take the GIL to run them (`check_signals`) and to call the
//! progress callback. A KeyboardInterrupt (Ctrl-C, or SIGTERM as the CLI maps it) stops the run
//! and it is summarised up to where it got; any other exception from the callback is re-raised.

use std::time::{Duration, Instant};

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

use ccbench_sim::scenario::units::parse_size;

use super::ScenarioError;

/// Wall time between two looks at Python's signals: Ctrl-C stops a run within about this.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// What stopped a run early, if anything.
pub enum Stop {
    /// Ctrl-C or SIGTERM: the run is summarised as partial.
    Interrupted,
    /// The progress callback raised: re-raised after the run.
    Failed(PyErr),
    /// The process's resident memory passed the limit: the run is summarised as partial and
    /// its summary says why (`summary["stopped"]`).
    OverMemory { resident: u64, limit: u64, at_ns: u64 },
}

impl Stop {
    /// The one line `summary["stopped"]` carries, numbers from this run.
    pub fn reason(&self) -> Option<String> {
        let Stop::OverMemory { resident, limit, at_ns } = self else { return None };
        Some(format!(
            "max_memory: the process held {:.2} GB, past the limit of {:.2} GB, at {:.3} s simulated; \
             stopped there (give more with max_memory / --max-memory, or simulate less)",
            *resident as f64 / 1e9,
            *limit as f64 / 1e9,
            *at_ns as f64 / 1e9
        ))
    }
}

/// The loop's watcher: `keep_going(now)` for [`ccbench_sim::Control`].
pub struct Watcher {
    last: Instant,
    progress: Option<Py<PyAny>>,
    /// Resident bytes the process may hold while the run goes on (None: no limit known).
    memory_limit: Option<u64>,
    pub stop: Option<Stop>,
}

impl Watcher {
    pub fn new(progress: Option<Py<PyAny>>, memory_limit: Option<u64>) -> Self {
        Watcher { last: Instant::now(), progress, memory_limit, stop: None }
    }

    pub fn keep_going(&mut self, now: u64) -> bool {
        if self.last.elapsed() < LOOK_EVERY {
            return true;
        }
        self.last = Instant::now();
        // The estimate was checked before the run; this holds while it runs (a scenario the
        // estimate misjudged, timers that pile up), without the GIL.
        let resident =
            self.memory_limit.and_then(|limit| Some((ccbench_sim::cost::resident_bytes()?, limit)));
        if let Some((resident, limit)) = resident.filter(|(r, l)| r > l) {
            self.stop = Some(Stop::OverMemory { resident, limit, at_ns: now });
            return false;
        }
        Python::with_gil(|py| {
            if let Err(e) = py.check_signals() {
                self.stop = Some(Self::classify(py, e));
                return false;
            }
            let Some(callback) = &self.progress else { return true };
            match callback.call1(py, (now,)) {
                Ok(_) => true,
                Err(e) => {
                    self.stop = Some(Self::classify(py, e));
                    false
                }
            }
        })
    }

    fn classify(py: Python<'_>, e: PyErr) -> Stop {
        if e.is_instance_of::<PyKeyboardInterrupt>(py) {
            Stop::Interrupted
        } else {
            Stop::Failed(e)
        }
    }
}

/// A scenario's text from this size on is built on a thread of its own ([`answering_signals`]):
/// the build's cost grows with the nodes, links and flows written out, and below this it takes
/// milliseconds, less than the thread would cost a campaign that keys 10^5 runs.
pub const LARGE_SCENARIO_BYTES: usize = 64 << 10;
/// The same bound for a dict: its `nodes`, `links` and `flows` entries.
pub const LARGE_SCENARIO_ENTRIES: usize = 1000;

/// How many `nodes`, `links` and `flows` entries a scenario table writes out.
pub fn entries(table: &toml::Table) -> usize {
    ["nodes", "links", "flows"].iter().filter_map(|k| table.get(*k)?.as_array().map(Vec::len)).sum()
}

/// Run `work` (building a scenario: thousands of hosts and flows take a while) on a thread of
/// its own while this one, without the GIL, wakes every [`LOOK_EVERY`] to let Python run its
/// signal handlers: Ctrl-C answers at once with `KeyboardInterrupt`, and the abandoned work ends
/// on its own (its result is dropped). A panic in `work` is a `RuntimeError` naming it.
pub fn answering_signals<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> PyResult<T> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let (tx, rx) = channel();
    let spawned = std::thread::Builder::new().name("ccbench-build".into()).spawn(move || {
        let _ = tx.send(work());
    });
    if let Err(e) = spawned {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(format!("cannot start a thread: {e}")));
    }
    let mut rx = rx;
    Python::with_gil(|py| loop {
        // The receiver goes into the GIL-free section and comes back (it is Send, not Sync).
        let (got, back) = py.allow_threads(move || (rx.recv_timeout(LOOK_EVERY), rx));
        rx = back;
        match got {
            Ok(done) => return Ok(done),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "internal error while building the scenario (a panic), please report it",
                ))
            }
        }
    })
}

/// The `max_memory` argument: None (this machine's default), a number of bytes, or a size like
/// `"40GB"`; the limit the run's cost estimate is checked against (None: no limit known).
pub fn memory_limit(arg: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let bad = |got: String| {
        ScenarioError::new_err(format!(
            "max_memory: expected a size like \"40GB\" or a positive number of bytes, got {got}"
        ))
    };
    let Some(arg) = arg.filter(|a| !a.is_none()) else {
        return Ok(ccbench_sim::cost::default_memory_limit());
    };
    if arg.is_instance_of::<PyBool>() {
        return Err(bad(arg.repr()?.to_string()));
    }
    if let Ok(text) = arg.downcast::<PyString>() {
        let text: String = text.extract()?;
        return match parse_size(&text) {
            Ok(bytes) if bytes > 0 => Ok(Some(bytes)),
            _ => Err(bad(format!("{text:?}"))),
        };
    }
    match arg.extract::<u64>() {
        Ok(bytes) if bytes > 0 => Ok(Some(bytes)),
        _ => Err(bad(arg.repr()?.to_string())),
    }
}
