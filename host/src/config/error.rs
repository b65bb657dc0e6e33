//! Every configuration problem, naming the file, flag or grant and a fix
//! that works when pasted.

use std::path::PathBuf;

use super::origin::GrantOrigin;

/// A configuration problem, naming the file, flag or grant and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("workspace `{}` is not a directory: {source}; pass an existing directory with --workspace", .path.display())]
    Workspace {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read config file `{}`: {source}", .path.display())]
    ReadFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config file `{}`: {message}", .path.display())]
    ParseFile { path: PathBuf, message: String },
    #[error("grant `{grant}` (from {origin}) {problem}")]
    Grant {
        grant: String,
        origin: GrantOrigin,
        problem: String,
    },
    #[error(
        "grant `{grant}` (from {origin}) is outside the workspace, and a workspace's own \
         toolhost.toml may grant only inside it (it may have come with the repository). To allow \
         it, pass the grant yourself (`{flag}`), or trust this workspace (`toolhost trust {}`)",
        .workspace.display()
    )]
    UntrustedGrant {
        grant: String,
        origin: Box<GrantOrigin>,
        flag: String,
        workspace: PathBuf,
    },
    #[error("{error} (from {origin})")]
    NetGrant {
        origin: GrantOrigin,
        error: crate::sandbox::GrantError,
    },
    #[error(
        "network grant `{grant}` (from {origin}) is refused: a workspace's own toolhost.toml may \
         not give tools the network (it may have come with the repository, and a grant would let \
         the model send your files where its author chose). To allow it, pass the grant yourself \
         (`{flag}`), or trust this workspace (`toolhost trust {}`)",
        .workspace.display()
    )]
    UntrustedNetGrant {
        grant: String,
        origin: Box<GrantOrigin>,
        flag: String,
        workspace: PathBuf,
    },
    #[error("exec grant `{grant}` (from {origin}) {problem}")]
    ExecGrant {
        grant: String,
        origin: GrantOrigin,
        problem: String,
    },
    #[error(
        "exec grant `{grant}` (from {origin}) is refused: a workspace's own toolhost.toml may not \
         let tools run your machine's programs (it may have come with the repository). To allow \
         it, pass the grant yourself (`{flag}`), or trust this workspace (`toolhost trust {}`)",
        .workspace.display()
    )]
    UntrustedExecGrant {
        grant: String,
        origin: Box<GrantOrigin>,
        flag: String,
        workspace: PathBuf,
    },
    #[error("environment grant `{grant}` (from {origin}) {problem}")]
    EnvGrant {
        grant: String,
        origin: GrantOrigin,
        problem: String,
    },
    #[error(
        "environment grant `{name}` (from {origin}) is refused: a workspace's own toolhost.toml may \
         not give tools your environment variables (it may have come with the repository, and a \
         variable can hold a secret, such as an API key). To allow it, pass the grant yourself \
         (`{flag}`), or trust this workspace (`toolhost trust {}`)",
        .workspace.display()
    )]
    UntrustedEnvGrant {
        name: String,
        origin: Box<GrantOrigin>,
        flag: String,
        workspace: PathBuf,
    },
    #[error(
        "`{}:{line}` sets headers for `{tool}`'s requests, and a workspace's own toolhost.toml is \
         not trusted to (it may have come with the repository, and a header it sets could carry a \
         token from your environment to a host of its choosing). Set them in your own \
         config.toml, or trust this workspace (`toolhost trust {}`)",
        .file.display(), .workspace.display()
    )]
    UntrustedHeaders {
        file: PathBuf,
        line: usize,
        tool: String,
        workspace: PathBuf,
    },
    #[error("`{}:{line}` [tools.{tool}.headers]: {problem}", .file.display())]
    Header {
        file: PathBuf,
        line: usize,
        tool: String,
        problem: String,
    },
    #[error(
        "`{}:{line}` sets [network] ca_file, a certificate authority every tool's https request \
         would trust, and a workspace's own toolhost.toml is not trusted to choose that (it may \
         have come with the repository). Set it in your own config.toml, or trust this workspace \
         (`toolhost trust {}`)",
        .file.display(), .workspace.display()
    )]
    UntrustedCaFile {
        file: PathBuf,
        line: usize,
        workspace: PathBuf,
    },
    #[error(
        "`{}` sets [model] base_url = \"{url}\", which would send your prompts and API key \
         there, and a workspace's own toolhost.toml is not trusted to choose that (it may have come \
         with the repository). Pass `--base-url {url}` yourself, or trust this workspace \
         (`toolhost trust {}`)",
        .file.display(), .workspace.display()
    )]
    UntrustedModelUrl {
        file: PathBuf,
        url: String,
        workspace: PathBuf,
    },
    #[error("limit `{key}` (from {origin}) must be greater than zero")]
    ZeroLimit { key: &'static str, origin: String },
    #[error(
        "`TOOLHOST_BASELINE_MIN_BYTES` is `{value}`; set it to a number of bytes (0 compiles every new plugin \
         with the baseline compiler first) or to `off` (always wait for the optimized compile)"
    )]
    BaselineMinBytes { value: String },
    #[error(
        "`TOOLHOST_BACKGROUND_COMPILE` is `{value}`; set it to `on` (a command that exits with plugins on \
         baseline code leaves a background process to compile their optimized code) or `off`"
    )]
    BackgroundCompile { value: String },
    #[error(transparent)]
    StateLink(#[from] crate::workspace::StateLink),
}
