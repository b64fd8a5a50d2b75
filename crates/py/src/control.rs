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
}

/// The loop's watcher: `keep_going(now)` for [`ccbench_sim::Control`].
pub struct Watcher {
    last: Instant,
    progress: Option<Py<PyAny>>,
    pub stop: Option<Stop>,
}

impl Watcher {
    pub fn new(progress: Option<Py<PyAny>>) -> Self {
        Watcher { last: Instant::now(), progress, stop: None }
    }

    pub fn keep_going(&mut self, now: u64) -> bool {
        if self.last.elapsed() < LOOK_EVERY {
            return true;
        }
        self.last = Instant::now();
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
