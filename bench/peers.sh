#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Peers benchmark (issue 11): nhvk against hand-written and library integrators on one fixed workload, nh_particle,
# both dynamics, RK4 dt = 1e-3 over t 0 -> 1 (bench/peers/README.md). Runs every peer this machine can run (the C++
# ones compiled into a temp dir, the CUDA one only when `nvidia-smi -L` finds a device, the Python ones when their
# modules import) and `nhvk run bench/peers/nh_particle_rk4.toml` when build-dir/nhvk exists, and prints one Markdown
# table on stdout (progress and compiler output on stderr).
# Usage: bench/peers.sh [build-dir] [N]      (default: build, 100000 trajectories)
# Environment: THREADS (CPU threads of nhvk and the C++ peers, default 1), SCIPY_N (sample of scipy_peer.py,
#   default 200), PYTHON (runs the Python peers, default python3), CXX (default g++), NVCC, CUDA_ARCH (default
#   native). The table itself needs only python3 (standard library).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
n="${2:-100000}"
threads="${THREADS:-1}"
scipy_n="${SCIPY_N:-200}"
python="${PYTHON:-python3}"
cxx="${CXX:-g++}"
peers="$here/bench/peers"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/peers.sh [build-dir] [N]  (N: a positive integer)" >&2; exit 2; }
if ((scipy_n > n)); then scipy_n="$n"; fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
results="$tmp/results.jsonl"
notes="$tmp/notes.txt"
: >"$results"
: >"$notes"
note() { echo "$*" >>"$notes"; echo "peers.sh: $*" >&2; }

# run_peer NAME COMMAND...: keeps the JSON lines the command prints; a `skipped: ...` line or a failure becomes a note
run_peer() {
    local name="$1"
    shift
    echo "peers.sh: running $name" >&2
    if "$@" >"$tmp/out" 2>"$tmp/err"; then
        grep '^{' "$tmp/out" >>"$results" || true
        if grep -q '^skipped:' "$tmp/out"; then note "$name $(grep -m1 '^skipped:' "$tmp/out")"; fi
    else
        note "$name failed (exit $?): $(tail -n 1 "$tmp/err")"
    fi
}

# nhvk_row NAME SUMMARY_JSON: the same JSON line as the peers, from nhvk's summary.json
nhvk_row() {
    python3 - "$1" "$2" >>"$results" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
s = json.load(open(path))
c = s["config"]
n, t_end = s["trajectories"]["requested"], s["times"][-1]
q = s["divergence"]["q"]
rk4 = c["integrator"]["method"] == "rk4"
steps = round((t_end - c["initial"]["t0"]) / c["integrator"]["dt"]) if rk4 else None
method = "rk4" if rk4 else "dopri5 rtol=%g atol=%g" % (c["integrator"]["rtol"], c["integrator"]["atol"])
sec = s["timing"]["integration_seconds"]
print(json.dumps({
    "peer": name, "method": method,
    "device": s["backend"], "threads": s["threads"], "trajectories": n, "steps": steps, "t_end": t_end,
    "integration_seconds": sec, "total_seconds": s["timing"]["seconds"],
    "traj_steps_per_second": n * steps * 2.0 / sec if rk4 else None, "trajectories_per_second": n / sec,
    "mean_dq": q["mean"][-1], "median_dq": q["p50"][-1], "max_dq": q["max"][-1],
    "failed": s["trajectories"]["failed"]["total"]}))
PY
}

# run_nhvk NAME TAG ARGS...: one `nhvk run` of the peers config (TAG names the run in messages and its out folder)
run_nhvk() {
    local name="$1" tag="$2"
    shift 2
    echo "peers.sh: running $name $tag" >&2
    if "$build/nhvk" run "$peers/nh_particle_rk4.toml" -q --trajectories "$n" --threads "$threads" \
        --out "$tmp/$name-$tag" "$@" 2>"$tmp/err"; then
        nhvk_row "$name" "$tmp/$name-$tag/summary.json"
    else
        note "$name $tag failed (exit $?): $(tail -n 1 "$tmp/err")"
    fi
}

cxxflags=(-std=c++17 -O3 -march=x86-64-v2 -fopenmp)
for p in closed_form_cpu odeint_cpu; do
    echo "peers.sh: compiling $p: $cxx ${cxxflags[*]}" >&2
    if "$cxx" "${cxxflags[@]}" -o "$tmp/$p" "$peers/$p.cpp"; then
        run_peer "$p" "$tmp/$p" --n "$n" --threads "$threads"
    else
        note "$p: compilation failed"
    fi
done

gpu=""
if command -v nvidia-smi >/dev/null 2>&1 && gpu="$(nvidia-smi -L 2>/dev/null | head -n 1)" && [[ "$gpu" == GPU* ]]; then
    nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
    echo "peers.sh: compiling closed_form_cuda: $nvcc -O3 -arch=${CUDA_ARCH:-native}" >&2
    if "$nvcc" -std=c++17 -O3 -arch="${CUDA_ARCH:-native}" -o "$tmp/closed_form_cuda" "$peers/closed_form_cuda.cu"; then
        run_peer closed_form_cuda "$tmp/closed_form_cuda" --n "$n"
    else
        note "closed_form_cuda: compilation failed"
    fi
else
    gpu=""
    note "closed_form_cuda skipped: nvidia-smi -L finds no GPU"
fi

run_peer jax_peer "$python" "$peers/jax_peer.py" --n "$n"
run_peer diffrax_peer "$python" "$peers/diffrax_peer.py" --n "$n"
run_peer scipy_peer "$python" "$peers/scipy_peer.py" --n "$scipy_n"

dopri5=(--set 'integrator.method="dopri5"' --set times.t_end=5.0 --set 'times.list=[5.0]')
if [[ -x "$build/nhvk" ]]; then
    run_nhvk nhvk rk4 --backend cpu
    run_nhvk nhvk dopri5 "${dopri5[@]}" --backend cpu
    if [[ -n "$gpu" ]]; then
        run_nhvk nhvk_cuda rk4 --backend cuda
        run_nhvk nhvk_cuda dopri5 "${dopri5[@]}" --backend cuda
    fi
else
    note "nhvk skipped: no executable $build/nhvk"
fi

cpu="$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)"
[[ -n "$cpu" ]] || cpu="$(sed -n 's/^model name\s*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)"
commit="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
cmd="THREADS=$threads bench/peers.sh $*"

python3 - "$results" "$notes" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(uname -m)" "${cpu:-unknown}" \
    "${gpu:-none}" "$commit" "$cmd" <<'PY'
import json, sys
results, notes, date, machine, cpu, gpu, commit, cmd = sys.argv[1:]
rows = [json.loads(line) for line in open(results) if line.strip()]
kind = lambda r: "cpu" if str(r["device"]).startswith("cpu") else "gpu"
klass = lambda r: "rk4" if r["method"] == "rk4" else "adaptive"
# nhvk's rate on the same kind of device and the same class of method
ref = {}
for r in rows:
    if r["peer"].startswith("nhvk"):
        ref.setdefault((kind(r), klass(r)), r)
def g(x):
    return "—" if x is None else f"{x:.3g}"
print("## Peers benchmark: nh_particle, both dynamics, RK4 dt = 1e-3, t 0 → 1\n")
print(f"- date: {date}; machine: {machine}; CPU: {cpu}; GPU: {gpu}")
print(f"- commit: {commit}; command: `{cmd}`")
print("- traj-steps/s = trajectories × steps × 2 dynamics / integration seconds (the peer's own timing of the "
      "integration only; total s adds state generation, transfers and the reduction of d_q)")
print("- nhvk / peer = nhvk's rate / the peer's rate (> 1: nhvk faster), against nhvk on the same kind of device: "
      "rk4 rows by traj-steps/s, adaptive rows (t 0 → 5) by traj/s")
print("- mean d_q at t_end is the checksum: the peers share their initial states (a smaller sample is the first "
      "trajectories of the same stream) and agree to ~1e-12; nhvk draws its own, so it agrees only statistically\n")
print("| peer | method | device | threads | trajectories | integration s | total s | traj-steps/s | traj/s "
      "| nhvk / peer | mean d_q |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    rk4 = klass(r) == "rk4"
    nh = ref.get((kind(r), klass(r)))
    ratio = "—"
    if nh is not None and not r["peer"].startswith("nhvk"):
        key = "traj_steps_per_second" if rk4 else "trajectories_per_second"
        ratio = f"{nh[key] / r[key]:.3g}"
    threads = r.get("threads") or "—"  # None: the runtime's own pool (XLA); 0: a GPU
    tsps = r["traj_steps_per_second"] if rk4 else None
    t_end = "" if rk4 else f", t 0 → {r['t_end']:g}"
    print(f"| {r['peer']} | {r['method']}{t_end} | {r['device']} | {threads} | {r['trajectories']} | "
          f"{r['integration_seconds']:.4g} | {r['total_seconds']:.4g} | {g(tsps)} | "
          f"{r['trajectories_per_second']:.4g} | {ratio} | {r['mean_dq']:.14g} |")
extra = [line.rstrip() for line in open(notes) if line.strip()]
failed = [f"{r['peer']} ({r['method']}): {r['failed']} failed trajectories" for r in rows if r.get("failed")]
if extra or failed:
    print("\nNotes:\n")
    for line in extra + failed:
        print(f"- {line}")
PY
