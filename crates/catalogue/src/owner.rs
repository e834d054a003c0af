//! A field that names a directory, and who owns it: what a contract promises, what a provider
//! answers and what a consumer may narrow it to.
//!
//! A field of type string may say `"directory": {}` (it names a directory) or
//! `"directory": {"owner": OWNER}`, where OWNER is `"consumer"` (the consuming instance's own
//! mesh login) or a user name. Then:
//!
//! - a contract's field that is a directory may promise an owner; a provider honours it by
//!   answering with a directory of that owner, and a consumer may narrow a directory the contract
//!   leaves open to one owned by a user, never name another owner than the contract promises;
//! - a provider says who owns the directory it answers with: its field's own `"owner"`, or the
//!   owner of its host directory requirement when the field's value is that requirement's
//!   `${NAME.path}`. `"consumer"` is for a provision made per consumer (each its own directory);
//! - resolution refuses a provider whose directory is not owned by the user the consumer asks.

use serde::Deserialize;

use super::requirement::{Need, Refusal, Requirement};
use super::setting::SettingType;

/// The owner that stands for the consuming instance's own mesh login.
pub const CONSUMER: &str = "consumer";

/// Who owns a directory a field names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// The consuming instance's own mesh login.
    Consumer,
    /// A user of the machine, by name.
    User(String),
}

impl Owner {
    /// The user it is for the consumer whose login is `login`.
    pub fn user<'a>(&'a self, login: &'a str) -> &'a str {
        match self {
            Owner::Consumer => login,
            Owner::User(u) => u,
        }
    }

    fn said(&self) -> String {
        match self {
            Owner::Consumer => "the consumer's own login".into(),
            Owner::User(u) => format!("user {u}"),
        }
    }
}

/// A field that names a directory, and the owner it promises or asks for (none: any owner).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Directory {
    pub owner: Option<Owner>,
}

/// `"directory"` as a field spells it.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDirectory {
    owner: Option<String>,
}

/// Reads a field's `"directory"` (at `here`, a field of type `kind`).
pub(super) fn parse(
    here: &str,
    kind: SettingType,
    raw: Option<&RawDirectory>,
) -> Result<Option<Directory>, Refusal> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let at = format!("{here}.directory");
    if kind != SettingType::String {
        return Err((at, "only a string names a directory".into()));
    }
    let owner = match raw.owner.as_deref() {
        None => None,
        Some(CONSUMER) => Some(Owner::Consumer),
        Some(u) if mesh_wire::valid_user(u) => Some(Owner::User(u.to_string())),
        Some(u) => {
            return Err((
                format!("{at}.owner"),
                format!(
                    "{u:?} is neither \"{CONSUMER}\" (the consumer's own login) nor a user name"
                ),
            ));
        }
    };
    Ok(Some(Directory { owner }))
}

/// What a provider's field says of the directory it answers with: its own `"directory"`, else
/// that of the host directory requirement whose `${NAME.path}` is its whole value. `made_per
/// consumer`: the provision is made for each consumer (only then may a directory be the
/// consumer's own).
pub(super) fn provided(
    here: &str,
    declared: Option<Directory>,
    lone_reference: Option<&str>,
    requires: &[Requirement],
    made_per_consumer: bool,
) -> Result<Option<Directory>, Refusal> {
    let required = lone_reference
        .and_then(|r| r.strip_suffix(".path"))
        .and_then(|name| requires.iter().find(|q| q.name == name))
        .and_then(|q| match &q.need {
            Need::Directory { owner, .. } => Some((q.name.as_str(), owner.as_str())),
            _ => None,
        });
    let at = format!("{here}.directory.owner");
    match (declared, required) {
        (
            Some(Directory {
                owner: Some(Owner::Consumer),
            }),
            _,
        ) if !made_per_consumer => Err((
            at,
            "only a provision made per consumer (\"per-consumer\": \"FILE\") answers each \
             consumer with a directory of its own"
                .into(),
        )),
        (Some(Directory { owner: Some(o) }), Some((name, theirs))) if o.user("") != theirs => {
            Err((
                at,
                format!(
                    "says {}, but the value is the directory {name}, which the module requires \
                     owned by {theirs}",
                    o.said()
                ),
            ))
        }
        (Some(Directory { owner: None }), Some((_, theirs))) | (None, Some((_, theirs))) => {
            Ok(Some(Directory {
                owner: Some(Owner::User(theirs.to_string())),
            }))
        }
        (declared, _) => Ok(declared),
    }
}

/// A consumer's `asked` against the contract's `promised` (both of one field); `Err` says how it
/// widens the contract.
pub fn narrows(
    asked: Option<&Directory>,
    promised: Option<&Directory>,
) -> Result<(), DirectoryError> {
    match (asked, promised) {
        (None, _) | (Some(Directory { owner: None }), Some(_)) => Ok(()),
        (Some(_), None) => Err(DirectoryError::NotPromised),
        (Some(Directory { owner: Some(o) }), Some(Directory { owner: Some(p) })) if o != p => {
            Err(DirectoryError::Widens {
                asked: o.clone(),
                promised: p.clone(),
            })
        }
        (Some(_), Some(_)) => Ok(()),
    }
}

/// A provider's `answered` against the contract's `promised`; `Err` says how it falls short.
pub fn honours(
    answered: Option<&Directory>,
    promised: Option<&Directory>,
) -> Result<(), DirectoryError> {
    match (answered, promised) {
        (_, None | Some(Directory { owner: None })) => Ok(()),
        (Some(Directory { owner: Some(a) }), Some(Directory { owner: Some(p) })) if a == p => {
            Ok(())
        }
        (answered, Some(Directory { owner: Some(p) })) => Err(DirectoryError::FallsShort {
            answered: answered.and_then(|d| d.owner.clone()),
            promised: p.clone(),
        }),
    }
}

/// Whether a provider answering `answered` gives the consumer `login` the directory it `asked`
/// for; `Err` names the owner it gives instead.
pub fn answers(
    asked: Option<&Directory>,
    answered: Option<&Directory>,
    login: &str,
) -> Result<(), DirectoryError> {
    let Some(want) = asked.and_then(|d| d.owner.as_ref()) else {
        return Ok(());
    };
    let want = want.user(login);
    match answered.and_then(|d| d.owner.as_ref()) {
        Some(given) if given.user(login) == want => Ok(()),
        Some(given) => Err(DirectoryError::OwnedByAnother {
            given: given.user(login).to_string(),
            wanted: want.to_string(),
        }),
        None => Err(DirectoryError::OwnerUnsaid {
            wanted: want.to_string(),
        }),
    }
}

/// How a directory field's owner does not match: a consumer's asking widens the contract, a
/// provider's answer falls short of it, or gives a consumer a directory of another owner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectoryError {
    #[error("names a directory, which the contract's field is not")]
    NotPromised,
    #[error(
        "asks for a directory owned by {}, which widens a contract that promises one owned by {}",
        asked.said(),
        promised.said()
    )]
    Widens { asked: Owner, promised: Owner },
    #[error(
        "answers with a directory {}, the contract promises one owned by {}",
        answered.as_ref().map_or("of no owner it says".into(), |a| format!("owned by {}", a.said())),
        promised.said()
    )]
    FallsShort {
        answered: Option<Owner>,
        promised: Owner,
    },
    #[error("a directory owned by {given}, not by {wanted}")]
    OwnedByAnother { given: String, wanted: String },
    #[error("a directory whose owner it does not say, not one owned by {wanted}")]
    OwnerUnsaid { wanted: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(owner: &str) -> RawDirectory {
        RawDirectory {
            owner: Some(owner.into()),
        }
    }

    #[test]
    fn an_owner_is_the_consumer_or_a_user_of_a_string_field() {
        let s = SettingType::String;
        assert_eq!(
            parse("f", s, Some(&raw("consumer"))).unwrap(),
            Some(Directory {
                owner: Some(Owner::Consumer)
            })
        );
        let bad = parse("f", s, Some(&raw("Web Server"))).unwrap_err();
        assert_eq!(bad.0, "f.directory.owner");
        let number = parse("f", SettingType::Integer, Some(&raw("root"))).unwrap_err();
        assert_eq!(number.0, "f.directory");
    }

    #[test]
    fn only_a_provision_made_per_consumer_answers_with_the_consumers_own_directory() {
        let own = || {
            Some(Directory {
                owner: Some(Owner::Consumer),
            })
        };
        let shared = provided("p", own(), None, &[], false).unwrap_err();
        assert!(
            shared.1.contains("only a provision made per consumer"),
            "{shared:?}"
        );
        assert_eq!(provided("p", own(), None, &[], true).unwrap(), own());
        // answered as asked: the consumer's own login, whoever the consumer is
        assert!(answers(own().as_ref(), own().as_ref(), "web_n1").is_ok());
        let none = answers(own().as_ref(), None, "web_n1").unwrap_err();
        assert_eq!(
            none,
            DirectoryError::OwnerUnsaid {
                wanted: "web_n1".into()
            }
        );
        assert!(none.to_string().contains("owned by web_n1"), "{none}");
    }
}
