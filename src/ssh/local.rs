//! Who the operator is on this machine, as OpenSSH takes it: the default user for a jump host
//! the configuration gives none, and `%u`.

use std::sync::OnceLock;

/// The local user name: `USER`, else `LOGNAME`, else the passwd entry of this process's user
/// (`id -un`, so NSS stays in its own process); `None` if none of them says.
pub fn local_user() -> Option<String> {
    static USER: OnceLock<Option<String>> = OnceLock::new();
    USER.get_or_init(|| {
        let named = |var| std::env::var(var).ok().filter(|u| !u.is_empty());
        named("USER")
            .or_else(|| named("LOGNAME"))
            .or_else(from_passwd)
    })
    .clone()
}

fn from_passwd() -> Option<String> {
    let out = std::process::Command::new("id")
        .arg("-un")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let name = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!name.is_empty()).then_some(name)
}
