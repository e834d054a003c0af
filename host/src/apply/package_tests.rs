//! The helper's apply of packages on a machine of the test's own (a temp root and the recording
//! system, whose apt removes what depends on a package removed, as apt does).

use mesh_wire::{Mode, PackageSpec, Spec, State};

use super::testkit::{decl, done, forget_calls, machine, model, resource, run, states};

fn package(name: &str, absent: bool) -> mesh_wire::Resource {
    resource(
        &format!("t:package:{name}"),
        Spec::Package(PackageSpec {
            name: name.into(),
            version: None,
            absent,
        }),
    )
}

#[test]
fn removing_a_package_that_takes_undeclared_dependents_is_refused_in_the_plan_and_the_push() {
    let (_dir, paths) = machine(|m| {
        m.packages.insert("redis-tools".into(), "7.0".into());
        m.packages.insert("redis-server".into(), "7.0".into());
        m.depends
            .insert("redis-server".into(), vec!["redis-tools".into()]);
    });
    let alone = decl(vec![package("redis-tools", true)]);
    for mode in [Mode::DryRun, Mode::Apply] {
        let report = run(&alone, mode, &paths).unwrap();
        let o = &report.resources[0];
        assert_eq!(o.state, State::Failed, "{o:?}");
        assert!(
            o.detail.contains("would also remove redis-server")
                && o.detail.contains("nothing was removed"),
            "{o:?}"
        );
    }
    assert!(
        done(&paths).is_empty(),
        "nothing asked of apt: {:?}",
        done(&paths)
    );
    assert_eq!(model(&paths).packages.len(), 2);

    // declared absent together, both go, and the removal says so
    let both = decl(vec![
        package("redis-tools", true),
        package("redis-server", true),
    ]);
    let report = run(&both, Mode::Apply, &paths).unwrap();
    assert!(
        report.resources[0]
            .detail
            .contains("and with it redis-server"),
        "{:?}",
        report.resources
    );
    assert!(model(&paths).packages.is_empty());
    // what the first took with it was recorded as found: undeclared, both come back
    run(&decl(vec![]), Mode::Apply, &paths).unwrap();
    assert_eq!(model(&paths).packages.len(), 2, "{:?}", done(&paths));
}

#[test]
fn a_package_is_installed_another_made_absent_and_undeclared_the_machine_has_what_it_had() {
    let (_dir, paths) = machine(|m| {
        m.packages.insert("curl".into(), "7.88.1".into());
    });
    let d = decl(vec![package("nginx", false), package("curl", true)]);
    assert_eq!(
        states(&d, Mode::Apply, &paths),
        vec![State::Created, State::Changed]
    );
    assert_eq!(
        done(&paths),
        vec!["apt-get install nginx", "apt-get remove curl"]
    );
    assert!(model(&paths).packages.contains_key("nginx"));
    assert!(!model(&paths).packages.contains_key("curl"));

    forget_calls(&paths);
    assert_eq!(
        states(&d, Mode::Apply, &paths),
        vec![State::Unchanged, State::Unchanged]
    );
    assert_eq!(done(&paths), Vec::<String>::new(), "nothing asked of apt");

    forget_calls(&paths);
    states(&decl(vec![]), Mode::Apply, &paths);
    assert_eq!(done(&paths), vec!["apt-get install curl=7.88.1"]);
    let packages = model(&paths).packages;
    assert_eq!(packages.get("curl").map(String::as_str), Some("7.88.1"));
    assert!(
        packages.contains_key("nginx"),
        "a package the mesh installed stays: other software may need it"
    );
}
