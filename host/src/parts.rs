//! Parts of the helper that a store cut short left behind.
//!
//! The operator's launcher stores the helper into a part of its own,
//! `mesh-host-<sha256>.part.<pid>`, and renames it once its digest is the helper's (the
//! operator's `push::helper`). A launcher killed mid-store (the connection dropped, the operator
//! interrupted) leaves its part, about 2.5 MB, and nothing else would ever remove it: repeated
//! drops would pile them up. A store writes its part as the bytes arrive, so a part untouched
//! for [`STALE`] is no store in progress, and an apply removes it.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// How long a part must be untouched to be taken for abandoned: far longer than any store,
/// even of the whole helper over a slow link.
pub(crate) const STALE: Duration = Duration::from_secs(60 * 60);

/// Removes the parts in `bin` untouched for [`STALE`] at `now`; the names it removed. A part it
/// cannot read or remove is left for the next apply: this never fails one.
pub(crate) fn sweep(bin: &Path, now: SystemTime) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(bin) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| is_part(n)) else {
            continue;
        };
        // the entry itself, never what a link points to
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let untouched = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok());
        if untouched.is_some_and(|t| t >= STALE) && std::fs::remove_file(entry.path()).is_ok() {
            removed.push(name.to_string());
        }
    }
    removed.sort();
    removed
}

/// Whether `name` is a part of a helper: this launcher's `.part.<pid>`, or the `.part` an older
/// mesh stored into.
fn is_part(name: &str) -> bool {
    let Some((helper, pid)) = name
        .strip_prefix("mesh-host-")
        .and_then(|rest| rest.split_once(".part"))
    else {
        return false;
    };
    !helper.is_empty()
        && (pid.is_empty()
            || pid
                .strip_prefix('.')
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aged(path: &Path, age: Duration) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
    }

    #[test]
    fn only_a_helpers_parts_untouched_for_an_hour_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path();
        let hour = Duration::from_secs(3600);
        let files = [
            ("mesh-host-abc.part.4242", 2 * hour, true),
            ("mesh-host-abc.part", 2 * hour, true),
            ("mesh-host-def.part.17", STALE, true),
            // a store in progress
            ("mesh-host-abc.part.4243", Duration::from_secs(30), false),
            // the helper itself, and names that only look like parts
            ("mesh-host-abc", 2 * hour, false),
            ("mesh-host-abc.part.12x", 2 * hour, false),
            ("mesh-host-abc.partial", 2 * hour, false),
            ("mesh-host-.part.1", 2 * hour, false),
            ("other.part.1", 2 * hour, false),
        ];
        for (name, age, _) in files {
            std::fs::write(bin.join(name), "part").unwrap();
            aged(&bin.join(name), age);
        }
        // a link named as a part is judged by its own age, never by what it points to
        let target = dir.path().join("kept");
        std::fs::write(&target, "kept").unwrap();
        aged(&target, 2 * hour);
        std::os::unix::fs::symlink(&target, bin.join("mesh-host-ghi.part.9")).unwrap();

        let removed = sweep(bin, SystemTime::now());
        let mut gone: Vec<&str> = files
            .iter()
            .filter(|(_, _, gone)| *gone)
            .map(|(n, _, _)| *n)
            .collect();
        gone.sort_unstable();
        assert_eq!(removed, gone);
        assert!(bin.join("mesh-host-ghi.part.9").is_symlink());
        for (name, _, gone) in files {
            assert_eq!(bin.join(name).exists(), !gone, "{name}");
        }
        assert!(target.exists(), "a link's target is not a part");
        assert!(sweep(&dir.path().join("missing"), SystemTime::now()).is_empty());
    }
}
