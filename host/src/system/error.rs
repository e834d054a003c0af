//! Why something asked of the machine failed: [`SystemError`] names the command and what it was
//! about (the unit, package, container, account or schedule: a [`Call`]) and why it failed (it
//! could not start, ran past its deadline, exited with an error, or answered what the helper
//! cannot read). The apply turns it into a resource's failure in one place (`apply::error`), so
//! the operator reads the same sentence whichever step failed.

use std::fmt;
use std::io;
use std::process::Output;

use crate::bus::BusError;

/// A command the helper runs on the machine, by what it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Call {
    /// `systemctl VERB UNIT` (`show` of several units names them all).
    Systemctl { verb: String, unit: String },
    /// `systemctl daemon-reload`.
    DaemonReload,
    /// `systemd-analyze calendar SCHEDULE`.
    Calendar { schedule: String },
    /// `systemd-run --unit=UNIT … -- ARGV`: a transient unit.
    SystemdRun { unit: Option<String> },
    /// `docker VERB` of one container (`container inspect` included).
    Docker { verb: String, container: String },
    /// `dpkg-query` of one package.
    Dpkg { package: String },
    /// `apt-get VERB ARG` (`install name[=version]`, `remove name`, `update` with no argument).
    AptGet { verb: String, arg: String },
    /// `getent DATABASE KEY`.
    Getent { database: String, key: String },
    /// `id -Gn USER`: a user's groups.
    Groups { user: String },
    /// `useradd`, `usermod`, `userdel`, `groupadd` or `groupdel` with its arguments, of `name`.
    Account {
        program: String,
        args: Vec<String>,
        name: String,
    },
}

impl Call {
    /// `systemctl VERB UNIT`.
    pub(crate) fn systemctl(verb: &str, unit: &str) -> Call {
        Call::Systemctl {
            verb: verb.to_string(),
            unit: unit.to_string(),
        }
    }

    /// `docker ARGS`, named by its verb and the container it is about: the `--name` of a
    /// `run`, else its last argument.
    pub(crate) fn docker<S: AsRef<str>>(args: &[S]) -> Call {
        let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        let verb = args.first().copied().unwrap_or_default();
        let named = args
            .iter()
            .position(|a| *a == "--name")
            .and_then(|at| args.get(at + 1));
        let container = match (verb, named) {
            ("run", Some(name)) => name,
            _ => args.last().copied().unwrap_or_default(),
        };
        Call::Docker {
            verb: verb.to_string(),
            container: container.to_string(),
        }
    }

    /// What to do when the command itself is missing, for the ones mesh knows how to get.
    fn when_missing(&self) -> &'static str {
        match self {
            Call::Docker { .. } => "; Docker must be installed (the container-runtime module)",
            Call::Dpkg { .. } | Call::AptGet { .. } => {
                "; this machine has no package manager mesh knows (apt-get and dpkg on Debian)"
            }
            _ => "",
        }
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Call::Systemctl { verb, unit } => write!(f, "systemctl {verb} {unit}"),
            Call::DaemonReload => f.write_str("systemctl daemon-reload"),
            Call::Calendar { schedule } => write!(f, "systemd-analyze calendar {schedule:?}"),
            Call::SystemdRun { unit: Some(unit) } => write!(f, "systemd-run --unit={unit}"),
            Call::SystemdRun { unit: None } => f.write_str("systemd-run"),
            Call::Docker { verb, container } if verb == "run" => {
                write!(f, "docker run --name {container}")
            }
            Call::Docker { verb, container } => write!(f, "docker {verb} {container}"),
            Call::Dpkg { package } => write!(f, "dpkg-query -W {package}"),
            Call::AptGet { verb, arg } if arg.is_empty() => write!(f, "apt-get {verb}"),
            Call::AptGet { verb, arg } => write!(f, "apt-get {verb} {arg}"),
            Call::Getent { database, key } => write!(f, "getent {database} {key}"),
            Call::Groups { user } => write!(f, "id -Gn {user}"),
            Call::Account {
                program,
                args,
                name,
            } => {
                f.write_str(program)?;
                for arg in args {
                    write!(f, " {arg}")?;
                }
                write!(f, " -- {name}")
            }
        }
    }
}

/// Why something asked of the machine failed, naming what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SystemError {
    /// The command could not be started (not installed, not allowed): the system's reason.
    Start { call: Call, why: String },
    /// It did not end within its deadline (or the operator went away) and was killed.
    TimedOut { call: Call, why: String },
    /// It exited with an error (`code` is `None` when a signal ended it); `said` is the last of
    /// its error output.
    Exit {
        call: Call,
        code: Option<i32>,
        said: String,
    },
    /// It answered what this helper cannot read.
    Unreadable { call: Call, why: String },
    /// systemd, asked on its socket what `call` asks, refused or ended the job other than done:
    /// what it said.
    Refused { call: Call, said: String },
    /// systemd's calendar parser refuses a timer's schedule; `said` is its reason.
    Schedule { schedule: String, said: String },
    /// A unit just started or restarted does not run: what systemd says of it.
    NotRunning { unit: String, why: String },
    /// The machine has no user (`passwd`) or group (`group`) of that name.
    NoAccount { database: String, name: String },
}

impl SystemError {
    /// What running `call` gave: `Ok` with its output, else why it did not run to its end.
    pub(crate) fn ran(call: &Call, ran: io::Result<Output>) -> Result<Output, SystemError> {
        ran.map_err(|e| {
            let call = call.clone();
            let why = e.to_string();
            if e.kind() == io::ErrorKind::TimedOut {
                SystemError::TimedOut { call, why }
            } else {
                SystemError::Start { call, why }
            }
        })
    }

    /// What asking systemd on its socket for `systemctl VERB UNIT`'s work came to, when it was
    /// not done; named as that `systemctl` call, which an operator can run to see it again.
    pub(crate) fn asked(verb: &str, unit: &str, e: BusError) -> SystemError {
        let call = Call::systemctl(verb, unit);
        match e {
            BusError::Io(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                let why = format!("did not finish within its deadline and was given up ({e})");
                SystemError::TimedOut { call, why }
            }
            BusError::Io(e) => SystemError::Refused {
                said: format!("systemd's socket failed: {e}"),
                call,
            },
            BusError::Unreadable(why) => SystemError::Unreadable { call, why },
            BusError::Refused(said) => SystemError::Refused { call, said },
            BusError::Job(result) => SystemError::Refused {
                said: format!(
                    "systemd's job ended {result:?}; see `systemctl status {unit}` and \
                     `journalctl -xeu {unit}`"
                ),
                call,
            },
        }
    }

    /// `call` exited with the error status of `out`: its code and the last of its error output.
    pub(crate) fn exited(call: Call, out: &Output) -> SystemError {
        SystemError::Exit {
            call,
            code: out.status.code(),
            said: last_lines(&String::from_utf8_lossy(&out.stderr)),
        }
    }

    /// `call` ran with the output `out`: an error unless it exited 0.
    pub(crate) fn check(call: Call, out: &Output) -> Result<(), SystemError> {
        if out.status.success() {
            Ok(())
        } else {
            Err(SystemError::exited(call, out))
        }
    }
}

/// The last few lines a command wrote to its error output, on one line: where apt and systemd
/// say why, after what they were doing.
fn last_lines(said: &str) -> String {
    let lines: Vec<&str> = said
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

impl fmt::Display for SystemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SystemError::Start { call, why } => {
                write!(f, "cannot run {call}: {why}{}", call.when_missing())
            }
            SystemError::TimedOut { call, why } => write!(f, "{call} {why}"),
            SystemError::Exit { call, code, said } => {
                write!(f, "{call} failed")?;
                match code {
                    Some(code) => write!(f, " (exit status {code})")?,
                    None => f.write_str(" (killed by a signal)")?,
                }
                if said.is_empty() {
                    Ok(())
                } else {
                    write!(f, ": {said}")
                }
            }
            SystemError::Refused { call, said } => write!(f, "{call} failed: {said}"),
            SystemError::Unreadable { call, why } => {
                write!(f, "{call} gave an answer this helper cannot read: {why}")
            }
            SystemError::Schedule { schedule, said } => write!(
                f,
                "schedule {schedule:?} is not in systemd's calendar syntax (systemd-analyze \
                 calendar: {said}): write it as OnCalendar= takes it, e.g. \"daily\" or \
                 \"*-*-* 03:00:00\""
            ),
            SystemError::NotRunning { unit, why } => write!(f, "{unit} is not running: {why}"),
            SystemError::NoAccount { database, name } => {
                let what = if database == "passwd" {
                    "user"
                } else {
                    "group"
                };
                write!(f, "no {what} {name:?} on this machine")
            }
        }
    }
}

impl std::error::Error for SystemError {}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt as _;
    use std::process::{ExitStatus, Output};

    use super::{Call, SystemError};

    fn output(code: i32, stderr: &str) -> Output {
        Output {
            status: ExitStatus::from_raw(code << 8),
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_failed_command_names_its_unit_or_package_its_exit_and_what_it_said() {
        let out = output(
            1,
            "Job for web.service failed because the control process exited with error code.\n\
             See \"systemctl status web.service\" for details.\n",
        );
        let e = SystemError::check(Call::systemctl("restart", "web.service"), &out).unwrap_err();
        assert_eq!(
            e.to_string(),
            "systemctl restart web.service failed (exit status 1): Job for web.service failed \
             because the control process exited with error code. / See \"systemctl status \
             web.service\" for details."
        );

        let apt = Call::AptGet {
            verb: "install".into(),
            arg: "redis-server=7.0".into(),
        };
        let out = output(
            100,
            "Reading package lists...\nBuilding dependency tree...\n\nReading state \
             information...\nE: Version '7.0' for 'redis-server' was not found\n",
        );
        let e = SystemError::exited(apt, &out).to_string();
        assert!(
            e.starts_with("apt-get install redis-server=7.0 failed (exit status 100): "),
            "{e}"
        );
        assert!(
            e.ends_with("E: Version '7.0' for 'redis-server' was not found"),
            "{e}"
        );
        assert!(
            !e.contains("Reading package lists"),
            "only the last lines: {e}"
        );
    }

    #[test]
    fn a_command_that_could_not_start_or_ran_too_long_is_named_with_why() {
        let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = SystemError::ran(&Call::docker(&["start", "web"]), Err(missing)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot run docker start web: No such file; Docker must be installed (the \
             container-runtime module)"
        );
        let late = std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "did not finish within its deadline of 900 s and was killed",
        );
        let call = Call::AptGet {
            verb: "install".into(),
            arg: "redis".into(),
        };
        let e = SystemError::ran(&call, Err(late)).unwrap_err();
        assert!(matches!(e, SystemError::TimedOut { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "apt-get install redis did not finish within its deadline of 900 s and was killed"
        );
    }

    #[test]
    fn what_systemd_said_on_its_socket_names_the_unit_and_where_to_look() {
        use crate::bus::BusError;
        assert_eq!(
            SystemError::asked("reload", "web.service", BusError::Job("failed".into())).to_string(),
            "systemctl reload web.service failed: systemd's job ended \"failed\"; see \
             `systemctl status web.service` and `journalctl -xeu web.service`"
        );
        assert_eq!(
            SystemError::asked(
                "reload",
                "web.service",
                BusError::Refused("Unit web.service not found.".into())
            )
            .to_string(),
            "systemctl reload web.service failed: Unit web.service not found."
        );
        let late = std::io::Error::new(std::io::ErrorKind::WouldBlock, "no answer");
        assert!(matches!(
            SystemError::asked("reload", "web.service", BusError::Io(late)),
            SystemError::TimedOut { .. }
        ));
    }

    #[test]
    fn a_docker_call_is_named_by_its_container() {
        let run = Call::docker(&["run", "--detach", "--name", "web", "nginx:1"]);
        assert_eq!(run.to_string(), "docker run --name web");
        assert_eq!(
            Call::docker(&["rm", "-f", "web"]).to_string(),
            "docker rm web"
        );
    }

    #[test]
    fn an_account_the_machine_lacks_is_named() {
        let e = SystemError::NoAccount {
            database: "passwd".into(),
            name: "nobdy".into(),
        };
        assert_eq!(e.to_string(), "no user \"nobdy\" on this machine");
    }
}
