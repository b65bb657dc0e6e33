//! The plan of one command's walls, from the tool's grants: each
//! directory grant bound as granted, the program's toolchain read-only
//! (its secrets hidden), what the [`Survey`] found held read-only or
//! hidden, toolhost's records hidden, and the program's environment.

use std::path::Path;

use super::plan::{Bind, HOME, Plan, WallLimits};
use super::program::Program;
use super::survey::{Grants, Survey};
use crate::sandbox::capabilities::grants::Access;
use crate::sandbox::capabilities::protect::Record;

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
    reads_outputs: bool,
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
        .filter(|(_, kind)| !(*kind == Record::Outputs && reads_outputs))
        .map(|(path, _)| path.to_path_buf())
        .chain(command.program.secrets.iter().cloned())
        .filter(|path| binds.iter().any(|b| path.starts_with(&b.path)))
        .filter(|path| path.symlink_metadata().is_ok())
        .chain(survey.sockets().cloned())
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
