//! The standard `bash` tool through the real binary: the loop's demo as
//! written, the result's form, what is not there, every escape the issue
//! names (each followed by a command that works), the limits, and live
//! output in a run.

use serde_json::{Value, json};

use super::common::{Workspace, assert_text, mcp_calls, stdout_of, stream_json_run};

/// The files of the ReAct loop's demo: two TypeScript files with TODOs.
fn demo() -> Workspace {
    let ws = Workspace::new();
    ws.write(
        "loop.ts",
        "export function loop() {\n  // TODO: stop after max turns\n}\n",
    );
    ws.write(
        "tools.ts",
        "// TODO: more tools\nexport const tools = [];\n",
    );
    ws.write("README.md", "# demo\n");
    ws
}

/// What `bash` answers `command` with in `ws`, given `flags`.
fn bash(ws: &Workspace, flags: &[&str], command: &str) -> String {
    let input = json!({ "command": command }).to_string();
    stdout_of(&mut ws.call("bash", &input, flags))
}

#[test]
fn the_loops_demo_runs_as_written() {
    let ws = demo();
    assert_text(&bash(&ws, &[], "ls *.ts"), "loop.ts\ntools.ts\n");
    assert_text(
        &bash(&ws, &[], "grep -nH TODO loop.ts tools.ts"),
        "loop.ts:2:  // TODO: stop after max turns\ntools.ts:1:// TODO: more tools\n",
    );
}

#[test]
fn the_result_is_stdout_then_stderr_then_a_failing_exit_code() {
    let ws = demo();
    assert_text(
        &bash(&ws, &[], "echo out; echo err >&2; exit 3"),
        "out\n--- stderr ---\nerr\nexit code 3\n",
    );
    // `grep` finding nothing is an answer, not an error of the tool.
    assert_text(
        &bash(&ws, &[], "grep -c nothing-here loop.ts"),
        "0\nexit code 1\n",
    );
    assert_text(&bash(&ws, &[], "true"), "(no output)\n");
    // The shell starts at the workspace, shown at its real path.
    assert_text(&bash(&ws, &[], "pwd"), &ws.expand("{ws}\n"));
    assert_text(
        &bash(&ws, &[], &ws.expand("cat {ws}/README.md")),
        "# demo\n",
    );
}

#[test]
fn a_program_of_the_machine_says_it_is_not_here_and_what_to_use() {
    let ws = demo();
    assert_text(
        &bash(&ws, &[], "cargo test; echo next"),
        "next\n--- stderr ---\nbash: cargo: not available in this sandbox: this shell runs only \
         its built-in utilities, inside WebAssembly, not the machine's programs. The user can \
         grant it to this tool (`--allow-exec bash=cargo`); it then runs natively, inside walls \
         built from the tool's grants.\n",
    );
    assert_text(
        &bash(&ws, &[], "python3 -c 'print(1)'"),
        "--- stderr ---\nbash: python3: not available in this sandbox: this shell runs only its \
         built-in utilities, inside WebAssembly, not the machine's programs. For Python, use the \
         `python` tool (`toolhost plugin install python` adds it).\nexit code 127\n",
    );
    let curl = bash(&ws, &[], "curl -s https://example.com");
    assert!(curl.contains("For a URL, use the `fetch` tool"), "{curl}");
    assert!(curl.ends_with("exit code 127\n"), "{curl}");
}

/// A workspace `inner` inside a directory that holds a secret beside it.
fn nested() -> (Workspace, String) {
    let outer = Workspace::new();
    outer.write("secret.txt", "the secret\n");
    outer.write("inner/a.txt", "inside\n");
    outer.mkdir("inner/out");
    let inner = outer.path().join("inner").display().to_string();
    (outer, inner)
}

#[test]
fn reads_stay_inside_the_workspace() {
    let (outer, inner) = nested();
    let flags = ["--workspace", inner.as_str()];
    assert_text(
        &bash(&outer, &flags, "cat ../secret.txt; cat a.txt"),
        "inside\n--- stderr ---\ncat: ../secret.txt: No such file or directory\nexit code 0\n"
            .replace("exit code 0\n", "")
            .as_str(),
    );
    // Above the workspace, as in a container: each directory it is in
    // holds only the way down to it.
    assert_text(
        &bash(
            &outer,
            &flags,
            "cd .. && ls && cat secret.txt; cd inner && cat a.txt",
        ),
        "inner\ninside\n--- stderr ---\ncat: secret.txt: No such file or directory\n",
    );
    assert_text(
        &bash(
            &outer,
            &flags,
            "ls / | wc -l; cd / && find . -name secret.txt | wc -l",
        ),
        "1\n0\n",
    );
    let absolute = outer.path().join("secret.txt").display().to_string();
    assert_text(
        &bash(&outer, &flags, &format!("cat {absolute} || echo refused")),
        &format!("refused\n--- stderr ---\ncat: {absolute}: No such file or directory\n"),
    );
}

#[test]
fn a_link_out_is_refused_whoever_made_it() {
    let (outer, inner) = nested();
    let flags = ["--workspace", inner.as_str(), "--allow-write", "bash=out"];
    // Made by the shell: an absolute target is refused when it is made.
    let made = bash(
        &outer,
        &flags,
        "ln -s / out/l; cat out/l/etc/passwd; echo ok > out/b && cat out/b",
    );
    assert!(made.starts_with("ok\n--- stderr ---\n"), "{made}");
    assert!(
        made.ends_with(
            "--- toolhost ---\nerror: `bash` may not create the symbolic link `out/l` -> `/`: links \
             with an absolute target are not allowed in the sandbox. Use a relative target inside \
             the tool's directories.\n"
        ),
        "{made}"
    );
    assert!(!outer.path().join("inner/out/l").exists());
    // Planted beforehand (by another program, or shipped with the
    // repository): following it out fails.
    std::os::unix::fs::symlink("../secret.txt", outer.path().join("inner/planted"))
        .expect("plant a link");
    let planted = bash(&outer, &flags, "cat planted; cat a.txt");
    assert!(
        planted.starts_with("inside\n--- stderr ---\ncat: planted: "),
        "{planted}"
    );
    assert!(!planted.contains("the secret"), "{planted}");
}

#[test]
fn protected_paths_stay_protected_with_the_workspace_writable() {
    let ws = demo();
    ws.write(".git/config", "[core]\n\tbare = false\n");
    ws.write("toolhost.toml", "# the user's\n");
    ws.mkdir(".git/hooks");
    let flags = ["--allow-write", "bash=."];
    for (command, protected) in [
        ("echo x > toolhost.toml", "toolhost.toml"),
        ("echo x >> .git/config", ".git/config"),
        ("sed -i s/false/true/ .git/config", ".git/config"),
        ("mv .git git-moved", ".git"),
        ("touch .git", ".git"),
    ] {
        let answer = bash(
            &ws,
            &flags,
            &format!("{command}; echo good > good.txt && cat good.txt"),
        );
        assert!(
            answer.starts_with("good\n--- stderr ---\n"),
            "{command}: {answer}"
        );
        assert!(
            answer.contains(&format!("\n--- toolhost ---\nerror: `bash` may not change `{protected}"))
                // `sed -i` writes a file beside the one it edits, and renames.
                || (command.starts_with("sed") && answer.contains("may not change `.git/")),
            "{command}: {answer}"
        );
    }
    assert_eq!(ws.read(".git/config"), "[core]\n\tbare = false\n");
    assert_eq!(ws.read("toolhost.toml"), "# the user's\n");
    assert!(ws.path().join(".git/hooks").is_dir());
}

#[test]
fn a_write_outside_the_write_grants_says_where_the_tool_may_write() {
    let ws = demo();
    ws.mkdir("out");
    let answer = bash(
        &ws,
        &["--allow-write", "bash=out"],
        "echo x > loop.ts; echo y > out/y.txt && cat out/y.txt",
    );
    assert_text(
        &answer,
        "y\n--- stderr ---\nbash: line 1: loop.ts: Permission denied\n--- toolhost ---\nerror: \
         access denied: `bash` may not write `loop.ts`: it is outside the directories this tool \
         may write: `out` (read-write). Use a path inside one of them.\n",
    );
    assert!(ws.read("loop.ts").starts_with("export function loop"));
    // With no write grant at all, who can give one.
    // A directory's times change where the tool may write.
    ws.mkdir("out/d");
    assert_text(
        &bash(
            &ws,
            &["--allow-write", "bash=out"],
            "touch out/d && echo touched",
        ),
        "touched\n",
    );
    let answer = bash(&ws, &[], "touch new.txt; echo after");
    assert_text(
        &answer,
        "after\n--- stderr ---\ntouch: cannot touch 'new.txt': Permission denied\n--- toolhost \
         ---\nerror: access denied: `bash` may not write `new.txt`: it has no write access to any \
         directory. Only the user can grant it (in toolhost.toml or with --allow-write \
         bash=DIR).\n",
    );
}

/// A tar archive (ustar) of `entries`: (name, type flag, link target,
/// content).
fn tar(entries: &[(&str, u8, &str, &str)]) -> Vec<u8> {
    let mut archive = Vec::new();
    for (name, kind, link, content) in entries {
        let mut header = [0u8; 512];
        header[..name.len()].copy_from_slice(name.as_bytes());
        header[100..107].copy_from_slice(b"0000644");
        header[108..115].copy_from_slice(b"0000000");
        header[116..123].copy_from_slice(b"0000000");
        let size = format!("{:011o}", content.len());
        header[124..135].copy_from_slice(size.as_bytes());
        header[136..147].copy_from_slice(b"00000000000");
        header[156] = *kind;
        header[157..157 + link.len()].copy_from_slice(link.as_bytes());
        header[257..263].copy_from_slice(b"ustar\0");
        header[263..265].copy_from_slice(b"00");
        header[148..156].copy_from_slice(b"        ");
        let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
        header[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        archive.extend_from_slice(&header);
        archive.extend_from_slice(content.as_bytes());
        archive.resize(archive.len().div_ceil(512) * 512, 0);
    }
    archive.resize(archive.len() + 1024, 0);
    archive
}

#[test]
fn tar_cannot_extract_out_of_the_workspace() {
    let (outer, inner) = nested();
    let flags = ["--workspace", inner.as_str(), "--allow-write", "bash=out"];
    let out = outer.path().join("inner/out");
    std::fs::write(
        out.join("climbs.tar"),
        tar(&[("../../escaped.txt", b'0', "", "climbed\n")]),
    )
    .expect("write an archive");
    std::fs::write(
        out.join("links.tar"),
        tar(&[("up", b'2', "/", ""), ("up/etc/x", b'0', "", "through\n")]),
    )
    .expect("write an archive");
    assert_text(
        &bash(&outer, &flags, "cd out && tar -xf climbs.tar; cat ../a.txt"),
        "inside\n--- stderr ---\ntar: ../../escaped.txt: path traversal blocked\n",
    );
    // bashkit's tar makes no links at all; were it to, the host refuses
    // one with an absolute target (`a_link_out_is_refused_whoever_made_it`).
    assert_text(
        &bash(&outer, &flags, "cd out && tar -xf links.tar; cat ../a.txt"),
        "inside\n--- stderr ---\ntar: up: symbolic link skipped (not supported in VFS)\n",
    );
    assert!(!outer.path().join("escaped.txt").exists());
    assert!(!outer.path().join("inner/escaped.txt").exists());
    // `up/etc/x` was extracted as a file in a directory `up`.
    let up = std::fs::symlink_metadata(out.join("up")).expect("up");
    assert!(up.is_dir() && !up.file_type().is_symlink());
    assert_eq!(
        std::fs::read_to_string(out.join("up/etc/x")).expect("up/etc/x"),
        "through\n"
    );
}

/// `ws` with `[tools.bash]` limits lowered in its toolhost.toml (a
/// workspace's file may lower them).
fn limited(limits: &str) -> Workspace {
    let ws = demo();
    ws.write(
        "toolhost.toml",
        format!("[tools.bash]\nlimits = {{ {limits} }}\n"),
    );
    ws
}

/// The model's text of a call that failed.
fn fault(ws: &Workspace, command: &str) -> String {
    let input = json!({ "command": command }).to_string();
    let output = ws.call("bash", &input, &[]).output().expect("run toolhost");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn endless_work_ends_at_a_limit() {
    let ws = limited("fuel = 2_000_000_000, timeout_ms = 20_000");
    let spun = fault(&ws, "while true; do :; done");
    assert!(spun.starts_with("error: `bash` ran out of fuel"), "{spun}");
    // bashkit's `seq` stops at 100,000 lines by itself (docs/using/bash.md).
    assert_text(
        &bash(&ws, &[], "seq 1 10000000000 | wc -l"),
        "100000\n--- stderr ---\nseq: line limit (100000) exceeded; output truncated\n",
    );
    // What ends by itself still works.
    assert_text(&bash(&ws, &[], "yes | head -1"), "y\n");
    // A function that calls itself stops at bashkit's depth of 16 (it
    // bounds the host stack the interpreter's recursion takes).
    assert_text(
        &bash(&ws, &[], "f() { f; }; f; echo after"),
        "--- stderr ---\nbash: resource limit exceeded: maximum function depth exceeded (16)\nexit \
         code 2\n",
    );
}

#[test]
fn a_sleeping_command_ends_at_the_deadline_or_its_own_timeout() {
    let ws = limited("timeout_ms = 1_000");
    assert_text(
        &fault(&ws, "sleep 5"),
        "error: `bash` did not finish within its time limit of 1 s and was stopped. Ask for less \
         work in one call, or do not call it again with the same arguments.\n",
    );
    // The call's own `timeout_ms` keeps what the command printed, and
    // exits as `timeout` does.
    let ws = demo();
    let input = json!({ "command": "echo early; sleep 5; echo late", "timeout_ms": 300 });
    let started = std::time::Instant::now();
    let answer = stdout_of(&mut ws.call("bash", &input.to_string(), &[]));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "{answer}"
    );
    assert_text(
        &answer,
        "early\n--- stderr ---\nbash: stopped after 300 ms (the call's timeout_ms)\nexit code \
         124\n",
    );
}

#[test]
fn a_runs_bash_calls_stream_their_lines_as_progress() {
    let ws = demo();
    let script = ws
        .write(
            "script.json",
            json!({"turns": [
                {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {
                    "command": "for i in 1 2 3; do echo line $i; sleep 0.15; done"}}]},
                {"text": "done"}
            ]})
            .to_string(),
        )
        .display()
        .to_string();
    let events = stream_json_run(&ws, &script);
    let updates: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "tool_execution_update")
        .collect();
    assert!(!updates.is_empty(), "{events:?}");
    assert_eq!(
        updates[0],
        &json!({"type": "tool_execution_update", "call_id": "b1", "tool": "bash", "message": "line 1"})
    );
}

#[test]
#[ignore = "needs TOOLHOST_MCP_PYTHON (a python with the MCP Python SDK); .ci/run sets it"]
fn the_loops_demo_runs_over_mcp_with_the_official_sdk() {
    let ws = demo();
    let calls = json!([
        ["bash", {"command": "ls *.ts"}],
        ["bash", {"command": "grep -nH TODO loop.ts tools.ts"}],
        ["bash", {"command": "cat missing.txt"}],
    ]);
    let seen = mcp_calls(&ws, &[], &calls);
    assert_eq!(
        seen["results"],
        json!([
            {"blocks": 1, "text": "loop.ts\ntools.ts\n", "is_error": false},
            {"blocks": 1, "text": "loop.ts:2:  // TODO: stop after max turns\ntools.ts:1:// TODO: more tools\n", "is_error": false},
            {"blocks": 1, "text": "--- stderr ---\ncat: missing.txt: No such file or directory\nexit code 1\n", "is_error": false},
        ])
    );
    assert_eq!(
        seen["annotations"]["bash"],
        json!({"title": "Bash", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false})
    );
}

/// `grep -r` walks the tree through the shell's file system (the
/// directories above the workspace resolved as the way down): it must find
/// what grep on each file finds, whatever the pattern's anchors, case, line
/// ends or invalid UTF-8.
#[test]
fn recursive_grep_finds_what_grep_on_each_file_finds() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\nBeta\n  gamma\n");
    ws.write("sub/crlf.txt", "alpha\r\nbeta\r\n");
    ws.write(
        "sub/deep/latin1.txt",
        b"caf\xe9 alpha\nna\xefve\n".as_slice(),
    );
    ws.write("sub/deep/noeol.txt", "last alpha");
    ws.write("nul.bin", b"alpha\0beta\n".as_slice());
    ws.write(".hidden/h.txt", "alpha\n");
    for pattern in [
        "alpha",
        "^alpha$",
        "^beta",
        "a$",
        "caf.",
        "na.ve",
        "^ +g",
        "x*",
        "alpha|gamma",
    ] {
        for flags in ["-rnE", "-rniE", "-rlE", "-rnwE"] {
            let recursive = format!("grep {flags} '{pattern}' . | sort");
            let each = format!(
                "find . -type f | sort | xargs grep {} -H '{pattern}' | sort",
                flags.replace('r', "")
            );
            assert_text(&bash(&ws, &[], &recursive), &bash(&ws, &[], &each));
        }
    }
}

/// Files are read straight through `wasi:filesystem`, in 64 KiB reads;
/// what that route cannot read fails as bash says it.
#[test]
fn files_read_whole_and_unreadable_ones_fail_in_bash_s_words() {
    let ws = Workspace::new();
    ws.write("big.txt", "0123456789".repeat(20_000));
    ws.write("empty.txt", "");
    ws.mkdir("dir");
    assert_text(
        &bash(
            &ws,
            &[],
            "wc -c big.txt empty.txt; tail -c 4 big.txt; echo; cat dir; cat missing",
        ),
        "200000 big.txt\n     0 empty.txt\n200000 total\n6789\n--- stderr ---\ncat: dir: Is a \
         directory\ncat: missing: No such file or directory\nexit code 1\n",
    );
}

/// `grep` searches a file's whole text for the next line that can match
/// (vendor/bashkit's change) and reads a stream line by line: both must
/// select, count and print the same lines, whatever the pattern (anchors,
/// what can match across a line end, empty matches), the options (counts,
/// lists, only-matching, byte offsets, a maximum, context) and the file
/// (CRLF, no final newline, a NUL, invalid UTF-8, nothing at all). One
/// call runs every case both ways and prints the ones that differ.
#[test]
fn grep_over_a_file_prints_what_grep_over_its_stream_prints() {
    let ws = Workspace::new();
    ws.write(
        "mixed.txt",
        "alpha beta\nfoo bar\r\n\nBeta\talpha\nstraße ΣΑΣ KELVIN\nab\nxb\na\n  b\nlast a",
    );
    ws.write("nul.bin", b"alpha\nbe\0ta\nalpha beta\n".as_slice());
    ws.write(
        "latin1.txt",
        b"caf\xe9 alpha\nna\xefve b\nalpha\n".as_slice(),
    );
    ws.write("empty.txt", "");
    // Big enough that a search running on past each line end would cost
    // the square of its length (`^[^#]*$` on it did, before classes lost
    // the newline: out of fuel), and past a stream's 4 KiB pieces.
    ws.write("big.txt", "code line\n# comment\n".repeat(20_000));
    let patterns = [
        "alpha",
        "^alpha",
        "a$",
        "^$",
        "",
        "a[^x]*b",
        r"a\s+b",
        "(bar|beta)$",
        "bar\r$",
        "x*",
        ".",
        "ß",
        "σ",
        r"\bbe",
        "caf.",
        r"\W+",
        "[[:punct:]]",
        "e.a",
        "$",
        r"\>",
        r"\`a",
        r"a\'",
        "^[^#]*$",
        r"\Bb",
        "nomatch",
    ];
    let flags = [
        "-E",
        "-nE",
        "-iE",
        "-wE",
        "-xE",
        "-cE",
        "-lE",
        "-LE",
        "-oE",
        "-nbE",
        "-m1 -nE",
        "-m2 -A1 -nE",
        "-A1 -nE",
        "-C1 -nE",
        "-vnE",
        "-qE",
        "-F",
        "-niF",
        "-P",
        "-n",
        "-xn",
        "-c -m2",
        "-l -m1",
        "-I -n",
        "-a -n",
    ];
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let list = |items: &[&str]| items.iter().map(|s| quote(s)).collect::<Vec<_>>().join(" ");
    let script = format!(
        "patterns=({})\nflags=({})\nn=0\n\
         for f in mixed.txt nul.bin latin1.txt empty.txt; do\n\
         for fl in \"${{flags[@]}}\"; do\n\
         for p in \"${{patterns[@]}}\"; do\n\
         a=$(grep $fl -e \"$p\" \"$f\" 2>&1; echo \"rc=$?\")\n\
         b=$(grep --label=\"$f\" $fl -e \"$p\" < \"$f\" 2>&1; echo \"rc=$?\")\n\
         [ \"$a\" = \"$b\" ] || printf 'differs: grep %s -e %s %s\\n%s\\n---\\n%s\\n' \
         \"$fl\" \"$p\" \"$f\" \"$a\" \"$b\"\n\
         n=$((n + 1))\n\
         done\ndone\ndone\n\
         echo \"$n cases\"\n\
         grep -c '^[^#]*$' big.txt; grep -c '$' big.txt; grep -n 'co[^x]*t$' big.txt | tail -1\n",
        list(&patterns),
        list(&flags),
    );
    assert_text(
        &bash(&ws, &[], &script),
        "2500 cases\n20000\n40000\n40000:# comment\n",
    );
}
