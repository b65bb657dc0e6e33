//! Programs of the machine that a model reaches for and that do not run
//! in this shell: each fails as bash fails a missing command (exit 127),
//! saying why and what to use instead, rather than as a bare
//! `command not found` the model would take for a typo.

/// The exit code of a command that is not there, as in bash.
pub const NOT_FOUND: i32 = 127;

/// bashkit's own commands that stand in for programs this shell does not
/// have (its `curl` and `wget` say that network builtins need a feature
/// toolhost leaves out; its `sudo` runs the command as is): they fail as
/// the programs they name, with [`message`].
pub const SHADOWED: &[&str] = &["curl", "wget", "http", "sudo"];

/// What to do instead of running `program`, when it is one the shell
/// knows models ask for.
enum Hint {
    /// Use another tool.
    Use(&'static str),
    /// Ask the user to grant the program.
    Grant,
}

fn instead(program: &str) -> Option<Hint> {
    let hint = match program {
        "python" | "python3" | "pip" | "pip3" | "pytest" | "uv" => {
            "For Python, use the `python` tool (`toolhost plugin install python` adds it)."
        }
        "node" | "deno" | "bun" => {
            "For JavaScript, use the `javascript` tool (`toolhost plugin install javascript` adds \
             it)."
        }
        "curl" | "wget" | "http" => {
            "For a URL, use the `fetch` tool; it reaches the hosts the user granted it \
             (`--allow-net fetch=URL`)."
        }
        "git" => {
            "Read what you need with cat, grep and find (the files under `.git` are readable \
             where the workspace is), and ask the user to run git commands."
        }
        "cargo" | "rustc" | "rustup" | "npm" | "npx" | "pnpm" | "yarn" | "make" | "cmake"
        | "gcc" | "g++" | "cc" | "clang" | "go" | "java" | "javac" | "mvn" | "gradle"
        | "docker" | "podman" | "kubectl" | "ssh" | "scp" | "rsync" | "sudo" | "apt"
        | "apt-get" | "brew" | "ruby" | "gem" | "perl" | "php" | "dotnet" | "swift" => {
            return Some(Hint::Grant);
        }
        _ => return None,
    };
    Some(Hint::Use(hint))
}

/// Whether the user could grant `program` to run natively (the host asks
/// them, where it can).
pub fn grantable(program: &str) -> bool {
    matches!(instead(program), Some(Hint::Grant))
}

/// The shell's message for `program` when it is a program of the machine
/// that does not run here.
pub fn message(program: &str) -> Option<String> {
    let hint = match instead(program)? {
        Hint::Use(hint) => hint.to_string(),
        Hint::Grant => format!(
            "The user can grant it to this tool (`--allow-exec bash={program}`); it then runs \
             natively, inside walls built from the tool's grants."
        ),
    };
    Some(format!(
        "bash: {program}: not available in this sandbox: this shell runs only its built-in \
         utilities, inside WebAssembly, not the machine's programs. {hint}\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_program_names_what_to_use_instead() {
        assert_eq!(
            message("curl").as_deref(),
            Some(
                "bash: curl: not available in this sandbox: this shell runs only its built-in \
                 utilities, inside WebAssembly, not the machine's programs. For a URL, use the \
                 `fetch` tool; it reaches the hosts the user granted it (`--allow-net \
                 fetch=URL`).\n"
            )
        );
        assert!(message("python3").is_some_and(|m| m.contains("`python` tool")));
        assert_eq!(
            message("cargo").as_deref(),
            Some(
                "bash: cargo: not available in this sandbox: this shell runs only its built-in \
                 utilities, inside WebAssembly, not the machine's programs. The user can grant it \
                 to this tool (`--allow-exec bash=cargo`); it then runs natively, inside walls \
                 built from the tool's grants.\n"
            )
        );
    }

    #[test]
    fn an_unknown_name_is_left_to_the_shell() {
        assert_eq!(message("lss"), None);
    }
}
