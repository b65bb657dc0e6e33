//! The one notice a typed plugin gets for the tools it offers under its
//! file's stem because their names were taken. One line per plugin, not one
//! per function: a component that clashes with another copy of itself
//! would otherwise print twenty near-identical warnings at every start.

/// A tool offered under another name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rename {
    /// The name that was taken (`read_file`).
    pub(crate) taken: String,
    /// Who holds it, for the message (`` `builtin:read-file` ``, `this plugin`).
    pub(crate) holder: String,
    /// The function, as WIT spells it (`read-file`).
    pub(crate) wit_name: String,
    /// The name it is offered as (`fs_read_file`).
    pub(crate) renamed: String,
}

/// The notice for `renames` of the plugin whose file's stem is `stem`, or
/// `None` when nothing was renamed. Names are grouped by who holds them,
/// in the order they were met.
pub(crate) fn notice(stem: &str, renames: &[Rename]) -> Option<String> {
    let hint = format!("(set `[plugins.{stem}] prefix` in toolhost.toml to choose the prefix)");
    match renames {
        [] => None,
        [one] => Some(format!(
            "tool name `{}` is taken by {}, so `{}` is offered as `{}` {hint}",
            one.taken, one.holder, one.wit_name, one.renamed
        )),
        many => {
            let mut holders: Vec<(&str, Vec<String>)> = Vec::new();
            for rename in many {
                let name = format!("`{}`", rename.taken);
                match holders.iter_mut().find(|(h, _)| *h == rename.holder) {
                    Some((_, names)) => names.push(name),
                    None => holders.push((&rename.holder, vec![name])),
                }
            }
            let taken: Vec<String> = holders
                .iter()
                .map(|(holder, names)| format!("by {holder}: {}", names.join(", ")))
                .collect();
            let offered: Vec<String> = many.iter().map(|r| format!("`{}`", r.renamed)).collect();
            Some(format!(
                "{} tool names are taken ({}), so they are offered as {} {hint}",
                many.len(),
                taken.join("; "),
                offered.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rename(taken: &str, holder: &str) -> Rename {
        Rename {
            taken: taken.into(),
            holder: holder.into(),
            wit_name: taken.replace('_', "-"),
            renamed: format!("fs_{taken}"),
        }
    }

    #[test]
    fn nothing_renamed_is_no_notice() {
        assert_eq!(notice("fs", &[]), None);
    }

    #[test]
    fn one_rename_names_the_function_and_its_new_name() {
        assert_eq!(
            notice("fs", &[rename("read_file", "`builtin:read-file`")]).as_deref(),
            Some(
                "tool name `read_file` is taken by `builtin:read-file`, so `read-file` is offered \
                 as `fs_read_file` (set `[plugins.fs] prefix` in toolhost.toml to choose the prefix)"
            )
        );
    }

    #[test]
    fn several_renames_are_one_notice_grouped_by_holder() {
        let renames = [
            rename("add", "`/p/a.wasm`"),
            rename("read_file", "`builtin:read-file`"),
            rename("greet", "`/p/a.wasm`"),
            rename("echo", "this plugin"),
        ];
        assert_eq!(
            notice("fs", &renames).as_deref(),
            Some(
                "4 tool names are taken (by `/p/a.wasm`: `add`, `greet`; by `builtin:read-file`: \
                 `read_file`; by this plugin: `echo`), so they are offered as `fs_add`, \
                 `fs_read_file`, `fs_greet`, `fs_echo` (set `[plugins.fs] prefix` in toolhost.toml \
                 to choose the prefix)"
            )
        );
    }
}
