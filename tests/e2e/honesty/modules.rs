//! The honesty test's modules: real units, settings of every cost, a provider and its consumer.

/// A file the service `mesh-honest.service` (the test installs it: it reloads) reads, checked by
/// `validate` (a label `refuse` is refused), and a process whose bundle reads a restart setting.
pub const ALPHA: &str = r#"{
  "name": "alpha", "version": "VERSION", "description": "A file a service reads, and a process.",
  "settings": [
    {"name": "level", "type": "integer", "meaning": "A number nothing reads.", "default": 1, "cost": "none"},
    {"name": "label", "type": "string", "meaning": "A word the service re-reads on reload.", "default": "a", "cost": "reload"},
    {"name": "flavour", "type": "string", "meaning": "A word the worker reads at start.", "default": "plain", "cost": "restart"}
  ],
  "resources": [
    {"kind": "file", "path": "/etc/mesh-alpha.conf", "template": "alpha.conf", "mode": "0644",
     "cost": "restart", "units": ["mesh-honest.service"],
     "validate": ["/bin/sh", "-c", "! grep -q refuse /etc/mesh-alpha.conf"]},
    {"kind": "service", "unit": "mesh-honest.service", "state": "running"},
    {"kind": "process", "description": "A worker", "command": ["/bin/sh", "run.sh"],
     "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}
  ]
}"#;

pub fn alpha_files(version: u32) -> Vec<(&'static str, String)> {
    vec![
        (
            "alpha.conf",
            format!("# alpha {version}\nlevel=${{level}}\nlabel=${{label}}\n"),
        ),
        (
            "run.sh",
            "# flavour ${flavour}\nwhile :; do sleep 10; done\n".to_string(),
        ),
    ]
}

/// Keys in a shared file, and a directory the host gives it.
pub const BETA: &str = r#"{
  "name": "beta", "version": "1", "description": "Keys in a shared file and a directory.",
  "settings": [{"name": "level", "type": "integer", "meaning": "A number.", "default": 1, "cost": "none"}],
  "requires": [{"name": "spool", "kind": "host", "directory": {}}],
  "resources": [
    {"kind": "keys", "path": "/etc/mesh-beta.json", "keys": {"beta": {"level": "${level}"}}}
  ]
}"#;

/// A provider of `x`: its node's address and a port the host gives it.
pub const PROV: &str = r#"{
  "name": "prov", "version": "1", "description": "Provides an address.",
  "requires": [
    {"name": "machine", "kind": "host", "fact": {}},
    {"name": "listen", "kind": "host", "port": {}}
  ],
  "provides": [{"name": "x", "fields": {
    "host": {"type": "string", "value": "${machine.address}"},
    "port": {"type": "integer", "value": "${listen.port}"}
  }}],
  "resources": [{"kind": "file", "path": "/etc/mesh-prov.conf", "template": "prov.conf"}]
}"#;

/// A consumer of `x`: a file its process reads at start.
pub const CONS: &str = r#"{
  "name": "cons", "version": "1", "description": "Reads an address.",
  "requires": [
    {"name": "x", "kind": "module", "provision": "x",
     "fields": {"host": {"type": "string"}, "port": {"type": "integer"}}},
    {"name": "me", "kind": "mesh"}
  ],
  "resources": [
    {"kind": "file", "path": "/etc/mesh-cons.conf", "template": "cons.conf", "mode": "0644",
     "cost": "restart", "units": ["${me.instance}.service"]},
    {"kind": "process", "description": "A consumer", "command": ["/bin/sh", "run.sh"],
     "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}]}
  ]
}"#;

/// The unit `alpha` declares running: one the machine has (the mesh did not make it), that can
/// reload.
pub const HONEST_UNIT: &str = "printf '[Service]\\nExecStart=/bin/sleep infinity\\nExecReload=/bin/true\\n' \
    >/etc/systemd/system/mesh-honest.service && systemctl daemon-reload \
    && systemctl start mesh-honest.service";

/// A process rolled out one machine at a time, whose readiness probe fails while its `health`
/// is `bad`: a canary that fails stops the rollout, and the later waves are held.
pub const GAMMA: &str = r#"{
  "name": "gamma", "version": "1", "description": "A process rolled out one machine at a time.",
  "rollout": {"max-unavailable": 1},
  "settings": [
    {"name": "mark", "type": "string", "meaning": "A word the worker reads at start.", "default": "a", "cost": "restart"},
    {"name": "health", "type": "string", "meaning": "What its probe answers (bad: it fails).", "default": "good", "cost": "restart"}
  ],
  "resources": [
    {"kind": "process", "description": "A worker rolled out in waves", "command": ["/bin/sh", "run.sh"],
     "bundle": [{"path": "run.sh", "template": "run.sh", "mode": "0755"}],
     "ready": {"command": ["/bin/test", "${health}", "=", "good"], "timeout": 2}}
  ]
}"#;

/// Whatever an earlier run left on a machine.
pub const CLEAN: &str = "rm -rf /etc/mesh-alpha.conf /etc/mesh-beta.json /etc/mesh-prov.conf \
    /etc/mesh-cons.conf /srv/mesh/beta /var/lib/mesh/fault";
