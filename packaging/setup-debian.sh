#!/usr/bin/env bash
# Installs the Debian packages listed in debian-packages.txt (or in the lists named as arguments, e.g.
# debian-packages-fuzz.txt for `make fuzz`) that are missing; does nothing (and needs no network) when all are present.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lists=("$@")
((${#lists[@]})) || lists=(debian-packages.txt)
wanted=()
for list in "${lists[@]}"; do
    mapfile -t -O "${#wanted[@]}" wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/$list")
done

missing=()
for p in "${wanted[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    exit 0
fi
echo "setup: installing ${#missing[@]} missing Debian package(s): ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
    sudo=sudo
else
    sudo=
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
