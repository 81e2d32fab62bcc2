//! The log backend (`--audit-log-path`): one JSON event a line, written by
//! a thread of its own from a bounded queue, to standard output (`-`) or a
//! file rotated as kube's (lumberjack's) is: past `--audit-log-maxsize`
//! megabytes the file is renamed `<name>-<time>.<ext>` and a new one
//! started; at most `--audit-log-maxbackup` renamed files are kept, none
//! older than `--audit-log-maxage` days (0: no bound).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::Sink;

/// Events waiting to be written (kube's default buffer for the batching
/// backends; the log backend's queue is ours).
const QUEUE: usize = 10_000;

/// How the file is rotated.
#[derive(Clone, Debug, Default)]
pub struct Rotation {
    /// Megabytes before rotating (0: never).
    pub max_size_mb: u64,
    /// Rotated files kept (0: all).
    pub max_backups: usize,
    /// Days a rotated file is kept (0: forever).
    pub max_age_days: u64,
}

pub struct LogSink {
    queue: SyncSender<Arc<Value>>,
}

/// `--audit-log-format`: kube's two.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Format {
    Json,
    Legacy,
}

impl Format {
    /// kube's check of the flag's value, in its words.
    pub fn parse(name: &str) -> Result<Format, String> {
        match name {
            "json" => Ok(Format::Json),
            "legacy" => Ok(Format::Legacy),
            other => Err(format!(
                "invalid audit log format {other}, allowed formats are \"legacy,json\""
            )),
        }
    }

    fn line(self, event: &Value) -> Option<Vec<u8>> {
        let mut line = match self {
            Format::Json => serde_json::to_vec(event).ok()?,
            Format::Legacy => super::legacy::line(event).into_bytes(),
        };
        line.push(b'\n');
        Some(line)
    }
}

impl Sink for LogSink {
    fn send(&self, event: Arc<Value>) -> bool {
        match self.queue.try_send(event) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => false,
        }
    }

    fn name(&self) -> &'static str {
        "log"
    }
}

impl LogSink {
    /// Starts the writer of `path` (`-`: standard output).
    pub fn start(path: &str, rotation: Rotation, format: Format) -> std::io::Result<LogSink> {
        let out = match path {
            "-" => Out::Stdout,
            file => Out::File(RotatingFile::open(PathBuf::from(file), rotation)?),
        };
        let (queue, events) = sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || write_all(events, out, format))?;
        Ok(LogSink { queue })
    }
}

enum Out {
    Stdout,
    File(RotatingFile),
}

fn write_all(events: Receiver<Arc<Value>>, mut out: Out, format: Format) {
    while let Ok(event) = events.recv() {
        let Some(line) = format.line(&event) else {
            continue;
        };
        let written = match &mut out {
            Out::Stdout => std::io::stdout().lock().write_all(&line),
            Out::File(f) => f.write(&line),
        };
        if let Err(e) = written {
            tracing::error!(error = %e, "could not write the audit log");
        }
    }
}

struct RotatingFile {
    path: PathBuf,
    file: File,
    size: u64,
    rotation: Rotation,
}

impl RotatingFile {
    fn open(path: PathBuf, rotation: Rotation) -> std::io::Result<RotatingFile> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let size = file.metadata()?.len();
        Ok(RotatingFile {
            path,
            file,
            size,
            rotation,
        })
    }

    fn write(&mut self, line: &[u8]) -> std::io::Result<()> {
        let limit = self.rotation.max_size_mb * 1024 * 1024;
        if limit > 0 && self.size > 0 && self.size + line.len() as u64 > limit {
            self.rotate()?;
        }
        self.file.write_all(line)?;
        self.size += line.len() as u64;
        Ok(())
    }

    /// `audit.log` → `audit-2026-12-06T11-15-06.123.log`, then the old ones pruned.
    fn rotate(&mut self) -> std::io::Result<()> {
        self.file.flush()?;
        let now = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%S%.3f");
        let (stem, ext) = stem_and_extension(&self.path);
        let backup = self.path.with_file_name(format!("{stem}-{now}{ext}"));
        std::fs::rename(&self.path, backup)?;
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        self.size = 0;
        self.prune();
        Ok(())
    }

    fn prune(&self) {
        let mut backups = backups_of(&self.path);
        backups.sort_by_key(|(_, modified)| std::cmp::Reverse(*modified));
        let max_age = Duration::from_secs(self.rotation.max_age_days * 86_400);
        let now = SystemTime::now();
        for (i, (path, modified)) in backups.iter().enumerate() {
            let too_many = self.rotation.max_backups > 0 && i >= self.rotation.max_backups;
            let too_old = self.rotation.max_age_days > 0
                && now.duration_since(*modified).unwrap_or_default() > max_age;
            if too_many || too_old {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

fn stem_and_extension(path: &Path) -> (String, String) {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (stem, ext)
}

/// The rotated files of `path`, with their modification times.
fn backups_of(path: &Path) -> Vec<(PathBuf, SystemTime)> {
    let (stem, ext) = stem_and_extension(path);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.starts_with(&format!("{stem}-")) && name.ends_with(&ext) && e.path() != path
        })
        .filter_map(|e| Some((e.path(), e.metadata().ok()?.modified().ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_is_rotated_and_old_backups_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let rotation = Rotation {
            max_size_mb: 1,
            max_backups: 2,
            max_age_days: 0,
        };
        let mut f = RotatingFile::open(path.clone(), rotation).unwrap();
        let line = vec![b'x'; 400 * 1024];
        for _ in 0..12 {
            f.write(&line).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(backups_of(&path).len(), 2, "two backups kept");
        assert!(std::fs::metadata(&path).unwrap().len() <= 1024 * 1024);
    }
}
