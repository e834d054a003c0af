//! The examples that end every command's `--help` (and its section of the man page): one entry
//! per command, by its path under `mesh`. A test checks that no command is left without one.

use clap::Command;

/// `(command path, examples)`: each example a command line, or a `# comment` saying what the
/// next one does.
const EXAMPLES: &[(&str, &str)] = &[
    ("init", "mesh init\nmesh --inventory ./fleet.db init"),
    (
        "node",
        "mesh node add web1 --address 10.0.0.11\nmesh node list",
    ),
    (
        "node add",
        "mesh node add web1 --address 10.0.0.11\n\
         mesh node add db1 --address db1.example.org --port 2222 --user deploy --sudo",
    ),
    (
        "node set",
        "mesh node set web1 --port 2222\nmesh node set web1 --address 10.0.0.21",
    ),
    ("node tag", "mesh node tag web1 web eu\nmesh plan @web"),
    ("node untag", "mesh node untag web1 eu"),
    ("node list", "mesh node list\nmesh node list --json"),
    ("node show", "mesh node show web1"),
    (
        "node trust",
        "mesh node trust web1\nmesh node trust web1 --fingerprint SHA256:3f0c…",
    ),
    ("node remove", "mesh node remove web1"),
    (
        "node import",
        "mesh node import hosts.ini --from ansible --dry-run\nmesh node import hosts.ini --from ansible\nmesh node import ~/.ssh/config --from ssh-config",
    ),
    (
        "node adopt",
        "mesh node adopt web1\nmesh node adopt @web --exclude web3\nmesh push web1",
    ),
    (
        "module",
        "mesh module list\nmesh module show nginx\nmesh module check ./my-modules",
    ),
    ("module list", "mesh module list"),
    ("module show", "mesh module show nginx"),
    (
        "module check",
        "mesh module check ./my-modules/app\nmesh --catalogue ./my-modules module list",
    ),
    (
        "assign",
        "mesh assign nginx web1\nmesh assign nginx @web --exclude web3\n\
         mesh assign postgres db1 --as reports",
    ),
    ("unassign", "mesh unassign nginx web1\nmesh push web1"),
    ("place", "mesh place postgres db1 data=/srv/pgdata"),
    (
        "seat",
        "mesh seat set database postgres@db1\nmesh seat list",
    ),
    ("seat set", "mesh seat set database postgres@db1"),
    ("seat list", "mesh seat list"),
    (
        "settings",
        "mesh settings show nginx\nmesh settings set nginx workers=4",
    ),
    (
        "settings show",
        "mesh settings show nginx\nmesh settings show nginx --node web1 --history",
    ),
    (
        "settings set",
        "mesh settings set nginx workers=4\n\
         # a node's own layer, dropping a key the old layer set\n\
         mesh settings set nginx --node web1 workers=8 --replace",
    ),
    (
        "settings unset",
        "mesh settings unset nginx --node web1 workers",
    ),
    ("settings clear", "mesh settings clear nginx --node web1"),
    ("config", "mesh config nginx --node web1"),
    (
        "plan",
        "mesh plan web1 --diff\nmesh plan --all\nmesh plan @web --exclude web3 --json",
    ),
    (
        "check",
        "mesh check --all\nmesh check web1 --diff\n\
         # in a script: 0 nothing would change, 4 changes, 2 a node failed\n\
         mesh -q check --all || echo \"drift: $?\"",
    ),
    (
        "push",
        "mesh push web1\nmesh push @web --exclude web3\n\
         # from cron: only the nodes behind, quiet unless something changed or failed\n\
         mesh -q push --all --behind --timeout 300\n\
         mesh push db1 --move postgres",
    ),
    (
        "facts",
        "mesh facts node1\nmesh facts @web\nmesh --json facts --all",
    ),
    (
        "history",
        "mesh history\nmesh history web1 --limit 5\nmesh history @web\nmesh history show 12",
    ),
    (
        "rollback",
        "mesh rollback web1 --to 3 --dry-run\nmesh rollback web1 --to 3\nmesh rollback --push 12\nmesh rollback web1 --release",
    ),
    (
        "history show",
        "mesh history show 12\nmesh --json history show '#12'",
    ),
    (
        "secret",
        "mesh secret set api api.token --node web1 < token.txt\nmesh secret rotate kv kv.password",
    ),
    (
        "secret set",
        "# asks without echo on a terminal; never give the value on the command line\n\
         mesh secret set api api.token --node web1\n\
         # or from a file or another program\n\
         mesh secret set api api.token --node web1 < token.txt",
    ),
    (
        "secret rotate",
        "mesh secret rotate kv kv.password\nmesh plan --all",
    ),
    (
        "inventory",
        "mesh inventory export --output fleet.json\nmesh inventory import fleet.json --dry-run",
    ),
    (
        "inventory export",
        "mesh inventory export --output fleet.json\ngit diff fleet.json",
    ),
    (
        "inventory import",
        "# into a new inventory\n\
         mesh --inventory ./new.db inventory import fleet.json\n\
         # over an existing one: see the changes first, then remove what the file lacks\n\
         mesh inventory import fleet.json --dry-run\nmesh inventory import fleet.json --replace",
    ),
    (
        "catalogue",
        "mesh init --catalogue ~/fleet/modules\nmesh catalogue add /srv/site-modules\nmesh catalogue list",
    ),
    ("catalogue add", "mesh catalogue add /srv/site-modules"),
    (
        "catalogue remove",
        "mesh catalogue remove /srv/site-modules",
    ),
    ("catalogue list", "mesh catalogue list"),
    ("lab", "mesh lab up 3\nmesh lab status\nmesh lab down"),
    (
        "lab up",
        "mesh lab up 3\nmesh lab up --release bookworm:2,trixie:2",
    ),
    ("lab down", "mesh lab down"),
    ("lab stop", "mesh lab stop node2"),
    ("lab start", "mesh lab start node2"),
    (
        "lab rebuild",
        "mesh lab rebuild node2\nmesh check node2   # found new: the plan then shows everything to add",
    ),
    ("lab status", "mesh lab status"),
    (
        "completions",
        "mesh completions bash > ~/.local/share/bash-completion/completions/mesh\n\
         mesh completions zsh > ~/.zfunc/_mesh\n\
         mesh completions fish > ~/.config/fish/completions/mesh.fish",
    ),
    (
        "man",
        "mesh man > ~/.local/share/man/man1/mesh.1\nman mesh\nmesh man --markdown > docs/commands.md",
    ),
];

/// `cmd` with every subcommand's examples after its help.
pub(crate) fn with_examples(cmd: Command) -> Command {
    apply(cmd, "")
}

fn apply(mut cmd: Command, path: &str) -> Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let sub = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |s| apply(s, &sub));
    }
    match examples(path) {
        Some(text) => cmd.after_help(format!("Examples:\n{}", indent(text))),
        None => cmd,
    }
}

/// The examples of the command at `path` ("node add").
fn examples(path: &str) -> Option<&'static str> {
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, e)| *e)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    /// Every visible command's path under `mesh`.
    fn paths(cmd: &Command, path: &str, into: &mut Vec<String>) {
        for s in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let sub = if path.is_empty() {
                s.get_name().to_string()
            } else {
                format!("{path} {}", s.get_name())
            };
            paths(s, &sub, into);
            into.push(sub);
        }
    }

    /// Every argument without a description, as `command path: argument`.
    fn undescribed(cmd: &Command, path: &str, into: &mut Vec<String>) {
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if a.get_help().is_none() && a.get_long_help().is_none() {
                into.push(format!("{path}: {}", a.get_id()));
            }
        }
        for s in cmd.get_subcommands() {
            undescribed(s, &format!("{path} {}", s.get_name()), into);
        }
    }

    #[test]
    fn every_argument_is_described() {
        let mut missing = Vec::new();
        undescribed(&super::super::Cli::command(), "mesh", &mut missing);
        assert!(
            missing.is_empty(),
            "arguments without a description: {missing:?}"
        );
    }

    #[test]
    fn every_command_has_examples_and_every_example_a_command() {
        let mut all = Vec::new();
        paths(&super::super::Cli::command(), "", &mut all);
        let missing: Vec<&String> = all.iter().filter(|p| examples(p).is_none()).collect();
        assert!(missing.is_empty(), "commands without examples: {missing:?}");
        let stray: Vec<&str> = EXAMPLES
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| !all.iter().any(|a| a == p))
            .collect();
        assert!(stray.is_empty(), "examples of no command: {stray:?}");
    }

    /// An example that does not parse would teach a command line mesh refuses.
    #[test]
    fn every_example_parses() {
        let mut wrong = Vec::new();
        for (path, text) in EXAMPLES {
            for line in text.lines().filter(|l| l.starts_with("mesh ")) {
                // the command itself, without the shell's redirections and lists
                let command = [" < ", " > ", " || ", " && ", " | "]
                    .iter()
                    .fold(line, |l, op| l.split(op).next().unwrap_or(l));
                let words: Vec<&str> = command
                    .split_whitespace()
                    .map(|w| w.trim_matches('\''))
                    .collect();
                if let Err(e) = super::super::Cli::command().try_get_matches_from(&words) {
                    wrong.push(format!("{path}: {line}: {}", e.kind()));
                }
            }
        }
        assert!(wrong.is_empty(), "examples that do not parse: {wrong:#?}");
    }
}
