//! TensorBoard event files, written and read by our own small code.
//!
//! Why not `tensorboard-rs`: it builds and works, but drags in `protobuf` 2.28 (advisory
//! RUSTSEC-2024-0437) and `image` 0.23 for a job that needs three protobuf messages. The format
//! is small and stable:
//!
//! - A file is a sequence of TFRecords: `length: u64 LE`, `masked_crc32c(length bytes): u32 LE`,
//!   `data`, `masked_crc32c(data): u32 LE`, where
//!   `masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8` and CRC-32C is the Castagnoli CRC.
//! - Each record is a serialized `tensorflow.Event`: `wall_time` (field 1, double), `step`
//!   (field 2, int64), `file_version` (field 3, string, first record: `brain.Event:2`), `summary`
//!   (field 5) = `Summary { repeated Value value = 1 }`, `Value { string tag = 1; float
//!   simple_value = 2 }`.
//!
//! Tests read the files back with [`read_scalars`] (framing and both checksums verified), and
//! `scripts/checks/tensorboard.sh` opens them with TensorBoard's own reader when it can be
//! installed.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

const CRC32C_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0x82F6_3B78 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// CRC-32C (Castagnoli).
pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc = CRC32C_TABLE[((crc ^ b as u32) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

fn masked_crc(data: &[u8]) -> u32 {
    let c = crc32c(data);
    (c.rotate_right(15)).wrapping_add(0xA282_EAD8)
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn event(wall_time: f64, step: i64, body: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut e = Vec::with_capacity(64);
    e.push(0x09);
    e.extend_from_slice(&wall_time.to_le_bytes());
    e.push(0x10);
    varint(&mut e, step as u64);
    body(&mut e);
    e
}

/// Appends scalars to one event file.
#[derive(Debug)]
pub struct EventWriter {
    file: BufWriter<File>,
    path: PathBuf,
}

impl EventWriter {
    /// Creates `dir/events.out.tfevents.<unix time>.atomzero.<pid>.<serial>` with its version
    /// record.
    pub fn create(dir: &Path) -> io::Result<EventWriter> {
        std::fs::create_dir_all(dir)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        // Several writers in one process (one per training call of a run) get their own file.
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!(
            "events.out.tfevents.{}.atomzero.{}.{serial}",
            now as u64,
            std::process::id()
        ));
        let mut writer = EventWriter { file: BufWriter::new(File::create(&path)?), path };
        let version = event(now, 0, |e| {
            e.push(0x1A);
            varint(e, 13);
            e.extend_from_slice(b"brain.Event:2");
        });
        writer.record(&version)?;
        writer.file.flush()?;
        Ok(writer)
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn record(&mut self, data: &[u8]) -> io::Result<()> {
        let len = (data.len() as u64).to_le_bytes();
        self.file.write_all(&len)?;
        self.file.write_all(&masked_crc(&len).to_le_bytes())?;
        self.file.write_all(data)?;
        self.file.write_all(&masked_crc(data).to_le_bytes())
    }

    /// Writes one scalar.
    pub fn scalar(&mut self, tag: &str, step: u64, value: f32) -> io::Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let mut v = Vec::with_capacity(tag.len() + 8);
        v.push(0x0A);
        varint(&mut v, tag.len() as u64);
        v.extend_from_slice(tag.as_bytes());
        v.push(0x15);
        v.extend_from_slice(&value.to_le_bytes());
        let mut summary = Vec::with_capacity(v.len() + 2);
        summary.push(0x0A);
        varint(&mut summary, v.len() as u64);
        summary.extend_from_slice(&v);
        let data = event(now, step as i64, |e| {
            e.push(0x2A);
            varint(e, summary.len() as u64);
            e.extend_from_slice(&summary);
        });
        self.record(&data)
    }

    /// Flushes to disk.
    pub fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// One scalar read back: (tag, step, value).
pub type Scalar = (String, i64, f32);

fn read_varint(data: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7F) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Walks the fields of a protobuf message: `(field, wire type, payload)`.
fn fields(data: &[u8]) -> Option<Vec<(u64, u8, &[u8])>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let key = read_varint(data, &mut at)?;
        let (field, wire) = (key >> 3, (key & 7) as u8);
        let start = at;
        let payload = match wire {
            0 => {
                read_varint(data, &mut at)?;
                &data[start..at]
            }
            1 => {
                at += 8;
                data.get(start..at)?
            }
            2 => {
                let len = read_varint(data, &mut at)? as usize;
                let s = at;
                at += len;
                data.get(s..at)?
            }
            5 => {
                at += 4;
                data.get(start..at)?
            }
            _ => return None,
        };
        out.push((field, wire, payload));
    }
    Some(out)
}

/// Whether `rest` starts with a whole record (header, data and data checksum).
fn record_complete(rest: &[u8]) -> bool {
    let Some(len) = rest.get(..8) else { return false };
    let len = u64::from_le_bytes(len.try_into().unwrap_or([0xFF; 8]));
    usize::try_from(len).ok().and_then(|len| len.checked_add(16)).is_some_and(|n| rest.len() >= n)
}

/// Reads every scalar of an event file, checking the record framing and both checksums of
/// every record. Errors name the byte offset.
pub fn read_scalars(path: &Path) -> io::Result<Vec<Scalar>> {
    read_records(path, false)
}

/// [`read_scalars`] for a file that may be being written: a last record cut short (the
/// writer's buffer reached the disk half-way through it) ends the reading without an error.
/// A checksum mismatch is still an error.
pub fn read_scalars_of_live_file(path: &Path) -> io::Result<Vec<Scalar>> {
    read_records(path, true)
}

fn read_records(path: &Path, live: bool) -> io::Result<Vec<Scalar>> {
    let bytes = std::fs::read(path)?;
    let bad = |what: String| {
        io::Error::new(io::ErrorKind::InvalidData, format!("{}: {what}", path.display()))
    };
    let mut at = 0usize;
    let mut scalars = Vec::new();
    let mut first = true;
    while at < bytes.len() {
        if live && !record_complete(&bytes[at..]) {
            break;
        }
        let header = bytes
            .get(at..at + 12)
            .ok_or_else(|| bad(format!("truncated record header at {at}")))?;
        let len_bytes = &header[..8];
        let len = u64::from_le_bytes(len_bytes.try_into().unwrap_or([0; 8])) as usize;
        if u32::from_le_bytes(header[8..12].try_into().unwrap_or([0; 4])) != masked_crc(len_bytes) {
            return Err(bad(format!("length checksum mismatch at {at}")));
        }
        let data = bytes
            .get(at + 12..at + 12 + len)
            .ok_or_else(|| bad(format!("truncated record at {at}")))?;
        let crc = bytes
            .get(at + 12 + len..at + 16 + len)
            .ok_or_else(|| bad(format!("truncated checksum at {at}")))?;
        if u32::from_le_bytes(crc.try_into().unwrap_or([0; 4])) != masked_crc(data) {
            return Err(bad(format!("data checksum mismatch at {at}")));
        }
        let event = fields(data).ok_or_else(|| bad(format!("bad event at {at}")))?;
        let step =
            event.iter().find(|f| f.0 == 2).and_then(|f| read_varint(f.2, &mut 0)).unwrap_or(0)
                as i64;
        if first {
            let version = event.iter().find(|f| f.0 == 3).map(|f| f.2);
            if version != Some(b"brain.Event:2".as_slice()) {
                return Err(bad("first record is not the file version".into()));
            }
            first = false;
        }
        for summary in event.iter().filter(|f| f.0 == 5) {
            for value in fields(summary.2)
                .ok_or_else(|| bad("bad summary".into()))?
                .iter()
                .filter(|f| f.0 == 1)
            {
                let parts = fields(value.2).ok_or_else(|| bad("bad value".into()))?;
                let tag = parts
                    .iter()
                    .find(|f| f.0 == 1)
                    .map(|f| String::from_utf8_lossy(f.2).into_owned());
                let v = parts
                    .iter()
                    .find(|f| f.0 == 2 && f.1 == 5)
                    .map(|f| f32::from_le_bytes(f.2.try_into().unwrap_or([0; 4])));
                if let (Some(tag), Some(v)) = (tag, v) {
                    scalars.push((tag, step, v));
                }
            }
        }
        at += 16 + len;
    }
    Ok(scalars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_known_values() {
        // RFC 3720 test vector: 32 bytes of zeros -> 0x8A9136AA; "123456789" -> 0xE3069283.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn writes_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("atomzero-tb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut w = EventWriter::create(&dir).unwrap();
        w.scalar("loss/total", 1, 2.5).unwrap();
        w.scalar("loss/total", 2, 2.25).unwrap();
        w.scalar("lr", 2, 0.001).unwrap();
        w.flush().unwrap();
        let scalars = read_scalars(w.path()).unwrap();
        assert_eq!(
            scalars,
            vec![
                ("loss/total".into(), 1, 2.5),
                ("loss/total".into(), 2, 2.25),
                ("lr".into(), 2, 0.001)
            ]
        );
        // A flipped byte is caught by the checksums; a cut file by the framing.
        let mut bytes = std::fs::read(w.path()).unwrap();
        let n = bytes.len();
        bytes[n - 6] ^= 1;
        std::fs::write(dir.join("bad"), &bytes).unwrap();
        assert!(read_scalars(&dir.join("bad")).unwrap_err().to_string().contains("checksum"));
        std::fs::write(dir.join("cut"), &bytes[..n - 3]).unwrap();
        assert!(read_scalars(&dir.join("cut")).is_err());
        // A file being written: the records before a cut-short last one are read, a flipped
        // byte is still an error.
        let good = std::fs::read(w.path()).unwrap();
        for cut in [n - 3, n - 20, n - 1] {
            std::fs::write(dir.join("live"), &good[..cut]).unwrap();
            let read = read_scalars_of_live_file(&dir.join("live")).unwrap();
            assert_eq!(read, scalars[..2].to_vec(), "cut at {cut}");
        }
        assert_eq!(read_scalars_of_live_file(w.path()).unwrap(), scalars);
        assert!(read_scalars_of_live_file(&dir.join("bad")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
