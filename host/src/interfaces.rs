//! The machine's network interfaces and their addresses, asked of the kernel over rtnetlink (a
//! dump of links, then of addresses): what `ip -j addr` says, without starting a program on
//! every run. Loopback interfaces are left out, and so are addresses of link or host scope (a
//! link-local address cannot be listened on without naming its interface).

use std::time::Duration;

use mesh_wire::Interface;
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType};

/// `RTM_NEWLINK`, `RTM_GETLINK`, `RTM_NEWADDR`, `RTM_GETADDR` (linux/rtnetlink.h).
const RTM_NEWLINK: u16 = 16;
const RTM_GETLINK: u16 = 18;
const RTM_NEWADDR: u16 = 20;
const RTM_GETADDR: u16 = 22;
/// `NLMSG_ERROR`, `NLMSG_DONE`.
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
/// `NLM_F_REQUEST | NLM_F_DUMP`.
const DUMP: u16 = 0x1 | 0x300;
/// `IFLA_IFNAME`; `IFA_ADDRESS`, `IFA_LOCAL`.
const IFLA_IFNAME: u16 = 3;
const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
/// `IFF_LOOPBACK`.
const IFF_LOOPBACK: u32 = 0x8;
/// `RT_SCOPE_LINK`, `RT_SCOPE_HOST`.
const SCOPE_LINK: u8 = 253;
const SCOPE_HOST: u8 = 254;
/// `AF_INET`, `AF_INET6`.
const INET: u8 = 2;
const INET6: u8 = 10;
/// One message of a dump: its type and its payload.
type Message = (u16, Vec<u8>);

/// The header of every message (`struct nlmsghdr`).
const HEADER: usize = 16;
/// How long the kernel may take to answer a dump before the facts go without it.
const WAIT: Duration = Duration::from_secs(2);

/// The interfaces in the kernel's order, each with its addresses; none when the kernel cannot
/// be asked (facts describe, they never fail a run).
pub(crate) fn gather() -> Vec<Interface> {
    let asked = (|| {
        let links = dump(RTM_GETLINK, 16)?;
        let addresses = dump(RTM_GETADDR, 8)?;
        Some(interfaces(&links, &addresses))
    })();
    asked.unwrap_or_default()
}

/// Every message of one dump of `kind`, whose request carries `body` zero bytes (an
/// `ifinfomsg` or `ifaddrmsg` asking for every family): each message's type and payload.
fn dump(kind: u16, body: usize) -> Option<Vec<Message>> {
    let socket = rustix::net::socket(AddressFamily::NETLINK, SocketType::RAW, None).ok()?;
    rustix::net::sockopt::set_socket_timeout(
        &socket,
        rustix::net::sockopt::Timeout::Recv,
        Some(WAIT),
    )
    .ok()?;
    let len = HEADER + body;
    let mut request = vec![0u8; len];
    request[0..4].copy_from_slice(&(len as u32).to_ne_bytes());
    request[4..6].copy_from_slice(&kind.to_ne_bytes());
    request[6..8].copy_from_slice(&DUMP.to_ne_bytes());
    request[8..12].copy_from_slice(&1u32.to_ne_bytes());
    rustix::net::send(&socket, &request, SendFlags::empty()).ok()?;
    let mut messages = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let (got, _) = rustix::net::recv(&socket, &mut buf[..], RecvFlags::empty()).ok()?;
        let (more, done) = messages_in(buf.get(..got)?)?;
        messages.extend(more);
        if done {
            return Some(messages);
        }
        if got == 0 {
            return None;
        }
    }
}

/// The messages in one datagram, and whether the dump is done; `None` for an error or a
/// message that does not fit.
fn messages_in(mut data: &[u8]) -> Option<(Vec<Message>, bool)> {
    let mut messages = Vec::new();
    while data.len() >= HEADER {
        let len = u32::from_ne_bytes(data[0..4].try_into().ok()?) as usize;
        let kind = u16::from_ne_bytes(data[4..6].try_into().ok()?);
        if len < HEADER || len > data.len() {
            return None;
        }
        match kind {
            NLMSG_DONE => return Some((messages, true)),
            NLMSG_ERROR => return None,
            _ => messages.push((kind, data[HEADER..len].to_vec())),
        }
        data = data.get(align(len)..).unwrap_or_default();
    }
    Some((messages, false))
}

/// Netlink's 4-byte alignment.
fn align(len: usize) -> usize {
    (len + 3) & !3
}

/// The attributes after a fixed part of `skip` bytes: type and value each.
fn attributes(payload: &[u8], skip: usize) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    let mut rest = payload.get(align(skip)..).unwrap_or_default();
    while rest.len() >= 4 {
        let len = u16::from_ne_bytes([rest[0], rest[1]]) as usize;
        let kind = u16::from_ne_bytes([rest[2], rest[3]]);
        if len < 4 || len > rest.len() {
            break;
        }
        out.push((kind, &rest[4..len]));
        rest = rest.get(align(len)..).unwrap_or_default();
    }
    out
}

/// The interfaces the link and address dumps describe, loopback left out.
fn interfaces(links: &[Message], addresses: &[Message]) -> Vec<Interface> {
    let mut out: Vec<(i32, Interface)> = links
        .iter()
        .filter(|(kind, p)| *kind == RTM_NEWLINK && p.len() >= 16)
        .filter_map(|(_, p)| {
            let index = i32::from_ne_bytes(p[4..8].try_into().ok()?);
            let flags = u32::from_ne_bytes(p[8..12].try_into().ok()?);
            if flags & IFF_LOOPBACK != 0 {
                return None;
            }
            let name = attributes(p, 16)
                .into_iter()
                .find(|(kind, _)| *kind == IFLA_IFNAME)
                .map(|(_, v)| {
                    String::from_utf8_lossy(v.split(|b| *b == 0).next().unwrap_or(v)).into_owned()
                })?;
            Some((
                index,
                Interface {
                    name,
                    ipv4: vec![],
                    ipv6: vec![],
                },
            ))
        })
        .collect();
    for (_, p) in addresses
        .iter()
        .filter(|(kind, p)| *kind == RTM_NEWADDR && p.len() >= 8)
    {
        let (family, scope) = (p[0], p[3]);
        let Ok(index) = <[u8; 4]>::try_from(&p[4..8]).map(i32::from_ne_bytes) else {
            continue;
        };
        if scope == SCOPE_LINK || scope == SCOPE_HOST {
            continue;
        }
        let attrs = attributes(p, 8);
        // `ip` says IFA_LOCAL where there is one (the other end of a point-to-point link is
        // IFA_ADDRESS), else IFA_ADDRESS
        let value = attrs
            .iter()
            .find(|(kind, _)| *kind == IFA_LOCAL)
            .or_else(|| attrs.iter().find(|(kind, _)| *kind == IFA_ADDRESS))
            .map(|(_, v)| *v);
        let Some(interface) = out.iter_mut().find(|(i, _)| *i == index).map(|(_, i)| i) else {
            continue;
        };
        match (family, value) {
            (INET, Some(v)) if v.len() == 4 => {
                let octets: [u8; 4] = [v[0], v[1], v[2], v[3]];
                interface
                    .ipv4
                    .push(std::net::Ipv4Addr::from(octets).to_string());
            }
            (INET6, Some(v)) if v.len() == 16 => {
                let mut octets = [0u8; 16];
                octets.copy_from_slice(v);
                interface
                    .ipv6
                    .push(std::net::Ipv6Addr::from(octets).to_string());
            }
            _ => {}
        }
    }
    out.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attribute(kind: u16, value: &[u8]) -> Vec<u8> {
        let mut a = ((4 + value.len()) as u16).to_ne_bytes().to_vec();
        a.extend_from_slice(&kind.to_ne_bytes());
        a.extend_from_slice(value);
        a.resize(align(a.len()), 0);
        a
    }

    fn link(index: i32, flags: u32, name: &str) -> Message {
        let mut p = vec![0u8; 16];
        p[4..8].copy_from_slice(&index.to_ne_bytes());
        p[8..12].copy_from_slice(&flags.to_ne_bytes());
        p.extend(attribute(IFLA_IFNAME, format!("{name}\0").as_bytes()));
        (RTM_NEWLINK, p)
    }

    fn address(family: u8, scope: u8, index: i32, attrs: &[(u16, &[u8])]) -> Message {
        let mut p = vec![family, 24, 0, scope];
        p.extend_from_slice(&index.to_ne_bytes());
        for (kind, v) in attrs {
            p.extend(attribute(*kind, v));
        }
        (RTM_NEWADDR, p)
    }

    #[test]
    fn links_and_addresses_give_interfaces_without_loopback_or_link_local() {
        let links = [
            link(1, IFF_LOOPBACK | 1, "lo"),
            link(2, 1, "host0"),
            link(3, 0, "dummy0"),
        ];
        let v6: [u8; 16] = "2001:db8::b"
            .parse::<std::net::Ipv6Addr>()
            .unwrap()
            .octets();
        let ll: [u8; 16] = "fe80::1".parse::<std::net::Ipv6Addr>().unwrap().octets();
        let addresses = [
            address(INET, SCOPE_HOST, 1, &[(IFA_LOCAL, &[127, 0, 0, 1])]),
            // a point-to-point peer in IFA_ADDRESS: the local end is said
            address(
                INET,
                0,
                2,
                &[(IFA_ADDRESS, &[10, 7, 0, 1]), (IFA_LOCAL, &[10, 7, 0, 11])],
            ),
            address(INET6, SCOPE_LINK, 2, &[(IFA_ADDRESS, &ll)]),
            address(INET6, 0, 2, &[(IFA_ADDRESS, &v6)]),
            // an address of an interface the link dump did not name is left out
            address(INET, 0, 9, &[(IFA_LOCAL, &[192, 0, 2, 1])]),
        ];
        let got = interfaces(&links, &addresses);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].name, "host0");
        assert_eq!(got[0].ipv4, vec!["10.7.0.11"]);
        assert_eq!(got[0].ipv6, vec!["2001:db8::b"]);
        assert_eq!(got[1].name, "dummy0");
        assert!(got[1].ipv4.is_empty() && got[1].ipv6.is_empty());
    }

    #[test]
    fn a_cut_or_failed_answer_is_no_answer_and_done_ends_the_dump() {
        let mut done = vec![0u8; HEADER];
        done[0..4].copy_from_slice(&(HEADER as u32).to_ne_bytes());
        done[4..6].copy_from_slice(&NLMSG_DONE.to_ne_bytes());
        assert_eq!(messages_in(&done), Some((vec![], true)));
        let mut error = done.clone();
        error[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        assert_eq!(messages_in(&error), None);
        let mut long = done.clone();
        long[0..4].copy_from_slice(&1000u32.to_ne_bytes());
        assert_eq!(messages_in(&long), None);
        // attributes that claim more than is there end the list, without a panic
        assert!(attributes(&[0, 0, 0, 0, 0, 0, 0, 0, 200, 0, 1, 0], 8).is_empty());
    }

    #[test]
    fn this_machine_has_interfaces_the_kernel_names() {
        // where `ip` is there, it names as many interfaces (asked again if one came or went
        // between the two looks: lab machines boot beside the tests)
        let named = || {
            let out = std::process::Command::new("ip")
                .args(["-o", "link"])
                .output()
                .ok()?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            Some(text.lines().filter(|l| !l.contains("LOOPBACK")).count())
        };
        let mut looks = Vec::new();
        for _ in 0..5 {
            let got = gather().len();
            match named() {
                None => return,
                Some(n) if n == got => return,
                Some(n) => looks.push((got, n)),
            }
        }
        panic!("the kernel's dump and `ip` disagree, five times: {looks:?}");
    }
}
