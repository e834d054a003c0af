//! A process the mesh writes, runs and removes: its unit, environment and bundle.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::path::{ModeOf, Place};
use crate::unit::{UnitError, environment_text};
use crate::*;

/// A service unit the mesh writes, enables and starts; restarted when its unit or bundle changes;
/// stopped, disabled and removed with its bundle when undeclared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSpec {
    /// The unit's name, e.g. `web-server.service`.
    pub unit: String,
    /// One sentence for the unit's Description.
    pub description: String,
    /// The command and its arguments (written to ExecStart quoted, never through a shell).
    pub command: Vec<String>,
    /// The user it runs as (a name or a uid).
    pub user: String,
    /// Environment variables.
    pub environment: BTreeMap<String, String>,
    /// The variables among them that carry a secret (a definition's declared exception): their
    /// values are never shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_environment: Vec<String>,
    /// The values of the secret variables, sealed to the machine's host key: each one's value in
    /// `environment` is then empty, and only the helper on that machine opens it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sealed_environment: BTreeMap<String, Sealed>,
    /// The working directory; the bundle's directory when not said.
    pub working_directory: Option<String>,
    /// systemd's Restart= policy: `no`, `on-failure`, `always`.
    pub restart: String,
    /// Where the bundle goes: `/var/lib/mesh/bundles/<unit>`.
    pub bundle_dir: String,
    /// The files it runs, relative to the bundle directory.
    pub bundle: Vec<BundleFile>,
    /// The operator's data it may reach: paths the mesh never creates, owns or removes; one not
    /// on the machine fails the process, and one read-only is mounted so for it alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access: Vec<Access>,
    /// What says it serves, probed after every start or restart the helper made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<Ready>,
}

/// Access to a path the operator named (`mesh place`): the mesh only checks that it is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// The requirement's name, for messages.
    pub name: String,
    /// Absolute path on the machine.
    pub path: String,
    /// Read-write; otherwise the process sees it read-only (systemd `BindReadOnlyPaths=`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub write: bool,
}

/// One file of a process's bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleFile {
    /// Relative to the bundle directory, no `..`.
    pub path: String,
    pub content: String,
    pub mode: u32,
    /// The template's digest: a change of it restarts the process.
    #[serde(default)]
    pub source: String,
    /// The settings and requirement fields it reads: a change of only these costs what they
    /// declare (a `none` setting read in a bundle file does not restart the process).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, SettingUse>,
}

impl BundleFile {
    /// What a change of this bundle file's content costs its process, from what it was last
    /// made from (`None`: a new file, or one whose making is unknown). A process the mesh writes
    /// has no ExecReload: what would reload it restarts it.
    pub fn cost(&self, previous: Option<(&str, &BTreeMap<String, SettingUse>)>) -> Cost {
        match made_cost(previous, &self.source, &self.settings, Cost::Restart, false) {
            Cost::Reload => Cost::Restart,
            cost => cost,
        }
    }
}

impl ProcessSpec {
    /// What going from `old` to `self` costs the unit: anything but a bundle file's content
    /// (its command, user, environment, unit, the bundle's files and modes) restarts it; a bundle
    /// file whose content moved costs what [`BundleFile::cost`] says. `None` when nothing moved.
    pub fn change_cost(&self, old: &ProcessSpec) -> Cost {
        let same_frame = (&self.unit, &self.description, &self.command, &self.user)
            == (&old.unit, &old.description, &old.command, &old.user)
            && (&self.environment, &self.working_directory, &self.restart)
                == (&old.environment, &old.working_directory, &old.restart)
            && self.bundle_dir == old.bundle_dir
            && self
                .bundle
                .iter()
                .map(|f| (&f.path, f.mode))
                .eq(old.bundle.iter().map(|f| (&f.path, f.mode)));
        if !same_frame {
            return Cost::Restart;
        }
        self.bundle
            .iter()
            .zip(&old.bundle)
            .filter(|(now, was)| now.content != was.content)
            .map(|(now, was)| now.cost(Some((was.source.as_str(), &was.settings))))
            .max()
            .unwrap_or(Cost::None)
    }
}

impl SpecKind for ProcessSpec {
    const KIND: &'static str = "process";

    fn at(&self) -> &str {
        &self.unit
    }

    fn paths(&self) -> Vec<(String, &str, Place)> {
        let mut out = vec![("bundle-dir".into(), self.bundle_dir.as_str(), Place::Bundle)];
        if let Some(dir) = &self.working_directory {
            out.push(("working-directory".into(), dir.as_str(), Place::Machine));
        }
        for (b, file) in self.bundle.iter().enumerate() {
            out.push((
                format!("bundle[{b}].path"),
                file.path.as_str(),
                Place::InBundle,
            ));
        }
        for a in &self.access {
            out.push((a.name.clone(), a.path.as_str(), Place::Machine));
        }
        out
    }

    fn modes(&self) -> Vec<(String, u32, ModeOf)> {
        self.bundle
            .iter()
            .enumerate()
            .map(|(b, file)| (format!("bundle[{b}].mode"), file.mode, ModeOf::File))
            .collect()
    }

    fn check_unit(&self) -> Result<(), UnitError> {
        self.check()
    }

    // a process is a unit too: it may not be another's service
    fn single_as(&self) -> Option<&'static str> {
        Some("service")
    }

    fn claims(&self) -> Vec<(String, &'static str)> {
        vec![(
            format!("/etc/systemd/system/{}", self.unit),
            "process unit file",
        )]
    }

    fn access(&self) -> &[Access] {
        &self.access
    }

    fn access_mut(&mut self) -> Option<&mut Vec<Access>> {
        Some(&mut self.access)
    }

    fn environment_mut(&mut self) -> Option<Environment<'_>> {
        Some(Environment {
            secret: &self.secret_environment,
            values: &mut self.environment,
            sealed: &mut self.sealed_environment,
        })
    }

    fn sealed(&self) -> Vec<&Sealed> {
        self.sealed_environment.values().collect()
    }

    fn sealed_mut(&mut self) -> Vec<&mut Sealed> {
        self.sealed_environment.values_mut().collect()
    }

    fn unsealed_secret(&self) -> bool {
        unsealed_variable(&self.secret_environment, &self.sealed_environment)
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        let bundle_moved = !old
            .bundle
            .iter()
            .map(|f| (&f.path, &f.content, f.mode))
            .eq(self.bundle.iter().map(|f| (&f.path, &f.content, f.mode)));
        named(&[
            ("command", old.command != self.command),
            ("user", old.user != self.user),
            (
                "environment",
                old.environment != self.environment
                    || old.sealed_environment != self.sealed_environment,
            ),
            (
                "working directory",
                old.working_directory != self.working_directory,
            ),
            ("restart", old.restart != self.restart),
            ("access", old.access != self.access),
            ("bundle", bundle_moved),
            ("description", old.description != self.description),
        ])
    }

    // its command, user, environment and bundle files
    fn plan_text(&self) -> String {
        let mut out = format!(
            "command: {}\nuser: {}\nrestart: {}\n",
            serde_json::to_string(&self.command).unwrap_or_default(),
            self.user,
            self.restart
        );
        if let Some(d) = &self.working_directory {
            out.push_str(&format!("working directory: {d}\n"));
        }
        out.push_str(&environment_text(
            &self.environment,
            &self.secret_environment,
        ));
        for f in &self.bundle {
            out.push_str(&format!(
                "--- bundle {} ({:04o})\n{}",
                f.path, f.mode, f.content
            ));
            if !f.content.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }

    fn removal(&self) -> String {
        format!(
            "{}: stopped, disabled, its unit file and bundle removed",
            self.unit
        )
    }
}

/// A secret variable without its sealed value: such a declaration is never sent.
pub(crate) fn unsealed_variable(names: &[String], sealed: &BTreeMap<String, Sealed>) -> bool {
    names
        .iter()
        .any(|n| sealed.get(n).is_none_or(|s| s.age.is_empty()))
}
