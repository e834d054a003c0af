//! A whole file: what it is made from, what a change costs, how it is sealed and checked.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::path::{ModeOf, Place};
use crate::*;

/// What a file or keys resource is made from, and what a change to it costs the units that read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Costing {
    /// What went into the content besides settings: the template's digest. When only settings
    /// moved, a change costs what those settings cost; otherwise it costs [`Costing::cost`].
    pub source: String,
    /// The settings the content reads, each with a digest of its value and what a change costs.
    pub settings: BTreeMap<String, SettingUse>,
    /// What a change costs when it did not come from settings alone.
    pub cost: Cost,
    /// The systemd units that read the file, and so pay its cost when it changes.
    pub units: Vec<String>,
}

/// A whole file: its content, who owns it, and what a change to it costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSpec {
    /// Absolute path on the machine.
    pub path: String,
    /// Owner: a user name (looked up on the machine with `getent`) or a numeric uid.
    pub owner: String,
    /// Group: a group name or a numeric gid.
    pub group: String,
    /// Permission bits, e.g. `0o644`.
    pub mode: u32,
    /// The full content, as UTF-8 text.
    pub content: String,
    /// A command (argv, run without a shell) that checks the machine's configuration once the
    /// new content is in place, before any unit is paid; if it fails the previous content is put
    /// back and the resource fails. E.g. `["sshd", "-t"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validate: Vec<String>,
    /// It holds secrets: the operator never shows its content (plans, diffs), and the helper
    /// never reports it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
    /// A secret file's content, sealed to the machine's own host key: then `content` is empty
    /// and only the helper on that machine can read what it writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<Sealed>,
    /// How to tell that every setting the file gives is the one in force (a daemon that takes
    /// the first value it reads lets an earlier file win): checked with `validate`, before any
    /// unit is paid; a setting shadowed puts the previous content back and fails the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective: Option<Effective>,
    #[serde(flatten)]
    pub costing: Costing,
}

/// A command that prints a daemon's effective settings, one `keyword value` a line, for its
/// whole configuration (`show`), and for a configuration of one file alone (`show` and `alone`,
/// then that file's path). Each keyword the file gives (a line's first word, not a comment)
/// must print the same values both ways, compared case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effective {
    /// E.g. `["sshd", "-T"]`.
    pub show: Vec<String>,
    /// What makes `show` read one file alone, before that file's path: e.g. `["-f"]`.
    pub alone: Vec<String>,
    /// Files read before this file's directory, searched (after the directory's files that
    /// sort before it) for the line that shadows a setting, to name it: e.g.
    /// `["/etc/ssh/sshd_config"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_first: Vec<String>,
}

/// Content sealed to one machine (age, to its `ssh-ed25519` host key), with a digest the
/// operator compares by. Sealing is random, so two sealings of one content are equal when their
/// digests are: what a plan compares and what the inventory keeps is the digest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sealed {
    /// The age-encrypted content, ASCII-armored; empty in what the inventory keeps.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub age: String,
    /// A digest of the content keyed by the operator's key (never a plain hash, which would
    /// let a guessed secret be checked against it).
    pub digest: String,
    /// The same keyed digest of each line of a secret file: what the operator asks of a
    /// provider's confirmed file (does it hold this consumer's lines?) without keeping it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
}

impl PartialEq for Sealed {
    fn eq(&self, other: &Sealed) -> bool {
        self.digest == other.digest
    }
}

impl Eq for Sealed {}

/// One setting as a file reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingUse {
    /// A digest of the effective value (never the value: some values are not for logs).
    pub digest: String,
    /// What a change of this setting costs the units that read the file.
    pub cost: Cost,
}

impl SpecKind for FileSpec {
    const KIND: &'static str = "file";

    fn at(&self) -> &str {
        &self.path
    }

    fn paths(&self) -> Vec<(String, &str, Place)> {
        vec![("path".into(), self.path.as_str(), Place::Machine)]
    }

    fn modes(&self) -> Vec<(String, u32, ModeOf)> {
        vec![("mode".into(), self.mode, ModeOf::File)]
    }

    fn claims(&self) -> Vec<(String, &'static str)> {
        vec![(self.path.clone(), "file")]
    }

    fn made(&self) -> Option<(&str, &'static str)> {
        Some((&self.path, "file"))
    }

    fn costing(&self) -> Option<&Costing> {
        Some(&self.costing)
    }

    fn sealed(&self) -> Vec<&Sealed> {
        self.sealed.iter().collect()
    }

    fn sealed_mut(&mut self) -> Vec<&mut Sealed> {
        self.sealed.iter_mut().collect()
    }

    fn unsealed_secret(&self) -> bool {
        self.secret && self.sealed.as_ref().is_none_or(|s| s.age.is_empty())
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        named(&[
            (
                "content",
                old.content != self.content || old.sealed != self.sealed,
            ),
            ("owner", old.owner != self.owner || old.group != self.group),
            ("mode", old.mode != self.mode),
            ("validate", old.validate != self.validate),
        ])
    }

    fn plan_text(&self) -> String {
        if !self.secret {
            return self.content.clone();
        }
        // a secret never reaches a plan: only that it changes
        match &self.sealed {
            // the keyed digest, so that a changed secret shows as changed, and nothing of it
            Some(s) => format!(
                "(secret: content not shown)\n(sealed; its digest {})\n",
                s.digest.get(..12).unwrap_or(&s.digest)
            ),
            None => "(secret: content not shown)\n".to_string(),
        }
    }

    fn removal(&self) -> String {
        format!(
            "{}: removed if the mesh made it, else its original restored",
            self.path
        )
    }
}
