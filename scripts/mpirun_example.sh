#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One nhvk run over R MPI ranks (one node or many): every rank integrates its share of the trajectories, rank 0
# merges and writes the outputs, bit for bit those of a single process.
#   scripts/mpirun_example.sh 4 configs/quickstart.toml out/quickstart-mpi
# Under SLURM: srun (with PMIx) or mpirun inside the allocation; on GPU nodes start one rank per GPU (ranks take the
# node's devices in turn). As root (containers), OpenMPI also wants --allow-run-as-root.
set -euo pipefail
ranks="${1:?usage: scripts/mpirun_example.sh RANKS CONFIG OUT}"
config="${2:?usage: scripts/mpirun_example.sh RANKS CONFIG OUT}"
out="${3:?usage: scripts/mpirun_example.sh RANKS CONFIG OUT}"
nhvk="${NHVK:-build/nhvk}"
extra=()
[ "$(id -u)" -eq 0 ] && extra+=(--allow-run-as-root)
# --resume: a job that was stopped (Ctrl-C, SIGTERM, a lost node) goes on where it was; the same number of ranks is
# needed for that.
# --bind-to none: OpenMPI binds each of <= 2 ranks to one core; unbound, each rank takes cores / ranks-on-the-node threads.
exec mpirun "${extra[@]}" --bind-to none -np "$ranks" "$nhvk" run "$config" --out "$out" --resume
