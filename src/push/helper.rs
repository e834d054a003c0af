//! The helper on the machine: where it lives, and the only commands mesh ever runs there.
//!
//! They are constants but for the helper's content hash and a change's id (both hex): nothing an operator or a
//! module writes is ever pasted into them. Everything else reaches the machine as data on the
//! helper's stdin.

use super::transport::Call;
use crate::ssh::{Bound, Output};
use crate::wire::{EXIT_HELPER_MISSING, EXIT_NOT_STORED, EXIT_WRONG_PLATFORM, STATE_DIR, Seen};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/helper.rs"));
}

/// The helper this mesh carries.
pub struct Helper {
    gzipped: &'static [u8],
    sha256: &'static str,
    b2: &'static str,
    len: usize,
}

impl Helper {
    /// The helper embedded at build time.
    pub fn embedded() -> Helper {
        Helper {
            gzipped: embedded::HELPER_GZ,
            sha256: embedded::HELPER_SHA256,
            b2: embedded::HELPER_B2,
            len: embedded::HELPER_LEN,
        }
    }

    /// The helper as it is sent: gzipped, unpacked by [`Helper::upload_command`].
    pub fn gzipped(&self) -> &'static [u8] {
        self.gzipped
    }

    /// The helper's size on the machine, unpacked.
    pub fn unpacked_len(&self) -> usize {
        self.len
    }

    /// The sha256 of the unpacked helper.
    pub fn sha256(&self) -> &str {
        self.sha256
    }

    /// Where it lives on a machine: one file per content hash, so a machine that has it is never
    /// sent it again, and two versions never overwrite each other.
    pub fn remote_path(&self) -> String {
        format!("{STATE_DIR}/bin/mesh-host-{}", self.sha256)
    }

    /// Runs the helper for `call` if it is there, else exits with [`EXIT_HELPER_MISSING`]. A
    /// confirm's id is lower-case hex, checked by the caller: it is pasted as it is.
    pub fn command(&self, call: Call<'_>, sudo: bool) -> String {
        if let Call::Confirm(id) = call {
            debug_assert!(crate::wire::Awaiting::valid_id(id));
        }
        let verb = call.args().join(" ");
        let script = format!(
            "P={}; if [ -x \"$P\" ]; then exec \"$P\" {verb}; else exit {EXIT_HELPER_MISSING}; fi",
            self.remote_path()
        );
        wrap(&script, sudo)
    }

    /// Stores stdin, gzipped, as the helper, after checking the machine is a platform it runs on.
    pub fn upload_command(&self, sudo: bool) -> String {
        let script = format!("{}; {}", platform_check(""), self.store("gzip -dc", ""));
        wrap(&script, sudo)
    }

    /// Runs the helper for `call` with the helper itself, gzipped, sent ahead of its input: one
    /// round trip where [`Helper::command`] then [`Helper::upload_command`] would take three. A
    /// machine that has the helper skips those bytes; one that lacks it stores them as
    /// [`Helper::upload_command`] does and says [`STORED`] on stderr. Either way what follows on
    /// stdin is the helper's input. It never runs a helper that did not arrive whole: the launcher
    /// exits [`EXIT_NOT_STORED`] (or [`EXIT_WRONG_PLATFORM`]) having read all of stdin, so the
    /// operator's write is never cut short.
    ///
    /// GNU `head -c N` reads no byte past the N-th from a pipe, so the helper's input starts
    /// exactly where the gzipped helper ends.
    pub fn run_storing_command(&self, call: Call<'_>, sudo: bool) -> String {
        let n = self.gzipped.len();
        let drain = "cat >/dev/null; ";
        let script = format!(
            "P={path}; if [ -x \"$P\" ]; then head -c {n} >/dev/null; else {platform}; \
             {store}; echo \"{STORED}\" >&2; fi; exec \"$P\" {verb}",
            path = self.remote_path(),
            platform = platform_check(drain),
            store = self.store(&format!("head -c {n} | gzip -dc"), drain),
            verb = call.args().join(" "),
        );
        wrap(&script, sudo)
    }

    /// Stores what `source` writes as the helper, in a subshell so that its umask stays its own.
    /// It takes its place only once its unpacked digest is the helper's: a truncated file under
    /// the helper's name would never be sent again. `drain` runs before a failure exits.
    ///
    /// The digest checked is BLAKE2b-512 (`b2sum`, coreutils since Debian 9), not the sha256 the
    /// file is named by: the same bytes give both at build time, and `b2sum` takes 4 ms of a
    /// machine's CPU over the helper where `sha256sum` takes 9.
    fn store(&self, source: &str, drain: &str) -> String {
        let path = self.remote_path();
        let b2 = &self.b2;
        // a part of this launcher's own: two stores at once never write into one file
        let part = format!("{path}.part.$$");
        format!(
            "( umask 022 && mkdir -p {STATE_DIR}/bin && {source} > {part} && \
             [ \"$(b2sum < {part})\" = \"{b2}  -\" ] && \
             chmod 0755 {part} && mv -f {part} {path} ) || \
             {{ rm -f {part}; echo \"the helper arrived incomplete or changed (its BLAKE2b-512 \
             is not that of the helper mesh carries), or could not be written: nothing stored\" >&2; {drain}exit {EXIT_NOT_STORED}; }}"
        )
    }
}

/// What the launcher of [`Helper::run_storing_command`] says on stderr, on a line of its own
/// before anything the helper says, when it stored the helper.
pub const STORED: &str = "mesh: the helper was stored";

/// The launcher's exit where the machine is not Linux on x86_64, saying what it is, or has no
/// `b2sum` to check the helper with (coreutils before 8.26); `drain` runs first.
fn platform_check(drain: &str) -> String {
    format!(
        "[ \"$(uname -sm)\" = \"Linux x86_64\" ] || {{ uname -sm >&2; {drain}exit {EXIT_WRONG_PLATFORM}; }}; \
         command -v b2sum >/dev/null || {{ echo \"Linux x86_64 without b2sum\" >&2; {drain}exit {EXIT_WRONG_PLATFORM}; }}"
    )
}

/// What [`Helper::run_storing_command`]'s launcher answered, read: the helper's own output, with
/// whether it stored the helper first, or the launcher's refusal (its exit status and stderr).
pub fn launched(mut out: Output) -> Stored {
    if matches!(out.status, Some(EXIT_WRONG_PLATFORM | EXIT_NOT_STORED)) {
        return Stored::NotStored(out);
    }
    // a whole line of its own, wherever it is: a login shell's banner or sudo's warning may come
    // before it
    let line = format!("{STORED}\n");
    let at = if out.stderr.starts_with(line.as_bytes()) {
        Some(0)
    } else {
        let nl = format!("\n{line}");
        out.stderr
            .windows(nl.len())
            .position(|w| w == nl.as_bytes())
            .map(|i| i + 1)
    };
    if let Some(at) = at {
        out.stderr.drain(at..at + line.len());
    }
    Stored::Ran {
        output: out,
        stored: at.is_some(),
    }
}

/// What running the helper, storing it where the machine lacked it, came to.
#[derive(Debug)]
pub enum Stored {
    /// The helper ran; `stored`: this call stored it first.
    Ran { output: Output, stored: bool },
    /// It could not be stored, and nothing ran: the launcher's answer, exiting
    /// [`EXIT_WRONG_PLATFORM`] or [`EXIT_NOT_STORED`].
    NotStored(Output),
}

#[cfg(test)]
impl Helper {
    /// A helper of these bytes, named by `sha256` (their own digest unless a test says another),
    /// for the transports' tests.
    pub(crate) fn of(bytes: &[u8], sha256: Option<&str>) -> Helper {
        use sha2::Digest;
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        let hex = |d: &[u8]| -> String { d.iter().map(|b| format!("{b:02x}")).collect() };
        let digest = hex(&sha2::Sha256::digest(bytes));
        Helper {
            gzipped: Box::leak(gz.finish().unwrap().into_boxed_slice()),
            sha256: Box::leak(sha256.map_or(digest, str::to_string).into_boxed_str()),
            b2: Box::leak(hex(&blake2::Blake2b512::digest(bytes)).into_boxed_str()),
            len: bytes.len(),
        }
    }
}

/// What the helper may say on stderr: a line or two when it fails, never a report.
const HELPER_STDERR: usize = 1 << 20;

/// The most of the helper's answer to one declaration that mesh reads (see `ssh::output`).
/// A report says a line or two of each resource, and in a dry run up to [`Seen::MAX`] of each
/// changed file as the machine has it and as declared: 64 MiB holds a dry run of several hundred
/// files changed at that size, and the declared half, which grows with the declaration, has
/// twice the declaration's own size on top.
pub fn report_bound(declaration: usize) -> Bound {
    const FLOOR: usize = 1024 * Seen::MAX;
    Bound {
        what: "the helper's answer",
        stdout: FLOOR.saturating_add(declaration.saturating_mul(2)),
        stderr: HELPER_STDERR,
    }
}

/// Storing the helper says nothing but the platform (`uname -sm`) or why it failed.
pub const UPLOAD_BOUND: Bound = Bound {
    what: "the answer to storing the helper",
    stdout: 64 << 10,
    stderr: 64 << 10,
};

/// A confirmation is answered by its exit status and a line.
pub const CONFIRM_BOUND: Bound = Bound {
    what: "the helper's answer to confirm",
    stdout: 1 << 20,
    stderr: HELPER_STDERR,
};

/// Runs `script` through `sudo -n sh -c` for a non-root user. The script is one of the constants
/// above and holds no single quote, so quoting it whole is exact.
fn wrap(script: &str, sudo: bool) -> String {
    debug_assert!(!script.contains('\''));
    if sudo {
        format!("sudo -n sh -c '{script}'")
    } else {
        script.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helper_is_embedded_and_addressed_by_its_hash() {
        let h = Helper::embedded();
        assert!(
            h.unpacked_len() > 100_000,
            "the embedded helper is suspiciously small"
        );
        assert!(
            h.gzipped().len() < h.unpacked_len() * 2 / 3,
            "the helper travels compressed: {} of {} bytes",
            h.gzipped().len(),
            h.unpacked_len()
        );
        assert_eq!(h.sha256().len(), 64);
        assert!(h.remote_path().ends_with(h.sha256()));
    }

    #[test]
    fn commands_hold_only_constants_and_the_hash() {
        let h = Helper::embedded();
        let run = h.command(Call::Run(crate::wire::Mode::Apply), true);
        assert!(
            run.starts_with("sudo -n sh -c '") && run.ends_with("apply; else exit 90; fi'"),
            "{run}"
        );
        let confirm = h.command(Call::Confirm("00ff"), false);
        assert!(confirm.contains("confirm 00ff; else exit 90"), "{confirm}");
        let up = h.upload_command(false);
        assert!(up.contains("exit 91") && !up.contains('\''), "{up}");
        assert!(up.contains("exit 92") && up.contains("gzip -dc >"), "{up}");
        let both = h.run_storing_command(Call::Run(crate::wire::Mode::DryRun), true);
        let n = h.gzipped().len();
        assert!(
            both.starts_with("sudo -n sh -c '")
                && both.contains(&format!("head -c {n} >/dev/null"))
                && both.contains(&format!("head -c {n} | gzip -dc >"))
                && both.ends_with("dry-run'"),
            "{both}"
        );
        // every refusal reads the rest of stdin before it exits
        assert_eq!(both.matches("cat >/dev/null; exit 9").count(), 3, "{both}");
    }

    fn output(status: Option<u32>, stderr: &str) -> Output {
        Output {
            status,
            stdout: b"{}".to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[test]
    fn the_launcher_says_whether_it_stored_the_helper_and_its_refusals_are_not_runs() {
        let said = format!("{STORED}\nthe helper's own line\n");
        match launched(output(Some(0), &said)) {
            Stored::Ran { output, stored } => {
                assert!(stored);
                assert_eq!(output.stderr, b"the helper's own line\n");
            }
            other => panic!("{other:?}"),
        }
        let banner = format!("welcome\n{STORED}\nthe helper's own line\n");
        match launched(output(Some(0), &banner)) {
            Stored::Ran { output, stored } => {
                assert!(stored, "a line before it does not hide it");
                assert_eq!(output.stderr, b"welcome\nthe helper's own line\n");
            }
            other => panic!("{other:?}"),
        }
        let within = format!("not {STORED}\n");
        assert!(matches!(
            launched(output(Some(0), &within)),
            Stored::Ran { stored: false, .. }
        ));
        match launched(output(Some(4), "busy")) {
            Stored::Ran { output, stored } => {
                assert!(!stored);
                assert_eq!(output.stderr, b"busy");
            }
            other => panic!("{other:?}"),
        }
        for refused in [EXIT_WRONG_PLATFORM, EXIT_NOT_STORED] {
            assert!(matches!(
                launched(output(Some(refused), "no")),
                Stored::NotStored(_)
            ));
        }
    }
}
