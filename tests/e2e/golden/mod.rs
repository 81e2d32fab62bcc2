//! Capstan answers as the real kube-apiserver 1.32 does: every answer
//! recorded from it in `tests/golden/` (see its README: how to record,
//! what is normalized) is asked of Capstan and compared field for field.

mod answers;
mod cases;
mod diff;
mod endpoint;
mod normalize;
mod request;
mod setup;

use crate::support::Server;
use answers::Recorded;
use endpoint::Endpoint;
use std::collections::BTreeSet;

/// The answers still known to differ, one `<set>/<name>` per line (`#`
/// comments): this list may only shrink. A listed answer that now matches
/// fails the test too, so the list is kept true.
fn known_differences() -> BTreeSet<String> {
    let path = answers::golden_dir().join("known-differences.txt");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn capstan_answers_as_kube_recorded() {
    let recorded = answers::load_all();
    assert!(
        recorded.len() >= 60,
        "only {} recorded answers",
        recorded.len()
    );
    let s = Server::start();
    let capstan = Endpoint::capstan(&s);
    let known = known_differences();
    let (mut unexpected, mut fixed, mut equal) = (Vec::new(), Vec::new(), 0);
    let mut differing = Vec::new();
    for (id, want) in &recorded {
        let diffs = if id.starts_with("bootstrap/") && !known.contains(id) {
            compare_settled(&capstan, want)
        } else {
            compare(&capstan, want)
        };
        if !diffs.is_empty() {
            differing.push(id.clone());
            show(id, &diffs);
        }
        match (diffs.is_empty(), known.contains(id)) {
            (true, false) => equal += 1,
            (true, true) => fixed.push(id.clone()),
            (false, false) => unexpected.push(format!("{id}:\n  {}", diffs.join("\n  "))),
            (false, true) => {}
        }
    }
    if std::env::var_os("GOLDEN_WRITE_KNOWN").is_some() {
        write_known_differences(&differing);
        return;
    }
    let ids: BTreeSet<&String> = recorded.iter().map(|(id, _)| id).collect();
    let stale: Vec<&String> = known.iter().filter(|k| !ids.contains(k)).collect();
    assert!(
        unexpected.is_empty() && fixed.is_empty() && stale.is_empty(),
        "{equal} of {} recorded answers equal.\nDiffering (not in known-differences.txt):\n{}\n\
         Now equal, remove from known-differences.txt: {fixed:?}\nListed but not recorded: {stale:?}",
        recorded.len(),
        unexpected.join("\n"),
    );
}

/// `GOLDEN_SHOW=<prefix>`: the differences of the answers whose id starts
/// with it, listed or not (`--nocapture` to see them).
fn show(id: &str, diffs: &[String]) {
    if std::env::var("GOLDEN_SHOW").is_ok_and(|p| id.starts_with(&p)) {
        eprintln!("{id}:\n  {}", diffs.join("\n  "));
    }
}

/// `GOLDEN_WRITE_KNOWN=1`: the list rewritten as it is now (after a
/// recording, or to see what a change fixed: review it with `git diff`).
fn write_known_differences(differing: &[String]) {
    let header =
        "# Recorded answers of kube-apiserver that Capstan does not give yet (see README.md).\n";
    let text = format!("{header}{}\n", differing.join("\n"));
    let path = answers::golden_dir().join("known-differences.txt");
    std::fs::write(path, text).expect("write known-differences.txt");
}

/// What a fresh server writes once it runs (aggregated ClusterRoles'
/// rules, FlowSchemas' conditions) comes within seconds, as kube's
/// post-start hooks and controllers write it: such an answer is asked again
/// until it is equal or the time is up.
fn compare_settled(capstan: &Endpoint, want: &Recorded) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let diffs = compare(capstan, want);
        if diffs.is_empty() || std::time::Instant::now() > deadline {
            return diffs;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Capstan's answer to a recorded request against the recorded answer.
fn compare(capstan: &Endpoint, want: &Recorded) -> Vec<String> {
    let got = ask(capstan, &want.request, &want.setup);
    let mut diffs = diff::differences(&want.body, &got.body);
    if got.code != want.code {
        diffs.insert(
            0,
            format!("status code: kube {} · capstan {}", want.code, got.code),
        );
    }
    diffs
}

/// Records the real kube-apiserver's answers into `tests/golden/answers`
/// (`GOLDEN_KUBE_URL`, default the oracle's `https://127.0.0.1:16443`;
/// `GOLDEN_KUBE_DIR`, default `~/.cache/kube-oracle`, for its CA and token;
/// `GOLDEN_RECORD_ONLY=<set/name prefix>,...` records only those answers).
#[test]
#[ignore = "needs the real kube-apiserver: see tests/golden/README.md"]
fn record_kube_answers() {
    let dir = std::env::var("GOLDEN_KUBE_DIR").unwrap_or_else(|_| {
        format!(
            "{}/.cache/kube-oracle",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    let dir = std::path::PathBuf::from(dir);
    let url = std::env::var("GOLDEN_KUBE_URL").unwrap_or_else(|_| "https://127.0.0.1:16443".into());
    let tokens =
        std::fs::read_to_string(dir.join("pki/tokens.csv")).expect("the oracle's tokens.csv");
    let token = tokens
        .split(',')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    let scratch = tempfile::tempdir().expect("temp dir");
    let kube = Endpoint::kube(&url, &dir.join("pki/ca.crt"), &token, scratch.path());
    let only = std::env::var("GOLDEN_RECORD_ONLY").unwrap_or_default();
    let prefixes: Vec<&str> = only.split(',').collect();
    for case in cases::all(&kube) {
        let id = format!("{}/{}", case.set, case.name);
        if !prefixes.iter().any(|p| id.starts_with(p)) {
            continue;
        }
        let answer = ask(&kube, &case.request, &case.setup);
        let recorded = Recorded {
            request: case.request,
            setup: case.setup,
            code: answer.code,
            body: answer.body,
        };
        answers::write(&case.set, &case.name, &recorded);
    }
}

/// One case asked of `server`: its setup made, the request sent, the setup
/// deleted; the answer normalized.
fn ask(server: &Endpoint, request: &request::Request, setup: &setup::Setup) -> endpoint::Answer {
    setup.create(server);
    let mut answer = server.send(request);
    setup.delete(server);
    normalize::normalize(request, &mut answer.body);
    setup.drop_ignored(&mut answer.body);
    answer
}
