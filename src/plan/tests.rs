//! Plans compared with what machines confirmed: changes, costs, removals, secrets.

use super::*;
use crate::wire::{Costing, FileSpec, SettingUse, Spec, VERSION};

fn file(path: &str, content: &str, digest: &str, units: &[&str]) -> Resource {
    let mut settings = BTreeMap::new();
    settings.insert(
        "k".to_string(),
        SettingUse {
            digest: digest.into(),
            cost: Cost::Reload,
        },
    );
    Resource {
        id: format!("m:file:{path}"),
        instance: "m".into(),
        module: "m@1".into(),
        confirm: false,
        spec: Spec::File(FileSpec {
            path: path.into(),
            owner: "root".into(),
            group: "root".into(),
            mode: 0o644,
            content: content.into(),
            validate: vec![],
            secret: false,
            sealed: None,
            effective: None,
            costing: Costing {
                source: "s".into(),
                settings,
                cost: Cost::Restart,
                units: units.iter().map(|u| u.to_string()).collect(),
            },
        }),
    }
}

fn decl(resources: Vec<Resource>) -> Declaration {
    Declaration {
        version: VERSION,
        node: "n".into(),
        resources,
        expects_record: false,
        confirm_within: None,
        confirm_removals: Vec::new(),
        keep: Vec::new(),
        planned: None,
    }
}

#[test]
fn an_unchanged_node_plans_nothing() {
    let d = decl(vec![file("/a", "x", "1", &[])]);
    let p = plan(&d, Some(&d), None);
    assert!(p.changes.is_empty() && p.units.is_empty());
}

#[test]
fn added_changed_and_removed_are_named_by_id() {
    let old = decl(vec![file("/a", "x", "1", &[]), file("/b", "x", "1", &[])]);
    let new = decl(vec![
        file("/a", "y", "2", &["u.service"]),
        file("/c", "x", "1", &[]),
    ]);
    let p = plan(&new, Some(&old), None);
    let got: Vec<(char, &str)> = p
        .changes
        .iter()
        .map(|c| (c.action.sign(), c.id.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![('~', "m:file:/a"), ('+', "m:file:/c"), ('-', "m:file:/b")]
    );
    assert_eq!(p.changes[0].fields, vec!["content", "units"]);
}

#[test]
fn a_setting_that_moved_costs_its_own_cost() {
    let old = decl(vec![file("/a", "x", "1", &["u.service"])]);
    let new = decl(vec![file("/a", "y", "2", &["u.service"])]);
    let p = plan(&new, Some(&old), None);
    assert_eq!(p.units.len(), 1);
    assert_eq!(p.units[0].action, Cost::Reload);
}

#[test]
fn a_file_given_back_costs_its_readers_its_declared_cost() {
    let old = decl(vec![file("/a", "x", "1", &["u.service"])]);
    let p = plan(&decl(vec![]), Some(&old), None);
    assert_eq!(p.units.len(), 1);
    assert_eq!(p.units[0].action, Cost::Restart);
    assert_eq!(p.units[0].because, vec!["m:file:/a (given back)"]);
    // the helper said undoing it changes nothing (its original was lost): nothing is paid
    let report = Report {
        version: VERSION,
        mode: crate::wire::Mode::Apply,
        hostname: "n".into(),
        host_keys: Vec::new(),
        new_machine: false,
        resources: vec![crate::wire::Outcome {
            id: "m:file:/a".into(),
            state: crate::wire::State::Unchanged,
            detail: String::new(),
            undo: Some(Undo::default()),
            seen: Vec::new(),
            micros: 0,
        }],
        units: vec![],
        adoption: None,
        awaiting: None,
        reverted: Vec::new(),
        pending: None,
        generation: None,
        facts: None,
        steps: Vec::new(),
        generation_not_kept: None,
    };
    assert!(
        plan(&decl(vec![]), Some(&old), Some(&report))
            .units
            .is_empty()
    );
}

#[test]
fn a_plan_says_which_units_start_stop_or_restart() {
    let service = |unit: &str, running: bool| Resource {
        id: format!("m:service:{unit}"),
        instance: "m".into(),
        module: "m@1".into(),
        confirm: false,
        spec: Spec::Service(crate::wire::ServiceSpec {
            unit: unit.into(),
            running: Some(running),
            enabled: None,
            on_removal: Default::default(),
            ready: None,
        }),
    };
    let new = decl(vec![
        file("/a", "x", "1", &["read.service"]),
        service("read.service", true),
        service("alone.service", true),
        service("down.service", false),
    ]);
    let p = plan(&new, None, None);
    let verbs: BTreeMap<&str, &str> = p.units.iter().map(|u| (u.unit.as_str(), u.verb)).collect();
    assert_eq!(verbs["read.service"], "start (or restart, if it runs)");
    assert_eq!(verbs["alone.service"], "start, if it is not running,");
    assert_eq!(verbs["down.service"], "stop");
}

#[test]
fn a_new_module_version_alone_restarts_no_process() {
    let process = |module: &str, command: &str| Resource {
        id: "m:process:m.service".into(),
        instance: "m".into(),
        module: module.into(),
        confirm: false,
        spec: Spec::Process(crate::wire::ProcessSpec {
            unit: "m.service".into(),
            description: "d".into(),
            command: vec![command.into()],
            user: "root".into(),
            environment: BTreeMap::new(),
            secret_environment: vec![],
            sealed_environment: Default::default(),
            working_directory: None,
            restart: "always".into(),
            bundle_dir: "/var/lib/mesh/bundles/m.service".into(),
            bundle: vec![],
            access: vec![],
            ready: None,
        }),
    };
    let old = decl(vec![process("m@1", "/bin/a")]);
    let p = plan(&decl(vec![process("m@2", "/bin/a")]), Some(&old), None);
    assert!(p.units.is_empty(), "{:?}", p.units);
    let p = plan(&decl(vec![process("m@2", "/bin/b")]), Some(&old), None);
    assert_eq!(p.units[0].verb, "restart");
}

#[test]
fn the_plan_names_the_changes_that_need_confirmation_and_no_other() {
    let drop_in = |content: &str| {
        let mut r = file("/etc/ssh/sshd_config.d/50-mesh.conf", content, "1", &[]);
        r.confirm = true;
        r
    };
    let motd = |content: &str| file("/etc/motd", content, "1", &[]);
    let was = decl(vec![drop_in("AllowUsers *\n"), motd("hi\n")]);
    let p = plan(
        &decl(vec![drop_in("AllowUsers ops\n"), motd("hi\n")]),
        Some(&was),
        None,
    );
    assert_eq!(
        p.needs_confirmation,
        vec!["m:file:/etc/ssh/sshd_config.d/50-mesh.conf"]
    );
    let p = plan(
        &decl(vec![drop_in("AllowUsers *\n"), motd("hello\n")]),
        Some(&was),
        None,
    );
    assert!(
        p.needs_confirmation.is_empty(),
        "{:?}",
        p.needs_confirmation
    );
    // taking it off can lock the operator out as well as changing it
    let p = plan(&decl(vec![motd("hi\n")]), Some(&was), None);
    assert_eq!(
        p.needs_confirmation,
        vec!["m:file:/etc/ssh/sshd_config.d/50-mesh.conf"]
    );
}

#[test]
fn an_unchanged_group_or_user_plans_nothing_and_a_moved_gid_is_named() {
    let group = |gid: Option<u32>| Resource {
        id: "team:group:ops".into(),
        instance: "team".into(),
        module: "team@1".into(),
        confirm: false,
        spec: Spec::Group(crate::wire::GroupSpec {
            name: "ops".into(),
            system: false,
            gid,
        }),
    };
    let d = decl(vec![group(None)]);
    assert!(plan(&d, Some(&d), None).changes.is_empty());
    let moved = plan(&decl(vec![group(Some(2000))]), Some(&d), None);
    assert_eq!(moved.changes.len(), 1);
    assert_eq!(moved.changes[0].fields, vec!["gid".to_string()]);
}
