"""Running the binaries for their help, and splitting a help text into blocks.

A help text becomes a list of blocks, each a dict with a type "t":
  usage    {"lines": ["rpcscope-cli run [options] [target]", ...]}  (program path made its base name)
  para     {"lines": [...]}                  unindented text, one paragraph
  list     {"entries": [{"term", "segs"}], "header"}   a definition list; "header" is the
           paragraph line ending in ':' right above it ("Options:"), or None; "segs" are
           [["text" | "pre", [lines]]], the description and any deeper-indented example lines
  bullets  {"items": [[lines]]}              "- " items
  pre      {"lines": [...]}                  indented text that is none of these, kept as it is
"""

import collections
import os
import re
import subprocess
import sys

from .common import GenError

TIMEOUT_S = 60


# --------------------------------------------------------------------------
# Running the binaries


def run_binary(binary, args, gui=False):
    """Run BINARY ARGS and return its stdout as text; raise GenError on failure.

    argv[0] is the binary's base name, so that Qt's "Usage: <argv[0]>" line
    does not depend on the path the binary was given as.
    """
    env = dict(os.environ)
    env["LC_ALL"] = "C.UTF-8"
    env["LANG"] = "C.UTF-8"
    env.pop("LANGUAGE", None)
    if gui:
        env["QT_QPA_PLATFORM"] = "offscreen"
    shown = "%s %s" % (binary, " ".join(args))
    try:
        proc = subprocess.run([os.path.basename(binary)] + args, executable=binary, env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=TIMEOUT_S, check=False)
    except (OSError, ValueError) as exc:
        raise GenError("cannot run `%s`: %s" % (shown, exc)) from exc
    except subprocess.TimeoutExpired as exc:
        raise GenError("`%s` did not finish within %d s" % (shown, TIMEOUT_S)) from exc
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise GenError("`%s` exited with status %d%s" % (
            shown, proc.returncode, (":\n" + err) if err else ""))
    try:
        text = proc.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GenError("`%s` printed text that is not UTF-8: %s" % (shown, exc)) from exc
    return text


def read_help(binary, args, gui=False):
    """The --help text of BINARY ARGS, tabs expanded, trailing blanks removed."""
    text = run_binary(binary, args, gui)
    lines = [line.rstrip() for line in text.expandtabs().split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    shown = "%s %s" % (binary, " ".join(args))
    if not lines:
        raise GenError("`%s` printed nothing" % shown)
    if not lines[0].startswith("Usage:"):
        raise GenError("`%s` does not print a help text (it does not start with \"Usage:\"):\n%s"
                       % (shown, "\n".join(lines[:5])))
    return lines


def check_version(binary, version, gui):
    """True when BINARY --version works; warn when it does not mention VERSION."""
    try:
        out = run_binary(binary, ["--version"], gui)
    except GenError:
        return False
    if version not in out.split():
        print("%s: warning: `%s --version` says %r, not %s" % (
            os.path.basename(sys.argv[0]), binary, (out.strip().split("\n") or [""])[0], version),
            file=sys.stderr)
    return True


# --------------------------------------------------------------------------
# Parsing help text into blocks


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def normalize_usage(rest, prog, cmd):
    """'build/x/rpcscope-cli [options] target' -> 'rpcscope-cli CMD [options] target'."""
    tokens = rest.split()
    if tokens and os.path.basename(tokens[0]) == prog:
        tokens[0] = prog
        if cmd and (len(tokens) < 2 or tokens[1] != cmd):
            tokens.insert(1, cmd)
    return " ".join(tokens)


def parse_blocks(lines, prog, cmd=None):
    """Split help LINES into blocks: usage, para, list, bullets and pre."""
    blocks = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("Usage:"):
            usage = [normalize_usage(line[len("Usage:"):], prog, cmd)]
            i += 1
            while i < n and indent_of(lines[i]) > 0 and \
                    os.path.basename(lines[i].split()[0]) == prog:
                usage.append(normalize_usage(lines[i], prog, cmd))
                i += 1
            blocks.append({"t": "usage", "lines": usage})
            continue
        if indent_of(line) == 0:
            para = []
            while i < n and lines[i].strip() and indent_of(lines[i]) == 0 \
                    and not lines[i].startswith("Usage:"):
                para.append(lines[i])
                i += 1
            blocks.append({"t": "para", "lines": para})
            continue
        region = []
        while i < n and lines[i].strip() and indent_of(lines[i]) > 0:
            region.append(lines[i])
            i += 1
        block = parse_region(region)
        prev = blocks[-1] if blocks else None
        if block["t"] == "list" and prev and prev["t"] == "para" and prev["lines"][-1].endswith(":"):
            block["header"] = prev["lines"][-1]
        blocks.append(block)
    return blocks


def gap_ends(line, start):
    """Columns where a run of two or more spaces after START ends."""
    return [start + m.end() for m in re.finditer(r" {2,}", line[start:])]


def parse_region(region):
    """Parse an indented region as a definition list, a bullet list or preformatted text."""
    base = min(indent_of(l) for l in region)
    groups = []  # [entry line, continuation lines]
    for line in region:
        if indent_of(line) == base:
            groups.append([line, []])
        else:
            groups[-1][1].append(line)   # region starts at `base`, so groups is not empty
    if all(g[0][base:].startswith("- ") for g in groups):
        items = [[g[0][base + 2:].strip()] + [c.strip() for c in g[1]] for g in groups]
        return {"t": "bullets", "items": items}
    # The description column: where continuation lines start and where the single
    # gap of an entry line ends, whichever is most common.
    votes = collections.Counter()
    for entry, cont in groups:
        if cont:
            votes[indent_of(cont[0])] += 1
        ends = gap_ends(entry, base)
        if len(ends) == 1:
            votes[ends[0]] += 1
    pre = {"t": "pre", "lines": list(region)}
    if not votes:
        return pre
    col = min(votes, key=lambda c: (-votes[c], c))
    entries = []
    for entry, cont in groups:
        ends = gap_ends(entry, base)
        first = None
        if ends:
            best = min(ends, key=lambda e: (abs(e - col), e))
            term, first = entry[base:best].rstrip(), entry[best:]
        elif not cont and len(entry) > col and entry[col - 1] == " " and entry[col] != " ":
            # no description below: the term runs up to it with a single space
            term, first = entry[base:col].rstrip(), entry[col:]
        else:
            term = entry[base:].strip()
        segs = []
        if first:
            segs.append(["text", [first.strip()]])
        for c in cont:
            kind = "text" if indent_of(c) <= col else "pre"
            body = c.strip() if kind == "text" else c[col:]
            if segs and segs[-1][0] == kind:
                segs[-1][1].append(body)
            else:
                segs.append([kind, [body]])
        if not term or not segs:
            return pre
        entries.append({"term": term, "segs": segs})
    return {"t": "list", "entries": entries, "header": None}


def entry_text(entry):
    """An entry's description as one line (its preformatted parts left out)."""
    return " ".join(" ".join(lines) for kind, lines in entry["segs"] if kind == "text")


def is_option_term(term):
    return bool(re.match(r"--?[A-Za-z]", term))


