//! What the operator reads when the machine refuses a call: a failed `systemctl`, a package apt
//! cannot install and an owner the machine does not have each name the resource and the thing
//! itself, through the recording system's model of a machine.

use mesh_wire::{Mode, PackageSpec, ServiceSpec, Spec, State};

use super::testkit::{decl, file, machine, resource, run};
use crate::system::recording::Unit;

/// The state and detail of the one resource `d` declares, applied on `paths`.
fn applied(d: &mesh_wire::Declaration, paths: &crate::record::Paths) -> (State, String) {
    let report = run(d, Mode::Apply, paths).unwrap();
    let outcome = &report.resources[0];
    (outcome.state, outcome.detail.clone())
}

#[test]
fn a_failed_systemctl_names_the_service_its_unit_and_the_exit() {
    let (_dir, paths) = machine(|m| {
        m.units.insert("web.service".into(), Unit::default());
        m.failing.push("systemctl start web.service".into());
    });
    let web = resource(
        "t:service:web",
        Spec::Service(ServiceSpec {
            unit: "web.service".into(),
            running: Some(true),
            enabled: None,
            on_removal: Default::default(),
            ready: None,
        }),
    );
    let (state, detail) = applied(&decl(vec![web]), &paths);
    assert_eq!(state, State::Failed);
    assert!(
        detail.contains(
            "systemctl start web.service failed (exit status 1): the recording machine fails it"
        ),
        "{detail}"
    );
}

#[test]
fn a_package_apt_cannot_install_is_named() {
    let (_dir, paths) = machine(|m| m.failing.push("apt-get install mesh-no-such".into()));
    let package = resource(
        "t:package:mesh-no-such",
        Spec::Package(PackageSpec {
            name: "mesh-no-such".into(),
            version: None,
            absent: false,
        }),
    );
    let (state, detail) = applied(&decl(vec![package]), &paths);
    assert_eq!(state, State::Failed);
    assert!(
        detail.contains("apt-get install mesh-no-such failed (exit status 1)"),
        "{detail}"
    );
}

#[test]
fn an_owner_the_machine_does_not_have_is_named() {
    let (dir, paths) = machine(|_| {});
    let mut conf = file(&dir.path().join("web.conf"), "x\n");
    if let Spec::File(f) = &mut conf.spec {
        f.owner = "mesh-no-such-user".into();
    }
    let (state, detail) = applied(&decl(vec![conf]), &paths);
    assert_eq!(state, State::Failed);
    assert!(
        detail.contains("no user \"mesh-no-such-user\" on this machine"),
        "{detail}"
    );
}
