#!/usr/bin/env bash
# scripts/setup.sh derives utf8proc's deb-src entries from the machine's own apt sources:
# `setup.sh --print-deb-src` on the fixture folder $1 (an /etc/apt and an os-release beside it)
# must print $1/expected.txt, written by hand from the fixture's entries: its format ("sources" or
# "list"), then the deb entries of the release (bookworm) as deb-src, with their mirrors,
# components and keys; -security, -updates, disabled and deb-src-only entries left out.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
fixture="$root/tests/setup/$1"
diff -u "$fixture/expected.txt" <(XENC_APT_ETC="$fixture/apt" bash "$root/scripts/setup.sh" --print-deb-src)
