//! Shell completion: clap_complete's script for the commands and options, and, for bash, zsh and
//! fish, node names, `@tags` and module names asked of the inventory and catalogue as the user
//! types, through the hidden `mesh __complete nodes|tags|modules`.

use anyhow::Result;
use clap_complete::Shell;

use super::{Context, exit};

/// The completion script for `shell`.
pub(crate) fn script(shell: Shell, cmd: clap::Command) -> String {
    let mut bytes = Vec::new();
    clap_complete::generate(shell, &mut offered(&cmd), "mesh", &mut bytes);
    let script = String::from_utf8_lossy(&bytes).into_owned();
    match shell {
        Shell::Bash => format!("{script}\n{BASH}"),
        Shell::Fish => format!("{script}\n{FISH}"),
        Shell::Zsh => zsh(&script),
        _ => script,
    }
}

/// `cmd` as completion offers it: its hidden commands (`__complete`, which the scripts call
/// themselves) left out, since clap_complete offers a hidden command as any other.
fn offered(cmd: &clap::Command) -> clap::Command {
    clap::Command::new("mesh")
        .version(env!("CARGO_PKG_VERSION"))
        .args(cmd.get_arguments().cloned())
        .subcommands(cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned())
}

/// The names of `kind`, one a line; nothing at all when they cannot be read (a completion
/// never prints an error into the user's command line).
pub(crate) fn names(kind: &str, ctx: &Context) -> Result<u8> {
    let names: Vec<String> = match kind {
        "nodes" => ctx
            .inventory()
            .and_then(|inv| Ok(inv.nodes()?))
            .map(|nodes| nodes.into_iter().map(|n| n.name).collect())
            .unwrap_or_default(),
        "tags" => ctx
            .inventory()
            .and_then(|inv| Ok(inv.tags()?))
            .map(|tags| {
                let all: std::collections::BTreeSet<String> =
                    tags.into_values().flatten().collect();
                all.into_iter().map(|t| format!("@{t}")).collect()
            })
            .unwrap_or_default(),
        "modules" => crate::catalogue::Catalogue::load(&ctx.catalogue)
            .map(|cat| cat.modules().map(|m| m.name.clone()).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    for name in names {
        out!("{name}");
    }
    Ok(exit::OK)
}

/// Wraps clap's `_mesh` to add the names the word being completed can be.
const BASH: &str = r#"_mesh_names() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    local -a pos=()
    local i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            --inventory|--catalogue|--node|--exclude|--as|--pin|--move|--output|--parallel|--timeout|--connect-timeout|--limit) ((i++)) ;;
            -*) ;;
            *) pos+=("${COMP_WORDS[i]}") ;;
        esac
    done
    local kind=""
    case "$prev" in
        --node) kind="nodes" ;;
        --exclude) kind="nodes tags" ;;
    esac
    if [[ -z "$kind" && "$cur" != -* ]]; then
        case "${pos[0]}:${#pos[@]}" in
            plan:*|check:*|push:*|history:*) kind="nodes tags" ;;
            assign:1|unassign:1|place:1|config:1|settings:2) kind="modules" ;;
            assign:*) kind="nodes tags" ;;
            unassign:2|place:2) kind="nodes" ;;
            module:2) [[ "${pos[1]}" == show ]] && kind="modules" ;;
            node:2) case "${pos[1]}" in show|set|tag|untag|trust|remove|adopt) kind="nodes" ;; esac ;;
            lab:2) case "${pos[1]}" in stop|start) kind="nodes" ;; esac ;;
        esac
    fi
    _mesh "$@"
    if [[ -n "$kind" ]]; then
        local k names=""
        for k in $kind; do
            names+=" $("${COMP_WORDS[0]}" __complete "$k" 2>/dev/null)"
        done
        COMPREPLY+=( $(compgen -W "$names" -- "$cur") )
    fi
}
complete -F _mesh_names -o bashdefault -o default mesh
"#;

const FISH: &str = r#"complete -c mesh -n "__fish_seen_subcommand_from plan check push history assign" -f -a "(mesh __complete nodes 2>/dev/null; mesh __complete tags 2>/dev/null)"
complete -c mesh -n "__fish_seen_subcommand_from show set tag untag trust remove adopt unassign place stop start" -f -a "(mesh __complete nodes 2>/dev/null)"
complete -c mesh -n "__fish_seen_subcommand_from assign module settings config unassign place" -f -a "(mesh __complete modules 2>/dev/null)"
complete -c mesh -l node -x -a "(mesh __complete nodes 2>/dev/null)"
complete -c mesh -l exclude -x -a "(mesh __complete nodes 2>/dev/null; mesh __complete tags 2>/dev/null)"
"#;

const ZSH: &str = r#"
_mesh_nodes() {
    local -a names
    names=(${(f)"$(mesh __complete nodes 2>/dev/null)"} ${(f)"$(mesh __complete tags 2>/dev/null)"})
    _describe 'node' names
}
_mesh_modules() {
    local -a names
    names=(${(f)"$(mesh __complete modules 2>/dev/null)"})
    _describe 'module' names
}
"#;

/// clap's zsh script, its node and module arguments completed by name.
fn zsh(script: &str) -> String {
    let mut out = String::new();
    for (n, line) in script.lines().enumerate() {
        let named = if ["SELECTOR", "::nodes -- ", ":node -- ", ":name -- "]
            .iter()
            .any(|arg| line.contains(arg))
        {
            line.replace(":_default'", ":_mesh_nodes'")
        } else if line.contains(":module -- ") || line.contains(":instance -- ") {
            line.replace(":_default'", ":_mesh_modules'")
        } else {
            line.to_string()
        };
        out.push_str(&named);
        out.push('\n');
        // after `#compdef mesh`: defined before the script's last lines call `_mesh`
        if n == 0 {
            out.push_str(ZSH);
        }
    }
    out
}
