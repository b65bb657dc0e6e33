//! Environment variables as a capability: a tool sees the host variables
//! the user named for it (`--allow-env TOOL=NAME`, `env = [...]` under
//! `[tools.NAME]`), and none by default.
//!
//! The values are read once, when the tool loads, from toolhost's own
//! environment; a variable that is unset then, or not UTF-8, is left out
//! (WASI's variables are strings). `wasi:cli/environment` answers with
//! them, no arguments, and the workspace's path as the working directory
//! (`initial-cwd`): where the tool's relative paths (the preopen `.`) are,
//! and what a shell shows as its `pwd` (the standard `bash`). wasi-libc
//! does not read it, so a program's own `getcwd` is unchanged.

use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;

use wasmtime::component::{HasData, Linker};
use wasmtime_wasi::p2::bindings::cli::environment;

use super::contract::{CallBounds, CallView, Capability, FileGrants, HasCall, Start};
use crate::sandbox::reach::Reach;

/// The host variables a tool may read, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EnvPolicy {
    pub names: Vec<String>,
}

/// The environment capability.
pub(crate) struct Env;

/// A tool's variables and working directory, as `wasi:cli/environment`
/// hands them out.
pub(crate) type Variables = Arc<Environment>;

/// What `wasi:cli/environment` answers a tool.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Environment {
    variables: Vec<(String, String)>,
    /// The workspace's path, when it is UTF-8 (WASI's paths are strings).
    cwd: Option<String>,
}

impl Capability for Env {
    type Policy = EnvPolicy;
    /// The workspace's path, for `initial-cwd`.
    type Shared = Option<String>;
    type ForTool = Variables;
    type InCall = Variables;
    type Record = ();
    type Refusal = Infallible;

    fn start(start: &Start<'_>) -> Option<String> {
        start.workspace.to_str().map(str::to_string)
    }

    fn configure(policy: &EnvPolicy, _: &FileGrants<'_>, cwd: &mut Option<String>) -> Variables {
        let variables = policy
            .names
            .iter()
            .filter_map(|name| Some((name.clone(), std::env::var(name).ok()?)))
            .collect();
        Arc::new(Environment {
            variables,
            cwd: cwd.clone(),
        })
    }

    fn prepare(variables: &Variables, _: &CallBounds<'_>) -> Result<Variables, String> {
        Ok(Arc::clone(variables))
    }

    fn link<T: HasCall<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        environment::add_to_linker::<T, EnvironmentHost>(linker, |t| {
            let CallView { own, .. } = t.call_view();
            Granted(own)
        })
    }

    fn close(_: &mut Variables) -> ((), Option<Infallible>) {
        ((), None)
    }

    fn describe<'a>(policy: &'a EnvPolicy, reach: &mut Reach<'a>) {
        if !policy.names.is_empty() {
            reach
                .more
                .push(format!("environment: {}", policy.names.join(", ")));
        }
    }

    /// None: a variable can hold a secret, and what a repository ships
    /// gets none until the user trusts it.
    fn shipped(full: &EnvPolicy, _: &EnvPolicy, _: &Path) -> (EnvPolicy, Vec<&'static str>) {
        let withheld = if full.names.is_empty() {
            Vec::new()
        } else {
            vec!["environment variables"]
        };
        (EnvPolicy::default(), withheld)
    }
}

/// `wasi:cli/environment` from a call's [`Variables`].
struct EnvironmentHost;

impl HasData for EnvironmentHost {
    type Data<'a> = Granted<'a>;
}

/// The variables granted to the tool of one call.
struct Granted<'a>(&'a Variables);

impl environment::Host for Granted<'_> {
    fn get_environment(&mut self) -> wasmtime::Result<Vec<(String, String)>> {
        Ok(self.0.variables.clone())
    }

    fn get_arguments(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn initial_cwd(&mut self) -> wasmtime::Result<Option<String>> {
        Ok(self.0.cwd.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_FILES: FileGrants<'static> = FileGrants {
        dirs: &[],
        lifted: &[],
        reads_saved_outputs: false,
    };

    fn policy(names: &[&str]) -> EnvPolicy {
        EnvPolicy {
            names: names.iter().map(|n| n.to_string()).collect(),
        }
    }

    /// Only the variables named, and only those set: `PATH` is set for
    /// any test run, the other name never.
    #[test]
    fn a_tool_gets_only_the_variables_named_that_are_set() {
        let path = std::env::var("PATH").expect("PATH is set");
        let mut cwd = Some("/ws".to_string());
        let given = Env::configure(
            &policy(&["PATH", "TOOLHOST_ENV_TEST_NEVER_SET"]),
            &NO_FILES,
            &mut cwd,
        );
        assert_eq!(
            *given,
            Environment {
                variables: vec![("PATH".to_string(), path)],
                cwd: Some("/ws".into()),
            }
        );
        assert!(
            Env::configure(&policy(&[]), &NO_FILES, &mut cwd)
                .variables
                .is_empty()
        );
    }

    #[test]
    fn a_shipped_tool_gets_no_variables_and_the_notice_says_so() {
        let (kept, withheld) = Env::shipped(&policy(&["HOME"]), &policy(&["HOME"]), Path::new("/"));
        assert_eq!(
            (kept, withheld),
            (EnvPolicy::default(), vec!["environment variables"])
        );
        let (_, withheld) = Env::shipped(&policy(&[]), &policy(&[]), Path::new("/"));
        assert!(withheld.is_empty());
    }
}
