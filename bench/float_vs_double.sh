#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Float against double on every catalogue model's config: `nhvk run configs/MODEL.toml` with `integrator.precision` P at the
# precision's default tolerances, N members on a backend (`BACKEND`, default cpu; cuda on a GPU). Prints a Markdown
# table: per model and precision the integration seconds, the members valid, failed (with the dominant failure) and
# diverged, and the ratio float / double of the integration time.
# Usage: bench/float_vs_double.sh [build] [N] [threads] [models...]   (default: build, 20000, all cores, every model
#        with a configs/MODEL.toml among nhvk's built-in models)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
n="${2:-20000}"
threads="${3:-0}"
shift $(($# < 3 ? $# : 3))
backend="${BACKEND:-cpu}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
    mapfile -t models < <("$build/nhvk" models 2>/dev/null | awk '/^[a-z_]+ +n=/ { print $1 }')
fi
echo "| model | precision | integration s | valid | failed (dominant) | diverged | float / double |"
echo "|---|---|---|---|---|---|---|"
for m in "${models[@]}"; do
    cfg="$here/configs/$m.toml"
    [ -f "$cfg" ] || continue
    double_s=""
    for p in double float; do
        rm -rf "$tmp/run"
        if ! "$build/nhvk" run "$cfg" --backend "$backend" --threads "$threads" --trajectories "$n" --set "integrator.precision=\"$p\"" \
            -q --out "$tmp/run" >"$tmp/log" 2>&1; then
            echo "| $m | $p | failed to run: $(tail -1 "$tmp/log") | | | | |"
            continue
        fi
        line="$(python3 - "$tmp/run/summary.json" "$m" "$p" "$double_s" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t, tr = s["timing"], s["trajectories"]
failed = tr["failed"]
by = failed.get("by_status", {}) if isinstance(failed, dict) else {}
dominant = max(by.items(), key=lambda kv: kv[1])[0] if by and max(by.values()) > 0 else ""
total = sum(by.values())
div = tr["diverged"]["count"]
ratio = f"{t['integration_seconds'] / float(sys.argv[4]):.2f}" if sys.argv[4] else ""
print(f"{t['integration_seconds']:.3f}|| {sys.argv[2]} | {sys.argv[3]} | {t['integration_seconds']:.3f} | {tr['valid']} | "
      f"{total}{' (' + dominant + ')' if dominant else ''} | {div} | {ratio} |")
PY
)"
        [ "$p" = double ] && double_s="${line%%||*}"
        echo "|${line#*||}"
    done
done
