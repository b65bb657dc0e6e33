//! The walls on Linux: namespaces, a root of the system's directories and
//! the grants, read-only binds over protected paths, Landlock, seccomp,
//! no capabilities, rlimits; then the program.
//!
//! Three processes: the helper (outside the new PID namespace: it waits,
//! and kills the namespace at the deadline), init (PID 1 inside: builds the
//! root, starts the program, reaps), and the program. The helper is
//! single-threaded (a user namespace can only be entered so); everything
//! between its forks may allocate for the same reason.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::super::plan::{HOME, Plan, WallLimits};
use super::refused::{Refused, fail};

/// The system's directories a program needs to run, read-only.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
];

/// Of `/etc`, what programs read to run (the loader's cache, names of
/// users and groups, time zone, TLS roots), read-only; nothing else.
const SYSTEM_ETC: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/ssl",
    "/etc/ca-certificates",
];

/// The kernel's least `pid_max`.
const PID_MAX_MIN: u32 = 301;

/// The devices a program may use.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

fn check(rc: libc::c_long, what: impl FnOnce() -> String) -> Result<libc::c_long, Refused> {
    if rc < 0 {
        let error = std::io::Error::last_os_error();
        return Err(Refused(format!("{}: {error}", what())));
    }
    Ok(rc)
}

fn cstr(bytes: &[u8]) -> Result<CString, Refused> {
    CString::new(bytes).map_err(|_| Refused("a path or argument holds a NUL byte".into()))
}

fn cpath(path: &Path) -> Result<CString, Refused> {
    cstr(path.as_os_str().as_bytes())
}

/// Builds the walls of `plan` and runs its program in them; returns the
/// helper's exit code (the program's, or 128 and its signal).
pub(super) fn run(plan: &Plan) -> Result<i32, Refused> {
    let uid = unsafe { libc::getuid() };
    let gid = unsafe { libc::getgid() };
    // The host's end of the control pipe (its stdin): readable or closed
    // when the command is to stop.
    let control = check(
        unsafe { libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3) }.into(),
        || "dup the control pipe".into(),
    )? as RawFd;
    stdin_from(&plan.stdin)?;
    let flags = libc::CLONE_NEWUSER
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWNET
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS;
    check(unsafe { libc::unshare(flags) }.into(), || {
        "cannot make the namespaces (this system does not let an unprivileged user make user \
         namespaces)"
            .into()
    })?;
    write_file("/proc/self/setgroups", "deny")?;
    write_file("/proc/self/uid_map", &format!("0 {uid} 1"))?;
    write_file("/proc/self/gid_map", &format!("0 {gid} 1"))?;
    mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )?;

    // Every source held before anything is mounted over its path, opened
    // in the new mount namespace (a bind's source must be one of its
    // mounts); a grant's last name is not followed.
    let system: Vec<Source> = SYSTEM_DIRS
        .iter()
        .chain(SYSTEM_ETC)
        .map(Path::new)
        .filter(|path| path.symlink_metadata().is_ok())
        .map(Source::system)
        .collect::<Result<_, _>>()?;
    let devices: Vec<Source> = DEVICES
        .iter()
        .map(Path::new)
        .filter(|path| path.exists())
        .map(|path| Source::open(path, true))
        .collect::<Result<_, _>>()?;
    let mut binds: Vec<(Source, bool)> = plan
        .binds
        .iter()
        .map(|bind| Ok((Source::open(&bind.path, false)?, bind.writable)))
        .collect::<Result<_, Refused>>()?;
    // Outer first, so a bind inside another lands on it.
    binds.sort_by_key(|(source, _)| source.path.components().count());

    // Open in the helper until it exits: init learns from it whether the
    // helper died before init's parent-death signal was set.
    let mut alive = [0; 2];
    check(
        unsafe { libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) }.into(),
        || "pipe".into(),
    )?;
    let init = check(unsafe { libc::fork() }.into(), || "fork".into())? as libc::pid_t;
    if init == 0 {
        unsafe { libc::close(alive[1]) };
        let code = match run_init(plan, alive[0], &system, &devices, &binds) {
            Ok(code) => code,
            Err(refused) => fail(&refused),
        };
        unsafe { libc::_exit(code) };
    }
    Ok(wait_or_kill(
        init,
        control,
        Duration::from_millis(plan.timeout_ms),
    ))
}

/// The program's standard input: a memory file holding `bytes`.
fn stdin_from(bytes: &[u8]) -> Result<(), Refused> {
    let name = cstr(b"stdin")?;
    let fd = check(
        unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) }.into(),
        || "memfd_create".into(),
    )? as RawFd;
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    std::io::Write::write_all(&mut &file, bytes)
        .map_err(|e| Refused(format!("cannot hold the standard input: {e}")))?;
    check(unsafe { libc::lseek(fd, 0, libc::SEEK_SET) }, || {
        "lseek".into()
    })?;
    check(unsafe { libc::dup2(fd, 0) }.into(), || "dup2".into())?;
    Ok(())
}

/// Waits for init; at the deadline, or when the host closes the control
/// pipe, kills it, which kills every process in its namespace: the kernel
/// ends them all before init can be reaped, so when this returns none is
/// left. The exit code bash would give: the program's, 128 and its
/// signal, 124 when stopped.
fn wait_or_kill(init: libc::pid_t, control: RawFd, timeout: Duration) -> i32 {
    let started = Instant::now();
    // Woken the moment init ends (a pidfd is readable then); without one
    // (a kernel before 5.3), every 5 ms.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, init, 0) } as RawFd;
    let mut status = 0;
    loop {
        let rc = unsafe { libc::waitpid(init, &mut status, libc::WNOHANG) };
        if rc == init {
            break;
        }
        let left = timeout.saturating_sub(started.elapsed());
        if rc < 0 || left.is_zero() {
            unsafe { libc::kill(init, libc::SIGKILL) };
            unsafe { libc::waitpid(init, &mut status, 0) };
            return 124;
        }
        let mut polls = [
            libc::pollfd {
                fd: control,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // Without a pidfd (a kernel before 5.3), init is looked at every
        // 5 ms.
        let (count, wait) = if pidfd >= 0 {
            (
                2,
                i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1),
            )
        } else {
            (1, 5)
        };
        unsafe { libc::poll(polls.as_mut_ptr(), count, wait) };
        if polls[0].revents != 0 {
            unsafe { libc::kill(init, libc::SIGKILL) };
            unsafe { libc::waitpid(init, &mut status, 0) };
            return 124;
        }
    }
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}

/// A bind's source, held open so that what is bound is what was checked,
/// whatever is mounted over its path later.
struct Source {
    path: PathBuf,
    fd: OwnedFd,
    file: bool,
    /// A link of the system's (`/bin -> usr/bin` on a merged `/usr`),
    /// made again as a link.
    link: Option<PathBuf>,
}

impl Source {
    fn system(path: &Path) -> Result<Source, Refused> {
        match std::fs::read_link(path) {
            Ok(target) => {
                let mut source = Source::open(path, true)?;
                source.link = Some(target);
                Ok(source)
            }
            Err(_) => Source::open(path, true),
        }
    }

    /// `path` held; its last name followed only for the system's files
    /// (`/etc/localtime`), never for a grant.
    fn open(path: &Path, follow: bool) -> Result<Source, Refused> {
        let c = cpath(path)?;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        let fd = check(
            unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | nofollow) }.into(),
            || format!("cannot open {}", path.display()),
        )? as RawFd;
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        check(
            unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) }.into(),
            || format!("cannot stat {}", path.display()),
        )?;
        if stat.st_mode & libc::S_IFMT == libc::S_IFLNK {
            return Err(Refused(format!(
                "{} is a symbolic link; grant where it leads instead",
                path.display()
            )));
        }
        Ok(Source {
            path: path.to_path_buf(),
            fd,
            file: stat.st_mode & libc::S_IFMT != libc::S_IFDIR,
            link: None,
        })
    }
}

fn fd_path(fd: RawFd) -> Result<CString, Refused> {
    cstr(format!("/proc/self/fd/{fd}").as_bytes())
}

fn mount(
    source: Option<&CString>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), Refused> {
    let target_c = cpath(target)?;
    mount_c(source, &target_c, fstype, flags, data)
        .map_err(|e| Refused(format!("cannot mount on {}: {}", target.display(), e.0)))
}

fn mount_c(
    source: Option<&CString>,
    target: &CString,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), Refused> {
    let fstype = fstype.map(|f| cstr(f.as_bytes())).transpose()?;
    let data = data.map(|d| cstr(d.as_bytes())).transpose()?;
    let rc = unsafe {
        libc::mount(
            source.map_or(std::ptr::null(), |s| s.as_ptr()),
            target.as_ptr(),
            fstype.as_ref().map_or(std::ptr::null(), |f| f.as_ptr()),
            flags,
            data.as_ref()
                .map_or(std::ptr::null(), |d| d.as_ptr().cast::<libc::c_void>()),
        )
    };
    check(rc.into(), || "mount".into()).map(drop)
}

/// Remounts the bind at `target` (a `/proc/self/fd` path) `nosuid` and
/// `nodev`, and read-only unless `writable`, keeping the flags the kernel
/// locked on it (`noexec`, `ro`, the atime ones: changing one fails in a
/// user namespace).
fn restrict(target: &CString, writable: bool) -> Result<(), Refused> {
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    check(
        unsafe { libc::statvfs(target.as_ptr(), &mut st) }.into(),
        || "statvfs".into(),
    )?;
    let mut flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_NOSUID | libc::MS_NODEV;
    if !writable || st.f_flag & libc::ST_RDONLY != 0 {
        flags |= libc::MS_RDONLY;
    }
    for (kept, flag) in [
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if st.f_flag & kept != 0 {
            flags |= flag;
        }
    }
    mount_c(None, target, None, flags, None)
}

/// Opens `path` below the new `root` without following any link on the
/// way or at its end, making what is missing inside the root's own tmpfs
/// when `make` says what: what is mounted on is then what was named,
/// whatever links a granted directory holds.
fn target(root: &OwnedFd, path: &Path, make: Option<bool>) -> Result<OwnedFd, Refused> {
    let relative = path.strip_prefix("/").unwrap_or(path);
    let mut dir = root.try_clone().map_err(|e| Refused(format!("dup: {e}")))?;
    let names: Vec<&OsStr> = relative.iter().collect();
    for (at, name) in names.iter().enumerate() {
        let last = at + 1 == names.len();
        let c = cstr(name.as_bytes())?;
        let opened = open_beneath(&dir, &c);
        let next = match (opened, make) {
            (Ok(fd), _) => fd,
            (Err(e), Some(file)) if e.raw_os_error() == Some(libc::ENOENT) => {
                if last && file {
                    let fd = unsafe {
                        libc::openat(
                            dir.as_raw_fd(),
                            c.as_ptr(),
                            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
                            0o644,
                        )
                    };
                    check(fd.into(), || format!("cannot make {}", path.display()))?;
                    unsafe { libc::close(fd) };
                } else {
                    check(
                        unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o755) }.into(),
                        || format!("cannot make {}", path.display()),
                    )?;
                }
                open_beneath(&dir, &c)
                    .map_err(|e| Refused(format!("cannot open {}: {e}", path.display())))?
            }
            (Err(e), _) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(Refused(format!(
                    "{} is reached through a symbolic link, which the walls do not follow",
                    path.display()
                )));
            }
            (Err(e), _) => return Err(Refused(format!("cannot open {}: {e}", path.display()))),
        };
        dir = next;
    }
    Ok(dir)
}

/// One name below `dir`, as an `O_PATH` descriptor, no link followed.
fn open_beneath(dir: &OwnedFd, name: &CString) -> std::io::Result<OwnedFd> {
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if stat.st_mode & libc::S_IFMT == libc::S_IFLNK {
        return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
    }
    Ok(fd)
}

/// Binds `source` at `path` below the root (made there when missing, a
/// file when `file`), read-only unless `writable`, and never `suid` or
/// with devices.
fn bind(source: &Source, root: &OwnedFd, path: &Path, writable: bool) -> Result<(), Refused> {
    let at = target(root, path, Some(source.file))?;
    let from = fd_path(source.fd.as_raw_fd())?;
    mount_c(
        Some(&from),
        &fd_path(at.as_raw_fd())?,
        None,
        libc::MS_BIND | libc::MS_REC,
        None,
    )?;
    // `at` still names what is under the new mount: open the path again,
    // through it.
    let at = target(root, path, None)?;
    restrict(&fd_path(at.as_raw_fd())?, writable)
}

fn write_file(path: &str, text: &str) -> Result<(), Refused> {
    std::fs::write(path, text).map_err(|e| Refused(format!("cannot write {path}: {e}")))
}

/// PID 1 of the new namespace: builds the root, starts the program, reaps.
fn run_init(
    plan: &Plan,
    helper_alive: RawFd,
    system: &[Source],
    devices: &[Source],
    binds: &[(Source, bool)],
) -> Result<i32, Refused> {
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let mut poll = libc::pollfd {
        fd: helper_alive,
        events: libc::POLLIN,
        revents: 0,
    };
    if unsafe { libc::poll(&mut poll, 1, 0) } != 0 {
        // The helper is already gone (the host killed it): so is this.
        return Ok(124);
    }
    unsafe { libc::close(helper_alive) };
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0) };
    let root = build_root(plan, system, devices, binds)?;
    enter(&root)?;
    limit_namespace(plan)?;
    let program = check(unsafe { libc::fork() }.into(), || "fork".into())? as libc::pid_t;
    if program == 0 {
        let refused = run_program(plan).unwrap_err();
        fail(&refused);
        unsafe { libc::_exit(126) };
    }
    // Reap everything; leave with the program's status.
    loop {
        let mut status = 0;
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == program {
            return Ok(if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            });
        }
        if pid < 0 {
            return Ok(125);
        }
    }
}

/// The new root, a tmpfs over the host's `/tmp` in this private mount
/// namespace (the sources are held descriptors: hiding their paths hides
/// nothing that is bound): the system's directories and devices, a fresh
/// `/proc`, the private `HOME` and `/tmp`, the binds, the protected paths
/// held and the records hidden. Returns where it is.
fn build_root(
    plan: &Plan,
    system: &[Source],
    devices: &[Source],
    binds: &[(Source, bool)],
) -> Result<PathBuf, Refused> {
    // The new root, a tmpfs over the host's /tmp in this private mount
    // namespace (the sources are held descriptors: hiding their paths
    // hides nothing that is bound).
    mount(
        None,
        Path::new("/tmp"),
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some("size=1m,mode=755"),
    )?;
    let root_path = PathBuf::from("/tmp/root");
    std::fs::create_dir(&root_path).map_err(|e| Refused(format!("cannot make the root: {e}")))?;
    mount(
        None,
        &root_path,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some("size=4m,mode=755"),
    )?;
    let root = Source::open(&root_path, false)?.fd;

    for source in system {
        match &source.link {
            Some(link) => {
                let relative = source.path.strip_prefix("/").unwrap_or(&source.path);
                let at = root_path.join(relative);
                at.parent()
                    .map(std::fs::create_dir_all)
                    .transpose()
                    .and_then(|_| std::os::unix::fs::symlink(link, &at))
                    .map_err(|e| Refused(format!("cannot link {}: {e}", source.path.display())))?;
            }
            None => bind(source, &root, &source.path, false)?,
        }
    }
    for device in devices {
        let at = target(&root, &device.path, Some(true))?;
        let target_c = fd_path(at.as_raw_fd())?;
        mount_c(
            Some(&fd_path(device.fd.as_raw_fd())?),
            &target_c,
            None,
            libc::MS_BIND,
            None,
        )?;
    }
    for (name, to) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(to, root_path.join("dev").join(name))
            .map_err(|e| Refused(format!("cannot link /dev/{name}: {e}")))?;
    }
    let proc_dir = target(&root, Path::new("/proc"), Some(false))?;
    mount_c(
        None,
        &fd_path(proc_dir.as_raw_fd())?,
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )?;
    let scratch = |path: &str, mode: &str| -> Result<(), Refused> {
        let at = target(&root, Path::new(path), Some(false))?;
        let options = format!("size={},mode={mode}", plan.limits.scratch);
        mount_c(
            None,
            &fd_path(at.as_raw_fd())?,
            Some("tmpfs"),
            libc::MS_NOSUID | libc::MS_NODEV,
            Some(&options),
        )
    };
    scratch(HOME, "700")?;
    scratch("/tmp", "1777")?;
    scratch("/dev/shm", "1777")?;

    for (source, writable) in binds {
        bind(source, &root, &source.path, *writable)?;
    }
    hold_protected(&root, plan, binds)?;
    hide_records(&root, plan)?;
    Ok(root_path)
}

/// Each protected path bound read-only over itself: a mount point cannot
/// be renamed or removed. The directories between its grant and it are
/// pinned first (a bind onto itself), all of them before any protected
/// path is bound: a pin made after would cover the binds below it.
fn hold_protected(root: &OwnedFd, plan: &Plan, binds: &[(Source, bool)]) -> Result<(), Refused> {
    let mut pins = std::collections::BTreeSet::new();
    for path in &plan.read_only {
        let Some((grant, _)) = binds
            .iter()
            .filter(|(source, _)| path.starts_with(&source.path))
            .max_by_key(|(source, _)| source.path.as_os_str().len())
        else {
            continue;
        };
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| d.starts_with(&grant.path) && *d != grant.path) {
            pins.insert(d.to_path_buf());
            dir = d.parent();
        }
    }
    let mut pins: Vec<PathBuf> = pins.into_iter().collect();
    pins.sort_by_key(|p| p.components().count());
    for pin in &pins {
        let at = target(root, pin, None)?;
        let c = fd_path(at.as_raw_fd())?;
        mount_c(Some(&c), &c, None, libc::MS_BIND, None)?;
    }
    let mut read_only_paths = plan.read_only.clone();
    read_only_paths.sort_by_key(|p| p.components().count());
    for path in &read_only_paths {
        let at = target(root, path, None)?;
        let c = fd_path(at.as_raw_fd())?;
        mount_c(Some(&c), &c, None, libc::MS_BIND | libc::MS_REC, None)?;
        let at = target(root, path, None)?;
        restrict(&fd_path(at.as_raw_fd())?, false)?;
    }
    Ok(())
}

/// toolhost's records in a bind: an empty read-only directory or
/// `/dev/null` mounted over each.
fn hide_records(root: &OwnedFd, plan: &Plan) -> Result<(), Refused> {
    for path in &plan.hidden {
        let Ok(at) = target(root, path, None) else {
            continue;
        };
        let c = fd_path(at.as_raw_fd())?;
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        check(
            unsafe { libc::fstat(at.as_raw_fd(), &mut stat) }.into(),
            || "fstat".into(),
        )?;
        if stat.st_mode & libc::S_IFMT == libc::S_IFDIR {
            mount_c(
                None,
                &c,
                Some("tmpfs"),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_RDONLY,
                Some("size=4k,mode=555"),
            )?;
        } else {
            let null = cstr(b"/dev/null")?;
            mount_c(Some(&null), &c, None, libc::MS_BIND, None)?;
        }
    }
    Ok(())
}

/// Makes `root` the root: `pivot_root`, the old one detached, the new one
/// read-only.
fn enter(root_path: &Path) -> Result<(), Refused> {
    let old = root_path.join(".old");
    std::fs::create_dir(&old).map_err(|e| Refused(format!("cannot make the old root: {e}")))?;
    let (root_c, old_c) = (cpath(root_path)?, cpath(&old)?);
    check(
        unsafe { libc::syscall(libc::SYS_pivot_root, root_c.as_ptr(), old_c.as_ptr()) },
        || "pivot_root".into(),
    )?;
    let slash = cstr(b"/")?;
    check(unsafe { libc::chdir(slash.as_ptr()) }.into(), || {
        "chdir /".into()
    })?;
    let old_inside = cstr(b"/.old")?;
    check(
        unsafe { libc::umount2(old_inside.as_ptr(), libc::MNT_DETACH) }.into(),
        || "detach the old root".into(),
    )?;
    let _ = std::fs::remove_dir("/.old");
    mount(
        None,
        Path::new("/"),
        None,
        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        None,
    )?;
    Ok(())
}

/// The namespace's own bounds: the process cap (per PID namespace since
/// Linux 6.14; `RLIMIT_NPROC` does nothing for the host's root), no user
/// namespace inside, its host name.
fn limit_namespace(plan: &Plan) -> Result<(), Refused> {
    write_file(
        "/proc/sys/kernel/pid_max",
        &plan.limits.processes.max(PID_MAX_MIN).to_string(),
    )?;
    write_file("/proc/sys/user/max_user_namespaces", "0")?;
    let host = cstr(b"sandbox")?;
    unsafe { libc::sethostname(host.as_ptr(), 7) };

    Ok(())
}

/// The program: its limits, no privileges, Landlock and seccomp, then
/// `execve`. Returns only when something refused.
fn run_program(plan: &Plan) -> Result<std::convert::Infallible, Refused> {
    unsafe { libc::setsid() };
    set_limits(&plan.limits)?;
    drop_capabilities()?;
    check(
        unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }.into(),
        || "no_new_privs".into(),
    )?;
    let cwd = cpath(&plan.cwd)?;
    check(unsafe { libc::chdir(cwd.as_ptr()) }.into(), || {
        format!("cannot enter {}", plan.cwd.display())
    })?;
    landlock_rules(plan)?;
    seccomp_filter()?;
    // Every descriptor above stderr closed.
    unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    let argv: Vec<CString> = plan
        .argv
        .iter()
        .map(|arg| cstr(arg.as_bytes()))
        .collect::<Result<_, _>>()?;
    let envp: Vec<CString> = plan
        .env
        .iter()
        .map(|(name, value)| cstr(format!("{name}={value}").as_bytes()))
        .collect::<Result<_, _>>()?;
    let mut argv_p: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_p.push(std::ptr::null());
    let mut envp_p: Vec<*const libc::c_char> = envp.iter().map(|e| e.as_ptr()).collect();
    envp_p.push(std::ptr::null());
    let program = cpath(&plan.program)?;
    unsafe { libc::execve(program.as_ptr(), argv_p.as_ptr(), envp_p.as_ptr()) };
    Err(Refused(format!(
        "cannot run {}: {}",
        plan.program.display(),
        std::io::Error::last_os_error()
    )))
}

fn set_limits(limits: &WallLimits) -> Result<(), Refused> {
    let set = |resource, value: u64, name: &str| {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        check(unsafe { libc::setrlimit(resource, &limit) }.into(), || {
            format!("cannot set {name}")
        })
        .map(drop)
    };
    set(libc::RLIMIT_FSIZE, limits.file_size, "RLIMIT_FSIZE")?;
    set(libc::RLIMIT_DATA, limits.memory, "RLIMIT_DATA")?;
    // Never above the hard limit it was started with (raising it needs a
    // privilege the walls do not keep).
    let mut nofile = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let open_files = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut nofile) } == 0 {
        limits.open_files.min(nofile.rlim_max)
    } else {
        limits.open_files
    };
    set(libc::RLIMIT_NOFILE, open_files, "RLIMIT_NOFILE")?;
    set(libc::RLIMIT_CPU, limits.cpu_seconds.max(1), "RLIMIT_CPU")?;
    set(libc::RLIMIT_CORE, 0, "RLIMIT_CORE")
}

/// The program is uid 0 of its user namespace (the one name the host's
/// user has there), which would hold every capability in it, enough to
/// unmount the read-only binds. Root's privileges are turned off for good
/// (securebits, locked), the bounding and ambient sets emptied, and the
/// current sets cleared, so exec gives it none.
fn drop_capabilities() -> Result<(), Refused> {
    const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
    const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
    const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
    const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
    const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
    let bits = SECBIT_NOROOT
        | SECBIT_NOROOT_LOCKED
        | SECBIT_NO_SETUID_FIXUP
        | SECBIT_NO_SETUID_FIXUP_LOCKED
        | SECBIT_KEEP_CAPS_LOCKED
        | SECBIT_NO_CAP_AMBIENT_RAISE
        | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    check(
        unsafe { libc::prctl(libc::PR_SET_SECUREBITS, bits, 0, 0, 0) }.into(),
        || "securebits".into(),
    )?;
    for cap in 0..=63 {
        // EINVAL past the kernel's last capability.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
    }
    check(
        unsafe {
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            )
        }
        .into(),
        || "ambient capabilities".into(),
    )?;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let none = Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    };
    let data = [none, none];
    check(
        unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) },
        || "capset".into(),
    )
    .map(drop)
}

/// Landlock, the second layer, from the same grants: the system's files
/// readable and runnable, the program's own `HOME`, `/tmp` and devices
/// writable, each grant as granted. (A rule can only add rights below a
/// directory, so protected paths inside a writable grant are kept
/// read-only by the mounts alone.) Abstract Unix sockets and signals
/// outside the walls are out of reach where the kernel has them (ABI 6).
/// Refuses to run where the kernel has no Landlock: never unconfined.
fn landlock_rules(plan: &Plan) -> Result<(), Refused> {
    use landlock::{
        ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetStatus, Scope, path_beneath_rules,
    };
    let abi = ABI::V6;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let readable: Vec<&Path> = [
        "/usr", "/etc", "/proc", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
    ]
    .into_iter()
    .map(Path::new)
    .chain(
        plan.binds
            .iter()
            .filter(|b| !b.writable)
            .map(|b| b.path.as_path()),
    )
    .collect();
    let writable: Vec<&Path> = [HOME, "/tmp", "/dev/shm"]
        .into_iter()
        .chain(DEVICES.iter().copied())
        .map(Path::new)
        .chain(
            plan.binds
                .iter()
                .filter(|b| b.writable)
                .map(|b| b.path.as_path()),
        )
        .collect();
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .and_then(|r| r.scope(Scope::AbstractUnixSocket | Scope::Signal))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(readable, read)))
        .and_then(|r| r.add_rules(path_beneath_rules(writable, all)))
        .and_then(|r| r.restrict_self())
        .map_err(|e| Refused(format!("Landlock: {e}")))?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(Refused(
            "this kernel has no Landlock (Linux 5.13 or later, with `landlock` in the \
             `lsm=` list), which native commands need as their second wall"
                .into(),
        ));
    }
    Ok(())
}

/// Long: the list of denied calls is most of it.
///
/// seccomp, last before exec: what a build never needs fails with EPERM
/// (tracing other processes, mounts, namespaces, keys, BPF, perf events,
/// userfaultfd, kernel modules, clocks, io_uring, handles), sockets only
/// of the Unix, IP and netlink families (a network namespace does not
/// stop VM sockets), and `clone3` answers ENOSYS so libc falls back to
/// `clone`, whose namespace flags the filter can see. seccompiler's
/// architecture check kills a call made through another ABI (i386).
#[cfg(target_arch = "x86_64")]
fn seccomp_filter() -> Result<(), Refused> {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    use std::collections::BTreeMap;
    let denied = [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_settimeofday,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_syslog,
        libc::SYS_iopl,
        libc::SYS_ioperm,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_personality,
    ];
    let cond = |arg, op, value| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
            .map_err(|e| Refused(format!("seccomp: {e}")))
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        denied.iter().map(|&call| (call, Vec::new())).collect();
    let other_family = || -> Result<SeccompRule, Refused> {
        let conditions = [
            libc::AF_UNIX,
            libc::AF_INET,
            libc::AF_INET6,
            libc::AF_NETLINK,
        ]
        .iter()
        .map(|&family| cond(0, SeccompCmpOp::Ne, family as u64))
        .collect::<Result<_, _>>()?;
        SeccompRule::new(conditions).map_err(|e| Refused(format!("seccomp: {e}")))
    };
    rules.insert(libc::SYS_socket, vec![other_family()?]);
    rules.insert(libc::SYS_socketpair, vec![other_family()?]);
    // No setuid or setgid file: one made here is the host user's on the
    // host (root's, when toolhost runs as root), for anyone to run later.
    let setid = |mode_arg: u8, also: Option<(u8, u64)>| -> Result<Vec<SeccompRule>, Refused> {
        [libc::S_ISUID, libc::S_ISGID]
            .iter()
            .map(|&bit| {
                let bit = u64::from(bit);
                let mut conditions = vec![cond(mode_arg, SeccompCmpOp::MaskedEq(bit), bit)?];
                if let Some((arg, flag)) = also {
                    conditions.push(cond(arg, SeccompCmpOp::MaskedEq(flag), flag)?);
                }
                SeccompRule::new(conditions).map_err(|e| Refused(format!("seccomp: {e}")))
            })
            .collect()
    };
    rules.insert(libc::SYS_chmod, setid(1, None)?);
    rules.insert(libc::SYS_fchmod, setid(1, None)?);
    rules.insert(libc::SYS_fchmodat, setid(2, None)?);
    rules.insert(libc::SYS_fchmodat2, setid(2, None)?);
    rules.insert(libc::SYS_mknod, setid(1, None)?);
    rules.insert(libc::SYS_mknodat, setid(2, None)?);
    rules.insert(libc::SYS_creat, setid(1, None)?);
    let created = u64::try_from(libc::O_CREAT).unwrap_or_default();
    let temporary = u64::try_from(libc::O_TMPFILE).unwrap_or_default();
    let mut open = setid(2, Some((1, created)))?;
    open.extend(setid(2, Some((1, temporary)))?);
    rules.insert(libc::SYS_open, open);
    let mut openat = setid(3, Some((2, created)))?;
    openat.extend(setid(3, Some((2, temporary)))?);
    rules.insert(libc::SYS_openat, openat);
    let namespaces = [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ];
    rules.insert(
        libc::SYS_clone,
        namespaces
            .iter()
            .map(|&flag| {
                let flag = flag as u64;
                SeccompRule::new(vec![cond(0, SeccompCmpOp::MaskedEq(flag), flag)?])
                    .map_err(|e| Refused(format!("seccomp: {e}")))
            })
            .collect::<Result<_, _>>()?,
    );
    let compile = |rules, answer: i32| -> Result<BpfProgram, Refused> {
        SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(answer as u32),
            TargetArch::x86_64,
        )
        .and_then(TryInto::try_into)
        .map_err(|e| Refused(format!("seccomp: {e}")))
    };
    let deny = compile(rules, libc::EPERM)?;
    // Their arguments are in structs the filter cannot read (clone3's
    // namespace flags, openat2's mode): they answer ENOSYS, as on an older
    // kernel, and libc falls back to `clone` and `openat`.
    let clone3 = compile(
        [
            (libc::SYS_clone3, Vec::new()),
            (libc::SYS_openat2, Vec::new()),
        ]
        .into_iter()
        .collect(),
        libc::ENOSYS,
    )?;
    // Space reserved without writing is not bounded by the file-size
    // limit: `fallocate` answers "not supported", and libc's
    // `posix_fallocate` writes the bytes instead, within the limit.
    let unsupported = compile(
        [(libc::SYS_fallocate, Vec::new())].into_iter().collect(),
        libc::EOPNOTSUPP,
    )?;
    for filter in [&x32(), &clone3, &unsupported, &deny] {
        seccompiler::apply_filter(filter).map_err(|e| Refused(format!("seccomp: {e}")))?;
    }
    Ok(())
}

/// seccompiler checks the architecture but not the x32 bit of a call's
/// number: on a kernel built with x32, a call numbered from `0x40000000`
/// would pass every rule keyed by its x86_64 number. Any such call is
/// refused before the rules are asked.
#[cfg(target_arch = "x86_64")]
fn x32() -> seccompiler::BpfProgram {
    use seccompiler::sock_filter;
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JMP_JEQ_K: u16 = 0x15;
    const BPF_JMP_JGE_K: u16 = 0x35;
    const BPF_RET_K: u16 = 0x06;
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const RET_KILL_PROCESS: u32 = 0x8000_0000;
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let op = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        // seccomp_data.arch
        op(BPF_LD_W_ABS, 0, 0, 4),
        op(BPF_JMP_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        op(BPF_RET_K, 0, 0, RET_KILL_PROCESS),
        // seccomp_data.nr
        op(BPF_LD_W_ABS, 0, 0, 0),
        op(BPF_JMP_JGE_K, 0, 1, 0x4000_0000),
        op(BPF_RET_K, 0, 0, RET_ERRNO | libc::ENOSYS as u32),
        op(BPF_RET_K, 0, 0, RET_ALLOW),
    ]
}

/// Only x86_64's system calls are listed so far: elsewhere the walls are
/// not built at all.
#[cfg(not(target_arch = "x86_64"))]
fn seccomp_filter() -> Result<(), Refused> {
    Err(Refused(
        "native commands run on x86_64 Linux only for now (the seccomp filter lists that \
         architecture's system calls)"
            .into(),
    ))
}
