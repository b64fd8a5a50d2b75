//! Python bindings: `ccbench._core`. Thin by design — parsing, simulation and every metric stay
//! in Rust; Python receives the summary (as JSON-compatible dicts) and columnar time series.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use ccbench_sim::{parse_str, parse_table, run, ScenarioError as RsScenarioError, SimResult};

create_exception!(_core, ScenarioError, PyValueError, "Invalid scenario: `<source>: <field>: <message>`.");

fn scenario_err(e: RsScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

fn to_toml(obj: &Bound<'_, PyAny>, path: &str, source: &str) -> PyResult<toml::Value> {
    let bad = |what: String| ScenarioError::new_err(format!("{source}: {path}: {what}"));
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
    if let Ok(d) = obj.downcast::<PyDict>() {
        return Ok(toml::Value::Table(dict_to_table(d, path, source)?));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut arr = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            arr.push(to_toml(&item?, &format!("{path}[{i}]"), source)?);
        }
        return Ok(toml::Value::Array(arr));
    }
    Err(bad(format!("unsupported value of type {}", obj.get_type().name()?)))
}

fn dict_to_table(d: &Bound<'_, PyDict>, prefix: &str, source: &str) -> PyResult<toml::Table> {
    let mut t = toml::Table::new();
    for (k, v) in d.iter() {
        let key: String = k
            .extract()
            .map_err(|_| ScenarioError::new_err(format!("{source}: {prefix}: keys must be strings")))?;
        let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        t.insert(key, to_toml(&v, &path, source)?);
    }
    Ok(t)
}

fn columns<'py>(py: Python<'py>, cols: Vec<(&str, PyObject)>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in cols {
        d.set_item(k, v)?;
    }
    Ok(d)
}

fn names(idx: &[u32], names: &[String]) -> Vec<String> {
    idx.iter().map(|&i| names[i as usize].clone()).collect()
}

fn result_to_py(py: Python<'_>, r: SimResult) -> PyResult<PyObject> {
    let json = serde_json::to_string(&r.summary).expect("summary serialises");
    let summary = py.import("json")?.call_method1("loads", (json,))?;
    let f = r.flows;
    let flows = columns(
        py,
        vec![
            ("t_s", f.t_s.into_pyobject(py)?.into_any().unbind()),
            ("flow", names(&f.flow, &r.flow_names).into_pyobject(py)?.into_any().unbind()),
            ("goodput_mbps", f.goodput_mbps.into_pyobject(py)?.into_any().unbind()),
            ("throughput_mbps", f.throughput_mbps.into_pyobject(py)?.into_any().unbind()),
            ("cwnd_bytes", f.cwnd_bytes.into_pyobject(py)?.into_any().unbind()),
            ("ssthresh_bytes", f.ssthresh_bytes.into_pyobject(py)?.into_any().unbind()),
            ("srtt_ms", f.srtt_ms.into_pyobject(py)?.into_any().unbind()),
            ("inflight_bytes", f.inflight_bytes.into_pyobject(py)?.into_any().unbind()),
            ("retransmits", f.retransmits.into_pyobject(py)?.into_any().unbind()),
        ],
    )?;
    let l = r.links;
    let links = columns(
        py,
        vec![
            ("t_s", l.t_s.into_pyobject(py)?.into_any().unbind()),
            ("link", names(&l.link, &r.link_names).into_pyobject(py)?.into_any().unbind()),
            ("queue_bytes", l.queue_bytes.into_pyobject(py)?.into_any().unbind()),
            ("queue_packets", l.queue_packets.into_pyobject(py)?.into_any().unbind()),
            ("utilization", l.utilization.into_pyobject(py)?.into_any().unbind()),
            ("throughput_mbps", l.throughput_mbps.into_pyobject(py)?.into_any().unbind()),
            ("drops", l.drops.into_pyobject(py)?.into_any().unbind()),
            ("ecn_marks", l.ecn_marks.into_pyobject(py)?.into_any().unbind()),
        ],
    )?;
    let s = r.sojourn;
    let sojourn = columns(
        py,
        vec![
            ("t_s", s.t_s.into_pyobject(py)?.into_any().unbind()),
            ("link", names(&s.link, &r.link_names).into_pyobject(py)?.into_any().unbind()),
            ("flow", names(&s.flow, &r.flow_names).into_pyobject(py)?.into_any().unbind()),
            ("sojourn_ms", s.sojourn_ms.into_pyobject(py)?.into_any().unbind()),
        ],
    )?;
    let o = r.owd;
    let owd = columns(
        py,
        vec![
            ("t_s", o.t_s.into_pyobject(py)?.into_any().unbind()),
            ("flow", names(&o.flow, &r.flow_names).into_pyobject(py)?.into_any().unbind()),
            ("owd_ms", o.owd_ms.into_pyobject(py)?.into_any().unbind()),
        ],
    )?;
    let series = PyDict::new(py);
    series.set_item("flows", flows)?;
    series.set_item("links", links)?;
    series.set_item("sojourn", sojourn)?;
    series.set_item("owd", owd)?;
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

fn simulate(py: Python<'_>, sc: ccbench_sim::Scenario, source: &str) -> PyResult<PyObject> {
    let source_owned = source.to_string();
    let result = py.allow_threads(move || run(&sc, &source_owned)).map_err(scenario_err)?;
    result_to_py(py, result)
}

/// Run a scenario given as TOML text. `source` names it in error messages.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>", overrides = Vec::new(), seed = None))]
fn run_toml(
    py: Python<'_>,
    text: &str,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let seed = seed_arg(seed, source)?;
    let sc = parse_str(text, source, &overrides, seed).map_err(scenario_err)?;
    simulate(py, sc, source)
}

/// Run a scenario given as a nested dict with the TOML file's structure.
#[pyfunction]
#[pyo3(signature = (scenario, source = "<dict>", overrides = Vec::new(), seed = None))]
fn run_dict(
    py: Python<'_>,
    scenario: &Bound<'_, PyDict>,
    source: &str,
    overrides: Vec<String>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    let seed = seed_arg(seed, source)?;
    let table = dict_to_table(scenario, "", source)?;
    let sc = parse_table(table, source, &overrides, seed).map_err(scenario_err)?;
    simulate(py, sc, source)
}

/// Sender-side congestion controllers a scenario may name.
#[pyfunction]
fn controllers() -> Vec<&'static str> {
    ccbench_cc::controller_names().to_vec()
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
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
