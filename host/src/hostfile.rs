//! Files the host itself reads for a policy or a script (a policy file, a secret's `file`, a
//! script): regular files only, opened without blocking, and never read past a cap. A FIFO, a
//! socket or a device (`/dev/zero`) named there is refused at once instead of hanging the
//! host or growing it without bound.

use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A policy file: a few KiB in practice.
pub(crate) const MAX_POLICY_BYTES: u64 = 1 << 20;
/// A secret's `file`: it goes into a request header.
pub(crate) const MAX_SECRET_BYTES: u64 = 64 << 10;
/// A script's source or compiled component (the guest itself is about 2 MiB).
pub const MAX_SCRIPT_BYTES: u64 = 64 << 20;

/// The bytes of the regular file at `path`, at most `max` of them; an error of kind
/// `InvalidInput` names what is wrong with a file that is not regular or is larger.
pub(crate) fn read_bounded(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. It changes
    // nothing for a regular file.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a directory, FIFO, socket or device)",
        ));
    }
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("larger than the {} bytes the host reads", max),
        )
    };
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow between the check and the read.
    (&mut file)
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// A script at `path`: a regular file as [`read_bounded`] reads it, or a pipe (`palisade run
/// <(…)`, `/dev/stdin` fed by a pipe) read whole, up to `max`. Devices and sockets are refused.
pub(crate) fn read_script(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::FileTypeExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    if !file.metadata()?.file_type().is_fifo() {
        drop(file);
        return read_bounded(path, max);
    }
    // A pipe: read it to its end, waiting for its writer (with none, it ends at once).
    rustix::fs::fcntl_setfl(&file, rustix::fs::OFlags::empty())?;
    read_stream(file, max)
}

/// At most `max` bytes from `reader`, to its end; an error of kind `InvalidInput` when there
/// are more.
pub(crate) fn read_stream(reader: impl Read, max: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("larger than the {max} bytes the host reads"),
        ));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub(crate) fn read_text(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read_bounded(path, max)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not valid UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_large_files_are_refused() {
        let e = read_bounded(Path::new("/dev/zero"), 1024).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let dir = std::env::temp_dir().join(format!("palisade-hostfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big");
        std::fs::write(&big, vec![b'a'; 2048]).unwrap();
        assert_eq!(
            read_bounded(&big, 1024).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        assert_eq!(read_bounded(&big, 2048).unwrap().len(), 2048);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
