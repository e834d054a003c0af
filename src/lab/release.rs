//! Which Debian release each lab machine runs: `--release trixie` (every machine), or a mix,
//! `--release bookworm:2,trixie:2` (node1 and node2 Debian 12, node3 and node4 Debian 13). One
//! image is built per release, with the same software in each.

/// The releases the lab boots: Debian's suite name and its version.
pub const RELEASES: [(&str, &str); 2] = [("bookworm", "12"), ("trixie", "13")];

/// The release a machine gets where none is asked for.
pub const DEFAULT: &str = "bookworm";

/// A `--release` the lab cannot follow.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReleaseError {
    #[error("--release {0:?}: the lab boots {known}, not {1:?}", known = known())]
    Unknown(String, String),
    #[error("--release {0:?}: {1:?} is not a number of machines (1 to 240)")]
    Count(String, String),
    #[error(
        "--release {spec:?} names {named} machines, but {asked} were asked for: give the count \
         once (`mesh lab up --release {spec}`), or one release without counts"
    )]
    Disagrees {
        spec: String,
        named: u32,
        asked: u32,
    },
    #[error("how many machines? `mesh lab up N`, or counts in --release (bookworm:2,trixie:2)")]
    NoCount,
}

fn known() -> String {
    RELEASES
        .iter()
        .map(|(suite, version)| format!("{suite} (Debian {version})"))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The suite of each machine, node1 first: `n` machines (or as many as `spec` counts), each of
/// the release `spec` gives it. A release named by version (`13`) is taken as its suite.
pub fn per_machine(n: Option<u32>, spec: Option<&str>) -> Result<Vec<String>, ReleaseError> {
    let spec = spec.unwrap_or(DEFAULT);
    let mut suites: Vec<String> = Vec::new();
    let mut counted = false;
    for part in spec.split(',').map(str::trim) {
        let (name, count) = match part.split_once(':') {
            Some((name, count)) => (name, Some(count)),
            None => (part, None),
        };
        let suite = RELEASES
            .iter()
            .find(|(s, v)| *s == name || *v == name)
            .map(|(s, _)| *s)
            .ok_or_else(|| ReleaseError::Unknown(spec.to_string(), name.to_string()))?;
        match count {
            Some(c) => {
                let k: u32 = c
                    .parse()
                    .ok()
                    .filter(|k| (1..=240).contains(k))
                    .ok_or_else(|| ReleaseError::Count(spec.to_string(), c.to_string()))?;
                counted = true;
                suites.extend(std::iter::repeat_n(suite.to_string(), k as usize));
            }
            None if spec.contains(',') => {
                return Err(ReleaseError::Count(spec.to_string(), String::new()));
            }
            None => suites.push(suite.to_string()),
        }
    }
    match (n, counted) {
        (Some(n), false) => Ok(vec![suites[0].clone(); n as usize]),
        (None, false) => Err(ReleaseError::NoCount),
        (Some(n), true) if n as usize != suites.len() => Err(ReleaseError::Disagrees {
            spec: spec.to_string(),
            named: suites.len() as u32,
            asked: n,
        }),
        (_, true) => Ok(suites),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_release_is_every_machine_and_counts_make_a_mix_in_node_order() {
        assert_eq!(
            per_machine(Some(2), None).unwrap(),
            ["bookworm", "bookworm"]
        );
        assert_eq!(per_machine(Some(3), Some("trixie")).unwrap(), ["trixie"; 3]);
        assert_eq!(per_machine(Some(1), Some("13")).unwrap(), ["trixie"]);
        assert_eq!(
            per_machine(None, Some("bookworm:2, trixie:1")).unwrap(),
            ["bookworm", "bookworm", "trixie"]
        );
        assert_eq!(
            per_machine(Some(2), Some("12:1,13:1")).unwrap(),
            ["bookworm", "trixie"]
        );
    }

    #[test]
    fn a_release_the_lab_does_not_boot_or_a_count_that_disagrees_is_refused() {
        let e = per_machine(Some(1), Some("bullseye"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bookworm (Debian 12) and trixie (Debian 13)"),
            "{e}"
        );
        assert!(matches!(
            per_machine(Some(3), Some("bookworm:2,trixie:2")),
            Err(ReleaseError::Disagrees {
                named: 4,
                asked: 3,
                ..
            })
        ));
        assert!(matches!(
            per_machine(None, Some("trixie:0")),
            Err(ReleaseError::Count(..))
        ));
        assert!(matches!(
            per_machine(None, Some("bookworm,trixie")),
            Err(ReleaseError::Count(..))
        ));
        assert_eq!(
            per_machine(None, Some("trixie")),
            Err(ReleaseError::NoCount)
        );
    }
}
