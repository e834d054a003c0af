//! Per-consumer provisions: a provider that makes something for each consumer (a login and a
//! password of its own, a database of its own) rather than one answer shared by all.
//!
//! A provision declares `"per-consumer": "FILE"`, a file of the module's folder. Then:
//!
//! - its fields are answered once per consumer: a value may read `${consumer.instance}`,
//!   `${consumer.node}` and `${consumer.login}` (the consumer's mesh identity), and a generated
//!   secret is generated for each consumer, so one consumer's secret opens only its own access;
//! - FILE is a template rendered once for each consumer, reading the provision's fields as that
//!   consumer is answered (`${kv.login}`, `${kv.password}`) and `${consumer.…}`, besides the
//!   provider's own settings and requirements;
//! - the provider's own resources read the renderings of every consumer, one after another
//!   (ordered by login), as `${NAME.consumers}`: a secret string, so only a secret file holds it.
//!   That is all the provider reads of such a provision.
//!
//! A consumer taken away drops out of `${NAME.consumers}`: the provider's next push withdraws
//! what was made for it, and its plan shows that first.

use std::collections::BTreeMap;

use super::requirement::{Field, ProvidedField, Refusal};
use super::scope::{Reading, ReferenceError, Scope};
use super::setting::SettingType;
use super::template::Template;

/// What a per-consumer provision's values and template read about the consumer.
pub const CONSUMER: &str = "consumer";
/// The consumer's identity fields.
pub const CONSUMER_FIELDS: [&str; 3] = ["instance", "node", "login"];
/// The field the provider reads: every consumer's rendering.
pub const CONSUMERS: &str = "consumers";

/// The template a per-consumer provision renders for each consumer.
#[derive(Debug, Clone)]
pub struct PerConsumer {
    /// The file of the module's folder it was read from.
    pub file: String,
    pub template: Template,
}

/// The one field the provider reads of its own per-consumer provision.
pub fn consumers_field() -> Field {
    Field {
        name: CONSUMERS.to_string(),
        kind: SettingType::String,
        secret: true,
        min_length: None,
        directory: None,
    }
}

/// Whether `reference` reads the consumer's identity; `Err` when it names no such field.
pub(super) fn reads_consumer(reference: &str) -> Result<bool, ReferenceError> {
    match reference.split_once('.') {
        Some((CONSUMER, field)) if CONSUMER_FIELDS.contains(&field) => Ok(true),
        Some((CONSUMER, field)) => Err(ReferenceError::NoConsumerField {
            reference: reference.to_string(),
            field: field.to_string(),
        }),
        _ => Ok(false),
    }
}

/// Reads `provides[i]."per-consumer"` (the file `name` of the module's folder) for the provision
/// `provision` answering with `fields`; checks every reference it makes.
pub(super) fn load(
    i: usize,
    provision: &str,
    fields: &[ProvidedField],
    name: &str,
    shipped: &BTreeMap<String, Vec<u8>>,
    scope: &Scope<'_>,
) -> Result<PerConsumer, Refusal> {
    let at = format!("provides[{i}].per-consumer");
    let bytes = shipped.get(name).ok_or_else(|| {
        (
            at.clone(),
            format!("{name:?} is not a file in the module's folder"),
        )
    })?;
    let text = std::str::from_utf8(bytes)
        .map_err(|_| (at.clone(), format!("{name} is not UTF-8 text")))?;
    let template = Template::parse(text).map_err(|m| (at.clone(), format!("{name}, {m}")))?;
    for r in template.references() {
        if reads_consumer(r).map_err(|m| (at.clone(), format!("{name} {m}")))? {
            continue;
        }
        if let Some((p, field)) = r.split_once('.')
            && p == provision
        {
            if !fields.iter().any(|f| f.field.name == field) {
                return Err((
                    at,
                    format!("{name} reads ${{{r}}}, but {provision} answers no field {field:?}"),
                ));
            }
            continue;
        }
        // it ends up in the provider's secret file: anything else it may read there
        scope
            .check(vec![r], Reading::SecretFile)
            .map_err(|m| (at.clone(), format!("{name} {m}")))?;
    }
    Ok(PerConsumer {
        file: name.to_string(),
        template,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::parse_module;

    /// A provider whose provision is made per consumer from `file` (`acl` holds `text`), its
    /// login field reading `login`.
    fn provider(per_consumer: Option<&str>, login: &str, text: &str) -> Result<(), String> {
        let per = per_consumer
            .map(|f| format!(r#""per-consumer": "{f}","#))
            .unwrap_or_default();
        let json = format!(
            r#"{{"name": "p", "version": "1", "description": "A provider.",
                "provides": [{{"name": "db", {per} "fields": {{
                  "login": {{"type": "string", "value": "{login}"}},
                  "password": {{"type": "string", "secret": true, "generate": true}}}}}}],
                "resources": [{{"kind": "file", "path": "/etc/p.acl", "template": "all",
                                "secret": true, "mode": "0600"}}]}}"#
        );
        let mut shipped = BTreeMap::new();
        shipped.insert("acl".to_string(), text.as_bytes().to_vec());
        let all = if per_consumer.is_some() {
            "${db.consumers}"
        } else {
            "none"
        };
        shipped.insert("all".to_string(), all.as_bytes().to_vec());
        parse_module("p", json.as_bytes(), &shipped)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_per_consumer_provision_is_checked_by_file_and_field() {
        provider(
            Some("acl"),
            "${consumer.login}",
            "user ${db.login} >${db.password} ${consumer.node}\n",
        )
        .unwrap();
        let missing = provider(Some("nope"), "${consumer.login}", "").unwrap_err();
        assert!(
            missing.contains("p/module.json")
                && missing.contains("provides[0].per-consumer")
                && missing.contains("\"nope\" is not a file"),
            "{missing}"
        );
        let unknown = provider(Some("acl"), "${consumer.login}", "${db.host}").unwrap_err();
        assert!(
            unknown.contains("acl reads ${db.host}, but db answers no field \"host\""),
            "{unknown}"
        );
        let odd = provider(Some("acl"), "${consumer.login}", "${consumer.uid}").unwrap_err();
        assert!(odd.contains("a consumer has no field \"uid\""), "{odd}");
        let shared = provider(None, "${consumer.login}", "").unwrap_err();
        assert!(
            shared.contains("provides[0].fields.login")
                && shared.contains("only a provision made per consumer"),
            "{shared}"
        );
    }
}
