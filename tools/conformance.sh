#!/usr/bin/env bash
# Runs Kubernetes' own `[sig-api-machinery] [Conformance]` specs that need no
# running container (e2e.test from ../shared/kube-oracle) against the server of
# KUBECONFIG, with one Node registered Ready (no kubelet: its status is written
# by hand and kube's not-ready taint removed), and prints the summary.
#   tools/conformance.sh KUBECONFIG [REPORT_DIR]
# Env: E2E_TEST (default ~/.cache/kube-oracle/bin/e2e.test), KUBECTL, FOCUS, SKIP.
set -euo pipefail
KUBECONFIG=${1:?kubeconfig of the server to test}
REPORT=${2:-$(mktemp -d)}
mkdir -p "$REPORT"
E2E=${E2E_TEST:-$HOME/.cache/kube-oracle/bin/e2e.test}
K="${KUBECTL:-/usr/lib/google-cloud-sdk/bin/kubectl.1.33} --kubeconfig $KUBECONFIG"
FOCUS=${FOCUS:-'\[sig-api-machinery\].*\[Conformance\]'}
# Specs that need a webhook or aggregated API server pod, i.e. a running container.
SKIP=${SKIP:-'AdmissionWebhook|Aggregator|ConversionWebhook|CustomResourceConversionWebhook'}

$K apply -f - <<'NODE' >/dev/null
apiVersion: v1
kind: Node
metadata: {name: conformance-node, labels: {kubernetes.io/hostname: conformance-node, kubernetes.io/os: linux}}
NODE
$K patch node conformance-node --subresource=status --type=merge -p '{"status":{
  "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ready",
                 "lastHeartbeatTime":"'"$(date -u +%FT%TZ)"'","lastTransitionTime":"'"$(date -u +%FT%TZ)"'"}],
  "capacity":{"cpu":"4","memory":"8Gi","pods":"110"},"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},
  "addresses":[{"type":"InternalIP","address":"127.0.0.1"}],
  "nodeInfo":{"kubeletVersion":"v1.32.0","architecture":"amd64","operatingSystem":"linux",
    "containerRuntimeVersion":"none","kernelVersion":"","osImage":"","machineID":"","systemUUID":"","bootID":"","kubeProxyVersion":""}}}' >/dev/null
$K taint node conformance-node node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true

# The heartbeats a kubelet would send (node lease and Ready condition), so a
# node lifecycle controller (kube-controller-manager's) keeps the node Ready.
heartbeat() {
  while true; do
    now=$(date -u +%FT%T.000000Z)
    $K apply -f - >/dev/null 2>&1 <<LEASE || true
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: conformance-node, namespace: kube-node-lease}
spec: {holderIdentity: conformance-node, leaseDurationSeconds: 40, renewTime: "$now"}
LEASE
    $K patch node conformance-node --subresource=status --type=strategic -p '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ready","lastHeartbeatTime":"'"$(date -u +%FT%TZ)"'"}]}}' >/dev/null 2>&1 || true
    $K taint node conformance-node node.kubernetes.io/not-ready- node.kubernetes.io/unreachable- >/dev/null 2>&1 || true
    sleep 10
  done
}
heartbeat &
HEARTBEAT=$!
trap 'kill $HEARTBEAT 2>/dev/null' EXIT

"$E2E" --kubeconfig "$KUBECONFIG" --provider skeleton --report-dir "$REPORT" \
  --ginkgo.focus="$FOCUS" --ginkgo.skip="$SKIP" --ginkgo.no-color --ginkgo.timeout=2h \
  > "$REPORT/e2e.log" 2>&1 || true
grep -E '^(Ran |FAIL!|SUCCESS!|PASS|FAIL)' "$REPORT/e2e.log" | tail -3
grep -E '^\s*\[FAIL\]' "$REPORT/e2e.log" | sort -u || true
echo "log: $REPORT/e2e.log"
