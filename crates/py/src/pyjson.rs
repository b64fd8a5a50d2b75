//! Serialise a Python value (the summary dict) as JSON from Rust, keeping the dict's key order.
//! NaN and ±inf are not JSON and become `null`, as the core's own summary does.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::ser::{Error, Serialize, SerializeMap, SerializeSeq, Serializer};

pub struct PyJson<'a, 'py>(pub &'a Bound<'py, PyAny>);

fn err<E: Error>(e: impl std::fmt::Display) -> E {
    E::custom(e.to_string())
}

impl Serialize for PyJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let obj = self.0;
        if obj.is_none() {
            return s.serialize_unit();
        }
        if let Ok(b) = obj.downcast::<PyBool>() {
            return s.serialize_bool(b.is_true());
        }
        if obj.is_instance_of::<PyInt>() {
            if let Ok(v) = obj.extract::<i64>() {
                return s.serialize_i64(v);
            }
            return s.serialize_u64(obj.extract::<u64>().map_err(err)?);
        }
        if let Ok(f) = obj.downcast::<PyFloat>() {
            let v = f.value();
            return if v.is_finite() { s.serialize_f64(v) } else { s.serialize_unit() };
        }
        if let Ok(text) = obj.downcast::<PyString>() {
            return s.serialize_str(&text.to_cow().map_err(err)?);
        }
        if let Ok(d) = obj.downcast::<PyDict>() {
            let mut map = s.serialize_map(Some(d.len()))?;
            for (k, v) in d.iter() {
                // As Python's json module: non-string keys are written as their str().
                let key = k.str().map_err(err)?;
                map.serialize_entry(&*key.to_cow().map_err(err)?, &PyJson(&v))?;
            }
            return map.end();
        }
        if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
            let mut seq = s.serialize_seq(None)?;
            for item in obj.try_iter().map_err(err)? {
                seq.serialize_element(&PyJson(&item.map_err(err)?))?;
            }
            return seq.end();
        }
        let kind = obj.get_type().name().map_err(err)?;
        Err(err(format!("cannot write a value of type {kind} to JSON")))
    }
}
