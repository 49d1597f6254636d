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
  * METHOD (--call) -> what the command that lists methods (`rpcscope-cli
    methods`, known by its summary) prints for the schema options on the line
    (its own: --proto, --protoset, -i, --import-paths).  It is run when the
    line has --proto or --protoset, or the option that the help says selects
    the built-in bench schema (run's --builtin), or when that schema is the
    command's default (codecs); otherwise the schema is a server's (by
    reflection) and nothing is offered;
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

This file is the command line; the work is done by the package gendocs/ beside
it: helptext (running the binaries, help text into blocks), model (what the
blocks say about commands, options and values), manpage, bash and zsh.
"""

import argparse
import os
import re
import sys

from gendocs.bash import bash_cli, bash_gui
from gendocs.common import GenError
from gendocs.helptext import check_version
from gendocs.manpage import cli_man, gui_man
from gendocs.model import read_cli, read_gui
from gendocs.zsh import zsh_cli, zsh_gui


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


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

    cli = read_cli(args.cli)
    gui = read_gui(args.gui)
    cli_prog, gui_prog = cli.prog, os.path.basename(args.gui)
    cli_has_version = check_version(args.cli, args.version, False)
    check_version(args.gui, args.version, True)

    # Everything is generated before anything is written: no half-updated output on an error.
    outputs = [
        (("man", cli_prog + ".1"), cli_man(cli, args.version, args.date, gui_prog)),
        (("man", gui_prog + ".1"), gui_man(gui, gui_prog, args.version, args.date, cli_prog)),
        (("completions", "bash", cli_prog), bash_cli(cli, args.version, cli_has_version)),
        (("completions", "bash", gui_prog), bash_gui(gui, gui_prog, args.version)),
        (("completions", "zsh", "_" + cli_prog), zsh_cli(cli, args.version, cli_has_version)),
        (("completions", "zsh", "_" + gui_prog), zsh_gui(gui, gui_prog, args.version)),
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
