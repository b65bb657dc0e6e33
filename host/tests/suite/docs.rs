//! The commands the docs show, run. Every shell block in README.md and
//! docs/ is either
//!
//! - a ```` ```console ```` block: each `$ ` line is a command (a trailing
//!   `\` continues it), the lines after it are its expected output, stdout
//!   and stderr together. `...` alone on a line matches any number of lines,
//!   `[..]` inside a line any text; a block without expected lines only
//!   needs the command to succeed, and ```` ```console exit=1 ```` expects
//!   that status from each of its commands. Or
//! - a block that says why it is not run (```` ```sh not-run: needs an
//!   OpenAI API key ````): a remote host, a registry, a client nobody here
//!   wrote, or a test elsewhere that runs the same.
//!
//! The blocks of one page run in order in one scratch directory holding
//! copies of the repository's `examples/` and `wit/`, with this build's
//! `toolhost` first on `PATH` (a leading `cargo run --` means it too),
//! `HOME` and toolhost's config directory inside the scratch directory, and
//! no API keys. `cd DIR` alone changes the directory of the page's next
//! commands.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::common::shared_cache;

/// How long one documented command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

#[test]
fn every_shell_block_in_the_docs_is_run_or_says_why_not() {
    let pages = doc_pages();
    assert!(pages.len() > 1, "no docs found under {}", repo().display());
    let failures: Vec<String> = std::thread::scope(|scope| {
        let running: Vec<_> = pages
            .iter()
            .map(|page| scope.spawn(move || check_page(page)))
            .collect();
        running
            .into_iter()
            .flat_map(|handle| handle.join().expect("a page's check panicked"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} documented command(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ is in the repository")
        .to_path_buf()
}

/// README.md and every `.md` under docs/, sorted.
fn doc_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, pages: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, pages);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    let mut pages = vec![repo().join("README.md")];
    walk(&repo().join("docs"), &mut pages);
    pages.sort();
    pages
}

/// One fenced block of a shell language.
#[derive(Debug, PartialEq)]
struct ShellBlock {
    /// 1-based line of the opening fence.
    line: usize,
    info: String,
    body: Vec<String>,
}

/// A command of a console block and what it should print.
#[derive(Debug, PartialEq)]
struct Example {
    line: usize,
    command: String,
    expected: Vec<String>,
}

const SHELL_LANGUAGES: &[&str] = &["sh", "bash", "shell", "zsh", "console"];

fn shell_blocks(text: &str) -> Vec<ShellBlock> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String, Vec<String>)> = None;
    for (index, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => open = Some((index + 1, info.trim().to_owned(), Vec::new())),
            (Some(_), Some(rest)) if rest.trim().is_empty() => {
                let (line, info, body) = open.take().expect("a block is open");
                let language = info.split_whitespace().next().unwrap_or_default();
                if SHELL_LANGUAGES.contains(&language) {
                    blocks.push(ShellBlock { line, info, body });
                }
            }
            (Some((_, _, body)), _) => body.push(line.to_owned()),
            (None, None) => {}
        }
    }
    blocks
}

fn examples(block: &ShellBlock) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    let mut continuing = false;
    for (offset, line) in block.body.iter().enumerate() {
        if continuing {
            let example = examples.last_mut().expect("a command is being continued");
            example.command.push('\n');
            example.command.push_str(line);
            continuing = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            examples.push(Example {
                line: block.line + offset + 1,
                command: command.to_owned(),
                expected: Vec::new(),
            });
            continuing = command.ends_with('\\');
        } else if let Some(example) = examples.last_mut() {
            example.expected.push(line.to_owned());
        }
    }
    examples
}

/// Whether `actual` is what `expected` describes (`...` lines, `[..]`).
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, after)| line_matches(first, line) && matches(rest, after)),
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let (expected, actual) = (expected.trim_end(), actual.trim_end());
    let mut parts = expected.split("[..]");
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Runs or checks every shell block of `page`; returns what failed.
fn check_page(page: &Path) -> Vec<String> {
    let name = page
        .strip_prefix(repo())
        .unwrap_or(page)
        .display()
        .to_string();
    let text = fs::read_to_string(page).expect("read a docs page");
    let mut failures = Vec::new();
    let mut scratch: Option<Scratch> = None;
    for block in shell_blocks(&text) {
        let language = block.info.split_whitespace().next().unwrap_or_default();
        if language != "console" {
            let reason = block
                .info
                .split_once("not-run:")
                .map(|(_, reason)| reason.trim());
            if reason.is_none_or(str::is_empty) {
                failures.push(format!(
                    "{name}:{}: a shell block must be a ```console block this test runs, or say \
                     why it is not run: ```{language} not-run: <the reason>",
                    block.line
                ));
            }
            continue;
        }
        let status = block
            .info
            .split_whitespace()
            .find_map(|word| word.strip_prefix("exit="))
            .map(|code| code.parse::<i32>().expect("exit=N takes a number"))
            .unwrap_or(0);
        let scratch = scratch.get_or_insert_with(Scratch::new);
        for example in examples(&block) {
            if let Err(failure) = scratch.run(&example, status) {
                failures.push(format!(
                    "{name}:{}: $ {}\n{failure}",
                    example.line, example.command
                ));
            }
        }
    }
    failures
}

/// A page's scratch directory and its current directory.
struct Scratch {
    dir: tempfile::TempDir,
    cwd: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("create a scratch dir");
        for copied in ["examples", "wit"] {
            copy_tree(&repo().join(copied), &dir.path().join(copied));
        }
        fs::create_dir_all(dir.path().join("home")).expect("create the scratch home");
        let cwd = dir.path().to_path_buf();
        Scratch { dir, cwd }
    }

    fn run(&mut self, example: &Example, status: i32) -> Result<(), String> {
        let command = match example.command.strip_prefix("cargo run -- ") {
            Some(rest) => format!("toolhost {rest}"),
            None => example.command.clone(),
        };
        if let Some(dir) = command
            .strip_prefix("cd ")
            .filter(|d| !d.contains(['&', ';']))
        {
            self.cwd = self.cwd.join(dir.trim());
            return Ok(());
        }
        let home = self.dir.path().join("home");
        let binary = Path::new(env!("CARGO_BIN_EXE_toolhost"));
        let path = format!(
            "{}:{}",
            binary.parent().expect("the binary is in a dir").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec 2>&1\n{command}"))
            .current_dir(&self.cwd)
            .env_clear()
            .env("PATH", path)
            .env("HOME", &home)
            .env("TOOLHOST_CONFIG_DIR", home.join(".config/toolhost"))
            .env("TOOLHOST_CACHE_DIR", shared_cache())
            .env("TOOLHOST_BACKGROUND_COMPILE", "off")
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start sh: {e}"))?;
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let reader = std::thread::spawn(move || {
            let mut output = Vec::new();
            let _ = stdout.read_to_end(&mut output);
            output
        });
        let started = Instant::now();
        let exit = loop {
            if let Some(exit) = child.try_wait().map_err(|e| e.to_string())? {
                break exit;
            }
            if started.elapsed() > COMMAND_TIMEOUT {
                let _ = child.kill();
                return Err(format!("did not finish within {COMMAND_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let output = String::from_utf8_lossy(&reader.join().expect("reader thread")).into_owned();
        let lines: Vec<&str> = output.lines().collect();
        let expected = trim_blank_end(&example.expected);
        let output_ok = expected.is_empty() || matches(expected, &lines);
        if exit.code() == Some(status) && output_ok {
            return Ok(());
        }
        Err(format!(
            "exit status {} (expected {status}); output{}:\n{output}\nexpected:\n{}",
            exit.code().map_or("none".into(), |c| c.to_string()),
            if output_ok { "" } else { " differs" },
            expected.join("\n")
        ))
    }
}

fn trim_blank_end(lines: &[String]) -> &[String] {
    let end = lines
        .iter()
        .rposition(|line| !line.trim().is_empty())
        .map_or(0, |last| last + 1);
    &lines[..end]
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create a scratch copy");
    for entry in fs::read_dir(from).expect("read a dir to copy").flatten() {
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&source, &dest);
        } else {
            fs::copy(&source, &dest).expect("copy a file");
        }
    }
}

/// The harness's own parsing and matching.
mod harness {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn wildcards_match_what_they_say() {
        assert!(line_matches("wrote [..] bytes", "wrote 12 bytes"));
        assert!(line_matches("a[..]b[..]c", "a-b-c"));
        assert!(!line_matches("a[..]b", "ab-c"));
        assert!(!line_matches("exact", "exact and more"));
        assert!(matches(
            &lines("one\n...\nfour"),
            &["one", "two", "three", "four"]
        ));
        assert!(matches(&lines("one\n...\n"), &["one"]));
        assert!(!matches(&lines("one\nthree"), &["one", "two", "three"]));
    }

    #[test]
    fn console_blocks_split_into_commands_and_their_output() {
        let text = "# x\n```console exit=1\n$ toolhost a \\\n  b\nout 1\n$ toolhost c\n```\n\
                    ```sh not-run: remote\ncurl x\n```\n```json\n{}\n```\n";
        let blocks = shell_blocks(text);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[1].info, "sh not-run: remote");
        assert_eq!(
            examples(&blocks[0]),
            vec![
                Example {
                    line: 3,
                    command: "toolhost a \\\n  b".into(),
                    expected: vec!["out 1".into()],
                },
                Example {
                    line: 6,
                    command: "toolhost c".into(),
                    expected: vec![],
                },
            ]
        );
    }
}
