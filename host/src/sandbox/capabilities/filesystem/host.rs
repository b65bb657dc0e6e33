//! The `wasi:filesystem/types` host: each operation that changes the file
//! system resolves its path once ([`change::locate`]), asks the rules
//! ([`change`], [`links`], [`special`], [`super::rules`]), charges the write
//! budget ([`budget`]), and then acts through wasmtime-wasi's own
//! implementation on the held parent and one name. Reads pass straight
//! through, or take a shorter way than wasmtime-wasi's to the same answer:
//! a directory listing without a `stat` per entry ([`Listing`], which also
//! answers `readdir`'s `metadata-hash-at`), a read without zero-filling its
//! buffer first.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::{Descriptor, Dir, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::{DynOutputStream, FsError, FsResult};

use super::budget::{self, BudgetedStream, ENTRY_COST};
use super::change::{self, Change, Located};
use super::guard::{FsGuard, Held, JustListed};
use super::{links, special};
use crate::sandbox::capabilities::listing::{Listed, Listing};
use crate::sandbox::capabilities::{BLOCKING_CURRENT_THREAD, beneath, held, protect};

/// The most one `read` returns, as in wasmtime-wasi (its
/// `MAX_READ_SIZE_ALLOC`).
const MAX_READ: usize = 64 * 1024;

/// The `HasData` of the guarded interface.
pub(crate) struct GuardedFilesystem;

impl HasData for GuardedFilesystem {
    type Data<'a> = Guarded<'a>;
}

/// wasmtime-wasi's file system view plus the guard, for one host call.
pub(crate) struct Guarded<'a> {
    pub(crate) fs: WasiFilesystemCtxView<'a>,
    pub(crate) guard: &'a mut FsGuard,
    /// The call's memory, which its read streams are charged to.
    pub(crate) memory: &'a Arc<crate::sandbox::limits::MemoryAccount>,
}

/// The descriptor an operation acts through on a [`Located`] name: the
/// guest's own when the parent is its directory, else a temporary one for
/// the held parent (with the guest descriptor's permissions, so
/// wasmtime-wasi's own checks are unchanged), removed by
/// [`Guarded::release`].
struct Acting {
    rep: u32,
    temporary: Option<Resource<Descriptor>>,
}

impl Acting {
    fn fd(&self) -> Resource<Descriptor> {
        Resource::new_borrow(self.rep)
    }
}

impl Guarded<'_> {
    /// The real host path of descriptor `fd` (an open directory or file).
    fn real_path(&self, fd: &Resource<Descriptor>) -> FsResult<PathBuf> {
        let file = match self.fs.table.get(fd)? {
            Descriptor::Dir(dir) => Arc::clone(&dir.dir),
            Descriptor::File(file) => Arc::clone(&file.file),
        };
        // Fail closed: a descriptor whose place is unknown changes nothing.
        protect::real_path(&file).map_err(|_| ErrorCode::NotPermitted.into())
    }

    /// Resolves `path` under the directory `fd` once ([`change::locate`]).
    fn locate(
        &self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
        no_name: ErrorCode,
    ) -> FsResult<Located> {
        let dir = match self.fs.table.get(fd)? {
            Descriptor::Dir(dir) => dir.clone(),
            Descriptor::File(_) => return Err(ErrorCode::NotDirectory.into()),
        };
        change::locate(dir, path, follow, no_name)
    }

    /// Refuses a change of `located` that reaches a protected path or a
    /// file with other names ([`change::refusal`]).
    fn check(&mut self, located: &Located, change: Change) -> FsResult<()> {
        // A name about to change no longer names what was listed.
        self.guard.just_listed = None;
        match change::refusal(&self.guard.rules, located, change) {
            Some(denial) => self.guard.refuse(denial),
            None => Ok(()),
        }
    }

    /// The descriptor to act through on `located`'s name.
    fn acting(
        &mut self,
        fd: &Resource<Descriptor>,
        located: Located,
    ) -> FsResult<(Acting, String)> {
        let Located { dir, entry, .. } = located;
        let acting = match entry.parent {
            None => Acting {
                rep: fd.rep(),
                temporary: None,
            },
            Some(parent) => self.hold(parent, &dir)?,
        };
        Ok((acting, entry.name))
    }

    /// [`Guarded::acting`] for the two ends of a rename or a link; the
    /// first is released when the second fails.
    fn acting_both(
        &mut self,
        (from_fd, from): (&Resource<Descriptor>, Located),
        (to_fd, to): (&Resource<Descriptor>, Located),
    ) -> FsResult<((Acting, String), (Acting, String))> {
        let first = self.acting(from_fd, from)?;
        match self.acting(to_fd, to) {
            Ok(second) => Ok((first, second)),
            Err(error) => {
                self.release(first.0);
                Err(error)
            }
        }
    }

    /// A temporary descriptor for the held directory `file`, with the
    /// permissions of the guest's descriptor `like`.
    fn hold(&mut self, file: std::fs::File, like: &Dir) -> FsResult<Acting> {
        let held = Dir::new(file, like.perms, like.open_mode, BLOCKING_CURRENT_THREAD);
        let temporary = self.fs.table.push(Descriptor::Dir(held))?;
        Ok(Acting {
            rep: temporary.rep(),
            temporary: Some(temporary),
        })
    }

    /// `set-times-at` of a path that names a directory by `.` or `..`
    /// (`touch .`): the directory opened beneath `fd`, checked where it is,
    /// and its times set through the held handle.
    async fn set_times_of_directory(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        let dir = match self.fs.table.get(fd)? {
            Descriptor::Dir(dir) => dir.clone(),
            Descriptor::File(_) => return Err(ErrorCode::NotDirectory.into()),
        };
        if dir.perms.write_not_permitted() {
            return Err(ErrorCode::NotPermitted.into());
        }
        let held = beneath::directory(&dir.dir, path)?;
        let target =
            protect::real_path(&held).map_err(|_| FsError::from(ErrorCode::NotPermitted))?;
        if let Some(denial) = self.guard.rules.protected_refusal(&target) {
            return self.guard.refuse(denial);
        }
        let acting = self.hold(held, &dir)?;
        let result = HostDescriptor::set_times(&mut self.fs, acting.fd(), atim, mtim).await;
        self.release(acting);
        result
    }

    /// Refuses a symbolic link at host path `link` to `target` that the
    /// link rules do not allow ([`links::target_refusal`]).
    fn check_link_target(&mut self, link: &Path, target: &str) -> FsResult<()> {
        match links::target_refusal(&self.guard.rules, link, target) {
            Some(denial) => self.guard.refuse(denial),
            None => Ok(()),
        }
    }

    fn release(&mut self, acting: Acting) {
        if let Some(temporary) = acting.temporary {
            // Only this guard knows the slot; nothing else can have taken it.
            let _ = self.fs.table.delete(temporary);
        }
    }

    /// Refuses to open anything but a file, a directory or a link to one
    /// ([`special`]).
    fn check_ordinary(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
    ) -> FsResult<()> {
        let Descriptor::Dir(dir) = self.fs.table.get(fd)? else {
            return Ok(());
        };
        match special::refusal_by_name(&self.guard.rules, &dir.dir, path, follow) {
            Some(denial) => self.guard.refuse(denial),
            None => Ok(()),
        }
    }

    /// The same refusal for the entry a change would open, from its held
    /// parent.
    fn check_ordinary_located(&mut self, located: &Located) -> FsResult<()> {
        match special::refusal_of_located(&self.guard.rules, located) {
            Some(denial) => self.guard.refuse(denial),
            None => Ok(()),
        }
    }

    /// Refuses a change through descriptor `fd` itself (its contents or
    /// times) when it lies in a protected path or has other names
    /// ([`super::rules::FsRules::descriptor_refusal`]). An open descriptor
    /// stays on its file; the file cannot move into a protected path
    /// meanwhile.
    fn check_descriptor(&mut self, fd: &Resource<Descriptor>) -> FsResult<()> {
        let target = self.real_path(fd)?;
        let stat = match self.fs.table.get(fd)? {
            Descriptor::File(file) => rustix::fs::fstat(&*file.file).ok(),
            Descriptor::Dir(_) => None,
        };
        match self.guard.rules.descriptor_refusal(&target, stat.as_ref()) {
            Some(denial) => self.guard.refuse(denial),
            None => Ok(()),
        }
    }

    fn take_budget(&self, bytes: u64) -> FsResult<()> {
        if self.guard.budget.take(bytes) {
            Ok(())
        } else {
            Err(FsError::trap(self.guard.budget.exceeded()))
        }
    }

    /// Charges `result`'s operation [`ENTRY_COST`] when `creates`, taken
    /// before it ran (`charged`): given back when it failed.
    fn settle_entry<T>(&self, charged: bool, result: FsResult<T>) -> FsResult<T> {
        if charged && result.is_err() {
            self.guard.budget.give_back(ENTRY_COST);
        }
        result
    }

    /// Refuses, and closes, a descriptor `open-at` made in toolhost's own
    /// records: where it really is decides, whatever links the path took.
    fn not_a_record(
        &mut self,
        opened: FsResult<Resource<Descriptor>>,
    ) -> FsResult<Resource<Descriptor>> {
        let Ok(fd) = &opened else {
            return opened;
        };
        // Fail closed: a descriptor whose place is unknown is not read.
        let place = self.real_path(fd);
        let refusal = place
            .as_ref()
            .ok()
            .and_then(|at| self.guard.rules.record_refusal(at));
        if place.is_ok() && refusal.is_none() {
            return opened;
        }
        let fd = opened?;
        let rep = fd.rep();
        let _ = self.fs.table.delete(Resource::<Descriptor>::new_own(rep));
        match refusal {
            Some(denial) => self.guard.refuse(denial),
            None => Err(ErrorCode::NotPermitted.into()),
        }
    }

    /// Counts a descriptor `open-at` made as held until the guest drops it.
    fn count_opened(
        &mut self,
        opened: FsResult<Resource<Descriptor>>,
    ) -> FsResult<Resource<Descriptor>> {
        if let Ok(fd) = &opened {
            self.guard.opened.insert(fd.rep());
        }
        opened
    }

    /// What writing `len` bytes at `offset` of the file `fd` costs
    /// ([`budget::write_cost`]).
    fn write_cost(&self, fd: &Resource<Descriptor>, offset: u64, len: u64) -> FsResult<u64> {
        let Descriptor::File(file) = self.fs.table.get(fd)? else {
            return Ok(len);
        };
        if offset == 0 {
            return Ok(len);
        }
        let size = file.file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(budget::write_cost(size, offset, len))
    }

    /// Replaces the stream `stream` in the table with one that counts its
    /// bytes against the write budget.
    fn budgeted(
        &mut self,
        stream: Resource<DynOutputStream>,
    ) -> FsResult<Resource<DynOutputStream>> {
        let inner: DynOutputStream = self.fs.table.delete(stream)?;
        let counted: DynOutputStream = Box::new(BudgetedStream {
            inner,
            budget: Arc::clone(&self.guard.budget),
        });
        Ok(self.fs.table.push(counted)?)
    }
}

fn follows(flags: types::PathFlags) -> bool {
    flags.contains(types::PathFlags::SYMLINK_FOLLOW)
}

impl types::Host for Guarded<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.fs, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        types::Host::filesystem_error_code(&mut self.fs, err)
    }
}

impl HostDescriptor for Guarded<'_> {
    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<wasmtime_wasi::p2::DynInputStream>> {
        use wasmtime_wasi::p2::DynInputStream;
        // Each stream may hold a read-ahead in the host: charged to the
        // call's memory until the guest drops it (`capabilities::held`).
        let stream = HostDescriptor::read_via_stream(&mut self.fs, fd, offset)?;
        let inner: DynInputStream = self.fs.table.delete(stream)?;
        let charged = held::ChargedInput::new(inner, self.memory).map_err(FsError::trap)?;
        let charged: DynInputStream = Box::new(charged);
        Ok(self.fs.table.push(charged)?)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        self.check_descriptor(&fd)?;
        // A stream that starts past the end makes the hole at its first byte.
        let hole = self.write_cost(&fd, offset, 0)?;
        self.take_budget(hole)?;
        let stream = HostDescriptor::write_via_stream(&mut self.fs, fd, offset)?;
        self.budgeted(stream)
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<DynOutputStream>> {
        self.check_descriptor(&fd)?;
        let stream = HostDescriptor::append_via_stream(&mut self.fs, fd)?;
        self.budgeted(stream)
    }

    async fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        HostDescriptor::advise(&mut self.fs, fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        HostDescriptor::sync_data(&mut self.fs, fd).await
    }

    async fn get_flags(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorFlags> {
        HostDescriptor::get_flags(&mut self.fs, fd).await
    }

    async fn get_type(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorType> {
        HostDescriptor::get_type(&mut self.fs, fd).await
    }

    async fn set_size(&mut self, fd: Resource<Descriptor>, size: types::Filesize) -> FsResult<()> {
        self.check_descriptor(&fd)?;
        // Growing a file counts against the budget like writing the bytes.
        if let Descriptor::File(file) = self.fs.table.get(&fd)? {
            let current = file.file.metadata().map(|m| m.len()).unwrap_or(0);
            self.take_budget(size.saturating_sub(current))?;
        }
        HostDescriptor::set_size(&mut self.fs, fd, size).await
    }

    async fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.check_descriptor(&fd)?;
        HostDescriptor::set_times(&mut self.fs, fd, atim, mtim).await
    }

    /// wasmtime-wasi's read zero-fills a buffer of the size asked for
    /// (up to 64 KiB) before reading into it; this reads into the
    /// allocation as it is, so asking for more than a file holds costs
    /// nothing. The same cap, the same answer: the bytes read, and
    /// end-of-stream only when nothing was left.
    async fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        let Descriptor::File(file) = self.fs.table.get(&fd)? else {
            return HostDescriptor::read(&mut self.fs, fd, len, offset).await;
        };
        let len = usize::try_from(len).unwrap_or(usize::MAX).min(MAX_READ);
        let mut buffer = Vec::with_capacity(len);
        if len > 0 {
            rustix::io::pread(
                &*file.file,
                rustix::buffer::spare_capacity(&mut buffer),
                offset,
            )
            .map_err(std::io::Error::from)?;
        }
        let end = buffer.is_empty();
        Ok((buffer, end))
    }

    async fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        self.check_descriptor(&fd)?;
        let cost = self.write_cost(&fd, offset, buf.len() as u64)?;
        self.take_budget(cost)?;
        HostDescriptor::write(&mut self.fs, fd, buf, offset).await
    }

    /// Lists with the types the directory entries carry ([`Listing`])
    /// instead of wasmtime-wasi's `stat` of every entry. The stream's
    /// handle is the table slot of the guard's [`Stream`]: wasmtime-wasi's
    /// `ReaddirIterator` cannot be built outside it, and only this guard's
    /// `read_directory_entry` and `drop` ever see the handle.
    async fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<types::DirectoryEntryStream>> {
        self.guard.may_hold(Held::Listings)?;
        let listed = self.real_path(&fd)?;
        if let Some(denial) = self.guard.rules.record_refusal(&listed) {
            return self.guard.refuse(denial);
        }
        let Descriptor::Dir(dir) = self.fs.table.get(&fd)? else {
            return Err(ErrorCode::NotDirectory.into());
        };
        let listing = Stream {
            dir: Arc::clone(&dir.dir),
            listing: Listing::read(Arc::clone(&dir.dir))?,
        };
        let slot = self.fs.table.push(listing)?;
        self.guard.listings += 1;
        Ok(Resource::new_own(slot.rep()))
    }

    async fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        HostDescriptor::sync(&mut self.fs, fd).await
    }

    async fn create_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let located = self.locate(&fd, &path, false, ErrorCode::Exist)?;
        self.check(&located, Change::At)?;
        self.take_budget(ENTRY_COST)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::create_directory_at(&mut self.fs, acting.fd(), name).await;
        self.release(acting);
        self.settle_entry(true, result)
    }

    async fn stat(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorStat> {
        HostDescriptor::stat(&mut self.fs, fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        HostDescriptor::stat_at(&mut self.fs, fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        // `.`, `a/..`, and `l/` (the kernel follows a link there, even with
        // `AT_SYMLINK_NOFOLLOW`): the directory is opened, checked where it
        // is, and its times set through the held handle.
        if beneath::names_a_directory(&path) || beneath::ends_in_slash(&path) {
            return self.set_times_of_directory(&fd, &path, atim, mtim).await;
        }
        // Followed here, so the operation takes the last name as it is.
        let located = self.locate(&fd, &path, follows(path_flags), ErrorCode::Invalid)?;
        self.check(&located, Change::At)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::set_times_at(
            &mut self.fs,
            acting.fd(),
            types::PathFlags::empty(),
            name,
            atim,
            mtim,
        )
        .await;
        self.release(acting);
        result
    }

    async fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: types::PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        if follows(old_path_flags) {
            // wasmtime-wasi's answer too: WASI cannot hard-link a link's
            // target.
            return Err(ErrorCode::Invalid.into());
        }
        // `l/` makes the kernel follow `l` where the guard would check the
        // link itself; it names a directory, which no hard link may have
        // (the kernel's `EPERM`), or something that is not one (`ENOTDIR`).
        if beneath::ends_in_slash(&old_path) {
            return Err(ErrorCode::NotPermitted.into());
        }
        let new = self.locate(&new_descriptor, &new_path, false, ErrorCode::Exist)?;
        self.check(&new, Change::Onto)?;
        let source = self.locate(&fd, &old_path, false, ErrorCode::Invalid)?;
        // On a read-only grant wasmtime-wasi refuses it; a refusal here would
        // advise a lift that cannot help.
        if !new.dir.perms.write_not_permitted() {
            // A second name for a link is a link in another place: not at a
            // protected path, lifted or not.
            if let Some(target) = links::target_of(&source)? {
                if let Some(denial) = self.guard.rules.link_at_protected(&new.target) {
                    return self.guard.refuse(denial);
                }
                self.check_link_target(&new.target, &target)?;
            }
            if let Some(denial) = links::hard_link_source_refusal(&self.guard.rules, &source, &new)
            {
                return self.guard.refuse(denial);
            }
        }
        self.take_budget(ENTRY_COST)?;
        let ((from, old_name), (to, new_name)) =
            self.acting_both((&fd, source), (&new_descriptor, new))?;
        let result = HostDescriptor::link_at(
            &mut self.fs,
            from.fd(),
            types::PathFlags::empty(),
            old_name,
            to.fd(),
            new_name,
        )
        .await;
        self.release(from);
        self.release(to);
        self.settle_entry(true, result)
    }

    async fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        // Opening a directory, or creating a new file, cannot block.
        let may_block =
            !oflags.intersects(types::OpenFlags::DIRECTORY | types::OpenFlags::EXCLUSIVE);
        // A directory opened with `mutate-directory` changes nothing by
        // itself: every change through it comes back here.
        let changes = oflags.intersects(
            types::OpenFlags::CREATE | types::OpenFlags::TRUNCATE | types::OpenFlags::EXCLUSIVE,
        ) || flags.contains(types::DescriptorFlags::WRITE);
        self.guard.may_hold(Held::Descriptors)?;
        if !changes {
            if may_block {
                self.check_ordinary(&fd, &path, follows(path_flags))?;
            }
            let opened =
                HostDescriptor::open_at(&mut self.fs, fd, path_flags, path, oflags, flags).await;
            let opened = self.not_a_record(opened);
            return self.count_opened(opened);
        }
        // `l/` makes the kernel follow `l`, even with `O_NOFOLLOW`, and name
        // a directory: one cannot be created, written or truncated by an
        // open (the kernel's `EISDIR`), so it is refused before anything is
        // resolved by name.
        if beneath::ends_in_slash(&path) {
            return Err(ErrorCode::IsDirectory.into());
        }
        // Links followed here, so the open takes the last name as it is
        // (and fails if it became a link since). `exclusive` never follows:
        // the kernel answers `exist` for any link there, which lock files
        // rely on.
        let follow = follows(path_flags) && !oflags.contains(types::OpenFlags::EXCLUSIVE);
        let located = self.locate(&fd, &path, follow, ErrorCode::IsDirectory)?;
        self.check(&located, Change::At)?;
        if may_block {
            self.check_ordinary_located(&located)?;
        }
        // A new entry costs the budget; an open of one already there (the
        // parent is held, so the answer is about the same directory) not.
        let creates = oflags.contains(types::OpenFlags::CREATE)
            && (oflags.contains(types::OpenFlags::EXCLUSIVE)
                || matches!(
                    beneath::entry_exists(
                        located.entry.dir(&located.dir.dir),
                        located.entry.bare_name()
                    ),
                    Ok(false)
                ));
        if creates {
            self.take_budget(ENTRY_COST)?;
        }
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::open_at(
            &mut self.fs,
            acting.fd(),
            types::PathFlags::empty(),
            name,
            oflags,
            flags,
        )
        .await;
        self.release(acting);
        let result = self.settle_entry(creates, result);
        let result = self.not_a_record(result);
        self.count_opened(result)
    }

    // `stat-at`, `readlink-at` and `metadata-hash-at` change nothing: they
    // go to wasmtime-wasi as they are (a trailing `/` follows a link there,
    // beneath the preopen, as any read does).
    async fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        HostDescriptor::readlink_at(&mut self.fs, fd, path).await
    }

    async fn remove_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let located = self.locate(&fd, &path, false, ErrorCode::Invalid)?;
        self.check(&located, Change::Away)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::remove_directory_at(&mut self.fs, acting.fd(), name).await;
        self.release(acting);
        result
    }

    async fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let old = self.locate(&fd, &old_path, false, ErrorCode::Invalid)?;
        self.check(&old, Change::Away)?;
        let new = self.locate(&new_fd, &new_path, false, ErrorCode::Invalid)?;
        self.check(&new, Change::Onto)?;
        // A lift is for what is there: a directory moved in from outside
        // (a repository, whose config the lift would then let it write)
        // is not.
        let from = old.entry.dir(&old.dir.dir);
        let kind = rustix::fs::statat(
            from,
            old.entry.bare_name(),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .map(|stat| rustix::fs::FileType::from_raw_mode(stat.st_mode));
        if kind.is_ok_and(|kind| kind.is_dir())
            && let Some(denial) = self.guard.rules.moved_into_a_lift(&old.target, &new.target)
        {
            return self.guard.refuse(denial);
        }
        // Nor is a link put at a protected path, lifted or not.
        if kind.is_ok_and(|kind| kind == rustix::fs::FileType::Symlink)
            && let Some(denial) = self.guard.rules.link_at_protected(&new.target)
        {
            return self.guard.refuse(denial);
        }
        // A link moved to another directory points somewhere else (renamed
        // in its own, it points where it did: `mv link link~`).
        if !new.dir.perms.write_not_permitted()
            && old.target.parent() != new.target.parent()
            && let Some(target) = links::target_of(&old)?
        {
            self.check_link_target(&new.target, &target)?;
        }
        let ((from, old_name), (to, new_name)) = self.acting_both((&fd, old), (&new_fd, new))?;
        let result =
            HostDescriptor::rename_at(&mut self.fs, from.fd(), old_name, to.fd(), new_name).await;
        self.release(from);
        self.release(to);
        result
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        let located = self.locate(&fd, &dest_path, false, ErrorCode::Exist)?;
        self.check(&located, Change::Onto)?;
        if let Some(denial) = self.guard.rules.link_at_protected(&located.target) {
            return self.guard.refuse(denial);
        }
        if !located.dir.perms.write_not_permitted() {
            self.check_link_target(&located.target, &src_path)?;
        }
        self.take_budget(ENTRY_COST)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::symlink_at(&mut self.fs, acting.fd(), src_path, name).await;
        self.release(acting);
        self.settle_entry(true, result)
    }

    async fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let located = self.locate(&fd, &path, false, ErrorCode::IsDirectory)?;
        self.check(&located, Change::Away)?;
        let (acting, name) = self.acting(&fd, located)?;
        let result = HostDescriptor::unlink_file_at(&mut self.fs, acting.fd(), name).await;
        self.release(acting);
        result
    }

    async fn is_same_object(
        &mut self,
        a: Resource<Descriptor>,
        b: Resource<Descriptor>,
    ) -> wasmtime::Result<bool> {
        HostDescriptor::is_same_object(&mut self.fs, a, b).await
    }

    async fn metadata_hash(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<types::MetadataHashValue> {
        HostDescriptor::metadata_hash(&mut self.fs, fd).await
    }

    /// Right after a directory stream returned `path` (wasi-libc's
    /// `readdir` asks this of every entry), the answer comes from the
    /// listing instead of a `stat` by name; any other question goes on.
    async fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        if let Some(listed) = self.guard.just_listed.take()
            && !follows(path_flags)
            && listed.name == path
            && let Descriptor::Dir(dir) = self.fs.table.get(&fd)?
            && Arc::ptr_eq(&dir.dir, &listed.dir)
        {
            return Ok(listed.hash);
        }
        HostDescriptor::metadata_hash_at(&mut self.fs, fd, path_flags, path).await
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.guard.opened.remove(&fd.rep());
        HostDescriptor::drop(&mut self.fs, fd)
    }
}

/// A directory stream of the guard's: the listing and the directory it
/// lists.
struct Stream {
    dir: Arc<std::fs::File>,
    listing: Listing,
}

/// A stream from [`HostDescriptor::read_directory`] above is a [`Stream`]
/// in the table; any other (none is made today) is wasmtime-wasi's.
impl HostDirectoryEntryStream for Guarded<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        self.guard.just_listed = None;
        let ours = Resource::<Stream>::new_borrow(stream.rep());
        let Ok(Stream { dir, listing }) = self.fs.table.get_mut(&ours) else {
            return HostDirectoryEntryStream::read_directory_entry(&mut self.fs, stream).await;
        };
        let Some(Listed { entry, hash }) = listing.next()? else {
            return Ok(None);
        };
        self.guard.just_listed = Some(JustListed {
            dir: Arc::clone(dir),
            name: entry.name.clone(),
            hash,
        });
        Ok(Some(entry))
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        let listing = Resource::<Stream>::new_own(stream.rep());
        if self.fs.table.get(&listing).is_ok() {
            self.fs.table.delete(listing)?;
            self.guard.listings = self.guard.listings.saturating_sub(1);
            return Ok(());
        }
        HostDirectoryEntryStream::drop(&mut self.fs, stream)
    }
}
