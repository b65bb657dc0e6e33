//! Loop detection: notices the model calling the same tool with the same
//! arguments again and again. It only counts; the loop decides what to do.

use serde_json::Value;

/// A call's identity for loop detection: the tool and its arguments as
/// canonical JSON (object keys sorted, no spaces), so `{"a":1,"b":2}` and
/// `{"b":2,"a":1}` are the same call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    pub tool: String,
    pub arguments: String,
}

impl Fingerprint {
    /// Arguments that are not complete JSON all fingerprint alike, so a
    /// model re-sending cut-off calls is caught too.
    pub(crate) fn new(tool: &str, arguments: Option<&Value>) -> Self {
        let mut text = String::new();
        match arguments {
            Some(value) => canonical(value, &mut text),
            None => text.push_str("<unparseable>"),
        }
        Fingerprint {
            tool: tool.to_owned(),
            arguments: text,
        }
    }
}

/// Writes `value` as JSON with object keys in sorted order, whatever the
/// map's own order (serde_json may be built with `preserve_order`).
pub(crate) fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// What the detector says about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Fine,
    /// The streak just reached `warn_after`: tell the model, once.
    Warn {
        count: u32,
    },
    /// The streak reached `stop_after`: end the run.
    Stop {
        count: u32,
    },
}

/// Counts how many times in a row the same fingerprint was seen, across
/// batches and turns.
#[derive(Debug)]
pub(crate) struct LoopDetector {
    warn_after: u32,
    stop_after: u32,
    last: Option<Fingerprint>,
    count: u32,
}

impl LoopDetector {
    pub(crate) fn new(warn_after: u32, stop_after: u32) -> Self {
        LoopDetector {
            warn_after,
            stop_after,
            last: None,
            count: 0,
        }
    }

    /// Records one call, in call order.
    pub(crate) fn observe(&mut self, fingerprint: Fingerprint) -> Verdict {
        if self.last.as_ref() == Some(&fingerprint) {
            self.count += 1;
        } else {
            self.last = Some(fingerprint);
            self.count = 1;
        }
        if self.count >= self.stop_after {
            Verdict::Stop { count: self.count }
        } else if self.count == self.warn_after {
            Verdict::Warn { count: self.count }
        } else {
            Verdict::Fine
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_matter() {
        let a = Fingerprint::new("t", Some(&json!({"a": 1, "b": {"y": [1, 2], "x": "s"}})));
        let b = Fingerprint::new("t", Some(&json!({"b": {"x": "s", "y": [1, 2]}, "a": 1})));
        assert_eq!(a, b);
        assert_eq!(a.arguments, r#"{"a":1,"b":{"x":"s","y":[1,2]}}"#);
        assert_ne!(a, Fingerprint::new("u", Some(&json!({"a": 1}))));
    }

    #[test]
    fn warns_once_then_stops() {
        let mut detector = LoopDetector::new(3, 5);
        let fp = || Fingerprint::new("t", Some(&json!({})));
        let verdicts: Vec<Verdict> = (0..5).map(|_| detector.observe(fp())).collect();
        assert_eq!(
            verdicts,
            [
                Verdict::Fine,
                Verdict::Fine,
                Verdict::Warn { count: 3 },
                Verdict::Fine,
                Verdict::Stop { count: 5 }
            ]
        );
    }

    #[test]
    fn a_different_call_resets_the_streak() {
        let mut detector = LoopDetector::new(2, 3);
        let a = || Fingerprint::new("a", None);
        assert_eq!(detector.observe(a()), Verdict::Fine);
        assert_eq!(detector.observe(Fingerprint::new("b", None)), Verdict::Fine);
        assert_eq!(detector.observe(a()), Verdict::Fine);
        assert_eq!(detector.observe(a()), Verdict::Warn { count: 2 });
    }
}
