//! The text the model reads of one command: its stdout; then
//! `--- stderr ---` and its stderr when there is any; then `exit code N`
//! when it is not 0 (an ordinary result, not an error: `grep` finding
//! nothing and `diff` finding a difference exit 1).

/// Bytes of stdout the result keeps: the tool's default output limit
/// (1 MiB) less room for stderr and the closing lines.
pub const STDOUT_KEPT: usize = (1 << 20) - (64 << 10);

/// Bytes of stderr the result keeps.
pub const STDERR_KEPT: usize = 32 << 10;

/// One command's ending, as the shell reported it.
#[derive(Debug, Default)]
pub struct Ending<'a> {
    pub stdout: &'a str,
    pub stderr: &'a str,
    pub exit_code: i32,
    /// Whether the shell stopped keeping stdout at [`STDOUT_KEPT`].
    pub stdout_cut: bool,
    /// Whether the shell stopped keeping stderr at [`STDERR_KEPT`].
    pub stderr_cut: bool,
}

/// The model's text for `ending`.
pub fn text(ending: &Ending<'_>) -> String {
    let mut text = String::with_capacity(ending.stdout.len() + ending.stderr.len() + 64);
    text.push_str(ending.stdout);
    if ending.stdout_cut {
        end_line(&mut text);
        text.push_str(&format!(
            "[toolhost: stdout cut after {} KiB; write it to a file and read that in parts, or \
             narrow the command]\n",
            STDOUT_KEPT >> 10
        ));
    }
    if !ending.stderr.is_empty() || ending.stderr_cut {
        end_line(&mut text);
        text.push_str("--- stderr ---\n");
        text.push_str(ending.stderr);
        if ending.stderr_cut {
            end_line(&mut text);
            text.push_str(&format!(
                "[toolhost: stderr cut after {} KiB]\n",
                STDERR_KEPT >> 10
            ));
        }
    }
    if ending.exit_code != 0 {
        end_line(&mut text);
        text.push_str(&format!("exit code {}\n", ending.exit_code));
    }
    if text.is_empty() {
        text.push_str("(no output)\n");
    }
    text
}

/// Ends the text so far with a newline, if it has text.
fn end_line(text: &mut String) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_alone_is_the_result() {
        let ending = Ending {
            stdout: "a\nb\n",
            ..Ending::default()
        };
        assert_eq!(text(&ending), "a\nb\n");
    }

    #[test]
    fn stderr_and_a_failing_exit_follow_stdout_on_lines_of_their_own() {
        let ending = Ending {
            stdout: "partial",
            stderr: "cat: x: No such file or directory\n",
            exit_code: 1,
            ..Ending::default()
        };
        assert_eq!(
            text(&ending),
            "partial\n--- stderr ---\ncat: x: No such file or directory\nexit code 1\n"
        );
    }

    #[test]
    fn a_silent_success_says_so() {
        assert_eq!(text(&Ending::default()), "(no output)\n");
        let failed = Ending {
            exit_code: 1,
            ..Ending::default()
        };
        assert_eq!(text(&failed), "exit code 1\n");
    }

    #[test]
    fn a_cut_stdout_says_where_and_what_to_do() {
        let ending = Ending {
            stdout: "x",
            stdout_cut: true,
            ..Ending::default()
        };
        assert_eq!(
            text(&ending),
            "x\n[toolhost: stdout cut after 960 KiB; write it to a file and read that in parts, \
             or narrow the command]\n"
        );
    }
}
