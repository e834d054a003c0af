//! What a module needs of another module's setting on the same machine (`"wants"` in
//! module.json): `container-runtime` needs `sysctl`'s `ip-forward` at 1, since dockerd sets it
//! so and its containers' networking forwards. Where both are assigned to one node, the other
//! module's setting follows the want while it is at its default, and a layer that sets it
//! otherwise is refused at plan, naming both modules and the setting; so two modules never
//! fight over one thing and `check` comes clean.

use serde::Deserialize;
use serde_json::Value;

/// One setting of another module this module needs at a value.
#[derive(Debug, Clone, PartialEq)]
pub struct Want {
    /// The other module, by name.
    pub module: String,
    pub setting: String,
    pub value: Value,
    /// Why, in a sentence: said where the want sets or refuses a value.
    pub why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWant {
    module: String,
    setting: String,
    value: Value,
    why: String,
}

/// `wants[i]` of module.json, each named by its field when refused.
pub(crate) fn wants(raw: Vec<Value>, module: &str) -> Result<Vec<Want>, (String, String)> {
    let mut out: Vec<Want> = Vec::new();
    for (i, value) in raw.into_iter().enumerate() {
        let at = |f: &str| format!("wants[{i}]{f}");
        let w: RawWant = serde_json::from_value(value).map_err(|e| (at(""), e.to_string()))?;
        if w.module == module {
            return Err((at(".module"), "a module wants nothing of itself".into()));
        }
        if w.why.trim().is_empty() || w.why.contains(char::is_control) {
            return Err((at(".why"), "one sentence that says why it is needed".into()));
        }
        if out
            .iter()
            .any(|o| o.module == w.module && o.setting == w.setting)
        {
            return Err((at(".setting"), format!("{} is wanted twice", w.setting)));
        }
        out.push(Want {
            module: w.module,
            setting: w.setting,
            value: w.value,
            why: w.why,
        });
    }
    Ok(out)
}

/// Checks `m`'s wants against the modules they name: a wanted setting the other module has not
/// is refused, and so is a value its type does not admit. A module absent from the catalogue is
/// not a fault: its want then reaches nothing.
pub(crate) fn check(
    m: &super::Module,
    modules: &std::collections::BTreeMap<String, super::Module>,
) -> Result<(), super::CatalogueError> {
    for (i, w) in m.wants.iter().enumerate() {
        let Some(other) = modules.get(&w.module) else {
            continue;
        };
        let invalid = |message: String| super::CatalogueError::Invalid {
            file: m.file(),
            field: format!("wants[{i}]"),
            message,
        };
        let Some(setting) = other.setting(&w.setting) else {
            return Err(invalid(format!(
                "module {} has no setting {:?}",
                w.module, w.setting
            )));
        };
        setting
            .check(&w.value)
            .map_err(|e| invalid(format!("{}'s {}: {e}", w.module, w.setting)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::Catalogue;

    /// The catalogue with one module `w` of its own, wanting `wants` (JSON).
    fn with(wants: &str) -> Catalogue {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("w")).unwrap();
        let json = format!(
            r#"{{"name": "w", "version": "1", "description": "Wants.", "wants": {wants}}}"#
        );
        std::fs::write(dir.path().join("w/module.json"), json).unwrap();
        Catalogue::load(&[dir.path().to_path_buf()]).unwrap()
    }

    fn refusal(wants: &str) -> String {
        with(wants).module("w").unwrap_err().to_string()
    }

    #[test]
    fn the_built_in_container_runtime_wants_forwarding_of_sysctl() {
        let c = Catalogue::load(&[]).unwrap();
        let w = &c.module("container-runtime").unwrap().wants;
        assert_eq!(w.len(), 1);
        assert_eq!(
            (w[0].module.as_str(), w[0].setting.as_str()),
            ("sysctl", "ip-forward")
        );
        assert_eq!(w[0].value, serde_json::json!(1));
    }

    #[test]
    fn a_want_is_checked_against_the_module_it_names() {
        let why = r#""why": "it needs it""#;
        let ok = with(&format!(
            r#"[{{"module": "sysctl", "setting": "ip-forward", "value": 1, {why}}}]"#
        ));
        assert!(ok.module("w").is_ok());
        let e = refusal(&format!(
            r#"[{{"module": "sysctl", "setting": "ip-forwrd", "value": 1, {why}}}]"#
        ));
        assert!(
            e.contains("wants[0]") && e.contains("no setting \"ip-forwrd\""),
            "{e}"
        );
        let e = refusal(&format!(
            r#"[{{"module": "sysctl", "setting": "ip-forward", "value": "on", {why}}}]"#
        ));
        assert!(
            e.contains("wants[0]") && e.contains("sysctl's ip-forward"),
            "{e}"
        );
        // a module the catalogue lacks is no fault: the want reaches nothing
        let absent = with(&format!(
            r#"[{{"module": "elsewhere", "setting": "x", "value": 1, {why}}}]"#
        ));
        assert!(absent.module("w").is_ok());
    }

    #[test]
    fn a_want_says_why_once_and_not_of_itself() {
        let e =
            refusal(r#"[{"module": "sysctl", "setting": "ip-forward", "value": 1, "why": " "}]"#);
        assert!(e.contains("wants[0].why"), "{e}");
        let e = refusal(r#"[{"module": "w", "setting": "x", "value": 1, "why": "y"}]"#);
        assert!(e.contains("wants[0].module"), "{e}");
        let twice = r#"{"module": "sysctl", "setting": "ip-forward", "value": 1, "why": "y"}"#;
        let e = refusal(&format!("[{twice}, {twice}]"));
        assert!(e.contains("wants[1].setting"), "{e}");
        let e = refusal(
            r#"[{"module": "sysctl", "setting": "ip-forward", "value": 1, "why": "y", "when": 2}]"#,
        );
        assert!(e.contains("wants[0]") && e.contains("when"), "{e}");
    }
}
