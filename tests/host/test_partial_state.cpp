// SPDX-License-Identifier: MIT
// The partial-state file of issue 8 (pipeline/partial_state.hpp): index ranges split exactly, a state survives the
// round trip through bytes, and a damaged, cut or foreign file is refused with a message naming it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "pipeline/partial_state.hpp"

namespace {

using namespace nhvk;

TEST(PartialState, SplitRangeCoversEveryIndexOnceInEqualParts) {
    for (std::uint64_t n : {0ull, 1ull, 7ull, 403ull, 1000003ull})
        for (int parts : {1, 2, 3, 4, 7, 64}) {
            std::uint64_t expect = 5, lo = ~0ull, hi = 0;
            for (int i = 0; i < parts; ++i) {
                const IndexRange r = split_range({5, 5 + n}, i, parts);
                EXPECT_EQ(r.first, expect) << n << " " << parts << " " << i;
                expect = r.end;
                lo = std::min(lo, r.size());
                hi = std::max(hi, r.size());
            }
            EXPECT_EQ(expect, 5 + n);
            EXPECT_LE(hi - lo, 1u);
        }
}

PartialState sample_state() {
    PartialState s;
    s.id = {nhvk_version, 0x1234abcdu, 1000, 42};
    s.source = {"cfg.toml", "[model]\nname = \"nh_particle\"\n", {"run.seed=3"}, {{"--out", "run.out", "x", true}}};
    s.shard_index = 2;
    s.shard_count = 4;
    s.rank = 1;
    s.ranks = 3;
    s.range = {500, 750};
    s.next = 600;
    s.backend = "cpu";
    s.seconds = 1.5;
    s.tally.valid = 97;
    s.tally.failed_by_status[2] = 3;
    s.tally.onset = stats::OnsetHistogram(3);
    s.tally.onset.counts = {1, 2, 90};
    s.tally.onset.never = 4;
    s.tally.diverged = 5;
    s.tally.diverged_at = {0, 2, 3};
    s.statistics = std::string("\0\1\2 statistics", 15);
    s.samples_bytes = 12345;
    s.members_bytes = 67890;
    s.saved = "saved";
    return s;
}

TEST(PartialState, RoundTripKeepsEveryField) {
    const PartialState a = sample_state();
    const PartialState b = decode_state(encode_state(a), "test");
    EXPECT_EQ(b.id.version, a.id.version);
    EXPECT_EQ(b.id.config_hash, a.id.config_hash);
    EXPECT_EQ(b.id.trajectories, 1000u);
    EXPECT_EQ(b.id.seed, 42u);
    EXPECT_EQ(b.source.text, a.source.text);
    ASSERT_EQ(b.source.sets.size(), 1u);
    ASSERT_EQ(b.source.options.size(), 1u);
    EXPECT_EQ(b.source.options[0].value, "x");
    EXPECT_TRUE(b.source.options[0].is_string);
    EXPECT_EQ(b.shard_index, 2);
    EXPECT_EQ(b.ranks, 3);
    EXPECT_EQ(b.range.first, 500u);
    EXPECT_EQ(b.next, 600u);
    EXPECT_FALSE(b.complete());
    EXPECT_EQ(b.tally.valid, 97u);
    EXPECT_EQ(b.tally.failed_by_status[2], 3u);
    EXPECT_EQ(b.tally.onset.counts, a.tally.onset.counts);
    EXPECT_EQ(b.tally.onset.never, 4u);
    EXPECT_EQ(b.tally.diverged, 5u);
    EXPECT_EQ(b.tally.diverged_at, (std::vector<std::uint64_t>{0, 2, 3}));
    EXPECT_EQ(b.statistics, a.statistics);
    EXPECT_EQ(b.samples_bytes, 12345u);
    EXPECT_EQ(b.members_bytes, 67890u);
    EXPECT_EQ(b.saved, "saved");
}

void expect_refused(const std::string& bytes, const std::string& words) {
    try {
        decode_state(bytes, "the/file");
        ADD_FAILURE() << "accepted; expected: " << words;
    } catch (const std::runtime_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("the/file"), std::string::npos) << m;
        EXPECT_NE(m.find(words), std::string::npos) << m;
    }
}

TEST(PartialState, DamagedCutForeignAndOtherVersionsAreRefused) {
    const std::string good = encode_state(sample_state());
    for (std::size_t at : {std::size_t{30}, good.size() / 2, good.size() - 9}) {
        std::string bad = good;
        bad[at] ^= 1;
        expect_refused(bad, "checksum mismatch");
    }
    expect_refused(good.substr(0, good.size() - 1), "truncated");
    expect_refused(good + "x", "truncated or extended");
    expect_refused("hello world, not a state file at all", "not an nhvk state file");
    PartialState other = sample_state();
    other.id.version = "0.0.9";
    expect_refused(encode_state(other), "written by nhvk 0.0.9");
    // a record of the layout before the signed histogram (magic v2, otherwise valid) is refused by name
    std::string v2 = good;
    v2[12] = '2';
    expect_refused(v2, "NHVK-STATE-v2");
    // and one of the layout before the replica groups and the diverged count (v3)
    std::string v3 = good;
    v3[12] = '3';
    expect_refused(v3, "NHVK-STATE-v3");
    // and one without members.nc's byte count (v4)
    std::string v4 = good;
    v4[12] = '4';
    expect_refused(v4, "NHVK-STATE-v4");
    PartialState inconsistent = sample_state();
    inconsistent.next = 800; // beyond its range
    expect_refused(encode_state(inconsistent), "inconsistent index range");
}

} // namespace
