//! An Ansible inventory in INI form, read as `ansible-inventory --list` reads it: groups,
//! `[group:children]`, `[group:vars]`, host ranges (`web[01:03].example.org`, `db-[a:c]`),
//! variables on the host line, and a host's variables over its groups', a child group's over its
//! parents', `all`'s under every other. Each host comes out with its variables and every group it
//! belongs to, directly or through children (`all` and `ungrouped` aside).

use std::collections::{BTreeMap, BTreeSet};

/// Variables by name, as the file gives them.
type Vars = BTreeMap<String, String>;

/// One host, as the inventory says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnsibleHost {
    pub name: String,
    /// Its variables, the host's own over its groups' as Ansible takes them.
    pub vars: BTreeMap<String, String>,
    /// Every group it is in, directly or through a parent's children.
    pub groups: BTreeSet<String>,
}

/// A line of the file that is not an inventory line, with why.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{file}:{line}: {why}")]
pub struct AnsibleError {
    pub file: String,
    pub line: usize,
    pub why: String,
}

#[derive(Default)]
struct Group {
    hosts: Vec<String>,
    children: Vec<String>,
    vars: BTreeMap<String, String>,
}

enum Section {
    Hosts(String),
    Children(String),
    Vars(String),
}

/// Every host of the INI inventory `text` (`file` names it in errors), by name.
pub fn parse_ini(text: &str, file: &str) -> Result<Vec<AnsibleHost>, AnsibleError> {
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let mut host_vars: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut section = Section::Hosts("ungrouped".into());
    for (n, raw) in text.lines().enumerate() {
        let err = |why: String| AnsibleError {
            file: file.to_string(),
            line: n + 1,
            why,
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(head) = line.strip_prefix('[') {
            let head = head
                .strip_suffix(']')
                .ok_or_else(|| err(format!("a section header ends with ]: {line:?}")))?;
            section = match head.split_once(':') {
                None => Section::Hosts(head.to_string()),
                Some((g, "children")) => Section::Children(g.to_string()),
                Some((g, "vars")) => Section::Vars(g.to_string()),
                Some((_, other)) => {
                    return Err(err(format!(
                        "[{head}]: a section is NAME, NAME:children or NAME:vars, not :{other}"
                    )));
                }
            };
            let name = match &section {
                Section::Hosts(g) | Section::Children(g) | Section::Vars(g) => g.clone(),
            };
            if !valid_group(&name) {
                return Err(err(format!(
                    "{name:?} is not a group name (letters, digits and _)"
                )));
            }
            groups.entry(name).or_default();
            continue;
        }
        match &section {
            Section::Hosts(g) => {
                for (host, own) in host_line(line).map_err(err)? {
                    host_vars.entry(host.clone()).or_default().extend(own);
                    groups.entry(g.clone()).or_default().hosts.push(host);
                }
            }
            Section::Children(g) => {
                if !valid_group(line) {
                    return Err(err(format!("{line:?} is not a group name")));
                }
                groups.entry(line.to_string()).or_default();
                groups
                    .entry(g.clone())
                    .or_default()
                    .children
                    .push(line.to_string());
            }
            Section::Vars(g) => {
                let (k, v) = line
                    .split_once('=')
                    .ok_or_else(|| err(format!("{line:?} in [{g}:vars] is not KEY=VALUE")))?;
                let v = words(v.trim()).map_err(err)?.join(" ");
                groups
                    .entry(g.clone())
                    .or_default()
                    .vars
                    .insert(k.trim().to_string(), v);
            }
        }
    }
    Ok(hosts(&groups, host_vars))
}

/// The hosts a host line names (a range is several), each with the line's variables.
fn host_line(line: &str) -> Result<Vec<(String, Vars)>, String> {
    let words = words(line)?;
    let (pattern, vars) = words.split_first().ok_or("no host")?;
    let mut own = BTreeMap::new();
    for v in vars {
        let (k, val) = v
            .split_once('=')
            .ok_or_else(|| format!("{v:?} after the host is not KEY=VALUE"))?;
        own.insert(k.to_string(), val.to_string());
    }
    Ok(expand(pattern)?
        .into_iter()
        .map(|h| (h, own.clone()))
        .collect())
}

/// Each host with its groups (through children too) and its variables: `all`'s, then each
/// group's from the shallowest to the deepest (by name where two are as deep), then its own.
fn hosts(
    groups: &BTreeMap<String, Group>,
    host_vars: BTreeMap<String, BTreeMap<String, String>>,
) -> Vec<AnsibleHost> {
    let mut depth: BTreeMap<&str, usize> = BTreeMap::new();
    let mut member: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (name, g) in groups {
        depth.entry(name).or_insert(1);
        for h in &g.hosts {
            member.entry(h).or_default().insert(name.clone());
        }
    }
    // a child is one deeper than its deepest parent, and carries its hosts up to every parent
    for _ in 0..groups.len() {
        for (name, g) in groups {
            for c in &g.children {
                let d = depth[name.as_str()] + 1;
                let at = depth.entry(c).or_insert(d);
                *at = (*at).max(d);
            }
        }
    }
    for _ in 0..groups.len() {
        for (name, g) in groups {
            for of in member.values_mut() {
                if g.children.iter().any(|c| of.contains(c)) {
                    of.insert(name.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for (host, own) in host_vars {
        let of = member.remove(host.as_str()).unwrap_or_default();
        let mut order: Vec<&String> = of.iter().collect();
        order.sort_by_key(|g| (depth.get(g.as_str()).copied().unwrap_or(1), g.to_string()));
        let mut vars = groups
            .get("all")
            .map(|g| g.vars.clone())
            .unwrap_or_default();
        for g in order {
            if let Some(group) = groups.get(g) {
                vars.extend(group.vars.clone());
            }
        }
        vars.extend(own);
        let groups = of
            .into_iter()
            .filter(|g| g != "all" && g != "ungrouped")
            .collect();
        out.push(AnsibleHost {
            name: host,
            vars,
            groups,
        });
    }
    out
}

fn valid_group(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A line split into words as Ansible's INI parser splits a host line: by blanks, a quoted
/// part (`'…'` or `"…"`) one word with its quotes taken off.
fn words(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, '#') if word.is_empty() && !any => break,
            (None, c) => word.push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("a quote is not closed: {line:?}"));
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    Ok(out)
}

/// A host pattern's names: `web[01:03].example.org` is web01, web02 and web03; `db-[a:c]` is
/// db-a, db-b and db-c; `[1:9:2]` steps by 2. A name without brackets is itself.
fn expand(pattern: &str) -> Result<Vec<String>, String> {
    let Some(open) = pattern.find('[') else {
        return Ok(vec![pattern.to_string()]);
    };
    let close = pattern[open..]
        .find(']')
        .map(|c| open + c)
        .ok_or_else(|| format!("{pattern:?}: a range [A:B] is not closed"))?;
    let (head, range, tail) = (
        &pattern[..open],
        &pattern[open + 1..close],
        &pattern[close + 1..],
    );
    let parts: Vec<&str> = range.split(':').collect();
    let bad = || format!("{pattern:?}: [{range}] is not a range [A:B] or [A:B:STEP]");
    let (from, to) = match parts.as_slice() {
        [a, b] | [a, b, _] => (*a, *b),
        _ => return Err(bad()),
    };
    let step: usize = match parts.get(2) {
        Some(s) => s.parse().ok().filter(|s| *s > 0).ok_or_else(bad)?,
        None => 1,
    };
    let items: Vec<String> = match (from.parse::<u64>(), to.parse::<u64>()) {
        (Ok(a), Ok(b)) if a <= b => {
            let width = if from.starts_with('0') { from.len() } else { 0 };
            (a..=b)
                .step_by(step)
                .map(|i| format!("{i:0width$}"))
                .collect()
        }
        _ => {
            let (mut a, mut b) = (from.chars(), to.chars());
            match (a.next(), a.next(), b.next(), b.next()) {
                (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && x <= y => {
                    (x..=y).step_by(step).map(String::from).collect()
                }
                _ => return Err(bad()),
            }
        }
    };
    let mut out = Vec::new();
    for rest in expand(tail)? {
        for i in &items {
            out.push(format!("{head}{i}{rest}"));
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "ansible_tests.rs"]
mod tests;
