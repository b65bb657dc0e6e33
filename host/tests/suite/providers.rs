//! Recorded provider streams: every `*.sse` in `tests/fixtures/providers/`
//! must assemble into its `*.expected.json` (see that folder's README for the
//! sources and the mapping rules), whether the body arrives whole or cut into
//! small chunks the way a network delivers it.

use std::convert::Infallible;
use std::fs;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde_json::Value;
use toolhost::provider::anthropic::Anthropic;
use toolhost::provider::client::assemble as assemble_as;
use toolhost::provider::http::DEFAULT_CONTENT_TIMEOUT as CONTENT;
use toolhost::provider::openai::OpenAi;
use toolhost::provider::{AssistantMessage, DEFAULT_MAX_REPLY_BYTES};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/providers");

/// Fewer fixtures than this means the folder was not copied whole.
const MIN_FIXTURES: usize = 15;

/// Chunk sizes each body is fed in: whole, byte by byte (cuts every UTF-8
/// character and CRLF), and an odd size that cuts lines at varying places.
const CHUNK_SIZES: [usize; 3] = [usize::MAX, 1, 7];

fn streams() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(FIXTURES)
        .expect("read the fixtures folder")
        .map(|entry| entry.expect("fixture entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sse"))
        .collect();
    found.sort();
    found
}

fn expected_path(stream: &Path) -> PathBuf {
    stream.with_extension("expected.json")
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned()
}

async fn assemble(name: &str, body: &[u8], chunk_size: usize) -> AssistantMessage {
    let chunks: Vec<Result<Bytes, Infallible>> = body
        .chunks(chunk_size.min(body.len()).max(1))
        .map(|chunk| Ok(Bytes::copy_from_slice(chunk)))
        .collect();
    let body = futures_util::stream::iter(chunks);
    let assembled = if name.starts_with("anthropic-") {
        assemble_as::<Anthropic, _, _, _>(body, None, DEFAULT_MAX_REPLY_BYTES, CONTENT).await
    } else {
        assemble_as::<OpenAi, _, _, _>(body, None, DEFAULT_MAX_REPLY_BYTES, CONTENT).await
    };
    assembled.unwrap_or_else(|err| panic!("{name}: {err}"))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("serialise")
}

#[tokio::test]
async fn every_recorded_stream_assembles_to_its_expected_message() {
    let mut failures = Vec::new();
    for stream in streams() {
        let name = name_of(&stream);
        let body = fs::read(&stream).expect("read stream");
        let expected: Value = serde_json::from_slice(
            &fs::read(expected_path(&stream)).expect("read expected message"),
        )
        .unwrap_or_else(|err| panic!("{name}: expected.json is not JSON: {err}"));
        for chunk_size in CHUNK_SIZES {
            let actual = assemble(&name, &body, chunk_size).await.to_fixture_json();
            if actual != expected {
                let (expected, actual) = (pretty(&expected), pretty(&actual));
                let diff = pretty_assertions::StrComparison::new(&expected, &actual);
                let chunks = if chunk_size == usize::MAX {
                    "whole".to_owned()
                } else {
                    format!("in chunks of {chunk_size} bytes")
                };
                failures.push(format!(
                    "{name} ({chunks})\n--- expected\n{expected}\n--- actual\n{actual}\n--- diff\n{diff}"
                ));
                // One report per fixture is enough.
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) did not match:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_fixture_folder_is_complete() {
    let streams = streams();
    assert!(
        streams.len() >= MIN_FIXTURES,
        "only {} `*.sse` fixtures in {FIXTURES}, expected at least {MIN_FIXTURES}",
        streams.len()
    );
    for stream in &streams {
        assert!(
            expected_path(stream).is_file(),
            "{} has no `.expected.json`",
            name_of(stream)
        );
    }
    // And no expected message without its stream, which would go untested.
    for entry in fs::read_dir(FIXTURES).expect("read the fixtures folder") {
        let path = entry.expect("fixture entry").path();
        let name = name_of(&path);
        if let Some(stem) = name.strip_suffix(".expected.json") {
            assert!(
                path.with_file_name(format!("{stem}.sse")).is_file(),
                "{name} has no `.sse` stream"
            );
        }
    }
    assert!(
        Path::new(FIXTURES).join("README.md").is_file(),
        "the fixtures' README (sources and licences) is missing"
    );
}
