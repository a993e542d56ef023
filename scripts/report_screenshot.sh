#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Full-page PNG screenshot of an output folder's report.html with headless Chromium (Debian's `chromium`).
#   scripts/report_screenshot.sh DIR OUT.png [WIDTH]
# DIR: an nhvk output folder holding report.html (`nhvk run` writes it; `nhvk report DIR` renders it again).
# WIDTH: the window width in pixels (default 1000). The page height is measured first (a temporary copy of the page
# with one line of script that writes its height into the title, read back with --dump-dom), so the screenshot
# holds the whole page. Not needed by the build or CI; install Chromium with `sudo apt-get install -y chromium`.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
    echo "usage: $0 DIR OUT.png [WIDTH]" >&2
    exit 2
fi
dir=$1 out=$2 width=${3:-1000}
page=$dir/report.html
if [[ ! -f $page ]]; then
    echo "$0: $page: no such file (run nhvk run, or nhvk report $dir, first)" >&2
    exit 2
fi
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $browser ]]; then
    echo "$0: Chromium not found: install it with 'sudo apt-get install -y chromium' (Debian/Ubuntu)" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(--headless --disable-gpu --hide-scrollbars --no-first-run --no-default-browser-check
       --user-data-dir="$tmp/profile" --force-device-scale-factor=1)
# NOTE: Chromium's sandbox cannot start as root (containers, CI): without it there, as its message asks.
[[ $(id -u) -eq 0 ]] && flags+=(--no-sandbox)

# 1. The page's height at this width: the same page plus a script that puts scrollHeight into the title.
sed 's|</body>|<script>document.title="height:"+document.documentElement.scrollHeight;</script></body>|' \
    "$page" >"$tmp/measure.html"
height=$("$browser" "${flags[@]}" --window-size="$width,800" --virtual-time-budget=3000 --dump-dom \
             "file://$(realpath "$tmp/measure.html")" 2>/dev/null | sed -n 's|.*<title>height:\([0-9]*\)</title>.*|\1|p')
if [[ -z $height ]]; then
    echo "$0: could not measure the page height with $browser" >&2
    exit 1
fi

# 2. The screenshot of the page itself at that size.
"$browser" "${flags[@]}" --window-size="$width,$height" --screenshot="$(realpath -m "$out")" \
    "file://$(realpath "$page")" 2>/dev/null >/dev/null
[[ -s $out ]] || { echo "$0: $browser wrote no screenshot" >&2; exit 1; }
echo "$out: ${width}x${height} screenshot of $page"
