//! Raw WASI file-system calls, one operation per call, for the escape suite
//! (SECURITY.md): the attacks go straight to `wasi:filesystem/types`, below
//! any standard library that might refuse them first.
//!
//! Input: `{"op": OP, ...}`. Every path is relative to `dir` when given (a
//! directory opened read-only first, as a guest would to get a descriptor
//! inside a protected tree), else to the `.` preopen (or the one `preopen`
//! names). `follow: true` sets
//! `symlink-follow`. Answers `ok` or fails with the WASI error code's name.

use wasi::filesystem::types::{
    Descriptor, DescriptorFlags, ErrorCode, NewTimestamp, OpenFlags, PathFlags,
};

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct Escape;

impl Guest for Escape {
    fn list_tools() -> Vec<ToolSpec> {
        let spec = |name: &str, read_only| ToolSpec {
            name: name.into(),
            description: "One raw wasi:filesystem operation: write, append, stream_write, \
                truncate, set_size, set_times, set_times_at, mkdir, rmdir, unlink, rename, \
                symlink, link, fill, list, list_then_rename; or a loop of them for a race: \
                race_rename, race_link, swap; create_new; hoarding the host's resources: \
                hold_open, hold_listings, create_many, write_at."
                .into(),
            input_schema:
                r#"{"type":"object","properties":{"op":{"type":"string"}},"required":["op"]}"#
                    .into(),
            read_only,
        };
        // `raw_ro` declares itself read-only and does the same raw calls:
        // a declaration the host must enforce, not believe.
        vec![spec("raw", false), spec("raw_ro", true)]
    }

    fn call_tool(_name: String, input: String) -> Result<String, CallError> {
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| CallError::InvalidInput(e.to_string()))?;
        run(&input).map_err(|e| CallError::Failed(e.name().to_string()))
    }
}

fn run(input: &serde_json::Value) -> Result<String, ErrorCode> {
    let arg = |key: &str| input[key].as_str().unwrap_or_default();
    let follow = if input["follow"].as_bool().unwrap_or(false) {
        PathFlags::SYMLINK_FOLLOW
    } else {
        PathFlags::empty()
    };
    let preopens = wasi::filesystem::preopens::get_directories();
    // `preopen` picks a grant by its guest path; `.` by default.
    let wanted = match arg("preopen") {
        "" => ".",
        name => name,
    };
    let (root, _) = preopens
        .iter()
        .find(|(_, name)| name == wanted)
        .ok_or(ErrorCode::NoEntry)?;
    let opened;
    let dir: &Descriptor = if arg("dir").is_empty() {
        root
    } else {
        opened = root.open_at(
            PathFlags::SYMLINK_FOLLOW,
            arg("dir"),
            OpenFlags::DIRECTORY,
            DescriptorFlags::READ,
        )?;
        &opened
    };
    let text = arg("text").as_bytes();
    let write_flags = DescriptorFlags::READ | DescriptorFlags::WRITE;
    match arg("op") {
        "write" => {
            let file = dir.open_at(
                follow,
                arg("path"),
                OpenFlags::CREATE | OpenFlags::TRUNCATE,
                write_flags,
            )?;
            file.write(text, 0)?;
        }
        "append" => {
            let file = dir.open_at(follow, arg("path"), OpenFlags::CREATE, write_flags)?;
            let stream = file.append_via_stream()?;
            stream
                .blocking_write_and_flush(text)
                .map_err(|_| ErrorCode::Io)?;
        }
        "stream_write" => {
            let file = dir.open_at(follow, arg("path"), OpenFlags::empty(), write_flags)?;
            let stream = file.write_via_stream(0)?;
            stream
                .blocking_write_and_flush(text)
                .map_err(|_| ErrorCode::Io)?;
        }
        "truncate" => {
            dir.open_at(
                follow,
                arg("path"),
                OpenFlags::TRUNCATE,
                DescriptorFlags::READ,
            )?;
        }
        "set_size" => {
            let file = dir.open_at(follow, arg("path"), OpenFlags::empty(), write_flags)?;
            file.set_size(input["size"].as_u64().unwrap_or(0))?;
        }
        "set_times" => {
            // Read-only open: a descriptor that may not write may still try.
            let file = dir.open_at(
                follow,
                arg("path"),
                OpenFlags::empty(),
                DescriptorFlags::READ,
            )?;
            file.set_times(NewTimestamp::Now, NewTimestamp::Now)?;
        }
        "set_times_at" => {
            dir.set_times_at(follow, arg("path"), NewTimestamp::Now, NewTimestamp::Now)?
        }
        "mkdir" => dir.create_directory_at(arg("path"))?,
        "create_new" => {
            // `O_CREAT | O_EXCL`, following links as wasi-libc asks.
            dir.open_at(
                PathFlags::SYMLINK_FOLLOW,
                arg("path"),
                OpenFlags::CREATE | OpenFlags::EXCLUSIVE,
                write_flags,
            )?;
        }
        "rmdir" => dir.remove_directory_at(arg("path"))?,
        "unlink" => dir.unlink_file_at(arg("path"))?,
        "rename" => dir.rename_at(arg("from"), dir, arg("to"))?,
        "symlink" => dir.symlink_at(arg("target"), arg("link"))?,
        "link" => dir.link_at(follow, arg("from"), dir, arg("to"))?,
        "fill" => {
            // Writes `mib` MiB in 64 KiB pieces, for the write budget.
            let file = dir.open_at(
                follow,
                arg("path"),
                OpenFlags::CREATE | OpenFlags::TRUNCATE,
                write_flags,
            )?;
            let chunk = vec![b'x'; 64 * 1024];
            let total = input["mib"].as_u64().unwrap_or(1) * (1 << 20);
            let mut offset = 0;
            while offset < total {
                offset += file.write(&chunk, offset)?;
            }
        }
        "hold_open" => {
            // Opens `path` `count` times and keeps every descriptor: host
            // descriptors held by one call. Answers how many it got.
            let mut held = Vec::new();
            for _ in 0..input["count"].as_u64().unwrap_or(0) {
                held.push(dir.open_at(
                    follow,
                    arg("path"),
                    OpenFlags::empty(),
                    DescriptorFlags::READ,
                )?);
            }
            return Ok(format!("held {}", held.len()));
        }
        "hold_listings" => {
            // Opens `count` listings of `path` and reads one entry of each.
            let listed = dir.open_at(
                follow,
                arg("path"),
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )?;
            let mut held = Vec::new();
            for _ in 0..input["count"].as_u64().unwrap_or(0) {
                let stream = listed.read_directory()?;
                stream.read_directory_entry()?;
                held.push(stream);
            }
            return Ok(format!("held {}", held.len()));
        }
        "create_many" => {
            // Creates `count` empty files `<path>N` (0 bytes each).
            let count = input["count"].as_u64().unwrap_or(0);
            for n in 0..count {
                dir.open_at(
                    PathFlags::empty(),
                    &format!("{}{n}", arg("path")),
                    OpenFlags::CREATE | OpenFlags::EXCLUSIVE,
                    write_flags,
                )?;
            }
            return Ok(format!("created {count}"));
        }
        "write_at" => {
            // Writes `text` at `offset` of `path` (created), by `write` or,
            // with `stream: true`, through a stream that starts there.
            let file = dir.open_at(follow, arg("path"), OpenFlags::CREATE, write_flags)?;
            let offset = input["offset"].as_u64().unwrap_or(0);
            if input["stream"].as_bool().unwrap_or(false) {
                let stream = file.write_via_stream(offset)?;
                stream
                    .blocking_write_and_flush(text)
                    .map_err(|_| ErrorCode::Io)?;
            } else {
                file.write(text, offset)?;
            }
        }
        "list" => {
            // Each entry's metadata hash asked right after the stream gave
            // it (wasi-libc's `readdir` does; the guard answers from the
            // listing) against the same question asked afresh.
            let stream = dir.read_directory()?;
            let mut listed = Vec::new();
            while let Some(entry) = stream.read_directory_entry()? {
                let hash = dir.metadata_hash_at(PathFlags::empty(), &entry.name)?;
                listed.push((entry.name, hash));
            }
            let mut lines = Vec::new();
            for (name, hash) in listed {
                let again = dir.metadata_hash_at(PathFlags::empty(), &name)?;
                let same = (hash.lower, hash.upper) == (again.lower, again.upper);
                lines.push(format!(
                    "{name} {}",
                    if same { "same" } else { "DIFFERENT" }
                ));
            }
            lines.sort();
            return Ok(lines.join("\n"));
        }
        "list_then_rename" => {
            // `path` is listed, then `from` renamed over it: the hash asked
            // next must be of the file now there, not of the listed one.
            let stream = dir.read_directory()?;
            while let Some(entry) = stream.read_directory_entry()? {
                if entry.name != arg("path") {
                    continue;
                }
                dir.rename_at(arg("from"), dir, arg("path"))?;
                let after = dir.metadata_hash_at(PathFlags::empty(), arg("path"))?;
                let fresh = dir.metadata_hash_at(PathFlags::empty(), arg("path"))?;
                let same = (after.lower, after.upper) == (fresh.lower, fresh.upper);
                return Ok(format!(
                    "after the rename: {}",
                    if same { "the new file" } else { "STALE" }
                ));
            }
            return Err(ErrorCode::NoEntry);
        }
        "race_rename" => {
            // One side of a race: for `ms` milliseconds, create `from` and
            // rename it onto `to` (a path through a directory the other
            // side swaps for a link). Answers how many renames went through.
            let (mut tried, mut won) = (0, 0);
            let until = deadline(input);
            while std::time::Instant::now() < until {
                tried += 1;
                let made = dir
                    .open_at(
                        PathFlags::empty(),
                        arg("from"),
                        OpenFlags::CREATE | OpenFlags::TRUNCATE,
                        write_flags,
                    )
                    .and_then(|file| file.write(text, 0));
                if made.is_ok() && dir.rename_at(arg("from"), dir, arg("to")).is_ok() {
                    won += 1;
                }
            }
            return Ok(format!("won {won} of {tried}"));
        }
        "race_link" => {
            // Like race_rename, with a hard link of `from` (an existing
            // file) at `to`, removed again after each success.
            let (mut tried, mut won) = (0, 0);
            let until = deadline(input);
            while std::time::Instant::now() < until {
                tried += 1;
                if dir
                    .link_at(PathFlags::empty(), arg("from"), dir, arg("to"))
                    .is_ok()
                {
                    won += 1;
                    let _ = dir.unlink_file_at(arg("to"));
                }
            }
            return Ok(format!("won {won} of {tried}"));
        }
        "swap" => {
            // The other side: for `ms` milliseconds, swap the directory `a`
            // with the entry `b` (a link) and back, so `a` is by turns a
            // directory, missing, and a link.
            let parked = format!("{}.parked", arg("a"));
            let mut rounds = 0;
            let until = deadline(input);
            while std::time::Instant::now() < until {
                let moved = [
                    dir.rename_at(arg("a"), dir, &parked),
                    dir.rename_at(arg("b"), dir, arg("a")),
                    dir.rename_at(arg("a"), dir, arg("b")),
                    dir.rename_at(&parked, dir, arg("a")),
                ];
                if moved.iter().all(Result::is_ok) {
                    rounds += 1;
                }
            }
            return Ok(format!("swapped {rounds} times"));
        }
        other => return Ok(format!("no op `{other}`")),
    }
    Ok("ok".into())
}

/// When a looping op stops: `ms` milliseconds from now.
fn deadline(input: &serde_json::Value) -> std::time::Instant {
    let ms = input["ms"].as_u64().unwrap_or(100);
    std::time::Instant::now() + std::time::Duration::from_millis(ms)
}

export!(Escape);
