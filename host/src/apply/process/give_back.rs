//! A process given back: the helper's side of [`GiveBack`] for a process's record entry (the
//! process is made in `make.rs`).

use mesh_wire::Cost;

use super::super::kind::{GiveBack, Phase};
use super::super::{Failure, Run};
use crate::confirm::Touches;
use crate::record::{ProcessEntry, Record};

impl GiveBack for ProcessEntry {
    const KIND: &'static str = "process";
    const PHASE: Phase = Phase::Units;

    fn give_back(
        &self,
        run: &mut Run<'_>,
        _id: &str,
        _record: &mut Record,
    ) -> Result<String, Failure> {
        run.give_back_process(self)
    }

    /// its unit, and every file the record says it wrote
    fn touches(&self) -> Touches {
        let bundle = std::path::Path::new(&self.bundle_dir);
        let made = self.made_from.iter().flat_map(|m| m.bundle.keys());
        let written = [self.unit_file.clone()]
            .into_iter()
            .chain(self.env_file.iter().cloned())
            .chain(made.map(|f| bundle.join(f).display().to_string()));
        Touches {
            units: vec![self.unit.clone()],
            files: written
                .map(|path| (path, vec![self.unit.clone()], Cost::Restart))
                .collect(),
            ..Touches::default()
        }
    }
}
