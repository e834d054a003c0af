//! A kernel setting the mesh sets: its name, its value, the drop-in that keeps it over a reboot
//! and the `/proc/sys` file it is applied through at once.

use serde::{Deserialize, Serialize};

use crate::path::Refusal;

/// `name` (dotted, `net.ipv4.ip_forward`) set to `value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SysctlSpec {
    pub name: String,
    pub value: String,
}

/// Whether `name` is a sysctl name: dotted words of letters, digits, `_` and `-`, none empty
/// (so its `/proc/sys` path has no `..`, no `/` and nothing but what the name says).
pub fn valid_sysctl(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name.split('.').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// How the mesh's sysctl drop-ins' names begin.
pub const SYSCTL_DROP_IN_PREFIX: &str = "99-zz-mesh-";

impl SysctlSpec {
    /// The drop-in under `/etc/sysctl.d/` that keeps it over a reboot. systemd-sysctl reads
    /// every drop-in in the order of their names and the last value of a key wins: the mesh's
    /// sorts after the distribution's own and after Debian's `99-sysctl.conf` (its link to
    /// `/etc/sysctl.conf`), so the value the mesh sets is the one the machine boots with.
    pub fn drop_in(&self) -> String {
        format!("/etc/sysctl.d/{}{}.conf", SYSCTL_DROP_IN_PREFIX, self.name)
    }

    /// The file it is read and applied through.
    pub fn proc_path(&self) -> String {
        format!("/proc/sys/{}", self.name.replace('.', "/"))
    }

    /// The value as the kernel prints it, words separated by one space (`0 2147483647`, which
    /// the kernel prints with a tab), for comparing.
    pub fn normal(value: &str) -> String {
        value.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Its name and value checked: a name the rule above allows, a value of one line.
    pub fn check(&self) -> Result<(), Refusal> {
        if !valid_sysctl(&self.name) {
            return Err(Refusal {
                field: "name".into(),
                value: self.name.clone(),
                reason: "it is not a sysctl name like net.ipv4.ip_forward".into(),
            });
        }
        if Self::normal(&self.value).is_empty()
            || self.value.chars().any(|c| c.is_control() && c != '\t')
        {
            return Err(Refusal {
                field: "value".into(),
                value: self.value.clone(),
                reason: "a sysctl's value is one line of words, not empty".into(),
            });
        }
        Ok(())
    }
}

impl crate::SpecKind for SysctlSpec {
    const KIND: &'static str = "sysctl";

    fn at(&self) -> &str {
        &self.name
    }

    // its drop-in is made from its checked name
    fn check_fields(&self) -> Result<(), Refusal> {
        self.check()
    }

    fn claims(&self) -> Vec<(String, &'static str)> {
        vec![(self.drop_in(), "sysctl drop-in")]
    }

    fn fields_differing(&self, old: &Self) -> Vec<String> {
        crate::named(&[("value", old.value != self.value)])
    }

    fn plan_text(&self) -> String {
        format!("{} = {}\n", self.name, self.value)
    }

    fn removal(&self) -> String {
        format!(
            "{}: set back to the value the mesh found, its drop-in removed",
            self.name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, value: &str) -> SysctlSpec {
        SysctlSpec {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn a_sysctl_names_one_proc_sys_file_and_holds_one_line() {
        let s = spec("net.ipv4.ping_group_range", "0\t2147483647");
        assert!(s.check().is_ok());
        assert_eq!(s.proc_path(), "/proc/sys/net/ipv4/ping_group_range");
        assert_eq!(
            s.drop_in(),
            "/etc/sysctl.d/99-zz-mesh-net.ipv4.ping_group_range.conf"
        );
        assert_eq!(SysctlSpec::normal("0\t2147483647\n"), "0 2147483647");
        for name in ["net..x", "../../etc/shadow", "net/ipv4", "", ".net", "a b"] {
            assert_eq!(spec(name, "1").check().unwrap_err().field, "name", "{name}");
        }
        for value in ["", " ", "1\nkernel.x = 2"] {
            assert_eq!(spec("net.x", value).check().unwrap_err().field, "value");
        }
    }
}
