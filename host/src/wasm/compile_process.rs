//! Compiling in a child process: a server compiles components into its
//! plugin cache by running its own binary (`capstan plugin compile`, hidden)
//! and then maps the compiled code from the cache file. The compilers'
//! code and their working memory are the child's, gone when it exits: the
//! server's resident memory holds only the plugins' code that runs (a first
//! start's RSS at ready: see docs/benchmarks.md), and a compiler that
//! crashes on a component does not take the server with it. Whatever the
//! child did not leave in the cache is compiled in the process, as before.
//!
//! The modules go to the child's standard input, each as its length (8
//! bytes, little-endian) and its bytes.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use super::cache;
use super::engine::build_engine;

/// Set by a server: compile in a child process (else in this one).
static IN_CHILD: AtomicBool = AtomicBool::new(false);

/// The largest module the child reads (a bound on a corrupt length).
const MAX_MODULE: u64 = 1 << 30;

/// Which compiler the child runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Winch, falling back to Cranelift for a component Winch refuses.
    Baseline,
    /// Cranelift, at a lower CPU priority.
    Optimized,
}

/// From now on this process compiles in child processes.
pub fn compile_in_child_processes() {
    IN_CHILD.store(true, Ordering::Relaxed);
}

/// Whether this process compiles in child processes.
pub(crate) fn enabled() -> bool {
    IN_CHILD.load(Ordering::Relaxed)
}

/// Compiles `modules` into `cache_dir` in a child process when this process
/// was told to (see [`compile_in_child_processes`]); a failure is logged and
/// leaves the compile to the caller.
pub(crate) fn compile(cache_dir: &Path, tier: Tier, modules: &[&[u8]]) {
    if !enabled() || modules.is_empty() {
        return;
    }
    let started = std::time::Instant::now();
    match run_child(cache_dir, tier, modules) {
        Ok(()) => {
            let elapsed_ms = started.elapsed().as_millis() as u64;
            match tier {
                Tier::Baseline => tracing::info!(
                    modules = modules.len(),
                    elapsed_ms,
                    "compiled in a child process"
                ),
                Tier::Optimized => tracing::debug!(elapsed_ms, "optimized in a child process"),
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, ?tier, "compiling in a child process failed; compiling in the server")
        }
    }
}

fn run_child(cache_dir: &Path, tier: Tier, modules: &[&[u8]]) -> std::io::Result<()> {
    let mut command = Command::new(this_binary()?);
    command
        .args(["plugin", "compile", "--cache-dir"])
        .arg(cache_dir);
    if tier == Tier::Optimized {
        command.arg("--optimized");
    }
    ends_with_this_process(&mut command);
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        for module in modules {
            stdin.write_all(&(module.len() as u64).to_le_bytes())?;
            stdin.write_all(module)?;
        }
    }
    let status = child.wait()?;
    match status.success() {
        true => Ok(()),
        false => Err(std::io::Error::other(format!("the child {status}"))),
    }
}

/// A server that exits (or is killed) takes its compiling child with it;
/// the child is listed under the server binary's name.
fn ends_with_this_process(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // `ps` shows the binary's name, not /proc/self/exe.
        if let Ok(path) = std::env::current_exe() {
            command.arg0(path);
        }
        // SAFETY: prctl is async-signal-safe and touches only the child.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
}

/// The running binary, even when its file was replaced since it started
/// (a newer build's compiled code would not be the one this server loads).
fn this_binary() -> std::io::Result<std::path::PathBuf> {
    match cfg!(target_os = "linux") {
        true => Ok("/proc/self/exe".into()),
        false => std::env::current_exe(),
    }
}

/// The child's side: reads the modules from `input` and compiles each into
/// `cache_dir` (one thread per core), unless it is there already.
pub fn serve_child(cache_dir: &Path, tier: Tier, input: &mut impl Read) -> anyhow::Result<()> {
    let mut modules = read_modules(input)?;
    // The largest first: the longest compile starts at once while the other
    // threads take the small ones.
    modules.sort_by_key(|wasm| std::cmp::Reverse(wasm.len()));
    if tier == Tier::Optimized {
        super::tiers::lower_process_priority();
    }
    let optimizing = build_engine(false)?;
    let baseline = build_engine(true)?;
    let compile = |wasm: &[u8]| {
        let path = cache::cache_path(cache_dir, &optimizing, wasm);
        match tier {
            Tier::Optimized => cache::load_or_compile(&optimizing, Some(cache_dir), wasm),
            Tier::Baseline => super::tiers::load_or_baseline(&optimizing, &baseline, &path, wasm),
        }
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(modules.len()) {
            scope.spawn(|| {
                while let Some(wasm) = modules.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(e) = compile(wasm) {
                        tracing::debug!(error = %e, "a module did not compile; the server will say why");
                    }
                }
            });
        }
    });
    Ok(())
}

fn read_modules(input: &mut impl Read) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut modules = Vec::new();
    let mut len = [0u8; 8];
    loop {
        match input.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(modules),
            Err(e) => return Err(e.into()),
        }
        let len = u64::from_le_bytes(len);
        anyhow::ensure!(len <= MAX_MODULE, "a module of {len} bytes");
        let mut module = Vec::new();
        input.take(len).read_to_end(&mut module)?;
        anyhow::ensure!(module.len() as u64 == len, "a module cut short");
        modules.push(module);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_read_back_as_framed() {
        let mut framed = Vec::new();
        for module in [&b"abc"[..], b"", b"defg"] {
            framed.extend((module.len() as u64).to_le_bytes());
            framed.extend(module);
        }
        let read = read_modules(&mut framed.as_slice()).unwrap();
        assert_eq!(read, vec![b"abc".to_vec(), vec![], b"defg".to_vec()]);
        framed.truncate(framed.len() - 1);
        assert!(read_modules(&mut framed.as_slice()).is_err());
    }

    #[test]
    fn the_child_fills_the_cache_and_a_bad_module_is_left_to_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        let good = super::super::embedded::builtin("namespace-lifecycle").unwrap();
        let mut framed = Vec::new();
        for module in [good, b"not wasm"] {
            framed.extend((module.len() as u64).to_le_bytes());
            framed.extend(module);
        }
        serve_child(dir.path(), Tier::Baseline, &mut framed.as_slice()).unwrap();
        let baseline = build_engine(true).unwrap();
        let path = cache::cache_path(dir.path(), &baseline, good);
        assert!(cache::load(&baseline, &path).is_some(), "{path:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
