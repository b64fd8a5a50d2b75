//! The file layer (`ccbench_files`) for the Python front end: `ccbench.files` goes through
//! these, so Python reads and writes by the same rules as every other program of ours.

use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use ccbench_files::{FileError, InputKind, INPUT_KINDS};

fn file_err(e: FileError) -> PyErr {
    PyOSError::new_err(e.to_string())
}

fn input_kind(name: &str) -> PyResult<InputKind> {
    InputKind::named(name).ok_or_else(|| {
        let names: Vec<&str> = INPUT_KINDS.iter().map(|k| k.name).collect();
        PyValueError::new_err(format!("unknown input kind {name:?} (one of {})", names.join(", ")))
    })
}

/// The bytes of an input file of `kind` (`"scenario"`, `"trace"`, `"summary"`, …): a regular
/// file, never waited on, at most the kind's cap; `OSError` with one line otherwise.
#[pyfunction]
pub fn read_input<'py>(py: Python<'py>, path: PathBuf, kind: &str) -> PyResult<Bound<'py, PyBytes>> {
    let kind = input_kind(kind)?;
    let bytes = py.allow_threads(|| ccbench_files::read_input(&path, kind)).map_err(file_err)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The cap of an input kind, in bytes.
#[pyfunction]
pub fn input_cap(kind: &str) -> PyResult<u64> {
    Ok(input_kind(kind)?.max_bytes)
}

/// Write `data` to `path` whole: created beside it exclusively and renamed over it.
#[pyfunction]
pub fn write_atomic(py: Python<'_>, path: PathBuf, data: &[u8]) -> PyResult<()> {
    py.allow_threads(|| ccbench_files::write_atomic(&path, data)).map(drop).map_err(file_err)
}

/// Rename a finished file of ours over `path` (absent, a regular file or a link; never a FIFO,
/// device or folder).
#[pyfunction]
pub fn rename_into_place(source: PathBuf, path: PathBuf) -> PyResult<()> {
    ccbench_files::rename_into_place(&source, &path).map_err(file_err)
}

/// `ValueError` unless `path` is absent, empty or a previous run's folder.
#[pyfunction]
pub fn check_run_folder(path: PathBuf) -> PyResult<()> {
    ccbench_files::check_run_folder(&path).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A folder staged beside `target`: write into `path`, then `commit()` swaps it in whole;
/// `discard()` (or garbage collection) removes it.
#[pyclass(module = "ccbench._core")]
pub struct StagedDir(Option<ccbench_files::StagedDir>);

#[pymethods]
impl StagedDir {
    #[new]
    fn new(target: PathBuf) -> PyResult<Self> {
        ccbench_files::StagedDir::create(&target).map(|s| StagedDir(Some(s))).map_err(file_err)
    }

    #[getter]
    fn path(&self) -> PyResult<PathBuf> {
        self.staged().map(|s| s.path().to_path_buf())
    }

    #[getter]
    fn target(&self) -> PyResult<PathBuf> {
        self.staged().map(|s| s.target().to_path_buf())
    }

    /// Start from hard links to what the target holds now, but the top-level names `leave`.
    #[pyo3(signature = (leave = Vec::new()))]
    fn link_previous(&self, py: Python<'_>, leave: Vec<String>) -> PyResult<()> {
        let staged = self.staged()?;
        let leave: Vec<&str> = leave.iter().map(String::as_str).collect();
        py.allow_threads(|| staged.link_previous(&leave)).map_err(file_err)
    }

    /// Swap the folder in, first moving the target's top-level entries `carry` into it.
    #[pyo3(signature = (carry = Vec::new()))]
    fn commit(&mut self, py: Python<'_>, carry: Vec<String>) -> PyResult<PathBuf> {
        let staged = self.0.take().ok_or_else(finished)?;
        let carry: Vec<&str> = carry.iter().map(String::as_str).collect();
        py.allow_threads(|| staged.commit_carrying(&carry)).map_err(file_err)
    }

    fn discard(&mut self) {
        self.0.take();
    }
}

impl StagedDir {
    fn staged(&self) -> PyResult<&ccbench_files::StagedDir> {
        self.0.as_ref().ok_or_else(finished)
    }
}

fn finished() -> PyErr {
    PyValueError::new_err("this staged folder was already committed or discarded")
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_input, m)?)?;
    m.add_function(wrap_pyfunction!(input_cap, m)?)?;
    m.add_function(wrap_pyfunction!(write_atomic, m)?)?;
    m.add_function(wrap_pyfunction!(rename_into_place, m)?)?;
    m.add_function(wrap_pyfunction!(check_run_folder, m)?)?;
    m.add_class::<StagedDir>()
}
