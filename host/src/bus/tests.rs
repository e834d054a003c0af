use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use super::{Bus, BusError};

/// What systemd 252 (Debian 12, a lab machine) sent a helper that asked it to reload
/// docker.service: the units' and the job's signals, its answer (the job's path) among them, and
/// the job's end (`JobRemoved`, "done") with more signals after it.
const RELOAD_ANSWER: &[u8] = include_bytes!("systemd252_reload.bin");
/// What the helper sent it (`ReloadUnit("docker.service", "replace")`, serial 1), which systemd
/// took and answered.
const RELOAD_CALL: &[u8] = include_bytes!("systemd252_reload_call.bin");

fn replay(answer: &[u8]) -> (Bus, UnixStream) {
    let (ours, mut theirs) = UnixStream::pair().unwrap();
    theirs.write_all(answer).unwrap();
    (Bus::over(ours, Duration::from_secs(5)), theirs)
}

/// Where the job's end (its `JobRemoved` signal) starts and ends in [`RELOAD_ANSWER`].
fn job_removed() -> (usize, usize) {
    let at = RELOAD_ANSWER
        .windows(10)
        .position(|w| w == b"JobRemoved")
        .unwrap();
    let start = RELOAD_ANSWER[..at]
        .windows(4)
        .rposition(|w| w == [b'l', 4, 1, 1])
        .unwrap();
    let mut fixed = [0u8; 16];
    fixed.copy_from_slice(&RELOAD_ANSWER[start..start + 16]);
    (start, start + super::message::length(&fixed).unwrap())
}

#[test]
fn a_reload_is_asked_as_systemd_took_it_and_ends_when_its_job_does() {
    let (mut bus, mut theirs) = replay(RELOAD_ANSWER);
    bus.job("reload", "docker.service").unwrap();
    let mut sent = vec![0u8; RELOAD_CALL.len()];
    theirs.read_exact(&mut sent).unwrap();
    assert_eq!(sent, RELOAD_CALL);
    theirs.set_nonblocking(true).unwrap();
    assert!(
        theirs.read(&mut [0u8; 1]).is_err(),
        "one call, nothing more"
    );
}

#[test]
fn a_job_whose_end_never_comes_is_given_up_at_the_deadline() {
    // the answer up to the job's end, without it
    let (start, _) = job_removed();
    let (ours, mut theirs) = UnixStream::pair().unwrap();
    theirs.write_all(&RELOAD_ANSWER[..start]).unwrap();
    let mut bus = Bus::over(ours, Duration::from_millis(300));
    match bus.job("reload", "docker.service") {
        Err(BusError::Io(e)) => assert!(
            matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_answer_that_is_not_a_message_is_refused_not_waited_on() {
    let mut big_endian = RELOAD_ANSWER.to_vec();
    big_endian[0] = b'B';
    let (mut bus, _theirs) = replay(&big_endian);
    assert!(matches!(
        bus.job("reload", "docker.service"),
        Err(BusError::Unreadable(why)) if why.contains("not little-endian")
    ));
}

#[test]
fn a_verb_systemd_has_no_job_for_is_refused_before_anything_is_sent() {
    let (mut bus, theirs) = replay(&[]);
    assert!(matches!(
        bus.job("enable", "x.service"),
        Err(BusError::Refused(_))
    ));
    drop(bus);
    theirs.set_nonblocking(true).unwrap();
    let mut sent = Vec::new();
    let _ = (&theirs).read_to_end(&mut sent);
    assert!(sent.is_empty());
}

#[test]
fn a_socket_that_never_accepts_is_given_up_at_the_deadline() {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketType};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("private");
    let path = path.to_str().unwrap();
    let listener = rustix::net::socket(AddressFamily::UNIX, SocketType::STREAM, None).unwrap();
    rustix::net::bind(&listener, &SocketAddrUnix::new(path).unwrap()).unwrap();
    rustix::net::listen(&listener, 0).unwrap();
    // the queue filled by connections nobody accepts
    let mut queued = Vec::new();
    let started = std::time::Instant::now();
    let refused = loop {
        match super::connect_within(path, Duration::from_millis(200)) {
            Ok(stream) => queued.push(stream),
            Err(e) => break e,
        }
        assert!(
            queued.len() < 64,
            "a listen queue of 0 took {} connections",
            queued.len()
        );
    };
    assert!(
        matches!(
            refused.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{refused}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn another_jobs_end_is_passed_over_while_this_ones_is_awaited() {
    // systemd's answer with, just before this job's end, another job's end that failed
    let (start, end) = job_removed();
    let mut other = RELOAD_ANSWER[start..end].to_vec();
    let job = other.windows(4).rposition(|w| w == b"job/").unwrap();
    other[job + 4] = if other[job + 4] == b'9' { b'8' } else { b'9' };
    let done = other.windows(4).rposition(|w| w == b"done").unwrap();
    other[done..done + 4].copy_from_slice(b"oops");
    let mut answer = RELOAD_ANSWER[..start].to_vec();
    answer.extend_from_slice(&other);
    answer.extend_from_slice(&RELOAD_ANSWER[start..]);
    let (mut bus, _theirs) = replay(&answer);
    assert!(bus.job("reload", "docker.service").is_ok());
}
