#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The SLURM recipe of scripts/slurm_array.sh (issue 44) without SLURM: the task script is sent SIGTERM as
# `#SBATCH --signal=B:TERM@120` would send it (to the script, not to nhvk), must pass it on to nhvk, which stops with
# its resume record, and must then requeue itself (`scontrol requeue $SLURM_JOB_ID`, here a stand-in that logs its
# arguments). The task run again, as the requeued job, must go on from the record and end with the statistics of an
# uninterrupted run. Usage: slurm_array_requeue.sh SOURCE_DIR NHVK_BINARY WORK_DIR
set -euo pipefail
src="$1"
nhvk="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work/bin"
fail() {
    echo "FAIL: $*" >&2
    for f in "$work"/task*.err "$work/out/shard-0/run.log"; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
    exit 1
}

cat >"$work/bin/scontrol" <<'SH'
#!/bin/sh
echo "$@" >>"$SCONTROL_LOG"
SH
chmod +x "$work/bin/scontrol"
export PATH="$work/bin:$PATH" SCONTROL_LOG="$work/scontrol.log" NHVK="$nhvk"
export SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=1 SLURM_JOB_ID=4242 SLURM_CPUS_PER_TASK=1
# 12,000 members on the CPU (the test hook's pause is the CPU backend's): with a pause after each chunk the task
# outlasts the signal on any machine
sed 's/^trajectories = .*/trajectories = 12000\nbackend = "cpu"/' "$src/configs/nh_particle.toml" >"$work/particle.toml"
grep -q '^backend = "cpu"$' "$work/particle.toml" || fail "could not set the trajectory count and the backend"

NHVK_TEST_CHUNK_PAUSE_MS=200 bash "$src/scripts/slurm_array.sh" "$work/particle.toml" "$work/out" \
    >"$work/task1.out" 2>"$work/task1.err" &
task=$!
for _ in $(seq 1 2000); do
    [ -f "$work/out/shard-0/run.log" ] && break
    sleep 0.01
done
[ -f "$work/out/shard-0/run.log" ] || fail "the task never started nhvk"
sleep 0.3
kill -TERM "$task"
rc=0
wait "$task" || rc=$?
[ "$rc" = 143 ] || fail "the stopped task exited $rc, not 143"
[ "$(cat "$work/scontrol.log" 2>/dev/null)" = "requeue 4242" ] || fail "the task did not requeue itself once"
[ -f "$work/out/shard-0/resume.nhvk" ] || fail "no resume record"
[ ! -e "$work/out/shard-0/summary.json" ] || fail "a stopped task wrote summary.json"
grep -q "stopped by SIGTERM" "$work/out/shard-0/run.log" || fail "run.log does not say SIGTERM stopped nhvk"

# the requeued task: the same script, no signal
rc=0
bash "$src/scripts/slurm_array.sh" "$work/particle.toml" "$work/out" >"$work/task2.out" 2>"$work/task2.err" || rc=$?
[ "$rc" = 0 ] || fail "the requeued task exited $rc"
[ "$(wc -l <"$work/scontrol.log")" = 1 ] || fail "a complete task requeued itself"
python3 - "$work/out/shard-0/summary.json" <<'PY' || fail "the requeued task did not resume"
import json, sys
at = json.load(open(sys.argv[1]))["job"]["resumed_at"]
sys.exit(0 if isinstance(at, int) and at > 0 else 1)
PY

# the same shard uninterrupted
"$nhvk" run "$work/particle.toml" --shard 0/1 --out "$work/ref" --threads 1 -q || fail "the reference run failed"
cmp -s "$work/ref/stats.csv" "$work/out/shard-0/stats.csv" || fail "stats.csv differs from an uninterrupted run's"
echo "ok: SIGTERM passed on, record kept, task requeued once, resumed to an uninterrupted run's stats.csv"
