//! The helper's own check of what it receives: a declaration whose paths leave their place or
//! name the helper's state, or whose modes hand out power, fails those resources and touches
//! nothing, whatever the operator checked before sending it.

use std::collections::BTreeMap;

use mesh_wire::{BundleFile, ContainerSpec, Mode, Mount, ProcessSpec, Resource, Spec, State};

use super::testkit::{decl, ids, run, sandbox};

fn resource(spec: Spec) -> Resource {
    Resource {
        id: format!("t:{}:{}", spec.kind(), spec.target()),
        instance: "t".into(),
        module: "t@1".into(),
        confirm: false,
        spec,
    }
}

/// A file resource as a sender puts it on the wire.
fn file(path: String, mode: u32) -> Resource {
    let (uid, gid) = ids();
    let json = serde_json::json!({
        "id": format!("t:file:{path}"), "instance": "t", "module": "t@1",
        "kind": "file", "path": path, "owner": uid.to_string(), "group": gid.to_string(),
        "mode": mode, "content": "planted\n",
        "source": "s", "settings": {}, "cost": "none", "units": [],
    });
    serde_json::from_value(json).unwrap()
}

/// Each resource's state and detail after one applying run.
fn applied(resources: Vec<Resource>) -> (tempfile::TempDir, Vec<(State, String)>) {
    let (dir, paths) = sandbox();
    let report = run(&decl(resources), Mode::Apply, &paths).unwrap();
    let out = report
        .resources
        .into_iter()
        .map(|o| (o.state, o.detail))
        .collect();
    (dir, out)
}

#[test]
fn a_path_with_dot_dot_fails_its_resource_and_writes_nothing() {
    let base = tempfile::tempdir().unwrap();
    std::fs::create_dir(base.path().join("sub")).unwrap();
    let sneaky = format!("{}/sub/../escaped", base.path().display());
    let (_state, out) = applied(vec![file(sneaky, 0o644)]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, State::Failed, "{}", out[0].1);
    assert!(
        out[0].1.contains("refused: path") && out[0].1.contains("`..`"),
        "{}",
        out[0].1
    );
    assert!(!base.path().join("escaped").exists());
}

#[test]
fn the_helpers_state_and_powerful_modes_are_refused() {
    let base = tempfile::tempdir().unwrap();
    let setuid = format!("{}/setuid", base.path().display());
    let (_state, out) = applied(vec![
        file("/var/lib/mesh/lock".into(), 0o644),
        file(setuid.clone(), 0o4755),
    ]);
    assert!(
        out[0].0 == State::Failed && out[0].1.contains("helper's own state"),
        "{:?}",
        out[0]
    );
    assert!(
        out[1].0 == State::Failed && out[1].1.contains("setuid"),
        "{:?}",
        out[1]
    );
    assert!(!std::path::Path::new(&setuid).exists());
}

#[test]
fn a_bundle_a_working_directory_and_a_mount_are_checked_before_anything_runs() {
    let process = |bundle_dir: &str, working: Option<&str>, bundle_path: &str| {
        resource(Spec::from(ProcessSpec {
            unit: "t.service".into(),
            description: "t".into(),
            command: vec!["/bin/true".into()],
            user: "root".into(),
            environment: BTreeMap::new(),
            secret_environment: vec![],
            sealed_environment: Default::default(),
            working_directory: working.map(str::to_string),
            restart: "no".into(),
            bundle_dir: bundle_dir.into(),
            bundle: vec![BundleFile {
                path: bundle_path.into(),
                content: "x".into(),
                mode: 0o644,
                source: String::new(),
                settings: Default::default(),
            }],
            access: vec![],
            ready: None,
        }))
    };
    let container = resource(Spec::from(ContainerSpec {
        name: "t".into(),
        image: "busybox".into(),
        command: vec![],
        environment: BTreeMap::new(),
        secret_environment: vec![],
        sealed_environment: Default::default(),
        mounts: vec![Mount {
            source: "/srv/mesh/t/data/../../../etc".into(),
            target: "/data".into(),
            read_only: false,
        }],
        ports: vec![],
        restart: "no".into(),
        access: vec![],
        ready: None,
    }));
    let (_state, out) = applied(vec![
        process("/var/lib/mesh/bundles/../lock", None, "run.sh"),
        process(
            "/var/lib/mesh/bundles/t",
            Some("/srv/t/../../etc"),
            "run.sh",
        ),
        process("/var/lib/mesh/bundles/t", None, "../../../etc/cron.d/x"),
        container,
    ]);
    let fields = [
        "bundle-dir",
        "working-directory",
        "bundle[0].path",
        "mounts[0].source",
    ];
    for ((state, detail), field) in out.iter().zip(fields) {
        assert_eq!(*state, State::Failed, "{detail}");
        assert!(
            detail.contains(&format!("refused: {field} ")) && detail.contains("`..`"),
            "{detail}"
        );
    }
}
