#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One nhvk run as a SLURM job array of N shards, then a merge. Submit with:
#   sbatch --array=0-15 scripts/slurm_array.sh configs/rolling_disc.toml out/rolling_disc
# and, when every task has finished (or as a dependent job: --dependency=afterok:<array job id>):
#   build/nhvk merge out/rolling_disc/shard-* --out out/rolling_disc/merged
# A pre-empted or requeued task goes on from its resume record (--resume starts over when there is none).
#SBATCH --job-name=nhvk
#SBATCH --requeue
#SBATCH --signal=TERM@120
#SBATCH --cpus-per-task=8
# (for the CUDA backend: #SBATCH --gres=gpu:1)
set -euo pipefail
config="${1:?usage: sbatch --array=0-(N-1) scripts/slurm_array.sh CONFIG OUT_PREFIX}"
prefix="${2:?usage: sbatch --array=0-(N-1) scripts/slurm_array.sh CONFIG OUT_PREFIX}"
i="${SLURM_ARRAY_TASK_ID:?not a job-array task}"
n="${SLURM_ARRAY_TASK_COUNT:?not a job-array task}"
nhvk="${NHVK:-build/nhvk}"
# NOTE: exec, so SLURM's SIGTERM reaches nhvk, which stops at a chunk boundary and writes its resume record.
exec "$nhvk" run "$config" --shard "$i/$n" --out "$prefix/shard-$i" --threads "${SLURM_CPUS_PER_TASK:-0}" --resume
