#!/usr/bin/env python3
"""Records a server's answers to tests/e2e/data/DATA/cases.json.

Usage: record-admission-policies.py KUBECONFIG OUT [DATA]
DATA is `vap` (ValidatingAdmissionPolicies, the default) or `map`
(MutatingAdmissionPolicies). Applies setup.yaml, policies.yaml and
params.yaml (when there) with kubectl (1.33) first, waits for the policies
to take effect, then sends every case and writes the status code, the
Status's reason, message and causes, the Warning headers, and the parts of
the answered object a case `pick`s (JSON pointers). Run against the
reference server (../shared/kube-oracle; for `map` started with
`--feature-gates=MutatingAdmissionPolicy=true
--runtime-config=admissionregistration.k8s.io/v1alpha1=true`) to record
`kube-answers.json`; the e2e tests `admission_policies` and
`mutating_admission_policies` compare Capstan's answers with it.
"""
import base64, json, os, ssl, subprocess, sys, tempfile, time, urllib.request

DATA = os.path.join(os.path.dirname(__file__), "..", "tests", "e2e", "data")
KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"


def connection(kubeconfig):
    """The server, an SSL context and a bearer token (or None) of the
    kubeconfig's current context, read with kubectl."""
    raw = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig, "config", "view",
                          "--raw", "--minify", "-o", "json"],
                         check=True, capture_output=True, text=True).stdout
    config = json.loads(raw)
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]

    def data_file(key):
        f = tempfile.NamedTemporaryFile(delete=False)
        f.write(base64.b64decode(user.get(key) or cluster.get(key)))
        f.close()
        return f.name
    ca = cluster.get("certificate-authority") or data_file("certificate-authority-data")
    ctx = ssl.create_default_context(cafile=ca)
    if "client-certificate-data" in user:
        ctx.load_cert_chain(data_file("client-certificate-data"), data_file("client-key-data"))
    return cluster["server"], ctx, user.get("token")


def send(base, token, ctx, case):
    body, ctype = None, "application/json"
    if "patch" in case:
        body, ctype = json.dumps(case["patch"]).encode(), "application/merge-patch+json"
    elif "body" in case:
        body = json.dumps(case["body"]).encode()
    req = urllib.request.Request(base + case["path"], data=body, method=case["method"])
    req.add_header("Content-Type", ctype)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        resp = urllib.request.urlopen(req, context=ctx)
        code, headers, text = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        code, headers, text = e.code, e.headers, e.read()
    doc = json.loads(text)
    answer = {"code": code, "warnings": headers.get_all("Warning") or []}
    if doc.get("kind") == "Status" and doc.get("status") == "Failure":
        answer.update(reason=doc.get("reason"), message=doc.get("message"),
                      details=doc.get("details"))
    elif case.get("pick"):
        answer["picked"] = {p: pointer(doc, p) for p in case["pick"]}
    return answer


def pointer(doc, path):
    """The value at JSON pointer `path` (None when absent)."""
    for part in path.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(doc, list):
            doc = doc[int(part)] if part.isdigit() and int(part) < len(doc) else None
        elif isinstance(doc, dict):
            doc = doc.get(part)
        else:
            return None
    return doc


def main():
    kubeconfig, out = sys.argv[1:3]
    here = os.path.join(DATA, sys.argv[3] if len(sys.argv) > 3 else "vap")
    base, ctx, token = connection(kubeconfig)
    kubectl = [KUBECTL, "--kubeconfig", kubeconfig]
    for f in ["setup.yaml", "policies.yaml"]:
        subprocess.run(kubectl + ["apply", "-f", os.path.join(here, f)], check=True)
    if os.path.exists(os.path.join(here, "params.yaml")):
        subprocess.run(kubectl + ["wait", "--for=condition=Established",
                                  "crd/replicalimits.rules.example.com"], check=True)
        subprocess.run(kubectl + ["apply", "-f", os.path.join(here, "params.yaml")], check=True)
    time.sleep(3)  # the policies take effect through informers
    cases = json.load(open(os.path.join(here, "cases.json")))["cases"]
    answers = {c["name"]: send(base, token, ctx, c) for c in cases}
    json.dump(answers, open(out, "w"), indent=1, sort_keys=True)
    open(out, "a").write("\n")


if __name__ == "__main__":
    main()
