//! The wire's path and mode rules as module.json is checked against them: a mode written in
//! octal, and a path that may be a template (`${data.path}/x`), whose literal parts must already
//! keep the rule before anything is filled in.

use super::template::Template;
use mesh_wire::path::{self, ModeError, ModeOf, PathError, Place};

/// Why a mode or a path module.json writes is refused, quoting it as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RuleError {
    #[error("{0:?} is not an octal mode like \"0644\"")]
    NotOctal(String),
    /// The wire's rule refuses the mode (one that hands out power: setuid, every user's, …).
    #[error("{text:?}: {why}")]
    Mode { text: String, why: ModeError },
    /// The wire's rule refuses the path's literal parts (`..`, the helper's state, …).
    #[error("{text:?}: {why}")]
    Path { text: String, why: PathError },
}

/// An octal mode as module.json writes it (`"0644"`), refused if the mesh would not set it.
pub(super) fn parse_mode(text: &str, of: ModeOf) -> Result<u32, RuleError> {
    let mode = u32::from_str_radix(text.trim_start_matches("0o"), 8)
        .map_err(|_| RuleError::NotOctal(text.to_string()))?;
    path::check_mode(mode, of).map_err(|why| RuleError::Mode {
        text: text.to_string(),
        why,
    })?;
    Ok(mode)
}

/// Checks what `template` (written as `text`) says literally: each `${…}` stands for one normal
/// component, and one that starts the path for an absolute path; the rest must keep the rule
/// for `place` as it is (no `..` anywhere, not the helper's state). The resolver checks the
/// rendered path again.
pub(super) fn literal_path(text: &str, template: &Template, place: Place) -> Result<(), RuleError> {
    let filled = template.render(|_| "_".to_string());
    let shape = if text.starts_with("${") {
        format!("/{filled}")
    } else {
        filled
    };
    path::check(&shape, place).map_err(|why| RuleError::Path {
        text: text.to_string(),
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(text: &str) -> Result<(), String> {
        let t = Template::parse(text).map_err(|e| e.to_string())?;
        literal_path(text, &t, Place::Machine).map_err(|e| e.to_string())
    }

    #[test]
    fn a_template_path_keeps_the_rule_in_its_literal_parts() {
        assert_eq!(literal("${data.path}"), Ok(()));
        assert_eq!(literal("${data.path}/auth.conf"), Ok(()));
        assert_eq!(literal("/etc/store-${machine.name}.conf"), Ok(()));
        for bad in [
            "${data.path}/../../etc",
            "${data.path}/x/..",
            "${data.path}/",
            "${data.path}//x",
            "/var/lib/mesh/lock",
            "/var/lib/mesh/${me.instance}",
            "etc/${x}",
        ] {
            assert!(literal(bad).is_err(), "{bad} accepted");
        }
        let e = literal("${data.path}/../../etc").unwrap_err();
        assert!(
            e.contains("${data.path}/../../etc") && e.contains("`..`"),
            "{e}"
        );
    }

    #[test]
    fn modes_are_octal_and_hand_out_no_power() {
        assert_eq!(parse_mode("0644", ModeOf::File), Ok(0o644));
        assert_eq!(parse_mode("0o750", ModeOf::Directory), Ok(0o750));
        for (mode, of, why) in [
            ("999", ModeOf::File, "octal"),
            ("4777", ModeOf::File, "setuid"),
            ("2750", ModeOf::Directory, "setgid"),
            ("0777", ModeOf::Directory, "every user"),
            ("1644", ModeOf::File, "sticky"),
        ] {
            let e = parse_mode(mode, of).unwrap_err().to_string();
            assert!(e.contains(why), "{mode}: {e}");
        }
    }
}

#[cfg(test)]
mod parser {
    //! The rules as the parser applies them to whole module definitions: each refusal names the
    //! file and the field.

    use std::collections::BTreeMap;

    fn refusal(resources: &str) -> String {
        let json = format!(
            r#"{{"name":"demo","version":"1","description":"A demo.",
            "settings":[{{"name":"sub","type":"string","meaning":"A sub-path.","default":"x"}}],
            "requires":[{{"name":"data","kind":"host","directory":{{}}}}],
            "resources":[{resources}]}}"#
        );
        let mut shipped = BTreeMap::new();
        shipped.insert("t.txt".to_string(), b"hello\n".to_vec());
        match super::super::module::parse(
            "demo/module.json",
            "demo",
            json.as_bytes(),
            &shipped,
            "test",
        ) {
            Ok(_) => panic!("accepted: {resources}"),
            Err(e) => e.to_string(),
        }
    }

    #[track_caller]
    fn says(resources: &str, field: &str, why: &str) {
        let e = refusal(resources);
        assert!(
            e.starts_with(&format!("demo/module.json: resources[0].{field}: ")) && e.contains(why),
            "{e}"
        );
    }

    #[test]
    fn paths_that_leave_their_place_are_refused_naming_the_field() {
        let container =
            |mount: &str| format!(r#"{{"kind":"container","image":"i","mounts":[{mount}]}}"#);
        says(
            &container(r#"{"source":"${data.path}/../../etc","target":"/data"}"#),
            "mounts[0].source",
            "`..`",
        );
        says(
            &container(r#"{"source":"${data.path}","target":"/data/../x"}"#),
            "mounts[0].target",
            "`..`",
        );
        says(
            &container(r#"{"source":"/etc","target":"/data"}"#),
            "mounts[0].source",
            "names no host path",
        );
        says(
            r#"{"kind":"process","description":"d","command":["x"],"working-directory":"${data.path}/../../etc"}"#,
            "working-directory",
            "`..`",
        );
        says(
            r#"{"kind":"process","description":"d","command":["x"],"bundle":[{"path":"../x","template":"t.txt"}]}"#,
            "bundle[0].path",
            "`..`",
        );
        says(
            r#"{"kind":"file","path":"${data.path}/../../etc/passwd","template":"t.txt"}"#,
            "path",
            "`..`",
        );
        says(
            r#"{"kind":"file","path":"/var/lib/mesh/lock","template":"t.txt"}"#,
            "path",
            "the helper's own state",
        );
        says(
            r#"{"kind":"keys","path":"/var/lib/mesh/record.json","keys":{"a":1}}"#,
            "path",
            "the helper's own state",
        );
        says(
            r#"{"kind":"keys","path":"${data.path}/d.json","keys":{"a":1}}"#,
            "path",
            "written as it is",
        );
        says(
            r#"{"kind":"file","path":"/etc/a\u001bb","template":"t.txt"}"#,
            "path",
            "control character",
        );
    }

    #[test]
    fn modes_that_hand_out_power_are_refused_naming_the_field() {
        says(
            r#"{"kind":"file","path":"/etc/x","template":"t.txt","mode":"4777"}"#,
            "mode",
            "setuid",
        );
        says(
            r#"{"kind":"keys","path":"/etc/x.json","keys":{"a":1},"mode":"0666"}"#,
            "mode",
            "every user",
        );
        says(
            r#"{"kind":"process","description":"d","command":["x"],"bundle":[{"path":"x","template":"t.txt","mode":"2755"}]}"#,
            "bundle[0].mode",
            "setgid",
        );
        let e = refusal(
            r#"{"kind":"file","path":"/etc/x","template":"t.txt"}"#
                .replace("/etc/x", "/etc/x\",\"mode\":\"1644")
                .as_str(),
        );
        assert!(
            e.contains("resources[0].mode") && e.contains("sticky"),
            "{e}"
        );
        let json = br#"{"name":"demo","version":"1","description":"A demo.",
            "requires":[{"name":"data","kind":"host","directory":{"mode":"0777"}}]}"#;
        let e = match super::super::module::parse(
            "demo/module.json",
            "demo",
            json,
            &BTreeMap::new(),
            "t",
        ) {
            Ok(_) => panic!("a world-writable directory accepted"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("requires[0].directory.mode") && e.contains("every user"),
            "{e}"
        );
    }
}
