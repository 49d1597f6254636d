#!/usr/bin/env bash
# A third-party msgpack-rpc peer: Debian's Neovim (0.7.2) as a headless msgpack-rpc server on TCP.
#
#   tests/peers/nvim_server.sh [--host 127.0.0.1] [--port 0]
#
# Prints one line, `HOST:PORT` (e.g. `127.0.0.1:40123`), to stdout once it listens: nvim binds port 0 itself and
# writes its v:servername, which holds the bound port. No wrapper process stays: the script execs nvim, so
# SIGTERM goes to nvim itself (it exits at once, with code 1 and "Vim: Caught deadly signal 'SIGTERM'" on stderr).
# The ready line is written by reopening /dev/stdout, so stdout must be a pipe, a terminal or a file (not a socket).
# Methods: Neovim's API (`nvim --api-info`), e.g. nvim_eval ["1+2"] -> 3. Anyone who can reach the port can run
# any command as this user (nvim_command "!..."): keep it on a loopback address.
set -euo pipefail
host=127.0.0.1 port=0
while (($#)); do
    case $1 in
    --host) host=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "nvim_server.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
command -v nvim >/dev/null || { echo "nvim_server.sh: nvim missing (apt-get install neovim)" >&2; exit 2; }
# No config, plugins, shada or swap file; its log (written on warnings only) kept out of $HOME; stdin not needed.
export NVIM_LOG_FILE=${NVIM_LOG_FILE:-/dev/null}
# When it cannot listen there (port taken), nvim 0.7 quietly listens on a Unix socket instead: fail then.
ready="if v:servername =~# ':[0-9]\+\$' | call writefile([v:servername], '/dev/stdout', 'a')"
ready+=" | else | call chansend(v:stderr, 'nvim_server.sh: cannot listen on $host:$port; nvim fell back to '"
ready+=" . v:servername . \"\\n\") | 2cquit | endif"
exec nvim --headless --clean -n -i NONE --listen "$host:$port" -c "$ready" </dev/null
