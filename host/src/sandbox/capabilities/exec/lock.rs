//! One native command at a time in a tool's writable directories, across
//! calls and processes: the survey before a command takes what exists for
//! the user's own, so a protected path another command is making meanwhile
//! must not be there to be taken. Each writable grant's directory is locked
//! exclusively (`flock`, which two opens in one process contend for as two
//! processes do), and each directory above it shared, up to the workspace
//! (or, outside it, up to `/`): grants that overlap (`.` in one session,
//! `src` in another) contend too. Locks are taken in path order, so two
//! commands never wait for each other.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, Mode, OFlags};

use super::run::Bounds;
use crate::sandbox::capabilities::grants::{Access, Grant};

/// How often a held lock is tried again.
const RETRY: Duration = Duration::from_millis(20);

/// The locks of one command; released when dropped.
pub(crate) struct Exclusive {
    _held: Vec<OwnedFd>,
}

impl Exclusive {
    /// Each writable directory of `dirs` locked, and those above it
    /// shared, waiting while another command holds one, until the call's
    /// deadline or its stop.
    pub(crate) fn of(
        dirs: &[Grant],
        workspace: &Path,
        bounds: &Bounds,
    ) -> Result<Exclusive, String> {
        let mut locks: BTreeMap<PathBuf, bool> = BTreeMap::new();
        for grant in dirs.iter().filter(|g| g.access == Access::Write) {
            let top = if grant.host_path.starts_with(workspace) {
                workspace
            } else {
                Path::new("/")
            };
            for above in grant.host_path.ancestors().skip(1) {
                if !above.starts_with(top) || above == Path::new("/") {
                    break;
                }
                locks.entry(above.to_path_buf()).or_insert(false);
            }
            locks.insert(grant.host_path.clone(), true);
        }
        let mut held = Vec::new();
        for (path, exclusive) in locks {
            let fd = rustix::fs::open(
                &path,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            let operation = if exclusive {
                FlockOperation::NonBlockingLockExclusive
            } else {
                FlockOperation::NonBlockingLockShared
            };
            loop {
                match rustix::fs::flock(&fd, operation) {
                    Ok(()) => break,
                    Err(rustix::io::Errno::WOULDBLOCK) => {
                        if Instant::now() >= bounds.deadline || bounds.stop.load(Ordering::Relaxed)
                        {
                            return Err(format!(
                                "another native command is running in {} and did not end \
                                 before this call's deadline",
                                path.display()
                            ));
                        }
                        std::thread::sleep(RETRY);
                    }
                    Err(e) => {
                        return Err(format!("cannot lock {}: {e}", path.display()));
                    }
                }
            }
            held.push(fd);
        }
        Ok(Exclusive { _held: held })
    }
}
