"""The zsh completion functions (#compdef files for a directory of $fpath)."""

import collections
import re

from .common import GENERATOR, fill, method_lister_holes, sh_quote
from .model import first_sentence


def zsh_desc(text, limit=100):
    """A one-line description: the first sentence, shortened at a word."""
    s = re.sub(r"\s+", " ", first_sentence(text or "")).strip().rstrip(".")
    if len(s) > limit:
        s = s[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "..."
    return s


# What completes a METHOD (--call): the methods the method lister (rpcscope-cli methods) prints
# for the schema options on the line.  An _arguments action that starts with a space, so that it
# is called as written, with $expl set up for compadd.  @PROG_VAR@ is the command word, which
# the main function keeps: in its "argument" state words holds only the command's own words.
ZSH_METHODS = r"""
# @FN@_methods [BENCH]: complete a method with those of the schema the line names,
# as `@PROG@ @LISTER@` prints them for the line's @FLAGS_TEXT@
# (run as the line's @PROG@, for at most 5 s).  With no @SCHEMA_TEXT@ on the
# line the schema is the built-in bench one when BENCH is "default" or an option the line has
# (--builtin); else it is a server's (reflection) and nothing is offered.
@FN@_methods() {
  local bench=$1 prog=$@PROG_VAR@ schema= i w flag value out
  local -a args run methods
  [[ $bench == default ]] && schema=1
  for (( i = 2; i < CURRENT; i++ )); do
    w=$words[i]
    case $w in
      (@FLAGS@)
        flag=$w value=$words[i+1]
        (( ++i < CURRENT )) || break
        ;;
      (@FLAGS_EQ@)
        flag=${w%%=*} value=${w#*=}
        ;;
      (*)
        [[ -n $bench && $w == "$bench" ]] && schema=1
        continue
        ;;
    esac
    case $flag in
      (@SCHEMA_FLAGS@) schema=1 ;;
    esac
    [[ $value == '~' || $value == '~/'* ]] && value=$HOME${value#\~}
    args+=("$flag" "${(Q)value}")
  done
  [[ -n $schema ]] || return 1
  [[ $prog == '~/'* ]] && prog=$HOME${prog#\~}
  (( $+commands[timeout] )) && run=(timeout 5)
  out=$($run "${(Q)prog}" @LISTER@ "${args[@]}" 2>/dev/null </dev/null) || return 1
  methods=(${(f)out})
  compadd "$expl[@]" -a methods
}
"""


def zsh_methods(fn, prog, prog_var, lister):
    return fill(ZSH_METHODS, FN=fn, PROG=prog, PROG_VAR=prog_var, **method_lister_holes(lister)) + [""]


def zsh_action(kind, fn):
    """The _arguments action completing a value of KIND; FN is the completion function's name."""
    if kind[0] == "words":
        return "(%s)" % " ".join(kind[1])
    if kind[0] == "dirs":
        return "_files -/"
    if kind[0] == "ext":
        pat = kind[1][0] if len(kind[1]) == 1 else "(%s)" % "|".join(kind[1])
        return '_files -g "*.%s(-.)"' % pat
    if kind[0] == "none":
        return " "
    if kind[0] == "methods":
        return " %s_methods%s" % (fn, " " + kind[1] if kind[1] else "")
    return "_files"


def zsh_spec_text(s):
    """Escape text for inside an _arguments [description]."""
    return s.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def zsh_option_specs(doc, fn):
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
            spec += ":%s:%s" % (msg, zsh_action(opt["kind"], fn))
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
        specs.append("%s:%s:%s" % ("*" if last else str(k + 1), msg, zsh_action(kind, fn)))
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


def zsh_header(prog, version):
    return ["#compdef %s" % prog,
            "# zsh completion for %s." % prog,
            "# Generated by %s from the --help output of %s %s; do not edit." % (GENERATOR, prog, version),
            "# Install as _%s in a directory of $fpath (e.g. /usr/share/zsh/vendor-completions)." % prog,
            ""]


def zsh_cli(cli, version, has_version):
    docs, prog = cli.commands, cli.prog
    fn = "_" + prog
    prog_var = re.sub(r"\W", "_", fn) + "_prog"
    out = zsh_header(prog, version)
    if cli.method_lister:
        out += zsh_methods(fn, prog, prog_var, cli.method_lister)
    for name, doc in docs:
        if doc.subcommands:
            out += ["%s_%s_subcommands() {" % (fn, name)]
            out += zsh_describe_list("subcommands", doc.subcommands)
            out += ["  _describe -t subcommands %s subcommands" % sh_quote("%s %s subcommand" % (prog, name)),
                    "}", ""]
    commands = cli.command_summaries()
    top = ["(- *)--help[show the commands]"]
    if has_version:
        top.append("(- *)--version[show the version]")
    top += ["1:command:->command", "*::argument:->argument"]
    out += ["%s() {" % fn,
            "  local curcontext=$curcontext state state_descr line ret=1",
            "  typeset -A opt_args"]
    if cli.method_lister:
        out += ["  local %s=$words[1]   # the %s the line runs, for %s_methods" % (prog_var, prog, fn)]
    out += [""]
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
        specs = zsh_option_specs(doc, fn) + zsh_arg_specs(doc, fn)
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
    out = zsh_header(prog, version) + ["%s() {" % fn]
    out += zsh_arguments(zsh_option_specs(doc, fn) + zsh_arg_specs(doc, fn), 2, "")
    out += ["}", "", '%s "$@"' % fn]
    return "\n".join(out) + "\n"
