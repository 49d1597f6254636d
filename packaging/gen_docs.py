#!/usr/bin/env python3
"""Generate rpcscope's man pages and shell completions from the binaries' own --help.

Usage:
    packaging/gen_docs.py --cli PATH/rpcscope-cli --gui PATH/rpcscope \\
        --version 0.1.0 --date 2026-12-03 --out OUTDIR

It runs `rpcscope-cli --help`, `rpcscope-cli COMMAND --help` for every command
listed under "Commands:" there, and `rpcscope --help` (with
QT_QPA_PLATFORM=offscreen), parses that text and writes:

    OUTDIR/man/rpcscope-cli.1              roff man page, section 1
    OUTDIR/man/rpcscope.1                  roff man page of the GUI
    OUTDIR/completions/bash/rpcscope-cli   bash completion (bash-completion dir)
    OUTDIR/completions/bash/rpcscope
    OUTDIR/completions/zsh/_rpcscope-cli   zsh completion functions (#compdef)
    OUTDIR/completions/zsh/_rpcscope

Nothing about the commands or their options is written down here: it is all
read from the help, so the pages and completions cannot drift from it.  The
parser understands both layouts the help uses: Qt's QCommandLineParser output
("Options:" / "Arguments:", descriptions in a column, continuation lines
indented to it) and the hand-written help of some commands (definition lists
whose term and description are separated by two or more spaces, a term alone
on its line with the description below, deeper-indented example lines, "- "
bullets).  Indented text that does not parse as such a list is kept as a
preformatted block.

How an option's value is completed is decided from its help:
  * a metavar listing literal values (text|csv|markdown) -> those values;
  * FILE, PATH (or ...FILE) -> file names, filtered by an extension when the
    description names one (".proto file", "*.rpcscope.json"); DIR -> directories;
  * METHOD -> nothing (no command lists a proto's methods);
  * a metavar FORMAT with a "Formats:" list in the help -> that list's names;
  * a description whose first sentence is a plain list of lowercase words
    ("grpc (default), http, msgpack or none") -> those words;
  * anything else -> file names (what bash would do anyway).
Commands whose help sends the reader to 'rpcscope-cli run --help' for the
rest of their options get run's flags too, less those the help excludes
("not --builtin").

The output depends only on the help text and on --version/--date: running it
twice on the same binaries gives identical files.  It exits non-zero with a
message when a binary cannot be run or a help text cannot be read or parsed.
Python 3 standard library only.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

GENERATOR = "packaging/gen_docs.py"
TIMEOUT_S = 60

# A literal value in a help text: grpc, csv-histogram, p50, per-block.
VALUE_RE = re.compile(r"[a-z][a-z0-9-]*")
# An option as written in help: -c, --import-paths, --skipTLS.
FLAG_RE = re.compile(r"--?[A-Za-z][A-Za-z0-9_-]*")


class GenError(Exception):
    """A failure to report to the user (then exit non-zero)."""


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


# --------------------------------------------------------------------------
# What a command's help says about its options


def split_option_term(term):
    """'-i, --import-paths <DIR>' -> [(['-i', '--import-paths'], 'DIR')]
    '-O FORMAT -o FILE'        -> [(['-O'], 'FORMAT'), (['-o'], 'FILE')]
    '--save, --db PATH'        -> [(['--save'], None), (['--db'], 'PATH')]"""
    groups = []
    for tok in re.split(r"[\s,]+", term):
        if not tok:
            continue
        if FLAG_RE.fullmatch(tok.split("=", 1)[0]):
            flag, _, meta = tok.partition("=")
            groups.append([[flag], meta or None])
        elif groups:
            groups[-1][1] = tok if groups[-1][1] is None else groups[-1][1] + " " + tok
    merged = []
    for group in groups:
        prev = merged[-1] if merged else None
        if prev and prev[1] is None and len(prev[0]) == 1 and re.fullmatch(r"-[A-Za-z0-9]", prev[0][0]) \
                and group[0][0].startswith("--"):
            prev[0].extend(group[0])
            prev[1] = group[1]
        else:
            merged.append(group)
    return [(flags, meta.strip("<>") if meta else None) for flags, meta in merged]


def usage_flags(text):
    """Flags and their metavars from a usage-like string: '[--db PATH] -O FORMAT -o FILE'."""
    out = []
    tokens = text.split()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        core = tok.lstrip("[(").rstrip("]).,;")
        if core.endswith("..."):
            core = core[:-3].rstrip("]")
        if FLAG_RE.fullmatch(core.split("=", 1)[0]):
            flag, _, meta = core.partition("=")
            closed = tok.rstrip(".").endswith("]")
            if not meta and not closed and i + 1 < len(tokens):
                nxt = tokens[i + 1]
                ncore = nxt.lstrip("[").rstrip(".").rstrip("]").rstrip(".,;")
                if ncore and not nxt.startswith("[") and not FLAG_RE.fullmatch(ncore) \
                        and ncore != "..." and not nxt.startswith("("):
                    meta = ncore
                    i += 1
            out.append((flag, meta or None))
        i += 1
    return out


def prose_flags(text):
    """Flags named in prose, with an upper-case metavar right after them; quoted text skipped."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", " ", text)
    out = []
    for m in re.finditer(r"(?<![\w'\"-])(--?[A-Za-z][A-Za-z0-9_-]*)(?:[ =]([A-Z][A-Z0-9_]*)\b)?", text):
        if not m.group(1).endswith("-"):
            out.append((m.group(1), m.group(2)))
    return out


def first_sentence(text):
    return re.split(r"(?<=\.)\s+(?=[A-Z])", text.strip(), maxsplit=1)[0]


def remove_parens(text):
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"\s*\([^()]*\)", "", text)
    return text


def desc_values(desc):
    """The values a description lists, e.g. 'grpc (default), http, msgpack or none (...).'"""
    s = remove_parens(first_sentence(desc))
    s = re.sub(r"\s+([,;:.])", r"\1", s)
    s = re.sub(r"\s+", " ", s).split(";")[0]
    if ":" in s:
        s = s.rsplit(":", 1)[1]
    s = s.strip().rstrip(".")
    items = re.split(r",\s+(?:or\s+)?|\s+or\s+", s)
    if len(items) >= 2 and all(VALUE_RE.fullmatch(it) for it in items):
        return items
    return None


def desc_exts(desc):
    """File name extensions a description names: '.proto file', '(*.rpcscope.json)'."""
    found = []
    for m in re.finditer(r"\*\.([A-Za-z0-9][\w.]*[A-Za-z0-9])|(?<![\w*./])\.([a-z][a-z0-9]*)\s+files?\b", desc):
        ext = m.group(1) or m.group(2)
        if ext not in found:
            found.append(ext)
    return found


def value_kind(meta, desc, named_lists):
    """How to complete the value of an option: ('words', [...]), ('files',), ('dirs',),
    ('ext', [...]), ('none',) or None when it takes no value."""
    if meta is None:
        return None
    mv = meta.strip("<>[]").rstrip(".")
    alts = mv.split("|")
    if len(alts) >= 2 and all(VALUE_RE.fullmatch(a) for a in alts):
        return ("words", alts)
    if mv == "METHOD":
        return ("none",)
    if re.fullmatch(r"DIR|DIRECTORY|[A-Z_]*_DIR", mv):
        return ("dirs",)
    if re.fullmatch(r"FILE|PATH|FILES|FILE\|DIR|[A-Z_]*FILE", mv):
        exts = desc_exts(desc)
        return ("ext", exts) if exts and mv != "FILE|DIR" else ("files",)
    named = named_lists.get(mv.lower() + "s")
    if named:
        return ("words", named)
    values = desc_values(desc) if desc else None
    if values:
        return ("words", values)
    return ("files",)


class CommandDoc:
    """One command's parsed help: its blocks and what completion needs to know."""

    def __init__(self, name, lines, prog):
        self.name = name
        self.lines = lines
        self.blocks = parse_blocks(lines, prog, name)
        self.text = "\n".join(lines)
        self.options = collections.OrderedDict()   # flag -> option record
        self.arguments = []                         # [(name, desc)] positional arguments
        self.subcommands = []                       # [(name, desc)]
        self.named_lists = {}                       # 'formats' -> [values]

    def usage_lines(self):
        for b in self.blocks:
            if b["t"] == "usage":
                return b["lines"]
        return []

    def add_option(self, flags, meta, desc, source):
        for flag in flags:
            if flag in self.options:
                continue
            self.options[flag] = {
                "flag": flag, "aliases": list(flags), "meta": meta, "desc": desc,
                "source": source,
                "repeatable": bool(re.search(r"\brepeatable\b", desc or "", re.I)),
            }

    def analyse(self):
        lists = [b for b in self.blocks if b["t"] == "list"]
        for b in lists:
            header = (b.get("header") or "").rstrip(":").strip().lower()
            if header and not any(is_option_term(e["term"]) for e in b["entries"]):
                values = []
                for e in b["entries"]:
                    values.extend(v for v in re.split(r",\s*", e["term"]) if v)
                if all(VALUE_RE.fullmatch(v) for v in values):
                    self.named_lists[header] = values
        for b in lists:
            for e in b["entries"]:
                if is_option_term(e["term"]):
                    desc = entry_text(e)
                    for flags, meta in split_option_term(e["term"]):
                        self.add_option(flags, meta, desc, "list")
                elif (b.get("header") or "") == "Arguments:":
                    self.arguments.append((e["term"], entry_text(e)))
        usage = self.usage_lines()
        if usage and re.search(r"\bSUBCOMMAND\b", usage[0]):
            for b in lists:
                if not any(is_option_term(e["term"]) for e in b["entries"]):
                    for e in b["entries"]:
                        self.subcommands.append((e["term"].split()[0], entry_text(e)))
                        for flag, meta in prose_flags(entry_text(e)):
                            self.add_option([flag], meta, "", "subcommand")
                    break
        for line in usage:
            for flag, meta in usage_flags(line):
                self.add_option([flag], meta, "", "usage")
        for b in self.blocks:
            if b["t"] == "para":
                for line in b["lines"]:
                    m = re.match(r"Common:\s*(.*)", line)
                    if m:
                        for flag, meta in usage_flags(m.group(1).split("(")[0]):
                            self.add_option([flag], meta, "", "common")

    def inherits_run(self):
        return self.name != "run" and "'rpcscope-cli run --help'" in self.text

    def inherit(self, run_doc):
        excluded = set(re.findall(r"\bnot\s+(--?[A-Za-z][A-Za-z0-9_-]*)", self.text))
        for flag, opt in run_doc.options.items():
            if flag not in self.options and flag not in excluded:
                self.options[flag] = dict(opt, source="run",
                                          aliases=[a for a in opt["aliases"] if a not in excluded])

    def finish(self):
        """Decide every option's value completion."""
        for opt in self.options.values():
            opt["kind"] = value_kind(opt["meta"], opt["desc"], self.named_lists)

    def argument_kinds(self):
        """Completion of the positional arguments, in order (the last one repeats)."""
        if self.subcommands:
            return [("words", [s for s, _ in self.subcommands]), ("files",)]
        kinds = []
        for _, desc in self.arguments:
            values = desc_values(desc)
            exts = desc_exts(desc)
            kinds.append(("words", values) if values else ("ext", exts) if exts else ("files",))
        return kinds or [("files",)]


# --------------------------------------------------------------------------
# roff


def esc(text):
    """Escape text for roff (not the start of a line: see line()).

    Long words get invisible break points (\\:) after | / and , so that a
    narrow terminal can still break them."""
    text = re.sub(r"\S{25,}", lambda m: re.sub(r"(?<=[|/,])(?=.)", "\0", m.group(0)), text)
    out = text.replace("\\", "\\e")
    out = out.replace("-", "\\-")
    out = out.replace("'", "\\(aq").replace("`", "\\(ga").replace("~", "\\(ti").replace("^", "\\(ha")
    out = "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in out)
    return out.replace("\0", "\\:")


def line(text):
    """A roff text line: protected when it would start with a control character."""
    text = text.rstrip()
    if text.startswith((".", "'")):
        return "\\&" + text
    return text


def font(text, f):
    return "\\f%s%s\\fR" % (f, esc(text)) if f != "R" else esc(text)


def markup_token(tok, default):
    """Bold options, italic metavars; brackets, commas and '...' roman."""
    m = re.match(r"^([\[(]*)(.*?)((?:\.\.\.|[\]),;])*)$", tok)
    lead, core, trail = m.groups()
    if not core:
        return esc(tok)
    if core.startswith("<") and core.endswith(">") and len(core) > 2:
        f, core = "I", core[1:-1]
    elif FLAG_RE.fullmatch(core.split("=", 1)[0]):
        flag, eq, val = core.partition("=")
        return esc(lead) + font(flag, "B") + (esc(eq) + font(val, "I") if eq else "") + esc(trail)
    elif re.search(r"[A-Za-z]", core) and core == core.upper():
        f = "I"
    elif core in ("or", "|"):
        f = "R"
    else:
        f = default
    return esc(lead) + font(core, f) + esc(trail)


def markup(text, default):
    return "".join(markup_token(p, default) if p.strip() else p for p in re.split(r"(\s+)", text))


def render_para(lines_):
    out = [".PP"]
    for k, l in enumerate(lines_):
        out.append(line(esc(l.strip())))
        if l.rstrip().endswith(".") and k + 1 < len(lines_):
            out.append(".br")
    return out


def render_segs(segs):
    out = []
    for kind, body in segs:
        if kind == "text":
            out.extend(line(esc(l)) for l in body)
        else:
            out.append(".nf")
            out.extend(line(esc(l)) for l in body)
            out.append(".fi")
    return out


def render_blocks(blocks, skip=(), prog=None, cmd=None):
    out = []
    for b in blocks:
        if id(b) in skip:
            continue
        if b["t"] == "usage":
            out.append(".PP")
            for k, u in enumerate(b["lines"]):
                if k:
                    out.append(".br")
                words = u.split(None, 1)
                if prog and words[0] == prog:
                    text = "\\fB%s\\fR %s" % (esc(prog), usage_markup(words[1] if len(words) > 1 else "", cmd, "R"))
                else:
                    text = markup(u, "R")
                out.append(line(("\\fBUsage:\\fR " if k == 0 else "") + text))
        elif b["t"] == "para":
            out.extend(render_para(b["lines"]))
        elif b["t"] == "list":
            for e in b["entries"]:
                out.append(".TP")
                term = e["term"]
                out.append(line(markup(term, "B")))
                out.extend(render_segs(e["segs"]))
        elif b["t"] == "bullets":
            for item in b["items"]:
                out.append(".IP \\(bu 2")
                out.extend(line(esc(l)) for l in item)
        else:
            out.extend([".PP", ".nf"])
            out.extend(line(esc(l)) for l in b["lines"])
            out.append(".fi")
    return out


def usage_markup(usage, cmd, default):
    """A usage line without its program name: the command bold, options bold, the rest DEFAULT."""
    if cmd and (usage == cmd or usage.startswith(cmd + " ")):
        return "\\fB%s\\fR%s" % (esc(cmd), markup(usage[len(cmd):], default))
    return markup(usage, default)


def synopsis(usage, prog, cmd=None):
    """.SY/.YS for one usage line 'prog [cmd] args...'."""
    words = usage.split(None, 1)
    rest = words[1] if len(words) > 1 else ""
    out = [".SY %s" % esc(prog)]
    if rest:
        out.append(line(usage_markup(rest, cmd, "I")))
    out.append(".YS")
    return out


def th(title, version, date, prog):
    return ['.TH %s 1 "%s" "%s %s" "User Commands"' % (esc(title.upper()), esc(date), esc(prog), esc(version))]


def header_comment(prog, version):
    return ['.\\" Generated by %s from the --help output of %s %s; do not edit.' % (GENERATOR, prog, version),
            '.\\" Regenerate it instead when the help changes.']


def exit_codes(para_lines):
    """'Exit codes: 0 success; 1 ...' -> [('0', 'success'), ...] or None."""
    text = " ".join(l.strip() for l in para_lines)
    m = re.match(r"Exit codes:\s*(.*)", text)
    if not m:
        return None
    items = []
    for part in re.split(r";\s*(?=\d+\s)", m.group(1)):
        mm = re.match(r"(\d+)\s+(.*)", part.strip())
        if not mm:
            return None
        items.append((mm.group(1), mm.group(2).rstrip(".")))
    return items


def find_mentions(docs, prog):
    """ENVIRONMENT and FILES entries: RPCSCOPE_* variables and ~/ paths the help names.

    docs: [(command name or None, CommandDoc)]. Returns (env, files), each an
    ordered dict name -> list of uses {"flag", "cmds", "desc"}: the option the
    name is the default of (or None), the commands that say so, and what the
    help says about it."""
    env = collections.OrderedDict()
    files = collections.OrderedDict()
    pat_env = re.compile(r"\$?\b(RPCSCOPE_[A-Z0-9_]+)\b")
    pat_file = re.compile(r"(?<![\w/])(~/[\w./-]*\w)")

    def note(table, name, cmd, flag, desc):
        default = desc is None or bool(re.search(r"\(default:?\s+\$?%s\b" % re.escape(name), desc))
        if desc is not None:
            desc = re.sub(r"\s*\(default:?\s+%s\)" % re.escape(name), "", desc).strip()
        uses = table.setdefault(name, [])
        for use in uses:
            if use["flag"] == flag and (flag or use["desc"] == desc):
                if cmd not in use["cmds"]:
                    use["cmds"].append(cmd)
                if not use["desc"]:
                    use["desc"] = desc
                return
        uses.append({"flag": flag, "cmds": [cmd], "desc": desc, "default": default})

    for cmd, doc in docs:
        for b in doc.blocks:
            if b["t"] == "list":
                for e in b["entries"]:
                    text = entry_text(e)
                    flags = [f for f, _ in split_option_term(e["term"])] if is_option_term(e["term"]) else []
                    flag = flags[0][-1] if flags else None
                    for pat, table in ((pat_env, env), (pat_file, files)):
                        for m in pat.finditer(text):
                            note(table, m.group(1), cmd, flag, text if flag else "%s: %s" % (e["term"], text))
            elif b["t"] in ("para", "bullets"):
                lines_ = b["lines"] if b["t"] == "para" else [l for it in b["items"] for l in it]
                text = " ".join(l.strip() for l in lines_)
                for sentence in re.split(r"(?<=\.)\s+(?=[A-Z])", text):
                    for pat, table in ((pat_env, env), (pat_file, files)):
                        for m in pat.finditer(sentence):
                            # "--db PATH (default ~/...)": the default of --db
                            dm = re.search(r"(--?[A-Za-z][\w-]*)(?:\s+[A-Z][A-Z0-9_]*)?\s+\(default:?\s+\$?"
                                           + re.escape(m.group(1)), sentence)
                            if dm:
                                note(table, m.group(1), cmd, dm.group(1), None)
                            else:
                                note(table, m.group(1), cmd, None, sentence)
    return env, files


def render_mentions(title, table, prog):
    if not table:
        return []
    out = [".SH " + title]
    for name, uses in table.items():
        out.append(".TP")
        out.append(line("\\fI%s\\fR" % esc(name) if name.startswith("~") else "\\fB%s\\fR" % esc(name)))
        for k, use in enumerate(uses):
            if k:
                out.append(".br")
            cmds = ", ".join("\\fB%s\\fR" % esc(" ".join(filter(None, (prog, c)))) if i == 0
                             else "\\fB%s\\fR" % esc(c or prog) for i, c in enumerate(use["cmds"]))
            if use["flag"]:
                text = "%s \\fB%s\\fR (%s)" % ("The default of" if use["default"] else "See",
                                             esc(use["flag"]), cmds)
                text += (": " + esc(use["desc"])) if use["desc"] else "."
            else:
                text = "%s: %s" % (cmds, esc(use["desc"]))
            out.append(line(text))
    return out


def cli_man(main_doc, docs, prog, version, date, gui_prog):
    out = header_comment(prog, version) + th(prog, version, date, prog)
    out += [".nh", ".ad l"]
    # NAME: a description line of the main help if it has one, else a fixed tag line.
    tagline = "benchmark RPC methods from the command line"
    for b in main_doc.blocks:
        if b["t"] == "para" and not b["lines"][-1].endswith(":") and not b["lines"][0].startswith(
                ("Run ", "Exit codes")):
            tagline = b["lines"][0].rstrip(".")
            break
    out += [".SH NAME", "%s \\- %s" % (esc(prog), esc(tagline))]
    out += [".SH SYNOPSIS"]
    for u in main_doc.usage_lines():
        out += synopsis(u, prog)
    for name, doc in docs:
        for u in doc.usage_lines():
            out += synopsis(u, prog, name)
    out += [".nh"]   # .YS turns hyphenation back on
    # DESCRIPTION: the main help but its usage and exit codes.
    exit_block = None
    for b in main_doc.blocks:
        if b["t"] == "para" and exit_codes(b["lines"]):
            exit_block = b
    skip = {id(b) for b in main_doc.blocks if b["t"] == "usage"}
    if exit_block:
        skip.add(id(exit_block))
    out += [".SH DESCRIPTION"] + render_blocks(main_doc.blocks, skip)
    out += [".SH COMMANDS"]
    for name, doc in docs:
        out += [".SS %s" % esc(name)] + render_blocks(doc.blocks, prog=prog, cmd=name)
    out += [".SH \"EXIT STATUS\""]
    if exit_block:
        for code, text in exit_codes(exit_block["lines"]):
            out += [".TP", "\\fB%s\\fR" % code, line(esc(text))]
    for name, doc in docs:
        for b in doc.blocks:
            codes = b["t"] == "para" and exit_codes(b["lines"])
            if codes:
                out += [".PP", line("\\fB%s %s\\fR:" % (esc(prog), esc(name)))]
                for code, text in codes:
                    out += [".TP", "\\fB%s\\fR" % code, line(esc(text))]
    env, files = find_mentions([(None, main_doc)] + docs, prog)
    out += render_mentions("ENVIRONMENT", env, prog)
    out += render_mentions("FILES", files, prog)
    out += [".SH \"SEE ALSO\"", ".BR %s (1)" % esc(gui_prog)]
    return "\n".join(out) + "\n"


def gui_man(doc, prog, version, date, cli_prog):
    out = header_comment(prog, version) + th(prog, version, date, prog)
    out += [".nh", ".ad l"]
    tagline = None
    for b in doc.blocks:
        if b["t"] == "para":
            m = re.match(r"%s:\s*(.*)" % re.escape(prog), b["lines"][0])
            if m:
                tagline = m.group(1).rstrip(".")
                break
    if not tagline:
        raise GenError("`%s --help` has no \"%s: description\" line for the NAME section" % (prog, prog))
    out += [".SH NAME", "%s \\- %s" % (esc(prog), esc(tagline))]
    out += [".SH SYNOPSIS"]
    for u in doc.usage_lines():
        out += synopsis(u, prog)
    out += [".nh"]   # .YS turns hyphenation back on
    desc, opts, args = [], [], []
    for k, b in enumerate(doc.blocks):
        if b["t"] == "usage":
            continue
        nxt = doc.blocks[k + 1] if k + 1 < len(doc.blocks) else None
        if b["t"] == "para" and b["lines"] == [(nxt or {}).get("header")]:
            continue   # a list's header: the list goes to its own section
        if b["t"] == "list" and b.get("header") == "Options:":
            opts.append(b)
        elif b["t"] == "list" and b.get("header") == "Arguments:":
            args.append(b)
        else:
            desc.append(b)
    out += [".SH DESCRIPTION"] + render_blocks(desc)
    if args:
        out += [".PP", "Arguments:"] + render_blocks(args)
    if opts:
        out += [".SH OPTIONS"] + render_blocks(opts)
    env, files = find_mentions([(None, doc)], prog)
    out += render_mentions("ENVIRONMENT", env, prog)
    out += render_mentions("FILES", files, prog)
    out += [".SH \"SEE ALSO\"", ".BR %s (1)" % esc(cli_prog)]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# bash


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def bash_kind(kind):
    if kind[0] == "words":
        return "words:" + " ".join(kind[1])
    if kind[0] == "ext":
        return "ext:" + " ".join(kind[1])
    return kind[0]


BASH_HELPERS = r'''
# __P_words: COMP_WORDS/COMP_CWORD as words/cword, with "--flag" "=" "value"
# (split by COMP_WORDBREAKS) joined back into one word.
__P_words()
{
    words=() cword=0
    local i j=-1 join= w
    for (( i = 0; i < ${#COMP_WORDS[@]}; i++ )); do
        w=${COMP_WORDS[i]}
        if [[ $w == = && $j -ge 0 && ${words[j]} == -* && ${words[j]} != *=* ]]; then
            words[j]="${words[j]}="
            join=1
        elif [[ -n $join ]]; then
            words[j]="${words[j]}$w"
            join=
        else
            words[++j]=$w
        fi
        if (( i == COMP_CWORD )); then cword=$j; fi
    done
    if (( COMP_CWORD >= ${#COMP_WORDS[@]} )); then
        words[++j]=
        cword=$j
    fi
}

# __P_complete KIND CUR: fill COMPREPLY for a value of kind KIND:
# none, files, dirs, ext:EXT..., words:WORD...
__P_complete()
{
    local kind=$1 cur=$2 ext IFS=$'\n'
    local -a exts
    COMPREPLY=()
    case $kind in
        none) ;;
        words:*)
            IFS=$' \t\n'
            COMPREPLY=($(compgen -W "${kind#words:}" -- "$cur"))
            ;;
        dirs)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            ;;
        ext:*)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            IFS=' ' read -r -a exts <<< "${kind#ext:}"
            IFS=$'\n'
            for ext in "${exts[@]}"; do
                COMPREPLY+=($(compgen -f -X "!*.$ext" -- "$cur"))
            done
            ;;
        *)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            ;;
    esac
}
'''


def bash_case(arms, indent):
    """case arms: [(patterns, body)] -> lines."""
    pad = " " * indent
    out = []
    for pats, body in arms:
        out.append("%s%s) %s ;;" % (pad, "|".join(pats), body))
    return out


def bash_option_table(doc):
    """(flags string, [(flag patterns, kind string)]) for one command."""
    flags = " ".join(doc.options.keys())
    by_kind = collections.OrderedDict()
    for flag, opt in doc.options.items():
        if opt["kind"]:
            by_kind.setdefault(bash_kind(opt["kind"]), []).append(flag)
    return flags, [(pats, kind) for kind, pats in by_kind.items()]


def bash_arg_kinds(doc):
    return [bash_kind(k) for k in doc.argument_kinds()]


def bash_cli(main_doc, docs, prog, version, has_version):
    fn = "_" + re.sub(r"\W", "_", prog)
    p = "_" + fn
    out = ["# bash completion for %s                                 -*- shell-script -*-" % prog,
           "# Generated by %s from the --help output of %s %s; do not edit." % (GENERATOR, prog, version),
           "# Install as /usr/share/bash-completion/completions/%s." % prog]
    out += BASH_HELPERS.replace("__P", p).split("\n")
    # flag -> kind, grouped: commands with the same table share one arm.
    tables = collections.OrderedDict()
    for name, doc in docs:
        key = repr(bash_option_table(doc))
        tables.setdefault(key, ([], bash_option_table(doc)))[0].append(name)
    out += ["# %s_kind CMD FLAG: sets REPLY to what FLAG of CMD takes: empty (no value)," % p,
            "# none (a value, not completed), files, dirs, ext:EXT..., words:WORD...",
            "%s_kind()" % p, "{", "    REPLY=", "    case $1 in"]
    for cmds, (flags, arms) in tables.values():
        out.append("        %s)" % "|".join(cmds))
        if arms:
            out.append("            case $2 in")
            out += bash_case([(pats, "REPLY=%s" % sh_quote(kind)) for pats, kind in arms], 16)
            out.append("            esac")
        out.append("            ;;")
    out += ["    esac", "}", ""]
    out += ["# %s_flags CMD: sets REPLY to the flags of CMD" % p, "%s_flags()" % p, "{", "    REPLY=",
            "    case $1 in"]
    for cmds, (flags, arms) in tables.values():
        out.append("        %s) REPLY=%s ;;" % ("|".join(cmds), sh_quote(flags)))
    out += ["    esac", "}", ""]
    out += ["# %s_args CMD N: sets REPLY to the kind of CMD's positional argument N (from 0)" % p,
            "%s_args()" % p, "{", "    local -a kinds=(files)", "    case $1 in"]
    arg_arms = collections.OrderedDict()
    for name, doc in docs:
        kinds = bash_arg_kinds(doc)
        if kinds != ["files"]:
            arg_arms.setdefault(tuple(kinds), []).append(name)
    for kinds, cmds in arg_arms.items():
        out.append("        %s) kinds=(%s) ;;" % ("|".join(cmds), " ".join(sh_quote(k) for k in kinds)))
    out += ["    esac",
            "    if (( $2 < ${#kinds[@]} )); then REPLY=${kinds[$2]}; else REPLY=${kinds[${#kinds[@]}-1]}; fi",
            "}", ""]
    commands = " ".join(name for name, _ in docs)
    top_flags = "--help" + (" --version" if has_version else "")
    out += [
        "%s()" % fn,
        "{",
        "    local cur prev cmd i w n=0 skip= IFS=$' \\t\\n'",
        "    local -a words",
        "    local cword",
        "    %s_words" % p,
        "    cur=${words[cword]}",
        "    COMPREPLY=()",
        "    if (( cword <= 1 )); then",
        "        if [[ $cur == -* ]]; then",
        "            COMPREPLY=($(compgen -W %s -- \"$cur\"))" % sh_quote(top_flags),
        "        else",
        "            COMPREPLY=($(compgen -W %s -- \"$cur\"))" % sh_quote(commands),
        "        fi",
        "        return 0",
        "    fi",
        "    cmd=${words[1]}",
        "    if [[ $cur == -*=* ]]; then",
        "        %s_kind \"$cmd\" \"${cur%%%%=*}\"" % p,
        "        [[ -n $REPLY ]] || return 0",
        "        %s_complete \"$REPLY\" \"${cur#*=}\"" % p,
        "        if [[ $COMP_WORDBREAKS != *=* ]]; then",
        "            COMPREPLY=(\"${COMPREPLY[@]/#/${cur%%%%=*}=}\")",
        "        fi",
        "        return 0",
        "    fi",
        "    prev=${words[cword-1]}",
        "    if [[ $prev == -* && $prev != *=* ]]; then",
        "        %s_kind \"$cmd\" \"$prev\"" % p,
        "        if [[ -n $REPLY ]]; then",
        "            %s_complete \"$REPLY\" \"$cur\"" % p,
        "            return 0",
        "        fi",
        "    fi",
        "    if [[ $cur == -* ]]; then",
        "        %s_flags \"$cmd\"" % p,
        "        COMPREPLY=($(compgen -W \"$REPLY\" -- \"$cur\"))",
        "        return 0",
        "    fi",
        "    # a positional argument: count those before it, skipping the options' values",
        "    for (( i = 2; i < cword; i++ )); do",
        "        w=${words[i]}",
        "        if [[ -n $skip ]]; then skip=; continue; fi",
        "        if [[ $w == -?* ]]; then",
        "            if [[ $w != *=* ]]; then",
        "                %s_kind \"$cmd\" \"$w\"" % p,
        "                [[ -n $REPLY ]] && skip=1",
        "            fi",
        "            continue",
        "        fi",
        "        (( n++ ))",
        "    done",
        "    %s_args \"$cmd\" \"$n\"" % p,
        "    %s_complete \"$REPLY\" \"$cur\"" % p,
        "    return 0",
        "}",
        "complete -F %s %s" % (fn, prog),
        "",
        "# ex: filetype=sh",
    ]
    return "\n".join(out) + "\n"


def bash_gui(doc, prog, version):
    fn = "_" + re.sub(r"\W", "_", prog)
    p = "_" + fn
    flags, arms = bash_option_table(doc)
    kinds = bash_arg_kinds(doc)
    out = ["# bash completion for %s                                 -*- shell-script -*-" % prog,
           "# Generated by %s from the --help output of %s %s; do not edit." % (GENERATOR, prog, version),
           "# Install as /usr/share/bash-completion/completions/%s." % prog]
    out += BASH_HELPERS.replace("__P", p).split("\n")
    out += ["# %s_kind FLAG: sets REPLY to what FLAG takes (see %s_complete; empty: no value)" % (p, p),
            "%s_kind()" % p, "{", "    REPLY=", "    case $1 in"]
    out += bash_case([(pats, "REPLY=%s" % sh_quote(kind)) for pats, kind in arms], 8)
    out += ["    esac", "}", ""]
    out += [
        "%s()" % fn,
        "{",
        "    local cur prev i w n=0 skip= IFS=$' \\t\\n'",
        "    local -a words kinds=(%s)" % " ".join(sh_quote(k) for k in kinds),
        "    local cword",
        "    %s_words" % p,
        "    cur=${words[cword]}",
        "    COMPREPLY=()",
        "    if [[ $cur == -*=* ]]; then",
        "        %s_kind \"${cur%%%%=*}\"" % p,
        "        [[ -n $REPLY ]] || return 0",
        "        %s_complete \"$REPLY\" \"${cur#*=}\"" % p,
        "        if [[ $COMP_WORDBREAKS != *=* ]]; then",
        "            COMPREPLY=(\"${COMPREPLY[@]/#/${cur%%%%=*}=}\")",
        "        fi",
        "        return 0",
        "    fi",
        "    prev=${words[cword-1]}",
        "    if (( cword > 1 )) && [[ $prev == -* && $prev != *=* ]]; then",
        "        %s_kind \"$prev\"" % p,
        "        if [[ -n $REPLY ]]; then",
        "            %s_complete \"$REPLY\" \"$cur\"" % p,
        "            return 0",
        "        fi",
        "    fi",
        "    if [[ $cur == -* ]]; then",
        "        COMPREPLY=($(compgen -W %s -- \"$cur\"))" % sh_quote(flags),
        "        return 0",
        "    fi",
        "    for (( i = 1; i < cword; i++ )); do",
        "        w=${words[i]}",
        "        if [[ -n $skip ]]; then skip=; continue; fi",
        "        if [[ $w == -?* ]]; then",
        "            if [[ $w != *=* ]]; then",
        "                %s_kind \"$w\"" % p,
        "                [[ -n $REPLY ]] && skip=1",
        "            fi",
        "            continue",
        "        fi",
        "        (( n++ ))",
        "    done",
        "    if (( n >= ${#kinds[@]} )); then n=$(( ${#kinds[@]} - 1 )); fi",
        "    %s_complete \"${kinds[n]}\" \"$cur\"" % p,
        "    return 0",
        "}",
        "complete -F %s %s" % (fn, prog),
        "",
        "# ex: filetype=sh",
    ]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# zsh


def zsh_desc(text, limit=100):
    """A one-line description: the first sentence, shortened at a word."""
    s = re.sub(r"\s+", " ", first_sentence(text or "")).strip().rstrip(".")
    if len(s) > limit:
        s = s[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "..."
    return s


def zsh_action(kind):
    if kind[0] == "words":
        return "(%s)" % " ".join(kind[1])
    if kind[0] == "dirs":
        return "_files -/"
    if kind[0] == "ext":
        pat = kind[1][0] if len(kind[1]) == 1 else "(%s)" % "|".join(kind[1])
        return '_files -g "*.%s(-.)"' % pat
    if kind[0] == "none":
        return " "
    return "_files"


def zsh_spec_text(s):
    """Escape text for inside an _arguments [description]."""
    return s.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def zsh_option_specs(doc):
    specs = []
    for flag, opt in doc.options.items():
        aliases = [a for a in opt["aliases"] if a in doc.options]
        prefix = ""
        if opt["repeatable"]:
            prefix = "*"
        elif len(aliases) > 1:
            prefix = "(%s)" % " ".join(aliases)
        desc = zsh_desc(opt["desc"]) or (("takes " + opt["meta"]) if opt["meta"] else flag)
        spec = "%s%s[%s]" % (prefix, flag, zsh_spec_text(desc))
        if opt["kind"]:
            msg = re.sub(r"[^\w -]", " ", (opt["meta"] or "value").strip("<>").lower()).strip() or "value"
            msg = re.sub(r"\s+", " ", msg)
            spec += ":%s:%s" % (msg, zsh_action(opt["kind"]))
        specs.append(spec)
    return specs


def zsh_arg_specs(doc, fn):
    kinds = doc.argument_kinds()
    specs = []
    if doc.subcommands:
        specs.append("1:subcommand:%s_%s_subcommands" % (fn, doc.name))
        specs.append("*:file:_files")
        return specs
    names = [a for a, _ in doc.arguments] or ["file"]
    for k, kind in enumerate(kinds):
        msg = re.sub(r"[^\w -]", " ", names[min(k, len(names) - 1)]).strip() or "argument"
        last = k == len(kinds) - 1
        specs.append("%s:%s:%s" % ("*" if last else str(k + 1), msg, zsh_action(kind)))
    return specs


def zsh_describe_list(var, items):
    out = ["  local -a %s" % var, "  %s=(" % var]
    for name, desc in items:
        out.append("    %s" % sh_quote("%s:%s" % (name.replace(":", "\\:"), zsh_desc(desc).replace(":", "\\:"))))
    out.append("  )")
    return out


def zsh_arguments(specs, indent, extra="&& ret=0"):
    pad = " " * indent
    out = [pad + "_arguments -S \\"]
    for s in specs:
        out.append(pad + "  %s \\" % sh_quote(s))
    out[-1] = (out[-1][:-2] + " " + extra).rstrip()
    return out


def zsh_cli(main_doc, docs, prog, version, has_version):
    fn = "_" + prog
    out = ["#compdef %s" % prog,
           "# zsh completion for %s." % prog,
           "# Generated by %s from the --help output of %s %s; do not edit." % (GENERATOR, prog, version),
           "# Install as _%s in a directory of $fpath (e.g. /usr/share/zsh/vendor-completions)." % prog,
           ""]
    for name, doc in docs:
        if doc.subcommands:
            out += ["%s_%s_subcommands() {" % (fn, name)]
            out += zsh_describe_list("subcommands", doc.subcommands)
            out += ["  _describe -t subcommands %s subcommands" % sh_quote("%s %s subcommand" % (prog, name)),
                    "}", ""]
    commands = []
    for b in main_doc.blocks:
        if b["t"] == "list" and b.get("header") == "Commands:":
            commands = [(e["term"], entry_text(e)) for e in b["entries"]]
    top = ["(- *)--help[show the commands]"]
    if has_version:
        top.append("(- *)--version[show the version]")
    top += ["1:command:->command", "*::argument:->argument"]
    out += ["%s() {" % fn,
            "  local curcontext=$curcontext state state_descr line ret=1",
            "  typeset -A opt_args",
            ""]
    top_lines = zsh_arguments(top, 2)
    top_lines[0] = top_lines[0].replace("_arguments -S", "_arguments -C")
    out += top_lines
    out += ["",
            "  case $state in",
            "    (command)"]
    out += ["    " + l for l in zsh_describe_list("commands", commands)]
    out += ["      _describe -t commands %s commands && ret=0" % sh_quote(prog + " command"),
            "      ;;",
            "    (argument)",
            "      curcontext=${curcontext%%:*:*}:%s-$words[1]:" % prog,
            "      case $words[1] in"]
    arms = collections.OrderedDict()
    for name, doc in docs:
        specs = zsh_option_specs(doc) + zsh_arg_specs(doc, fn)
        arms.setdefault(tuple(specs), []).append(name)
    for specs, names in arms.items():
        out.append("        (%s)" % "|".join(names))
        out += zsh_arguments(list(specs), 10)
        out.append("          ;;")
    out += ["        (*)",
            "          _default && ret=0",
            "          ;;",
            "      esac",
            "      ;;",
            "  esac",
            "  return ret",
            "}",
            "",
            '%s "$@"' % fn]
    return "\n".join(out) + "\n"


def zsh_gui(doc, prog, version):
    fn = "_" + prog
    out = ["#compdef %s" % prog,
           "# zsh completion for %s." % prog,
           "# Generated by %s from the --help output of %s %s; do not edit." % (GENERATOR, prog, version),
           "# Install as _%s in a directory of $fpath (e.g. /usr/share/zsh/vendor-completions)." % prog,
           "",
           "%s() {" % fn]
    out += zsh_arguments(zsh_option_specs(doc) + zsh_arg_specs(doc, fn), 2, "")
    out += ["}", "", '%s "$@"' % fn]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="the rpcscope-cli binary")
    ap.add_argument("--gui", required=True, help="the rpcscope binary (run with QT_QPA_PLATFORM=offscreen)")
    ap.add_argument("--version", required=True, help="version for the man pages' .TH, e.g. 0.1.0")
    ap.add_argument("--date", required=True, help="date for the man pages' .TH, YYYY-MM-DD")
    ap.add_argument("--out", required=True, help="output directory (man/ and completions/ go in it)")
    args = ap.parse_args(argv)
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date):
        ap.error("--date must be YYYY-MM-DD, not %r" % args.date)
    if not re.fullmatch(r"[\w.+~-]+", args.version):
        ap.error("--version must be a plain version string, not %r" % args.version)

    cli_prog = os.path.basename(args.cli)
    gui_prog = os.path.basename(args.gui)

    main_doc = CommandDoc(None, read_help(args.cli, ["--help"]), cli_prog)
    commands = []
    for b in main_doc.blocks:
        if b["t"] == "list" and b.get("header") == "Commands:":
            commands = [e["term"] for e in b["entries"]]
    if not commands:
        raise GenError("found no \"Commands:\" list in `%s --help`" % args.cli)
    for c in commands:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", c):
            raise GenError("`%s --help` lists a command named %r, which is not a plain word" % (args.cli, c))
    docs = []
    for c in commands:
        doc = CommandDoc(c, read_help(args.cli, [c, "--help"]), cli_prog)
        doc.analyse()
        if not doc.options and not doc.usage_lines():
            raise GenError("could not read any option or usage from `%s %s --help`" % (args.cli, c))
        docs.append((c, doc))
    by_name = dict(docs)
    for c, doc in docs:
        if doc.inherits_run() and "run" in by_name:
            doc.inherit(by_name["run"])
        doc.finish()

    gui_doc = CommandDoc(None, read_help(args.gui, ["--help"], gui=True), gui_prog)
    gui_doc.analyse()
    gui_doc.finish()
    if not gui_doc.options:
        raise GenError("found no \"Options:\" in `%s --help`" % args.gui)

    cli_has_version = check_version(args.cli, args.version, False)
    check_version(args.gui, args.version, True)

    # Everything is generated before anything is written: no half-updated output on an error.
    outputs = [
        (("man", cli_prog + ".1"), cli_man(main_doc, docs, cli_prog, args.version, args.date, gui_prog)),
        (("man", gui_prog + ".1"), gui_man(gui_doc, gui_prog, args.version, args.date, cli_prog)),
        (("completions", "bash", cli_prog), bash_cli(main_doc, docs, cli_prog, args.version, cli_has_version)),
        (("completions", "bash", gui_prog), bash_gui(gui_doc, gui_prog, args.version)),
        (("completions", "zsh", "_" + cli_prog), zsh_cli(main_doc, docs, cli_prog, args.version, cli_has_version)),
        (("completions", "zsh", "_" + gui_prog), zsh_gui(gui_doc, gui_prog, args.version)),
    ]
    for parts, text in outputs:
        write(os.path.join(args.out, *parts), text)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except GenError as exc:
        print("%s: error: %s" % (os.path.basename(sys.argv[0]), exc), file=sys.stderr)
        sys.exit(1)
