#!/usr/bin/env bash
# Runs Kubernetes' own `[sig-api-machinery] [Conformance]` specs that need no
# running container (e2e.test from ../shared/kube-oracle) against the server of
# KUBECONFIG, with one simulated Node (`capstan nodes simulate`), and prints
# the summary.
#   tools/conformance.sh KUBECONFIG [REPORT_DIR]
# Env: E2E_TEST (default ~/.cache/kube-oracle/bin/e2e.test), CAPSTAN (the
# binary, default target/debug/capstan), KUBECTL, FOCUS, SKIP.
set -euo pipefail
KUBECONFIG=${1:?kubeconfig of the server to test}
REPORT=${2:-$(mktemp -d)}
mkdir -p "$REPORT"
E2E=${E2E_TEST:-$HOME/.cache/kube-oracle/bin/e2e.test}
K="${KUBECTL:-/usr/lib/google-cloud-sdk/bin/kubectl.1.33} --kubeconfig $KUBECONFIG"
FOCUS=${FOCUS:-'\[sig-api-machinery\].*\[Conformance\]'}
# Specs that need a webhook or aggregated API server pod, i.e. a running container.
SKIP=${SKIP:-'AdmissionWebhook|Aggregator|ConversionWebhook|CustomResourceConversionWebhook'}

# One Node without a kubelet: `capstan nodes simulate` registers it, renews
# its Lease and heartbeats, and runs the pods bound to it; kube's not-ready
# taint is removed here for servers where no node lifecycle controller runs.
CAPSTAN=${CAPSTAN:-$(dirname "$0")/../target/debug/capstan}
"$CAPSTAN" nodes simulate --kubeconfig "$KUBECONFIG" --count 1 --name-prefix conformance-node- \
  > "$REPORT/nodes.log" 2>&1 &
NODES=$!
untaint() {
  while true; do
    # One taint per call: kubectl changes nothing when any named taint is absent.
    for taint in node.kubernetes.io/not-ready- node.kubernetes.io/unreachable-; do
      $K taint nodes -l node.capstan.dev/simulated=true "$taint" >/dev/null 2>&1 || true
    done
    sleep 10
  done
}
untaint &
UNTAINT=$!
trap 'kill $NODES $UNTAINT 2>/dev/null' EXIT
# e2e.test refuses to start without a ready, schedulable (untainted) node.
for _ in $(seq 30); do
  taints=$($K get nodes -l node.capstan.dev/simulated=true -o jsonpath='{.items[*].spec.taints}' 2>/dev/null || echo pending)
  nodes=$($K get nodes -l node.capstan.dev/simulated=true -o name 2>/dev/null || true)
  [ -n "$nodes" ] && [ -z "$taints" ] && break
  sleep 1
done

"$E2E" --kubeconfig "$KUBECONFIG" --provider skeleton --report-dir "$REPORT" \
  --ginkgo.focus="$FOCUS" --ginkgo.skip="$SKIP" --ginkgo.no-color --ginkgo.timeout=2h \
  > "$REPORT/e2e.log" 2>&1 || true
grep -E '^(Ran |FAIL!|SUCCESS!|PASS|FAIL)' "$REPORT/e2e.log" | tail -3
grep -E '^\s*\[FAIL\]' "$REPORT/e2e.log" | sort -u || true
echo "log: $REPORT/e2e.log"
