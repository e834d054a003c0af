//! Readiness probes: after a start, restart or reload the helper made, a unit is ready when its
//! probe passes (a command exits 0, a local TCP port accepts, a local HTTP GET answers the
//! declared status), retried about every [`EVERY`] until the declared timeout. Everything is
//! numeric and local: no name service is asked, and the command runs under `child`'s deadline.

use std::fmt;
use std::io::{Read as _, Write as _};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use mesh_wire::{Probe, Ready, local_http};

use crate::child::Bounded as _;

/// How long to wait between two tries.
const EVERY: Duration = Duration::from_millis(250);
/// How long one connection or one read may take: a probe that hangs is one failed try.
const ONE_TRY: Duration = Duration::from_secs(2);
/// At most this many bytes of an HTTP answer are read for its status line.
const STATUS_LINE: usize = 256;

impl super::Run<'_> {
    /// What a unit's probe last answered when it does not pass, after a start, restart or reload
    /// this run made (`moved`); `None` when it passes, was not asked for, or nothing moved (a
    /// dry run moves nothing).
    /// A probe of a `unit` that has died stops at once, with systemd's reason, rather than
    /// waiting out its timeout against a port nothing will open.
    pub(super) fn not_ready(
        &self,
        moved: bool,
        ready: Option<&Ready>,
        unit: Option<&str>,
    ) -> Option<String> {
        let dead = || {
            let unit = unit?;
            let state = self.paths.system.unit_state(unit).ok()?;
            if !state.failed && state.running != Some(false) {
                return None;
            }
            Some(match self.paths.system.settled(unit) {
                Err(e) => e.to_string(),
                Ok(()) => format!("{unit} is not running"),
            })
        };
        match ready {
            Some(ready) if moved && self.applying() => {
                wait_unless(ready, &dead).err().map(|e| e.to_string())
            }
            _ => None,
        }
    }
}

/// Why a unit's probe did not pass: the probe, how long it was given, and what it last
/// answered; said as `not ready after 5 s: tcp 127.0.0.1:6380: connection refused`.
#[derive(Debug)]
pub(super) struct NotReady {
    probe: String,
    timeout: u64,
    answer: Answer,
}

/// What one try of a probe answered when it did not pass.
#[derive(Debug)]
enum Answer {
    /// The probe cannot be tried as declared (no command, not a local URL).
    Unusable(&'static str),
    /// Its command could not be run, or ran past the try: the system's reason.
    NotRun(String),
    /// Its command exited other than 0, with the last line of its error output.
    Exited {
        status: ExitStatus,
        said: Option<String>,
    },
    /// Connecting, writing or reading failed: the system's reason, without "(os error N)".
    Io(String),
    /// The HTTP server answered another status than the one declared.
    Status(u16),
    /// The unit the probe is of stopped or failed while it was waited for: systemd's reason.
    Dead(String),
    /// What came back is not an HTTP status line.
    NoStatusLine(String),
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Unusable(why) => f.write_str(why),
            Answer::NotRun(why) | Answer::Io(why) => f.write_str(why),
            Answer::Dead(why) => write!(f, "its unit died, so it was not waited for: {why}"),
            Answer::Exited {
                status,
                said: Some(line),
            } => write!(f, "{status}: {line}"),
            Answer::Exited { status, said: None } => write!(f, "{status}"),
            Answer::Status(status) => write!(f, "answered status {status}"),
            Answer::NoStatusLine(line) => write!(f, "answered no HTTP status line ({line:?})"),
        }
    }
}

impl fmt::Display for NotReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not ready after {} s: {}: {}",
            self.timeout, self.probe, self.answer
        )
    }
}

impl std::error::Error for NotReady {}

/// Waits for `ready` to pass; the error says the probe and what it last answered. `dead` says why
/// the unit probed cannot pass any more (it stopped or failed): the wait ends there.
pub(super) fn wait_unless(
    ready: &Ready,
    dead: &dyn Fn() -> Option<String>,
) -> Result<(), NotReady> {
    let timeout = Duration::from_secs(ready.timeout);
    let started = Instant::now();
    loop {
        let left = timeout.saturating_sub(started.elapsed());
        // a command's try may take what is left of the probe's own timeout (a check that takes
        // seconds is a check); a connection's try is short, and tried again
        let within = match ready.probe {
            Probe::Command(_) => left.max(EVERY),
            _ => left.clamp(EVERY, ONE_TRY),
        };
        let answer = match once(&ready.probe, within) {
            Ok(()) => return Ok(()),
            Err(answer) => answer,
        };
        if let Some(why) = dead() {
            return Err(NotReady {
                probe: ready.probe.to_string(),
                timeout: ready.timeout,
                answer: Answer::Dead(why),
            });
        }
        if started.elapsed() + EVERY > timeout {
            return Err(NotReady {
                probe: ready.probe.to_string(),
                timeout: ready.timeout,
                answer,
            });
        }
        std::thread::sleep(EVERY);
    }
}

/// [`wait_unless`] a unit that cannot die (a probe tried alone).
#[cfg(test)]
fn wait(ready: &Ready) -> Result<(), NotReady> {
    wait_unless(ready, &|| None)
}

/// One try of `probe`, each step bounded by `within`; the error is what it answered.
fn once(probe: &Probe, within: Duration) -> Result<(), Answer> {
    match probe {
        Probe::Command(argv) => {
            let (program, args) = argv.split_first().ok_or(Answer::Unusable("no command"))?;
            let out = Command::new(program)
                .args(args)
                .output_within(within)
                .map_err(|e| Answer::NotRun(e.to_string()))?;
            if out.status.success() {
                return Ok(());
            }
            let said = String::from_utf8_lossy(&out.stderr);
            let said = said.trim();
            Err(Answer::Exited {
                status: out.status,
                said: said.lines().last().map(str::to_string),
            })
        }
        Probe::Tcp(port) => connect(*port, within).map(drop),
        Probe::Http { url, status } => {
            let (port, path) =
                local_http(url).ok_or(Answer::Unusable("not a http://127.0.0.1:PORT/PATH URL"))?;
            let answered = http_status(port, path, within)?;
            if answered == *status {
                Ok(())
            } else {
                Err(Answer::Status(answered))
            }
        }
    }
}

fn connect(port: u16, within: Duration) -> Result<TcpStream, Answer> {
    let at = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let stream = TcpStream::connect_timeout(&at, within).map_err(|e| plain(&e))?;
    stream
        .set_read_timeout(Some(within))
        .and_then(|()| stream.set_write_timeout(Some(within)))
        .map_err(|e| plain(&e))?;
    Ok(stream)
}

/// The status an HTTP/1.0 GET of `path` on the local `port` answers.
fn http_status(port: u16, path: &str, within: Duration) -> Result<u16, Answer> {
    let mut stream = connect(port, within)?;
    // one write: a server that reads the request once and closes must see all of it
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| plain(&e))?;
    let mut head = Vec::with_capacity(STATUS_LINE);
    let mut buf = [0u8; STATUS_LINE];
    while head.len() < STATUS_LINE && !head.contains(&b'\n') {
        let n = stream.read(&mut buf).map_err(|e| plain(&e))?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    // "HTTP/1.x 200 OK"
    let mut words = line.split_whitespace();
    match (words.next(), words.next().and_then(|s| s.parse().ok())) {
        (Some(v), Some(code)) if v.starts_with("HTTP/") => Ok(code),
        _ => Err(Answer::NoStatusLine(line.trim().to_string())),
    }
}

/// An I/O error as the probe's answer, without Rust's "(os error N)".
fn plain(e: &std::io::Error) -> Answer {
    let text = e.to_string();
    Answer::Io(match text.split_once(" (os error") {
        Some((said, _)) => said.to_lowercase(),
        None => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn ready(probe: Probe, timeout: u64) -> Ready {
        Ready { probe, timeout }
    }

    /// Held by each test: a port one test let go of is not handed to another's listener.
    static PORTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A port nothing listens on: bound, then let go.
    fn closed_port() -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }

    #[test]
    fn a_tcp_probe_passes_on_a_listening_port_and_names_a_refusing_one() {
        let _ports = PORTS.lock().unwrap_or_else(|e| e.into_inner());
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        wait(&ready(Probe::Tcp(port), 2)).unwrap();
        let port = closed_port();
        let e = wait(&ready(Probe::Tcp(port), 1)).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("not ready after 1 s: tcp 127.0.0.1:{port}: connection refused")
        );
    }

    #[test]
    fn a_tcp_probe_retries_until_the_port_listens() {
        let _ports = PORTS.lock().unwrap_or_else(|e| e.into_inner());
        let port = closed_port();
        let server = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(600));
            let l = TcpListener::bind(("127.0.0.1", port)).unwrap();
            let _ = l.accept();
        });
        wait(&ready(Probe::Tcp(port), 5)).unwrap();
        server.join().unwrap();
    }

    /// A server answering every GET with `status` on a port of its own.
    fn http_server(status: u16) -> u16 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for mut s in l.incoming().flatten() {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
                let _ = write!(s, "HTTP/1.0 {status} Whatever\r\n\r\nbody");
            }
        });
        port
    }

    #[test]
    fn an_http_probe_passes_on_its_status_and_names_another() {
        let _ports = PORTS.lock().unwrap_or_else(|e| e.into_inner());
        let port = http_server(200);
        let url = format!("http://127.0.0.1:{port}/health");
        wait(&ready(
            Probe::Http {
                url: url.clone(),
                status: 200,
            },
            2,
        ))
        .unwrap();
        let port = http_server(503);
        let url = format!("http://127.0.0.1:{port}/");
        let e = wait(&ready(Probe::Http { url, status: 200 }, 1))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("not ready after 1 s: http http://127.0.0.1:"),
            "{e}"
        );
        assert!(e.ends_with("answered status 503"), "{e}");
        let url = format!("http://127.0.0.1:{}/", closed_port());
        let e = wait(&ready(Probe::Http { url, status: 200 }, 1))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("connection refused"), "{e}");
    }

    #[test]
    fn a_command_probe_that_takes_longer_than_a_connection_try_has_its_own_timeout() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // one try takes 2.5 s: more than a connection's try, well within its 10 s
        wait(&ready(Probe::Command(argv(&["sleep", "2.5"])), 10)).unwrap();
    }

    #[test]
    fn a_command_probe_passes_on_exit_0_and_names_a_failure() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        wait(&ready(Probe::Command(argv(&["true"])), 2)).unwrap();
        let e = wait(&ready(
            Probe::Command(argv(&["sh", "-c", "echo no way >&2; exit 1"])),
            1,
        ))
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "not ready after 1 s: command sh -c echo no way >&2; exit 1: exit status: 1: no way"
        );
    }
}
