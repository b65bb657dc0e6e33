//! The seal on a grant a session file records, so that `--resume` applies
//! only grants the user gave. A session file lives in the workspace, and a
//! repository can ship one (`.toolhost/sessions/`), grants and all: a
//! grant is applied only when its seal is an HMAC-SHA256, under a key in
//! the user's config directory (mode 0600, made on first use), of the
//! session's id and the grant. A file without the key's seal is a record,
//! not a grant.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read as _, Write as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;

use hmac::{KeyInit as _, Mac as _};

use crate::sandbox::Permit;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

pub use crate::config::user::GRANT_KEY_FILE;

/// Bytes of a key.
const KEY_LEN: usize = 32;

/// The user's key for sealing grants.
pub struct GrantSeal {
    key: [u8; KEY_LEN],
}

impl std::fmt::Debug for GrantSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrantSeal").finish_non_exhaustive()
    }
}

impl GrantSeal {
    /// The key in `dir`'s [`GRANT_KEY_FILE`], made (random, 0600) when
    /// there is none. Why not, for a notice: without a key, grants given
    /// in a session are recorded but not applied again on `--resume`.
    pub fn open_or_create(dir: &Path) -> Result<GrantSeal, String> {
        match Self::open(dir)? {
            Some(seal) => Ok(seal),
            None => Self::create(&dir.join(GRANT_KEY_FILE)),
        }
    }

    /// The key in `dir`, if one was made: a user who never gave a grant
    /// for a session has none, and no grant is theirs.
    pub fn open(dir: &Path) -> Result<Option<GrantSeal>, String> {
        let path = dir.join(GRANT_KEY_FILE);
        let shown = |e: &dyn std::fmt::Display| format!("`{}`: {e}", path.display());
        let mut file = match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(shown(&e)),
        };
        let meta = file.metadata().map_err(|e| shown(&e))?;
        if !meta.is_file() || meta.mode() & 0o077 != 0 {
            return Err(format!(
                "`{}` is not a file only you can read (run `chmod 600 {}`, or delete it and \
                 toolhost makes a new one)",
                path.display(),
                path.display()
            ));
        }
        let mut key = [0u8; KEY_LEN];
        file.read_exact(&mut key).map_err(|e| shown(&e))?;
        Ok(Some(GrantSeal { key }))
    }

    fn create(path: &Path) -> Result<GrantSeal, String> {
        let shown = |e: &dyn std::fmt::Display| format!("`{}`: {e}", path.display());
        let mut key = [0u8; KEY_LEN];
        getrandom::fill(&mut key).map_err(|e| shown(&e))?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| shown(&e))?;
        }
        let made = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path);
        match made {
            Ok(mut file) => {
                file.write_all(&key).map_err(|e| shown(&e))?;
                file.sync_all().map_err(|e| shown(&e))?;
                Ok(GrantSeal { key })
            }
            // Another toolhost made it first: use theirs.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                Self::open(path.parent().unwrap_or(Path::new(".")))?
                    .ok_or_else(|| shown(&"made and gone again"))
            }
            Err(e) => Err(shown(&e)),
        }
    }

    /// A key that is not the user's, for tests.
    #[cfg(test)]
    pub(crate) fn of_bytes(key: [u8; KEY_LEN]) -> GrantSeal {
        GrantSeal { key }
    }

    fn mac(&self, (workspace, session): (&str, &str), permit: &Permit) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes any key length");
        // Each part with its length first: no two grants read the same.
        for part in [
            "toolhost grant 2",
            workspace,
            session,
            &permit.tool,
            &format!("{:?}", permit.kind),
            &permit.target,
        ] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part.as_bytes());
        }
        mac
    }

    /// The seal of `permit` in the session `session` of the workspace
    /// `workspace` (as the session records it), as hex. The workspace is
    /// in it: a session file copied into another workspace grants nothing
    /// there.
    pub fn seal(&self, at: (&str, &str), permit: &Permit) -> String {
        hex::encode(self.mac(at, permit).finalize().into_bytes())
    }

    /// Whether `seal` is this key's seal of `permit` in the session and
    /// workspace `at` (compared in constant time).
    pub fn verify(&self, at: (&str, &str), permit: &Permit, seal: &str) -> bool {
        let Ok(bytes) = hex::decode(seal) else {
            return false;
        };
        self.mac(at, permit).verify_slice(&bytes).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::PermitKind;

    fn permit(target: &str) -> Permit {
        Permit {
            tool: "bash".into(),
            kind: PermitKind::Write,
            target: target.into(),
        }
    }

    #[test]
    fn a_seal_holds_for_its_session_and_grant_only() {
        let seal = GrantSeal::of_bytes([7; KEY_LEN]);
        let at = ("/ws", "s1");
        let sealed = seal.seal(at, &permit("/ws/src"));
        assert!(seal.verify(at, &permit("/ws/src"), &sealed));
        assert!(!seal.verify(("/ws", "s2"), &permit("/ws/src"), &sealed));
        assert!(!seal.verify(("/other", "s1"), &permit("/ws/src"), &sealed));
        assert!(!seal.verify(at, &permit("/ws"), &sealed));
        assert!(!GrantSeal::of_bytes([8; KEY_LEN]).verify(at, &permit("/ws/src"), &sealed));
        assert!(!seal.verify(at, &permit("/ws/src"), "zz"));
        assert!(!seal.verify(at, &permit("/ws/src"), ""));
    }

    #[test]
    fn the_key_is_made_once_private_and_refused_when_others_can_read_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = GrantSeal::open_or_create(dir.path()).expect("made");
        let again = GrantSeal::open_or_create(dir.path()).expect("read");
        assert_eq!(first.key, again.key);
        let path = dir.path().join(GRANT_KEY_FILE);
        let mode = std::fs::metadata(&path).expect("meta").mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .expect("chmod");
        let refused = GrantSeal::open_or_create(dir.path()).expect_err("exposed");
        assert!(refused.contains("chmod 600"), "{refused}");
    }
}
