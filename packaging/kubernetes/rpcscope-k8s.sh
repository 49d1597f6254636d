#!/usr/bin/env bash
# Runs one rpcscope benchmark split over N workers on Kubernetes and merges their reports into one run.
#
#   rpcscope-k8s.sh SCENARIO N [--image IMAGE] [--namespace NS] [--name NAME] [--start-delay SECONDS]
#                   [--timeout SECONDS] [--out DIR] [--render] [--keep] [--partial]
#
# It renders job.yaml (next to this script): a ConfigMap with the scenario and an Indexed Job of N pods, pod I running
# `rpcscope-cli run --scenario ... --segment I/N --start-at T`, where T is now + --start-delay so that every pod is
# scheduled and has its image before the timed phase starts. It applies them, waits for the Job to complete or fail,
# cuts each pod's JSON report out of its log (between marker lines) into OUT/segment-I.json, and merges them with
# `rpcscope-cli merge` into OUT/merged.json (the merged summary also in OUT/merged.txt). The Job is deleted at the end,
# unless --keep.
#
# Environment: KUBECTL, the kubectl command (default kubectl; may carry flags: KUBECTL="kubectl --context lab");
# RPCSCOPE_CLI, the local rpcscope-cli that merges (default rpcscope-cli on PATH).
# Exit status: 0 merged; 2 bad arguments; 3 the run could not be done or is incomplete (a tool is missing, the Job
# failed or timed out, a segment has no report; --partial merges what there is instead); otherwise merge's status,
# and after a good merge 4 when a worker's --check did not hold, 1 when a worker's calls failed with --fail-on-error.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
template=$here/job.yaml
me=$(basename "$0")

usage() {
    cat << EOF
Usage: $me SCENARIO N [options]
Runs the scenario (*.rpcscope.json) split over N workers (1 to 1000) as an Indexed Job, and merges their reports.

Options:
  --image IMAGE          image with rpcscope-cli (default rpcscope-cli:latest; see Dockerfile)
  --namespace NS         namespace (default: the kubectl context's)
  --name NAME            name of the Job and ConfigMap (default rpcscope-YYYYMMDD-HHMMSS, UTC)
  --start-delay SECONDS  the timed phase starts this long after the Job is made (default 30): time enough for
                         every pod to be scheduled and to pull the image
  --timeout SECONDS      how long the run may take after the start time (default 3600)
  --out DIR              where the reports go (default ./NAME)
  --render               print the manifests and exit; nothing is applied
  --keep                 leave the Job, its pods and the ConfigMap in the cluster (removed a day later)
  --partial              merge the segments that have a report even if others failed (merge --partial)
  -h, --help             this help

Environment: KUBECTL (default kubectl), RPCSCOPE_CLI (default rpcscope-cli).
EOF
}

# Bad usage: the message names the argument; exit 2.
refuse() {
    echo "$me: $*" >&2
    echo "Try '$me --help'." >&2
    exit 2
}
# The work could not be done: exit 3.
fail() {
    echo "$me: $*" >&2
    exit 3
}
note() { echo "$me: $*" >&2; }

# --- Arguments ---------------------------------------------------------------------------------------------------
image=rpcscope-cli:latest
namespace=
name=
start_delay=30
timeout=3600
out=
render=0
keep=0
partial=0
positional=()
while (($#)); do
    case $1 in
        -h | --help)
            usage
            exit 0
            ;;
        --image | --namespace | --name | --start-delay | --timeout | --out)
            (($# >= 2)) || refuse "$1 needs a value"
            case $1 in
                --image) image=$2 ;;
                --namespace) namespace=$2 ;;
                --name) name=$2 ;;
                --start-delay) start_delay=$2 ;;
                --timeout) timeout=$2 ;;
                --out) out=$2 ;;
            esac
            shift 2
            ;;
        --render) render=1 && shift ;;
        --keep) keep=1 && shift ;;
        --partial) partial=1 && shift ;;
        --) shift && positional+=("$@") && break ;;
        -[0-9]*) positional+=("$1") && shift ;; # a negative N, refused below with the others
        -?*) refuse "unknown option $1" ;;
        *) positional+=("$1") && shift ;;
    esac
done
((${#positional[@]} == 2)) || refuse "expected SCENARIO and N, got ${#positional[@]} argument(s)"
scenario=${positional[0]}
workers=${positional[1]}

# True when $1 is a whole number from $2 to $3 (digits only: no sign, no spaces).
in_range() { [[ $1 =~ ^[0-9]{1,7}$ ]] && (($2 <= 10#$1 && 10#$1 <= $3)); }
# N: the CLI's segments go up to 1000 (--segment I/N with N <= 1000).
in_range "$workers" 1 1000 || refuse "N: expected a whole number of workers from 1 to 1000, got \"$workers\""
workers=$((10#$workers))
in_range "$start_delay" 0 86400 || refuse "--start-delay: expected whole seconds from 0 to 86400, got \"$start_delay\""
start_delay=$((10#$start_delay))
in_range "$timeout" 1 604800 || refuse "--timeout: expected whole seconds from 1 to 604800, got \"$timeout\""
timeout=$((10#$timeout))
# Names go into the manifests unquoted: only what Kubernetes accepts. The Job's name stays short enough for its pods'
# names and labels (NAME-INDEX-XXXXX, at most 63 characters).
dns_label='^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'
[[ -z $name ]] && name=rpcscope-$(date -u +%Y%m%d-%H%M%S)
[[ $name =~ $dns_label && ${#name} -le 50 ]] \
    || refuse "--name: expected at most 50 lower-case letters, digits and '-' (not first or last), got \"$name\""
[[ -z $namespace || ($namespace =~ $dns_label && ${#namespace} -le 63) ]] \
    || refuse "--namespace: expected a namespace name (lower-case letters, digits and '-'), got \"$namespace\""
[[ $image =~ ^[A-Za-z0-9][A-Za-z0-9._/:@-]*$ ]] \
    || refuse "--image: expected an image reference like registry.example/rpcscope-cli:1.0, got \"$image\""
[[ -n $out ]] || out=./$name

# The scenario: a readable file, JSON, a scenario document, and runnable from a pod.
[[ -e $scenario ]] || refuse "SCENARIO: no such file: $scenario"
[[ -f $scenario && -r $scenario ]] || refuse "SCENARIO: not a readable file: $scenario"
command -v python3 > /dev/null || fail "python3 is needed (to check the scenario and render the manifests)"
python3 - "$scenario" "$me" << 'PY' || exit 2
import json, sys

path, me = sys.argv[1], sys.argv[2]
def refuse(message):
    print(f"{me}: SCENARIO: {path}: {message}", file=sys.stderr)
    sys.exit(1)
try:
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
except (UnicodeDecodeError, ValueError) as e:  # json.JSONDecodeError is a ValueError
    refuse(f"not JSON (UTF-8): {e}")
if not isinstance(doc, dict) or "rpcscope_scenario" not in doc:
    refuse('not an rpcscope scenario (a JSON object with a "rpcscope_scenario" field)')
target = doc.get("target") or "builtin"
if not isinstance(target, str):
    refuse('"target" is not a string')
if any(c.isspace() for c in target) or "{port}" in target:
    refuse(f'its target starts a server command ({target}); here the target must be an address the pods reach')
if target == "builtin":
    print(f'{me}: warning: the target is "builtin": each worker benchmarks its own in-process server. Set "target" '
          "to the service's address (e.g. bench.default.svc:50051) to load one server.", file=sys.stderr)
# The pods have the scenario alone in /scenario (and the image's own files): any other file it names is not there.
files = []
def add(field, value):
    if isinstance(value, str) and value not in ("", "-"):
        files.append(f"{field} = {value}")
schema = doc.get("schema") if isinstance(doc.get("schema"), dict) else {}
for key in ("protos", "protosets", "import_paths"):
    for i, value in enumerate(schema.get(key) or []):
        add(f"schema.{key}[{i}]", value)
for key in ("request_file", "request_binary_file", "raw_samples"):
    add(key, doc.get(key))
connection = doc.get("connection") if isinstance(doc.get("connection"), dict) else {}
for key in ("cacert", "cert", "key"):
    add(f"connection.{key}", connection.get(key))
output = doc.get("output") if isinstance(doc.get("output"), dict) else {}
for i, e in enumerate(output.get("exports") or []):
    add(f"output.exports[{i}].file", e.get("file") if isinstance(e, dict) else None)
if files:
    print(f"{me}: warning: the scenario names files the pods do not have (they get the scenario alone, in "
          "/scenario, and run it without --trust):\n  " + "\n  ".join(files), file=sys.stderr)
PY

# --- Rendering -------------------------------------------------------------------------------------------------------
[[ -r $template ]] || fail "the manifest template is missing: $template"
# How long the Job may run: the delay, the timeout and a margin, so that the script (which waits that long and a bit)
# sees Kubernetes stop the Job.
deadline=$((start_delay + timeout + 60))
# The start time, now + --start-delay, in RFC 3339 UTC (GNU date, else BSD's). Set just before the manifests are
# rendered and applied, so that no check eats into the delay.
pick_start_time() {
    local epoch=$(($(date +%s) + start_delay))
    start_at=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ 2> /dev/null || date -u -r "$epoch" +%Y-%m-%dT%H:%M:%SZ)
}

# Prints the manifests. The scenario becomes a YAML literal block (readable, exact for ordinary text), or a
# double-quoted string with escapes when it holds what a block cannot carry exactly (carriage returns, control or
# line-separator characters).
render_manifests() {
    python3 - "$template" "$scenario" "$name" "$namespace" "$workers" "$image" "$start_at" "$deadline" << 'PY'
import re, sys

template, scenario, name, namespace, workers, image, start_at, deadline = sys.argv[1:]
with open(scenario, "rb") as f:
    text = f.read().decode("utf-8")

def yaml_scalar(text, indent):
    """The scalar for a value at a mapping key indented by `indent` spaces, read back as exactly `text`."""
    unsafe = re.compile("[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
    if not unsafe.search(text):
        body = text.rstrip("\n")
        trailing = len(text) - len(body)
        # Chomping: "-" no final newline, "" (clip) exactly one, "+" (keep) all of them. The explicit indentation
        # indicator (2: the content sits two columns right of its key) lets the first line start with spaces.
        chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
        pad = " " * (indent + 2)
        lines = body.split("\n") + [""] * (trailing - 1)
        return f"|2{chomp}\n" + "\n".join(pad + line if line else "" for line in lines)
    out = ['"']
    for c in text:
        if c == '"' or c == "\\":
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif unsafe.match(c):
            out.append(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)

values = {"NAME": name, "NAMESPACE": namespace, "WORKERS": workers, "IMAGE": image, "START_AT": start_at,
          "DEADLINE": deadline}
result = []
with open(template, encoding="utf-8") as f:
    for line in f.read().splitlines():
        if line.startswith("##") or (not namespace and "@NAMESPACE@" in line):
            continue
        for key, value in values.items():
            line = line.replace(f"@{key}@", value)
        indent = len(line) - len(line.lstrip(" "))
        left = re.findall(r"@[A-Z_]+@", line.replace("@SCENARIO@", ""))
        if left:
            sys.exit(f"{template}: placeholder(s) left unfilled: {' '.join(left)}")
        # Last, so that nothing in the scenario is taken for a placeholder.
        result.append(line.replace("@SCENARIO@", yaml_scalar(text, indent)))
sys.stdout.write("\n".join(result) + "\n")
PY
}

if ((render)); then
    pick_start_time
    render_manifests
    exit 0
fi

# --- Running -----------------------------------------------------------------------------------------------------
read -r -a kubectl <<< "${KUBECTL:-kubectl}"
((${#kubectl[@]})) || refuse "KUBECTL is empty"
command -v "${kubectl[0]}" > /dev/null || fail "no kubectl: ${kubectl[0]} is not on PATH (set KUBECTL)"
[[ -n $namespace ]] && kubectl+=(--namespace "$namespace")
cli=${RPCSCOPE_CLI:-rpcscope-cli}
command -v "$cli" > /dev/null || fail "no local rpcscope-cli to merge with: $cli (set RPCSCOPE_CLI)"
"$cli" merge --help > /dev/null 2>&1 || fail "$cli has no merge command: a newer rpcscope-cli is needed"
if [[ -e $out ]] && compgen -G "$out/segment-*.json" > /dev/null; then
    refuse "--out: $out already holds segment reports; give another folder"
fi
# apply would try to change an existing Job (and fail on its immutable template): refuse up front instead.
if "${kubectl[@]}" get job "$name" > /dev/null 2>&1; then
    refuse "--name: a Job named $name exists already; delete it or choose another name"
fi
mkdir -p "$out/logs"

applied=0
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if ((applied && !keep)); then
        note "deleting the Job $name and its ConfigMap (--keep leaves them)"
        "${kubectl[@]}" delete job "$name" --ignore-not-found --wait=false > /dev/null || true
        "${kubectl[@]}" delete configmap "$name-scenario" --ignore-not-found --wait=false > /dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pick_start_time
render_manifests > "$out/manifests.yaml"
applied=1
"${kubectl[@]}" apply -f - < "$out/manifests.yaml"
# The Job owns the ConfigMap, so that whatever removes the Job (its TTL, a delete) removes the ConfigMap too.
uid=$("${kubectl[@]}" get job "$name" -o jsonpath='{.metadata.uid}')
owner="{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"$name\",\"uid\":\"$uid\"}"
"${kubectl[@]}" patch configmap "$name-scenario" --type merge -p "{\"metadata\":{\"ownerReferences\":[$owner]}}" \
    > /dev/null || note "warning: could not make the Job own its ConfigMap $name-scenario"
note "Job $name: $workers worker(s), timed phase at $start_at (in ${start_delay}s), waiting up to $((deadline))s"

# Waits for Complete; between short waits looks for Failed, so that a failure is seen at once.
outcome=
give_up=$((SECONDS + deadline + 30))
last=
while :; do
    if "${kubectl[@]}" wait --for=condition=complete --timeout=10s "job/$name" > /dev/null 2>&1; then
        outcome=complete
        break
    fi
    state=$("${kubectl[@]}" get job "$name" -o jsonpath='{.status.conditions[?(@.type=="Failed")].status}|'\
'{.status.active}|{.status.succeeded}|{.status.failed}')
    IFS='|' read -r failed active succeeded failures <<< "$state"
    if [[ $failed == True ]]; then
        outcome=failed
        break
    fi
    if ((SECONDS >= give_up)); then
        outcome=timeout
        break
    fi
    progress="${active:-0} running, ${succeeded:-0} done, ${failures:-0} failed"
    [[ $progress == "$last" ]] || note "Job $name: $progress"
    last=$progress
done
case $outcome in
    complete) note "Job $name completed" ;;
    failed)
        reason=$("${kubectl[@]}" get job "$name" -o jsonpath='{.status.conditions[?(@.type=="Failed")].message}')
        note "Job $name failed: ${reason:-no reason given}"
        ;;
    timeout) note "Job $name did not finish in time" ;;
esac

# The reports, from the pods' logs. The Job's pods, one a line: name, completion index, phase, exit code.
fields='{.metadata.name}|{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}|{.status.phase}|'\
'{.status.containerStatuses[0].state.terminated.exitCode}'
pods=$("${kubectl[@]}" get pods -l "job-name=$name" -o jsonpath="{range .items[*]}$fields{\"\\n\"}{end}")
while IFS='|' read -r pod index phase code; do
    [[ -n $pod ]] || continue
    if ! [[ $index =~ ^[0-9]+$ ]]; then
        note "pod $pod has no completion index: not a pod of this Job's, passed over"
        continue
    fi
    log=$out/logs/$pod.log
    if ! "${kubectl[@]}" logs "$pod" < /dev/null > "$log" 2> "$log.err"; then
        note "segment $index/$workers: no log from pod $pod ($phase): $(tr '\n' ' ' < "$log.err")"
        continue
    fi
    rm -f "$log.err"
    segment=$out/segment-$index.json
    if [[ -e $segment ]]; then
        note "segment $index/$workers: a report came already from another pod; $pod's is left in $log"
        continue
    fi
    # The lines strictly between the two markers; found only if the end marker follows.
    if awk -v b="=== rpcscope-report segment $index/$workers begin ===" \
        -v e="=== rpcscope-report segment $index/$workers end ===" \
        '$0 == e && inside { done = 1; exit } inside { print } $0 == b { inside = 1 } END { exit !done }' \
        "$log" > "$segment.part" \
        && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$segment.part" 2> /dev/null; then
        mv "$segment.part" "$segment"
        [[ $phase == Succeeded ]] \
            || note "segment $index/$workers: pod $pod ended $phase (exit ${code:-?}); its report is kept"
    else
        rm -f "$segment.part"
        note "segment $index/$workers: no complete report in pod $pod's log ($phase, exit ${code:-?}); its end:"
        tail -n 15 "$log" | sed 's/^/    /' >&2
    fi
done <<< "$pods"

# Which segments have a report; they go to merge in index order.
reports=()
missing=()
for ((i = 0; i < workers; i++)); do
    if [[ -f $out/segment-$i.json ]]; then reports+=("$out/segment-$i.json"); else missing+=("$i"); fi
done
if ((${#missing[@]})); then
    note "${#missing[@]} of $workers segment(s) without a report: ${missing[*]} (logs in $out/logs)"
    ((partial)) || fail "nothing merged; --partial merges the ${#reports[@]} segment(s) that have one"
    ((${#reports[@]})) || fail "no segment has a report: nothing to merge"
elif [[ $outcome != complete ]]; then
    ((partial)) || fail "every segment has a report but the Job did not complete; --partial merges them anyway"
fi

merge=("$cli" merge "${reports[@]}" -o "$out/merged.json")
((partial)) && merge+=(--partial)
status=0
"${merge[@]}" | tee "$out/merged.txt" || status=$?
echo
echo "Segment reports: $out/segment-*.json (${#reports[@]} of $workers); pods' logs: $out/logs/"
echo "Manifests applied: $out/manifests.yaml"
if ((status == 0)); then
    echo "Merged run: $out/merged.json (summary in $out/merged.txt)"
    # Segments whose calls failed (1) or whose checks did not hold (4) reported all the same (their pods succeed, so
    # the Job runs to the end); their status is the run's: 4 before 1, as rpcscope-cli run ranks them.
    for ((i = 0; i < workers; i++)); do
        code=$(grep -hosE "^=== rpcscope-report segment $i/$workers status [0-9]+ ===\$" "$out"/logs/*.log \
            | head -n 1 | sed -E 's/.* status ([0-9]+) ===$/\1/' || true)
        if [[ $code == 4 || ($code == 1 && $status != 4) ]]; then
            note "segment $i/$workers exited $code ($( ((code == 4)) && echo "a --check did not hold" \
                || echo "calls failed, --fail-on-error")); see its log"
            status=$code
        fi
    done
else
    note "merge exited with status $status"
fi
exit "$status"
