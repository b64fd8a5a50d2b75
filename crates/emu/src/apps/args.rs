//! A deliberately tiny `--flag value` parser: every flag takes exactly one value, unknown or
//! repeated flags are errors, so a typo in the integrator's command line fails loudly.

use super::AppError;
use std::collections::BTreeMap;
use std::net::SocketAddr;

#[derive(Debug)]
pub struct Flags {
    values: BTreeMap<String, String>,
}

impl Flags {
    /// Parses `args` (after the subcommand); `allowed` lists flag names without `--`.
    pub fn parse(args: &[String], allowed: &[&str]) -> Result<Flags, AppError> {
        let mut values = BTreeMap::new();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let (name, inline) = match arg.strip_prefix("--") {
                Some(rest) => match rest.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (rest, None),
                },
                None => return Err(AppError::usage(format!("unexpected argument {arg:?}"))),
            };
            if !allowed.contains(&name) {
                let list = allowed.iter().map(|a| format!("--{a}")).collect::<Vec<_>>().join(" ");
                return Err(AppError::usage(format!("unknown flag --{name} (allowed: {list})")));
            }
            let value = match inline.or_else(|| it.next().cloned()) {
                Some(v) => v,
                None => return Err(AppError::usage(format!("--{name} needs a value"))),
            };
            if values.insert(name.to_string(), value).is_some() {
                return Err(AppError::usage(format!("--{name} given twice")));
            }
        }
        Ok(Flags { values })
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    pub fn required(&self, name: &str) -> Result<&str, AppError> {
        self.str(name).ok_or_else(|| AppError::usage(format!("--{name} is required")))
    }

    /// A non-negative integer.
    pub fn u64(&self, name: &str) -> Result<Option<u64>, AppError> {
        self.str(name)
            .map(|v| v.parse::<u64>().map_err(|_| bad(name, v, "a non-negative integer")))
            .transpose()
    }

    /// Seconds as a decimal number (`0.1`, `30`), returned in nanoseconds.
    pub fn secs(&self, name: &str) -> Result<Option<u64>, AppError> {
        let Some(v) = self.str(name) else { return Ok(None) };
        match v.parse::<f64>() {
            Ok(s) if s.is_finite() && (0.0..1e9).contains(&s) => Ok(Some((s * 1e9).round() as u64)),
            _ => Err(bad(name, v, "seconds (a non-negative decimal number)")),
        }
    }

    /// An `IP:PORT` (IPv6 as `[addr]:port`); names are not resolved on purpose.
    pub fn addr(&self, name: &str) -> Result<SocketAddr, AppError> {
        let v = self.required(name)?;
        v.parse().map_err(|_| bad(name, v, "IP:PORT"))
    }
}

fn bad(name: &str, value: &str, expected: &str) -> AppError {
    AppError::usage(format!("--{name} {value:?}: expected {expected}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Flags, AppError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        Flags::parse(&args, &["size", "stop", "connect"])
    }

    #[test]
    fn values_and_errors() {
        let f = parse(&["--size", "2000", "--stop=1.5", "--connect", "127.0.0.1:9"]).unwrap();
        assert_eq!(f.u64("size").unwrap(), Some(2000));
        assert_eq!(f.secs("stop").unwrap(), Some(1_500_000_000));
        assert_eq!(f.addr("connect").unwrap().port(), 9);
        assert!(parse(&["--bogus", "1"]).unwrap_err().to_string().contains("unknown flag --bogus"));
        assert!(parse(&["--size"]).is_err());
        assert!(parse(&["--size", "1", "--size", "2"]).is_err());
        assert!(parse(&["--stop", "-1"]).unwrap().secs("stop").is_err());
        assert!(parse(&["--size", "x"]).unwrap().u64("size").is_err());
    }
}
