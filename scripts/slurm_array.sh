#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One nhvk run as a SLURM job array of N shards, then a merge. Submit with:
#   sbatch --array=0-15 --time=02:00:00 scripts/slurm_array.sh configs/rolling_disc.toml out/rolling_disc
# and, when every task has finished (or as a dependent job: --dependency=afterok:<array job id>):
#   build/nhvk merge out/rolling_disc/shard-* --out out/rolling_disc/merged
# A task that reaches its time limit is sent SIGTERM two minutes before it, stops with a resume record that holds
# every member it finished, and is requeued; the requeued task goes on from the record. A pre-empted task or one on
# a lost node goes on from its latest record (--resume starts over when there is none).
#SBATCH --job-name=nhvk
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --signal=B:TERM@120
#SBATCH --cpus-per-task=8
# (for the CUDA backend: #SBATCH --gres=gpu:1)
set -euo pipefail
config="${1:?usage: sbatch --array=0-(N-1) scripts/slurm_array.sh CONFIG OUT_PREFIX}"
prefix="${2:?usage: sbatch --array=0-(N-1) scripts/slurm_array.sh CONFIG OUT_PREFIX}"
i="${SLURM_ARRAY_TASK_ID:?not a job-array task}"
n="${SLURM_ARRAY_TASK_COUNT:?not a job-array task}"
nhvk="${NHVK:-build/nhvk}"
mkdir -p "$prefix"

# NOTE: `--signal=B:` signals this script, not nhvk, and bash runs a trap only once the command in the foreground
# has ended: so nhvk runs in the background and the trap passes the signal on while `wait` waits for it.
"$nhvk" run "$config" --shard "$i/$n" --out "$prefix/shard-$i" --threads "${SLURM_CPUS_PER_TASK:-0}" --resume &
pid=$!
stopping=0
trap 'stopping=1; kill -TERM "$pid" 2>/dev/null || true' TERM
rc=0
wait "$pid" || rc=$?
# NOTE: a trap that ran ends the first wait early (128 + 15) while nhvk writes its record: wait for nhvk itself.
if [ "$stopping" = 1 ] && [ "$rc" -gt 128 ]; then
    first=$rc
    rc=0
    wait "$pid" 2>/dev/null || rc=$?
    if [ "$rc" = 127 ]; then rc=$first; fi # nhvk had ended before the trap ran: the first status was its own
fi
# NOTE: nhvk exits 128 + 15 only when SIGTERM stopped it with its record written; the requeued task resumes.
if [ "$rc" = 143 ] && [ -n "${SLURM_JOB_ID:-}" ]; then
    echo "nhvk: shard $i stopped by SIGTERM with its resume record; requeueing job ${SLURM_JOB_ID}" >&2
    scontrol requeue "${SLURM_JOB_ID}"
fi
exit "$rc"
