use super::{Call, METHOD_CALL, decode, length};

#[test]
fn a_call_reads_back_as_it_was_written() {
    let call = Call {
        path: "/org/freedesktop/systemd1",
        interface: "org.freedesktop.systemd1.Manager",
        member: "ReloadUnit",
        args: &["docker.service", "replace"],
    };
    let bytes = call.encode(7);
    let mut fixed = [0u8; 16];
    fixed.copy_from_slice(&bytes[..16]);
    assert_eq!(length(&fixed), Ok(bytes.len()));
    let m = decode(&bytes).unwrap();
    assert_eq!(m.kind, METHOD_CALL);
    assert_eq!(m.member.as_deref(), Some("ReloadUnit"));
    assert_eq!(m.signature, "ss");
    let mut body = super::Reader::new(&m.body);
    assert_eq!(body.string().unwrap(), "docker.service");
    assert_eq!(body.string().unwrap(), "replace");
}

#[test]
fn each_message_of_systemds_answer_is_read_whole_and_in_turn() {
    let mut stream = include_bytes!("systemd252_reload.bin").as_slice();
    let mut kinds = Vec::new();
    while !stream.is_empty() {
        let mut fixed = [0u8; 16];
        fixed.copy_from_slice(&stream[..16]);
        let len = length(&fixed).unwrap();
        let m = decode(&stream[..len]).unwrap();
        kinds.push((m.kind, m.member.unwrap_or_default()));
        stream = &stream[len..];
    }
    assert!(
        kinds.contains(&(super::METHOD_RETURN, String::new())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(super::SIGNAL, "JobRemoved".into())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(super::SIGNAL, "PropertiesChanged".into())),
        "{kinds:?}"
    );
}

#[test]
fn a_message_cut_short_is_refused() {
    let call = Call {
        path: "/org/freedesktop/systemd1",
        interface: "org.freedesktop.systemd1.Manager",
        member: "LoadUnit",
        args: &["a.service"],
    }
    .encode(1);
    for cut in [10, 17, 40, call.len() - 1] {
        assert!(decode(&call[..cut]).is_err(), "cut at {cut}");
    }
}

/// systemd's answers to `Get(org.freedesktop.systemd1.Service, ExecStop)` and `ExecStopPost`
/// of a unit with `ExecStop=/bin/echo stopping now`, `ExecStop=/bin/true` and
/// `ExecStopPost=-/bin/sh -c "echo post"`, and to `ExecStop` of a socket (lab machine, systemd
/// 252), each read as `systemctl show` prints the commands.
#[test]
fn a_services_stop_commands_read_as_systemctl_show_prints_them() {
    let commands = |bytes: &[u8]| {
        let m = decode(bytes).unwrap();
        assert_eq!(m.kind, super::METHOD_RETURN);
        super::Reader::new(&m.body).variant_commands().unwrap()
    };
    assert_eq!(
        commands(include_bytes!("systemd252_exec_stop.bin")),
        ["/bin/echo stopping now", "/bin/true"]
    );
    assert_eq!(
        commands(include_bytes!("systemd252_exec_stop_post.bin")),
        ["/bin/sh -c echo post"]
    );
    let not_a_service = decode(include_bytes!("systemd252_not_a_service.bin")).unwrap();
    assert_eq!(not_a_service.kind, super::ERROR);
    assert_eq!(
        not_a_service.error_name.as_deref(),
        Some("org.freedesktop.DBus.Error.UnknownProperty")
    );
}

/// A return whose one header field (an unknown code) is a variant holding a variant … `depth`
/// deep, then a byte.
fn nested(depth: usize) -> Vec<u8> {
    let mut field = vec![10u8, 1, b'v', 0];
    for _ in 0..depth {
        field.extend_from_slice(&[1, b'v', 0]);
    }
    field.extend_from_slice(&[1, b'y', 0, 7]);
    let mut m = vec![b'l', super::METHOD_RETURN, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0];
    m.extend_from_slice(&u32::try_from(field.len()).unwrap().to_le_bytes());
    m.extend_from_slice(&field);
    while m.len() % 8 != 0 {
        m.push(0);
    }
    m
}

#[test]
fn variants_nested_past_the_specifications_limit_are_refused_not_followed_down() {
    // 10,000 deep: a reader that follows it down runs out of stack
    let e = decode(&nested(10_000)).unwrap_err();
    assert!(e.0.contains("nested deeper than 64"), "{e}");
    // 60 deep is a message like any other
    assert!(decode(&nested(60)).is_ok());
}
