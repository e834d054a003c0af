//! Effective settings: a module's default, then the mesh-wide layer, then the node's. Later wins,
//! objects merge key by key, lists (and everything else) replace. Every value says where it came
//! from.

use serde::Serialize;
use serde_json::Value;

use crate::catalogue::{Module, Setting};
use crate::inventory::Layer;

/// Where an effective value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The module's declared default.
    Default,
    /// The module's mesh-wide layer.
    Mesh,
    /// The node's layer.
    Node,
    /// Nothing: no default and no layer sets it.
    Unset,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::Mesh => "mesh",
            Source::Node => "node",
            Source::Unset => "unset",
        }
    }
}

/// One setting's effective value on one assignment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effective {
    pub name: String,
    pub value: Option<Value>,
    pub source: Source,
}

/// Every declared setting of `module` with its effective value, given the two layers.
pub fn effective(module: &Module, mesh: Option<&Layer>, node: Option<&Layer>) -> Vec<Effective> {
    module
        .settings
        .iter()
        .map(|s| effective_one(s, mesh, node))
        .collect()
}

fn effective_one(setting: &Setting, mesh: Option<&Layer>, node: Option<&Layer>) -> Effective {
    let mut value = setting.default.clone();
    let mut source = if value.is_some() {
        Source::Default
    } else {
        Source::Unset
    };
    for (layer, from) in [(mesh, Source::Mesh), (node, Source::Node)] {
        if let Some(v) = layer.and_then(|l| l.get(&setting.name)) {
            value = Some(match value {
                Some(under) => merge(under, v.clone()),
                None => v.clone(),
            });
            source = from;
        }
    }
    Effective {
        name: setting.name.clone(),
        value,
        source,
    }
}

/// `over` laid on `under`: objects merge key by key (recursively), anything else replaces.
pub fn merge(under: Value, over: Value) -> Value {
    match (under, over) {
        (Value::Object(mut base), Value::Object(top)) => {
            for (k, v) in top {
                let merged = match base.remove(&k) {
                    Some(b) => merge(b, v),
                    None => v,
                };
                base.insert(k, merged);
            }
            Value::Object(base)
        }
        (_, over) => over,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::SettingType;
    use crate::wire::Cost;
    use serde_json::json;

    fn module() -> Module {
        let s = |name: &str, kind, default: Option<Value>| Setting {
            name: name.into(),
            kind,
            meaning: "m".into(),
            default,
            cost: Cost::None,
        };
        Module {
            reads: Default::default(),
            rollout: Default::default(),
            requires: vec![],
            provides: vec![],
            name: "m".into(),
            version: "1".into(),
            description: "d".into(),
            settings: vec![
                s("a", SettingType::String, Some(json!("da"))),
                s("b", SettingType::String, Some(json!("db"))),
                s("c", SettingType::String, Some(json!("dc"))),
                s(
                    "o",
                    SettingType::Object,
                    Some(json!({"x": 1, "y": {"p": 1}})),
                ),
                s("l", SettingType::List, Some(json!([1, 2]))),
                s("must", SettingType::String, None),
            ],
            resources: vec![],
            origin: "test".into(),
        }
    }

    fn layer(v: Value) -> Layer {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn each_value_names_its_source_and_later_layers_win() {
        let mesh = layer(json!({"b": "mb", "c": "mc"}));
        let node = layer(json!({"c": "nc"}));
        let e = effective(&module(), Some(&mesh), Some(&node));
        let got: Vec<(&str, Option<&Value>, Source)> = e
            .iter()
            .map(|e| (e.name.as_str(), e.value.as_ref(), e.source))
            .collect();
        assert_eq!(got[0], ("a", Some(&json!("da")), Source::Default));
        assert_eq!(got[1], ("b", Some(&json!("mb")), Source::Mesh));
        assert_eq!(got[2], ("c", Some(&json!("nc")), Source::Node));
        assert_eq!(got[5], ("must", None, Source::Unset));
    }

    #[test]
    fn objects_merge_and_lists_replace() {
        let mesh = layer(json!({"o": {"y": {"q": 2}}, "l": [9]}));
        let node = layer(json!({"o": {"x": 5}}));
        let e = effective(&module(), Some(&mesh), Some(&node));
        assert_eq!(e[3].value, Some(json!({"x": 5, "y": {"p": 1, "q": 2}})));
        assert_eq!(e[4].value, Some(json!([9])));
    }
}
