//! The inventory remembers the catalogue folders it was set up with: a command with no
//! environment at all (cron, a systemd timer) reads the same modules as the operator's shell,
//! and `--catalogue` adds to them, never replaces them.

use std::path::Path;
use std::process::{Command, Stdio};

/// `mesh ARGS` with nothing of the environment but PATH: as `env -i` and cron run it.
fn bare(inventory: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mesh"))
        .arg("--inventory")
        .arg(inventory)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn module(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(
        dir.join(name).join("module.json"),
        format!(
            r#"{{"name": "{name}", "version": "1", "description": "A module of the operator's."}}"#
        ),
    )
    .unwrap();
}

#[test]
fn a_command_with_no_environment_reads_the_remembered_folders_and_catalogue_adds_to_them() {
    let dir = tempfile::tempdir().unwrap();
    let (site, extra) = (dir.path().join("site"), dir.path().join("extra"));
    module(&site, "sitewide");
    module(&extra, "oneoff");
    let inv = dir.path().join("inv.db");
    let (code, _, err) = bare(&inv, &["init", "--catalogue", site.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");

    let (code, list, err) = bare(&inv, &["module", "list"]);
    assert_eq!(code, 0, "{err}");
    assert!(list.contains("sitewide"), "{list}");
    // --catalogue adds a folder for this command, the remembered one still read
    let (_, both, _) = bare(
        &inv,
        &["module", "list", "--catalogue", extra.to_str().unwrap()],
    );
    assert!(
        both.contains("sitewide") && both.contains("oneoff"),
        "{both}"
    );
    let (_, listed, _) = bare(&inv, &["catalogue", "list"]);
    assert_eq!(listed.trim(), site.to_str().unwrap());

    // one that holds no module is refused, and nothing is remembered
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (code, _, err) = bare(&inv, &["catalogue", "add", empty.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("holds no module"), "{err}");
    let (code, _, _) = bare(&inv, &["catalogue", "add", extra.to_str().unwrap()]);
    assert_eq!(code, 0);
    let (_, listed, _) = bare(&inv, &["catalogue", "list", "--json"]);
    let folders: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(
        folders["folders"],
        serde_json::json!([site.to_str().unwrap(), extra.to_str().unwrap()])
    );

    // a remembered folder that is gone is refused by name, with the fix
    std::fs::rename(&extra, dir.path().join("moved")).unwrap();
    let (code, _, err) = bare(&inv, &["module", "list"]);
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!("mesh catalogue remove {}", extra.display())),
        "{err}"
    );
    let (code, _, err) = bare(&inv, &["catalogue", "remove", extra.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, list, _) = bare(&inv, &["module", "list"]);
    assert!(
        list.contains("sitewide") && !list.contains("oneoff"),
        "{list}"
    );
}

#[test]
fn init_with_a_folder_that_is_not_there_makes_no_inventory() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inv.db");
    let gone = dir.path().join("gone");
    let (code, _, _) = bare(&inv, &["init", "--catalogue", gone.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(!inv.exists());
}
