"""The bash completion scripts (for bash-completion's completions directory).

A script is one completion function (_rpcscope_cli) over a few helpers that share its prefix
(__rpcscope_cli_words, ..._complete, ...): tables say what each option's value and each
positional argument is (a kind string, see bash_kind), and ..._complete completes a value of a
kind.  Only bash builtins and compgen are used, so the script works without bash-completion."""

import collections
import re

from .common import GENERATOR, fill, method_lister_holes, sh_quote


def bash_kind(kind):
    """A model kind as the scripts write it: none, files, dirs, ext:EXT..., words:WORD...,
    methods or methods:BENCH (see BASH_METHODS)."""
    if kind[0] == "words":
        return "words:" + " ".join(kind[1])
    if kind[0] == "ext":
        return "ext:" + " ".join(kind[1])
    if kind[0] == "methods":
        return "methods:" + kind[1] if kind[1] else "methods"
    return kind[0]


# The helpers every script has.  @P@ is their prefix; @MORE_KINDS@ and @MORE_ARMS@ are what the
# script's kinds add to @P@_complete (the methods ones, for a schema's methods).
BASH_HELPERS = r"""
# @P@_words: COMP_WORDS/COMP_CWORD as words/cword, with "--flag" "=" "value"
# (split by COMP_WORDBREAKS) joined back into one word.
@P@_words()
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

# @P@_complete KIND CUR: fill COMPREPLY for a value of kind KIND:
# none, files, dirs, ext:EXT..., words:WORD...@MORE_KINDS@
@P@_complete()
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
@MORE_ARMS@
        *)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            ;;
    esac
}
"""

BASH_METHODS_ARMS = r"""
        methods) @P@_methods '' "$cur" ;;
        methods:*) @P@_methods "${kind#methods:}" "$cur" ;;
"""

# What completes a METHOD (--call): the methods the method lister (rpcscope-cli methods) prints
# for the schema options on the line.  A method name (package.Service/Method) has none of the
# characters of COMP_WORDBREAKS (':', '=', ...), so CUR is all of it that is typed.
BASH_METHODS = r"""
# @P@_methods BENCH CUR: fill COMPREPLY with the methods of the schema the line names,
# as `@PROG@ @LISTER@` prints them for the line's @FLAGS_TEXT@
# (run as the line's @PROG@, for at most 5 s).  With no @SCHEMA_TEXT@ on the
# line the schema is the built-in bench one when BENCH is "default" or an option the line has
# (--builtin); else it is a server's (reflection) and nothing is offered.
# Uses its caller's words and cword.
@P@_methods()
{
    local bench=$1 cur=$2 schema= i w flag value prog out method REPLY
    local -a args run
    if [[ $bench == default ]]; then schema=1; fi
    for (( i = 2; i < cword; i++ )); do
        w=${words[i]}
        case $w in
            @FLAGS@)
                flag=$w value=${words[i+1]}
                (( ++i < cword )) || break
                ;;
            @FLAGS_EQ@)
                flag=${w%%=*} value=${w#*=}
                ;;
            *)
                if [[ -n $bench && $w == "$bench" ]]; then schema=1; fi
                continue
                ;;
        esac
        case $flag in
            @SCHEMA_FLAGS@) schema=1 ;;
        esac
        @P@_dequote "$value"
        args+=("$flag" "$REPLY")
    done
    if [[ -z $schema ]]; then return 0; fi
    @P@_dequote "${words[0]}"
    prog=$REPLY
    if type -P timeout >/dev/null; then run=(timeout 5); fi
    out=$("${run[@]}" "$prog" @LISTER@ "${args[@]}" 2>/dev/null </dev/null) || return 0
    while IFS= read -r method; do
        if [[ -n $method && $method == "$cur"* ]]; then COMPREPLY+=("$method"); fi
    done <<< "$out"
}

# @P@_dequote WORD: sets REPLY to WORD as the shell would pass it when its quoting is plain:
# \x, '...', "..." and a leading ~ or ~/ (no $ or ` expansion).
@P@_dequote()
{
    local w=$1 c q= k
    REPLY=
    if [[ $w == \~ || $w == \~/* ]]; then w=$HOME${w:1}; fi
    for (( k = 0; k < ${#w}; k++ )); do
        c=${w:k:1}
        if [[ $q == "'" ]]; then
            if [[ $c == "'" ]]; then q=; else REPLY+=$c; fi
        elif [[ $c == \\ && ( -z $q || ${w:k+1:1} == [\"\\\$\`] ) ]]; then
            REPLY+=${w:k+1:1}
            (( k++ ))
        elif [[ $c == "'" && -z $q ]]; then
            q=$c
        elif [[ $c == '"' ]]; then
            if [[ -n $q ]]; then q=; else q=$c; fi
        else
            REPLY+=$c
        fi
    done
}
"""


# The start of the main function @FN@: its variables (@LOCALS@ and the arrays @ARRAYS@), the
# words of the line (words, cword) and the current one (cur).
BASH_MAIN_START = r"""
@FN@()
{
    local @LOCALS@ IFS=$' \t\n'
    local -a @ARRAYS@
    local cword
    @P@_words
    cur=${words[cword]}
    COMPREPLY=()
"""

# The main function's part that completes an option's value: --flag=VALUE as the current word,
# or VALUE after --flag.  @KIND@ is the call that sets REPLY to a flag's kind, @PREV_GUARD@ any
# condition on the previous word being an option at all.
BASH_OPTION_VALUE = r"""
    if [[ $cur == -*=* ]]; then
        @KIND@ "${cur%%=*}"
        [[ -n $REPLY ]] || return 0
        @P@_complete "$REPLY" "${cur#*=}"
        if [[ $COMP_WORDBREAKS != *=* ]]; then
            COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
        fi
        return 0
    fi
    prev=${words[cword-1]}
    if @PREV_GUARD@[[ $prev == -* && $prev != *=* ]]; then
        @KIND@ "$prev"
        if [[ -n $REPLY ]]; then
            @P@_complete "$REPLY" "$cur"
            return 0
        fi
    fi
"""

# The main function's loop that sets n to the number of positional arguments before the current
# word, from word @FIRST@ on, skipping the options and their values.
BASH_COUNT_POSITIONALS = r"""
    for (( i = @FIRST@; i < cword; i++ )); do
        w=${words[i]}
        if [[ -n $skip ]]; then skip=; continue; fi
        if [[ $w == -?* ]]; then
            if [[ $w != *=* ]]; then
                @KIND@ "$w"
                [[ -n $REPLY ]] && skip=1
            fi
            continue
        fi
        (( n++ ))
    done
"""


def bash_helpers(p, prog, lister=None):
    """The helpers' lines; with LISTER (a model.MethodLister), those completing methods too."""
    if not lister:
        return [""] + fill(BASH_HELPERS, P=p, MORE_KINDS="", MORE_ARMS="") + [""]
    out = [""] + fill(BASH_HELPERS, P=p, MORE_KINDS=", methods[:BENCH]",
                      MORE_ARMS="\n".join(fill(BASH_METHODS_ARMS, P=p)))
    out += [""] + fill(BASH_METHODS, P=p, PROG=prog, **method_lister_holes(lister))
    return out + [""]


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


def bash_header(prog, version):
    return ["# bash completion for %s                                 -*- shell-script -*-" % prog,
            "# Generated by %s from the --help output of %s %s; do not edit." % (GENERATOR, prog, version),
            "# Install as /usr/share/bash-completion/completions/%s." % prog]


def bash_footer(fn, prog):
    """The end of the completion function FN, and its registration for PROG."""
    return ["}", "complete -F %s %s" % (fn, prog), "", "# ex: filetype=sh"]


def bash_cli(cli, version, has_version):
    docs, prog = cli.commands, cli.prog
    fn = "_" + re.sub(r"\W", "_", prog)
    p = "_" + fn
    out = bash_header(prog, version) + bash_helpers(p, prog, cli.method_lister)
    # flag -> kind, grouped: commands with the same table share one arm.
    tables = collections.OrderedDict()
    for name, doc in docs:
        key = repr(bash_option_table(doc))
        tables.setdefault(key, ([], bash_option_table(doc)))[0].append(name)
    out += ["# %s_kind CMD FLAG: sets REPLY to what FLAG of CMD takes: empty (no value)," % p,
            "# none (a value, not completed), files, dirs, ext:EXT..., words:WORD...%s"
            % (", methods[:BENCH]" if cli.method_lister else ""),
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
    kind = '%s_kind "$cmd"' % p
    out += fill(BASH_MAIN_START, FN=fn, P=p, LOCALS="cur prev cmd i w n=0 skip=", ARRAYS="words")
    out += [
        "    if (( cword <= 1 )); then",
        "        if [[ $cur == -* ]]; then",
        "            COMPREPLY=($(compgen -W %s -- \"$cur\"))" % sh_quote(top_flags),
        "        else",
        "            COMPREPLY=($(compgen -W %s -- \"$cur\"))" % sh_quote(commands),
        "        fi",
        "        return 0",
        "    fi",
        "    cmd=${words[1]}",
    ]
    out += fill(BASH_OPTION_VALUE, P=p, KIND=kind, PREV_GUARD="")
    out += [
        "    if [[ $cur == -* ]]; then",
        "        %s_flags \"$cmd\"" % p,
        "        COMPREPLY=($(compgen -W \"$REPLY\" -- \"$cur\"))",
        "        return 0",
        "    fi",
        "    # a positional argument: count those before it, skipping the options' values",
    ]
    out += fill(BASH_COUNT_POSITIONALS, P=p, KIND=kind, FIRST="2")
    out += [
        "    %s_args \"$cmd\" \"$n\"" % p,
        "    %s_complete \"$REPLY\" \"$cur\"" % p,
        "    return 0",
    ]
    out += bash_footer(fn, prog)
    return "\n".join(out) + "\n"


def bash_gui(doc, prog, version):
    fn = "_" + re.sub(r"\W", "_", prog)
    p = "_" + fn
    flags, arms = bash_option_table(doc)
    kinds = bash_arg_kinds(doc)
    out = bash_header(prog, version) + bash_helpers(p, prog)
    out += ["# %s_kind FLAG: sets REPLY to what FLAG takes (see %s_complete; empty: no value)" % (p, p),
            "%s_kind()" % p, "{", "    REPLY=", "    case $1 in"]
    out += bash_case([(pats, "REPLY=%s" % sh_quote(kind)) for pats, kind in arms], 8)
    out += ["    esac", "}", ""]
    kind = "%s_kind" % p
    out += fill(BASH_MAIN_START, FN=fn, P=p, LOCALS="cur prev i w n=0 skip=",
                ARRAYS="words kinds=(%s)" % " ".join(sh_quote(k) for k in kinds))
    out += fill(BASH_OPTION_VALUE, P=p, KIND=kind, PREV_GUARD="(( cword > 1 )) && ")
    out += [
        "    if [[ $cur == -* ]]; then",
        "        COMPREPLY=($(compgen -W %s -- \"$cur\"))" % sh_quote(flags),
        "        return 0",
        "    fi",
    ]
    out += fill(BASH_COUNT_POSITIONALS, P=p, KIND=kind, FIRST="1")
    out += [
        "    if (( n >= ${#kinds[@]} )); then n=$(( ${#kinds[@]} - 1 )); fi",
        "    %s_complete \"${kinds[n]}\" \"$cur\"" % p,
        "    return 0",
    ]
    out += bash_footer(fn, prog)
    return "\n".join(out) + "\n"
