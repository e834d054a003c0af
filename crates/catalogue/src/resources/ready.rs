//! A readiness probe (`"ready"` on a process, service or container): its definition, its check
//! when the module is loaded, how `mesh module show` says it, and how a node's answers fill it in.
//!
//! Every string may read settings and requirements (`${listen.port}`), so a port the host gives
//! the module can be probed; what is written literally is checked at `module check`, what a
//! template fills in once the node is resolved.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use crate::CatalogueError;
use crate::scope::Reading;
use crate::template::Template;
use mesh_wire::{Probe, READY_TIMEOUT, Ready, local_http};

/// The only URLs a probe may ask: the node itself, by number (no name service is asked).
const LOCAL: &str = "http://127.0.0.1:";

/// A probe as module.json defines it, every string a template.
#[derive(Debug, Clone)]
pub struct ReadyDef {
    pub probe: ProbeDef,
    /// Seconds it is retried for.
    pub timeout: u64,
}

/// What the probe asks of the machine.
#[derive(Debug, Clone)]
pub enum ProbeDef {
    /// A command (argv, no shell) run as root that must exit 0.
    Command(Vec<Template>),
    /// A TCP port on 127.0.0.1 that must accept.
    Tcp(Template),
    /// A GET of `http://127.0.0.1:PORT/PATH` that must answer `status`.
    Http { url: Template, status: u16 },
}

impl ReadyDef {
    /// `; ready when …`, for `describe`.
    pub(super) fn describe(&self) -> String {
        let what = match &self.probe {
            ProbeDef::Command(argv) => format!(
                "command {} exits 0",
                argv.iter()
                    .map(Template::source_text)
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            ProbeDef::Tcp(port) => format!("tcp 127.0.0.1:{} accepts", port.source_text()),
            ProbeDef::Http { url, status } => {
                format!("http {} answers {status}", url.source_text())
            }
        };
        format!("; ready when {what} (within {} s)", self.timeout)
    }

    /// The probe a node is sent, its templates filled in; an error says what a value made of it.
    pub fn render(&self, values: &BTreeMap<String, Value>) -> Result<Ready, ProbeError> {
        let probe = match &self.probe {
            ProbeDef::Command(argv) => {
                Probe::Command(argv.iter().map(|w| w.fill(values)).collect())
            }
            ProbeDef::Tcp(port) => {
                let text = port.fill(values);
                Probe::Tcp(tcp_port(&text).ok_or_else(|| ProbeError::NotAPort {
                    template: port.source_text(),
                    text: text.clone(),
                })?)
            }
            ProbeDef::Http { url, status } => {
                let text = url.fill(values);
                if local_http(&text).is_none() {
                    return Err(ProbeError::NotALocalUrl {
                        template: url.source_text(),
                        text,
                    });
                }
                Probe::Http {
                    url: text,
                    status: *status,
                }
            }
        };
        Ok(Ready {
            probe,
            timeout: self.timeout,
        })
    }
}

/// What a filled-in probe template read as that a probe cannot use: its template as written, and
/// the text it made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    #[error("ready.tcp {template} reads as {text:?}, not a port")]
    NotAPort { template: String, text: String },
    #[error("ready.http {template} reads as {text:?}, not a {LOCAL}PORT/PATH URL")]
    NotALocalUrl { template: String, text: String },
}

/// A port a probe can connect to: 1 to 65535.
fn tcp_port(text: &str) -> Option<u16> {
    text.trim().parse().ok().filter(|p| *p != 0)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReady {
    command: Option<Vec<String>>,
    tcp: Option<Value>,
    http: Option<String>,
    status: Option<u16>,
    timeout: Option<u64>,
}

impl Parser<'_> {
    /// `resources[i].ready`, when the resource declares one.
    pub(super) fn ready(
        &self,
        i: usize,
        value: Option<Value>,
    ) -> Result<Option<ReadyDef>, CatalogueError> {
        let Some(value) = value else {
            return Ok(None);
        };
        let at = |field: &str| format!("resources[{i}].ready{field}");
        let raw: RawReady = serde_json::from_value(value).map_err(|e| {
            self.invalid(
                &at(""),
                format!("{e}: a probe is {{\"command\": [ARGV…]}}, {{\"tcp\": PORT}} or {{\"http\": \"{LOCAL}PORT/PATH\", \"status\": 200}}, with an optional \"timeout\" in seconds"),
            )
        })?;
        let timeout = raw.timeout.unwrap_or(READY_TIMEOUT);
        if timeout == 0 {
            return Err(self.invalid(
                &at(".timeout"),
                "0 is no time to answer: give the seconds it may take (60 if not said)".into(),
            ));
        }
        if raw.status.is_some() && raw.http.is_none() {
            return Err(self.invalid(&at(".status"), "only an http probe answers a status".into()));
        }
        let probe = match (raw.command, raw.tcp, raw.http) {
            (Some(argv), None, None) => self.command_probe(i, &argv)?,
            (None, Some(port), None) => self.tcp_probe(i, &port)?,
            (None, None, Some(url)) => self.http_probe(i, &url, raw.status)?,
            _ => {
                return Err(self.invalid(
                    &at(""),
                    "say exactly one of \"command\", \"tcp\" or \"http\"".into(),
                ));
            }
        };
        Ok(Some(ReadyDef { probe, timeout }))
    }

    fn command_probe(&self, i: usize, argv: &[String]) -> Result<ProbeDef, CatalogueError> {
        if argv.first().is_none_or(|w| w.trim().is_empty()) {
            return Err(self.invalid(
                &format!("resources[{i}].ready.command"),
                "empty: the command and its arguments, as a list (run as root, no shell)".into(),
            ));
        }
        let words = argv
            .iter()
            .enumerate()
            .map(|(w, word)| self.template(i, &format!("ready.command[{w}]"), word, Reading::Plain))
            .collect::<Result<_, _>>()?;
        Ok(ProbeDef::Command(words))
    }

    fn tcp_probe(&self, i: usize, port: &Value) -> Result<ProbeDef, CatalogueError> {
        let field = "ready.tcp";
        let at = format!("resources[{i}].{field}");
        let text = match port {
            Value::Number(n) => n.to_string(),
            Value::String(t) => t.clone(),
            other => {
                return Err(self.invalid(
                    &at,
                    format!("{other} is not a port number or \"${{name.port}}\""),
                ));
            }
        };
        let template = self.template(i, field, &text, Reading::Plain)?;
        if template.references().is_empty() && tcp_port(&text).is_none() {
            return Err(self.invalid(
                &at,
                format!("{text} is not a port a probe can connect to (1 to 65535)"),
            ));
        }
        Ok(ProbeDef::Tcp(template))
    }

    fn http_probe(
        &self,
        i: usize,
        url: &str,
        status: Option<u16>,
    ) -> Result<ProbeDef, CatalogueError> {
        let field = "ready.http";
        let at = format!("resources[{i}].{field}");
        let template = self.template(i, field, url, Reading::Plain)?;
        // the host is never a setting's: only the port and path may be filled in
        let literal_ok = if template.references().is_empty() {
            local_http(url).is_some()
        } else {
            url.starts_with(LOCAL)
        };
        if !literal_ok {
            return Err(self.invalid(
                &at,
                format!("{url:?} is not a {LOCAL}PORT/PATH URL (the node itself, a port above 0)"),
            ));
        }
        let status = status.unwrap_or(200);
        if !(100..=599).contains(&status) {
            return Err(self.invalid(
                &format!("resources[{i}].ready.status"),
                format!("{status} is not an HTTP status"),
            ));
        }
        Ok(ProbeDef::Http {
            url: template,
            status,
        })
    }
}
