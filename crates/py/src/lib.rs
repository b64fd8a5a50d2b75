//! Python bindings: `ccbench._core`. Thin by design — parsing, simulation and every metric stay
//! in Rust; Python receives the summary (as JSON-compatible dicts) and columnar time series.

mod control;
mod files;
mod pcap;
mod pyjson;
mod table;

use std::path::{Path, PathBuf};

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use ccbench_sim::{
    parse_str, parse_table, run_controlled, Control, ScenarioError as RsScenarioError, SimResult,
};
use control::{Stop, Watcher};

use ccbench_output::write_parquet;
use pyjson::PyJson;
use table::{table_from_py, PyTable};

create_exception!(_core, ScenarioError, PyValueError, "Invalid scenario: `<source>: <field>: <message>`.");

fn scenario_err(e: RsScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Deepest nesting a scenario dict may have: real scenarios nest four levels (`flows[0].cc.x`),
/// and a dict that contains itself must be an error, not a stack overflow.
const MAX_DEPTH: usize = 32;

/// A Python value as TOML. `seen` holds the containers on the way down (a cycle is named as such).
fn to_toml(obj: &Bound<'_, PyAny>, path: &str, source: &str, seen: &mut Vec<usize>) -> PyResult<toml::Value> {
    let bad = |what: String| ScenarioError::new_err(format!("{source}: {}: {what}", shown(path)));
    if obj.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(toml::Value::Integer(obj.extract().map_err(|_| bad("integer out of range".into()))?));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(obj.extract()?));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(obj.extract()?));
    }
    let is_dict = obj.downcast::<PyDict>().is_ok();
    if !is_dict && !obj.is_instance_of::<PyList>() && !obj.is_instance_of::<PyTuple>() {
        return Err(bad(format!("unsupported value of type {}", obj.get_type().name()?)));
    }
    let id = obj.as_ptr() as usize;
    if seen.contains(&id) {
        return Err(bad("contains itself (a dict or list that refers back to one around it)".into()));
    }
    if seen.len() >= MAX_DEPTH {
        return Err(bad(format!("nested deeper than {MAX_DEPTH} levels")));
    }
    seen.push(id);
    let value = match obj.downcast::<PyDict>() {
        Ok(d) => dict_to_table(d, path, source, seen).map(toml::Value::Table),
        Err(_) => {
            let mut arr = Vec::new();
            for (i, item) in obj.try_iter()?.enumerate() {
                arr.push(to_toml(&item?, &format!("{path}[{i}]"), source, seen)?);
            }
            Ok(toml::Value::Array(arr))
        }
    };
    seen.pop();
    value
}

/// A dotted path for an error message, cut short when it is long (deep or cyclic input).
fn shown(path: &str) -> String {
    const MAX: usize = 120;
    if path.is_empty() {
        return "<top level>".into();
    }
    match path.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &path[..cut]),
        None => path.to_string(),
    }
}

fn dict_to_table(
    d: &Bound<'_, PyDict>,
    prefix: &str,
    source: &str,
    seen: &mut Vec<usize>,
) -> PyResult<toml::Table> {
    let mut t = toml::Table::new();
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| {
            let key = k.repr().map(|r| r.to_string()).unwrap_or_default();
            ScenarioError::new_err(format!("{source}: {}: key {key} is not a string", shown(prefix)))
        })?;
        let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        t.insert(key, to_toml(&v, &path, source, seen)?);
    }
    Ok(t)
}

/// The run as `{"summary", "series"}`; a traced run's summary names its traces:
/// `summary["pcap"] = {link: path}`.
fn result_to_py(py: Python<'_>, r: SimResult, pcap: Vec<(String, PathBuf)>) -> PyResult<PyObject> {
    let json = serde_json::to_string(&r.summary).expect("summary serialises");
    let summary = py.import("json")?.call_method1("loads", (json,))?;
    if !pcap.is_empty() {
        let files = PyDict::new(py);
        for (link, path) in pcap {
            files.set_item(link, path.to_string_lossy().into_owned())?;
        }
        summary.set_item("pcap", files)?;
    }
    let series = PyDict::new(py);
    for (name, t) in ccbench_output::series_tables(r) {
        series.set_item(name, Bound::new(py, PyTable(t))?)?;
    }
    let out = PyDict::new(py);
    out.set_item("summary", summary)?;
    out.set_item("series", series)?;
    Ok(out.into_any().unbind())
}

/// The `seed` argument: any non-negative integer below 2^64, or None.
fn seed_arg(seed: Option<&Bound<'_, PyAny>>, source: &str) -> PyResult<Option<u64>> {
    match seed {
        None => Ok(None),
        Some(s) if s.is_none() => Ok(None),
        Some(s) => match (s.is_instance_of::<PyBool>(), s.extract::<u64>()) {
            (false, Ok(v)) => Ok(Some(v)),
            _ => Err(ScenarioError::new_err(format!(
                "{source}: seed: expected a non-negative integer, got {}",
                s.repr()?
            ))),
        },
    }
}

/// The validated scenario of TOML text (shared by `run_toml` and `validate_toml`).
fn from_toml(
    text: &str,
    source: &str,
    overrides: &[String],
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<ccbench_sim::Scenario> {
    let seed = seed_arg(seed, source)?;
    if text.len() < control::LARGE_SCENARIO_BYTES {
        return parse_str(text, source, overrides, seed).map_err(scenario_err);
    }
    let (text, source, overrides) = (text.to_owned(), source.to_owned(), overrides.to_vec());
    control::answering_signals(move || parse_str(&text, &source, &overrides, seed))?.map_err(scenario_err)
}

/// The validated scenario of a dict (shared by `run_dict` and `validate_dict`).
fn from_dict(
    scenario: &Bound<'_, PyDict>,
    source: &str,
    overrides: &[String],
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<ccbench_sim::Scenario> {
    let seed = seed_arg(seed, source)?;
    let table = dict_to_table(scenario, "", source, &mut vec![scenario.as_ptr() as usize])?;
    if control::entries(&table) < control::LARGE_SCENARIO_ENTRIES {
        return parse_table(table, source, overrides, seed).map_err(scenario_err);
    }
    let (source, overrides) = (source.to_owned(), overrides.to_vec());
    control::answering_signals(move || parse_table(table, &source, &overrides, seed))?.map_err(scenario_err)
}

/// Run a validated scenario without the GIL, under this machine's memory limit (or
/// `max_memory`), stoppable by Ctrl-C, calling `progress(now_ns)` about ten times a second.
fn simulate(
    py: Python<'_>,
    sc: ccbench_sim::Scenario,
    source: &str,
    pcap_dir: Option<PathBuf>,
    max_memory: Option<&Bound<'_, PyAny>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<PyObject> {
    let memory_limit = control::memory_limit(max_memory)?;
    let mut watcher = Watcher::new(progress, memory_limit);
    let watching = &mut watcher;
    // The scenario moves into the loop's thread-free section (it is Send, not Sync).
    let outcome = py.allow_threads(move || {
        let keep_going = &mut |now| watching.keep_going(now);
        run_controlled(&sc, source, Control { pcap_dir: pcap_dir.as_deref(), memory_limit, keep_going })
    });
    let stopped = match watcher.stop.take() {
        Some(Stop::Failed(e)) => return Err(e),
        other => other.and_then(|s| s.reason()),
    };
    let (result, pcap) = outcome.map_err(scenario_err)?;
    let out = result_to_py(py, result, pcap)?;
    if let Some(reason) = stopped {
        out.bind(py).get_item("summary")?.set_item("stopped", reason)?;
    }
    Ok(out)
}

/// Run a scenario given as TOML text. `source` names it in error messages. The traces of
/// `output.pcap` go to `pcap_dir` (default: a fresh temporary folder; `write_run` moves them).
/// `max_memory` (bytes or a size like "40GB"; default three quarters of this machine's memory)
/// bounds the run's estimated cost; `progress(now_ns)` is called while it runs. A run stopped
/// by Ctrl-C returns what it simulated, with `summary["partial"] = True`.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>", overrides = Vec::new(), seed = None, pcap_dir = None, max_memory = None, progress = None))]
#[allow(clippy::too_many_arguments)]
fn run_toml(
    py: Python<'_>,
    text: &str,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
    pcap_dir: Option<PathBuf>,
    max_memory: Option<&Bound<'_, PyAny>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<PyObject> {
    simulate(py, from_toml(text, source, &overrides, seed)?, source, pcap_dir, max_memory, progress)
}

/// Run a scenario given as a nested dict with the TOML file's structure (other arguments as
/// `run_toml`).
#[pyfunction]
#[pyo3(signature = (scenario, source = "<dict>", overrides = Vec::new(), seed = None, pcap_dir = None, max_memory = None, progress = None))]
#[allow(clippy::too_many_arguments)]
fn run_dict(
    py: Python<'_>,
    scenario: &Bound<'_, PyDict>,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
    pcap_dir: Option<PathBuf>,
    max_memory: Option<&Bound<'_, PyAny>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<PyObject> {
    simulate(py, from_dict(scenario, source, &overrides, seed)?, source, pcap_dir, max_memory, progress)
}

fn os_err(path: &Path, e: impl std::fmt::Display) -> PyErr {
    PyOSError::new_err(format!("{}: {e}", path.display()))
}

/// Write a run directory whole: `<name>.parquet` for each entry of `series`
/// (`{name: Table | {column: (kind, values)}}`) and `summary.json` from the `summary` dict,
/// into a folder staged beside `dir` and swapped in at the end (`ccbench_files::StagedDir`), so
/// a kill leaves the previous run or this one. The pcap traces the summary names
/// (`summary["pcap"]`) become `<link>.pcap` there: moved from the temporary folder a run without
/// `pcap_dir` wrote them to, copied from anywhere else; `summary["pcap"]` then names them in
/// `dir`, and `summary.json` by file name (relative to `dir`).
#[pyfunction]
fn write_run(
    py: Python<'_>,
    dir: PathBuf,
    summary: &Bound<'_, PyAny>,
    series: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let traces = pcap::traces(summary)?;
    // Serialise first, so an unwritable summary costs nothing.
    let json = serde_json::to_string_pretty(&PyJson(&pcap::with_file_names(summary, &traces)?))
        .map_err(|e| PyValueError::new_err(format!("summary: {e}")))?;
    let staged = ccbench_files::StagedDir::create(&dir).map_err(file_err)?;
    for (name, value) in series.iter() {
        let name: String = name.extract()?;
        if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\']) {
            return Err(PyValueError::new_err(format!("bad table name {name:?}")));
        }
        let path = staged.path().join(format!("{name}.parquet"));
        let written = match value.downcast::<PyTable>() {
            Ok(t) => {
                let t = t.get();
                py.allow_threads(|| write_parquet(&path, &t.0))
            }
            Err(_) => {
                let t = table_from_py(&name, &value)?;
                py.allow_threads(|| write_parquet(&path, &t))
            }
        };
        written.map_err(|e| os_err(&path, e))?;
    }
    pcap::place(py, staged.path(), staged.target(), summary, &traces)?;
    ccbench_files::write_atomic(&staged.path().join("summary.json"), (json + "\n").as_bytes())
        .map_err(file_err)?;
    py.allow_threads(|| staged.commit()).map(drop).map_err(file_err)
}

/// A refused or failed file operation as Python's `OSError`, on one line.
fn file_err(e: ccbench_files::FileError) -> PyErr {
    PyOSError::new_err(e.to_string())
}

/// The validated, unit-free scenario of TOML text, as a dict (`ccbench.validate`).
#[pyfunction]
#[pyo3(signature = (text, source = "<string>", overrides = Vec::new(), seed = None))]
fn validate_toml(
    py: Python<'_>,
    text: &str,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    json_to_py(py, &ccbench_sim::scenario::describe(&from_toml(text, source, &overrides, seed)?))
}

/// The validated, unit-free scenario of a dict with the TOML file's structure.
#[pyfunction]
#[pyo3(signature = (scenario, source = "<dict>", overrides = Vec::new(), seed = None))]
fn validate_dict(
    py: Python<'_>,
    scenario: &Bound<'_, PyDict>,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    json_to_py(py, &ccbench_sim::scenario::describe(&from_dict(scenario, source, &overrides, seed)?))
}

/// The validated scenario of a dict as compact JSON text: what the campaign cache hashes for a
/// run's key (the same document as `validate_dict`, without building Python objects for it).
#[pyfunction]
#[pyo3(signature = (scenario, source = "<dict>", overrides = Vec::new(), seed = None))]
fn canonical_dict(
    scenario: &Bound<'_, PyDict>,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let sc = from_dict(scenario, source, &overrides, seed)?;
    Ok(ccbench_sim::scenario::describe(&sc).to_string())
}

/// As `canonical_dict`, for TOML text.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>", overrides = Vec::new(), seed = None))]
fn canonical_toml(
    text: &str,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let sc = from_toml(text, source, &overrides, seed)?;
    Ok(ccbench_sim::scenario::describe(&sc).to_string())
}

/// A scenario (TOML text, or a dict when `text` is None) as TOML text whose relative paths (a
/// link's `trace`) are absolute: resolved beside the scenario file when `source` names one,
/// else against this process's folder. What a campaign ships to its workers, whose folder is
/// not the user's.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>"))]
fn resolved_toml(text: &Bound<'_, PyAny>, source: &str) -> PyResult<String> {
    let table = match text.downcast::<PyDict>() {
        Ok(d) => dict_to_table(d, "", source, &mut vec![d.as_ptr() as usize])?,
        Err(_) => {
            let text: String = text.extract()?;
            text.parse::<toml::Table>().map_err(|e| {
                ScenarioError::new_err(format!(
                    "{source}: TOML: {}",
                    e.message().lines().next().unwrap_or("invalid")
                ))
            })?
        }
    };
    ccbench_sim::scenario::parse::resolved(table, source)
        .map_err(|e| ScenarioError::new_err(format!("{source}: {e}")))
}

/// A scenario dict as TOML text (for programs that read scenario files, like `ccbench-emu`).
#[pyfunction]
#[pyo3(signature = (scenario, source = "<dict>"))]
fn dict_to_toml(scenario: &Bound<'_, PyDict>, source: &str) -> PyResult<String> {
    let table = dict_to_table(scenario, "", source, &mut vec![scenario.as_ptr() as usize])?;
    toml::to_string(&table).map_err(|e| ScenarioError::new_err(format!("{source}: {e}")))
}

/// Every registry family: `{"controllers": [{"name", "aliases", "summary", "params": [...], "quic"}], ...}`
/// (`quic`, how the controller runs on QUIC, for controllers only).
#[pyfunction]
fn registry(py: Python<'_>) -> PyResult<PyObject> {
    let mut out = serde_json::Map::new();
    for f in ccbench_sim::registry::families() {
        let rows: Vec<serde_json::Value> = f
            .rows
            .iter()
            .map(|r| {
                let params: Vec<serde_json::Value> = r
                    .params
                    .iter()
                    .map(|p| serde_json::json!({"key": p.key, "type": p.kind, "default": p.default}))
                    .collect();
                let mut row = serde_json::json!({"name": r.name, "aliases": r.aliases, "summary": r.summary, "params": params});
                if let Some(quic) = &r.quic {
                    row["quic"] = serde_json::Value::String(quic.clone());
                }
                row
            })
            .collect();
        out.insert(f.name.to_string(), serde_json::Value::Array(rows));
    }
    json_to_py(py, &serde_json::Value::Object(out))
}

/// The registries as the Markdown block of `docs/scenarios.md`.
#[pyfunction]
fn registry_markdown() -> String {
    ccbench_sim::registry::markdown()
}

fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<PyObject> {
    let text = serde_json::to_string(v).expect("JSON values serialise");
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// Sender-side congestion controllers a scenario may name.
#[pyfunction]
fn controllers() -> Vec<&'static str> {
    ccbench_cc::controller_names().to_vec()
}

fn cost_to_py(py: Python<'_>, sc: &ccbench_sim::Scenario) -> PyResult<PyObject> {
    let c = ccbench_sim::cost::estimate(sc);
    let json = serde_json::json!({
        "packets": c.packets, "events": c.events, "series_rows": c.series_rows,
        "memory_bytes": c.memory_bytes, "field": c.field, "pcap_bytes": c.pcap_bytes,
        "memory_limit": ccbench_sim::cost::default_memory_limit(),
    });
    json_to_py(py, &json)
}

/// What a run of TOML text would cost (`ccbench.estimate`): packets, events, series rows, the
/// memory they hold, the field that drives it, and this machine's default limit.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>", overrides = Vec::new(), seed = None))]
fn estimate_toml(
    py: Python<'_>,
    text: &str,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    cost_to_py(py, &from_toml(text, source, &overrides, seed)?)
}

/// As `estimate_toml`, for a dict.
#[pyfunction]
#[pyo3(signature = (scenario, source = "<dict>", overrides = Vec::new(), seed = None))]
fn estimate_dict(
    py: Python<'_>,
    scenario: &Bound<'_, PyDict>,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    cost_to_py(py, &from_dict(scenario, source, &overrides, seed)?)
}

/// A memory limit as the CLI's `--max-memory` takes it: bytes of a size like "40GB" (ValueError
/// with the reason otherwise), checked before any work.
#[pyfunction]
fn memory_limit(py: Python<'_>, text: &str) -> PyResult<u64> {
    let value = PyString::new(py, text);
    control::memory_limit(Some(value.as_any()))?.ok_or_else(|| PyValueError::new_err("no limit"))
}

/// A synthetic cellular-like delivery trace in mahimahi's format (`ccbench_link::synthetic_trace`).
#[pyfunction]
fn synthetic_trace(py: Python<'_>, mean_bps: f64, duration_s: f64, seed: u64) -> PyResult<String> {
    if !(mean_bps.is_finite() && mean_bps > 0.0) {
        return Err(PyValueError::new_err(format!("mean: expected a rate above 0, got {mean_bps} bit/s")));
    }
    if !(0.001..=86_400.0).contains(&duration_s) {
        return Err(PyValueError::new_err(format!("duration: expected 1 ms to 1 day, got {duration_s} s")));
    }
    // Bounded by what a trace may hold when read back (`ccbench_files::InputKind::TRACE`): the
    // loop below runs with the GIL held, so it must end in seconds, not fill the memory.
    let lines = mean_bps * duration_s / (ccbench_link::delivery_trace::OPPORTUNITY_BYTES as f64 * 8.0);
    let most = (ccbench_files::InputKind::TRACE.max_bytes / 8) as f64;
    if lines > most {
        return Err(PyValueError::new_err(format!(
            "mean: {:.3e} bit/s for {duration_s} s makes about {lines:.3e} delivery opportunities, more than the \
             {most:.3e} a trace file may hold; lower the rate or the length",
            mean_bps
        )));
    }
    Ok(py.allow_threads(|| ccbench_link::synthetic_trace::cellular(mean_bps, duration_s, seed)))
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_dict, m)?)?;
    m.add_class::<PyTable>()?;
    m.add_function(wrap_pyfunction!(write_run, m)?)?;
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add_function(wrap_pyfunction!(validate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_dict, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_toml, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_dict, m)?)?;
    m.add_function(wrap_pyfunction!(registry, m)?)?;
    m.add_function(wrap_pyfunction!(dict_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(registry_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(synthetic_trace, m)?)?;
    m.add_function(wrap_pyfunction!(memory_limit, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_dict, m)?)?;
    m.add_function(wrap_pyfunction!(resolved_toml, m)?)?;
    files::register(m)
}
