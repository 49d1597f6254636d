#!/usr/bin/env bash
# The .deb as a user gets it: packs this build with CPack (as `make package` does), checks the package (computed
# dependencies, lintian errors) and, unpacked into a temporary root, that it works with no build or source tree
# around: both binaries' version, a run on the installed bench proto, the GUI under Xvfb, the desktop entry, the
# metainfo, the MIME type, the man pages, the icons and the shell completion.
# With RPCSCOPE_TEST_INSTALL=1 (CI, as root) it also installs the package with apt and purges it again, and checks
# that nothing of it is left behind.
#   tests/packaging/test_package.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
version=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# Pack it.
cpack --config "$build/CPackConfig.cmake" -B "$work/out" > "$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/out/rpcscope_*.deb)
[[ $(basename "$deb") == "rpcscope_${version}_amd64.deb" ]] && ok "package $(basename "$deb")" \
    || fail "package named $(basename "$deb"), not rpcscope_${version}_amd64.deb"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libqt6widgets6 libgrpc++1.51 libprotobuf32 libqcustomplot2.1-qt6 qt6-qpa-plugins libqt6sql6-sqlite; do
    [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done
ok "dependencies computed: $depends"

# lintian: no errors (warnings and notes are printed, not failed on).
if command -v lintian > /dev/null; then
    lintian --no-cfg "$deb" > "$work/lintian.log" 2>&1 || true
    sed 's/^/  lintian: /' "$work/lintian.log"
    if grep -q '^E: ' "$work/lintian.log"; then fail "lintian reports errors"; else ok "lintian: no errors"; fi
else
    fail "lintian is not installed (make setup)"
fi

# Unpacked: a root of its own, no build or source tree in any installed file.
root=$work/root
dpkg-deb -x "$deb" "$root"
if grep -rlF -e "$build" -e "$source" "$root" > "$work/paths.txt"; then
    fail "paths into the build or source tree in: $(tr '\n' ' ' < "$work/paths.txt")"
else
    ok "no build or source path in the installed files"
fi
cli=$root/usr/bin/rpcscope-cli
gui=$root/usr/bin/rpcscope
export QT_QPA_PLATFORMTHEME= XDG_CONFIG_HOME=$work/config RPCSCOPE_DB=$work/runs.sqlite XDG_RUNTIME_DIR=$work/runtime
mkdir -p "$work/runtime" && chmod 700 "$work/runtime"
cli_version=$("$cli" --version)
gui_version=$(QT_QPA_PLATFORM=offscreen "$gui" --version 2> /dev/null)
[[ $cli_version == "rpcscope-cli $version "* ]] || fail "rpcscope-cli --version says \"$cli_version\""
[[ ${gui_version#rpcscope } == "${cli_version#rpcscope-cli }" ]] && ok "both say version ${cli_version#rpcscope-cli }" \
    || fail "rpcscope --version says \"$gui_version\", rpcscope-cli \"$cli_version\""

# A run against the built-in server, with the installed bench proto, found by its name from any folder (the
# installed proto folder is searched after the user's).
[[ -f $root/usr/share/rpcscope/proto/rpcscope/bench/v1/bench.proto ]] || fail "the bench proto is not installed"
if out=$(cd "$work" && "$cli" run --builtin --proto rpcscope/bench/v1/bench.proto --call rpcscope.bench.v1.Bench/Sum \
    --fill nums=100 -n 200 -c 2 --expect result=5050 --fail-on-error 2>&1) \
    && [[ $out == *"[OK]"$'\t'"200 responses"* ]]; then
    ok "run --builtin --proto rpcscope/bench/v1/bench.proto (installed): 200 OK, replies checked"
else
    fail "run --builtin on the installed proto: $out"
fi
for example in "$root"/usr/share/rpcscope/examples/*.rpcscope.json; do
    "$cli" run --scenario "$example" -n 20 > "$work/example.log" 2>&1 && ok "example $(basename "$example") runs" \
        || fail "example $(basename "$example"): $(tail -3 "$work/example.log")"
done

# The GUI, under Xvfb: it starts, draws its window, and says its version in the picture's place.
if xvfb-run -a -s "-screen 0 1600x1000x24" "$gui" --screenshot "$work/shot.png" > "$work/gui.log" 2>&1 \
    && [[ $(identify -format '%w' "$work/shot.png" 2> /dev/null || echo 0) -ge 800 ]]; then
    ok "rpcscope --screenshot under Xvfb: $(identify -format '%wx%h' "$work/shot.png")"
else
    fail "rpcscope --screenshot: $(tail -5 "$work/gui.log")"
fi

# Desktop integration.
desktop=$root/usr/share/applications/org.rpcscope.rpcscope.desktop
desktop-file-validate "$desktop" && ok "desktop entry valid" || fail "desktop-file-validate $desktop"
grep -q '^MimeType=application/x-rpcscope-scenario+json;$' "$desktop" || fail "the desktop entry takes no scenario"
metainfo=$root/usr/share/metainfo/org.rpcscope.rpcscope.metainfo.xml
appstreamcli validate --no-net "$metainfo" > "$work/appstream.log" 2>&1 && ok "metainfo valid" \
    || fail "appstreamcli validate: $(cat "$work/appstream.log")"
top=$(sed -n 's/^## \([0-9.]*\) - \([0-9-]*\)$/\1 \2/p' "$source/CHANGELOG.md" | head -1)
grep -q "<release version=\"${top% *}\" date=\"${top#* }\">" "$metainfo" \
    && [[ ${top% *} == "$version" ]] && ok "metainfo's newest release is CHANGELOG.md's, $top" \
    || fail "metainfo's releases do not start with CHANGELOG.md's $top (project version $version)"
# The MIME type: a scenario document is recognised by its name.
cp -r "$root/usr/share/mime" "$work/mime"
update-mime-database "$work/mime" 2> "$work/mime.log" || fail "update-mime-database: $(cat "$work/mime.log")"
grep -q 'application/x-rpcscope-scenario+json:\*\.rpcscope\.json' "$work/mime/globs2" \
    && ok "*.rpcscope.json is application/x-rpcscope-scenario+json" || fail "the MIME glob is not registered"
for size in 16 22 24 32 48 64 128 256; do
    png=$root/usr/share/icons/hicolor/${size}x${size}/apps/rpcscope.png
    [[ $(identify -format '%wx%h' "$png" 2> /dev/null) == "${size}x${size}" ]] || fail "icon ${size}x${size} missing or wrong"
done
[[ -f $root/usr/share/icons/hicolor/scalable/apps/rpcscope.svg ]] && ok "icons: SVG and 8 PNG sizes" || fail "no SVG icon"

# Man pages: render with no warning, every command in rpcscope-cli(1).
for page in rpcscope rpcscope-cli; do
    file=$root/usr/share/man/man1/$page.1.gz
    if LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$file" > "$work/$page.txt" 2> "$work/$page.err" \
        && [[ ! -s $work/$page.err ]]; then
        ok "man -l $page.1.gz: no warnings ($(wc -l < "$work/$page.txt") lines)"
    else
        fail "man -l $page.1.gz: $(head -5 "$work/$page.err")"
    fi
done
for command in run call matrix serve codecs methods history ab export import compare; do
    grep -q "^ *$command\b" "$work/rpcscope-cli.txt" || fail "rpcscope-cli(1) lacks the command $command"
    grep -q -- "--fail-on-error" "$work/rpcscope-cli.txt" || fail "rpcscope-cli(1) lacks run's flags"
done

# Shell completion: bash completes commands, a command's flags and --call's methods.
completion=$root/usr/share/bash-completion/completions/rpcscope-cli
for f in _rpcscope-cli _rpcscope; do
    zfile=$root/usr/share/zsh/vendor-completions/$f
    if [[ ! -f $zfile ]]; then
        fail "no zsh completion $f"
    elif ! zsh_error=$(zsh -n "$zfile" 2>&1); then
        fail "zsh completion $f does not parse: $zsh_error"
    fi
done
# compinit finds them in the package's folder and binds each to its command.
zsh_bound=$(HOME=$work zsh -f -c "fpath=('$root/usr/share/zsh/vendor-completions' \$fpath)
    autoload -Uz compinit && compinit -u -d '$work/zcompdump' && print -r -- \${_comps[rpcscope-cli]} \${_comps[rpcscope]}" 2>&1) || true
[[ $zsh_bound == "_rpcscope-cli _rpcscope" ]] && ok "zsh: both completions parse and compinit binds them to their commands" \
    || fail "zsh compinit did not bind the completions: $zsh_bound"
words=$(bash -c "source '$completion'
    complete -p rpcscope-cli > /dev/null || exit 1
    fn=\$(complete -p rpcscope-cli | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
    COMP_WORDS=(rpcscope-cli r); COMP_CWORD=1; COMP_LINE='rpcscope-cli r'; COMP_POINT=\${#COMP_LINE}
    \$fn rpcscope-cli r rpcscope-cli; echo \"\${COMPREPLY[*]}\"
    COMP_WORDS=(rpcscope-cli run --fail-on); COMP_CWORD=2; COMP_LINE='rpcscope-cli run --fail-on'
    COMP_POINT=\${#COMP_LINE}; \$fn rpcscope-cli --fail-on run; echo \"\${COMPREPLY[*]}\"" 2>&1) || true
[[ $words == *run* && $words == *--fail-on-error* ]] && ok "bash completes commands and flags" \
    || fail "bash completion gave: $words"
# --call: the methods of the schema on the line (here the bench one, which --builtin uses), as the line's
# rpcscope-cli (the unpacked one) lists them.
methods=$(bash -c "source '$completion'
    fn=\$(complete -p rpcscope-cli | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
    COMP_WORDS=('$cli' run --builtin --call rpcscope.bench.v1.Bench/E); COMP_CWORD=4
    COMP_LINE=\"\${COMP_WORDS[*]}\"; COMP_POINT=\${#COMP_LINE}
    \$fn '$cli' rpcscope.bench.v1.Bench/E --call; echo \"\${COMPREPLY[*]}\"" 2>&1) || true
[[ $methods == rpcscope.bench.v1.Bench/Echo ]] && ok "bash completes --call with the schema's methods" \
    || fail "bash completion of run --builtin --call rpcscope.bench.v1.Bench/E gave: $methods"

# Installed for real (CI): apt installs it with its dependencies, purge leaves nothing behind.
if [[ ${RPCSCOPE_TEST_INSTALL:-0} == 1 ]]; then
    if dpkg-query -W -f='${Status}' rpcscope 2> /dev/null | grep -q 'install ok installed'; then
        fail "rpcscope is installed on this machine already: not touching it"
    else
        # Purged again however this part ends (a failed check, an interrupted test): the machine is left as found.
        trap 'apt-get purge -y -qq rpcscope > /dev/null 2>&1 || true; rm -rf "$work"' EXIT
        if apt-get install -y -qq "$deb" > "$work/apt.log" 2>&1; then
            files=$(dpkg -L rpcscope | while read -r f; do if [[ -f $f ]]; then echo "$f"; fi; done)
            # Folders of its own (not shared ones such as /usr/share/man/man1) go with it too.
            dirs=$(dpkg -L rpcscope | { grep -E '/rpcscope($|/)' || true; } | while read -r f; do if [[ -d $f ]]; then echo "$f"; fi; done)
            /usr/bin/rpcscope-cli --version > /dev/null && man -w rpcscope-cli > /dev/null \
                && ok "installed: /usr/bin/rpcscope-cli runs, man finds rpcscope-cli(1)" || fail "installed copy does not work"
            apt-get purge -y -qq rpcscope > "$work/purge.log" 2>&1 || fail "apt purge: $(tail -5 "$work/purge.log")"
            left=$(for f in $files $dirs; do if [[ -e $f ]]; then echo "$f"; fi; done)
            [[ -z $left ]] && ok "purged: none of its $(echo "$files" | wc -l) files and $(echo "$dirs" | grep -c .) folders left" \
                || fail "left behind: $left"
        else
            fail "apt install: $(tail -5 "$work/apt.log")"
        fi
        trap 'rm -rf "$work"' EXIT
    fi
fi

if ((failures)); then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "package checks passed"
