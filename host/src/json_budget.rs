//! A budget for JSON that someone else wrote (an MCP client, a session
//! file a repository ships, a model server, a script), checked on the
//! bytes before any `serde_json::Value` is built.
//!
//! A byte cap alone does not bound what parsing costs: `[0,0,0,…]` is two
//! bytes a value, and each value is a `Value` of tens of bytes plus the
//! vector it grows in, so 4 MiB became about 400 MB while parsed. The scan
//! here counts values and nesting in one pass over the bytes, holding
//! nothing, and refuses input over [`JsonBudget`] before the parser sees
//! it. It does not check that the bytes are JSON (the parser does that
//! next); it only says whether parsing them may cost more than allowed.
//!
//! Knows nothing of where the bytes came from: each caller names its
//! input and the fix in its own error.

use std::fmt;

/// How much one JSON text may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonBudget {
    /// Bytes of the text.
    pub max_bytes: usize,
    /// Arrays and objects inside each other.
    pub max_depth: usize,
    /// Values: scalars, strings, arrays and objects together, as counted
    /// by [`count`] (an object's key counts as a string).
    pub max_values: usize,
}

/// What one tool call's arguments may make the host parse, whoever sent
/// them (the model, an MCP client, `toolhost call`): 100,000 JSON values,
/// 64 deep. Their bytes are bounded where they arrive (the reply cap,
/// MCP's 4 MiB line, a script file's size).
pub const TOOL_ARGUMENTS: JsonBudget = JsonBudget {
    max_bytes: usize::MAX,
    max_depth: 64,
    max_values: 100_000,
};

/// Why a text was refused: which part of the budget it passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverBudget {
    Bytes { found: usize, limit: usize },
    Depth { limit: usize },
    Values { limit: usize },
}

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverBudget::Bytes { found, limit } => {
                write!(f, "{found} bytes of JSON, over the cap of {limit} bytes")
            }
            OverBudget::Depth { limit } => write!(
                f,
                "JSON nested more than {limit} deep (arrays and objects inside each other)"
            ),
            OverBudget::Values { limit } => write!(
                f,
                "more than {limit} JSON values (scalars, strings, keys, arrays and objects \
                 together)"
            ),
        }
    }
}

impl std::error::Error for OverBudget {}

/// What [`count`] found in a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    pub values: usize,
    pub depth: usize,
}

impl JsonBudget {
    /// `Ok` when `bytes` fit the budget.
    pub fn check(&self, bytes: &[u8]) -> Result<(), OverBudget> {
        self.check_counting(bytes, &mut 0)
    }

    /// As [`Self::check`], with `spent` values already counted against
    /// `max_values` by earlier texts (the lines of one file before this
    /// one); this text's values are added to it.
    pub fn check_counting(&self, bytes: &[u8], spent: &mut usize) -> Result<(), OverBudget> {
        if bytes.len() > self.max_bytes {
            return Err(OverBudget::Bytes {
                found: bytes.len(),
                limit: self.max_bytes,
            });
        }
        let room = self.max_values.saturating_sub(*spent);
        let tally = count(bytes, room, self.max_depth);
        if tally.depth > self.max_depth {
            return Err(OverBudget::Depth {
                limit: self.max_depth,
            });
        }
        if tally.values > room {
            return Err(OverBudget::Values {
                limit: self.max_values,
            });
        }
        *spent += tally.values;
        Ok(())
    }

    /// `bytes` parsed as `T`, once they fit the budget.
    pub fn parse<T: serde::de::DeserializeOwned>(&self, bytes: &[u8]) -> Result<T, JsonError> {
        self.check(bytes).map_err(JsonError::OverBudget)?;
        serde_json::from_slice(bytes).map_err(JsonError::Parse)
    }
}

/// Why [`JsonBudget::parse`] gave no value.
#[derive(Debug)]
pub enum JsonError {
    OverBudget(OverBudget),
    Parse(serde_json::Error),
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::OverBudget(over) => over.fmt(f),
            JsonError::Parse(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for JsonError {}

/// Counts the values of `bytes` and their deepest nesting, stopping once
/// either passes its limit (`values > max_values`, `depth > max_depth`).
///
/// Outside strings, every `[`, `{`, string and run of scalar bytes
/// (`0`, `true`, `-1.5e3`) is a value; an object's key counts as one, as
/// the string a parser builds for it. Inside strings nothing counts, and
/// the bulk of a string is skipped at once.
pub fn count(bytes: &[u8], max_values: usize, max_depth: usize) -> Tally {
    let mut tally = Tally::default();
    let mut depth = 0usize;
    let mut in_scalar = false;
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        at += 1;
        match b {
            b'"' => {
                // To the closing quote, past escapes.
                loop {
                    match memchr::memchr2(b'"', b'\\', &bytes[at..]) {
                        Some(i) if bytes[at + i] == b'\\' => {
                            at = (at + i + 2).min(bytes.len());
                        }
                        Some(i) => {
                            at += i + 1;
                            break;
                        }
                        None => {
                            at = bytes.len();
                            break;
                        }
                    }
                }
                in_scalar = false;
                tally.values += 1;
            }
            b'[' | b'{' => {
                in_scalar = false;
                tally.values += 1;
                depth += 1;
                tally.depth = tally.depth.max(depth);
            }
            b']' | b'}' => {
                in_scalar = false;
                depth = depth.saturating_sub(1);
            }
            b',' | b':' => in_scalar = false,
            b if b.is_ascii_whitespace() => in_scalar = false,
            _ if in_scalar => continue,
            _ => {
                in_scalar = true;
                tally.values += 1;
            }
        }
        if tally.values > max_values || tally.depth > max_depth {
            break;
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: JsonBudget = JsonBudget {
        max_bytes: 1000,
        max_depth: 3,
        max_values: 10,
    };

    fn values(text: &str) -> usize {
        count(text.as_bytes(), usize::MAX, usize::MAX).values
    }

    #[test]
    fn values_are_counted_as_a_parser_would_build_them_or_more() {
        assert_eq!(values("0"), 1);
        assert_eq!(values("\"a,b[{\""), 1);
        assert_eq!(values("[]"), 1);
        assert_eq!(values("[0,0,0]"), 4);
        assert_eq!(values(r#"{"a":1,"b":[2,3]}"#), 7);
        assert_eq!(values("[true,-1.5e3 , null]"), 4);
        // Quotes and brackets inside strings, escaped quotes too.
        assert_eq!(values(r#"["a\",[", "\\", "{,}"]"#), 4);
        assert_eq!(values(""), 0);
        assert_eq!(values("  "), 0);
        assert_eq!(
            count(b"[[[[]]]]", usize::MAX, usize::MAX),
            Tally {
                values: 4,
                depth: 4
            }
        );
    }

    #[test]
    fn text_over_the_budget_is_refused_by_what_it_passed() {
        assert_eq!(SMALL.check(br#"{"a":[1,2,{"b":3}]}"#), Ok(()));
        assert_eq!(
            SMALL.check(br#"{"a":[1,2,{"b":3,"c":4,"d":5}]}"#),
            Err(OverBudget::Values { limit: 10 })
        );
        assert_eq!(
            SMALL.check(b"[0,0,0,0,0,0,0,0,0,0,0]"),
            Err(OverBudget::Values { limit: 10 })
        );
        assert_eq!(
            SMALL.check(b"[[[[0]]]]"),
            Err(OverBudget::Depth { limit: 3 })
        );
        // Commas and brackets in strings cost nothing.
        assert_eq!(
            SMALL.check(format!("[\"{}\"]", ",[".repeat(400)).as_bytes()),
            Ok(())
        );
        assert_eq!(
            SMALL.check(&[b' '; 1001]),
            Err(OverBudget::Bytes {
                found: 1001,
                limit: 1000
            })
        );
        assert_eq!(
            SMALL
                .parse::<serde_json::Value>(b"[0,0,0,0,0,0,0,0,0,0,0]")
                .map_err(|e| e.to_string()),
            Err(
                "more than 10 JSON values (scalars, strings, keys, arrays and objects together)"
                    .to_string()
            )
        );
        assert_eq!(SMALL.parse::<Vec<u8>>(b"[1,2]").expect("fits"), vec![1, 2]);
    }

    #[test]
    fn a_files_lines_share_one_value_budget() {
        let mut spent = 0;
        assert_eq!(SMALL.check_counting(b"[1,2,3,4]", &mut spent), Ok(()));
        assert_eq!(spent, 5);
        assert_eq!(SMALL.check_counting(b"[1,2,3,4]", &mut spent), Ok(()));
        assert_eq!(
            SMALL.check_counting(b"[1]", &mut spent),
            Err(OverBudget::Values { limit: 10 })
        );
    }
}
