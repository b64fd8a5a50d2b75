//! Algorithm parameters as given in a scenario's `[flows.cc]` or `[links.aqm_params]` table,
//! without any TOML types.
//!
//! Every typed getter also records what it asked for (key, type, default), so building an
//! algorithm once from empty parameters lists its parameters: the docs and `ccbench list` read
//! that list, and it can never drift from the code that reads the values.

use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Float(f64),
    Int(i64),
    Bool(bool),
    Str(String),
}

/// As the value was written in TOML, for error messages.
impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Float(x) => write!(f, "{x}"),
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// A parameter problem; `key` names the offending parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ParamError {}

/// Named controller parameters. Controllers read what they know with the typed getters and
/// finish with [`Params::reject_unknown`], so a misspelt key is an error, never silently ignored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    values: BTreeMap<String, ParamValue>,
    used: std::cell::RefCell<Vec<ParamSpec>>,
}

/// One parameter an algorithm reads: its key, accepted values and default, as text for docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    pub key: String,
    /// Accepted values, e.g. `number in [0.01, 0.99]`, `true/false`, `one of min_rtt, srtt`.
    pub kind: String,
    pub default: String,
}

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, key: impl Into<String>, value: ParamValue) {
        self.values.insert(key.into(), value);
    }

    /// The values as given, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    fn mark(&self, key: &str, kind: String, default: String) {
        let mut used = self.used.borrow_mut();
        if !used.iter().any(|u| u.key == key) {
            used.push(ParamSpec { key: key.to_string(), kind, default });
        }
    }

    /// The parameters asked for so far, in the order the algorithm read them.
    pub fn specs(&self) -> Vec<ParamSpec> {
        self.used.borrow().clone()
    }

    fn err(key: &str, message: impl Into<String>) -> ParamError {
        ParamError { key: key.to_string(), message: message.into() }
    }

    /// A real number, with its default, required to lie in `[min, max]`.
    pub fn f64_in(&self, key: &str, default: f64, min: f64, max: f64) -> Result<f64, ParamError> {
        self.mark(key, format!("number in [{min}, {max}]"), default.to_string());
        let v = match self.values.get(key) {
            None => return Ok(default),
            Some(ParamValue::Float(v)) => *v,
            Some(ParamValue::Int(v)) => *v as f64,
            Some(other) => return Err(Self::err(key, format!("expected a number, got {other}"))),
        };
        if !v.is_finite() || v < min || v > max {
            return Err(Self::err(key, format!("must be between {min} and {max}, got {v}")));
        }
        Ok(v)
    }

    pub fn u64_in(&self, key: &str, default: u64, min: u64, max: u64) -> Result<u64, ParamError> {
        self.mark(key, format!("integer in [{min}, {max}]"), default.to_string());
        let v = match self.values.get(key) {
            None => return Ok(default),
            Some(ParamValue::Int(v)) if *v >= 0 => *v as u64,
            Some(other) => {
                return Err(Self::err(key, format!("expected a non-negative integer, got {other}")))
            }
        };
        if v < min || v > max {
            return Err(Self::err(key, format!("must be between {min} and {max}, got {v}")));
        }
        Ok(v)
    }

    /// A duration written with its unit (`"5ms"`, `"1.5s"`), in nanoseconds, within `[min, max]`.
    pub fn duration(&self, key: &str, default: u64, min: u64, max: u64) -> Result<u64, ParamError> {
        let show = crate::units::format_duration;
        self.mark(
            key,
            format!("duration in [{}, {}]", show(min), show(max)),
            format!("\"{}\"", show(default)),
        );
        let v = match self.values.get(key) {
            None => return Ok(default),
            Some(ParamValue::Str(text)) => {
                crate::units::parse_duration(text).map_err(|e| Self::err(key, e))?
            }
            // A bare 0 needs no unit.
            Some(ParamValue::Int(0)) => 0,
            Some(other) => {
                return Err(Self::err(key, format!("expected a duration like \"100ms\", got {other}")))
            }
        };
        if v < min || v > max {
            return Err(Self::err(
                key,
                format!("must be between {} and {}, got {}", show(min), show(max), show(v)),
            ));
        }
        Ok(v)
    }

    /// An integer in `[min, max]` with no default: None when absent (`absent` says what that
    /// means, for the docs).
    pub fn opt_u64_in(&self, key: &str, min: u64, max: u64, absent: &str) -> Result<Option<u64>, ParamError> {
        self.mark(key, format!("integer in [{min}, {max}]"), absent.to_string());
        if !self.values.contains_key(key) {
            return Ok(None);
        }
        self.u64_in(key, min, min, max).map(Some)
    }

    /// A duration that may be negative (`"-2.5ms"`), in nanoseconds.
    pub fn signed_duration(&self, key: &str, default: i64) -> Result<i64, ParamError> {
        let shown = match u64::try_from(default) {
            Ok(d) => crate::units::format_duration(d),
            Err(_) => format!("-{}", crate::units::format_duration(default.unsigned_abs())),
        };
        self.mark(key, "duration, may be negative".into(), format!("\"{shown}\""));
        match self.values.get(key) {
            None => Ok(default),
            Some(ParamValue::Str(text)) => {
                crate::units::parse_signed_duration(text).map_err(|e| Self::err(key, e))
            }
            Some(ParamValue::Int(0)) => Ok(0),
            Some(other) => Err(Self::err(key, format!("expected a duration like \"-5ms\", got {other}"))),
        }
    }

    /// A size in bytes written with its unit (`"64KB"`, `"1MiB"`), at least `min`.
    pub fn size(&self, key: &str, default: u64, min: u64) -> Result<u64, ParamError> {
        let kind = if min > 0 { format!("size of at least {min} B") } else { "size".into() };
        self.mark(key, kind, format!("{default} B"));
        let v = match self.values.get(key) {
            None => return Ok(default),
            Some(ParamValue::Str(text)) => crate::units::parse_size(text).map_err(|e| Self::err(key, e))?,
            Some(other) => return Err(Self::err(key, format!("expected a size like \"1MB\", got {other}"))),
        };
        if v < min {
            return Err(Self::err(key, format!("must be at least {min} B, got {v} B")));
        }
        Ok(v)
    }

    pub fn bool(&self, key: &str, default: bool) -> Result<bool, ParamError> {
        self.mark(key, "true or false".into(), default.to_string());
        match self.values.get(key) {
            None => Ok(default),
            Some(ParamValue::Bool(b)) => Ok(*b),
            Some(other) => Err(Self::err(key, format!("expected true or false, got {other}"))),
        }
    }

    /// A switch with no fixed default: None when absent (`absent` says what decides then, for
    /// the docs).
    pub fn opt_bool(&self, key: &str, absent: &str) -> Result<Option<bool>, ParamError> {
        self.mark(key, "true or false".into(), absent.to_string());
        match self.values.get(key) {
            None => Ok(None),
            Some(ParamValue::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(Self::err(key, format!("expected true or false, got {other}"))),
        }
    }

    /// One of `choices`.
    pub fn choice(&self, key: &str, default: &str, choices: &[&str]) -> Result<String, ParamError> {
        self.mark(key, format!("one of {}", choices.join(", ")), format!("\"{default}\""));
        match self.values.get(key) {
            None => Ok(default.to_string()),
            Some(ParamValue::Str(s)) if choices.contains(&s.as_str()) => Ok(s.clone()),
            Some(other) => {
                Err(Self::err(key, format!("expected one of {}, got {other}", choices.join(", "))))
            }
        }
    }

    /// Free text (a name), None when absent (`absent` says what that means, for the docs).
    pub fn opt_text(&self, key: &str, absent: &str) -> Result<Option<String>, ParamError> {
        self.mark(key, "string".into(), absent.to_string());
        self.opt_text_unmarked(key)
    }

    /// Free text with a default.
    pub fn text(&self, key: &str, default: &str) -> Result<String, ParamError> {
        self.mark(key, "string".into(), format!("\"{default}\""));
        Ok(self.opt_text_unmarked(key)?.unwrap_or_else(|| default.to_string()))
    }

    fn opt_text_unmarked(&self, key: &str) -> Result<Option<String>, ParamError> {
        match self.values.get(key) {
            None => Ok(None),
            Some(ParamValue::Str(s)) => Ok(Some(s.clone())),
            Some(other) => Err(Self::err(key, format!("expected a string, got {other}"))),
        }
    }

    /// A duration within `[min, max]` with no default: None when absent.
    pub fn opt_duration(
        &self,
        key: &str,
        min: u64,
        max: u64,
        absent: &str,
    ) -> Result<Option<u64>, ParamError> {
        let show = crate::units::format_duration;
        self.mark(key, format!("duration in [{}, {}]", show(min), show(max)), absent.to_string());
        if !self.values.contains_key(key) {
            return Ok(None);
        }
        self.duration(key, min, min, max).map(Some)
    }

    /// A size in bytes, or `"inf"` (None, as when absent: `absent` says what both mean).
    pub fn size_or_inf(&self, key: &str, absent: &str) -> Result<Option<u64>, ParamError> {
        self.mark(key, "size or \"inf\"".into(), absent.to_string());
        match self.values.get(key) {
            None => Ok(None),
            Some(ParamValue::Str(text)) => {
                crate::units::parse_size_or_inf(text).map_err(|e| Self::err(key, e))
            }
            Some(other) => {
                Err(Self::err(key, format!("expected a size like \"1MB\" or \"inf\", got {other}")))
            }
        }
    }

    /// Error on the first key no getter asked for.
    pub fn reject_unknown(&self, algorithm: &str) -> Result<(), ParamError> {
        let used = self.used.borrow();
        for key in self.values.keys() {
            if !used.iter().any(|u| &u.key == key) {
                return Err(Self::err(key, format!("unknown parameter for {algorithm}")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_integers_signed_durations_and_sizes() {
        let mut p = Params::new();
        p.insert("a", ParamValue::Int(7));
        p.insert("d", ParamValue::Str("-1.5ms".into()));
        p.insert("z", ParamValue::Int(0));
        p.insert("s", ParamValue::Str("64KB".into()));
        assert_eq!(p.opt_u64_in("a", 2, 10, "none"), Ok(Some(7)));
        assert_eq!(p.opt_u64_in("b", 2, 10, "none"), Ok(None));
        assert_eq!(p.opt_u64_in("a", 8, 10, "none").unwrap_err().key, "a");
        assert_eq!(p.signed_duration("d", 0), Ok(-1_500_000));
        assert_eq!(p.opt_duration("d", 0, 10, "none").unwrap_err().key, "d", "negative");
        assert_eq!(p.opt_duration("nothing", 0, 10, "none"), Ok(None));
        assert_eq!(p.opt_text("s", "none"), Ok(Some("64KB".into())));
        assert_eq!(p.text("nothing", "cubic"), Ok("cubic".into()));
        assert_eq!(p.text("a", "x").unwrap_err().message, "expected a string, got 7");
        assert_eq!(p.size_or_inf("s", "infinite"), Ok(Some(64_000)));
        assert_eq!(p.duration("z", 5, 0, 10), Ok(0), "a bare 0 needs no unit");
        assert_eq!(p.size("s", 1, 0), Ok(64_000));
        assert_eq!(p.size("s", 1, 100_000).unwrap_err().key, "s");
        let specs = p.specs();
        assert_eq!(specs[0].default, "none");
        assert_eq!(specs.iter().find(|s| s.key == "d").unwrap().default, "\"0s\"");
    }

    #[test]
    fn unknown_and_out_of_range_keys_are_named() {
        let mut p = Params::new();
        p.insert("beta", ParamValue::Float(1.5));
        p.insert("betta", ParamValue::Float(0.5));
        let e = p.f64_in("beta", 0.5, 0.0, 1.0).unwrap_err();
        assert_eq!(e.key, "beta");
        let e = p.reject_unknown("newreno").unwrap_err();
        assert_eq!(e.key, "betta");
    }

    #[test]
    fn durations_carry_their_unit_and_are_range_checked() {
        let mut p = Params::new();
        p.insert("target", ParamValue::Str("2.5ms".into()));
        assert_eq!(p.duration("target", 5_000_000, 1_000, 10_000_000_000).unwrap(), 2_500_000);
        for (bad, says) in [
            (ParamValue::Str("-5ms".into()), "must not be negative"),
            (ParamValue::Float(5.0), "expected a duration like \"100ms\", got 5"),
            (ParamValue::Str("5".into()), "expected a duration like \"100ms\", got \"5\""),
            (ParamValue::Str("20s".into()), "must be between 1us and 10s, got 20s"),
        ] {
            p.insert("target", bad);
            let e = p.duration("target", 5_000_000, 1_000, 10_000_000_000).unwrap_err();
            assert_eq!(e.key, "target");
            assert!(e.message.contains(says), "{}", e.message);
        }
        let spec = &p.specs()[0];
        assert_eq!((spec.kind.as_str(), spec.default.as_str()), ("duration in [1us, 10s]", "\"5ms\""));
    }

    #[test]
    fn defaults_apply_when_absent() {
        let p = Params::new();
        assert_eq!(p.f64_in("beta", 0.7, 0.0, 1.0).unwrap(), 0.7);
        assert!(p.bool("hystart", true).unwrap());
        p.reject_unknown("cubic").unwrap();
    }

    #[test]
    fn getters_record_what_they_read() {
        let p = Params::new();
        p.f64_in("beta", 0.7, 0.0, 1.0).unwrap();
        p.choice("mode", "a", &["a", "b"]).unwrap();
        p.f64_in("beta", 0.7, 0.0, 1.0).unwrap();
        let specs = p.specs();
        assert_eq!(specs.len(), 2, "a key read twice is listed once");
        assert_eq!(
            specs[0],
            ParamSpec { key: "beta".into(), kind: "number in [0, 1]".into(), default: "0.7".into() }
        );
        assert_eq!(specs[1].kind, "one of a, b");
        assert_eq!(specs[1].default, "\"a\"");
    }
}
