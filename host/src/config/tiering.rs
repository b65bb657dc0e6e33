//! How plugins are compiled, from the user's own environment
//! (`$TOOLHOST_BASELINE_MIN_BYTES`, `$TOOLHOST_BACKGROUND_COMPILE`).

use super::environment::Environment;
use super::error::ConfigError;
use crate::sandbox::Tiering;

/// The tiering the environment asks for; an error naming a variable that
/// says something else than it may.
pub(super) fn tiering(env: &Environment) -> Result<Tiering, ConfigError> {
    Ok(Tiering {
        baseline_min_bytes: baseline_min_bytes(env.baseline_min_bytes.clone())?,
        optimize_in_background: true,
        compile_after_exit: compile_after_exit(env.background_compile.clone())?,
        spares_after: Some(Tiering::SPARES_AFTER),
    })
}

/// From `$TOOLHOST_BASELINE_MIN_BYTES` (the user's own setting): how big a
/// new plugin must be to run baseline code first.
fn baseline_min_bytes(value: Option<String>) -> Result<Option<u64>, ConfigError> {
    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(Some(crate::sandbox::DEFAULT_BASELINE_MIN_BYTES));
    };
    let trimmed = value.trim();
    if trimmed.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    trimmed
        .parse()
        .map(Some)
        .map_err(|_| ConfigError::BaselineMinBytes { value })
}

/// From `$TOOLHOST_BACKGROUND_COMPILE` (`on`, the default, or `off`):
/// whether a command leaves its unfinished optimized compiles to a
/// background process.
fn compile_after_exit(value: Option<String>) -> Result<bool, ConfigError> {
    let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(true);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(ConfigError::BackgroundCompile { value }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baseline_threshold_is_a_number_or_off() {
        let read = |v: Option<&str>| baseline_min_bytes(v.map(str::to_string));
        assert_eq!(
            read(None).expect("test setup"),
            Some(crate::sandbox::DEFAULT_BASELINE_MIN_BYTES)
        );
        assert_eq!(
            read(Some("")).expect("test setup"),
            Some(crate::sandbox::DEFAULT_BASELINE_MIN_BYTES)
        );
        assert_eq!(read(Some("0")).expect("test setup"), Some(0));
        assert_eq!(read(Some(" 1048576 ")).expect("test setup"), Some(1 << 20));
        assert_eq!(read(Some("OFF")).expect("test setup"), None);
        let error = read(Some("4MB")).expect_err("an error").to_string();
        assert!(
            error.contains("`4MB`") && error.contains("`off`"),
            "{error}"
        );
    }

    #[test]
    fn the_background_compile_is_on_or_off() {
        let read = |v: Option<&str>| compile_after_exit(v.map(str::to_string));
        assert!(read(None).expect("test setup"));
        assert!(read(Some(" ")).expect("test setup"));
        assert!(read(Some("On")).expect("test setup"));
        assert!(!read(Some("off")).expect("test setup"));
        let error = read(Some("0")).expect_err("an error").to_string();
        assert!(
            error.contains("`TOOLHOST_BACKGROUND_COMPILE` is `0`") && error.contains("`off`"),
            "{error}"
        );
    }
}
