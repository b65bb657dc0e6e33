//! One native command at a time in a tool's writable directories, across
//! calls and processes: the survey before a command takes what exists for
//! the user's own, so a protected path another command is making meanwhile
//! must not be there to be taken. Each writable grant's directory is locked
//! (`flock`, which two opens in one process contend for as two processes
//! do), in path order, until the command's leftovers are removed.

use std::os::fd::OwnedFd;
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
    /// Each writable directory of `dirs` locked, waiting while another
    /// command holds one, until the call's deadline or its stop.
    pub(crate) fn of(dirs: &[Grant], bounds: &Bounds) -> Result<Exclusive, String> {
        let mut writable: Vec<&Grant> = dirs.iter().filter(|g| g.access == Access::Write).collect();
        writable.sort_by(|a, b| a.host_path.cmp(&b.host_path));
        let mut held = Vec::new();
        for grant in writable {
            let fd = rustix::fs::open(
                &grant.host_path,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| format!("cannot open {}: {e}", grant.host_path.display()))?;
            loop {
                match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
                    Ok(()) => break,
                    Err(rustix::io::Errno::WOULDBLOCK) => {
                        if Instant::now() >= bounds.deadline || bounds.stop.load(Ordering::Relaxed)
                        {
                            return Err(format!(
                                "another native command is running in {} and did not end \
                                 before this call's deadline",
                                grant.host_path.display()
                            ));
                        }
                        std::thread::sleep(RETRY);
                    }
                    Err(e) => {
                        return Err(format!("cannot lock {}: {e}", grant.host_path.display()));
                    }
                }
            }
            held.push(fd);
        }
        Ok(Exclusive { _held: held })
    }
}
