//! An import removes nothing unless told `--replace`: a pinned host key set to null, a pin, a
//! port the host gave out or a placement the file drops is shown as a removal (`-`) and refuses
//! the document, as a dropped node does; so does a pinned key the file replaces with another.
//! And the file itself: an export that cannot be written fails, a document is a regular file of
//! bounded size, and an import with nothing to change leaves the inventory untouched.

use serde_json::{Value, json};

use crate::inventory_file::{export, fleet};
use crate::util::path_str;

const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOOvBThM0hmZ9HlF4VbIF07SMlK33m6basGSomemc5km";
const OTHER: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFsKo/U1waKRNk7KC76v2TgIM9CvmJuVohQF9lXBxtpz";

#[test]
fn what_a_file_drops_or_re_pins_is_a_removal_refused_without_replace() {
    let mesh = fleet();
    // the plan gives out the store's ports
    mesh.run(&["plan", "--all"]).ok();
    let mut pinned: Value = serde_json::from_str(&export(&mesh)).unwrap();
    pinned["nodes"][0]["host-key"] = json!(KEY);
    let file = mesh.dir.path().join("fleet.json");
    std::fs::write(&file, pinned.to_string()).unwrap();
    let added = mesh.run(&["inventory", "import", path_str(&file)]).ok();
    assert!(added.stdout.contains("~ node n1: "), "{}", added.stdout);
    let before = export(&mesh);
    let db = std::fs::read(mesh.inventory()).unwrap();

    // the attacker's unpin: host key null, n2's pin, n1's port and n3's placement dropped
    let mut dropped = pinned.clone();
    dropped["nodes"][0]["host-key"] = Value::Null;
    dropped["nodes"][0]["ports"] = json!({});
    for a in dropped["assignments"].as_array_mut().unwrap() {
        a["pins"] = json!({});
        a["placements"] = json!({});
    }
    let mut repinned = pinned.clone();
    repinned["nodes"][0]["host-key"] = json!(OTHER);
    for (doc, lines) in [
        (
            dropped,
            &[
                "- the pinned host key SHA256:",
                "- port store.listen of node n1 (2",
                "- pin db of assignment app on n2 (store@n1)",
                "- placement data of assignment app on n3 (/srv/elsewhere)",
            ][..],
        ),
        (
            repinned,
            &["- the pinned host key SHA256:", ", for another key SHA256:"],
        ),
    ] {
        std::fs::write(&file, doc.to_string()).unwrap();
        let dry = mesh
            .run(&["inventory", "import", path_str(&file), "--dry-run"])
            .ok();
        for line in lines {
            assert!(dry.stdout.contains(line), "{line} not in\n{}", dry.stdout);
        }
        assert!(
            !dry.stdout.contains("~ node n1: host-key"),
            "{}",
            dry.stdout
        );
        let refused = mesh.run(&["inventory", "import", path_str(&file)]).code(1);
        assert!(
            refused.stderr.contains("or say --replace to remove"),
            "{}",
            refused.stderr
        );
        assert!(
            std::fs::read(mesh.inventory()).unwrap() == db,
            "{lines:?}: the inventory changed"
        );
    }
    // told, the inventory is the file
    mesh.run(&["inventory", "import", path_str(&file), "--replace"])
        .ok();
    let after = export(&mesh);
    assert!(after.contains(OTHER) && !after.contains(KEY), "{after}");
    assert_ne!(after, before);
}

#[test]
fn an_export_that_cannot_be_written_fails() {
    let mesh = fleet();
    let full = mesh
        .command(&["inventory", "export"])
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&full.stderr);
    assert!(
        !full.status.success() && said.contains("cannot write the inventory's export"),
        "{full:?}"
    );
}

#[test]
fn an_import_reads_only_a_bounded_regular_file() {
    let mesh = fleet();
    let db = std::fs::read(mesh.inventory()).unwrap();
    let big = mesh.dir.path().join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(65 << 20).unwrap();
    // the large file first: a mesh that reads /dev/zero whole never comes back
    for (file, words) in [
        (path_str(&big), "larger than 64 MiB"),
        ("/dev/zero", "not a regular file"),
    ] {
        let run = mesh.run(&["inventory", "import", file]).code(1);
        assert!(run.stderr.contains(words), "{file}: {}", run.stderr);
    }
    assert!(
        std::fs::read(mesh.inventory()).unwrap() == db,
        "the inventory changed"
    );
    // stdin is read too
    let file = mesh.dir.path().join("fleet.json");
    std::fs::write(&file, export(&mesh)).unwrap();
    let piped = mesh
        .command(&["inventory", "import", "-", "--dry-run"])
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&piped.stdout).contains("nothing to import"),
        "{piped:?}"
    );
}

#[test]
fn an_import_with_nothing_to_change_does_not_write_the_inventory() {
    let mesh = fleet();
    let file = mesh.dir.path().join("fleet.json");
    std::fs::write(&file, export(&mesh)).unwrap();
    let db = std::fs::read(mesh.inventory()).unwrap();
    let again = mesh.run(&["inventory", "import", path_str(&file)]).ok();
    assert!(
        again.stdout.contains("nothing to import"),
        "{}",
        again.stdout
    );
    // SQLite counts every write in the file's header: the same bytes mean nothing was written
    assert!(
        std::fs::read(mesh.inventory()).unwrap() == db,
        "the inventory was written"
    );
}
