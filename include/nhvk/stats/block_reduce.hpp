// SPDX-License-Identifier: MIT
/** @file
 *  @brief The device's block-cooperative reduction of a chunk into per-(series, tile) partials and histogram rows. It
 *         is written as the phases of one block, so that the CUDA kernel (kernels/cuda_backend.cu: the phases with a
 *         __syncthreads between them) and its host twin here (the block's threads run one after the other, phase by
 *         phase) execute the same code, and the host twin's tests referee the device's arithmetic.
 *
 *  Work decomposition: block b reduces tile t = b mod n_tiles of row s0 = b / n_tiles, the members
 *  [t·tile_members, (t+1)·tile_members) of the chunk, read once and contiguously (a warp reads 32 neighbouring
 *  members). It adds them into the row's own partial and, when the row is replicated, into its replica groups'
 *  partials (member j counts in group (first_member + j) mod R), so the groups cost no second read of the row. The
 *  exact sums of a block's targets live in shared memory as unnormalised limbs: ExactSum's own representation, 32-bit
 *  pieces added into int64 slots, here by atomics, which commute. Counts, minima and maxima are kept per thread
 *  (the row) or by atomics (a group), the extremes as order-preserving integer keys. At the end of a pass the block
 *  adds its limbs, limb by limb, into its tile's partial in global memory. Histogram rows are built the same way in
 *  shared memory (the window's top first, then the counts) and merged into the tile's row position by position. Only
 *  integers are added, so after combine_tiles the partials and rows equal accumulate_chunk's bit for bit, whatever the
 *  block size, tiling or batch.
 *
 *  Why: accumulate_chunk's per-thread SeriesPartial (1.6 KB) cannot live in registers, and one thread per (series,
 *  tile) cannot fill the device. Here a thread holds a handful of scalars, and a block shares 1.6 KB of limbs per
 *  target.
 */
#pragma once

#include "nhvk/stats/chunk_reduce.hpp"
#include "nhvk/stats/log_histogram.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace nhvk::stats {

/** @brief One target series' accumulator in a block's shared memory (every field a 64-bit word). */
struct BlockAccumulator {
    std::int64_t sum[ExactSum::kLimbs];          ///< Σx's limbs, unnormalised
    std::int64_t sum_sq[ExactSquareSum::kLimbs]; ///< Σx²'s limbs, unnormalised
    std::uint64_t count;                         ///< finite values added
    std::uint64_t nonfinite;                     ///< non-finite values rejected
    std::uint64_t min_key;                       ///< detail::order_key of the least value (all ones: none yet)
    std::uint64_t max_key;                       ///< detail::order_key of the greatest value (0: none yet)

    static constexpr std::size_t kLimbWords = ExactSum::kLimbs + ExactSquareSum::kLimbs;
    static constexpr std::size_t kWords = kLimbWords + 4;
    static constexpr std::size_t kMinKeyWord = kLimbWords + 2;
};

static_assert(sizeof(BlockAccumulator) == 8 * BlockAccumulator::kWords, "BlockAccumulator is a run of 64-bit words");

namespace detail {

// NOTE: shared-memory atomics on the device; the host twin runs a block's threads one after the other.
NHVK_HD inline void block_add_word(std::uint64_t* a, std::uint64_t v) {
#if defined(__CUDA_ARCH__)
    atomicAdd(reinterpret_cast<unsigned long long*>(a), static_cast<unsigned long long>(v));
#else
    *a += v;
#endif
}

NHVK_HD inline void block_min_word(std::uint64_t* a, std::uint64_t v) {
#if defined(__CUDA_ARCH__)
    atomicMin(reinterpret_cast<unsigned long long*>(a), static_cast<unsigned long long>(v));
#else
    *a = v < *a ? v : *a;
#endif
}

NHVK_HD inline void block_max_word(std::uint64_t* a, std::uint64_t v) {
#if defined(__CUDA_ARCH__)
    atomicMax(reinterpret_cast<unsigned long long*>(a), static_cast<unsigned long long>(v));
#else
    *a = v > *a ? v : *a;
#endif
}

/** @brief Adds ±pieces at limb k (two's complement: an unsigned add of the negated piece subtracts it). */
template <int N>
NHVK_HD inline void block_add_pieces(std::int64_t* limbs, int k, const std::int64_t (&p)[N], bool negative) {
    for (int i = 0; i < N; ++i) {
        if (p[i] != 0) {
            const auto v = static_cast<std::uint64_t>(negative ? -p[i] : p[i]);
            block_add_word(reinterpret_cast<std::uint64_t*>(limbs + k + i), v);
        }
    }
}

/**
 * @brief Adds one member's pieces (where `adds`) into the row's accumulator. On the device a warp whose values all
 *        start at the same limbs (the common case: neighbouring members' metrics at one time are of a size) sums its
 *        pieces with shuffles first and one lane adds them, instead of 32 lanes contending for the same words; else,
 *        and on the host, every member adds its own.
 *
 * The device path needs the whole warp here (block_reduce_phase's loop keeps it converged) and a block of whole
 * warps; it adds the same integers, so the twin's results are the device's.
 */
NHVK_HD inline void block_add_row_sums(BlockAccumulator* acc, bool adds, int k1,
                                       const std::int64_t (&p1)[ExactSum::kPieces], bool negative, int k2,
                                       const std::int64_t (&p2)[ExactSquareSum::kPieces]) {
#if defined(__CUDA_ARCH__)
    constexpr unsigned full = 0xFFFFFFFFu;
    const unsigned who = __ballot_sync(full, adds);
    if (who == 0u) {
        return;
    }
    const int leader = __ffs(who) - 1;
    const int l1 = __shfl_sync(full, k1, leader), l2 = __shfl_sync(full, k2, leader);
    if (__all_sync(full, !adds || (k1 == l1 && k2 == l2)) != 0) {
        // NOTE: 32 pieces below 2^32 each sum below 2^37: exact in int64, signed for Σx
        std::int64_t s1[ExactSum::kPieces], s2[ExactSquareSum::kPieces];
        for (int i = 0; i < ExactSum::kPieces; ++i) s1[i] = !adds ? 0 : negative ? -p1[i] : p1[i];
        for (int i = 0; i < ExactSquareSum::kPieces; ++i) s2[i] = adds ? p2[i] : 0;
        for (int off = 16; off > 0; off >>= 1) {
            for (int i = 0; i < ExactSum::kPieces; ++i) s1[i] += __shfl_xor_sync(full, s1[i], off);
            for (int i = 0; i < ExactSquareSum::kPieces; ++i) s2[i] += __shfl_xor_sync(full, s2[i], off);
        }
        if (static_cast<int>(threadIdx.x & 31u) == leader) {
            block_add_pieces(acc->sum, l1, s1, false);
            block_add_pieces(acc->sum_sq, l2, s2, false);
        }
        return;
    }
#endif
    if (adds) {
        block_add_pieces(acc->sum, k1, p1, negative);
        block_add_pieces(acc->sum_sq, k2, p2, false);
    }
}

} // namespace detail

/** @brief What one launch of the block reduction covers: a chunk, its tiling, the accumulators a block holds and,
 *         when the run keeps histogram rows, their binner. */
struct BlockPlan {
    ChunkView in;
    std::size_t n_tiles = 1;      ///< tiles per series: the partials' layout, tile t of series s at s·n_tiles + t
    std::size_t tile_members = 1; ///< members per tile (the last tiles may have fewer, or none)
    std::size_t batch = 1;        ///< targets reduced per pass: accumulators (and rows) in a block's shared memory
    LogBinner binner;             ///< the histogram rows' binner (tables readable where the block runs)
    bool with_rows = false;       ///< whether the block also adds histogram rows

    /** @brief A tile adds at most this many values per target and pass, so a block's limbs stay below 2^60 and the
     *  partial's `pending` count (FixedAccumulator's bound) below 2^30. */
    static constexpr std::size_t kMaxTileMembers = std::size_t{1} << 28;
    /** @brief Phases of a pass, separated by a block-wide barrier on the device. */
    static constexpr int kPhases = 5;

    /** @brief Rows read (every series that is not a replica group's). */
    NHVK_HD std::size_t rows() const { return detail::ungrouped_series(in); }
    NHVK_HD std::size_t blocks() const { return rows() * n_tiles; }
    /** @brief Replica groups of row s0 (0 when it is not replicated). */
    NHVK_HD std::size_t groups(std::size_t s0) const {
        return rows() != in.n_series && s0 < in.replicated ? in.replicas : 0u;
    }
    /** @brief Target 0 of row s0 is the row itself, target 1 + g its replica group g. */
    NHVK_HD std::size_t targets(std::size_t s0) const { return 1u + groups(s0); }
    NHVK_HD std::size_t series(std::size_t s0, std::size_t target) const {
        return target == 0u ? s0 : in.base_series + (target - 1u) * in.replicated + s0;
    }
    NHVK_HD std::size_t passes(std::size_t s0) const { return (targets(s0) + batch - 1u) / batch; }
    /** @brief Largest number of targets of any row (what a batch need not exceed). */
    NHVK_HD std::size_t most_targets() const { return 1u + (rows() != in.n_series ? in.replicas : 0u); }
    /** @brief 64-bit words of histogram row per target in shared memory (0 without rows). */
    NHVK_HD std::size_t row_words() const { return with_rows ? binner.row_words() : 0u; }
    /** @brief Shared memory a block needs per target. */
    NHVK_HD std::size_t target_bytes() const { return sizeof(BlockAccumulator) + 8u * row_words(); }
};

/** @brief The plan of a chunk: tiles of ceil(chunk / n_tiles) members, and batches of at most max_batch targets;
 *         histogram rows when `binner` is given. Throws std::length_error when a tile would exceed
 *         BlockPlan::kMaxTileMembers. */
inline BlockPlan block_plan(const ChunkView& in, std::size_t n_tiles, std::size_t max_batch,
                            const LogBinner* binner = nullptr) {
    BlockPlan P;
    P.in = in;
    P.n_tiles = n_tiles > 0u ? n_tiles : 1u;
    P.tile_members = in.chunk == 0u ? 1u : (in.chunk + P.n_tiles - 1u) / P.n_tiles;
    if (P.tile_members > BlockPlan::kMaxTileMembers) {
        throw std::length_error("block reduction: " + std::to_string(P.tile_members) +
                                " members per tile (at most 2^28): use more tiles or smaller chunks");
    }
    const std::size_t most = P.most_targets();
    P.batch = max_batch == 0u ? 1u : (max_batch < most ? max_batch : most);
    if (binner != nullptr) {
        P.binner = *binner;
        P.with_rows = true;
    }
    return P;
}

/**
 * @brief How many tiles each series is reduced in on the device: enough blocks for `blocks_per_sm` on each of the
 *        device's `sms` multiprocessors, but at least `least_members` members per tile of a full chunk (a block
 *        loads and stores its partials once per pass, which its members must amortise), at most `budget` bytes of
 *        tiles (`tile_bytes` each, for `n_series` series), and at least one tile.
 */
inline std::size_t block_tiles(std::size_t rows, std::size_t capacity, int sms, std::size_t n_series = 0,
                               std::size_t tile_bytes = 0, std::size_t budget = 0, std::size_t blocks_per_sm = 8,
                               std::size_t least_members = 1024) {
    const std::size_t want = blocks_per_sm * static_cast<std::size_t>(sms > 0 ? sms : 1);
    const std::size_t r = rows > 0u ? rows : 1u;
    std::size_t tiles = (want + r - 1u) / r;
    const std::size_t most = capacity / (least_members > 0u ? least_members : 1u);
    tiles = tiles < most ? tiles : most;
    if (budget > 0u && n_series > 0u && tile_bytes > 0u) {
        const std::size_t fit = budget / (n_series * tile_bytes);
        tiles = tiles < fit ? tiles : fit;
    }
    return tiles > 0u ? tiles : 1u;
}

namespace detail {

/** @brief Adds finite x to a block's histogram row: phase 1 raises the store's top (atomically: the largest bin
 *         wins), phase 2 counts x in its bin, or in `below` when under the final window, or as a zero. After both
 *         phases the row is LogBinner::add's state for the block's values (a function of their multiset). */
NHVK_HD inline void block_row_add(const LogBinner& b, std::uint64_t* row, double x, bool tops) {
    if (x == 0.0) {
        if (!tops) block_add_word(row + kZeroWord, 1u);
        return;
    }
    const std::uint32_t s = x < 0.0 ? 1u : 0u;
    std::uint64_t* st = row + kStoreWords + 2u * s; // st[0] = top + 1, st[1] = below
    const std::uint64_t g1 = std::uint64_t{b.bin(s != 0u ? -x : x)} + 1u;
    if (tops) {
        block_max_word(st, g1);
    } else if (g1 + b.window <= st[0]) {
        block_add_word(st + 1, 1u);
    } else {
        block_add_word(row + kFirstCount + s * b.window + ((g1 - 1u) & (b.window - 1u)), 1u);
    }
}

/** @brief LogBinner::merge of a block's row `other` into the tile's row `row`, its window positions split over the
 *         threads: position p of store s takes the bin of the old window that leaves (to below) and then other's
 *         bin there. `heads` (the last phase, after a barrier) writes the new tops, the zeros and other's below;
 *         the positions read the old tops, so they run first. Words are those LogBinner::merge leaves. */
NHVK_HD inline void block_row_merge(const LogBinner& b, std::uint64_t* row, const std::uint64_t* other, bool heads,
                                    unsigned tid, unsigned nthreads) {
    const long long K = b.window;
    if (heads) {
        if (tid == 0u) {
            row[kZeroWord] += other[kZeroWord];
            for (std::uint32_t s = 0; s < 2u; ++s) {
                std::uint64_t* st = row + kStoreWords + 2u * s;
                const std::uint64_t* ost = other + kStoreWords + 2u * s;
                st[0] = ost[0] > st[0] ? ost[0] : st[0];
                st[1] += ost[1];
            }
        }
        return;
    }
    for (std::size_t i = tid; i < 2u * b.window; i += nthreads) {
        const std::uint32_t s = i < b.window ? 0u : 1u;
        const long long p = static_cast<long long>(i) - s * K;
        std::uint64_t* st = row + kStoreWords + 2u * s;
        const std::uint64_t* ost = other + kStoreWords + 2u * s;
        if (ost[0] == 0u) {
            continue; // other's store is empty: nothing moves
        }
        const long long top = static_cast<long long>(st[0]) - 1, otop = static_cast<long long>(ost[0]) - 1;
        const long long lo = (top > otop ? top : otop) - K + 1; // the merged window's lowest bin
        std::uint64_t* c = row + kFirstCount + s * b.window + p;
        std::uint64_t below = 0u;
        // the old window's bin at p (top − ((top − p) mod K)) leaves when it is under the merged window
        if (st[0] != 0u && top - ((top - p) & (K - 1)) < lo) {
            below += *c;
            *c = 0u;
        }
        const std::uint64_t v = other[kFirstCount + s * b.window + p];
        if (v != 0u) {
            if (otop - ((otop - p) & (K - 1)) >= lo) {
                *c += v;
            } else {
                below += v;
            }
        }
        if (below != 0u) {
#if defined(__CUDA_ARCH__)
            atomicAdd(reinterpret_cast<unsigned long long*>(st + 1), static_cast<unsigned long long>(below));
#else
            st[1] += below;
#endif
        }
    }
}

} // namespace detail

/**
 * @brief Phase `phase` (0 … BlockPlan::kPhases − 1) of pass `pass` of block `block`, for thread `tid` of `nthreads`:
 *   0. clear the pass's accumulators (and histogram rows);
 *   1. with rows, raise each row's tops to its largest bins (the window must be final before anything is counted);
 *   2. add the tile's members into the accumulators (row target: per-thread count and extremes, warp-summed pieces;
 *      groups: atomics) and rows;
 *   3. one thread per target: the count, extremes and non-finite count into the tile's partial, and the partial's
 *      carries propagated when the limbs to come could pass FixedAccumulator's bound; the rows' window positions
 *      merged, split over the threads;
 *   4. the limbs into the partial, one limb per thread; the rows' tops, zeros and below counts.
 * Every thread of the block runs every phase, in order, the phases separated by a block-wide barrier. `acc` holds
 * P.batch accumulators followed by P.batch rows of P.row_words() words; `counts` the tile rows (s·n_tiles + t).
 */
NHVK_HD inline void block_reduce_phase(int phase, const BlockPlan& P, std::size_t block, std::size_t pass,
                                       BlockAccumulator* acc, SeriesPartial* partials, std::uint64_t* counts,
                                       unsigned tid, unsigned nthreads) {
    const ChunkView& in = P.in;
    const std::size_t s0 = block / P.n_tiles, t = block % P.n_tiles;
    const std::size_t first = pass * P.batch, left = P.targets(s0) - first;
    const std::size_t n_acc = left < P.batch ? left : P.batch;
    const std::size_t W = P.row_words();
    std::uint64_t* rows = reinterpret_cast<std::uint64_t*>(acc + P.batch);
    if (phase == 0) {
        auto* w = reinterpret_cast<std::uint64_t*>(acc);
        for (std::size_t i = tid; i < n_acc * BlockAccumulator::kWords; i += nthreads) {
            w[i] = i % BlockAccumulator::kWords == BlockAccumulator::kMinKeyWord ? ~std::uint64_t{0} : 0u;
        }
        for (std::size_t i = tid; i < n_acc * W; i += nthreads) rows[i] = 0u;
    } else if (phase == 1 || phase == 2) {
        const bool tops = phase == 1;
        if (tops && !P.with_rows) {
            return;
        }
        const bool row_here = first == 0u;
        const std::size_t R = P.groups(s0);
        const std::size_t begin = t * P.tile_members;
        const std::size_t end = begin + P.tile_members < in.chunk ? begin + P.tile_members : in.chunk;
        const double* row = in.row(s0);
        // NOTE: no 64-bit division per member (a called routine on the device): a timed row's output time, and the
        // group of this thread's first member, are taken once, the group then stepped by nthreads modulo R.
        const bool timed = s0 < in.base_series && s0 < in.timed_series;
        const long long time_index = timed ? static_cast<long long>(s0 % in.nt) : 0;
        const std::size_t step = R > 0u ? nthreads % R : 0u;
        std::size_t g = R > 0u ? static_cast<std::size_t>((in.first_member + begin + tid) % R) : 0u;
        std::uint64_t n = 0u, nf = 0u, lo = ~std::uint64_t{0}, hi = 0u;
        // NOTE: the loop's bound is the block's, not the thread's, so a warp stays converged for the row's
        // warp-wide sums (block_add_row_sums); thread tid takes member at + tid.
        for (std::size_t at = begin; at < end; at += nthreads) {
            const std::size_t j = at + tid;
            const std::size_t target = 1u + g; // member j's group g is target 1 + g
            g = g + step >= R ? g + step - R : g + step;
            const double x = j < end ? row[j] : 0.0;
            bool take = j < end && (timed ? in.times_counted(j) > time_index : in.included(j, s0, x));
            // NOTE: in this pass when target falls in [first, first + n_acc)
            BlockAccumulator* group =
                take && R > 0u && target >= first && target < first + n_acc ? acc + (target - first) : nullptr;
            bool mine = take && row_here;
            const detail::Decoded d = detail::decode(x);
            if ((mine || group != nullptr) && !d.finite) {
                if (!tops) {
                    nf += mine ? 1u : 0u;
                    if (group != nullptr) detail::block_add_word(&group->nonfinite, 1u);
                }
                mine = false;
                group = nullptr;
            }
            if (P.with_rows) {
                if (mine) detail::block_row_add(P.binner, rows, x, tops);
                if (group != nullptr) detail::block_row_add(P.binner, rows + (group - acc) * W, x, tops);
            }
            if (tops) {
                continue;
            }
            if (mine || group != nullptr) {
                const std::uint64_t key = detail::order_key(x == 0.0 ? 0.0 : x);
                if (mine) {
                    ++n;
                    lo = key < lo ? key : lo;
                    hi = key > hi ? key : hi;
                }
                if (group != nullptr) {
                    detail::block_add_word(&group->count, 1u);
                    detail::block_min_word(&group->min_key, key);
                    detail::block_max_word(&group->max_key, key);
                }
            }
            // ±0 adds nothing to the sums
            take = (mine || group != nullptr) && d.m != 0u;
            std::int64_t p1[ExactSum::kPieces] = {};
            std::int64_t p2[ExactSquareSum::kPieces] = {};
            const int k1 = take ? ExactSum::pieces(d, p1) : -1;
            const int k2 = take ? ExactSquareSum::pieces(d, p2) : -1;
            if (row_here) {
                detail::block_add_row_sums(acc, mine && take, k1, p1, d.negative, k2, p2);
            }
            if (group != nullptr && take) {
                detail::block_add_pieces(group->sum, k1, p1, d.negative);
                detail::block_add_pieces(group->sum_sq, k2, p2, false);
            }
        }
        if (row_here && !tops) {
            if (n > 0u) {
                detail::block_add_word(&acc->count, n);
                detail::block_min_word(&acc->min_key, lo);
                detail::block_max_word(&acc->max_key, hi);
            }
            if (nf > 0u) detail::block_add_word(&acc->nonfinite, nf);
        }
    } else if (phase == 3) {
        for (std::size_t a = tid; a < n_acc; a += nthreads) {
            const BlockAccumulator& b = acc[a];
            if (b.count == 0u && b.nonfinite == 0u) {
                continue; // nothing to add: no global write
            }
            SeriesPartial& gp = partials[P.series(s0, first + a) * P.n_tiles + t];
            if (b.count > 0u) {
                const double bl = detail::key_value(b.min_key), bh = detail::key_value(b.max_key);
                gp.min = gp.count == 0u || bl < gp.min ? bl : gp.min;
                gp.max = gp.count == 0u || bh > gp.max ? bh : gp.max;
                // NOTE: the limbs to come add at most b.count pieces to each limb (less than 2^32 each)
                const auto added = static_cast<std::int32_t>(b.count);
                auto& f1 = gp.sum.fixed();
                auto& f2 = gp.sum_sq.fixed();
                if (f1.pending >= f1.kNormalizeEvery - added) f1.normalize();
                if (f2.pending >= f2.kNormalizeEvery - added) f2.normalize();
                f1.pending += added;
                f2.pending += added;
            }
            gp.count += b.count;
            gp.nonfinite += b.nonfinite;
        }
    }
    if (phase >= 3 && P.with_rows) {
        for (std::size_t a = 0; a < n_acc; ++a) {
            if (acc[a].count == 0u) {
                continue; // an empty row (finite values only are binned, and each is counted)
            }
            detail::block_row_merge(P.binner, counts + (P.series(s0, first + a) * P.n_tiles + t) * W, rows + a * W,
                                    phase == 4, tid, nthreads);
        }
    }
    if (phase == 4) {
        for (std::size_t i = tid; i < n_acc * BlockAccumulator::kLimbWords; i += nthreads) {
            const std::size_t a = i / BlockAccumulator::kLimbWords, l = i % BlockAccumulator::kLimbWords;
            const std::int64_t v = l < ExactSum::kLimbs ? acc[a].sum[l] : acc[a].sum_sq[l - ExactSum::kLimbs];
            if (v == 0) {
                continue;
            }
            SeriesPartial& gp = partials[P.series(s0, first + a) * P.n_tiles + t];
            if (l < ExactSum::kLimbs) {
                gp.sum.fixed().limb[l] += v;
            } else {
                gp.sum_sq.fixed().limb[l - ExactSum::kLimbs] += v;
            }
        }
    }
}

/** @brief Shared memory of one block of `P`: its accumulators and histogram rows. */
inline std::size_t block_shared_bytes(const BlockPlan& P) { return P.batch * P.target_bytes(); }

/**
 * @brief The host twin of the device's block reduction: every block, pass and phase of `P` in the device's order,
 *        a block's `threads` threads one after the other within a phase. Adds into `partials` (n_series·n_tiles,
 *        initialised once to SeriesPartial{}, as for accumulate_chunk) and, with rows, `counts` (n_series·n_tiles
 *        rows of zeros at first); combine_tiles merges them.
 */
inline void block_reduce_host(const BlockPlan& P, SeriesPartial* partials, std::uint64_t* counts, unsigned threads) {
    std::vector<std::uint64_t> shared(block_shared_bytes(P) / 8u);
    auto* acc = reinterpret_cast<BlockAccumulator*>(shared.data());
    for (std::size_t b = 0; b < P.blocks(); ++b) {
        for (std::size_t pass = 0; pass < P.passes(b / P.n_tiles); ++pass) {
            for (int phase = 0; phase < BlockPlan::kPhases; ++phase) {
                for (unsigned tid = 0; tid < threads; ++tid) {
                    block_reduce_phase(phase, P, b, pass, acc, partials, counts, tid, threads);
                }
            }
        }
    }
}

} // namespace nhvk::stats
