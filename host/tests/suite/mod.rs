mod common;
mod config_errors;
mod grants;
mod hostile;
mod plugins;
mod standard_tools;
