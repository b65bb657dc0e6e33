//! `toolhost plugin new NAME --lang rust|python|js [DIR]`: a plugin project
//! that builds as generated and loads. The WIT is copied in from the binary
//! (the same `wit/` toolhost was built with), the one tool counts the lines,
//! words and bytes of a file (a path argument marked `x-toolhost-path`), and
//! the README says how to build it and drop it in.
//!
//! Never overwrites: the directory must be new or empty.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// A plugin language, with the toolchain its project is built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Lang {
    // Plain comments: clap would show doc comments as the values' help.
    // wit-bindgen, cargo build --target wasm32-wasip2.
    Rust,
    // componentize-py.
    Python,
    // componentize-js.
    Js,
}

/// The WIT every project gets, as toolhost was built with it.
pub(super) const WIT: &[(&str, &str)] = &[
    ("wit/plugin.wit", include_str!("../../../wit/plugin.wit")),
    (
        "wit/deps/filesystem.wit",
        include_str!("../../../wit/deps/filesystem.wit"),
    ),
    ("wit/deps/io.wit", include_str!("../../../wit/deps/io.wit")),
    (
        "wit/deps/clocks.wit",
        include_str!("../../../wit/deps/clocks.wit"),
    ),
];

/// Writes the project for tool `name` into `dir` (default `./NAME`) and
/// returns the directory.
pub(super) fn new_plugin(name: &str, lang: Lang, dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    if !crate::sandbox::is_tool_name(name) {
        bail!(
            "`{name}` cannot be a tool name: use 1-64 characters of [a-zA-Z0-9_-], e.g. `word_count`"
        );
    }
    if crate::sandbox::is_standard_tool(name) {
        bail!(
            "`{name}` is the name of a standard tool, and a plugin offering a tool of that name \
             is not loaded beside it: name yours differently, e.g. `my_{name}`"
        );
    }
    if lang == Lang::Rust && name.starts_with(|c: char| c.is_ascii_digit()) {
        bail!("`{name}` cannot name a Rust crate: start it with a letter");
    }
    let dir = dir.map_or_else(|| PathBuf::from(name), Path::to_path_buf);
    if dir.exists() {
        let empty = dir.is_dir()
            && fs::read_dir(&dir)
                .with_context(|| format!("reading `{}`", dir.display()))?
                .next()
                .is_none();
        if !empty {
            bail!(
                "`{}` already exists and is not an empty directory; `plugin new` never overwrites \
                 files: name a new directory",
                dir.display()
            );
        }
    }

    let fill = |template: &str| template.replace("{{name}}", name);
    let mut files: Vec<(&str, String)> = WIT.iter().map(|(p, t)| (*p, t.to_string())).collect();
    match lang {
        Lang::Rust => {
            files.push(("Cargo.toml", fill(include_str!("scaffold/rust/Cargo.toml"))));
            files.push(("src/lib.rs", fill(include_str!("scaffold/rust/lib.rs"))));
        }
        Lang::Python => files.push(("app.py", fill(include_str!("scaffold/python/app.py")))),
        Lang::Js => files.push(("app.js", fill(include_str!("scaffold/js/app.js")))),
    }
    files.push(("README.md", readme(name, lang)));
    for (relative, content) in files {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .with_context(|| format!("creating `{}`", parent.display()))?;
        }
        fs::write(&path, content).with_context(|| format!("writing `{}`", path.display()))?;
    }
    Ok(dir)
}

/// The command that builds the project into `NAME.wasm`, run in its
/// directory, as pasted into a shell: the Rust build's own `target/`
/// whatever `CARGO_TARGET_DIR` or a parent workspace says; the
/// `componentize-py` that `plugin install python` installed (`installed`),
/// else one installed into the project's `.venv`; `npx` without its
/// question.
pub(super) fn build_command(name: &str, lang: Lang, installed: Option<&Path>) -> String {
    match lang {
        Lang::Rust => format!(
            "cargo build --release --target wasm32-wasip2 --target-dir target && \
             cp target/wasm32-wasip2/release/{}.wasm {name}.wasm",
            name.replace('-', "_")
        ),
        Lang::Python => {
            let build = "--wit-path wit --world plugin componentize app -o";
            match installed {
                Some(program) => format!(
                    "{} {build} {name}.wasm",
                    crate::terminal::shell_word(&program.display().to_string())
                ),
                None => format!(
                    "python3 -m venv .venv && .venv/bin/pip install --quiet \
                     'componentize-py=={}' && .venv/bin/componentize-py {build} {name}.wasm",
                    super::install::COMPONENTIZE_PY
                ),
            }
        }
        Lang::Js => format!(
            "npx -y @bytecodealliance/componentize-js@{} app.js --wit wit --world-name plugin-fs --out {name}.wasm",
            super::install::COMPONENTIZE_JS
        ),
    }
}

/// The `componentize-py` `plugin install python` left in the cache, if any.
pub(super) fn installed_componentize_py() -> Option<PathBuf> {
    super::install::installed_componentize_py(crate::config::default_cache_dir().as_deref())
}

fn readme(name: &str, lang: Lang) -> String {
    let (setup, errors) = match lang {
        Lang::Rust => (
            "rustup target add wasm32-wasip2".to_string(),
            "Return `Err(CallError::Failed(..))` for anything you can catch; a panic is a \
             crash, and the model reads only that the tool crashed.",
        ),
        Lang::Python => (
            format!(
                "python3 -m venv .venv && . .venv/bin/activate && pip install 'componentize-py=={}'",
                super::install::COMPONENTIZE_PY
            ),
            "`raise Err(CallError_Failed(..))` is the tool's failure, which the model reads; any \
             other exception traps (a crash), so `call_tool` turns every exception into `failed`. \
             Keep that wrapper.",
        ),
        Lang::Js => (
            "# Node 20 or newer; npx fetches componentize-js".to_string(),
            "Throw `{ tag: 'failed', val: message }` for the tool's failure; anything else a \
             component throws traps (\"invalid variant tag value\"), so `callTool` turns every \
             other thrown value into `failed`. Keep that wrapper. `fetch` fails: toolhost gives \
             plugins no network.",
        ),
    };
    let source = match lang {
        Lang::Rust => "src/lib.rs",
        Lang::Python => "app.py",
        Lang::Js => "app.js",
    };
    format!(
        "# {name}\n\n\
         A toolhost plugin: one tool, `{name}`, that counts \
         the lines, words and bytes of a file. The code is in `{source}`; `wit/plugin.wit` is the \
         contract (its doc comments are the reference).\n\n\
         ## Build\n\n\
         ```sh\n{setup}\n{build}\n```\n\n\
         ## Check and drop in\n\n\
         ```sh\n\
         toolhost plugin check {name}.wasm\n\
         mkdir -p /my/workspace/.toolhost/plugins && cp {name}.wasm /my/workspace/.toolhost/plugins/\n\
         toolhost --workspace /my/workspace call {name} '{{\"path\": \"README.md\"}}'\n\
         ```\n\n\
         ## Conventions\n\n\
         - {errors}\n\
         - `path` is marked `\"x-toolhost-path\": \"read\"`: toolhost refuses a path outside the \
         tool's grants before the plugin runs, with a message that names the directories it may \
         read. The plugin can only reach what the user granted, marked or not.\n\
         - The tool is `read-only`; set `read_only` to false for a tool that changes files.\n",
        // After the setup above (the venv made and active, for Python).
        build = build_command(name, lang, Some(Path::new("componentize-py"))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_project_and_never_overwrites() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("wc");
        new_plugin("word_count", Lang::Python, Some(&dir)).expect("written");
        let app = fs::read_to_string(dir.join("app.py")).expect("app.py");
        assert!(app.contains("name=\"word_count\"") && !app.contains("{{"));
        assert!(dir.join("wit/deps/io.wit").is_file());
        let readme = fs::read_to_string(dir.join("README.md")).expect("readme");
        assert!(readme.contains(
            "componentize-py --wit-path wit --world plugin componentize app -o word_count.wasm"
        ));

        let again = new_plugin("word_count", Lang::Python, Some(&dir))
            .expect_err("an existing project is not overwritten");
        assert!(again.to_string().contains("never overwrites"), "{again}");
        assert_eq!(fs::read_to_string(dir.join("app.py")).expect("kept"), app);
    }

    #[test]
    fn refuses_a_name_that_cannot_be_a_tool() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for name in ["", "has space", "a/b", &"x".repeat(65)] {
            let err = new_plugin(name, Lang::Js, Some(&tmp.path().join("p"))).expect_err(name);
            assert!(err.to_string().contains("cannot be a tool name"), "{err}");
        }
        assert!(!tmp.path().join("p").exists());
    }
}
