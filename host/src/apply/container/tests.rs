use mesh_wire::{ContainerSpec, Mount, Port};
use serde_json::json;

use super::Found;

fn spec() -> ContainerSpec {
    ContainerSpec {
        name: "app-web".into(),
        image: "mesh-sleeper".into(),
        command: vec!["/usr/bin/sleep".into(), "infinity".into()],
        environment: [("GREETING".to_string(), "hi".to_string())].into(),
        secret_environment: vec![],
        sealed_environment: Default::default(),
        mounts: vec![Mount {
            source: "/srv/app".into(),
            target: "/data".into(),
            read_only: true,
        }],
        ports: vec![Port {
            host: 8080,
            container: 80,
            protocol: "tcp".into(),
        }],
        restart: "unless-stopped".into(),
        access: vec![],
        ready: None,
    }
}

fn found(restart: &str, greeting: &str) -> Found {
    Found {
        spec: Some("digest".into()),
        running: true,
        inspected: json!({
            "Config": {"Image": "mesh-sleeper", "Cmd": ["/usr/bin/sleep", "infinity"],
                       "Env": [format!("GREETING={greeting}"), "PATH=/usr/bin"]},
            "HostConfig": {
                "RestartPolicy": {"Name": restart},
                "Mounts": [{"Type": "bind", "Source": "/srv/app", "Target": "/data", "ReadOnly": true}],
                "PortBindings": {"80/tcp": [{"HostIp": "", "HostPort": "8080"}]}
            }
        }),
    }
}

#[test]
fn a_container_as_docker_runs_its_spec_differs_in_nothing() {
    assert!(found("unless-stopped", "hi").differing(&spec()).is_empty());
}

#[test]
fn what_was_changed_by_hand_is_named_and_a_value_never_shown() {
    let differing = found("no", "by hand").differing(&spec());
    assert_eq!(differing, vec!["environment", "restart"]);
}
