//! systemd asked directly, on its private socket (`/run/systemd/private`, root's only, the one
//! `systemctl` itself uses as root): a unit's state (as `systemctl show` gives it, or only what
//! paying a change or watching a start reads), and a reload, restart, start, stop or reset of a
//! unit, waiting for its job to end as `systemctl` does. Asked this way, a change starts no
//! program on the machine: one `systemctl` costs it a process, its dynamic linking and its own
//! connection, twice a change (the state, then the verb).
//!
//! Where the socket cannot be reached (no systemd, not root), [`Bus::connect`] says so and the
//! caller runs `systemctl` as before; nothing has been asked of systemd yet.

mod message;

use std::io::{self, Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::child;
use message::{Call, ERROR, METHOD_RETURN, Message, Reader, SIGNAL, Unreadable};

/// systemd's socket for root's clients, which needs no message bus in between.
const SOCKET: &str = "/run/systemd/private";
const MANAGER_PATH: &str = "/org/freedesktop/systemd1";
const MANAGER: &str = "org.freedesktop.systemd1.Manager";
/// The interfaces of every unit's properties, and of a service's own.
const UNIT: &str = "org.freedesktop.systemd1.Unit";
const SERVICE: &str = "org.freedesktop.systemd1.Service";

/// Why systemd could not be asked, or said no.
#[derive(Debug)]
pub(crate) enum BusError {
    /// The socket failed or fell silent past the deadline.
    Io(io::Error),
    /// systemd answered what the helper cannot read.
    Unreadable(String),
    /// systemd refused: its error's message (e.g. "Unit x.service not found.").
    Refused(String),
    /// The job ran and ended other than done: its result (`failed`, `timeout`, `canceled`…).
    Job(String),
}

impl From<io::Error> for BusError {
    fn from(e: io::Error) -> BusError {
        BusError::Io(e)
    }
}

impl From<Unreadable> for BusError {
    fn from(e: Unreadable) -> BusError {
        BusError::Unreadable(e.0)
    }
}

/// The job and result of a `JobRemoved` signal (`uoss`: id, job, unit, result).
fn job_removed(m: &Message) -> Option<(String, String)> {
    if m.kind != SIGNAL || m.member.as_deref() != Some("JobRemoved") || m.signature != "uoss" {
        return None;
    }
    let mut r = Reader::new(&m.body);
    let read = (|| Ok::<_, Unreadable>((r.u32()?, r.string()?, r.string()?, r.string()?)))();
    read.ok().map(|(_, job, _, result)| (job, result))
}

/// A unit's state as [`Bus::unit_state`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    pub(crate) load: String,
    pub(crate) active: String,
    pub(crate) file: String,
    pub(crate) stop_runs: Vec<String>,
}

/// Connects to `path` ([`SOCKET`]), giving up after `within`: a systemd that does not accept
/// (its queue full) would otherwise hold the helper, and the machine's lock, for as long as it
/// does not.
fn connect_within(path: &str, within: Duration) -> io::Result<UnixStream> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType, sockopt};
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?;
    // a blocking connect to a Unix socket waits for room in its queue at most this long
    sockopt::set_socket_timeout(&fd, sockopt::Timeout::Send, Some(within))?;
    rustix::net::connect(&fd, &SocketAddrUnix::new(path)?)?;
    Ok(UnixStream::from(fd))
}

/// A unit as [`Bus::watched`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Watched {
    pub(crate) active: String,
    pub(crate) sub: String,
    pub(crate) result: String,
    pub(crate) restarts: u32,
    pub(crate) status: i32,
}

/// A connection to systemd for one question or one job, under one deadline.
pub(crate) struct Bus {
    stream: UnixStream,
    serial: u32,
    deadline: Instant,
    /// Jobs that ended while an answer was awaited: their path and result.
    ended: Vec<(String, String)>,
    /// The operator had gone before this connection: only the deadline applies.
    gone_before: bool,
    /// When this connection noticed the operator went away.
    abandoned_at: Option<Instant>,
}

impl Bus {
    /// Connects and authenticates as this process's user (SASL `EXTERNAL`, which systemd checks
    /// against the socket's peer credentials).
    pub(crate) fn connect(within: Duration) -> io::Result<Bus> {
        let stream = connect_within(SOCKET, child::GRACE.min(within))?;
        let mut bus = Bus {
            stream,
            serial: 0,
            deadline: Instant::now() + within,
            ended: Vec::new(),
            gone_before: child::operator_gone(),
            abandoned_at: None,
        };
        let uid = rustix::process::geteuid().as_raw().to_string();
        let hex: String = uid.bytes().map(|b| format!("{b:02x}")).collect();
        bus.timeout()?;
        // BEGIN goes with AUTH, as sd-bus's own clients send it: systemd 252 does not read a
        // message that reaches it in the same read as a BEGIN sent after its OK (it waited,
        // answerless, until the deadline on a lab machine).
        bus.stream
            .write_all(format!("\0AUTH EXTERNAL {hex}\r\nBEGIN\r\n").as_bytes())?;
        let said = bus.auth_line()?;
        if !said.starts_with("OK ") {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("systemd refused this helper's login: {said}"),
            ));
        }
        Ok(bus)
    }

    /// A connection over `stream`, already past its authentication.
    #[cfg(test)]
    fn over(stream: UnixStream, within: Duration) -> Bus {
        Bus {
            stream,
            serial: 0,
            deadline: Instant::now() + within,
            ended: Vec::new(),
            gone_before: false,
            abandoned_at: None,
        }
    }

    /// What `systemctl show` says of a unit's `LoadState`, `ActiveState`, `UnitFileState` and
    /// the command lines of its `ExecStop=` and `ExecStopPost=` (none for a unit that is not a
    /// service), in that order.
    pub(crate) fn unit_state(&mut self, unit: &str) -> Result<Shown, BusError> {
        let path = self.load(unit)?;
        let load = self.unit_text(&path, "LoadState")?;
        let active = self.unit_text(&path, "ActiveState")?;
        let file = self.unit_text(&path, "UnitFileState")?;
        let mut stop_runs = Vec::new();
        for property in ["ExecStop", "ExecStopPost"] {
            match self.get(&path, SERVICE, property) {
                Ok(reply) => stop_runs.extend(Reader::new(&reply.body).variant_commands()?),
                // not a service: it has no such commands
                Err(BusError::Refused(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Shown {
            load,
            active,
            file,
            stop_runs,
        })
    }

    /// What a unit just started or restarted is watched for: its `ActiveState`, `SubState`,
    /// and as a service its `Result`, `NRestarts` and `ExecMainStatus` (empty and 0 for a unit
    /// that is not a service, as `systemctl show` leaves them).
    pub(crate) fn watched(&mut self, unit: &str) -> Result<Watched, BusError> {
        let path = self.load(unit)?;
        let active = self.unit_text(&path, "ActiveState")?;
        let sub = self.unit_text(&path, "SubState")?;
        let (result, restarts, status) = match self.get(&path, SERVICE, "Result") {
            Ok(reply) => {
                let result = Reader::new(&reply.body).variant_string()?;
                let reply = self.get(&path, SERVICE, "NRestarts")?;
                let restarts = Reader::new(&reply.body).variant_u32("u")?;
                let reply = self.get(&path, SERVICE, "ExecMainStatus")?;
                let status = Reader::new(&reply.body).variant_u32("i")?;
                (result, restarts, i32::from_ne_bytes(status.to_ne_bytes()))
            }
            Err(BusError::Refused(_)) => (String::new(), 0, 0),
            Err(e) => return Err(e),
        };
        Ok(Watched {
            active,
            sub,
            result,
            restarts,
            status,
        })
    }

    /// A string property every unit has, of the unit at `path`.
    fn unit_text(&mut self, path: &str, property: &str) -> Result<String, BusError> {
        let reply = self.get(path, UNIT, property)?;
        Ok(Reader::new(&reply.body).variant_string()?)
    }

    /// A property of the object at `path`.
    fn get(&mut self, path: &str, interface: &str, property: &str) -> Result<Message, BusError> {
        self.call(&Call {
            path,
            interface: "org.freedesktop.DBus.Properties",
            member: "Get",
            args: &[interface, property],
        })
    }

    /// The object path of a unit, loading it if systemd has not (a unit with no file is loaded
    /// as `not-found`, as `systemctl show` finds it).
    fn load(&mut self, unit: &str) -> Result<String, BusError> {
        let reply = self.call(&Call {
            path: MANAGER_PATH,
            interface: MANAGER,
            member: "LoadUnit",
            args: &[unit],
        })?;
        Ok(Reader::new(&reply.body).string()?)
    }

    /// Reloads, restarts, starts or stops a unit (`verb` as `systemctl` names it) and waits for
    /// its job to end; `Ok` when it ended done (or skipped, as `systemctl` counts it).
    pub(crate) fn job(&mut self, verb: &str, unit: &str) -> Result<(), BusError> {
        let member = match verb {
            "reload" => "ReloadUnit",
            "restart" => "RestartUnit",
            "start" => "StartUnit",
            "stop" => "StopUnit",
            _ => return Err(BusError::Refused(format!("no job for {verb:?}"))),
        };
        // A direct connection is sent every job's end without subscribing (systemd's
        // bus_foreach_bus), so the job's own end cannot be missed.
        let reply = self.call(&Call {
            path: MANAGER_PATH,
            interface: MANAGER,
            member,
            args: &[unit, "replace"],
        })?;
        let job = Reader::new(&reply.body).string()?;
        let result = self.ended(&job)?;
        match result.as_str() {
            "done" | "skipped" => Ok(()),
            _ => Err(BusError::Job(result)),
        }
    }

    /// Clears a unit's failed state and its start-rate count (`systemctl reset-failed`).
    pub(crate) fn reset_failed(&mut self, unit: &str) -> Result<(), BusError> {
        self.call(&Call {
            path: MANAGER_PATH,
            interface: MANAGER,
            member: "ResetFailedUnit",
            args: &[unit],
        })
        .map(|_| ())
    }

    /// Sends `call` and reads until its answer, keeping the ends of jobs seen on the way.
    fn call(&mut self, call: &Call<'_>) -> Result<Message, BusError> {
        self.serial += 1;
        let serial = self.serial;
        self.timeout()?;
        self.stream.write_all(&call.encode(serial))?;
        loop {
            let m = self.read()?;
            if m.reply_serial == Some(serial) && m.kind == METHOD_RETURN {
                return Ok(m);
            }
            if m.reply_serial == Some(serial) && m.kind == ERROR {
                let said = Reader::new(&m.body).string().unwrap_or_default();
                let name = m.error_name.unwrap_or_default();
                return Err(BusError::Refused(if said.is_empty() { name } else { said }));
            }
            self.keep_ended(&m);
        }
    }

    /// The result of the job at `path`, waiting for its end. Other jobs' ends (a busy systemd
    /// sends every one) are not kept.
    fn ended(&mut self, path: &str) -> Result<String, BusError> {
        if let Some(at) = self.ended.iter().position(|(job, _)| job == path) {
            return Ok(self.ended.swap_remove(at).1);
        }
        self.ended.clear();
        loop {
            if let Some((job, result)) = job_removed(&self.read()?)
                && job == path
            {
                return Ok(result);
            }
        }
    }

    /// Notes a job's end seen while an answer was awaited: it may be the job that answer names.
    fn keep_ended(&mut self, m: &Message) {
        if let Some(ended) = job_removed(m) {
            self.ended.push(ended);
        }
    }

    /// One whole message.
    fn read(&mut self) -> Result<Message, BusError> {
        let mut fixed = [0u8; 16];
        self.fill(&mut fixed)?;
        let mut buf = vec![0u8; message::length(&fixed)?];
        buf[..16].copy_from_slice(&fixed);
        self.fill(&mut buf[16..])?;
        Ok(message::decode(&buf)?)
    }

    /// Fills `buf` from the socket by the deadline, or by [`child::GRACE`] after the operator
    /// went away (as a command the helper runs is given): a job systemd never ends does not
    /// keep the machine's lock.
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), BusError> {
        let mut at = 0;
        while at < buf.len() {
            if self.abandoned_at.is_none() && !self.gone_before && child::operator_gone() {
                self.abandoned_at = Some(Instant::now());
            }
            if let Some(gone) = self.abandoned_at {
                self.deadline = self.deadline.min(gone + child::GRACE);
            }
            self.timeout()?;
            match self.stream.read(&mut buf[at..]) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
                Ok(n) => at += n,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// The authentication's answer: one line.
    fn auth_line(&mut self) -> io::Result<String> {
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while !line.ends_with(b"\r\n") && line.len() < 512 {
            self.fill(&mut byte).map_err(|e| match e {
                BusError::Io(e) => e,
                other => io::Error::other(format!("{other:?}")),
            })?;
            line.push(byte[0]);
        }
        Ok(String::from_utf8_lossy(&line).trim_end().to_string())
    }

    /// Bounds the next read and write by what is left of the deadline, waking at least every
    /// [`child::WAKE`] to see whether the operator went away.
    fn timeout(&self) -> io::Result<()> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let why = if self.abandoned_at.is_some() {
                format!(
                    "systemd did not answer within {} s of the operator going away",
                    child::GRACE.as_secs()
                )
            } else {
                "systemd did not answer within the deadline".to_string()
            };
            return Err(io::Error::new(io::ErrorKind::TimedOut, why));
        }
        self.stream.set_read_timeout(Some(left.min(child::WAKE)))?;
        self.stream.set_write_timeout(Some(left))
    }
}

#[cfg(test)]
mod tests;
