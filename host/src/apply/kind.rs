//! What a resource kind is to the helper: the phase it is made in, how it is made (or, in a dry
//! run, measured), and how what the record holds of it is given back. Each kind implements
//! [`Kind`] for its spec and [`GiveBack`] for its record entry, in its own file; the phase order
//! is [`Phase`]'s, written once and read by the apply loop and the give-back loop alike; the wire's
//! `each_spec` (its list of kinds) and the record's `each_entry` are the only places the helper
//! names every kind.

use mesh_wire::{Outcome, Resource, Spec, each_spec};

use super::{ApplyError, Failure, Run};
use crate::adopt::Adopt;
use crate::confirm::Touches;
use crate::record::{Entry, Paths, Record, each_entry};

/// The phases of an apply; their order is [`Phase::ORDER`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// apt's repositories (and one `apt-get update` after them)
    Repositories,
    Packages,
    Groups,
    /// a directory's, a file's or a process's owner may be one this run makes
    Users,
    Directories,
    Files,
    /// put in their state once every file is written and paid for
    Units,
}

impl Phase {
    /// The order an apply runs the phases in, written once. What is no longer declared is given
    /// back in the reverse order: units stopped before the files they read, files before the
    /// directories that hold them, a user after what runs as it and the files it owns, its
    /// groups after it.
    pub(super) const ORDER: [Phase; 7] = [
        Phase::Repositories,
        Phase::Packages,
        Phase::Groups,
        Phase::Users,
        Phase::Directories,
        Phase::Files,
        Phase::Units,
    ];

    /// Where the phase is in [`Phase::ORDER`].
    pub(super) fn rank(self) -> usize {
        Self::ORDER
            .iter()
            .position(|p| *p == self)
            .unwrap_or(Self::ORDER.len())
    }
}

/// A kind of declared resource, implemented by its spec.
pub(super) trait Kind {
    /// When it is made.
    const PHASE: Phase;

    /// Makes it as declared (or only measures, in a dry run) and says what was done.
    fn apply(
        &self,
        run: &mut Run<'_>,
        resource: &Resource,
        record: &mut Record,
    ) -> Result<Outcome, Failure>;

    /// The unit it puts in a state, asked about once, before the run begins.
    fn unit(&self) -> Option<String> {
        None
    }

    /// Its unit pays what its files owe with its own restart or start (`once`).
    fn pays_its_files(&self) -> bool {
        false
    }

    /// Its unit is declared stopped: what its files owe is not paid on its way down.
    fn stopped_unit(&self) -> Option<&str> {
        None
    }

    /// Takes what the machine has of it into `adopt`'s fresh record, saying what is lost; by
    /// default nothing is taken (it is taken as found at the next push).
    fn adopt(&self, adopt: &mut Adopt<'_>, id: &str) {
        let _ = (adopt, id);
    }

    /// What applying it may touch, kept before a push that awaits confirmation and put back
    /// by its revert. Every kind says (there is no default): one added later cannot be
    /// forgotten by the revert. What the push makes is also taken off by the revert as
    /// undeclaring it would ([`give_back_made`](super::give_back_made)).
    fn touches(&self, paths: &Paths) -> Touches;
}

/// What the record holds of a kind: given back when it is no longer declared.
pub(super) trait GiveBack {
    /// Its kind, as the declaration names it.
    const KIND: &'static str;

    /// When it is given back: the phase it is made in, given back in the reverse order.
    const PHASE: Phase;

    /// Gives it back (or only measures, in a dry run) and says what was done. Anything it owes
    /// its readers is owed (durably) before the machine is changed.
    fn give_back(
        &self,
        run: &mut Run<'_>,
        id: &str,
        record: &mut Record,
    ) -> Result<String, Failure>;

    /// A revert after an unconfirmed push puts it back as the record kept it; containers and
    /// packages are left as the push made them (docs/guide.md says so).
    const REVERTED: bool = true;

    /// Where it is and the folders the mesh made for it, if giving it back removes it (a file,
    /// directory or link the mesh made): a folder it still lies in goes, once empty, with it.
    fn parents_made(&mut self) -> Option<(&str, &mut Vec<String>)> {
        None
    }

    /// What giving it back (or changing it) may touch, kept before a push that awaits
    /// confirmation; every kind says, as for [`Kind::touches`].
    fn touches(&self) -> Touches;
}

fn phase_of<K: Kind>(_: &K) -> Phase {
    K::PHASE
}

fn kind_of<G: GiveBack>(_: &G) -> &'static str {
    G::KIND
}

fn give_back_phase_of<G: GiveBack>(_: &G) -> Phase {
    G::PHASE
}

/// The phase `spec` is made in.
pub(super) fn phase(spec: &Spec) -> Phase {
    each_spec!(spec, s => phase_of(s))
}

/// The phase what `entry` records is given back in.
pub(super) fn give_back_phase(entry: &Entry) -> Phase {
    each_entry!(entry, e => give_back_phase_of(e))
}

/// Makes `resource` as declared, whatever its kind.
pub(super) fn apply(
    run: &mut Run<'_>,
    resource: &Resource,
    record: &mut Record,
) -> Result<Outcome, ApplyError> {
    each_spec!(&resource.spec, s => s.apply(run, resource, record))
        .map_err(|e| e.of(&resource.id, resource.spec.kind()))
}

/// Gives back what `entry` (the record's, for `id`) says the mesh did, whatever its kind.
pub(super) fn give_back(
    run: &mut Run<'_>,
    id: &str,
    entry: &Entry,
    record: &mut Record,
) -> Result<String, ApplyError> {
    each_entry!(entry, e => e.give_back(run, id, record).map_err(|f| f.of(id, kind_of(e))))
}

/// Takes what the machine has of `resource` into `adopt`'s fresh record, whatever its kind.
pub(crate) fn adopt(adopt: &mut Adopt<'_>, resource: &Resource) {
    each_spec!(&resource.spec, s => s.adopt(adopt, &resource.id))
}

/// What applying `spec` may touch, whatever its kind.
pub(crate) fn touches(spec: &Spec, paths: &Paths) -> Touches {
    each_spec!(spec, s => s.touches(paths))
}

/// What giving back (or changing) what `entry` records may touch, whatever its kind.
pub(crate) fn touches_recorded(entry: &Entry) -> Touches {
    each_entry!(entry, e => e.touches())
}

fn reverted_of<G: GiveBack>(_: &G) -> bool {
    G::REVERTED
}

/// Whether a revert puts what `entry` records back as the record kept it.
pub(crate) fn reverted(entry: &Entry) -> bool {
    each_entry!(entry, e => reverted_of(e))
}

/// Where what `entry` records is and the folders the mesh made for it, if giving it back
/// removes it.
pub(crate) fn parents_made(entry: &mut Entry) -> Option<(&str, &mut Vec<String>)> {
    each_entry!(entry, e => e.parents_made())
}

/// The unit `spec` puts in a state, if any.
pub(super) fn unit(spec: &Spec) -> Option<String> {
    each_spec!(spec, s => s.unit())
}

/// Whether `spec`'s unit pays what its files owe with its own restart or start.
pub(super) fn pays_its_files(spec: &Spec) -> bool {
    each_spec!(spec, s => s.pays_its_files())
}

/// The unit `spec` declares stopped, if any.
pub(super) fn stopped_unit(spec: &Spec) -> Option<&str> {
    each_spec!(spec, s => s.stopped_unit())
}
