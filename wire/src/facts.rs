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
    /// What each of its words must look like: checked as the facts arrive ([`Facts::check`]).
    pub shape: FactShape,
    get: fn(&Facts) -> FactValue,
}

/// What a fact's value (each item, for a list) must look like. The facts come from the machine,
/// whose root may write anything into `/etc/os-release` or answer for the helper: a fact reaches
/// other machines' files through templates, so it is data of a known shape or it is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactShape {
    /// Letters, digits and `.`, `_`, `+`, `~`, `-`, at most 64; may be empty (not every
    /// distribution says it): `debian`, `bookworm`, `x86_64`, `6.1.0-18-amd64`.
    Word,
    /// A version: a digit first, then letters, digits, `.`, `_`, `+`, `~`, `-`, at most 32; may
    /// be empty: `12`, `24.04`.
    Version,
    /// A host name: letters, digits, `-` and `.`, at most 253.
    HostName,
    /// An interface name as the kernel allows it: printable, no space and no `/`, at most 15.
    Interface,
    /// An IPv4 address, as the kernel prints one.
    Ipv4,
    /// An IPv6 address.
    Ipv6,
    /// A number: its type already says it.
    Number,
}

impl FactShape {
    /// What the shape is, in words, for a refusal.
    pub fn said(self) -> &'static str {
        match self {
            FactShape::Word => "a word of letters, digits and . _ + ~ - (at most 64)",
            FactShape::Version => {
                "a version: a digit, then letters, digits and . _ + ~ - (at most 32)"
            }
            FactShape::HostName => "a host name of letters, digits, - and . (at most 253)",
            FactShape::Interface => "an interface name: printable, no space or / (at most 15)",
            FactShape::Ipv4 => "an IPv4 address",
            FactShape::Ipv6 => "an IPv6 address",
            FactShape::Number => "a number",
        }
    }

    /// Whether `value` has the shape.
    pub fn fits(self, value: &str) -> bool {
        let word = |c: char| c.is_ascii_alphanumeric() || "._+~-".contains(c);
        match self {
            FactShape::Word => value.len() <= 64 && value.chars().all(word),
            FactShape::Version => {
                value.is_empty()
                    || (value.len() <= 32
                        && value.starts_with(|c: char| c.is_ascii_digit())
                        && value.chars().all(word))
            }
            FactShape::HostName => {
                (1..=253).contains(&value.len())
                    && value
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
            }
            FactShape::Interface => {
                (1..=15).contains(&value.len())
                    && value.chars().all(|c| c.is_ascii_graphic() && c != '/')
            }
            FactShape::Ipv4 => value.parse::<std::net::Ipv4Addr>().is_ok(),
            FactShape::Ipv6 => value.parse::<std::net::Ipv6Addr>().is_ok(),
            FactShape::Number => true,
        }
    }
}

/// A fact whose value does not have its shape, as a machine said it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactRefused {
    pub fact: &'static str,
    /// Its value, quoted with every control character escaped.
    pub value: String,
    pub shape: FactShape,
}

impl std::fmt::Display for FactRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the fact {} = {} is refused: it must be {}",
            self.fact,
            self.value,
            self.shape.said()
        )
    }
}

impl std::error::Error for FactRefused {}

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
        shape: FactShape::Word,
        get: |f| text(&f.os.id),
    },
    FactField {
        name: "os.version",
        kind: FactKind::Text,
        meaning: "its VERSION_ID (12)",
        shape: FactShape::Version,
        get: |f| text(&f.os.version),
    },
    FactField {
        name: "os.codename",
        kind: FactKind::Text,
        meaning: "its VERSION_CODENAME (bookworm)",
        shape: FactShape::Word,
        get: |f| text(&f.os.codename),
    },
    FactField {
        name: "arch",
        kind: FactKind::Text,
        meaning: "the architecture as the kernel names it (x86_64)",
        shape: FactShape::Word,
        get: |f| text(&f.arch),
    },
    FactField {
        name: "kernel",
        kind: FactKind::Text,
        meaning: "the running kernel's release",
        shape: FactShape::Word,
        get: |f| text(&f.kernel),
    },
    FactField {
        name: "memory.mib",
        kind: FactKind::Number,
        meaning: "the machine's memory (MemTotal) in MiB",
        shape: FactShape::Number,
        get: |f| FactValue::Number(f.memory.mib),
    },
    FactField {
        name: "cpus",
        kind: FactKind::Number,
        meaning: "the CPUs a process may use",
        shape: FactShape::Number,
        get: |f| FactValue::Number(f.cpus),
    },
    FactField {
        name: "hostname",
        kind: FactKind::Text,
        meaning: "the machine's hostname, as it says it",
        shape: FactShape::HostName,
        get: |f| text(&f.hostname),
    },
    FactField {
        name: "interfaces",
        kind: FactKind::List,
        meaning: "its network interfaces but loopback, by name",
        shape: FactShape::Interface,
        get: |f| FactValue::List(f.interfaces.iter().map(|i| i.name.clone()).collect()),
    },
    FactField {
        name: "ipv4",
        kind: FactKind::List,
        meaning: "its IPv4 addresses but loopback, in interface order",
        shape: FactShape::Ipv4,
        get: |f| FactValue::List(f.interfaces.iter().flat_map(|i| i.ipv4.clone()).collect()),
    },
    FactField {
        name: "ipv6",
        kind: FactKind::List,
        meaning: "its global IPv6 addresses, in interface order",
        shape: FactShape::Ipv6,
        get: |f| FactValue::List(f.interfaces.iter().flat_map(|i| i.ipv6.clone()).collect()),
    },
];

/// The fact a template reads as `name` (`os.codename`), if there is one.
pub fn fact_field(name: &str) -> Option<&'static FactField> {
    FIELDS.iter().find(|f| f.name == name)
}

impl Facts {
    /// Whether every fact has its [`FactShape`]; the first that does not is refused, by name.
    pub fn check(&self) -> Result<(), FactRefused> {
        for field in FIELDS {
            let value = field.value(self);
            let items = match &value {
                FactValue::Text(s) => vec![s.as_str()],
                FactValue::List(l) => l.iter().map(String::as_str).collect(),
                FactValue::Number(_) => Vec::new(),
            };
            if let Some(bad) = items.into_iter().find(|i| !field.shape.fits(i)) {
                return Err(FactRefused {
                    fact: field.name,
                    value: format!("{bad:?}"),
                    shape: field.shape,
                });
            }
        }
        Ok(())
    }

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
    fn a_fact_of_the_wrong_shape_is_refused_by_name_and_its_value_shown_escaped() {
        assert_eq!(machine().check(), Ok(()));
        let refused = |change: fn(&mut Facts)| {
            let mut f = machine();
            change(&mut f);
            f.check().unwrap_err()
        };
        let r = refused(|f| f.os.codename = "$(id>/run/pwned)".into());
        assert_eq!((r.fact, r.shape), ("os.codename", FactShape::Word));
        assert!(r.to_string().contains(r#""$(id>/run/pwned)""#), "{r}");
        let r = refused(|f| f.os.codename = "bookworm\nUPSTREAM=evil".into());
        assert_eq!(r.fact, "os.codename");
        let r = refused(|f| f.os.id = "debian\u{1b}]0;owned\u{7}".into());
        assert!(
            r.to_string().contains("\\u{1b}"),
            "escaped, never obeyed: {r}"
        );
        assert!(!r.to_string().contains('\u{1b}'));
        assert_eq!(
            refused(|f| f.os.version = "twelve".into()).fact,
            "os.version"
        );
        assert_eq!(refused(|f| f.hostname = "a b".into()).fact, "hostname");
        assert_eq!(refused(|f| f.kernel = "6.1 x".into()).fact, "kernel");
        assert_eq!(
            refused(|f| f.interfaces[0].name = "eth0/../x".into()).fact,
            "interfaces"
        );
        assert_eq!(
            refused(|f| f.interfaces[1].ipv4 = vec!["10.0.0.1; rm".into()]).fact,
            "ipv4"
        );
        assert_eq!(
            refused(|f| f.interfaces[1].ipv6 = vec!["::g".into()]).fact,
            "ipv6"
        );
        // what a distribution may leave unsaid is no refusal
        let mut sid = machine();
        sid.os.version.clear();
        sid.os.codename.clear();
        assert_eq!(sid.check(), Ok(()));
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
