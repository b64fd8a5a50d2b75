//! `ccbench._core.Table`: a time series kept in Rust memory. Python asks for its columns only when
//! it builds a DataFrame, and `write_run` saves it without a round trip through Python objects.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use ccbench_output::{Column, Table};

#[pyclass(name = "Table", module = "ccbench._core", frozen)]
pub struct PyTable(pub Table);

#[pymethods]
impl PyTable {
    fn __len__(&self) -> usize {
        self.0.rows()
    }

    /// `[(column, kind), ...]` with kind `"f64"`, `"i64"` or `"str"`.
    fn schema(&self) -> Vec<(String, &'static str)> {
        self.0.columns.iter().map(|(n, c)| (n.clone(), c.kind())).collect()
    }

    /// `{column: list}` in column order.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (name, col) in &self.0.columns {
            out.set_item(name, column_to_py(py, col)?)?;
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        let cols: Vec<&str> = self.0.columns.iter().map(|(n, _)| n.as_str()).collect();
        format!("<ccbench._core.Table {} rows: {}>", self.0.rows(), cols.join(", "))
    }
}

fn column_to_py<'py>(py: Python<'py>, col: &Column) -> PyResult<Bound<'py, PyAny>> {
    Ok(match col {
        Column::F64(v) => v.into_pyobject(py)?.into_any(),
        Column::I64(v) => v.into_pyobject(py)?.into_any(),
        Column::Str(v) => v.into_pyobject(py)?.into_any(),
        Column::Names { idx, names } => {
            // One str object per name, shared by every row that carries it.
            let names: Vec<Bound<'py, PyString>> = names.iter().map(|n| PyString::new(py, n)).collect();
            PyList::new(py, idx.iter().map(|&i| &names[i as usize]))?.into_any()
        }
    })
}

/// A table given from Python as `{column: (kind, values)}` (what `Result.save` sends for a
/// DataFrame).
pub fn table_from_py(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Table> {
    let bad = |what: String| PyValueError::new_err(format!("table {name}: {what}"));
    let dict = obj
        .downcast::<PyDict>()
        .map_err(|_| bad("expected a core Table or {column: (kind, values)}".into()))?;
    let mut table = Table::default();
    for (key, value) in dict.iter() {
        let column: String = key.extract().map_err(|_| bad("column names must be strings".into()))?;
        let pair = value
            .downcast::<PyTuple>()
            .map_err(|_| bad(format!("column {column}: expected a (kind, values) tuple")))?;
        let (kind, values): (String, Bound<'_, PyAny>) = pair.extract()?;
        let wrong = |_| bad(format!("column {column}: values do not fit kind {kind:?}"));
        let col = match kind.as_str() {
            "f64" => Column::F64(values.extract().map_err(wrong)?),
            "i64" => Column::I64(values.extract().map_err(wrong)?),
            "str" => Column::Str(values.extract().map_err(wrong)?),
            other => return Err(bad(format!("column {column}: unknown kind {other:?} (f64, i64, str)"))),
        };
        table.columns.push((column, col));
    }
    table.check(name).map_err(PyValueError::new_err)?;
    Ok(table)
}
