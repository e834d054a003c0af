//! Gathers the machine's [`Facts`] for every report: from `/etc/os-release` and `/proc`, and
//! the addresses from the kernel ([`crate::interfaces`]), with no command run. A fact that
//! cannot be read is left empty rather than failing the run: facts describe, they do not apply.

use std::fs;

use mesh_wire::{Facts, Memory, Os};

/// What this machine says it is now.
pub(crate) fn gather() -> Facts {
    Facts {
        os: os(&fs::read_to_string("/etc/os-release")
            .or_else(|_| fs::read_to_string("/usr/lib/os-release"))
            .unwrap_or_default()),
        arch: std::env::consts::ARCH.to_string(),
        kernel: first_line("/proc/sys/kernel/osrelease"),
        memory: Memory {
            mib: mem_total_mib(&fs::read_to_string("/proc/meminfo").unwrap_or_default()),
        },
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get() as u64),
        hostname: first_line("/proc/sys/kernel/hostname"),
        interfaces: crate::interfaces::gather(),
    }
}

/// The machine's SSH host public keys, `TYPE BASE64` each, sorted: what tells this machine from
/// another one later given its address.
pub(crate) fn host_keys(root: &crate::files::Root) -> Vec<String> {
    let dir = std::path::Path::new("/etc/ssh");
    let mut keys: Vec<String> = crate::signs::entries(&root.real(dir))
        .into_iter()
        .filter(|name| name.starts_with("ssh_host_") && name.ends_with("_key.pub"))
        .filter_map(|name| root.read(&dir.join(name)).ok().flatten())
        .filter_map(|found| {
            let text = String::from_utf8_lossy(&found.bytes).into_owned();
            let mut words = text.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect();
    keys.sort();
    keys
}

/// The machine's hostname, as it says it.
pub(crate) fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

fn first_line(path: &str) -> String {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// `ID`, `VERSION_ID` and `VERSION_CODENAME` of an os-release file (values maybe quoted).
fn os(text: &str) -> Os {
    let mut os = Os::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value
            .trim()
            .trim_matches('"')
            .trim_matches('\'')
            .to_string();
        match key.trim() {
            "ID" => os.id = value,
            "VERSION_ID" => os.version = value,
            "VERSION_CODENAME" => os.codename = value,
            _ => {}
        }
    }
    os
}

fn mem_total_mib(meminfo: &str) -> u64 {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_values_are_read_quoted_or_not() {
        let os = os(
            "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\n",
        );
        assert_eq!(
            (os.id.as_str(), os.version.as_str(), os.codename.as_str()),
            ("debian", "12", "bookworm")
        );
    }

    #[test]
    fn memory_is_mem_total_in_mib() {
        assert_eq!(
            mem_total_mib("MemTotal:        2048000 kB\nMemFree: 1 kB\n"),
            2000
        );
        assert_eq!(mem_total_mib("garbage"), 0);
    }
}
