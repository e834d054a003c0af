//! The few D-Bus messages the helper sends systemd and reads back, in the wire format of the
//! D-Bus specification ("Message Protocol"): a method call whose arguments are strings, and a
//! reader of any message that keeps what [`super`] needs (its kind, the serial it answers, its
//! error name, its member) and hands on its body to be read by signature.
//!
//! Little-endian only: the helper runs on x86_64, and systemd writes in its machine's order.

use std::fmt;

/// The kinds of message (the header's second byte).
pub(crate) const METHOD_CALL: u8 = 1;
pub(crate) const METHOD_RETURN: u8 = 2;
pub(crate) const ERROR: u8 = 3;
pub(crate) const SIGNAL: u8 = 4;

/// The largest message the helper reads: systemd's answers to it are a few hundred bytes, and
/// the specification's own limit is 128 MiB.
pub(crate) const MAX_MESSAGE: usize = 1 << 20;

/// A method call, its arguments all strings.
pub(crate) struct Call<'a> {
    pub(crate) path: &'a str,
    pub(crate) interface: &'a str,
    pub(crate) member: &'a str,
    pub(crate) args: &'a [&'a str],
}

/// How deep containers may nest in a message: the D-Bus specification's own limit (32 arrays
/// and 32 structs).
const MAX_DEPTH: usize = 64;

/// The header fields, by their codes.
const PATH: u8 = 1;
const INTERFACE: u8 = 2;
const MEMBER: u8 = 3;
const ERROR_NAME: u8 = 4;
const REPLY_SERIAL: u8 = 5;
const DESTINATION: u8 = 6;
const SIGNATURE: u8 = 8;

/// What is sent to systemd's manager, as `systemctl` names it.
pub(crate) const SYSTEMD: &str = "org.freedesktop.systemd1";

impl Call<'_> {
    /// The message, numbered `serial`.
    pub(crate) fn encode(&self, serial: u32) -> Vec<u8> {
        let mut body = Writer::default();
        for arg in self.args {
            body.string(arg);
        }
        let mut m = Writer::default();
        m.bytes(&[b'l', METHOD_CALL, 0, 1]);
        m.u32(u32::try_from(body.buf.len()).unwrap_or(u32::MAX));
        m.u32(serial);
        let fields_at = m.buf.len();
        m.u32(0);
        let start = m.buf.len();
        m.field(PATH, "o", self.path);
        m.field(INTERFACE, "s", self.interface);
        m.field(MEMBER, "s", self.member);
        m.field(DESTINATION, "s", SYSTEMD);
        if !self.args.is_empty() {
            m.field(SIGNATURE, "g", &"s".repeat(self.args.len()));
        }
        let len = u32::try_from(m.buf.len() - start).unwrap_or(u32::MAX);
        m.buf[fields_at..fields_at + 4].copy_from_slice(&len.to_le_bytes());
        m.align(8);
        m.buf.extend_from_slice(&body.buf);
        m.buf
    }
}

/// A message as read: what the helper looks at in its header, and its body.
#[derive(Debug, Default)]
pub(crate) struct Message {
    pub(crate) kind: u8,
    pub(crate) reply_serial: Option<u32>,
    pub(crate) error_name: Option<String>,
    pub(crate) member: Option<String>,
    pub(crate) signature: String,
    pub(crate) body: Vec<u8>,
}

/// A message the helper cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unreadable(pub(crate) String);

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn unreadable(why: impl Into<String>) -> Unreadable {
    Unreadable(why.into())
}

/// The length of the whole message whose first 16 bytes are `fixed`.
pub(crate) fn length(fixed: &[u8; 16]) -> Result<usize, Unreadable> {
    if fixed[0] != b'l' {
        return Err(unreadable(format!(
            "a message in byte order {:?}, not little-endian",
            char::from(fixed[0])
        )));
    }
    let word =
        |at: usize| u32::from_le_bytes([fixed[at], fixed[at + 1], fixed[at + 2], fixed[at + 3]]);
    let (body, fields) = (word(4) as usize, word(12) as usize);
    let len = (16 + fields).next_multiple_of(8) + body;
    if len > MAX_MESSAGE {
        return Err(unreadable(format!("a message of {len} bytes")));
    }
    Ok(len)
}

/// Reads one whole message (its length from [`length`]).
pub(crate) fn decode(buf: &[u8]) -> Result<Message, Unreadable> {
    let mut r = Reader::new(buf);
    let head = r.take(4)?;
    let kind = head[1];
    let body_len = r.u32()? as usize;
    let _serial = r.u32()?;
    let fields_len = r.u32()? as usize;
    let fields_end = r.at + fields_len;
    let mut m = Message {
        kind,
        ..Message::default()
    };
    while r.at < fields_end {
        r.align(8)?;
        let code = r.u8()?;
        let sig = r.signature()?;
        match (code, sig.as_str()) {
            (REPLY_SERIAL, "u") => m.reply_serial = Some(r.u32()?),
            (ERROR_NAME, "s") => m.error_name = Some(r.string()?),
            (MEMBER, "s") => m.member = Some(r.string()?),
            (SIGNATURE, "g") => m.signature = r.signature()?,
            _ => r.skip(&sig)?,
        }
    }
    r.align(8)?;
    m.body = r.take(body_len)?.to_vec();
    Ok(m)
}

/// Builds a message, aligned from its first byte.
#[derive(Default)]
struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn align(&mut self, n: usize) {
        while !self.buf.len().is_multiple_of(n) {
            self.buf.push(0);
        }
    }
    fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    fn u32(&mut self, v: u32) {
        self.align(4);
        self.bytes(&v.to_le_bytes());
    }
    fn string(&mut self, s: &str) {
        self.u32(u32::try_from(s.len()).unwrap_or(u32::MAX));
        self.bytes(s.as_bytes());
        self.buf.push(0);
    }
    fn signature(&mut self, s: &str) {
        self.buf.push(u8::try_from(s.len()).unwrap_or(u8::MAX));
        self.bytes(s.as_bytes());
        self.buf.push(0);
    }
    /// A header field: a struct of its code and a variant of type `sig`.
    fn field(&mut self, code: u8, sig: &str, value: &str) {
        self.align(8);
        self.buf.push(code);
        self.signature(sig);
        if sig == "g" {
            self.signature(value);
        } else {
            self.string(value);
        }
    }
}

/// Reads a message or its body, aligned from its first byte.
pub(crate) struct Reader<'b> {
    buf: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    pub(crate) fn new(buf: &'b [u8]) -> Reader<'b> {
        Reader { buf, at: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'b [u8], Unreadable> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.buf.len())
            .ok_or_else(|| unreadable("a message shorter than it says"))?;
        let bytes = &self.buf[self.at..end];
        self.at = end;
        Ok(bytes)
    }
    fn align(&mut self, n: usize) -> Result<(), Unreadable> {
        let pad = self.at.next_multiple_of(n) - self.at;
        self.take(pad).map(|_| ())
    }
    fn u8(&mut self) -> Result<u8, Unreadable> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Result<u32, Unreadable> {
        self.align(4)?;
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A string or an object path.
    pub(crate) fn string(&mut self) -> Result<String, Unreadable> {
        let len = self.u32()? as usize;
        let s = self.take(len)?;
        self.take(1)?;
        String::from_utf8(s.to_vec()).map_err(|_| unreadable("a string that is not UTF-8"))
    }
    pub(crate) fn signature(&mut self) -> Result<String, Unreadable> {
        let len = usize::from(self.u8()?);
        let s = self.take(len)?;
        self.take(1)?;
        String::from_utf8(s.to_vec()).map_err(|_| unreadable("a signature that is not ASCII"))
    }
    /// A variant holding a string: a property's value.
    pub(crate) fn variant_string(&mut self) -> Result<String, Unreadable> {
        let sig = self.signature()?;
        if sig != "s" {
            return Err(unreadable(format!(
                "a value of type {sig:?} where a string was asked"
            )));
        }
        self.string()
    }
    /// A variant holding a 32-bit number of type `ty` (`u`, or `i` read as its bits).
    pub(crate) fn variant_u32(&mut self, ty: &str) -> Result<u32, Unreadable> {
        let sig = self.signature()?;
        if sig != ty {
            return Err(unreadable(format!(
                "a value of type {sig:?} where {ty:?} was asked"
            )));
        }
        self.u32()
    }

    /// A variant holding a service's commands (`a(sasbttttuii)`: path, argv, ignore-errors,
    /// four timestamps, pid, code, status): each one's argv, its words joined by spaces, as
    /// `systemctl show` prints it.
    pub(crate) fn variant_commands(&mut self) -> Result<Vec<String>, Unreadable> {
        const COMMANDS: &str = "a(sasbttttuii)";
        let sig = self.signature()?;
        if sig != COMMANDS {
            return Err(unreadable(format!(
                "a value of type {sig:?} where {COMMANDS} was asked"
            )));
        }
        let len = self.u32()? as usize;
        self.align(8)?;
        let end = self.at + len;
        let mut commands = Vec::new();
        while self.at < end {
            self.align(8)?;
            let _path = self.string()?;
            let words = self.u32()? as usize;
            let words_end = self.at + words;
            let mut argv = Vec::new();
            while self.at < words_end {
                argv.push(self.string()?);
            }
            self.skip("bttttuii")?;
            if !argv.is_empty() {
                commands.push(argv.join(" "));
            }
        }
        Ok(commands)
    }

    /// Passes over one value of each complete type in `sig`.
    fn skip(&mut self, sig: &str) -> Result<(), Unreadable> {
        self.skip_nested(sig, 0)
    }
    /// [`Reader::skip`] inside `depth` containers: past [`MAX_DEPTH`] the message is refused
    /// rather than followed down (a variant in a variant in … would exhaust the stack).
    fn skip_nested(&mut self, sig: &str, depth: usize) -> Result<(), Unreadable> {
        if depth > MAX_DEPTH {
            return Err(unreadable(format!(
                "a value nested deeper than {MAX_DEPTH} containers"
            )));
        }
        let mut rest = sig;
        while !rest.is_empty() {
            let (one, tail) = split_type(rest)?;
            self.skip_one(one, depth)?;
            rest = tail;
        }
        Ok(())
    }
    fn skip_one(&mut self, ty: &str, depth: usize) -> Result<(), Unreadable> {
        let code = ty.as_bytes()[0];
        match code {
            b'y' => self.take(1).map(|_| ()),
            b'n' | b'q' => self.align(2).and_then(|()| self.take(2).map(|_| ())),
            b'b' | b'i' | b'u' | b'h' => self.u32().map(|_| ()),
            b'x' | b't' | b'd' => self.align(8).and_then(|()| self.take(8).map(|_| ())),
            b's' | b'o' => self.string().map(|_| ()),
            b'g' => self.signature().map(|_| ()),
            b'v' => {
                let inner = self.signature()?;
                self.skip_nested(&inner, depth + 1)
            }
            b'a' => {
                let len = self.u32()? as usize;
                let element = &ty[1..];
                self.align(alignment(element.as_bytes()[0]))?;
                self.take(len).map(|_| ())
            }
            b'(' | b'{' => {
                self.align(8)?;
                self.skip_nested(&ty[1..ty.len() - 1], depth + 1)
            }
            _ => Err(unreadable(format!("a value of unknown type {ty:?}"))),
        }
    }
}

/// The alignment of a type by its first character.
fn alignment(code: u8) -> usize {
    match code {
        b'y' | b'g' | b'v' => 1,
        b'n' | b'q' => 2,
        b'x' | b't' | b'd' | b'(' | b'{' => 8,
        _ => 4,
    }
}

/// The first complete type of a signature, and the rest.
fn split_type(sig: &str) -> Result<(&str, &str), Unreadable> {
    let bytes = sig.as_bytes();
    let mut end = 0;
    while bytes.get(end) == Some(&b'a') {
        end += 1;
    }
    match bytes.get(end) {
        Some(open @ (b'(' | b'{')) => {
            let close = if *open == b'(' { b')' } else { b'}' };
            let mut depth = 0usize;
            for (i, &c) in bytes.iter().enumerate().skip(end) {
                if c == *open {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(sig.split_at(i + 1));
                    }
                }
            }
            Err(unreadable(format!("a signature {sig:?} not closed")))
        }
        Some(_) => Ok(sig.split_at(end + 1)),
        None => Err(unreadable(format!(
            "a signature {sig:?} that ends in an array"
        ))),
    }
}

#[cfg(test)]
#[path = "message_tests.rs"]
mod tests;
