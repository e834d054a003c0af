//! A readiness probe: what says a unit the helper started, restarted or reloaded is serving.

use serde::{Deserialize, Serialize};

/// Seconds a probe is retried for when the module does not say.
pub const READY_TIMEOUT: u64 = 60;

/// A probe the helper runs after every start, restart or reload it made, retrying until
/// `timeout` seconds have passed; one that never passes fails the resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ready {
    pub probe: Probe,
    /// Seconds it is retried for.
    pub timeout: u64,
}

/// What is asked of the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Probe {
    /// A command (argv, no shell) run as root that must exit 0.
    Command(Vec<String>),
    /// A TCP port on 127.0.0.1 that must accept a connection.
    Tcp(u16),
    /// An HTTP GET of a `http://127.0.0.1:PORT/PATH` URL that must answer `status`.
    Http { url: String, status: u16 },
}

impl std::fmt::Display for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Probe::Command(argv) => write!(f, "command {}", argv.join(" ")),
            Probe::Tcp(port) => write!(f, "tcp 127.0.0.1:{port}"),
            Probe::Http { url, status } => write!(f, "http {url} (status {status})"),
        }
    }
}

/// The port and path of a probe's URL: only `http://127.0.0.1:PORT/PATH` (the node itself,
/// numeric, so no name service is asked). `None` for any other.
pub fn local_http(url: &str) -> Option<(u16, &str)> {
    let rest = url.strip_prefix("http://127.0.0.1:")?;
    let (port, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, "/"),
    };
    let port = port.parse().ok().filter(|p| *p != 0)?;
    let clean = path.bytes().all(|b| b.is_ascii_graphic() && b != b'#');
    clean.then_some((port, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_local_numeric_url_is_probed() {
        assert_eq!(
            local_http("http://127.0.0.1:8080/health"),
            Some((8080, "/health"))
        );
        assert_eq!(local_http("http://127.0.0.1:80"), Some((80, "/")));
        assert_eq!(local_http("http://localhost:80/"), None);
        assert_eq!(local_http("https://127.0.0.1:80/"), None);
        assert_eq!(local_http("http://127.0.0.1:0/"), None);
        assert_eq!(local_http("http://127.0.0.1:80/a b"), None);
    }
}
