//! What a resource puts on a machine, as text a plan's diff can show (never a secret).

use std::collections::BTreeMap;

use crate::wire::{Spec, wanted_state};

/// What a resource puts on the machine, as text a diff can show: a file's content, the keys a
/// keys resource owns (`key = value`, one a line), a service's wanted state.
pub fn content(spec: &Spec) -> String {
    match spec {
        // a secret never reaches a plan: only that it changes
        Spec::File(f) if f.secret => match &f.sealed {
            // the keyed digest, so that a changed secret shows as changed, and nothing of it
            Some(s) => format!(
                "(secret: content not shown)\n(sealed; its digest {})\n",
                s.digest.get(..12).unwrap_or(&s.digest)
            ),
            None => "(secret: content not shown)\n".to_string(),
        },
        Spec::File(f) => f.content.clone(),
        Spec::Keys(k) => k
            .keys
            .iter()
            .map(|key| format!("{} = {}\n", key.dotted(), key.value))
            .collect(),
        Spec::Service(sv) => {
            let mut out: String = wanted_state(sv.running, sv.enabled)
                .iter()
                .map(|w| format!("{w}\n"))
                .collect();
            if !sv.on_removal.is_give_back() {
                out.push_str(&format!("on removal: {}\n", sv.on_removal.name()));
            }
            out
        }
        Spec::Directory(d) => format!("directory {}:{} {:04o}\n", d.owner, d.group, d.mode),
        Spec::Package(p) if p.absent => format!("removed {}\n", p.name),
        Spec::Package(p) => match &p.version {
            Some(v) => format!("installed {} at {v}\n", p.name),
            None => format!("installed {}\n", p.name),
        },
        Spec::Symlink(l) => format!("link -> {}\n", l.target),
        Spec::Sysctl(s) => format!("{} = {}\n", s.name, s.value),
        // both files, as the helper writes them: a moved uri or a new key shows line by line
        Spec::AptRepository(a) => format!(
            "{}:\n{}\n{}:\n{}",
            a.sources_path(),
            a.sources_text(),
            a.key_path(),
            a.key_text()
        ),
        Spec::Group(g) => format!(
            "group {}{}\n",
            g.name,
            g.gid.map(|id| format!(" gid {id}")).unwrap_or_default()
        ),
        Spec::User(u) => user(u),
        Spec::Timer(t) => format!(
            "command: {}\nuser: {}\nschedule: {}\n",
            serde_json::to_string(&t.command).unwrap_or_default(),
            t.user,
            t.schedule
        ),
        Spec::Container(c) => container(c),
        Spec::Process(p) => process(p),
    }
}

/// A container as a plan shows it: its image, command, environment, mounts and ports.
fn container(c: &crate::wire::ContainerSpec) -> String {
    let mut out = format!("image: {}\nrestart: {}\n", c.image, c.restart);
    if !c.command.is_empty() {
        out.push_str(&format!(
            "command: {}\n",
            serde_json::to_string(&c.command).unwrap_or_default()
        ));
    }
    out.push_str(&environment(&c.environment, &c.secret_environment));
    // the operator's data it reaches, too: a `mesh place` elsewhere shows as a mount
    for m in &c.binds() {
        out.push_str(&format!(
            "mount {} -> {}{}\n",
            m.source,
            m.target,
            if m.read_only { " (read-only)" } else { "" }
        ));
    }
    for p in &c.ports {
        out.push_str(&format!("port {}:{}/{}\n", p.host, p.container, p.protocol));
    }
    out
}

/// A process as a plan shows it: its command, user, environment and bundle files.
fn process(p: &crate::wire::ProcessSpec) -> String {
    let mut out = format!(
        "command: {}\nuser: {}\nrestart: {}\n",
        serde_json::to_string(&p.command).unwrap_or_default(),
        p.user,
        p.restart
    );
    if let Some(d) = &p.working_directory {
        out.push_str(&format!("working directory: {d}\n"));
    }
    out.push_str(&environment(&p.environment, &p.secret_environment));
    for f in &p.bundle {
        out.push_str(&format!(
            "--- bundle {} ({:04o})\n{}",
            f.path, f.mode, f.content
        ));
        if !f.content.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Environment variables as a plan shows them: a secret's value never.
fn environment(vars: &BTreeMap<String, String>, secret: &[String]) -> String {
    vars.iter()
        .map(|(k, v)| {
            if secret.contains(k) {
                // that it changed still shows: the change names the field "environment"
                format!("environment {k}=(secret: not shown)\n")
            } else {
                format!("environment {k}={v}\n")
            }
        })
        .collect()
}

/// A user as a plan shows it: one field a line, so that a diff names what moves.
fn user(u: &crate::wire::UserSpec) -> String {
    let mut out = format!(
        "user {}{}\n",
        u.name,
        if u.system { " (system)" } else { "" }
    );
    if let Some(uid) = u.uid {
        out.push_str(&format!("uid: {uid}\n"));
    }
    out.push_str(&format!("home: {}\n", u.home_or_default()));
    if let Some(shell) = &u.shell {
        out.push_str(&format!("shell: {shell}\n"));
    }
    if let Some(groups) = &u.groups {
        out.push_str(&format!("groups: {}\n", groups.join(",")));
    }
    if let Some(keys) = &u.authorized_keys {
        out.push_str("authorized_keys:\n");
        out.extend(keys.lines().map(|k| format!("  {k}\n")));
    }
    out
}
