//! Facts: what the machine itself says it is (distribution, kernel, memory, CPUs, addresses),
//! gathered by the helper on every run and answered in its [`crate::Report`], so a template can
//! read them without another round trip. [`FIELDS`] is the one list of what a template may read
//! (`${host.os.codename}` for a `"fact"` requirement named `host`); the module checker, the
//! resolver and the guide all take the names from it.

use serde::{Deserialize, Serialize};

/// What the helper found of the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    pub os: Os,
    /// The machine's architecture as the kernel names it (`uname -m`: `x86_64`).
    pub arch: String,
    /// The running kernel's release (`uname -r`).
    pub kernel: String,
    pub memory: Memory,
    /// CPUs this machine lets a process use.
    pub cpus: u64,
    pub hostname: String,
    /// Every interface but loopback, with its addresses; empty where `ip` is missing.
    #[serde(default)]
    pub interfaces: Vec<Interface>,
}

/// The distribution, from `/etc/os-release`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Os {
    /// `ID` (`debian`).
    pub id: String,
    /// `VERSION_ID` (`12`).
    pub version: String,
    /// `VERSION_CODENAME` (`bookworm`).
    pub codename: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// `MemTotal` in MiB.
    pub mib: u64,
}

/// One network interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interface {
    pub name: String,
    /// Its IPv4 addresses, without prefix length.
    #[serde(default)]
    pub ipv4: Vec<String>,
    /// Its IPv6 addresses of global scope (link-local ones cannot be listened on without a
    /// scope), without prefix length.
    #[serde(default)]
    pub ipv6: Vec<String>,
}

/// What a fact is, as a template reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactKind {
    Text,
    Number,
    List,
}

/// A fact's value, as [`Facts::get`] answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactValue {
    Text(String),
    Number(u64),
    List(Vec<String>),
}

/// One fact a template may read.
#[derive(Debug, Clone, Copy)]
pub struct FactField {
    /// As read after the requirement's name: `os.codename`.
    pub name: &'static str,
    pub kind: FactKind,
    /// What it is, for the guide and `mesh module show`.
    pub meaning: &'static str,
    get: fn(&Facts) -> FactValue,
}

impl FactField {
    /// Its value on a machine with `facts`.
    pub fn value(&self, facts: &Facts) -> FactValue {
        (self.get)(facts)
    }
}

fn text(s: &str) -> FactValue {
    FactValue::Text(s.to_string())
}

/// Every fact a template may read.
pub const FIELDS: &[FactField] = &[
    FactField {
        name: "os.id",
        kind: FactKind::Text,
        meaning: "the distribution's ID in /etc/os-release (debian)",
        get: |f| text(&f.os.id),
    },
    FactField {
        name: "os.version",
        kind: FactKind::Text,
        meaning: "its VERSION_ID (12)",
        get: |f| text(&f.os.version),
    },
    FactField {
        name: "os.codename",
        kind: FactKind::Text,
        meaning: "its VERSION_CODENAME (bookworm)",
        get: |f| text(&f.os.codename),
    },
    FactField {
        name: "arch",
        kind: FactKind::Text,
        meaning: "the architecture as the kernel names it (x86_64)",
        get: |f| text(&f.arch),
    },
    FactField {
        name: "kernel",
        kind: FactKind::Text,
        meaning: "the running kernel's release",
        get: |f| text(&f.kernel),
    },
    FactField {
        name: "memory.mib",
        kind: FactKind::Number,
        meaning: "the machine's memory (MemTotal) in MiB",
        get: |f| FactValue::Number(f.memory.mib),
    },
    FactField {
        name: "cpus",
        kind: FactKind::Number,
        meaning: "the CPUs a process may use",
        get: |f| FactValue::Number(f.cpus),
    },
    FactField {
        name: "hostname",
        kind: FactKind::Text,
        meaning: "the machine's hostname, as it says it",
        get: |f| text(&f.hostname),
    },
    FactField {
        name: "interfaces",
        kind: FactKind::List,
        meaning: "its network interfaces but loopback, by name",
        get: |f| FactValue::List(f.interfaces.iter().map(|i| i.name.clone()).collect()),
    },
    FactField {
        name: "ipv4",
        kind: FactKind::List,
        meaning: "its IPv4 addresses but loopback, in interface order",
        get: |f| FactValue::List(f.interfaces.iter().flat_map(|i| i.ipv4.clone()).collect()),
    },
    FactField {
        name: "ipv6",
        kind: FactKind::List,
        meaning: "its global IPv6 addresses, in interface order",
        get: |f| FactValue::List(f.interfaces.iter().flat_map(|i| i.ipv6.clone()).collect()),
    },
];

/// The fact a template reads as `name` (`os.codename`), if there is one.
pub fn fact_field(name: &str) -> Option<&'static FactField> {
    FIELDS.iter().find(|f| f.name == name)
}

impl Facts {
    /// The value of fact `name`, if there is such a fact.
    pub fn get(&self, name: &str) -> Option<FactValue> {
        fact_field(name).map(|f| f.value(self))
    }

    /// The facts that differ between `self` (older) and `now`, each with both values in words.
    pub fn changed(&self, now: &Facts) -> Vec<(&'static str, String, String)> {
        FIELDS
            .iter()
            .filter_map(|f| {
                let (was, is) = (f.value(self), f.value(now));
                (was != is).then(|| (f.name, was.to_string(), is.to_string()))
            })
            .collect()
    }
}

impl std::fmt::Display for FactValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FactValue::Text(s) => write!(f, "{s:?}"),
            FactValue::Number(n) => write!(f, "{n}"),
            FactValue::List(l) => write!(f, "[{}]", l.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Facts {
        Facts {
            os: Os {
                id: "debian".into(),
                version: "12".into(),
                codename: "bookworm".into(),
            },
            arch: "x86_64".into(),
            kernel: "6.1.0".into(),
            memory: Memory { mib: 2048 },
            cpus: 2,
            hostname: "node1".into(),
            interfaces: vec![
                Interface {
                    name: "host0".into(),
                    ipv4: vec!["10.0.0.2".into()],
                    ipv6: vec![],
                },
                Interface {
                    name: "eth1".into(),
                    ipv4: vec!["192.168.1.5".into(), "192.168.1.6".into()],
                    ipv6: vec!["2001:db8::5".into()],
                },
            ],
        }
    }

    #[test]
    fn every_field_answers_from_the_facts() {
        let f = machine();
        assert_eq!(
            f.get("os.codename"),
            Some(FactValue::Text("bookworm".into()))
        );
        assert_eq!(f.get("memory.mib"), Some(FactValue::Number(2048)));
        assert_eq!(
            f.get("ipv4"),
            Some(FactValue::List(vec![
                "10.0.0.2".into(),
                "192.168.1.5".into(),
                "192.168.1.6".into()
            ]))
        );
        assert_eq!(
            f.get("interfaces"),
            Some(FactValue::List(vec!["host0".into(), "eth1".into()]))
        );
        assert_eq!(f.get("os"), None);
        assert_eq!(f.get("memory"), None);
    }

    #[test]
    fn changed_names_each_fact_that_moved_with_both_values() {
        let was = machine();
        let mut now = machine();
        now.memory.mib = 4096;
        now.interfaces[0].ipv4 = vec!["10.0.0.9".into()];
        assert_eq!(
            was.changed(&now),
            vec![
                ("memory.mib", "2048".into(), "4096".into()),
                (
                    "ipv4",
                    "[10.0.0.2, 192.168.1.5, 192.168.1.6]".into(),
                    "[10.0.0.9, 192.168.1.5, 192.168.1.6]".into()
                ),
            ]
        );
        assert!(was.changed(&was.clone()).is_empty());
    }

    #[test]
    fn field_names_are_unique_and_dotted_as_templates_read_them() {
        let mut names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FIELDS.len());
        for n in names {
            assert!(
                n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.'),
                "{n}"
            );
        }
    }
}
