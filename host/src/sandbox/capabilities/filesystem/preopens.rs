//! `wasi:filesystem/preopens`: a tool's granted directories, each opened
//! once for every tool that has it, and handed to each call's table.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::component::{HasData, Resource, ResourceTable};
use wasmtime_wasi::filesystem::{Descriptor, Dir};
use wasmtime_wasi::{FsPerms, OpenMode};

use crate::sandbox::capabilities::grants::{Access, BLOCKING_CURRENT_THREAD, Grant};
use crate::sandbox::limits;

/// Each granted directory, opened once per host path and access when the
/// first tool with that grant loads, and shared by every tool that has it:
/// a plugin with thousands of tools would otherwise hold a descriptor per
/// tool and grant, and leave none for the calls. A handle stays on its
/// directory if that is renamed; a directory deleted while toolhost runs
/// stays unusable until the next start.
#[derive(Default)]
pub(crate) struct GrantDirs(BTreeMap<(PathBuf, Access), Result<Dir, String>>);

impl GrantDirs {
    /// `grants` as preopens, each directory opened only if no earlier tool
    /// had it.
    pub(crate) fn preopens(&mut self, grants: &[Grant]) -> Preopens {
        let mut dirs = Vec::with_capacity(grants.len());
        for grant in grants {
            let opened = self
                .0
                .entry((grant.host_path.clone(), grant.access))
                .or_insert_with(|| open_grant(grant));
            match opened {
                Ok(dir) => dirs.push((dir.clone(), grant.guest_path.clone())),
                Err(e) => return Preopens(Err(e.clone())),
            }
        }
        Preopens(Ok(Arc::from(dirs)))
    }
}

/// Opens `grant`'s directory as wasmtime-wasi's `preopened_dir` does
/// (`O_PATH | O_DIRECTORY`), read-only or read-write as granted.
pub(crate) fn open_grant(grant: &Grant) -> Result<Dir, String> {
    let file =
        cap_primitives::fs::open_ambient_dir(&grant.host_path, cap_primitives::ambient_authority())
            .map_err(|e| {
                format!(
                    "cannot open the granted directory `{}`: {}",
                    grant.host_path.display(),
                    limits::open_error(&e)
                )
            })?;
    // The directory granted, not what a link or a move put at its path
    // since it was granted (checked, canonical, at start or when the user
    // gave it in a session).
    let real = crate::sandbox::capabilities::protect::real_path(&file).map_err(|e| {
        format!(
            "cannot tell where the granted directory `{}` is: {e}",
            grant.host_path.display()
        )
    })?;
    if real != grant.host_path {
        return Err(format!(
            "the granted directory `{}` is now `{}`: a link or a move put another directory at \
             its path since it was granted; grant the directory you mean again",
            grant.host_path.display(),
            real.display()
        ));
    }
    let (perms, mode) = match grant.access {
        Access::Write => (FsPerms::ReadWrite, OpenMode::READ | OpenMode::WRITE),
        Access::Read => (FsPerms::ReadOnly, OpenMode::READ),
    };
    Ok(Dir::new(file, perms, mode, BLOCKING_CURRENT_THREAD))
}

/// A tool's granted directories, as shared handles ([`GrantDirs`]) and the
/// names the guest sees them by; each call's table gets clones of the
/// handles, not new descriptors.
pub(crate) struct Preopens(Result<Arc<[(Dir, String)]>, String>);

impl Preopens {
    /// The shared handles for one call's store, or why a directory could
    /// not be opened.
    pub(crate) fn dirs(&self) -> Result<OpenDirs, String> {
        self.0.clone()
    }
}

/// A call's preopened directories, as `wasi:filesystem/preopens` hands
/// them out.
pub(crate) type OpenDirs = Arc<[(Dir, String)]>;

/// `wasi:filesystem/preopens` from a call's [`OpenDirs`].
pub(crate) struct GrantedDirs;

impl HasData for GrantedDirs {
    type Data<'a> = PreopensView<'a>;
}

/// What `get-directories` needs: the call's directories and its table.
pub(crate) struct PreopensView<'a> {
    pub(crate) dirs: &'a OpenDirs,
    pub(crate) table: &'a mut ResourceTable,
}

impl wasmtime_wasi::p2::bindings::filesystem::preopens::Host for PreopensView<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        let mut handed = Vec::with_capacity(self.dirs.len());
        for (dir, name) in self.dirs.iter() {
            handed.push((self.table.push(Descriptor::Dir(dir.clone()))?, name.clone()));
        }
        Ok(handed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_granted_directory_replaced_by_a_link_is_not_opened() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir(root.join("granted")).expect("mkdir");
        std::fs::create_dir(root.join("elsewhere")).expect("mkdir");
        let grant = Grant {
            host_path: root.join("granted"),
            guest_path: "granted".into(),
            access: Access::Read,
        };
        assert!(open_grant(&grant).is_ok());
        // Granted, then swapped for a link to another directory.
        std::fs::remove_dir(root.join("granted")).expect("rmdir");
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("granted")).expect("link");
        let refused = open_grant(&grant).err().expect("refused");
        assert_eq!(
            refused,
            format!(
                "the granted directory `{}` is now `{}`: a link or a move put another directory \
                 at its path since it was granted; grant the directory you mean again",
                root.join("granted").display(),
                root.join("elsewhere").display()
            )
        );
    }
}
