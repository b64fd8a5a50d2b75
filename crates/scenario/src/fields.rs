//! Typed getters over a raw TOML table. Each returns `Ok(None)` when the key is absent and an
//! error naming the dotted field otherwise, so every scenario error points at its field.

use ccbench_cc::{ParamError, ParamSpec, ParamValue, Params};
use toml::{Table, Value};

use super::config::Nanos;
use super::units;

/// A field problem without the source label (the parser adds it).
#[derive(Debug)]
pub struct Fe {
    pub field: String,
    pub message: String,
}

pub type R<T> = Result<T, Fe>;

/// A field error. Both parts are made one readable line: values quoted in them come from the
/// user (a key or a string may hold a newline, or be 100 kB long).
pub(crate) fn fe(field: impl Into<String>, message: impl Into<String>) -> Fe {
    Fe { field: one_line(&field.into(), 120), message: one_line(&message.into(), 300) }
}

/// `text` with control characters escaped, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    if text.len() <= max && !text.chars().any(char::is_control) {
        return text.to_string(); // the common case: nothing to do
    }
    let escaped: String = text
        .chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect();
    match escaped.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &escaped[..cut]),
        None => escaped,
    }
}

pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A TOML value as an error message shows it: a date-time as written (the toml crate's own
/// rendering exposes its private marker), and anything long cut to a readable length.
pub(crate) fn shown(v: &Value) -> String {
    const MAX: usize = 80;
    let text = match v {
        Value::Datetime(d) => format!("the date-time {d}"),
        v => v.to_string(),
    };
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

pub(crate) fn check_keys(t: &Table, path: &str, allowed: &[&str]) -> R<()> {
    match t.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(fe(join(path, k), "unknown key")),
        None => Ok(()),
    }
}

pub(crate) fn get_table<'a>(t: &'a Table, path: &str, key: &str) -> R<Option<&'a Table>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::Table(sub)) => Ok(Some(sub)),
        Some(v) => Err(fe(join(path, key), format!("expected a table, got {}", shown(v)))),
    }
}

pub(crate) fn get_str<'a>(t: &'a Table, path: &str, key: &str) -> R<Option<&'a str>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(fe(join(path, key), format!("expected a string, got {}", shown(v)))),
    }
}

pub(crate) fn get_bool(t: &Table, path: &str, key: &str) -> R<Option<bool>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::Boolean(b)) => Ok(Some(*b)),
        Some(v) => Err(fe(join(path, key), format!("expected true or false, got {}", shown(v)))),
    }
}

pub(crate) fn get_int(t: &Table, path: &str, key: &str, min: i64, max: i64) -> R<Option<i64>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::Integer(i)) => {
            if *i < min || *i > max {
                let range = if max == i64::MAX {
                    format!("must be at least {min}")
                } else {
                    format!("must be between {min} and {max}")
                };
                Err(fe(join(path, key), format!("{range}, got {i}")))
            } else {
                Ok(Some(*i))
            }
        }
        Some(v) => Err(fe(join(path, key), format!("expected an integer, got {}", shown(v)))),
    }
}

/// A unit-carrying string parsed by `parse`; anything else is `{hint}, got {value}`.
pub(crate) fn get_unit<T>(
    t: &Table,
    path: &str,
    key: &str,
    hint: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> R<Option<T>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => parse(s).map(Some).map_err(|m| fe(join(path, key), m)),
        Some(v) => Err(fe(join(path, key), format!("{hint}, got {}", shown(v)))),
    }
}

pub(crate) fn get_duration(t: &Table, path: &str, key: &str) -> R<Option<Nanos>> {
    if let Some(Value::Integer(0)) = t.get(key) {
        return Ok(Some(0));
    }
    get_unit(t, path, key, "expected a duration like \"100ms\"", units::parse_duration)
}

/// A number (integer or float) within `[min, max]`.
pub(crate) fn get_number_in(t: &Table, path: &str, key: &str, min: f64, max: f64) -> R<Option<f64>> {
    let v = match t.get(key) {
        None => return Ok(None),
        Some(Value::Float(f)) => *f,
        Some(Value::Integer(i)) => *i as f64,
        Some(v) => return Err(fe(join(path, key), format!("expected a number, got {}", shown(v)))),
    };
    if !(min..=max).contains(&v) {
        return Err(fe(join(path, key), format!("must be between {min} and {max}, got {v}")));
    }
    Ok(Some(v))
}

pub(crate) fn get_positive_duration(t: &Table, path: &str, key: &str) -> R<Option<Nanos>> {
    match get_duration(t, path, key)? {
        Some(0) => Err(fe(join(path, key), "must be > 0")),
        other => Ok(other),
    }
}

/// Slowest link rate a scenario may give: one minimum-size (64-byte) Ethernet frame a second.
/// Below it a link carries nothing in any run (one packet would take years).
pub(crate) const MIN_RATE_BPS: f64 = 512.0;

pub(crate) fn get_rate(t: &Table, path: &str, key: &str) -> R<Option<f64>> {
    let rate = get_unit(t, path, key, "expected a rate like \"10Mbps\"", units::parse_rate)?;
    match rate {
        Some(r) if r < MIN_RATE_BPS => Err(fe(
            join(path, key),
            format!("must be at least {MIN_RATE_BPS}bps (one 64-byte frame a second), got {r}bps"),
        )),
        rate => Ok(rate),
    }
}

pub(crate) fn get_size(t: &Table, path: &str, key: &str) -> R<Option<u64>> {
    get_unit(t, path, key, "expected a size like \"1MB\"", units::parse_size)
}

pub(crate) fn get_probability(t: &Table, path: &str, key: &str) -> R<Option<f64>> {
    let v = match t.get(key) {
        None => return Ok(None),
        Some(Value::Float(f)) => *f,
        Some(Value::Integer(i)) => *i as f64,
        Some(v) => {
            return Err(fe(join(path, key), format!("expected a probability in [0, 1), got {}", shown(v))))
        }
    };
    if !(0.0..1.0).contains(&v) {
        return Err(fe(join(path, key), format!("expected a probability in [0, 1), got {v}")));
    }
    Ok(Some(v))
}

pub(crate) fn required<T>(v: Option<T>, field: impl Into<String>, example: &str) -> R<T> {
    v.ok_or_else(|| fe(field, format!("missing required key (e.g. {example})")))
}

/// `[flows.cc]`-style table → Params. Nested tables, arrays and datetimes are errors.
pub(crate) fn get_params(t: &Table, path: &str, key: &str) -> R<Params> {
    let mut params = Params::new();
    let Some(sub) = get_table(t, path, key)? else {
        return Ok(params);
    };
    let here = join(path, key);
    for (k, v) in sub {
        params.insert(k.clone(), param_value(v, &here, k)?);
    }
    Ok(params)
}

/// The keys of `t` that `keys` names, as parameters (the stack options of a flow).
pub(crate) fn params_of(t: &Table, path: &str, keys: &[ParamSpec]) -> R<Params> {
    let mut params = Params::new();
    for spec in keys {
        if let Some(v) = t.get(&spec.key) {
            params.insert(spec.key.clone(), param_value(v, path, &spec.key)?);
        }
    }
    Ok(params)
}

/// A scalar TOML value (`path.key`) as a parameter value.
pub(crate) fn param_value(v: &Value, path: &str, key: &str) -> R<ParamValue> {
    Ok(match v {
        Value::Float(f) => ParamValue::Float(*f),
        Value::Integer(i) => ParamValue::Int(*i),
        Value::Boolean(b) => ParamValue::Bool(*b),
        Value::String(s) => ParamValue::Str(s.clone()),
        Value::Table(_) => return Err(fe(join(path, key), "nested tables are not allowed here")),
        Value::Array(_) => return Err(fe(join(path, key), "arrays are not allowed here")),
        Value::Datetime(_) => {
            return Err(fe(join(path, key), "expected a number, boolean or string, got a date/time"))
        }
    })
}

/// A controller's or queue's parameter error, placed on `path.name_key` (unknown name) or on
/// `path.table_key.<param>`.
pub(crate) fn map_param_error(e: ParamError, path: &str, name_key: &str, table_key: &str) -> Fe {
    if e.key == name_key {
        fe(join(path, name_key), e.message)
    } else {
        fe(join(&join(path, table_key), &e.key), e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_errors_are_one_readable_line() {
        let e = fe("flows[0].\"a\nb\"", format!("got \"10Mbps\n{}\"", "x".repeat(1000)));
        assert_eq!(e.field, "flows[0].\"a\\nb\"");
        assert!(!e.message.contains('\n') && e.message.starts_with("got \"10Mbps\\nxxx"));
        assert_eq!(e.message.chars().count(), 301);
        assert_eq!(fe("name", "got \"ünï\"").message, "got \"ünï\"");
    }
}
