//! Compiling in a child process: a server compiles components into its
//! plugin cache by running its own binary (`capstan plugin compile`, hidden)
//! and then maps the compiled code from the cache file. The compilers'
//! code and their working memory are the child's, gone when it exits: the
//! server's resident memory holds only the plugins' code that runs (a first
//! start's RSS at ready: see docs/benchmarks.md), and a compiler that
//! crashes on a component does not take the server with it. Whatever the
//! child did not leave in the cache is compiled in the process, as before.
//!
//! The modules go to the child's standard input, each as a tag byte, a
//! length (8 bytes, little-endian) and that many bytes: the component's
//! bytes, or for a built-in only its name (the child is the same binary and
//! copies it from its own; the server then reads none of its built-ins'
//! bytes, which would stay resident: 6 MiB).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use super::engine::build_engine;
use super::{cache, embedded};

/// Set by a server: compile in a child process (else in this one).
static IN_CHILD: AtomicBool = AtomicBool::new(false);

/// The largest module the child reads (a bound on a corrupt length).
const MAX_MODULE: u64 = 1 << 30;

/// A frame holding a component's bytes.
const BYTES: u8 = 0;
/// A frame holding the name of a built-in plugin.
const BUILTIN: u8 = 1;

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
            write_frame(&mut stdin, module)?;
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
    let compile = |wasm: &[u8]| match tier {
        Tier::Optimized => cache::load_or_compile(&optimizing, Some(cache_dir), wasm),
        Tier::Baseline => {
            let path = cache::cache_path(cache_dir, &optimizing, wasm);
            super::tiers::load_or_baseline(&optimizing, &baseline, &path, wasm)
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

/// One module's frame: a built-in by name, anything else by its bytes.
fn write_frame(output: &mut impl Write, module: &[u8]) -> std::io::Result<()> {
    let (tag, payload) = match embedded::name_of(module) {
        Some(name) => (BUILTIN, name.as_bytes()),
        None => (BYTES, module),
    };
    output.write_all(&[tag])?;
    output.write_all(&(payload.len() as u64).to_le_bytes())?;
    output.write_all(payload)
}

fn read_modules(input: &mut impl Read) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut modules = Vec::new();
    let mut head = [0u8; 9];
    loop {
        match input.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(modules),
            Err(e) => return Err(e.into()),
        }
        let [tag, len @ ..] = head;
        let len = u64::from_le_bytes(len);
        anyhow::ensure!(len <= MAX_MODULE, "a module of {len} bytes");
        let mut payload = Vec::new();
        input.take(len).read_to_end(&mut payload)?;
        anyhow::ensure!(payload.len() as u64 == len, "a module cut short");
        modules.push(match tag {
            BYTES => payload,
            // Copied: compiled straight from the binary's pages, one child
            // in two took twice as long (~15,000 context switches on
            // malloc's arena lock).
            BUILTIN => {
                let name = String::from_utf8_lossy(&payload);
                let builtin = embedded::builtin(&name)
                    .ok_or_else(|| anyhow::anyhow!("no built-in plugin {name:?}"))?;
                builtin.to_vec()
            }
            other => anyhow::bail!("a frame of unknown kind {other}"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(modules: &[&[u8]]) -> Vec<u8> {
        let mut framed = Vec::new();
        for module in modules {
            write_frame(&mut framed, module).unwrap();
        }
        framed
    }

    #[test]
    fn modules_are_read_back_as_framed_and_built_ins_go_by_name() {
        let builtin = embedded::builtin("namespace-lifecycle").unwrap();
        let mut framed = framed(&[b"abc", b"", builtin, b"defg"]);
        assert!(framed.len() < 100, "a built-in's bytes were sent");
        let read = read_modules(&mut framed.as_slice()).unwrap();
        assert_eq!(read, [&b"abc"[..], b"", builtin, b"defg"]);
        framed.truncate(framed.len() - 1);
        assert!(read_modules(&mut framed.as_slice()).is_err());
    }

    #[test]
    fn an_unknown_built_in_or_frame_kind_is_refused() {
        let mut unknown = vec![BUILTIN];
        unknown.extend(4u64.to_le_bytes());
        unknown.extend(b"nope");
        assert!(read_modules(&mut unknown.as_slice()).is_err());
        unknown[0] = 7;
        assert!(read_modules(&mut unknown.as_slice()).is_err());
    }

    #[test]
    fn the_child_fills_the_cache_and_a_bad_module_is_left_to_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        let good = super::super::embedded::builtin("namespace-lifecycle").unwrap();
        let framed = framed(&[good, b"not wasm"]);
        serve_child(dir.path(), Tier::Baseline, &mut framed.as_slice()).unwrap();
        let baseline = build_engine(true).unwrap();
        let path = cache::cache_path(dir.path(), &baseline, good);
        assert!(cache::load(&baseline, &path).is_some(), "{path:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
