//! `mesh man`: the manual page, from the same definitions as `--help`: clap_mangen's page for
//! `mesh`, then a section per command with its full help and examples.

use anyhow::Result;

/// The page, in roff.
pub(crate) fn page(mut cmd: clap::Command) -> Result<String> {
    // built, every command knows its full name (`mesh node add`) for its usage line
    cmd.build();
    let mut bytes = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut bytes)?;
    let mut page = String::from_utf8_lossy(&bytes).into_owned();
    let mut commands = Vec::new();
    every(&cmd, &mut commands);
    for sub in commands {
        let name = sub.get_bin_name().unwrap_or(sub.get_name()).to_string();
        page.push_str(&format!(".SH \"{}\"\n.nf\n", name.to_uppercase()));
        for line in sub.clone().render_long_help().to_string().lines() {
            page.push_str(&roff_line(line));
            page.push('\n');
        }
        page.push_str(".fi\n");
    }
    Ok(page)
}

/// Every visible command under `cmd`, depth first.
fn every(cmd: &clap::Command, into: &mut Vec<clap::Command>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() == "help" {
            continue;
        }
        into.push(sub.clone());
        every(sub, into);
    }
}

/// A line of text as roff shows it: backslashes escaped, a leading `.` or `'` not a request.
fn roff_line(line: &str) -> String {
    let line = line.replace('\\', "\\e");
    if line.starts_with('.') || line.starts_with('\'') {
        format!("\\&{line}")
    } else {
        line
    }
}
