"""What the help says: a command's options, positional arguments and subcommands, and how
each value is completed (its "kind")."""

import collections
import os
import re

from .common import GenError
from .helptext import entry_text, is_option_term, parse_blocks, read_help

# A literal value in a help text: grpc, csv-histogram, p50, per-block.
VALUE_RE = re.compile(r"[a-z][a-z0-9-]*")
# An option as written in help: -c, --import-paths, --skipTLS.
FLAG_RE = re.compile(r"--?[A-Za-z][A-Za-z0-9_-]*")
# How a help names the built-in bench schema: "uses the bundled bench proto unless --proto",
# "(default: the built-in bench service)".
BENCH_SCHEMA_RE = re.compile(r"\bbench (?:proto|schema|service)\b")


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
    ('ext', [...]), ('none',) or None when it takes no value.  (A METHOD is 'none' here:
    CommandDoc.use_method_lister may complete it.)"""
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

    def bench_schema(self, lister):
        """Where a method comes from when the line has none of LISTER's schema options (no
        --proto or --protoset): "default" when this command's schema option defaults to the
        built-in bench schema (codecs), the flag that selects that schema (run's --builtin), or
        None: a server's reflection, which completion does not ask."""
        for flag, opt in self.options.items():
            if BENCH_SCHEMA_RE.search(opt["desc"] or ""):
                if flag in lister.schema_flags:
                    return "default"
                if opt["meta"] is None:
                    return flag
        return None

    def use_method_lister(self, lister):
        """Complete a METHOD value (--call) with the methods LISTER prints for the schema the line
        names: kind ('methods', bench_schema())."""
        for opt in self.options.values():
            if opt["meta"] and opt["meta"].strip("<>[]").rstrip(".") == "METHOD":
                opt["kind"] = ("methods", self.bench_schema(lister))

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
# A binary's help as a whole


class MethodLister:
    """The command that prints a schema's methods one per line as --call takes them
    (rpcscope-cli methods), which completion runs with the schema options of the line."""

    def __init__(self, doc):
        self.command = doc.name
        # its options that take a value, passed on from the line: --proto -i --import-paths --protoset
        self.flags = [flag for flag, opt in doc.options.items() if opt["kind"]]
        # those that name a schema rather than a folder to import from: --proto --protoset
        self.schema_flags = [flag for flag in self.flags if doc.options[flag]["kind"] != ("dirs",)]


class CliHelp:
    """The command-line binary's help: its main help and every command's."""

    def __init__(self, prog, main, commands):
        self.prog = prog             # the binary's name: rpcscope-cli
        self.main = main             # CommandDoc of `rpcscope-cli --help` (name None)
        self.commands = commands     # [(name, CommandDoc)] in the order of "Commands:"
        self.method_lister = None    # MethodLister, when a command lists methods

    def find_method_lister(self):
        """The command whose summary says it lists methods as --call takes them, as a MethodLister."""
        docs = dict(self.commands)
        for name, summary in self.command_summaries():
            if re.search(r"\bmethods\b", summary) and re.search(r"(?<![\w-])--call\b", summary):
                return MethodLister(docs[name])
        return None

    def command_summaries(self):
        """[(name, description)] from the main help's "Commands:" list."""
        for b in self.main.blocks:
            if b["t"] == "list" and b.get("header") == "Commands:":
                return [(e["term"], entry_text(e)) for e in b["entries"]]
        return []


def read_cli(binary):
    """Run `BINARY --help` and `BINARY COMMAND --help` for every command it lists; a CliHelp."""
    prog = os.path.basename(binary)
    main = CommandDoc(None, read_help(binary, ["--help"]), prog)
    cli = CliHelp(prog, main, [])
    names = [name for name, _ in cli.command_summaries()]
    if not names:
        raise GenError("found no \"Commands:\" list in `%s --help`" % binary)
    for c in names:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", c):
            raise GenError("`%s --help` lists a command named %r, which is not a plain word" % (binary, c))
    for c in names:
        doc = CommandDoc(c, read_help(binary, [c, "--help"]), prog)
        doc.analyse()
        if not doc.options and not doc.usage_lines():
            raise GenError("could not read any option or usage from `%s %s --help`" % (binary, c))
        cli.commands.append((c, doc))
    by_name = dict(cli.commands)
    for c, doc in cli.commands:
        if doc.inherits_run() and "run" in by_name:
            doc.inherit(by_name["run"])
        doc.finish()
    cli.method_lister = cli.find_method_lister()
    if cli.method_lister:
        for c, doc in cli.commands:
            doc.use_method_lister(cli.method_lister)
    return cli


def read_gui(binary):
    """Run the GUI's --help (QT_QPA_PLATFORM=offscreen); its CommandDoc."""
    doc = CommandDoc(None, read_help(binary, ["--help"], gui=True), os.path.basename(binary))
    doc.analyse()
    doc.finish()
    if not doc.options:
        raise GenError("found no \"Options:\" in `%s --help`" % binary)
    return doc
