#!/usr/bin/env bash
# What a ValidatingAdmissionPolicy adds to a create, measured end to end on
# any server (run it on Capstan and on the reference kube-apiserver of
# ../shared/kube-oracle side by side): capstan-bench's create phase in a
# labelled namespace, without the policy, with it bound (allowing every
# create, so each one is evaluated), and without it again.
#   tools/bench-admission-policy.sh KUBECONFIG [OPS]
# Env: CAPSTAN_BENCH (default target/release/capstan-bench), KUBECTL.
set -euo pipefail
KUBECONFIG=${1:?kubeconfig of the server}
OPS=${2:-3000}
BENCH=${CAPSTAN_BENCH:-$(dirname "$0")/../target/release/capstan-bench}
K="${KUBECTL:-/usr/lib/google-cloud-sdk/bin/kubectl.1.33} --kubeconfig $KUBECONFIG"
NS=vap-bench
$K create namespace $NS --dry-run=client -o yaml | $K apply -f - >/dev/null
$K label namespace $NS vap-bench=true --overwrite >/dev/null
cat <<'YAML' | $K apply -f - >/dev/null
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-require-data.example.com}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"]}
  validations:
  - expression: "has(object.data) && object.data.size() < 1000 && object.metadata.name.size() < 254"
    message: "configmaps must carry data"
YAML
binding() {
  cat <<'YAML' | $K "$1" -f - >/dev/null
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: bench-require-data.example.com}
spec:
  policyName: bench-require-data.example.com
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {vap-bench: "true"}}
YAML
}
create_p50() {
  "$BENCH" --kubeconfig "$KUBECONFIG" --namespace $NS --ops "$OPS" --concurrency 1 --json 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); p=[x for x in d["api"]["phases"] if x["phase"]=="create"][0]; print(p["p50_ms"], p["p99_ms"])'
}
echo "without: $(create_p50)"
binding apply; sleep 3
echo "with:    $(create_p50)"
binding delete; sleep 3
echo "without: $(create_p50)"
