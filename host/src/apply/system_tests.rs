//! The helper's apply of units, packages and accounts, on a machine of the test's own (a temp
//! root and the recording system, as `mesh-host --root` has them): what it asked of the machine,
//! in order, and what the machine then is. They run anywhere, in a moment, without root; the
//! lab proves the same promises against real systemd, dpkg and accounts.

use mesh_wire::{
    BundleFile, Cost, Costing, GroupSpec, Mode, OnRemoval, ProcessSpec, ServiceSpec, Spec, State,
    TimerSpec, UserSpec,
};

use super::testkit::{decl, done, forget_calls, machine, model, resource, run, states};
use crate::record::Paths;
use crate::system::recording::Unit;

fn count(calls: &[String], call: &str) -> usize {
    calls.iter().filter(|c| *c == call).count()
}

fn service(running: bool, enabled: bool) -> mesh_wire::Resource {
    resource(
        "t:service:web",
        Spec::Service(ServiceSpec {
            unit: "web.service".into(),
            running: Some(running),
            enabled: Some(enabled),
            on_removal: OnRemoval::default(),
            ready: None,
        }),
    )
}

#[test]
fn a_service_is_started_and_enabled_once_left_alone_after_and_given_back_as_found() {
    let (_dir, paths) = machine(|m| {
        m.units.insert("web.service".into(), Unit::default());
    });
    let d = decl(vec![service(true, true)]);
    assert_eq!(states(&d, Mode::Apply, &paths), vec![State::Changed]);
    let calls = done(&paths);
    assert_eq!(count(&calls, "systemctl start web.service"), 1, "{calls:?}");
    assert_eq!(
        count(&calls, "systemctl enable web.service"),
        1,
        "{calls:?}"
    );
    assert!(model(&paths).units["web.service"].active);

    forget_calls(&paths);
    assert_eq!(states(&d, Mode::Apply, &paths), vec![State::Unchanged]);
    let calls = done(&paths);
    assert!(
        !calls
            .iter()
            .any(|c| c.starts_with("systemctl ") && c != "systemctl daemon-reload"),
        "a service as declared is not touched: {calls:?}"
    );

    forget_calls(&paths);
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    let calls = done(&paths);
    assert_eq!(count(&calls, "systemctl stop web.service"), 1, "{calls:?}");
    assert_eq!(
        count(&calls, "systemctl disable web.service"),
        1,
        "{calls:?}"
    );
    let web = &model(&paths).units["web.service"];
    assert!(
        !web.active && !web.enabled,
        "stopped and disabled, as found"
    );
}

#[test]
fn a_service_the_machine_does_not_have_fails_and_nothing_is_started() {
    let (_dir, paths) = machine(|_| {});
    assert_eq!(
        states(&decl(vec![service(true, true)]), Mode::Apply, &paths),
        vec![State::Failed]
    );
    let calls = done(&paths);
    assert!(
        !calls
            .iter()
            .any(|c| c.contains("start") || c.contains("enable")),
        "{calls:?}"
    );
}

fn process(command: &str) -> mesh_wire::Resource {
    resource(
        "t:process:app",
        Spec::Process(ProcessSpec {
            unit: "app.service".into(),
            description: "the app (t, by mesh)".into(),
            command: vec![command.into(), "--port".into(), "80".into()],
            user: "root".into(),
            environment: Default::default(),
            secret_environment: vec![],
            sealed_environment: Default::default(),
            working_directory: None,
            restart: "on-failure".into(),
            bundle_dir: "/var/lib/mesh/bundles/app".into(),
            bundle: vec![BundleFile {
                path: "run.sh".into(),
                content: "#!/bin/sh\n".into(),
                mode: 0o755,
                source: "s".into(),
                settings: Default::default(),
            }],
            access: vec![],
            ready: None,
        }),
    )
}

#[test]
fn a_process_is_written_and_started_restarted_when_its_command_changes_and_not_when_nothing_did() {
    let (dir, paths) = machine(|_| {});
    let unit_file = dir.path().join("etc/systemd/system/app.service");
    assert_eq!(
        states(&decl(vec![process("/usr/bin/app")]), Mode::Apply, &paths),
        vec![State::Created]
    );
    let text = std::fs::read_to_string(&unit_file).unwrap();
    assert!(text.contains("/usr/bin/app"), "{text}");
    assert!(dir.path().join("var/lib/mesh/bundles/app/run.sh").is_file());
    let calls = done(&paths);
    let started = count(&calls, "systemctl start app.service")
        + count(&calls, "systemctl restart app.service");
    assert_eq!(started, 1, "started once: {calls:?}");
    assert_eq!(
        count(&calls, "systemctl enable app.service"),
        1,
        "{calls:?}"
    );
    assert!(model(&paths).units["app.service"].active);

    forget_calls(&paths);
    assert_eq!(
        states(&decl(vec![process("/usr/bin/app")]), Mode::Apply, &paths),
        vec![State::Unchanged]
    );
    let calls = done(&paths);
    assert!(
        calls.iter().all(|c| !c.starts_with("systemctl ")),
        "nothing changed, nothing asked of systemd: {calls:?}"
    );

    forget_calls(&paths);
    assert_eq!(
        states(&decl(vec![process("/usr/bin/app2")]), Mode::Apply, &paths),
        vec![State::Changed]
    );
    let calls = done(&paths);
    assert_eq!(
        count(&calls, "systemctl restart app.service"),
        1,
        "{calls:?}"
    );
    assert_eq!(
        count(&calls, "systemctl reload app.service"),
        0,
        "{calls:?}"
    );
    let daemon_reload = calls.iter().position(|c| c == "systemctl daemon-reload");
    let restart = calls
        .iter()
        .position(|c| c == "systemctl restart app.service");
    assert!(
        daemon_reload < restart,
        "systemd reads the new file first: {calls:?}"
    );
    assert!(
        std::fs::read_to_string(&unit_file)
            .unwrap()
            .contains("/usr/bin/app2")
    );

    forget_calls(&paths);
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    let calls = done(&paths);
    assert_eq!(count(&calls, "systemctl stop app.service"), 1, "{calls:?}");
    assert!(!unit_file.exists());
    assert!(!dir.path().join("var/lib/mesh/bundles/app").exists());
    assert!(!model(&paths).units["app.service"].active);
}

#[test]
fn a_timer_is_written_enabled_and_started_once_and_removed_when_undeclared() {
    let (dir, paths) = machine(|_| {});
    let timer = resource(
        "t:timer:backup",
        Spec::Timer(TimerSpec {
            name: "backup".into(),
            description: "backs up (t, by mesh)".into(),
            command: vec!["/usr/bin/backup".into()],
            user: "root".into(),
            schedule: "daily".into(),
        }),
    );
    let d = decl(vec![timer]);
    assert_eq!(states(&d, Mode::Apply, &paths), vec![State::Created]);
    let units = dir.path().join("etc/systemd/system");
    assert!(units.join("backup.timer").is_file());
    assert!(units.join("backup.service").is_file());
    let calls = done(&paths);
    assert_eq!(
        count(&calls, "systemd-analyze calendar daily"),
        1,
        "{calls:?}"
    );
    assert_eq!(
        count(&calls, "systemctl enable backup.timer"),
        1,
        "{calls:?}"
    );
    assert!(model(&paths).units["backup.timer"].active);
    assert!(
        !calls.iter().any(|c| c.ends_with(" backup.service")),
        "the timer starts its service, not the helper: {calls:?}"
    );

    forget_calls(&paths);
    assert_eq!(states(&d, Mode::Apply, &paths), vec![State::Unchanged]);
    let calls = done(&paths);
    assert!(
        !calls.iter().any(|c| c.starts_with("systemctl ")),
        "{calls:?}"
    );

    forget_calls(&paths);
    assert_eq!(
        states(&decl(vec![]), Mode::Apply, &paths),
        vec![State::Removed]
    );
    let calls = done(&paths);
    assert_eq!(count(&calls, "systemctl stop backup.timer"), 1, "{calls:?}");
    assert_eq!(
        count(&calls, "systemctl disable backup.timer"),
        1,
        "{calls:?}"
    );
    assert!(!units.join("backup.timer").exists());
    assert!(!units.join("backup.service").exists());
}

#[test]
fn a_user_and_a_group_are_made_in_order_and_given_back_in_the_other() {
    let (_dir, paths) = machine(|_| {});
    let group = resource(
        "t:group:mesh-sys-deploy",
        Spec::Group(GroupSpec {
            name: "mesh-sys-deploy".into(),
            system: true,
            gid: None,
        }),
    );
    let user = resource(
        "t:user:mesh-sys-alice",
        Spec::User(UserSpec {
            name: "mesh-sys-alice".into(),
            system: true,
            uid: None,
            home: None,
            shell: Some("/bin/bash".into()),
            groups: Some(vec!["mesh-sys-deploy".into()]),
            authorized_keys: None,
            remove_home: false,
        }),
    );
    let d = decl(vec![user, group]);
    assert_eq!(
        states(&d, Mode::Apply, &paths),
        vec![State::Created, State::Created]
    );
    let calls = done(&paths);
    let groupadd = calls.iter().position(|c| c.starts_with("groupadd "));
    let useradd = calls.iter().position(|c| c.starts_with("useradd "));
    assert!(
        groupadd.is_some() && groupadd < useradd,
        "the group first: {calls:?}"
    );
    let m = model(&paths);
    let alice = &m.users["mesh-sys-alice"];
    assert_eq!(alice.shell, "/bin/bash");
    assert_eq!(alice.groups, vec!["mesh-sys-deploy"]);
    assert!(m.groups.contains_key("mesh-sys-deploy"));

    forget_calls(&paths);
    assert_eq!(
        states(&d, Mode::Apply, &paths),
        vec![State::Unchanged, State::Unchanged]
    );
    assert_eq!(done(&paths), Vec::<String>::new());

    forget_calls(&paths);
    states(&decl(vec![]), Mode::Apply, &paths);
    let calls = done(&paths);
    let userdel = calls.iter().position(|c| c.starts_with("userdel "));
    let groupdel = calls.iter().position(|c| c.starts_with("groupdel "));
    assert!(
        userdel.is_some() && userdel < groupdel,
        "the user first: {calls:?}"
    );
    let m = model(&paths);
    assert!(m.users.is_empty() && m.groups.is_empty(), "{m:?}");
}

/// `/etc/web.conf`, read by `web.service`, which a change restarts.
fn web_conf(content: &str) -> mesh_wire::Resource {
    let mut conf = super::testkit::file(std::path::Path::new("/etc/web.conf"), content);
    if let Spec::File(f) = &mut conf.spec {
        f.costing = Costing {
            source: "s".into(),
            settings: Default::default(),
            cost: Cost::Restart,
            units: vec!["web.service".into()],
        };
    }
    conf
}

#[test]
fn a_restart_the_machine_refuses_is_owed_and_paid_by_the_next_push() {
    let (dir, paths) = machine(|m| {
        let running = Unit {
            active: true,
            enabled: true,
            failed: false,
        };
        m.units.insert("web.service".into(), running);
        m.failing.push("systemctl restart web.service".into());
    });
    let d = decl(vec![web_conf("one\n")]);
    let first = run(&d, Mode::Apply, &paths).unwrap();
    assert_eq!(first.resources[0].state, State::Created);
    assert_eq!(first.units.len(), 1, "{:?}", first.units);
    assert!(first.units[0].error.is_some(), "{:?}", first.units);

    // the machine restarts it now; nothing else changed
    crate::system::Recording::at(paths.root.join(Paths::SYSTEM), paths.machine.clone())
        .set(|m| m.failing.clear());
    let paths = Paths::under(dir.path());
    forget_calls(&paths);
    let second = run(&d, Mode::Apply, &paths).unwrap();
    assert_eq!(second.resources[0].state, State::Unchanged);
    assert_eq!(second.units.len(), 1, "{:?}", second.units);
    assert_eq!(second.units[0].done.as_deref(), Some("restarted"));
    assert!(
        second.units[0]
            .because
            .iter()
            .any(|b| b.contains("earlier")),
        "{:?}",
        second.units[0]
    );
    assert_eq!(count(&done(&paths), "systemctl restart web.service"), 1);

    // and then it is paid: a third push restarts nothing
    forget_calls(&paths);
    let third = run(&d, Mode::Apply, &paths).unwrap();
    assert!(third.units.is_empty(), "{:?}", third.units);
    assert_eq!(count(&done(&paths), "systemctl restart web.service"), 0);
}

#[test]
fn a_timer_whose_file_and_schedule_change_in_one_run_restarts_once_and_is_never_said_not_running() {
    // found by an attacker: the file's cost restarted the timer, then the timer restarted itself
    let (_dir, paths) = machine(|_| {});
    let timer = |schedule: &str| {
        resource(
            "t:timer:tick",
            Spec::Timer(TimerSpec {
                name: "tick".into(),
                description: "ticks (t, by mesh)".into(),
                command: vec!["/bin/true".into()],
                user: "root".into(),
                schedule: schedule.into(),
            }),
        )
    };
    let conf = |content: &str| {
        let mut conf = super::testkit::file(std::path::Path::new("/etc/tick.conf"), content);
        if let Spec::File(f) = &mut conf.spec {
            // the template moved: the file costs its readers a restart
            f.costing = Costing {
                source: content.into(),
                settings: Default::default(),
                cost: Cost::Restart,
                units: vec!["tick.timer".into()],
            };
        }
        conf
    };
    let first = run(
        &decl(vec![conf("one\n"), timer("daily")]),
        Mode::Apply,
        &paths,
    )
    .unwrap();
    assert!(
        first.units.iter().all(|u| u.unit != "tick.timer"),
        "a timer the push started is not said not running: {:?}",
        first.units
    );
    forget_calls(&paths);
    let both = decl(vec![conf("two\n"), timer("hourly")]);
    let dry = run(&both, Mode::DryRun, &paths).unwrap();
    let applied = run(&both, Mode::Apply, &paths).unwrap();
    assert_eq!(
        count(&done(&paths), "systemctl restart tick.timer"),
        1,
        "{:?} {:?}",
        done(&paths),
        applied
    );
    let said = |r: &mesh_wire::Report| -> Vec<(String, Cost)> {
        r.units.iter().map(|u| (u.unit.clone(), u.action)).collect()
    };
    assert_eq!(said(&dry), said(&applied), "check and push agree");
    assert_eq!(said(&applied), [("tick.timer".to_string(), Cost::Restart)]);
    // the file alone: the timer, unchanged, pays it
    forget_calls(&paths);
    let alone = run(
        &decl(vec![conf("three\n"), timer("hourly")]),
        Mode::Apply,
        &paths,
    )
    .unwrap();
    assert_eq!(
        count(&done(&paths), "systemctl restart tick.timer"),
        1,
        "{:?} {:?}",
        done(&paths),
        alone
    );
}
