# SPDX-License-Identifier: MIT
# Sourced by the GPU scripts (gpu_reduction.sh), which set `build` and `out`:
# run LABEL ARGS...: one `nhvk run ARGS` on the device, its stage times from summary.json on one line.
run() {
    local label="$1"
    shift
    rm -rf "$out/run"
    timeout 120 "$build/nhvk" run "$@" --backend cuda -q --out "$out/run" >"$out/run.log" 2>&1
    local rc=$?
    if [ "$rc" != 0 ]; then
        echo "$label (rc $rc): $(tail -2 "$out/run.log" | tr '\n' ' ')"
        return
    fi
    echo "$label (rc $rc): $(python3 - "$out/run/summary.json" <<'PY' 2>&1
import json, sys
s = json.load(open(sys.argv[1]))
t = s["timing"]
r = t["reduction_seconds"] / t["integration_seconds"] if t.get("integration_seconds") else float("nan")
print(", ".join(f"{k} {t[k]:.4f}" for k in ("seconds", "integration_seconds", "sampling_seconds",
                                            "reduction_seconds", "transfer_seconds") if k in t),
      f"| reduction/integration {r:.2f} |", s["statistics"]["quantiles"], "| valid", s["trajectories"]["valid"])
PY
)"
}
