//! The bearer token `toolhost mcp --http` requires: any local user can
//! connect to a loopback port, so the port alone proves nothing. The
//! token lives in a file only its owner can read (mode 0600), made on
//! first use from the operating system's random source; a file other
//! users can read or write is refused, since they could then call the
//! tools.
//!
//! Reads and writes the token file only; `http.rs` checks requests.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read as _, Write as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// The shortest token accepted from a file: 32 characters. A generated
/// one is 64 hex digits (256 bits).
pub const MIN_TOKEN_LEN: usize = 32;

/// Who may call the tools over HTTP.
#[derive(Debug)]
pub enum HttpAuth {
    /// Requests must carry `Authorization: Bearer` with this token.
    Token(Token),
    /// Anyone who can reach the port (`--http-no-auth`).
    Off,
}

/// A token and the file it came from.
pub struct Token {
    secret: String,
    file: PathBuf,
    created: bool,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

/// Why there is no token to serve with.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot read the token file `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot create the token file `{}`: {source}; pass --http-token-file FILE with a file \
         you can write",
        path.display()
    )]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the token file `{}` can be read or written by other users (mode {mode:03o}), who could \
         then call the tools; run `chmod 600 {}`",
        path.display(),
        path.display()
    )]
    Exposed { path: PathBuf, mode: u32 },
    #[error(
        "the token in `{}` is {len} characters, too short to guess-proof; put one of at least \
         {MIN_TOKEN_LEN} in it, or delete the file and toolhost makes one",
        path.display()
    )]
    TooShort { path: PathBuf, len: usize },
    #[error("cannot get random bytes from the operating system for a token: {0}")]
    Random(getrandom::Error),
}

impl Token {
    /// The token in `file`; when there is none, a new random one is
    /// written there (mode 0600, its missing directories 0700).
    pub fn load_or_create(file: &Path) -> Result<Token, TokenError> {
        match File::open(file) {
            Ok(opened) => return read(opened, file),
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(source) => {
                return Err(TokenError::Read {
                    path: file.to_owned(),
                    source,
                });
            }
        }
        let secret = generate()?;
        let create = |source| TokenError::Create {
            path: file.to_owned(),
            source,
        };
        if let Some(dir) = file.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            crate::workspace::create_private_dir(dir).map_err(create)?;
        }
        let mut new = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(file)
        {
            Ok(new) => new,
            // Another server made it first: use theirs.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                return Token::load_or_create(file);
            }
            Err(e) => return Err(create(e)),
        };
        new.write_all(format!("{secret}\n").as_bytes())
            .and_then(|()| new.sync_all())
            .map_err(create)?;
        Ok(Token {
            secret,
            file: file.to_owned(),
            created: true,
        })
    }

    /// The token itself, for the line that tells the user.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    pub fn file(&self) -> &Path {
        &self.file
    }

    /// This start made the file.
    pub fn created(&self) -> bool {
        self.created
    }

    /// What requests are checked against.
    pub(super) fn digest(&self) -> [u8; 32] {
        digest(self.secret.as_bytes())
    }
}

/// Reads a token file, refusing one that other users can read or write
/// (checked on the open file, so a swap between check and read is moot).
fn read(mut opened: File, path: &Path) -> Result<Token, TokenError> {
    let failed = |source| TokenError::Read {
        path: path.to_owned(),
        source,
    };
    let mode = opened.metadata().map_err(failed)?.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(TokenError::Exposed {
            path: path.to_owned(),
            mode,
        });
    }
    let mut text = String::new();
    // A token file is one line; more is not a token file.
    (&mut opened)
        .take(4096)
        .read_to_string(&mut text)
        .map_err(failed)?;
    let secret = text.trim().to_owned();
    if secret.len() < MIN_TOKEN_LEN {
        return Err(TokenError::TooShort {
            path: path.to_owned(),
            len: secret.len(),
        });
    }
    Ok(Token {
        secret,
        file: path.to_owned(),
        created: false,
    })
}

/// 32 random bytes from the operating system, as 64 hex digits.
fn generate() -> Result<String, TokenError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(TokenError::Random)?;
    Ok(hex::encode(bytes))
}

pub(super) fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Compares two digests in time that does not depend on where they differ.
pub(super) fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_token_is_made_once_private_and_read_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("config/toolhost/mcp-token");
        let made = Token::load_or_create(&file).expect("made");
        assert!(made.created());
        assert_eq!(made.secret().len(), 64);
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().expect("dir")), 0o700);
        let again = Token::load_or_create(&file).expect("read");
        assert!(!again.created());
        assert_eq!(again.secret(), made.secret());
        assert!(same(&again.digest(), &made.digest()));
        let other = Token::load_or_create(&dir.path().join("other")).expect("made");
        assert_ne!(other.secret(), made.secret());
        assert!(!same(&other.digest(), &made.digest()));
    }

    #[test]
    fn a_file_others_can_read_or_a_short_token_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("token");
        std::fs::write(&file, format!("{}\n", "t".repeat(40))).expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let refused = Token::load_or_create(&file).expect_err("world-readable");
        assert_eq!(
            refused.to_string(),
            format!(
                "the token file `{0}` can be read or written by other users (mode 644), who \
                 could then call the tools; run `chmod 600 {0}`",
                file.display()
            )
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        assert_eq!(
            Token::load_or_create(&file).expect("private").secret(),
            "t".repeat(40)
        );
        std::fs::write(&file, "short\n").expect("write");
        assert!(matches!(
            Token::load_or_create(&file),
            Err(TokenError::TooShort { len: 5, .. })
        ));
    }
}
