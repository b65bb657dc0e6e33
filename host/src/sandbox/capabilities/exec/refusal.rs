//! What the model reads when the walls refused a native command something:
//! the kernel's own words (`Read-only file system`, `Network is
//! unreachable`) say what failed, not which grant was missing or how the
//! user gives it, so the result of a command that met the walls ends with
//! that, as a refusal of the guard's does.

/// What the exec capability refused a call first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExecRefusal {
    /// A command's output shows its walls refused it something.
    Walls(WallsRefusal),
    /// The shell asked to run a program of the user's `PATH` that the tool
    /// has no grant for (the shell told the model why).
    NotGranted { program: String },
}

/// What a command's output shows the walls refused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WallsRefusal {
    /// The program, as granted.
    pub program: String,
    /// The directories the tool may write, as the model names them.
    pub writable: Vec<String>,
    /// It was refused a write.
    pub write: bool,
    /// It was refused the network.
    pub network: bool,
}

impl WallsRefusal {
    /// The walls' refusal shown by a command's `output`, if any.
    pub(crate) fn seen_in(program: &str, writable: Vec<String>, output: &[&[u8]]) -> Option<Self> {
        let shows = |words: &[&str]| {
            output.iter().any(|text| {
                words
                    .iter()
                    .any(|word| memchr::memmem::find(text, word.as_bytes()).is_some())
            })
        };
        let write = shows(&["Read-only file system", "EROFS"]);
        let network = shows(&[
            "Network is unreachable",
            "ENETUNREACH",
            "Temporary failure in name resolution",
            "Could not resolve host",
        ]);
        (write || network).then(|| WallsRefusal {
            program: program.to_string(),
            writable,
            write,
            network,
        })
    }

    /// The text the model reads, for `tool`.
    pub fn model_text(&self, tool: &str) -> String {
        let program = &self.program;
        let mut text = format!(
            "note: `{program}` ran natively, inside walls built from `{tool}`'s grants, and they \
             refused it"
        );
        if self.write {
            let reach = if self.writable.is_empty() {
                "it may write nowhere".to_string()
            } else {
                let dirs: Vec<String> = self.writable.iter().map(|d| format!("`{d}`")).collect();
                format!("it may write only in {}", dirs.join(", "))
            };
            text.push_str(&format!(
                " a write: {reach} (only the user can grant more, with `--allow-write \
                 {tool}=DIR`), and never to a protected path (`.git`, `toolhost.toml`, ...), \
                 whatever the grant"
            ));
        }
        if self.network {
            text.push_str(if self.write { "; and" } else { "" });
            text.push_str(
                " the network: a native program has none, whatever the tool's network grants \
                 (build offline, or use `fetch`)",
            );
        }
        text.push('.');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_write_names_where_it_may_write_and_the_flag() {
        let seen = WallsRefusal::seen_in(
            "cargo",
            vec!["src".into()],
            &[
                b"",
                b"error: failed to write Cargo.lock: Read-only file system (os error 30)",
            ],
        )
        .expect("seen");
        assert_eq!(
            seen.model_text("bash"),
            "note: `cargo` ran natively, inside walls built from `bash`'s grants, and they \
             refused it a write: it may write only in `src` (only the user can grant more, with \
             `--allow-write bash=DIR`), and never to a protected path (`.git`, `toolhost.toml`, \
             ...), whatever the grant."
        );
        let net = WallsRefusal::seen_in("npm", Vec::new(), &[b"connect ENETUNREACH 1.2.3.4:443"])
            .expect("seen");
        assert_eq!(
            net.model_text("bash"),
            "note: `npm` ran natively, inside walls built from `bash`'s grants, and they refused \
             it the network: a native program has none, whatever the tool's network grants \
             (build offline, or use `fetch`)."
        );
        assert_eq!(
            WallsRefusal::seen_in("cargo", Vec::new(), &[b"test result: FAILED"]),
            None
        );
    }
}
