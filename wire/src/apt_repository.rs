//! An apt repository the mesh adds: its name, where it is (uri, suite, components) and the
//! armored key apt checks its signature with. The helper writes it as a deb822 sources file
//! whose `Signed-By:` names the key file beside it, so apt trusts that key for this repository
//! alone (never a key in apt's global trust).

use serde::{Deserialize, Serialize};

use crate::path::Refusal;

/// Where the mesh's sources files go: apt reads every `*.sources` file there.
pub const APT_SOURCES_DIR: &str = "/etc/apt/sources.list.d";
/// Where their keys go: the directory Debian keeps for keys named by `Signed-By:`.
pub const APT_KEYRINGS_DIR: &str = "/etc/apt/keyrings";

const KEY_BEGIN: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
const KEY_END: &str = "-----END PGP PUBLIC KEY BLOCK-----";

/// A repository `name` at `uri` `suite` (`bookworm`, or `./` for a flat repository, which has
/// no components), signed by `key` (an ASCII-armored OpenPGP public key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AptRepositorySpec {
    pub name: String,
    pub uri: String,
    pub suite: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<String>,
    pub key: String,
}

/// Whether `name` names a repository: lower-case letters, digits, `-` and `.`, starting with a
/// letter or digit, at most 64 (apt reads only files named of `[A-Za-z0-9_.-]`; no `/`, no
/// `..`, so both of its files stay in their directories).
pub fn valid_apt_repository_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
}

/// One word of a deb822 field: printable ASCII, no space (a space would start another value, a
/// newline another field).
fn one_word(text: &str) -> bool {
    !text.is_empty() && text.len() <= 400 && text.chars().all(|c| c.is_ascii_graphic())
}

impl AptRepositorySpec {
    /// Its sources file.
    pub fn sources_path(&self) -> String {
        format!("{APT_SOURCES_DIR}/mesh-{}.sources", self.name)
    }

    /// Its key file, named by the sources file's `Signed-By:`.
    pub fn key_path(&self) -> String {
        format!("{APT_KEYRINGS_DIR}/mesh-{}.asc", self.name)
    }

    /// The sources file's bytes, in apt's deb822 form.
    pub fn sources_text(&self) -> String {
        let mut out = format!(
            "# {} (written by mesh)\nTypes: deb\nURIs: {}\nSuites: {}\n",
            self.name, self.uri, self.suite
        );
        if !self.components.is_empty() {
            out.push_str(&format!("Components: {}\n", self.components.join(" ")));
        }
        out.push_str(&format!("Signed-By: {}\n", self.key_path()));
        out
    }

    /// The key file's bytes: the armored key, ending in one newline.
    pub fn key_text(&self) -> String {
        format!("{}\n", self.key.trim())
    }

    /// Every field checked: a name the rule above allows, a uri apt fetches from (`http`,
    /// `https`, `file`), a suite and components of one word each (a flat suite, ending in `/`,
    /// has none; any other needs one), and an armored public key.
    pub fn check(&self) -> Result<(), Refusal> {
        let refuse = |field: &str, value: &str, reason: &str| {
            Err(Refusal {
                field: field.into(),
                value: value.into(),
                reason: reason.into(),
            })
        };
        if !valid_apt_repository_name(&self.name) {
            return refuse(
                "name",
                &self.name,
                "a repository's name is lower-case letters, digits, - and . (at most 64)",
            );
        }
        let scheme_ok = ["http://", "https://", "file:/"]
            .iter()
            .any(|s| self.uri.starts_with(s));
        if !scheme_ok || !one_word(&self.uri) {
            return refuse(
                "uri",
                &self.uri,
                "a repository's uri is one word starting http://, https:// or file:/",
            );
        }
        if !one_word(&self.suite) {
            return refuse("suite", &self.suite, "a suite is one word (`./` when flat)");
        }
        let flat = self.suite.ends_with('/');
        if flat != self.components.is_empty() {
            return refuse(
                "components",
                &self.components.join(" "),
                "a flat suite (ending in /) has no components, and any other suite needs one",
            );
        }
        if let Some(bad) = self.components.iter().find(|c| !one_word(c)) {
            return refuse("components", bad, "a component is one word");
        }
        let key = self.key.trim();
        let armored = key.starts_with(KEY_BEGIN)
            && key.ends_with(KEY_END)
            && key.len() <= 64 * 1024
            && key
                .chars()
                .all(|c| c == '\n' || c == '\r' || c.is_ascii_graphic() || c == ' ');
        if !armored {
            let first = key.lines().next().unwrap_or_default();
            return refuse(
                "key",
                first,
                "a repository's key is an ASCII-armored OpenPGP public key (`gpg --armor \
                 --export`), from its BEGIN PGP PUBLIC KEY BLOCK line to its END line",
            );
        }
        Ok(())
    }
}

impl crate::SpecKind for AptRepositorySpec {
    const KIND: &'static str = "apt-repository";

    fn at(&self) -> &str {
        &self.name
    }

    // its two files are made from its checked name
    fn check_fields(&self) -> Result<(), Refusal> {
        self.check()
    }

    fn claims(&self) -> Vec<(String, &'static str)> {
        vec![
            (self.sources_path(), "apt-repository sources file"),
            (self.key_path(), "apt-repository key"),
        ]
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        crate::named(&[
            ("uri", old.uri != self.uri),
            ("suite", old.suite != self.suite),
            ("components", old.components != self.components),
            ("key", old.key.trim() != self.key.trim()),
        ])
    }

    // both files, as the helper writes them: a moved uri or a new key shows line by line
    fn plan_text(&self) -> String {
        format!(
            "{}:\n{}\n{}:\n{}",
            self.sources_path(),
            self.sources_text(),
            self.key_path(),
            self.key_text()
        )
    }

    fn removal(&self) -> String {
        format!(
            "repository {}: its sources file and key removed (or what the mesh found there put \
             back), then apt's lists updated",
            self.name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZ\n-----END PGP PUBLIC KEY BLOCK-----\n";

    fn spec(name: &str, uri: &str, suite: &str, components: &[&str]) -> AptRepositorySpec {
        AptRepositorySpec {
            name: name.into(),
            uri: uri.into(),
            suite: suite.into(),
            components: components.iter().map(|c| c.to_string()).collect(),
            key: KEY.into(),
        }
    }

    #[test]
    fn a_repository_is_one_sources_file_naming_its_own_key() {
        let r = spec("local", "file:/srv/meshrepo", "./", &[]);
        assert!(r.check().is_ok());
        assert_eq!(
            r.sources_path(),
            "/etc/apt/sources.list.d/mesh-local.sources"
        );
        assert_eq!(r.key_path(), "/etc/apt/keyrings/mesh-local.asc");
        assert_eq!(
            r.sources_text(),
            "# local (written by mesh)\nTypes: deb\nURIs: file:/srv/meshrepo\nSuites: ./\n\
             Signed-By: /etc/apt/keyrings/mesh-local.asc\n"
        );
        let d = spec(
            "deb.example",
            "https://x.example/debian",
            "bookworm",
            &["main", "contrib"],
        );
        assert!(d.check().is_ok());
        assert!(d.sources_text().contains("Components: main contrib\n"));
    }

    #[test]
    fn what_would_leave_its_field_or_its_directory_is_refused() {
        let field = |r: AptRepositorySpec| r.check().unwrap_err().field;
        for name in ["", "../x", "a/b", "A", "-x", "a..b", "a b"] {
            assert_eq!(field(spec(name, "file:/r", "./", &[])), "name", "{name}");
        }
        for uri in ["ftp://x", "file:/r\nSigned-By: /x", "https://a b", "/srv/r"] {
            assert_eq!(field(spec("r", uri, "./", &[])), "uri", "{uri}");
        }
        assert_eq!(field(spec("r", "file:/r", "a\nb", &["main"])), "suite");
        assert_eq!(field(spec("r", "file:/r", "./", &["main"])), "components");
        assert_eq!(field(spec("r", "file:/r", "bookworm", &[])), "components");
        assert_eq!(
            field(spec("r", "file:/r", "bookworm", &["a\nb"])),
            "components"
        );
        let mut unarmored = spec("r", "file:/r", "./", &[]);
        unarmored.key = "mDMEZ".into();
        assert_eq!(field(unarmored), "key");
    }
}
