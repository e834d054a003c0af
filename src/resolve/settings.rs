//! Effective settings: a module's default, then the mesh-wide layer, then the layers of the
//! node's tags, then the node's. Later wins, objects merge key by key, lists (and everything else)
//! replace. Every value says where it came from. Two tags of one node that set a key differently
//! have no order between them: that key is a conflict, unless the node's own layer sets it.

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
    /// The module's layer for a tag the node carries (named in [`Effective::tag`]).
    Tag,
    /// The node's layer.
    Node,
    /// Nothing: no default and no layer sets it.
    Unset,
    /// Another module assigned to the node needs it at a value (its `wants`), named in
    /// [`Effective::wanted`]; no layer set it.
    Wanted,
    /// Its default is a fact of the machine (`default-fact`, named in [`Effective::fact`]),
    /// as the machine last said it; no layer set it.
    Fact,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::Mesh => "mesh",
            Source::Tag => "tag",
            Source::Node => "node",
            Source::Unset => "unset",
            Source::Wanted => "wanted",
            Source::Fact => "fact",
        }
    }
}

/// One setting's effective value on one assignment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effective {
    pub name: String,
    pub value: Option<Value>,
    pub source: Source,
    /// The tag whose layer set it, when the source is a tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Tags of the node whose layers set it differently (each with its value), the node's own
    /// layer not setting it: a problem at resolution, named with both.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflict: Vec<(String, Value)>,
    /// The module of the node that needs it at a value, and why, where one does: its value then
    /// follows the want, or (a layer set it otherwise) it is refused at resolution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wanted: Option<Wanted>,
    /// The fact of the machine its default is (`host.os.codename`), where the module declares
    /// one and no layer sets it: answered ([`Source::Fact`]), or not yet said by the machine
    /// ([`Source::Unset`]: the assignment is held until a check or push asks it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fact: Option<String>,
}

/// A want of another module on the node that reaches this setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Wanted {
    pub by: String,
    pub value: Value,
    pub why: String,
}

impl Effective {
    /// Whether a layer sets it to other than what a module of the node wants: refused.
    pub fn against_want(&self) -> Option<&Wanted> {
        self.wanted
            .as_ref()
            .filter(|w| self.source != Source::Wanted && self.value.as_ref() != Some(&w.value))
    }

    /// Takes `want` (of module `by`) into account: at its default, the setting follows it.
    pub fn want(&mut self, by: &str, want: &crate::catalogue::wants::Want) {
        if matches!(self.source, Source::Default | Source::Unset | Source::Fact) {
            self.value = Some(want.value.clone());
            self.source = Source::Wanted;
        }
        self.wanted = Some(Wanted {
            by: by.to_string(),
            value: want.value.clone(),
            why: want.why.clone(),
        });
    }
}

impl Effective {
    /// Where it came from, in words: `default`, `mesh`, `tag web`, `node`, `unset`.
    pub fn source_text(&self) -> String {
        match (&self.tag, &self.wanted) {
            (Some(t), _) => format!("tag {t}"),
            (None, Some(w)) if self.source == Source::Wanted => format!("wanted by {}", w.by),
            (None, _) if self.source == Source::Fact => {
                format!("fact {}", self.fact.as_deref().unwrap_or("?"))
            }
            _ => self.source.as_str().to_string(),
        }
    }
}

/// The layers of one assignment, in the order they apply.
#[derive(Debug, Default, Clone, Copy)]
pub struct Layers<'a> {
    pub mesh: Option<&'a Layer>,
    /// The module's layers for the node's tags, each with its tag.
    pub tags: &'a [(String, Layer)],
    pub node: Option<&'a Layer>,
}

/// Every declared setting of `module` with its effective value, given its layers.
pub fn effective(module: &Module, layers: Layers) -> Vec<Effective> {
    module
        .settings
        .iter()
        .map(|s| effective_one(s, layers))
        .collect()
}

fn effective_one(setting: &Setting, layers: Layers) -> Effective {
    let mut e = Effective {
        name: setting.name.clone(),
        value: setting.default.clone(),
        source: if setting.default.is_some() {
            Source::Default
        } else {
            Source::Unset
        },
        tag: None,
        conflict: Vec::new(),
        wanted: None,
        fact: None,
    };
    let lay = |e: &mut Effective, v: &Value, from: Source| {
        e.value = Some(match e.value.take() {
            Some(under) => merge(under, v.clone()),
            None => v.clone(),
        });
        e.source = from;
    };
    if let Some(v) = layers.mesh.and_then(|l| l.get(&setting.name)) {
        lay(&mut e, v, Source::Mesh);
    }
    let by_tag: Vec<(&String, &Value)> = layers
        .tags
        .iter()
        .filter_map(|(t, l)| Some((t, l.get(&setting.name)?)))
        .collect();
    match by_tag.as_slice() {
        [] => {}
        [(tag, v), rest @ ..] if rest.iter().all(|(_, other)| other == v) => {
            lay(&mut e, v, Source::Tag);
            e.tag = Some((*tag).clone());
        }
        all => {
            e.conflict = all
                .iter()
                .map(|(t, v)| ((*t).clone(), (*v).clone()))
                .collect()
        }
    }
    if let Some(v) = layers.node.and_then(|l| l.get(&setting.name)) {
        lay(&mut e, v, Source::Node);
        e.tag = None;
        e.conflict.clear();
    }
    e
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
            default_fact: None,
            cost: Cost::None,
            choices: Vec::new(),
        };
        Module {
            reads: Default::default(),
            rollout: Default::default(),
            wants: Vec::new(),
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
        let e = effective(
            &module(),
            Layers {
                mesh: Some(&mesh),
                node: Some(&node),
                ..Layers::default()
            },
        );
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
        let e = effective(
            &module(),
            Layers {
                mesh: Some(&mesh),
                node: Some(&node),
                ..Layers::default()
            },
        );
        assert_eq!(e[3].value, Some(json!({"x": 5, "y": {"p": 1, "q": 2}})));
        assert_eq!(e[4].value, Some(json!([9])));
    }

    #[test]
    fn a_tag_layer_sits_between_the_mesh_and_the_node_and_two_tags_that_disagree_conflict() {
        let mesh = layer(json!({"a": "ma", "b": "mb", "c": "mc"}));
        let tags = vec![
            (
                "web".to_string(),
                layer(json!({"a": "web", "b": "same", "c": "web"})),
            ),
            (
                "db".to_string(),
                layer(json!({"b": "same", "c": "db", "must": "db"})),
            ),
        ];
        let node = layer(json!({"must": "n"}));
        let e = effective(
            &module(),
            Layers {
                mesh: Some(&mesh),
                tags: &tags,
                node: Some(&node),
            },
        );
        assert_eq!(
            (&e[0].value, e[0].source_text()),
            (&Some(json!("web")), "tag web".into())
        );
        assert_eq!(
            (&e[1].value, e[1].source_text()),
            (&Some(json!("same")), "tag web".into())
        );
        assert_eq!(
            e[2].value,
            Some(json!("mc")),
            "a conflict leaves what is under it"
        );
        assert_eq!(
            e[2].conflict,
            vec![("web".into(), json!("web")), ("db".into(), json!("db"))]
        );
        assert!(e[5].conflict.is_empty(), "the node's own layer settles it");
        assert_eq!(
            (&e[5].value, e[5].source),
            (&Some(json!("n")), Source::Node)
        );
        assert_eq!(e[3].source, Source::Default);
    }
}
