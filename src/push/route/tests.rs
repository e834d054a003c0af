//! Routes worked out as OpenSSH would reach the same machines.

use super::*;
use std::path::Path;

#[test]
fn hops_are_parsed_in_every_form() {
    let hop = |u: Option<&str>, h: &str, p: Option<u16>| Hop {
        user: u.map(str::to_string),
        host: h.into(),
        port: p,
    };
    assert_eq!(parse_hop("gw").unwrap(), hop(None, "gw", None));
    assert_eq!(
        parse_hop("ops@gw:2200").unwrap(),
        hop(Some("ops"), "gw", Some(2200))
    );
    assert_eq!(parse_hop("[::1]:22").unwrap(), hop(None, "::1", Some(22)));
    assert_eq!(parse_hop("fe80::1").unwrap(), hop(None, "fe80::1", None));
    assert!(parse_hop("gw:port").is_err() && parse_hop("@gw").is_err());
}

/// `ssh -G -J ssh://bob@h1:2200 x` shows `proxyjump bob@h1:2200`, `ssh://h1/` shows `h1`, and
/// `ssh://h1/path` is "Invalid -J argument".
#[test]
fn ssh_uri_hops_are_read_as_openssh_reads_them() {
    let hop = |u: Option<&str>, h: &str, p: Option<u16>| Hop {
        user: u.map(str::to_string),
        host: h.into(),
        port: p,
    };
    assert_eq!(
        parse_hop("ssh://bob@h1:2200").unwrap(),
        hop(Some("bob"), "h1", Some(2200))
    );
    assert_eq!(parse_hop("ssh://h1/").unwrap(), hop(None, "h1", None));
    let e = parse_hop("ssh://h1/path").unwrap_err();
    assert!(e.to_string().contains("takes no path"), "{e}");
    assert!(check_jump("n", "ssh://ops@gw:2200,db").is_ok());
    assert!(check_jump("n", " , ").is_err() && check_jump("n", "a,b:1").is_ok());
    assert!(check_jump("n", "none").is_ok());
    for bad in [
        "a\nb\u{1b}[2J@node1",
        "-oProxyCommand=x@node1",
        "n",
        "ops@n:22",
    ] {
        assert!(check_jump("n", bad).is_err(), "{bad:?}");
    }
}

#[test]
fn the_inventory_wins_and_the_configuration_fills_in_with_jumps_as_nodes() {
    let config = read(
        "Host web\n HostName 192.0.2.5\n Port 2222\n User ops\n ProxyJump gate,bastion:2200\n\
             Host gate\n HostName 192.0.2.1\n ProxyJump outer\n Host bastion\n ProxyJump never\n",
    );
    let bastion = Node {
        port: 22,
        ..Node::new("bastion", "192.0.2.9")
    };
    let web = Node {
        port_given: false,
        user_given: false,
        ..Node::new("web", "web")
    };
    let t = target(&web, std::slice::from_ref(&bastion), &config).unwrap();
    assert_eq!(
        (t.address.as_str(), t.port, t.user.as_str()),
        ("192.0.2.5", 2222, "ops")
    );
    let route: Vec<(&str, &str, u16, bool)> = t
        .jumps
        .iter()
        .map(|h| (h.node.as_str(), h.address.as_str(), h.port, h.is_node))
        .collect();
    assert_eq!(
        route,
        vec![
            ("outer", "outer", 22, false),
            ("gate", "192.0.2.1", 22, false),
            ("bastion", "192.0.2.9", 2200, true),
        ]
    );
    let explicit = Node {
        port: 2020,
        jump: Some("root@bastion".into()),
        ..Node::new("web", "web")
    };
    let t = target(&explicit, &[bastion], &config).unwrap();
    assert_eq!((t.port, t.user.as_str(), t.jumps.len()), (2020, "root", 1));
}

#[test]
fn jump_hosts_that_lead_back_to_each_other_are_refused() {
    let config = read("Host a\n ProxyJump b\nHost b\n ProxyJump a\n");
    let e = target(&Node::new("n", "a"), &[], &config).unwrap_err();
    assert_eq!(e.kind(), "config");
    let e = e.to_string();
    assert!(e.contains("lead back") && e.contains(": c:"), "{e}");
}

/// Where each hop of the route connects to, first first.
fn addresses(t: &Target) -> Vec<&str> {
    t.jumps.iter().map(|h| h.address.as_str()).collect()
}

/// A configuration read from a file called `c`.
fn read(text: &str) -> SshConfig {
    let mut config = SshConfig::default();
    config.add(Path::new("c"), text).unwrap();
    config
}

/// Eight levels of `Host lN / ProxyJump lN+1,lN+1,...` (`repeat` times each).
fn levels(repeat: usize) -> SshConfig {
    let mut text = String::new();
    for level in 0..7 {
        let next = format!("l{}", level + 1);
        text += &format!(
            "Host l{level}\n  ProxyJump {}\n",
            vec![next; repeat].join(",")
        );
    }
    text += "Host l7\n  HostName 192.0.2.7\n";
    read(&text)
}

#[test]
fn a_configuration_that_multiplies_its_jump_hosts_is_resolved_once_per_hop_and_capped() {
    let start = std::time::Instant::now();
    // each level's later hops are not followed (OpenSSH reads only the first hop's
    // ProxyJump): 3 + 3 * 6 hops
    let t = target(&Node::new("n", "l0"), &[], &levels(3)).unwrap();
    assert_eq!(t.jumps.len(), 21);
    assert_eq!(t.jumps[0].address, "192.0.2.7");
    // 20 repeats: hours of work before; now refused at once, naming the line
    let e = target(&Node::new("n", "l0"), &[], &levels(20))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("more than 32 jump hosts") && e.contains(": c:"),
        "{e}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn identity_files_expand_h_to_the_host_name_and_r_to_the_user_logged_in_as() {
    let config = read(
        "Host web gw\n  HostName %h.example.org\n  User deploy\n  Port 2200\n\
             IdentityFile /k/%h-%r-%%-%n-%p\n",
    );
    // as `ssh -l other web`: the inventory's user wins over User, and %r follows it
    let web = Node {
        user: "other".into(),
        port_given: false,
        jump: Some("ops@gw".into()),
        ..Node::new("web", "web")
    };
    let t = target(&web, &[], &config).unwrap();
    assert_eq!(
        t.identities,
        [PathBuf::from("/k/web.example.org-other-%-web-2200")]
    );
    assert_eq!(
        t.jumps[0].identities,
        [PathBuf::from("/k/gw.example.org-ops-%-gw-2200")]
    );
}

#[test]
fn a_proxycommand_is_refused_naming_its_line_instead_of_connecting_another_way() {
    let config = read(
        "Host 192.0.2.13\n  ProxyCommand ssh -W %h:%p 192.0.2.11\n  ProxyJump 192.0.2.12\n\
             Host gw\n  ProxyCommand nc %h %p\n",
    );
    let e = target(&Node::new("n3", "192.0.2.13"), &[], &config).unwrap_err();
    assert_eq!(e.kind(), "config");
    let e = e.to_string();
    assert!(
        e.contains("c:2: ProxyCommand ssh -W %h:%p 192.0.2.11: mesh does not run ProxyCommand; use ProxyJump"),
        "{e}"
    );
    // the node's own jump wins, as `ssh -J` does; a later hop's ProxyCommand is not read
    let jumped = Node {
        jump: Some("192.0.2.12,gw".into()),
        ..Node::new("n3", "192.0.2.13")
    };
    assert_eq!(target(&jumped, &[], &config).unwrap().jumps.len(), 2);
    let first = Node {
        jump: Some("gw".into()),
        ..Node::new("n3", "192.0.2.13")
    };
    assert!(target(&first, &[], &config).is_err());
}

#[test]
fn jump_none_connects_directly_whatever_the_configuration_says() {
    let config =
        read("Host 192.0.2.13\n  ProxyJump 192.0.2.11\nHost 192.0.2.14\n  ProxyCommand nc %h %p\n");
    for address in ["192.0.2.13", "192.0.2.14"] {
        let direct = Node {
            jump: Some("none".into()),
            ..Node::new("n", address)
        };
        let t = target(&direct, &[], &config).unwrap();
        assert!(t.jumps.is_empty(), "{address}: {:?}", t.jumps);
    }
}

#[test]
fn a_proxyjump_in_an_included_file_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let conf_d = dir.path().join("ssh_config.d");
    std::fs::create_dir(&conf_d).unwrap();
    std::fs::write(
        conf_d.join("jump.conf"),
        "Host 192.0.2.13\n  ProxyJump 192.0.2.11\n",
    )
    .unwrap();
    let config = read(&format!("Include {}/*.conf\n", conf_d.display()));
    let t = target(&Node::new("n3", "192.0.2.13"), &[], &config).unwrap();
    assert_eq!(addresses(&t), ["192.0.2.11"]);
}

#[test]
fn a_later_hops_own_proxyjump_is_not_read_as_openssh_does() {
    let config =
        read("Host tgt\n ProxyJump gw,bee\nHost bee\n HostName 192.0.2.2\n ProxyJump bee\n");
    let t = target(&Node::new("n", "tgt"), &[], &config).unwrap();
    assert_eq!(addresses(&t), ["gw", "192.0.2.2"]);
}

#[test]
fn a_name_no_host_name_replaces_is_connected_to_in_lower_case_as_ssh_does() {
    // `ssh -G LAB3` says `hostname lab3`; `Host Lab3` does not match it (case counts)
    let config = read("Host Lab3\n  Port 2\n");
    let node = Node::new("lab3", "LAB3");
    let t = target(&node, &[], &config).unwrap();
    assert_eq!((t.address.as_str(), t.port), ("lab3", 22));
    let outside = read("Host LAB3\n  ProxyJump GATE\n");
    let t = target(&node, &[], &outside).unwrap();
    assert_eq!(addresses(&t), ["gate"]);
}
