#!/usr/bin/env bash
# The Kubernetes recipe (packaging/kubernetes), without a cluster:
#  - rpcscope-k8s.sh --render for a sample scenario and N=4, parsed with python3-yaml: a ConfigMap holding the
#    scenario byte for byte (also scenarios a YAML block cannot hold as they are) and an Indexed Job of 4 pods, each
#    running its segment with a start time in the future and printing its report between the markers;
#  - kubectl, when there is one: its own parser reads the scenario back the same (offline); and
#    `kubectl apply --dry-run=client` when an API server answers (it needs one to map the kinds), else skipped;
#  - the whole flow against a stand-in kubectl that runs the rendered pod script locally with a stand-in rpcscope-cli:
#    the reports cut out of the logs, merged in index order, a failed segment refused or (--partial) left out;
#  - the script's refusals of bad arguments: exit 2, naming the argument.
#   tests/packaging/test_kubernetes.sh SOURCE_DIR
set -euo pipefail
source=$(cd "$1" && pwd)
script=$source/packaging/kubernetes/rpcscope-k8s.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

python3 -c 'import yaml' 2> /dev/null || {
    echo "FAIL: python3-yaml is not installed (make setup)" >&2
    exit 1
}

# A sample scenario against a remote target, as a user would write one.
scenario=$work/sample.rpcscope.json
cat > "$scenario" << 'EOF'
{
  "rpcscope_scenario": 1,
  "method": "rpcscope.bench.v1.Bench/Sum",
  "transport": "grpc",
  "target": "bench.rpcscope.svc.cluster.local:50051",
  "request": "{\"nums\": [1, 2, 3]}",
  "fills": ["nums=100"],
  "load": {"calls": 40000, "concurrency": 16, "rate": "2000", "warmup": "100"}
}
EOF

# Checks rendered manifests: prints "ok: ..." lines, and "FAIL: ..." with what was expected and got; exits 1 on any.
# check.py RENDERED SCENARIO N NAMESPACE(or "") [DELAY [AS_OF]]: the start time is judged against when AS_OF (default
# RENDERED) was written, not against now, so a slow kubectl or a busy machine between rendering and checking does not
# move it.
cat > "$work/check.py" << 'PY'
import datetime, os, re, sys, yaml

rendered, scenario_path, n, namespace = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
delay = int(sys.argv[5]) if len(sys.argv) > 5 else 30
as_of = sys.argv[6] if len(sys.argv) > 6 else rendered
failed = 0
def check(what, expected, got):
    global failed
    if expected == got:
        print(f"ok: {what}")
    else:
        print(f"FAIL: {what}: expected {expected!r}, got {got!r}", file=sys.stderr)
        failed += 1
def holds(what, condition, got):
    """For conditions: on failure says what was found instead."""
    global failed
    if condition:
        print(f"ok: {what}")
    else:
        print(f"FAIL: {what}: got {got!r}", file=sys.stderr)
        failed += 1
def dig(obj, *path):
    for key in path:
        try:
            obj = obj[key]
        except (KeyError, IndexError, TypeError):
            return None
    return obj

docs = [d for d in yaml.safe_load_all(open(rendered, encoding="utf-8")) if d is not None]
check("two documents", 2, len(docs))
kinds = {d.get("kind"): d for d in docs if isinstance(d, dict)}
check("a ConfigMap and a Job", ["ConfigMap", "Job"], sorted(kinds))
cm, job = kinds.get("ConfigMap", {}), kinds.get("Job", {})
name = dig(job, "metadata", "name")

data = dig(cm, "data", "scenario.rpcscope.json")
with open(scenario_path, "rb") as f:
    check("ConfigMap data scenario.rpcscope.json is the scenario byte for byte", f.read(),
          data.encode("utf-8") if isinstance(data, str) else data)
for kind, doc in (("ConfigMap", cm), ("Job", job)):
    check(f"{kind} namespace", namespace or None, dig(doc, "metadata", "namespace"))

spec = dig(job, "spec") or {}
check("completionMode", "Indexed", spec.get("completionMode"))
check("completions", n, spec.get("completions"))
check("parallelism", n, spec.get("parallelism"))
check("backoffLimit", 0, spec.get("backoffLimit"))
holds("ttlSecondsAfterFinished set", isinstance(spec.get("ttlSecondsAfterFinished"), int),
      spec.get("ttlSecondsAfterFinished"))
pod = dig(spec, "template", "spec") or {}
check("restartPolicy", "Never", pod.get("restartPolicy"))
term = dig(pod, "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", 0, "podAffinityTerm")
check("podAntiAffinity preference over nodes", "kubernetes.io/hostname", dig(term, "topologyKey"))
check("anti-affinity selects the run's own pods", dig(spec, "template", "metadata", "labels", "rpcscope.org/run"),
      dig(term, "labelSelector", "matchLabels", "rpcscope.org/run"))
container = dig(pod, "containers", 0) or {}
requests = dig(container, "resources", "requests") or {}
check("resource requests for cpu and memory", ["cpu", "memory"], sorted(requests))
volume = next((v for v in pod.get("volumes") or [] if "configMap" in v), {})
check("a volume from the ConfigMap", dig(cm, "metadata", "name"), dig(volume, "configMap", "name"))
mount = next((m for m in container.get("volumeMounts") or [] if m.get("name") == volume.get("name")), {})
check("the ConfigMap mounted at /scenario", "/scenario", mount.get("mountPath"))

command = (container.get("command") or []) + (container.get("args") or [])
check("the container runs sh -c", ["sh", "-c"], command[:2])
body = command[2] if len(command) > 2 else ""
check("one shell script after sh -c", 3, len(command))
segment = f'"${{JOB_COMPLETION_INDEX}}/{n}"'
holds("rpcscope-cli run --scenario from the mount", "rpcscope-cli run --scenario /scenario/scenario.rpcscope.json"
      in body, body)
holds(f"--segment {segment}", f"--segment {segment}" in body, re.findall(r"--segment \S*", body))
holds("-O json -o /tmp/report.json", "-O json -o /tmp/report.json" in body, re.findall(r"-o \S*", body))
holds("the pod exits with the run's status, but 0 after a report with status 1 or 4",
      "status=$?" in body and 'exit "$status"' in body and 'case "$status" in 1|4) status=0' in body
      and f"=== rpcscope-report segment ${{JOB_COMPLETION_INDEX}}/{n} status $status ===" in body,
      re.findall(r".*(?:status|exit).*", body))
m = re.search(r'--start-at "([^"]*)"', body)
start = m.group(1) if m else None
now = datetime.datetime.fromtimestamp(os.path.getmtime(as_of), datetime.timezone.utc)
try:
    at = datetime.datetime.strptime(start or "", "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    lead = (at - now).total_seconds()
except ValueError:
    lead = None
holds(f"--start-at is RFC 3339 UTC, about {delay} s after rendering", lead is not None and delay - 15 <= lead <= delay + 1,
      f"{start}, {lead} s after rendering")
marker = f"=== rpcscope-report segment ${{JOB_COMPLETION_INDEX}}/{n} "
lines = (f'echo "{marker}begin ==="', "cat /tmp/report.json", f'echo "{marker}end ==="')
begin, cat, end = (body.find(line) for line in lines)
holds(f"the report printed between the markers {marker}begin/end ===", 0 <= begin < cat < end,
      re.findall(r".*(?:===|cat ).*", body))
# Kubernetes rewrites $(VAR) and $$ in args: the script must hold neither.
check("no $( or $$ in the script for Kubernetes to rewrite", [], re.findall(r"\$[($]", body))
sys.exit(1 if failed else 0)
PY

# --- Rendering -------------------------------------------------------------------------------------------------
rendered=$work/rendered.yaml
if bash "$script" "$scenario" 4 --render --name rpcscope-test > "$rendered" 2> "$work/render.err"; then
    ok "--render for N=4: $(wc -l < "$rendered") lines"
else
    fail "--render exited $?: $(cat "$work/render.err")"
fi
python3 "$work/check.py" "$rendered" "$scenario" 4 "" || fail "the rendered manifests (above)"
if [[ -s $work/render.err ]]; then
    fail "--render printed on stderr for a remote target: $(cat "$work/render.err")"
else
    ok "--render says nothing on stderr for a remote target"
fi

# With a namespace, N=1 and another delay.
if bash "$script" "$scenario" 1 --render --namespace bench --start-delay 120 > "$work/ns.yaml" 2> "$work/ns.err" \
    && out=$(python3 "$work/check.py" "$work/ns.yaml" "$scenario" 1 bench 120 2>&1); then
    ok "--namespace bench, N=1, --start-delay 120"
else
    fail "--render --namespace bench, N=1, --start-delay 120: $(cat "$work/ns.err") $(grep FAIL <<< "${out:-}")"
fi

# Scenarios YAML cannot hold as a plain block: no final newline, indented first line, several final newlines, and
# carriage returns with a line separator (a double-quoted string then). All must read back byte for byte.
printf '  {"rpcscope_scenario": 1,\t"target": "h:1",\n\n   "method": "a.B/C"}' > "$work/odd1.rpcscope.json"
printf '{"rpcscope_scenario": 1, "target": "h:1", "method": "a.B/C"}\n\n\n' > "$work/odd2.rpcscope.json"
# (odd3's request: {"s": "<U+2028> é \" @NAME@"}, a placeholder's name too, which must stay as it is.)
printf '{\r\n "rpcscope_scenario": 1, "target": "h:1",\r\n "request": '\
'"{\\"s\\": \\"\xe2\x80\xa8 \xc3\xa9 \\\\\\" @NAME@\\"}"}\r\n' > "$work/odd3.rpcscope.json"
for odd in odd1 odd2 odd3; do
    python3 -c 'import json, sys; json.load(open(sys.argv[1], "rb"))' "$work/$odd.rpcscope.json" \
        || fail "test data $odd is not JSON"
    if bash "$script" "$work/$odd.rpcscope.json" 2 --render > "$work/$odd.yaml" 2> "$work/$odd.err" \
        && out=$(python3 "$work/check.py" "$work/$odd.yaml" "$work/$odd.rpcscope.json" 2 "" 2>&1); then
        ok "scenario $odd ($(head -c 40 "$work/$odd.rpcscope.json" | tr '\r\n\t' '   ')...) held byte for byte"
    else
        fail "scenario $odd: $(cat "$work/$odd.err") $(grep FAIL <<< "${out:-}")"
    fi
done

# --- kubectl -------------------------------------------------------------------------------------------------------
if command -v kubectl > /dev/null; then
    # Offline: kubectl's own (Go) YAML reader on the manifests, through a local-only command.
    for case in "rendered 4 $scenario" "odd1 2 $work/odd1.rpcscope.json" "odd3 2 $work/odd3.rpcscope.json"; do
        read -r label n file <<< "$case"
        out=
        if kubectl annotate --local -f "$work/$label.yaml" rpcscope.org/test=1 -o yaml > "$work/$label.k.yaml" 2>&1 \
            && out=$(python3 "$work/check.py" "$work/$label.k.yaml" "$file" "$n" "" 30 "$work/$label.yaml" 2>&1); then
            ok "kubectl annotate --local (offline) reads the $label manifests as python3-yaml does"
        else
            [[ -n $out ]] || out=$(cat "$work/$label.k.yaml")
            fail "kubectl's reading of the $label manifests: $(grep -v '^ok' <<< "$out")"
        fi
    done
    # The dry run asks the API server which kinds it serves: only where one answers (the kubeconfig's, if any; no
    # input, and a time limit, in case its credentials would ask for something).
    if timeout 20 kubectl version --request-timeout=5s < /dev/null > /dev/null 2>&1; then
        if timeout 60 kubectl apply --dry-run=client --validate=false -f "$rendered" < /dev/null > "$work/dry.log" 2>&1
        then
            ok "kubectl apply --dry-run=client: $(tr '\n' ' ' < "$work/dry.log")"
        else
            fail "kubectl apply --dry-run=client: $(cat "$work/dry.log")"
        fi
    else
        echo "skipped: kubectl apply --dry-run=client (no API server answers kubectl here; it needs one)"
    fi
else
    echo "skipped: kubectl checks (no kubectl on PATH)"
fi

# --- The flow, against a stand-in cluster ----------------------------------------------------------------------
# The stand-in kubectl keeps its state in $FAKE_STATE. On apply it runs every pod of the Job at once: the rendered
# container script itself, under sh, with /scenario and /tmp moved into the state folder and the stand-in rpcscope-cli
# below first on PATH. FAKE_FAIL=I makes segment I exit 3 with no report, FAKE_CHECK=I makes it exit 4 with one.
mkdir -p "$work/bin" "$work/podbin"
cat > "$work/bin/kubectl" << 'EOF'
#!/usr/bin/env bash
set -euo pipefail
state=$FAKE_STATE
echo "$*" >> "$state/calls"
[[ $1 == --namespace ]] && shift 2
pods() { for rc in "$state"/pod-*.rc; do [[ -e $rc ]] && basename "$rc" .rc | sed 's/^pod-//'; done; }
case "$1 $2" in
    "apply -f")
        cat > "$state/applied.yaml"
        python3 - "$state" << 'PY'
import os, re, subprocess, sys, yaml
state = sys.argv[1]
docs = {d["kind"]: d for d in yaml.safe_load_all(open(f"{state}/applied.yaml")) if d}
job, cm = docs["Job"], docs["ConfigMap"]
os.makedirs(f"{state}/scenario", exist_ok=True)
for key, value in cm["data"].items():
    open(f"{state}/scenario/{key}", "w").write(value)
container = job["spec"]["template"]["spec"]["containers"][0]
argv = container["command"] + container["args"]
procs = []
for i in range(job["spec"]["completions"]):
    root = f"{state}/pod{i}"
    os.makedirs(f"{root}/tmp", exist_ok=True)
    moved = {"/scenario/": f"{state}/scenario/", "/tmp/": f"{root}/tmp/"}
    script = re.sub("/scenario/|/tmp/", lambda m: moved[m.group(0)], argv[2])
    env = dict(os.environ, JOB_COMPLETION_INDEX=str(i), PATH=os.environ["FAKE_PODBIN"] + ":" + os.environ["PATH"])
    log = open(f"{state}/pod-{i}.log", "w")
    procs.append((i, subprocess.Popen(argv[:2] + [script], env=env, stdout=log, stderr=subprocess.STDOUT)))
for i, p in procs:
    open(f"{state}/pod-{i}.rc", "w").write(str(p.wait()))
PY
        echo "configmap/x created"
        echo "job.batch/x created"
        ;;
    "get job")
        if [[ ! -e $state/applied.yaml ]]; then
            echo "Error from server (NotFound): jobs.batch \"$3\" not found" >&2
            exit 1
        fi
        case "$*" in
            *'.metadata.uid'*) echo -n 0f5e1c2a-uid ;;
            *'type=="Failed")].status'*)
                if grep -qv '^0$' "$state"/pod-*.rc; then echo -n "True|||1"; else echo -n "|0|4|0"; fi ;;
            *'type=="Failed")].message'*) echo -n "Job has reached the specified backoff limit" ;;
        esac
        ;;
    "patch configmap") ;;
    "wait --for=condition=complete") ! grep -qv '^0$' "$state"/pod-*.rc ;;
    "get pods")
        for i in $(pods); do
            rc=$(cat "$state/pod-$i.rc")
            if [[ $rc == 0 ]]; then phase=Succeeded; else phase=Failed; fi
            printf 'x-%s-abcde|%s|%s|%s\n' "$i" "$i" "$phase" "$rc"
        done
        ;;
    "logs "*) i=${2#x-} && cat "$state/pod-${i%-abcde}.log" ;;
    "delete job" | "delete configmap") echo "$2" >> "$state/deleted" ;;
    *) echo "stand-in kubectl: unexpected: $*" >&2 && exit 1 ;;
esac
EOF
# In the pods: writes a report naming its segment and start time; prints a text summary on stdout, as the real one.
cat > "$work/podbin/rpcscope-cli" << 'EOF'
#!/usr/bin/env bash
set -euo pipefail
while (($#)); do
    case $1 in
        --segment) segment=$2 && shift ;;
        --start-at) start=$2 && shift ;;
        -o) file=$2 && shift ;;
    esac
    shift
done
echo "Summary:"
echo "  Count: 10000 (segment $segment)"
[[ ${FAKE_FAIL:-} == "${segment%/*}" ]] && echo "error: the server went away" >&2 && exit 3
printf '{\n  "format": "rpcscope-run",\n  "segment": "%s",\n  "start_at": "%s"\n}' "$segment" "$start" > "$file"
[[ ${FAKE_CHECK:-} == "${segment%/*}" ]] && echo "check p99<20ms: failed" && exit 4
exit 0
EOF
# The local one, merging: writes the segments it was given, in order, and whether --partial.
cat > "$work/bin/merge-cli" << 'EOF'
#!/usr/bin/env bash
set -euo pipefail
[[ $1 == merge ]] || exit 2
shift
[[ ${1:-} == --help ]] && exit 0
python3 - "$@" << 'PY'
import json, sys
files, out, partial, args = [], None, False, iter(sys.argv[1:])
for a in args:
    if a == "-o": out = next(args)
    elif a == "--partial": partial = True
    else: files.append(a)
segments = [json.load(open(f))["segment"] for f in files]
starts = sorted({json.load(open(f))["start_at"] for f in files})
json.dump({"segments": segments, "start_at": starts, "partial": partial}, open(out, "w"))
print(f"Merged {len(files)} segment(s)")
PY
EOF
chmod +x "$work/bin/kubectl" "$work/podbin/rpcscope-cli" "$work/bin/merge-cli"

# flow NAME [ENV=VALUE...] -- [SCRIPT ARGS...]: runs the script against the stand-in; sets rc and st (its state).
flow() {
    local label=$1 envs=()
    shift
    while [[ $1 != -- ]]; do envs+=("$1") && shift; done
    shift
    st=$work/flow-$label
    mkdir -p "$st"
    rc=0
    (cd "$st" && env "${envs[@]}" FAKE_STATE="$st" FAKE_PODBIN="$work/podbin" KUBECTL="$work/bin/kubectl" \
        RPCSCOPE_CLI="$work/bin/merge-cli" bash "$script" "$scenario" 4 --name run --start-delay 0 "$@" \
        > "$st/out.log" 2>&1) || rc=$?
}
merged() {
    python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(m["segments"], m["partial"])' "$1" \
        2> /dev/null || echo "(no merged.json)"
}

flow ok -- --out out
want="['0/4', '1/4', '2/4', '3/4'] False"
if [[ $rc == 0 && -f $st/out/merged.json && $(merged "$st/out/merged.json") == "$want" ]]; then
    ok "flow: 4 reports cut out of the pods' logs and merged in index order"
else
    fail "flow: expected exit 0 and merged $want; got exit $rc, $(merged "$st/out/merged.json"): $(cat "$st/out.log")"
fi
start=$(sed -n 's/.*--start-at "\([^"]*\)".*/\1/p' "$st/out/manifests.yaml")
got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["start_at"])' "$st/out/segment-2.json" 2>&1)
if [[ -n $start && $got == "$start" ]]; then
    ok "flow: segment-2.json is pod 2's report, start time $start"
else
    fail "flow: segment-2.json's start_at: expected \"$start\", got \"$got\""
fi
if grep -q 'Merged 4 segment(s)' "$st/out/merged.txt" 2> /dev/null; then
    ok "flow: merge's summary kept in merged.txt"
else
    fail "flow: expected merge's output in merged.txt, got: $(cat "$st/out/merged.txt" 2>&1)"
fi
deleted=$(sort "$st/deleted" 2> /dev/null | tr '\n' ' ')
if [[ $deleted == "configmap job " ]]; then
    ok "flow: Job and ConfigMap deleted afterwards"
else
    fail "flow: expected the Job and ConfigMap deleted, got: $deleted"
fi

flow keep -- --keep
if [[ $rc == 0 && -f $st/run/merged.json && ! -e $st/deleted ]]; then
    ok "flow --keep: merged into ./NAME, nothing deleted"
else
    fail "flow --keep: expected exit 0, ./run/merged.json, no deletion; got exit $rc: $(cat "$st/out.log")"
fi

flow failed FAKE_FAIL=2 --
if [[ $rc == 3 && ! -e $st/run/merged.json && -f $st/run/segment-3.json && ! -e $st/run/segment-2.json ]] \
    && grep -q 'without a report: 2' "$st/out.log"; then
    ok "flow with segment 2 failing: exit 3, segment 2 named, nothing merged"
else
    fail "flow with segment 2 failing: expected exit 3 naming segment 2, no merge; got exit $rc: $(cat "$st/out.log")"
fi

flow partial FAKE_FAIL=2 -- --partial
want="['0/4', '1/4', '3/4'] True"
if [[ $rc == 0 && $(merged "$st/run/merged.json") == "$want" ]]; then
    ok "flow --partial with segment 2 failing: the other 3 merged with --partial"
else
    fail "flow --partial: expected exit 0 and merged $want; got exit $rc, $(merged "$st/run/merged.json")"
fi

flow check FAKE_CHECK=1 --
if [[ $rc == 4 && $(cat "$st/pod-1.rc") == 0 && -f $st/run/segment-1.json && -f $st/run/merged.json ]]; then
    ok "flow with segment 1 failing a check: its pod succeeds with its report, all merged, the script exits 4"
else
    fail "flow with a failed check: expected pod 1 exit 0 with its report, a merge and exit 4; got exit $rc, pod 1" \
        "exit $(cat "$st/pod-1.rc" 2>&1): $(cat "$st/out.log")"
fi

# --- Refusals: exit 2 and a message naming the argument ----------------------------------------------------------
refusal() { # EXPECTED-WORD ARGS...
    local word=$1 out code=0
    shift
    out=$(bash "$script" "$@" 2>&1 > /dev/null) || code=$?
    if [[ $code == 2 && $out == *"$word"* ]]; then
        ok "refused ($*): ${out%%$'\n'*}"
    else
        fail "$*: expected exit 2 and a message naming $word, got exit $code: $out"
    fi
}
refusal "N:" "$scenario" 0 --render
refusal "N:" "$scenario" abc --render
refusal "N:" "$scenario" 1001 --render
refusal "N:" "$scenario" -3 --render
refusal "SCENARIO:" "$work/missing.rpcscope.json" 4 --render
echo '{"rpcscope_scenario": 1,' > "$work/broken.rpcscope.json"
refusal "SCENARIO:" "$work/broken.rpcscope.json" 4 --render
echo '{"method": "a.B/C"}' > "$work/other.json"
refusal "SCENARIO:" "$work/other.json" 4 --render
echo '{"rpcscope_scenario": 1, "target": "./server --port {port}"}' > "$work/command.rpcscope.json"
refusal "server command" "$work/command.rpcscope.json" 4 --render
refusal "--start-delay" "$scenario" 4 --start-delay soon --render
refusal "--name" "$scenario" 4 --name Bench_1 --render
refusal "--image" "$scenario" 4 --image 'a b' --render
refusal "SCENARIO and N" "$scenario" --render

if ((failures)); then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "Kubernetes recipe checks passed"
