//! Docs that are true: every shell block of README.md and of the Markdown
//! files under docs/, examples/ and plugin-sdk/ that is marked as tested
//! runs here, as a user who follows the file in one terminal would run it.
//!
//! The convention, in a fence's info string (GitHub highlights by the first
//! word and shows none of the rest):
//!
//! - ```` ```sh tested ```` — run by this harness. Settings may follow:
//!   `server` (the block needs the server the README's set-up command
//!   starts: unless one already runs, the harness starts `capstan serve` in
//!   the current folder first, and leaves it running), `needs=a,b` (tools
//!   this block and the rest of the file need: commands, plus `pip` for
//!   `python3 -m pip` and `wasi-libc` for clang's wasm32-wasi libc; where
//!   one is missing the rest of the file is skipped with a message, or fails
//!   under `CAPSTAN_REQUIRE_TOOLCHAINS=1`, as the SDKs' other tests do),
//!   `cwd=PATH` (the block starts in this folder of the checkout, `.` its
//!   root, instead of where the block before it left off: for sections a
//!   reader may read alone), `timeout=SECONDS` (default 240).
//! - ```` ```sh untested ```` — shown, not run: it cannot run in a test
//!   (root installs, the test suite itself, binaries this machine has no
//!   copy of). Every `sh`/`bash`/`shell`/`console` block must say one or
//!   the other, so a new block is never unchecked by accident.
//! - ```` ```yaml file=capstan.yaml ```` (any language) — the harness writes
//!   the block into that file, in the current folder, when the file's
//!   blocks before it have run; the next blocks use it as the reader does.
//!
//! Each Markdown file is one session, in a fresh temporary copy of the
//! checkout (the files `git ls-files` lists, with the uncommitted and new
//! ones; no build output), starting at its root. Its blocks run in order,
//! each with `bash -euo pipefail` in its own process group, and what a block
//! changes carries over to the next as in a terminal: the current folder
//! (`cd`) and the exported variables (`export`, a venv's `activate`).
//! `capstan` is the built binary and `kubectl` the fixed 1.33 (symlinks
//! first on PATH); HOME is a folder of the harness (under the target
//! directory, kept between runs: what the READMEs install into `~/.local`
//! lands there), while cargo, rustup, npm's cache and `XDG_CACHE_HOME` stay
//! the user's, so pinned tools and caches are found; KUBECONFIG names no
//! file until a block exports one (no kubectl reaches a real cluster), and
//! GOPROXY is `off` (the Go READMEs promise nothing is fetched from it).
//!
//! Two things a reader does without writing them are done for them:
//!
//! - A line `capstan serve …` starts the server in the background (a reader
//!   runs it in a terminal of its own, or with `&` as written), and the
//!   harness waits until it answers `/readyz` (on its `--secure-port`,
//!   default 6443) before the next line, as a reader waits for its log
//!   line. Before a block that starts servers, the processes the session's
//!   earlier blocks left running are stopped (a reader's Ctrl-C).
//! - A line starting with `! ` is a command the text shows failing (a
//!   Forbidden answer): it must fail, and the block fails when it succeeds.
//!
//! A failing block is reported with its file, line, exit status and output,
//! and the rest of its file is not run; every failing file is reported.
//! Servers on the READMEs' default port 6443 mean the files run one after
//! the other. `CAPSTAN_DOC_ONLY=<path>` runs only the files whose path (in
//! the checkout) starts with it, `CAPSTAN_DOC_VERBOSE=1` prints every
//! block's output.

use crate::support::kubectl_path;
use crate::toolchains::missing_commands;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// HOME for the blocks: kept between runs, never the user's.
const HOME: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/doc-commands/home");
/// The folders whose Markdown files are checked (and README.md), in this
/// order.
const FOLDERS: [&str; 3] = ["docs", "examples", "plugin-sdk"];
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(240);
/// `capstan serve`'s default port, which the READMEs use.
const DEFAULT_PORT: u16 = 6443;

/// A fenced block of a Markdown file.
#[derive(Debug, Clone, PartialEq)]
struct Fence {
    /// The line of the opening fence (1-based).
    line: usize,
    /// The info string after the fence characters.
    info: String,
    /// The block's lines, without the fence's indentation.
    text: String,
}

/// What the harness does with a block.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Run(Settings),
    Write(String),
    Untested,
    /// Not a shell block: not the harness's business.
    Other,
}

#[derive(Debug, Clone, PartialEq)]
struct Settings {
    server: bool,
    cwd: Option<String>,
    needs: Vec<String>,
    timeout: Duration,
}

/// The fenced blocks of `markdown`, in order.
fn fences(markdown: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    // The block being read: its fence's indentation and marker (``` or ~~~, or longer).
    let mut open: Option<(usize, String, Fence)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        let marker: String = rest.chars().take_while(|&c| c == '`' || c == '~').collect();
        let is_fence = marker.len() >= 3 && !(marker.contains('`') && marker.contains('~'));
        match &mut open {
            None if is_fence => {
                let info = rest[marker.len()..].trim().to_string();
                let fence = Fence {
                    line: i + 1,
                    info,
                    text: String::new(),
                };
                open = Some((indent, marker, fence));
            }
            None => {}
            Some((_, opening, _))
                if is_fence
                    && marker[..1] == opening[..1]
                    && marker.len() >= opening.len()
                    && rest[marker.len()..].trim().is_empty() =>
            {
                out.push(open.take().unwrap().2);
            }
            Some((fence_indent, _, fence)) => {
                let strip = indent.min(*fence_indent);
                fence.text.push_str(&line[strip..]);
                fence.text.push('\n');
            }
        }
    }
    out
}

/// What `info` asks for, or why it cannot be read.
fn kind(info: &str) -> Result<Kind, String> {
    let mut words = info.split_whitespace();
    let lang = words.next().unwrap_or("");
    let words: Vec<&str> = words.collect();
    if let Some(path) = words.iter().find_map(|w| w.strip_prefix("file=")) {
        return Ok(Kind::Write(path.to_string()));
    }
    if !matches!(lang, "sh" | "bash" | "shell" | "console") {
        return Ok(Kind::Other);
    }
    match words.first() {
        Some(&"untested") if words.len() == 1 => Ok(Kind::Untested),
        Some(&"tested") => {
            let mut settings = Settings {
                server: false,
                cwd: None,
                needs: Vec::new(),
                timeout: DEFAULT_TIMEOUT,
            };
            for word in &words[1..] {
                if *word == "server" {
                    settings.server = true;
                } else if let Some(dir) = word.strip_prefix("cwd=") {
                    settings.cwd = Some(dir.to_string());
                } else if let Some(list) = word.strip_prefix("needs=") {
                    settings.needs = list.split(',').map(str::to_string).collect();
                } else if let Some(secs) = word.strip_prefix("timeout=") {
                    let secs = secs
                        .parse()
                        .map_err(|_| format!("timeout={secs}: not a number of seconds"))?;
                    settings.timeout = Duration::from_secs(secs);
                } else {
                    return Err(format!(
                        "unknown setting {word:?} (known: server, needs=a,b, cwd=PATH, timeout=SECONDS)"
                    ));
                }
            }
            Ok(Kind::Run(settings))
        }
        _ => Err(format!(
            "a {lang} block must be marked `{lang} tested` (run by tests/e2e/doc_commands.rs) \
             or `{lang} untested` (when it cannot run in a test)"
        )),
    }
}

/// `line` split at its comment: (code, comment including `#`, or "").
fn split_comment(line: &str) -> (&str, &str) {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' && !single {
            escaped = true;
        } else if c == '\'' && !double {
            single = !single;
        } else if c == '"' && !single {
            double = !double;
        } else if c == '#' && !single && !double && prev.is_whitespace() {
            return (&line[..i], &line[i..]);
        }
        prev = c;
    }
    (line, "")
}

/// The delimiter of a here-document that `line` opens, if any.
fn heredoc(line: &str) -> Option<String> {
    let (code, _) = split_comment(line);
    let at = code.find("<<")?;
    let word = code[at + 2..].trim_start_matches('-').trim_start();
    let word: String = word
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// A `capstan serve` command's port and data directory.
fn serve_flags(command: &str) -> (u16, String) {
    let words: Vec<&str> = command.split_whitespace().collect();
    let flag = |name: &str| {
        words.iter().enumerate().find_map(|(i, w)| {
            w.strip_prefix(&format!("{name}="))
                .or_else(|| (*w == name).then(|| words.get(i + 1).copied()).flatten())
        })
    };
    let port = flag("--secure-port")
        .and_then(|p| p.parse().ok())
        .unwrap_or(DEFAULT_PORT);
    let data_dir = flag("--data-dir").unwrap_or("capstan-data").to_string();
    (port, data_dir)
}

/// Single-quoted for bash.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The block's text as the harness runs it (see the module's comment), and
/// the ports of the servers it starts. `first_line` is the Markdown line
/// of the block's first line.
fn transform(text: &str, where_: &str, first_line: usize) -> (String, Vec<u16>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut ports = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // One command: a line and its backslash continuations.
        let start = i;
        while i < lines.len() && split_comment(lines[i]).0.trim_end().ends_with('\\') {
            i += 1;
        }
        let end = i.min(lines.len() - 1);
        i = end + 1;
        let command = &lines[start..=end];
        let at = format!("{where_}:{}", first_line + start);
        let head = command[0].trim_start();
        let joined: String = command
            .iter()
            .map(|l| split_comment(l).0.trim_end().trim_end_matches('\\'))
            .collect::<Vec<_>>()
            .join(" ");
        for line in &command[..command.len() - 1] {
            writeln!(out, "{line}").unwrap();
        }
        let last = command[command.len() - 1];
        if head.starts_with("capstan serve") {
            let (port, data_dir) = serve_flags(&joined);
            ports.push(port);
            let (code, comment) = split_comment(last);
            let code = code.trim_end();
            let background = code.ends_with('&') && !code.ends_with("&&");
            let amp = if background { "" } else { " &" };
            writeln!(out, "{code}{amp} {comment}").unwrap();
            writeln!(
                out,
                "__doc_wait_ready $! {port} {} {}",
                quoted(&data_dir),
                quoted(&at)
            )
            .unwrap();
        } else if head.starts_with("! ") {
            writeln!(out, "{last}").unwrap();
            writeln!(out, "__doc_must_fail $? {}", quoted(&at)).unwrap();
        } else {
            writeln!(out, "{last}").unwrap();
        }
        // A here-document's body passes through unchanged.
        if let Some(word) = command.iter().find_map(|l| heredoc(l)) {
            while i < lines.len() {
                writeln!(out, "{}", lines[i]).unwrap();
                i += 1;
                if lines[i - 1].trim() == word {
                    break;
                }
            }
        }
    }
    (out, ports)
}

/// What every block's script starts with: the session's folder and
/// exported variables restored, saved again on exit, and the helpers.
fn prelude(state: &Path) -> String {
    let state = quoted(&state.display().to_string());
    format!(
        r#"__doc_state={state}
cd "$(cat "$__doc_state/cwd")"
if [ -f "$__doc_state/env" ]; then . "$__doc_state/env"; fi
__doc_save() {{
  pwd > "$__doc_state/cwd"
  export -p | grep -Ev '^declare -x (PWD|OLDPWD|SHLVL|_)=' > "$__doc_state/env" || true
}}
trap __doc_save EXIT
__doc_wait_ready() {{ # PID PORT DATA_DIR WHERE
  local i
  for i in $(seq 1200); do
    if ! kill -0 "$1" 2>/dev/null; then
      echo "doc harness: the capstan serve of $4 exited before it was ready" >&2; exit 1
    fi
    if [ -f "$3/admin.kubeconfig" ] && curl -skf -o /dev/null "https://127.0.0.1:$2/readyz"; then
      return 0
    fi
    sleep 0.1
  done
  echo "doc harness: the capstan serve of $4 was not ready within 120 s" >&2; exit 1
}}
__doc_must_fail() {{ # STATUS WHERE
  if [ "$1" != 0 ]; then
    echo "doc harness: the command of $2 (marked with !) should have failed, and succeeded" >&2
    exit 1
  fi
}}
"#
    )
}

/// The Markdown files checked, relative to the checkout: README.md and those
/// under FOLDERS (not in node_modules, target or hidden folders).
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().to_string();
            let path = e.path();
            if path.is_dir() {
                if !(name.starts_with('.') || name == "node_modules" || name == "target") {
                    walk(&path, &rel.join(&name), out);
                }
            } else if name.ends_with(".md") {
                out.push(rel.join(&name));
            }
        }
    }
    let mut files = vec![PathBuf::from("README.md")];
    for folder in FOLDERS {
        walk(&Path::new(REPO).join(folder), Path::new(folder), &mut files);
    }
    files
}

/// The checkout's files: tracked, and new ones not ignored (no build output).
fn checkout_files() -> &'static [PathBuf] {
    static FILES: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let out = Command::new("git")
            .args([
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ])
            .current_dir(REPO)
            .output()
            .expect("git (the harness copies the files of the checkout git lists)");
        assert!(
            out.status.success(),
            "git ls-files in {REPO}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).to_string()))
            .collect()
    })
}

/// A copy of the checkout in `dest`.
fn copy_checkout(dest: &Path) {
    for rel in checkout_files() {
        let src = Path::new(REPO).join(rel);
        let Ok(meta) = std::fs::symlink_metadata(&src) else {
            continue; // deleted in the work tree
        };
        let to = dest.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&src).unwrap();
            std::os::unix::fs::symlink(target, &to).unwrap();
        } else if meta.is_file() {
            std::fs::copy(&src, &to).unwrap_or_else(|e| panic!("copy {}: {e}", src.display()));
        }
    }
}

/// What `needs` lacks here (named as the skip message names them).
fn missing(needs: &[String]) -> Vec<String> {
    let mut lacking = Vec::new();
    for need in needs {
        let ok = match need.as_str() {
            "pip" => Command::new("python3")
                .args(["-m", "pip", "--version"])
                .output()
                .is_ok_and(|o| o.status.success()),
            "wasi-libc" => crate::c_plugins::links_a_reactor(),
            cmd => missing_commands(&[cmd]).is_empty(),
        };
        if !ok {
            lacking.push(match need.as_str() {
                "pip" => "python3 with pip".to_string(),
                "wasi-libc" => {
                    "wasi-libc and clang's wasm32 builtins (Debian: wasi-libc libclang-rt-14-dev-wasm32)"
                        .to_string()
                }
                cmd => cmd.to_string(),
            });
        }
    }
    lacking
}

/// The environment every block starts from.
fn environment(bin: &Path, home: &Path, empty_kubeconfig: &Path) -> BTreeMap<String, String> {
    // What cargo sets for a test (CARGO_MANIFEST_DIR, CARGO_PKG_*,
    // CARGO_TARGET_DIR, …) is not a reader's; CARGO_HOME is.
    let cargos = |k: &str| k.starts_with("CARGO") && k != "CARGO_HOME";
    let mut env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| {
            !(cargos(k) || matches!(k.as_str(), "RUSTUP_TOOLCHAIN" | "KUBECONFIG" | "GOFLAGS"))
        })
        .collect();
    let user_home = std::env::var("HOME").unwrap_or_default();
    let keep = |env: &mut BTreeMap<String, String>, key: &str, default: &str| {
        let value = std::env::var(key).unwrap_or_else(|_| format!("{user_home}/{default}"));
        env.insert(key.to_string(), value);
    };
    keep(&mut env, "CARGO_HOME", ".cargo");
    keep(&mut env, "RUSTUP_HOME", ".rustup");
    keep(&mut env, "XDG_CACHE_HOME", ".cache");
    keep(&mut env, "npm_config_cache", ".npm");
    let path = std::env::var("PATH").unwrap_or_default();
    env.insert("PATH".into(), format!("{}:{path}", bin.display()));
    env.insert("HOME".into(), home.display().to_string());
    env.insert("KUBECONFIG".into(), empty_kubeconfig.display().to_string());
    env.insert("GOPROXY".into(), "off".into());
    env.insert("NO_COLOR".into(), "1".into());
    env
}

/// Sends `signal` to each process group; true when none is left.
fn signal_groups(groups: &[i32], signal: i32) -> bool {
    let mut gone = true;
    for &group in groups {
        // SAFETY: kill(2) with a negative pid signals a process group.
        if unsafe { libc::kill(-group, signal) } == 0 {
            gone = false;
        }
    }
    gone
}

/// The process groups of a session's blocks (what they left running),
/// stopped when the session ends, however it ends.
struct Groups(Vec<i32>);

impl Drop for Groups {
    fn drop(&mut self) {
        stop(&mut self.0);
    }
}

/// Stops the session's processes: SIGTERM, up to 10 s, then SIGKILL.
fn stop(groups: &mut Vec<i32>) {
    if groups.is_empty() {
        return;
    }
    signal_groups(groups, libc::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && !signal_groups(groups, 0) {
        std::thread::sleep(Duration::from_millis(100));
    }
    signal_groups(groups, libc::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && !signal_groups(groups, 0) {
        std::thread::sleep(Duration::from_millis(50));
    }
    groups.clear();
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(n);
    let cut = if from > 0 {
        format!("[{from} lines before]\n")
    } else {
        String::new()
    };
    cut + &lines[from..].join("\n")
}

/// How one file went.
#[derive(Default)]
struct Outcome {
    run: usize,
    untested: usize,
    written: usize,
    failures: Vec<String>,
    skipped: Option<String>,
    took: Duration,
}

/// Runs the tested blocks of `rel` (a Markdown file of the checkout) as one session.
fn run_file(rel: &Path, verbose: bool) -> Outcome {
    let mut outcome = Outcome::default();
    let where_ = rel.display().to_string();
    let markdown = std::fs::read_to_string(Path::new(REPO).join(rel)).unwrap();
    let mut plan = Vec::new();
    for fence in fences(&markdown) {
        match kind(&fence.info) {
            Ok(Kind::Other) => {}
            Ok(Kind::Untested) => outcome.untested += 1,
            Ok(kind) => plan.push((fence, kind)),
            Err(why) => outcome.failures.push(format!(
                "{where_}:{} (```{}): {why}",
                fence.line, fence.info
            )),
        }
    }
    if !outcome.failures.is_empty() || plan.iter().all(|(_, k)| matches!(k, Kind::Write(_))) {
        return outcome;
    }
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("checkout");
    let bin = tmp.path().join("bin");
    let state = tmp.path().join("state");
    for dir in [&root, &bin, &state, &PathBuf::from(HOME)] {
        std::fs::create_dir_all(dir).unwrap();
    }
    copy_checkout(&root);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_capstan"), bin.join("capstan")).unwrap();
    std::os::unix::fs::symlink(kubectl_path(), bin.join("kubectl")).unwrap();
    std::fs::write(state.join("cwd"), root.display().to_string()).unwrap();
    let env = environment(&bin, Path::new(HOME), &tmp.path().join("no-kubeconfig"));
    let prelude = prelude(&state);

    let mut groups = Groups(Vec::new());
    let mut server_running = false;
    for (n, (fence, kind)) in plan.iter().enumerate() {
        let at = format!("{where_}:{}", fence.line);
        let settings = match kind {
            Kind::Write(path) => {
                let cwd = std::fs::read_to_string(state.join("cwd")).unwrap();
                let to = Path::new(cwd.trim()).join(path);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::write(&to, &fence.text).unwrap();
                outcome.written += 1;
                continue;
            }
            Kind::Run(settings) => settings,
            Kind::Untested | Kind::Other => unreachable!(),
        };
        let lacking = missing(&settings.needs);
        if !lacking.is_empty() {
            let what = lacking.join(", ");
            if std::env::var_os("CAPSTAN_REQUIRE_TOOLCHAINS").is_some() {
                outcome.failures.push(format!(
                    "{at}: needs {what}, which this machine lacks (CAPSTAN_REQUIRE_TOOLCHAINS is set)"
                ));
            } else {
                outcome.skipped = Some(format!(
                    "{at} and the {} tested block(s) after it: need {what} (install it to run them)",
                    plan[n + 1..]
                        .iter()
                        .filter(|(_, k)| matches!(k, Kind::Run(_)))
                        .count()
                ));
            }
            break;
        }
        if let Some(dir) = &settings.cwd {
            std::fs::write(state.join("cwd"), root.join(dir).display().to_string()).unwrap();
        }
        let mut text = String::new();
        let mut first_line = fence.line + 1;
        if settings.server && !server_running {
            text.push_str(
                "capstan serve   # the set-up command's server, started by the doc harness\n",
            );
            first_line -= 1;
        }
        text.push_str(&fence.text);
        let (body, ports) = transform(&text, &where_, first_line);
        if !ports.is_empty() {
            stop(&mut groups.0);
            if let Some(port) = ports
                .iter()
                .find(|&&p| std::net::TcpListener::bind(("127.0.0.1", p)).is_err())
            {
                outcome.failures.push(format!(
                    "{at}: port {port}, which the block's capstan serve uses, is taken \
                     (by a server this harness did not start?)"
                ));
                break;
            }
            server_running = true;
        }
        let script = tmp.path().join(format!("block-{}.sh", fence.line));
        std::fs::write(&script, format!("{prelude}\n{body}")).unwrap();
        let log_path = tmp.path().join(format!("block-{}.log", fence.line));
        let log = std::fs::File::create(&log_path).unwrap();
        let block_started = Instant::now();
        let mut child = {
            use std::os::unix::process::CommandExt;
            Command::new("bash")
                .args(["-euo", "pipefail"])
                .arg(&script)
                .current_dir(&root)
                .env_clear()
                .envs(&env)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .process_group(0)
                .spawn()
                .expect("bash")
        };
        groups.0.push(child.id() as i32);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if block_started.elapsed() > settings.timeout {
                signal_groups(&[child.id() as i32], libc::SIGKILL);
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let took = block_started.elapsed();
        let output = std::fs::read_to_string(&log_path).unwrap_or_default();
        if verbose {
            eprintln!(
                "--- {at} ({:.1} s, {status:?}) ---\n{body}--- output ---\n{output}",
                took.as_secs_f64()
            );
        }
        let failed = match status {
            Some(s) if s.success() => None,
            Some(s) => Some(format!("{s}")),
            None => Some(format!("timed out after {} s", settings.timeout.as_secs())),
        };
        if let Some(why) = failed {
            let rest = plan[n + 1..]
                .iter()
                .filter(|(_, k)| matches!(k, Kind::Run(_)))
                .count();
            outcome.failures.push(format!(
                "{at} (```{}) failed: {why}, after {:.1} s; {rest} later block(s) of the file not run\n\
                 --- block as run ---\n{}--- output ---\n{}\n",
                fence.info,
                took.as_secs_f64(),
                text,
                tail(&output, 80)
            ));
            break;
        }
        outcome.run += 1;
    }
    drop(groups);
    outcome.took = started.elapsed();
    outcome
}

#[test]
fn every_tested_block_of_the_readmes_runs() {
    let only = std::env::var("CAPSTAN_DOC_ONLY").ok();
    let verbose = std::env::var_os("CAPSTAN_DOC_VERBOSE").is_some();
    let started = Instant::now();
    let mut report = String::new();
    let mut failures = Vec::new();
    for file in markdown_files() {
        let name = file.display().to_string();
        if only.as_deref().is_some_and(|o| !name.starts_with(o)) {
            continue;
        }
        let outcome = run_file(&file, verbose);
        writeln!(
            report,
            "{name}: {} block(s) run, {} file(s) written, {} untested, {:.1} s{}",
            outcome.run,
            outcome.written,
            outcome.untested,
            outcome.took.as_secs_f64(),
            if outcome.failures.is_empty() {
                ""
            } else {
                ", FAILED"
            }
        )
        .unwrap();
        if let Some(skipped) = &outcome.skipped {
            let _ = writeln!(std::io::stderr(), "SKIPPED doc_commands {skipped}");
            writeln!(report, "  skipped: {skipped}").unwrap();
        }
        failures.extend(outcome.failures);
    }
    writeln!(report, "total: {:.1} s", started.elapsed().as_secs_f64()).unwrap();
    eprintln!("{report}");
    assert!(
        failures.is_empty(),
        "{} doc block(s) failed:\n\n{}\n\n{report}",
        failures.len(),
        failures.join("\n")
    );
}

/// The convention itself, on a made-up file (no process is started).
#[test]
fn the_harness_reads_the_marking_convention() {
    let md = "# t\n\n```sh tested server timeout=9\nkubectl get ns\n```\n\n  ```sh untested\n  sudo x\n  ```\n\n```yaml file=capstan.yaml\na: 1\n```\n\n```rust\nfn f() {}\n```\n";
    let f = fences(md);
    assert_eq!(f.len(), 4, "{f:?}");
    assert_eq!((f[0].line, f[0].text.as_str()), (3, "kubectl get ns\n"));
    assert_eq!(f[1].text, "sudo x\n");
    assert_eq!(
        kind(&f[0].info),
        Ok(Kind::Run(Settings {
            server: true,
            cwd: None,
            needs: vec![],
            timeout: Duration::from_secs(9)
        }))
    );
    assert_eq!(kind(&f[1].info), Ok(Kind::Untested));
    assert_eq!(kind(&f[2].info), Ok(Kind::Write("capstan.yaml".into())));
    assert_eq!(kind(&f[3].info), Ok(Kind::Other));
    assert_eq!(
        kind("bash tested cwd=. needs=node,npm"),
        Ok(Kind::Run(Settings {
            server: false,
            cwd: Some(".".into()),
            needs: vec!["node".into(), "npm".into()],
            timeout: DEFAULT_TIMEOUT
        }))
    );
    assert!(kind("sh").unwrap_err().contains("sh tested"));
    assert!(kind("sh tested sever")
        .unwrap_err()
        .contains("unknown setting"));

    let block = "capstan serve --config c.yaml \\\n  --secure-port 6444   # a comment\n\
                 ! kubectl apply -f x.yaml   # Forbidden\n\
                 cat > r.json <<'JSON'\n! not a command\nJSON\n\
                 capstan serve --data-dir=d & # mine\necho '#' # done\n";
    let (out, ports) = transform(block, "F.md", 10);
    assert_eq!(ports, vec![6444, 6443]);
    assert_eq!(
        out,
        "capstan serve --config c.yaml \\\n  --secure-port 6444 & # a comment\n\
         __doc_wait_ready $! 6444 'capstan-data' 'F.md:10'\n\
         ! kubectl apply -f x.yaml   # Forbidden\n__doc_must_fail $? 'F.md:12'\n\
         cat > r.json <<'JSON'\n! not a command\nJSON\n\
         capstan serve --data-dir=d & # mine\n__doc_wait_ready $! 6443 'd' 'F.md:16'\n\
         echo '#' # done\n"
    );
}
