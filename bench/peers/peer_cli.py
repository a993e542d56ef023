# SPDX-License-Identifier: MIT
"""Shared by the Python peers of bench/peers.sh, before they know which of their modules are installed: the command
line every peer takes (--n trajectories, --seed S of the splitmix64 stream). Standard library only, so that a peer
can parse its arguments and then print `skipped: ... not installed` when numpy, scipy or jax is missing."""

import argparse

DEFAULT_SEED = 2026  # peer_common.DEFAULT_SEED (peer_common needs numpy; this module must not)


def argument_parser(doc, n_default):
    """An argparse parser with the peer's docstring as help and the options --n (default n_default) and --seed."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=n_default)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    return ap
