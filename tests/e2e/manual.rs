//! Help and manuals, history by selector, and a closed stderr: every
//! command's `--help` ends with examples; `mesh man` prints a man page with every command;
//! completion scripts complete node and module names through `mesh __complete`; `mesh history`
//! takes selectors and `--limit`; a stderr nobody reads does not make mesh panic.

use std::process::Stdio;

use crate::util::Mesh;

/// Every command path under `mesh`, from `mesh help`'s own listing (recursively).
fn commands(mesh: &Mesh, path: &[&str]) -> Vec<Vec<String>> {
    let mut args: Vec<&str> = path.to_vec();
    args.push("--help");
    let help = mesh.run(&args).ok().stdout;
    let mut found = Vec::new();
    let Some(listing) = help.split("Commands:\n").nth(1) else {
        return found;
    };
    // the listing ends at the first empty line; a description's second line is indented more
    for line in listing.lines().take_while(|l| !l.is_empty()) {
        let Some(name) = line
            .strip_prefix("  ")
            .filter(|l| !l.starts_with(' '))
            .and_then(|l| l.split_whitespace().next())
        else {
            continue;
        };
        if name == "help" {
            continue;
        }
        let mut sub: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        sub.push(name.to_string());
        let borrowed: Vec<&str> = sub.iter().map(String::as_str).collect();
        found.extend(commands(mesh, &borrowed));
        found.push(sub);
    }
    found
}

#[test]
fn every_command_shows_examples_and_the_man_page_has_every_command() {
    let mesh = Mesh::new();
    let all = commands(&mesh, &[]);
    assert!(all.len() > 40, "{all:?}");
    for command in &all {
        let mut args: Vec<&str> = command.iter().map(String::as_str).collect();
        args.push("--help");
        let help = mesh.run(&args).ok().stdout;
        let examples = help.split("Examples:\n").nth(1).unwrap_or_else(|| {
            panic!("mesh {} --help has no examples:\n{help}", command.join(" "))
        });
        assert!(
            examples.contains(&format!("mesh {}", command[0])) || examples.contains("mesh "),
            "{help}"
        );
    }
    let man = mesh.run(&["man"]).ok().stdout;
    assert!(
        man.starts_with(".ie") && man.contains(".TH mesh 1"),
        "{man}"
    );
    for command in &all {
        let heading = format!(".SH \"MESH {}\"", command.join(" ").to_uppercase());
        assert!(man.contains(&heading), "{heading} not in the man page");
    }
    assert!(man.contains("mesh \\-q push \\-\\-all") || man.contains("mesh -q push --all"));
}

#[test]
fn completions_offer_node_and_module_names() {
    let mesh = Mesh::new();
    for (n, address) in [("web1", "192.0.2.1"), ("db1", "192.0.2.2")] {
        mesh.run(&["node", "add", n, "--address", address]).ok();
    }
    mesh.run(&["node", "tag", "web1", "web"]).ok();
    assert_eq!(
        mesh.run(&["__complete", "nodes"]).ok().stdout,
        "db1\nweb1\n"
    );
    assert_eq!(mesh.run(&["__complete", "tags"]).ok().stdout, "@web\n");
    let modules = mesh.run(&["__complete", "modules"]).ok().stdout;
    assert!(modules.lines().any(|m| m == "motd"), "{modules}");
    // no inventory: nothing, and no error in the middle of a command line
    let none = Mesh::bare().run(&["__complete", "nodes"]).ok();
    assert_eq!((none.stdout.as_str(), none.stderr.as_str()), ("", ""));

    for shell in ["bash", "zsh", "fish"] {
        let script = mesh.run(&["completions", shell]).ok().stdout;
        assert!(script.contains("__complete"), "{shell}:\n{script}");
        assert!(script.contains("modules"), "{shell}:\n{script}");
    }
    // bash, really: `mesh push w<TAB>` and `mesh assign <TAB>`
    let script = mesh.dir.path().join("mesh.bash");
    std::fs::write(&script, mesh.run(&["completions", "bash"]).ok().stdout).unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_mesh"));
    let probe = format!(
        "source {script}; PATH={dir}:$PATH\n\
         COMP_WORDS=(mesh push w); COMP_CWORD=2; _mesh_names; echo \"push: ${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(mesh assign mo); COMP_CWORD=2; _mesh_names; echo \"assign: ${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(mesh assign motd ''); COMP_CWORD=3; _mesh_names; echo \"to: ${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(mesh ''); COMP_CWORD=1; _mesh mesh '' mesh; echo \"top: ${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(mesh _); COMP_CWORD=1; _mesh mesh _ mesh; echo \"hidden: ${{COMPREPLY[*]}}\"",
        script = script.display(),
        dir = bin.parent().unwrap().display(),
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &probe])
        .env("MESH_INVENTORY", mesh.inventory())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("push: web1\n"), "{said}");
    assert!(said.contains("assign: motd\n"), "{said}");
    assert!(said.contains("db1") && said.contains("@web"), "{said}");
    // the hidden command the scripts call is never offered
    assert!(
        said.contains("top: ") && said.contains(" catalogue "),
        "{said}"
    );
    assert!(!said.contains("__complete"), "{said}");
    assert!(said.contains("hidden: \n"), "{said}");
}

#[test]
fn history_takes_selectors_and_a_limit() {
    let mesh = Mesh::new();
    for n in ["n1", "n2", "n3"] {
        // nothing listens on port 1: every push fails at once, and is recorded
        let address = format!("127.0.0.{}", &n[1..]);
        mesh.run(&["node", "add", n, "--address", &address, "--port", "1"])
            .ok();
    }
    mesh.run(&["node", "tag", "n2", "web"]).ok();
    mesh.run(&["node", "tag", "n3", "web"]).ok();
    mesh.run(&["push", "--all"]).code(2);
    mesh.run(&["push", "n1", "n2"]).code(2);
    let nodes = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["--json", "history"];
        all.extend_from_slice(args);
        mesh.run(&all)
            .ok()
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["node"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(nodes(&[]).len(), 5);
    assert_eq!(nodes(&["@web"]), ["n2", "n3", "n2"]);
    assert_eq!(nodes(&["n1"]), ["n1", "n1"]);
    assert_eq!(nodes(&["n*", "--exclude", "@web"]), ["n1", "n1"]);
    assert_eq!(nodes(&["--limit", "2"]).len(), 2);
    assert_eq!(nodes(&["@web", "--limit", "1"]), ["n2"]);
    let text = mesh.run(&["history", "n3"]).ok().stdout;
    assert_eq!(text.lines().count(), 1, "{text}");
    let unknown = mesh.run(&["history", "nope"]).code(1);
    assert!(
        unknown.stderr.contains("no node called \"nope\""),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_closed_stderr_does_not_make_mesh_panic() {
    let mesh = Mesh::new();
    mesh.run(&["node", "add", "n1", "--address", "127.0.0.1", "--port", "1"])
        .ok();
    for (args, want) in [
        // an error said on stderr
        (&["history", "nope"][..], 1),
        // a node's progress said on stderr (-v), and its failure
        (&["-v", "push", "n1"], 2),
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = mesh
            .command(args)
            .stdout(Stdio::null())
            .stderr(writer)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(want), "{args:?}");
    }
}
