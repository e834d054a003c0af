//! Reading a file of the operator's that mesh needs (a key file, an ssh configuration, a
//! known_hosts file, the operator's key): the one rule for all of them.
//!
//! Such a path can name anything: a FIFO (opening it waits for a writer, reading it for ever),
//! `/dev/zero` (reads until memory runs out), a directory. So the file is opened without waiting
//! (`O_NONBLOCK`), refused unless `fstat` says it is a regular file, and read only up to
//! [`MAX_BYTES`]; all of this happens before any deadline starts, so it must never block.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The most mesh reads of one such file: far more than any key or configuration needs.
pub const MAX_BYTES: u64 = 1 << 20;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{}: no such file", path.display())]
    Missing { path: PathBuf },
    #[error("{}: {reason}", path.display())]
    Unusable { path: PathBuf, reason: String },
}

impl FileError {
    /// The file is not there (for files that are optional).
    pub fn is_missing(&self) -> bool {
        matches!(self, FileError::Missing { .. })
    }

    /// Why, without the path (for messages that name the file themselves).
    pub fn reason(&self) -> String {
        match self {
            FileError::Missing { .. } => "no such file".into(),
            FileError::Unusable { reason, .. } => reason.clone(),
        }
    }
}

/// The text of the regular file at `path`, at most [`MAX_BYTES`] long.
pub fn read_text(path: &Path) -> Result<String, FileError> {
    let fail = |reason: String| FileError::Unusable {
        path: path.to_path_buf(),
        reason,
    };
    // what OpenSSH reads as an empty file (`UserKnownHostsFile /dev/null`, `ssh -F /dev/null`)
    if path == Path::new("/dev/null") {
        return Ok(String::new());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => FileError::Missing {
                path: path.to_path_buf(),
            },
            _ => fail(format!("cannot be opened: {e}")),
        })?;
    let kind = file
        .metadata()
        .map_err(|e| fail(format!("cannot be examined: {e}")))?
        .file_type();
    if !kind.is_file() {
        return Err(fail(format!(
            "is {}, not a regular file; point mesh at the file itself",
            describe(kind)
        )));
    }
    let mut text = String::new();
    let read = file
        .take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| fail(format!("cannot be read: {e}")))?;
    if read as u64 > MAX_BYTES {
        return Err(fail(format!(
            "is larger than {MAX_BYTES} bytes, the most mesh reads of such a file"
        )));
    }
    Ok(text)
}

fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `UserKnownHostsFile /dev/null` and `ssh -F /dev/null` read nothing, as in OpenSSH.
    #[test]
    fn dev_null_reads_as_an_empty_file() {
        assert_eq!(read_text(Path::new("/dev/null")).unwrap(), "");
    }

    #[test]
    fn a_fifo_a_device_a_directory_and_a_huge_file_are_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let e = read_text(&fifo).unwrap_err().to_string();
        assert!(e.contains("fifo") && e.contains("FIFO"), "{e}");
        let e = read_text(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.starts_with("/dev/zero: is a character device"), "{e}");
        assert!(
            read_text(dir.path())
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; MAX_BYTES as usize + 1]).unwrap();
        let e = read_text(&big).unwrap_err().to_string();
        assert!(e.contains("larger than 1048576 bytes"), "{e}");
        assert!(
            read_text(&dir.path().join("none"))
                .unwrap_err()
                .is_missing()
        );
        let ok = dir.path().join("ok");
        std::fs::write(&ok, "Host x\n").unwrap();
        assert_eq!(read_text(&ok).unwrap(), "Host x\n");
    }
}
