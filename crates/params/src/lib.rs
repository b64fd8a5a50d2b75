//! What every pluggable algorithm family shares: checked, named parameters ([`Params`]) and the
//! registry row ([`Entry`]).
//!
//! A registry is a plain table of entries (`&[Entry<Builder>]`). The scenario parser, the error
//! messages ("known: …"), `ccbench list` and the generated docs all read the same table, so adding
//! an algorithm is one file plus one row.

#![forbid(unsafe_code)]

pub mod params;
pub mod units;

pub use params::{ParamError, ParamSpec, ParamValue, Params};

/// One registry row: a name (and aliases) a scenario may use, a one-line summary with the
/// reference it follows, and how to build it.
pub struct Entry<B> {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub build: B,
}

impl<B> Entry<B> {
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

/// The canonical names of a table, in table order.
pub fn names<B>(table: &[Entry<B>]) -> Vec<&'static str> {
    table.iter().map(|e| e.name).collect()
}

/// The row answering to `name`, or an error on `key` listing the known names.
pub fn lookup<'a, B>(
    table: &'a [Entry<B>],
    name: &str,
    key: &str,
    what: &str,
) -> Result<&'a Entry<B>, ParamError> {
    table.iter().find(|e| e.answers_to(name)).ok_or_else(|| ParamError {
        key: key.to_string(),
        message: format!("unknown {what} \"{name}\" (known: {})", names(table).join(", ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[Entry<u8>] = &[
        Entry { name: "reno", aliases: &["newreno"], summary: "", build: 1 },
        Entry { name: "cubic", aliases: &[], summary: "", build: 2 },
    ];

    #[test]
    fn lookup_by_name_or_alias_and_error_lists_known_names() {
        assert_eq!(lookup(TABLE, "newreno", "cca", "algorithm").unwrap().build, 1);
        assert_eq!(lookup(TABLE, "cubic", "cca", "algorithm").unwrap().build, 2);
        let e = lookup(TABLE, "vegas", "cca", "algorithm").err().unwrap();
        assert_eq!(e.key, "cca");
        assert_eq!(e.message, "unknown algorithm \"vegas\" (known: reno, cubic)");
    }
}
