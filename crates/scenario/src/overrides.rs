//! `--set key=value` overrides, applied to the raw TOML table before validation, so an
//! overridden value is checked exactly like one written in the file.

use toml::{Table, Value};

use super::fields::{fe, join, R};

struct Seg {
    name: String,
    index: Option<usize>,
}

/// Most dotted parts an override key may have: real keys have at most four
/// (`flows[0].cc.beta`), and each part nests a table that must not overflow the stack.
const MAX_KEY_PARTS: usize = 16;

fn parse_path(key: &str) -> Result<Vec<Seg>, String> {
    let parts = key.split('.').count();
    if parts > MAX_KEY_PARTS {
        return Err(format!("the key has {parts} dotted parts; at most {MAX_KEY_PARTS} are allowed"));
    }
    let mut segs = Vec::new();
    for part in key.split('.') {
        let part = part.trim();
        let (name, index) = match part.find('[') {
            Some(open) => {
                let inner = part[open + 1..]
                    .strip_suffix(']')
                    .ok_or_else(|| format!("malformed index in \"{part}\" (expected name[N])"))?;
                let idx: usize = inner.trim().parse().map_err(|_| {
                    format!("bad index \"{inner}\" in \"{part}\" (expected a non-negative integer)")
                })?;
                (&part[..open], Some(idx))
            }
            None => (part, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!(
                "malformed key \"{key}\" (expected a dotted path like bottleneck.rate or flows[0].cca)"
            ));
        }
        segs.push(Seg { name: name.to_string(), index });
    }
    Ok(segs)
}

/// A TOML value if `raw` is one (number, boolean, quoted string, inline array or table),
/// otherwise the bare string.
fn parse_override_value(raw: &str) -> Value {
    if let Ok(t) = format!("v = {raw}").parse::<Table>() {
        if t.len() == 1 {
            match t.get("v") {
                // `inf` / `nan` are TOML floats, but as overrides they mean the string ("size=inf").
                Some(Value::Float(f)) if !f.is_finite() => {}
                Some(v) => return v.clone(),
                None => {}
            }
        }
    }
    Value::String(raw.to_string())
}

pub(crate) fn apply_override(table: &mut Table, spec: &str) -> R<()> {
    let Some((key, raw)) = spec.split_once('=') else {
        return Err(fe(format!("--set {}", spec.trim()), "expected key=value"));
    };
    let key = key.trim();
    let field = format!("--set {}", short(key));
    if key.is_empty() {
        return Err(fe(field, "expected key=value, the key is empty"));
    }
    let segs = parse_path(key).map_err(|m| fe(&field, m))?;
    let value = parse_override_value(raw.trim());
    set_path(table, &segs, &value, "").map_err(|m| fe(&field, m))
}

/// A key as an error names it: cut when it is long, so the error stays one readable line.
fn short(key: &str) -> String {
    const MAX: usize = 80;
    match key.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &key[..cut]),
        None => key.to_string(),
    }
}

fn set_path(t: &mut Table, segs: &[Seg], value: &Value, prefix: &str) -> Result<(), String> {
    let seg = &segs[0];
    let rest = &segs[1..];
    let here = join(prefix, &seg.name);
    match seg.index {
        Some(idx) => {
            let arr = match t.get_mut(&seg.name) {
                Some(Value::Array(a)) => a,
                Some(_) => return Err(format!("{here} is not an array, cannot index it")),
                None => return Err(format!("index {idx} out of range ({here} does not exist)")),
            };
            if idx >= arr.len() {
                return Err(format!("index {idx} out of range ({here} has {} entries)", arr.len()));
            }
            let here = format!("{here}[{idx}]");
            if rest.is_empty() {
                arr[idx] = value.clone();
                return Ok(());
            }
            match &mut arr[idx] {
                Value::Table(sub) => set_path(sub, rest, value, &here),
                _ => Err(format!("{here} is not a table")),
            }
        }
        None => {
            if rest.is_empty() {
                t.insert(seg.name.clone(), value.clone());
                return Ok(());
            }
            if !t.contains_key(&seg.name) {
                t.insert(seg.name.clone(), Value::Table(Table::new()));
            }
            match t.get_mut(&seg.name) {
                Some(Value::Table(sub)) => set_path(sub, rest, value, &here),
                // `flows.cca=x`: apply to every entry of an array of tables.
                Some(Value::Array(arr)) if !arr.is_empty() && arr.iter().all(Value::is_table) => {
                    for (i, item) in arr.iter_mut().enumerate() {
                        if let Value::Table(sub) = item {
                            set_path(sub, rest, value, &format!("{here}[{i}]"))?;
                        }
                    }
                    Ok(())
                }
                _ => Err(format!("{here} is not a table")),
            }
        }
    }
}
