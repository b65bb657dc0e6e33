//! The walls of one command, from the tool's grants: each directory grant
//! bound as granted, the program's toolchain read-only, the protected
//! paths that exist in a writable grant held read-only, toolhost's records
//! hidden. Protected paths that do not exist yet cannot be held by a
//! mount: the command's writable grants are looked over again when it
//! ends, and a protected path it made is removed and reported
//! ([`Survey::made_since`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::plan::{Bind, HOME, Plan, WallLimits};
use super::program::Program;
use crate::sandbox::capabilities::grants::{Access, Grant};
use crate::sandbox::capabilities::protect::{self, Hit, Protection, Record};

/// Entries a survey looks at before it gives up: a grant bigger than this
/// is refused native commands rather than left unwatched.
const SURVEY_ENTRIES: usize = 2_000_000;

/// What the walls are built from, for one tool.
pub(crate) struct Grants<'a> {
    pub(crate) dirs: &'a [Grant],
    pub(crate) lifted: &'a [PathBuf],
    pub(crate) protection: &'a Protection,
    /// The tool may read the saved results (`read_file` alone).
    pub(crate) reads_outputs: bool,
}

/// The protected paths found in a tool's writable grants, by path.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Survey {
    /// Protected by name or path: held read-only whole.
    named: BTreeSet<PathBuf>,
    /// Directories holding a `HEAD`: read-only whole, and made one by the
    /// `HEAD` in them.
    repositories: BTreeSet<PathBuf>,
}

impl Survey {
    /// Looks over every writable grant, no link followed; a protected path
    /// is not looked into. Refuses a protected path that is a link (a
    /// mount cannot hold a link itself) and a grant too big to look over.
    pub(crate) fn of(grants: &Grants<'_>) -> Result<Survey, String> {
        let mut survey = Survey::default();
        let mut seen = 0usize;
        for grant in grants.dirs.iter().filter(|g| g.access == Access::Write) {
            let base = if grant.host_path.starts_with(grants.protection.workspace()) {
                grants.protection.workspace()
            } else {
                grant.host_path.as_path()
            };
            let mut stack = vec![grant.host_path.clone()];
            while let Some(dir) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    seen += 1;
                    if seen > SURVEY_ENTRIES {
                        return Err(format!(
                            "the writable grants hold more than {SURVEY_ENTRIES} entries, too many \
                             to look over for protected paths; grant a smaller directory"
                        ));
                    }
                    let path = entry.path();
                    let Ok(kind) = entry.file_type() else {
                        continue;
                    };
                    if let Some(hit) = grants.protection.covering(&path, grants.lifted, base) {
                        if kind.is_symlink() {
                            return Err(link_refusal(grants.protection, &path, &hit));
                        }
                        survey.named.insert(path);
                        continue;
                    }
                    if kind.is_dir() {
                        if protect::holds_head(&path)
                            && !protect::is_lifted(&path, &path, grants.lifted)
                        {
                            survey.repositories.insert(path);
                        } else {
                            stack.push(path);
                        }
                    }
                }
            }
            if protect::holds_head(&grant.host_path)
                && !protect::is_lifted(&grant.host_path, &grant.host_path, grants.lifted)
            {
                survey.repositories.insert(grant.host_path.clone());
            }
        }
        Ok(survey)
    }

    /// Every path held read-only.
    pub(crate) fn read_only(&self) -> Vec<PathBuf> {
        self.named
            .iter()
            .chain(&self.repositories)
            .cloned()
            .collect()
    }

    /// What a command made of protected paths, given the survey from
    /// before it ran: each path to remove (a protected path made, or the
    /// `HEAD` that made a directory a repository), with the hit to report.
    pub(crate) fn made_since(
        &self,
        before: &Survey,
        protection: &Protection,
    ) -> Vec<(PathBuf, Hit)> {
        let named = self.named.difference(&before.named).map(|path| {
            let hit = protection
                .covering(path, &[], protection.workspace())
                .unwrap_or_else(|| protection.repository_hit(path));
            (path.clone(), hit)
        });
        let repositories = self
            .repositories
            .difference(&before.repositories)
            .filter(|dir| !before.named.iter().any(|n| dir.starts_with(n)))
            .map(|dir| (dir.join(protect::HEAD), protection.repository_hit(dir)));
        named.chain(repositories).collect()
    }
}

fn link_refusal(protection: &Protection, path: &Path, hit: &Hit) -> String {
    format!(
        "`{}` is protected ({}) and is a symbolic link, which the walls cannot hold read-only; \
         native commands do not run while it is one",
        protection.shown(path),
        hit.why
    )
}

/// Removes what a command made of protected paths (`made`), and says so
/// for the model. The command's processes are gone by now; nothing is
/// followed through a link (`remove_dir_all` does not follow one).
pub(crate) fn remove_made(made: &[(PathBuf, Hit)], protection: &Protection) -> String {
    let mut said = String::new();
    for (path, hit) in made {
        let removed = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
            Ok(_) => std::fs::remove_file(path),
            Err(e) => Err(e),
        };
        let how = match removed {
            Ok(()) => "it was removed".to_string(),
            Err(e) => format!("removing it failed: {e}"),
        };
        said.push_str(&format!(
            "toolhost: the command made `{}`, which is protected ({}); {how}\n",
            protection.shown(path),
            hit.why
        ));
    }
    said
}

/// A command as the shell asked for it.
pub(crate) struct Command<'a> {
    pub(crate) program: &'a Program,
    pub(crate) args: &'a [String],
    pub(crate) cwd: &'a Path,
    pub(crate) env: &'a [(String, String)],
    pub(crate) stdin: Vec<u8>,
}

/// The plan of `command`'s walls.
pub(crate) fn plan(
    command: Command<'_>,
    grants: &Grants<'_>,
    survey: &Survey,
    limits: WallLimits,
    timeout_ms: u64,
) -> Result<Plan, String> {
    let mut binds: Vec<Bind> = grants
        .dirs
        .iter()
        .map(|grant| Bind {
            path: grant.host_path.clone(),
            writable: grant.access == Access::Write,
            toolchain: false,
        })
        .collect();
    for dir in &command.program.toolchain {
        if !binds.iter().any(|b| dir.starts_with(&b.path)) {
            binds.push(Bind {
                path: dir.clone(),
                writable: false,
                toolchain: true,
            });
        }
    }
    if !binds
        .iter()
        .any(|b| command.cwd.starts_with(&b.path) && !b.toolchain)
    {
        return Err(format!(
            "{} is not in a directory granted to the tool; `cd` into one first",
            command.cwd.display()
        ));
    }
    let hidden = grants
        .protection
        .records()
        .filter(|(_, kind)| !(*kind == Record::Outputs && grants.reads_outputs))
        .map(|(path, _)| path.to_path_buf())
        .filter(|path| binds.iter().any(|b| path.starts_with(&b.path)))
        .filter(|path| path.symlink_metadata().is_ok())
        .collect();
    let mut search: Vec<String> = command
        .program
        .toolchain
        .iter()
        .filter(|dir| command.program.path.starts_with(dir))
        .map(|dir| {
            if dir.join("bin").is_dir() {
                dir.join("bin").display().to_string()
            } else {
                dir.display().to_string()
            }
        })
        .collect();
    search.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(String::from));
    let mut env = vec![
        ("PATH".to_string(), search.join(":")),
        ("HOME".to_string(), HOME.to_string()),
        ("LANG".to_string(), "C.UTF-8".to_string()),
        ("TERM".to_string(), "dumb".to_string()),
        ("TMPDIR".to_string(), "/tmp".to_string()),
    ];
    env.extend(command.program.env.iter().cloned());
    for (name, value) in command.env {
        env.retain(|(n, _)| n != name);
        env.push((name.clone(), value.clone()));
    }
    let mut argv = vec![command.program.name.clone()];
    argv.extend(command.args.iter().cloned());
    Ok(Plan {
        program: command.program.path.clone(),
        argv,
        cwd: command.cwd.to_path_buf(),
        env,
        stdin: command.stdin,
        binds,
        read_only: survey.read_only(),
        hidden,
        limits,
        timeout_ms,
    })
}
