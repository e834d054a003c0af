//! A directory the mesh makes or sets the owner and mode of.

use serde::{Deserialize, Serialize};

use crate::path::{ModeOf, Place};
use crate::{SpecKind, named};

/// A directory the mesh makes (or sets owner and mode of). Made by the mesh: removed when
/// undeclared if empty, kept (and said so) while it holds anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectorySpec {
    pub path: String,
    pub owner: String,
    pub group: String,
    pub mode: u32,
}

impl SpecKind for DirectorySpec {
    const KIND: &'static str = "directory";

    fn at(&self) -> &str {
        &self.path
    }

    fn paths(&self) -> Vec<(String, &str, Place)> {
        vec![("path".into(), self.path.as_str(), Place::Machine)]
    }

    fn modes(&self) -> Vec<(String, u32, ModeOf)> {
        vec![("mode".into(), self.mode, ModeOf::Directory)]
    }

    fn claims(&self) -> Vec<(String, &'static str)> {
        vec![(self.path.clone(), "directory")]
    }

    fn made(&self) -> Option<(&str, &'static str)> {
        Some((&self.path, "directory"))
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        named(&[
            ("owner", old.owner != self.owner || old.group != self.group),
            ("mode", old.mode != self.mode),
        ])
    }

    fn plan_text(&self) -> String {
        format!(
            "directory {}:{} {:04o}\n",
            self.owner, self.group, self.mode
        )
    }

    fn removal(&self) -> String {
        format!("{}: removed if the mesh made it and it is empty", self.path)
    }
}
