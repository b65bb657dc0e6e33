mod common;
mod config_errors;
mod grants;
mod hostile;
mod plugins;
mod run;
mod providers;
mod standard_tools;
