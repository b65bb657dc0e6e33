//! What the plugins a repository ships may cost a start (issue 37,
//! section 6): copies that differ by one byte are each compiled, so a
//! start loads a bounded number of them, says so once, and the user's
//! `[limits] shipped_plugins` raises it.

use std::fs;
use std::time::Instant;

use super::common::{Workspace, test_plugins};

/// `plugin` with a custom section `x` holding `n` appended: the same
/// code, other bytes, so another compile.
fn one_byte_apart(plugin: &str, n: u8) -> Vec<u8> {
    let mut bytes = fs::read(plugin).expect("read fixture");
    // Section id 0 (custom), size 3: name length 1, name `x`, one byte.
    bytes.extend_from_slice(&[0, 3, 1, b'x', n]);
    bytes
}

/// A workspace that ships `count` copies of the echo plugin, each one
/// byte apart.
fn shipping(count: u8) -> Workspace {
    let ws = Workspace::new();
    let dir = ws.mkdir(".toolhost/plugins");
    for n in 0..count {
        fs::write(
            dir.join(format!("p-{n:02}.wasm")),
            one_byte_apart(test_plugins::ECHO, n),
        )
        .expect("write plugin");
    }
    ws
}

#[test]
fn a_workspace_s_many_shipped_plugins_cost_a_start_a_bounded_amount() {
    // The count is the user's (the default, 16, is reached first only on
    // a fast machine: 10 s of compiles come first on a loaded one).
    let ws = shipping(8);
    let config = ws.user_config().join("config.toml");
    fs::write(&config, "[limits]\nshipped_plugins = 5\n").expect("write config");
    // A shipped toolhost.toml may not raise it.
    ws.write("toolhost.toml", "[limits]\nshipped_plugins = 100\n");
    let started = Instant::now();
    let output = ws
        .call("echo", r#"{"text":"hi"}"#, &[])
        .output()
        .expect("run");
    let took = started.elapsed();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "hi\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let budget: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("plugins this workspace ships were not loaded"))
        .collect();
    assert_eq!(
        budget,
        [ws.expand(
            "warning: skipped plugin `{ws}/.toolhost/plugins`: 3 of the 8 plugins this workspace \
             ships were not loaded (`p-05`, `p-06`, `p-07`): a start loads at most 5 of them, \
             since each costs a compile and its memory before the first prompt, and you have not \
             trusted this workspace; to load more, set `shipped_plugins = 8` under [limits] in \
             your config.toml, or trust the workspace (`toolhost trust {ws}`)"
        )],
        "{stderr}"
    );
    // The 4 copies after the first offer `echo` again: skipped as before.
    let clashes = |stderr: &str| {
        stderr
            .lines()
            .filter(|line| line.contains("is already offered by"))
            .count()
    };
    assert_eq!(clashes(&stderr), 4, "{stderr}");
    assert!(stderr.contains("shipped_plugins = 100"), "{stderr}");
    eprintln!("8 shipped copies, 5 loaded: start and call took {took:?}");

    // The user's setting, pasted, loads them all.
    fs::write(&config, "[limits]\nshipped_plugins = 8\n").expect("write config");
    let output = ws
        .call("echo", r#"{"text":"hi"}"#, &[])
        .output()
        .expect("run");
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("plugins this workspace ships were not loaded"),
        "{stderr}"
    );
    assert_eq!(clashes(&stderr), 7, "{stderr}");
}
