//! What a module's templates may read, checked when the module is loaded: its settings, its
//! requirements' fields and its own provisions' fields, and where a secret may go.

use super::requirement::{Field, Need, Provision, Requirement};

/// The fields a definition may read under `name`: a requirement's, or one of the module's own
/// provisions'; with whether a module answers them (another's provision, or its own).
pub(super) fn fields_of(
    requirements: &[Requirement],
    provisions: &[Provision],
    name: &str,
) -> Option<(Vec<Field>, bool)> {
    if let Some(r) = requirements.iter().find(|q| q.name == name) {
        return Some((r.need.fields(), matches!(r.need, Need::Module { .. })));
    }
    provisions.iter().find(|p| p.name == name).map(|p| {
        let fields = match p.per_consumer {
            // its fields are each consumer's: the provider reads them all at once
            Some(_) => vec![crate::per_consumer::consumers_field()],
            None => p.fields.iter().map(|f| f.field.clone()).collect(),
        };
        (fields, true)
    })
}

/// Whether `key` (`name.field`) reads a secret field.
pub(super) fn is_secret(requirements: &[Requirement], provisions: &[Provision], key: &str) -> bool {
    key.split_once('.').is_some_and(|(name, field)| {
        fields_of(requirements, provisions, name)
            .is_some_and(|(fields, _)| fields.iter().any(|f| f.name == field && f.secret))
    })
}

/// What a definition may read: its settings, its requirements' fields and its own provisions'
/// fields. Every `${…}` is checked against it when the module is loaded, and kept in `read`.
pub(super) struct Scope<'a> {
    pub(super) settings: &'a [crate::Setting],
    pub(super) requirements: &'a [Requirement],
    pub(super) provisions: &'a [Provision],
    pub(super) read: &'a std::cell::RefCell<std::collections::BTreeSet<String>>,
}

/// Why a template's `${…}` is refused, naming what it reads (`reference`, without `${}`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ReferenceError {
    #[error("reads ${{{reference}}}, which the module does not declare (settings: {settings})")]
    Undeclared { reference: String, settings: String },
    #[error(
        "reads ${{{reference}}}, but the module has no requirement or provision {name:?} (requirements: {requirements})"
    )]
    NoRequirement {
        reference: String,
        name: String,
        requirements: String,
    },
    #[error("reads ${{{reference}}}, but {name:?} has no field {field:?}")]
    NoField {
        reference: String,
        name: String,
        field: String,
    },
    #[error(
        "reads ${{{reference}}}: a provision answers from the provider's own settings, host and mesh requirements"
    )]
    FromAModule { reference: String },
    #[error(
        "reads ${{{reference}}}, a secret field: a secret reaches a process only as a file \
         (a file resource with \"secret\": true); an environment variable needs \
         \"secret-environment\": \"<why the software cannot read a file>\" on the resource"
    )]
    Secret { reference: String },
    /// A per-consumer file reads a field a consumer does not have.
    #[error(
        "reads ${{{reference}}}, but a consumer has no field {field:?} (its fields: {fields})",
        fields = crate::per_consumer::CONSUMER_FIELDS.join(", ")
    )]
    NoConsumerField { reference: String, field: String },
}

/// Where a reference is read, which decides whether a secret may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// A file declared `"secret": true` (mode 0600 or stricter): a secret may be read.
    SecretFile,
    /// An environment variable of a resource that declares why a secret must go there.
    ExcusedEnvironment,
    /// Anything else: no secret.
    Plain,
    /// A provision's field: the provider's own settings, host and mesh requirements only.
    ProvisionValue,
}

impl Scope<'_> {
    /// Checks every reference of a template read as `reading`; the error says which and why.
    pub(super) fn check(&self, refs: Vec<&str>, reading: Reading) -> Result<(), ReferenceError> {
        for r in refs {
            self.read.borrow_mut().insert(r.to_string());
            let reference = r.to_string();
            match r.split_once('.') {
                None => {
                    if !self.settings.iter().any(|s| s.name == r) {
                        return Err(ReferenceError::Undeclared {
                            reference,
                            settings: self.names(),
                        });
                    }
                }
                Some((name, field)) => {
                    let Some((fields, from_module)) =
                        fields_of(self.requirements, self.provisions, name)
                    else {
                        return Err(ReferenceError::NoRequirement {
                            reference,
                            name: name.to_string(),
                            requirements: self.requirement_names(),
                        });
                    };
                    let found = fields.into_iter().find(|f| f.name == field);
                    let Some(f) = found else {
                        return Err(ReferenceError::NoField {
                            reference,
                            name: name.to_string(),
                            field: field.to_string(),
                        });
                    };
                    if reading == Reading::ProvisionValue && from_module {
                        return Err(ReferenceError::FromAModule { reference });
                    }
                    if f.secret
                        && !matches!(reading, Reading::SecretFile | Reading::ExcusedEnvironment)
                    {
                        return Err(ReferenceError::Secret { reference });
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether any of `refs` is a secret field.
    pub(super) fn reads_secret(&self, refs: &[&str]) -> bool {
        refs.iter()
            .any(|r| is_secret(self.requirements, self.provisions, r))
    }

    fn names(&self) -> String {
        let n: Vec<&str> = self.settings.iter().map(|s| s.name.as_str()).collect();
        if n.is_empty() {
            "none".into()
        } else {
            n.join(", ")
        }
    }

    fn requirement_names(&self) -> String {
        let n: Vec<&str> = self
            .requirements
            .iter()
            .map(|q| q.name.as_str())
            .chain(self.provisions.iter().map(|p| p.name.as_str()))
            .collect();
        if n.is_empty() {
            "none".into()
        } else {
            n.join(", ")
        }
    }
}
