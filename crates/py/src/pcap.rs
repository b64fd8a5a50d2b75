//! The pcap traces a run's summary names (`summary["pcap"] = {link: path}`), placed into the
//! run folder by `write_run` as `<link>.pcap`.

use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// (link, current path) of each trace the summary names; none when it names none.
pub fn traces(summary: &Bound<'_, PyAny>) -> PyResult<Vec<(String, PathBuf)>> {
    let Ok(summary) = summary.downcast::<PyDict>() else { return Ok(Vec::new()) };
    let Some(entry) = summary.get_item("pcap")? else { return Ok(Vec::new()) };
    let files = entry
        .downcast::<PyDict>()
        .map_err(|_| PyValueError::new_err("summary.pcap: expected {link: path}"))?;
    let mut out = Vec::with_capacity(files.len());
    for (link, path) in files.iter() {
        let link: String = link.extract()?;
        if link.is_empty() || link.starts_with('.') || link.contains(['/', '\\']) {
            return Err(PyValueError::new_err(format!("summary.pcap: bad link name {link:?}")));
        }
        let path: PathBuf = path
            .extract()
            .map_err(|_| PyValueError::new_err(format!("summary.pcap.{link}: expected a path")))?;
        out.push((link, path));
    }
    Ok(out)
}

fn file_name(link: &str) -> String {
    format!("{link}.pcap")
}

/// The summary as `summary.json` holds it: traces by file name, relative to the run folder.
pub fn with_file_names<'py>(
    summary: &Bound<'py, PyAny>,
    traces: &[(String, PathBuf)],
) -> PyResult<Bound<'py, PyAny>> {
    if traces.is_empty() {
        return Ok(summary.clone());
    }
    let copy = summary.downcast::<PyDict>()?.copy()?;
    let names = PyDict::new(summary.py());
    for (link, _) in traces {
        names.set_item(link, file_name(link))?;
    }
    copy.set_item("pcap", names)?;
    Ok(copy.into_any())
}

/// Move or copy each trace to `<dir>/<link>.pcap` (`dir` a staging folder that becomes `run`)
/// and point `summary["pcap"]` at `<run>/<link>.pcap`.
pub fn place(
    py: Python<'_>,
    dir: &Path,
    run: &Path,
    summary: &Bound<'_, PyAny>,
    traces: &[(String, PathBuf)],
) -> PyResult<()> {
    if traces.is_empty() {
        return Ok(());
    }
    let placed = PyDict::new(py);
    for (link, from) in traces {
        let to = dir.join(file_name(link));
        py.allow_threads(|| place_one(from, &to))
            .map_err(|e| PyOSError::new_err(format!("summary.pcap.{link}: {}: {e}", from.display())))?;
        placed.set_item(link, run.join(file_name(link)).to_string_lossy().into_owned())?;
    }
    summary.set_item("pcap", placed)
}

fn place_one(from: &Path, to: &Path) -> std::io::Result<()> {
    if same_file(from, to) {
        return Ok(());
    }
    if !in_run_temp_dir(from) {
        return std::fs::copy(from, to).map(|_| ());
    }
    if std::fs::rename(from, to).is_err() {
        // Another file system: copy, then drop the temporary one.
        std::fs::copy(from, to)?;
        std::fs::remove_file(from)?;
    }
    if let Some(parent) = from.parent() {
        let _ = std::fs::remove_dir(parent); // only once empty; others may remain
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// The folder `ccbench_sim::trace::temp_dir` made for a run that named no trace folder: its
/// traces are moved, never anything the user put elsewhere.
fn in_run_temp_dir(path: &Path) -> bool {
    let Some(parent) = path.parent() else { return false };
    let named = parent.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("ccbench-pcap-"));
    named && parent.parent() == Some(std::env::temp_dir().as_path())
}
