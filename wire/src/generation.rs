//! Generations: every push a machine applies is one, numbered per node, and the machine refuses
//! a push planned against an older one: two inventories over one machine never undo
//! each other's confirmed change without being told.
//!
//! The rule is here, on both sides of the wire, so that the operator's tests and the helper's
//! refusal are the same function.

use serde::{Deserialize, Serialize};

/// Exit status of the helper when the push was planned against an older generation than the
/// machine's (see [`stale`]): it changed nothing, and prints a [`Stale`] on stdout.
pub const EXIT_STALE: u32 = crate::HelperExit::Stale.status() as u32;

/// One generation of a node, as the machine's record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generation {
    /// 1, 2, 3 … per node; 0 is a record from before generations.
    pub number: u64,
    /// The id of the inventory that pushed it (`""`: a mesh that did not say).
    pub inventory: String,
    /// When it was applied, in seconds since the Unix epoch, by the machine's clock.
    pub pushed_at: u64,
    /// Made on the machine by `mesh-host rollback GEN` (no operator): the generation whose
    /// declaration it applied again. `inventory` is then that generation's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolled_back_to: Option<u64>,
    /// The push that made it: the sending inventory's nonce for that one push ([`Planned::push`]),
    /// so that an inventory can tell its own unanswered push from a later one made by a copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<String>,
}

/// The highest generation number a push makes: an inventory keeps numbers as SQLite integers
/// (signed, 64 bits). A record saying more was edited by hand; neither side takes it.
pub const MAX_GENERATION: u64 = i64::MAX as u64;

impl Generation {
    /// Whether `number` is one a push could have made (0: a record from before generations).
    pub fn possible(number: u64) -> bool {
        number <= MAX_GENERATION
    }

    /// Whether a push can follow `number`: the one it makes is one past it, and must be
    /// possible too. A machine at one no push can follow refuses every push, `--overwrite`
    /// included, before it changes anything (found by an attacker: it applied, and only the
    /// operator refused the answer).
    pub fn followable(number: u64) -> bool {
        number < MAX_GENERATION
    }
}

/// Which generation of the node a push was planned against, said by every push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Planned {
    /// The id of the sending inventory: the new generation is its.
    pub inventory: String,
    /// The generation the inventory last saw on the machine (its number and inventory);
    /// `None`: it has never heard from the machine, and takes it as found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<Known>,
    /// `push --overwrite`: a newer generation is replaced without asking.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overwrite: bool,
    /// The inventory's last push to this node was sent and never recorded (the operator was
    /// killed, the inventory could not be written): a newer generation the same inventory made
    /// is that push's, and is taken as known.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unrecorded: bool,
    /// This push's nonce: the generation it makes carries it ([`Generation::push`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<String>,
    /// With `unrecorded`: the nonce of that push sent and never recorded. Only the generation
    /// that push made is taken as known: a copy of the inventory (restored from a backup taken
    /// while the push was in flight) never takes a later push of the live one for its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
}

/// A generation as an inventory knows it: its number and the inventory that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    pub number: u64,
    pub inventory: String,
}

/// The helper's refusal of a push planned against an older generation than the machine's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stale {
    /// What the machine is at.
    pub machine: Generation,
    /// What the push was planned against.
    pub planned: Option<Known>,
}

/// Why a push planned as `planned` may not replace the machine's generation `machine`, if it
/// may not. It may replace only what its inventory has seen: the generation it was planned
/// against; one of its own inventory's that is older (its change was reverted, or taken back);
/// or, when its inventory's last push was sent and never recorded, the one generation that push
/// could have made (one past what it was planned against). Anything else is another inventory's
/// push, or its own from a copy of it that moved on (a file restored from a backup): a newer
/// number, the same number from another inventory, or a lower number from another inventory (a
/// machine rebuilt, or its record lost, and pushed since by someone else). A machine with no
/// generation (a record from before them, or none), a plan made by an inventory that never
/// heard from the machine, and `--overwrite` accept.
pub fn stale(machine: Option<&Generation>, planned: &Planned) -> Option<Stale> {
    let machine = machine.filter(|m| m.number > 0)?;
    if !Generation::followable(machine.number) {
        return Some(Stale {
            machine: machine.clone(),
            planned: planned.against.clone(),
        });
    }
    let against = planned.against.as_ref()?;
    if planned.overwrite {
        return None;
    }
    let seen = machine.number == against.number && machine.inventory == against.inventory;
    // a rollback made on the machine is no inventory's push: only one that saw it replaces it
    let own = machine.inventory == planned.inventory && machine.rolled_back_to.is_none();
    let own_older = own && machine.number < against.number;
    // a generation that names the push that made it must name the lost one
    let made_by_lost = match (&machine.push, &planned.lost) {
        (Some(made), Some(lost)) => made == lost,
        (Some(_), None) => false,
        (None, _) => true,
    };
    let own_lost_push = planned.unrecorded
        && own
        && made_by_lost
        && machine.number == against.number.saturating_add(1);
    (!(seen || own_older || own_lost_push)).then(|| Stale {
        machine: machine.clone(),
        planned: Some(against.clone()),
    })
}

/// The number of the generation a push planned as `planned` makes on a machine at `machine`:
/// one past the newer of the two, so that a number is never given twice.
pub fn next_number(machine: Option<&Generation>, planned: Option<&Planned>) -> u64 {
    let on_machine = machine.map_or(0, |m| m.number);
    let known = planned
        .and_then(|p| p.against.as_ref())
        .map_or(0, |s| s.number);
    on_machine.max(known).saturating_add(1)
}

impl std::fmt::Display for Stale {
    /// What the machine has, without the node's name or the fix (each side adds its own).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = &self.machine;
        let from = if m.inventory.is_empty() {
            "an inventory that did not say its id".to_string()
        } else {
            format!("inventory {}", m.inventory)
        };
        match m.rolled_back_to {
            Some(to) => write!(
                f,
                "the machine is at generation {}, rolled back on the machine to generation {to} \
                 at {} UTC; this push was planned against ",
                m.number,
                utc(m.pushed_at)
            )?,
            None => write!(
                f,
                "the machine is at generation {}, pushed at {} UTC from {from}; this push was \
                 planned against ",
                m.number,
                utc(m.pushed_at)
            )?,
        }
        match &self.planned {
            Some(p) => write!(f, "generation {} of inventory {}", p.number, p.inventory),
            None => write!(f, "no generation"),
        }
    }
}

/// `2026-12-02T01:00:00` for seconds since the epoch (UTC; civil-from-days, no time crate).
pub fn utc(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(number: u64, inventory: &str) -> Generation {
        Generation {
            number,
            inventory: inventory.into(),
            pushed_at: 1_796_000_000,
            rolled_back_to: None,
            push: None,
        }
    }

    fn plan(against: Option<(u64, &str)>, overwrite: bool) -> Planned {
        Planned {
            unrecorded: false,
            push: None,
            lost: None,
            inventory: "b".into(),
            against: against.map(|(number, i)| Known {
                number,
                inventory: i.into(),
            }),
            overwrite,
        }
    }

    #[test]
    fn a_machine_at_a_newer_generation_refuses_and_says_what_it_has() {
        let refused = stale(Some(&at(2, "a")), &plan(Some((1, "a")), false));
        let said = refused.expect("stale").to_string();
        for words in [
            "generation 2",
            "inventory a",
            "2026-11-30T00:53",
            "generation 1",
        ] {
            assert!(said.contains(words), "{said}");
        }
    }

    #[test]
    fn the_same_number_from_another_inventory_is_refused_and_from_the_same_accepted() {
        assert!(stale(Some(&at(3, "a")), &plan(Some((3, "b")), false)).is_some());
        assert!(stale(Some(&at(3, "a")), &plan(Some((3, "a")), false)).is_none());
    }

    #[test]
    fn a_lower_number_from_another_inventory_is_refused_and_an_own_older_one_accepted() {
        // rebuilt (or its record lost) and pushed since by another inventory: not ours to undo
        assert!(stale(Some(&at(2, "a")), &plan(Some((8, "b")), false)).is_some());
        assert!(stale(Some(&at(2, "a")), &plan(Some((8, "c")), false)).is_some());
        // this inventory's own older generation (its change reverted): accepted
        assert!(stale(Some(&at(1, "b")), &plan(Some((4, "b")), false)).is_none());
    }

    #[test]
    fn an_older_or_absent_generation_a_first_contact_and_overwrite_accept() {
        // a record from before generations is generation 0
        assert!(stale(Some(&at(0, "")), &plan(Some((4, "a")), false)).is_none());
        assert!(stale(None, &plan(Some((4, "a")), false)).is_none());
        // an inventory that never heard from the machine takes it as found
        assert!(stale(Some(&at(9, "a")), &plan(None, false)).is_none());
        assert!(stale(Some(&at(9, "a")), &plan(Some((1, "a")), true)).is_none());
    }

    #[test]
    fn an_unrecorded_push_of_the_same_inventory_is_taken_as_known_and_no_other() {
        let unrecorded = Planned {
            unrecorded: true,
            push: None,
            lost: None,
            ..plan(Some((1, "b")), false)
        };
        assert!(stale(Some(&at(2, "b")), &unrecorded).is_none());
        assert!(stale(Some(&at(2, "a")), &unrecorded).is_some());
        // a copy of this inventory (a backup) that moved on made more than that one push could
        assert!(stale(Some(&at(3, "b")), &unrecorded).is_some());
        assert!(stale(Some(&at(9, "b")), &unrecorded).is_some());
    }

    #[test]
    fn an_unrecorded_push_takes_as_its_own_only_the_generation_its_nonce_made() {
        let lost = Planned {
            unrecorded: true,
            lost: Some("n35".into()),
            ..plan(Some((5, "b")), false)
        };
        let made_by = |nonce: &str| Generation {
            push: Some(nonce.into()),
            ..at(6, "b")
        };
        // the lost push made it: known
        assert!(stale(Some(&made_by("n35")), &lost).is_none());
        // a later push of a copy of this inventory (the live one, this one a restored backup)
        assert!(stale(Some(&made_by("n36")), &lost).is_some());
        // a generation naming its push, and a lost push with no nonce (begun before nonces)
        let no_nonce = Planned {
            lost: None,
            ..lost.clone()
        };
        assert!(stale(Some(&made_by("n36")), &no_nonce).is_some());
        // a generation from a helper that did not name its push: as before nonces
        assert!(stale(Some(&at(6, "b")), &lost).is_none());
    }

    #[test]
    fn a_rollback_made_on_the_machine_is_refused_until_seen_even_by_its_own_inventory() {
        let rolled = Generation {
            rolled_back_to: Some(1),
            push: None,
            ..at(4, "b")
        };
        // the inventory's last push unrecorded: one past it would be taken for that push's
        let unrecorded = Planned {
            unrecorded: true,
            push: None,
            lost: None,
            ..plan(Some((3, "b")), false)
        };
        let refused = stale(Some(&rolled), &unrecorded).expect("stale");
        assert!(
            refused
                .to_string()
                .contains("generation 4, rolled back on the machine to generation 1"),
            "{refused}"
        );
        assert!(stale(Some(&rolled), &plan(Some((3, "b")), false)).is_some());
        // once a check saw it, a push planned against it goes
        assert!(stale(Some(&rolled), &plan(Some((4, "b")), false)).is_none());
    }

    #[test]
    fn a_new_generation_is_one_past_the_newer_of_machine_and_plan() {
        assert_eq!(next_number(None, None), 1);
        assert_eq!(
            next_number(Some(&at(5, "a")), Some(&plan(Some((2, "a")), true))),
            6
        );
        assert_eq!(
            next_number(Some(&at(1, "a")), Some(&plan(Some((4, "a")), false))),
            5
        );
    }

    #[test]
    fn utc_reads_as_a_calendar_date() {
        assert_eq!(utc(0), "1970-01-01T00:00:00");
        assert_eq!(utc(1_796_173_200), "2026-12-02T01:00:00");
    }

    #[test]
    fn a_generation_above_what_an_inventory_keeps_is_impossible() {
        assert!(Generation::possible(0) && Generation::possible(9_223_372_036_854_775_807));
        assert!(!Generation::possible(9_223_372_036_854_775_808));
        assert!(!Generation::possible(u64::MAX));
        // nor is one a push cannot follow taken, even with --overwrite, before anything changes
        for number in [MAX_GENERATION, MAX_GENERATION + 1] {
            let machine = Generation {
                number,
                inventory: "a".into(),
                pushed_at: 1,
                rolled_back_to: None,
                push: None,
            };
            for overwrite in [false, true] {
                let planned = Planned {
                    inventory: "a".into(),
                    against: None,
                    overwrite,
                    unrecorded: false,
                    push: None,
                    lost: None,
                };
                assert!(
                    stale(Some(&machine), &planned).is_some(),
                    "{number} {overwrite}"
                );
            }
        }
        assert!(Generation::followable(MAX_GENERATION - 1));
    }
}
