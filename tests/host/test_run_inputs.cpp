// SPDX-License-Identifier: MIT
// Issue 38 items 4, 12, 13 and 14 end to end with the built `nhvk`: the model file is part of a run's identity (merge
// and resume refuse a part or record of another version of it), a model file that is not a regular file is refused
// before it is opened (a FIFO would block), no output may be an input of the run, and every output path is checked
// against the system's limits before any work.
#include "nhvk_cli.hpp"
#include "temp_dir.hpp"
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#ifndef NHVK_BINARY
#error "tests/CMakeLists.txt defines NHVK_BINARY"
#endif

namespace {

using TempDir = nhvk_test::TempDir; // named after the test
using nhvk_test::CliRun;
using nhvk_test::read_text;
namespace fs = std::filesystem;

// NOTE: the model files here are interpreted (no compiler: NHVK_CXX names none), so that no test waits for a compile;
// `timeout` ends a run that would block (a FIFO opened for reading waits for a writer forever).
const std::string interpreted = "NHVK_CXX=/nonexistent/c++ timeout 120";

CliRun nhvk(const std::vector<std::string>& args, const TempDir& tmp, const std::string& env = interpreted) {
    return nhvk_test::run_captured(env, NHVK_BINARY, args, tmp.path() / "io");
}

const std::string particle_model = "name = \"file_particle\"\n"
                                   "coordinates = [\"x\", \"y\", \"z\"]\n"
                                   "lagrangian = \"0.5*(x'^2 + y'^2 + z'^2)\"\n"
                                   "constraints = [\"z' - y*x'\"]\n";

/** A run of the model file `model` (a path relative to the config's folder): a small ensemble, quick interpreted. */
std::string particle_config(const std::string& model) {
    return "[model]\nfile = \"" + model +
           "\"\n"
           "[initial.q]\nx = { dist = \"uniform\", low = -1.0, high = 1.0 }\ny = 0.5\nz = 0.0\n"
           "[initial.v]\nx = { dist = \"normal\", mean = 0.0, std = 1.0 }\ny = 1.0\nz = 0.0\n"
           "[times]\nt_end = 0.5\ncount = 5\n"
           "[run]\ntrajectories = 60\n";
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary | std::ios::trunc) << text; }

/** The folder's entries, names only (sorted). */
std::vector<std::string> names(const fs::path& dir) {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
}

/** The same model with another constraint: what an edit of the file between two parts makes. */
std::string edited(std::string model) {
    const std::string from = "z' - y*x'";
    model.replace(model.find(from), from.size(), "z' - x*y'");
    return model;
}

// ---------------------------------------------------------------------------------------------------------------
// Item 4: the model file's text is part of the run's identity

std::vector<std::string> shard_args(const fs::path& cfg, const fs::path& out, int i) {
    return {"run", cfg.string(), "--out", out.string(), "--threads", "1", "-q", "--shard", std::to_string(i) + "/2"};
}

TEST(RunIdentity, MergeRefusesPartsOfAnEditedModelFile) {
    TempDir tmp;
    const fs::path cfg = tmp.path() / "c.toml", model = tmp.path() / "m.toml";
    write(model, particle_model);
    write(cfg, particle_config("m.toml"));
    const fs::path s0 = tmp.path() / "s0", s1 = tmp.path() / "s1", s1e = tmp.path() / "s1e";
    ASSERT_EQ(nhvk(shard_args(cfg, s0, 0), tmp).rc, 0) << read_text(tmp.path() / "io" / "stderr.txt");
    ASSERT_EQ(nhvk(shard_args(cfg, s1, 1), tmp).rc, 0);
    // the parts of one version of the model merge (the control)
    const CliRun ok = nhvk({"merge", s0.string(), s1.string(), "--out", (tmp.path() / "merged").string(), "-q"}, tmp);
    ASSERT_EQ(ok.rc, 0) << ok.err;
    // the model file edited after both parts ran: the merge, which reads it again, refuses
    write(model, edited(particle_model));
    const fs::path out = tmp.path() / "merged2";
    const CliRun after = nhvk({"merge", s0.string(), s1.string(), "--out", out.string(), "-q"}, tmp);
    EXPECT_EQ(after.rc, 2) << after.err;
    EXPECT_NE(after.err.find("the model file '" + model.string() + "'"), std::string::npos) << after.err;
    EXPECT_NE(after.err.find("has changed since they ran"), std::string::npos) << after.err;
    EXPECT_FALSE(fs::exists(out));
    // a part run after the edit is a part of another run
    ASSERT_EQ(nhvk(shard_args(cfg, s1e, 1), tmp).rc, 0);
    const CliRun mixed = nhvk({"merge", s0.string(), s1e.string(), "--out", out.string(), "-q"}, tmp);
    EXPECT_EQ(mixed.rc, 2) << mixed.err;
    EXPECT_NE(mixed.err.find("the same configuration with different models"), std::string::npos) << mixed.err;
    EXPECT_FALSE(fs::exists(out));
    // and the summaries say so: the config hash covers the model
    EXPECT_NE(nhvk_test::read_json(s0 / "summary.json")["job"]["config_hash"],
              nhvk_test::read_json(s1e / "summary.json")["job"]["config_hash"]);
}

TEST(RunIdentity, ResumeRefusesARecordOfAnEditedModelFile) {
    TempDir tmp;
    const fs::path cfg = tmp.path() / "c.toml", model = tmp.path() / "m.toml", out = tmp.path() / "out";
    write(model, particle_model);
    write(cfg, particle_config("m.toml"));
    std::vector<std::string> args = {"run",     cfg.string(), "--out", out.string(), "--threads",          "1",
                                     "--chunk", "10",         "-q",    "--resume",   "--checkpoint-every", "0"};
    const CliRun killed = nhvk(args, tmp, interpreted + " env NHVK_TEST_SIGNAL_AFTER_CHUNK=2,9");
    ASSERT_EQ(killed.rc, 128 + 9) << killed.err;
    const std::string record = read_text(out / "resume.nhvk");
    ASSERT_GT(record.size(), 100u);
    write(model, edited(particle_model));
    const CliRun r = nhvk(args, tmp);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("the same configuration with another model"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("run without --resume to start over"), std::string::npos) << r.err;
    EXPECT_EQ(read_text(out / "resume.nhvk"), record);
    EXPECT_FALSE(fs::exists(out / "summary.json"));
    // the model as it was: the record is taken
    write(model, particle_model);
    const CliRun resumed = nhvk(args, tmp);
    EXPECT_EQ(resumed.rc, 0) << resumed.err;
    const nlohmann::json at = nhvk_test::read_json(out / "summary.json")["job"]["resumed_at"];
    EXPECT_TRUE(at.is_number_integer() && at.get<int>() > 0) << at;
}

// ---------------------------------------------------------------------------------------------------------------
// Item 12 (and 15): a model file that is not a regular file is refused before it is opened

TEST(RunInputs, ModelFileThatIsAFifoOrAFolderIsRefusedAtOnce) {
    TempDir tmp;
    const fs::path fifo = tmp.path() / "pipe.toml", folder = tmp.path() / "folder.toml";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    fs::create_directory(folder);
    struct Case {
        fs::path model;
        std::string kind;
    };
    for (const Case& c :
         {Case{fifo, "is a FIFO (named pipe), not a model file"}, Case{folder, "is a folder, not a model file"}}) {
        const std::vector<std::vector<std::string>> commands = {
            {"inspect", c.model.string()},
            {"trajectory", "--model", c.model.string(), "--q0", "0,0,0", "--v0", "1,0,0", "--t-end", "1"}};
        for (const std::vector<std::string>& args : commands) {
            // NOTE: a short limit: before the fix the first of these waits for a writer until `timeout` ends it
            const CliRun r = nhvk(args, tmp, "NHVK_CXX=/nonexistent/c++ timeout 20");
            EXPECT_EQ(r.rc, 2) << args[0] << " " << c.model << ": " << r.err;
            EXPECT_NE(r.err.find("'" + c.model.string() + "' " + c.kind), std::string::npos) << r.err;
        }
        const fs::path cfg = tmp.path() / "c.toml";
        write(cfg, particle_config(c.model.filename().string()));
        const CliRun r = nhvk({"run", cfg.string(), "--out", (tmp.path() / "out").string(), "-q"}, tmp);
        EXPECT_EQ(r.rc, 2) << r.err;
        EXPECT_NE(r.err.find("model.file: '" + c.model.string() + "' " + c.kind), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(tmp.path() / "out"));
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Item 13: no output may be an input of the run

TEST(RunInputs, SummaryMdCannotReplaceTheModelFile) {
    TempDir tmp;
    const fs::path cfg = tmp.path() / "c.toml", model = tmp.path() / "m.toml", out = tmp.path() / "out";
    write(model, particle_model);
    write(cfg, particle_config("m.toml"));
    fs::create_hard_link(model, tmp.path() / "hard.md");
    fs::create_symlink(model, tmp.path() / "soft.md");
    for (const fs::path& md : {model, tmp.path() / "hard.md", tmp.path() / "soft.md"}) {
        const CliRun r = nhvk({"run", cfg.string(), "--out", out.string(), "-q", "--summary-md", md.string()}, tmp);
        EXPECT_EQ(r.rc, 2) << md << ": " << r.err;
        EXPECT_NE(r.err.find("--summary-md: '" + md.string() + "' is '" + model.string() + "', an input"),
                  std::string::npos)
            << r.err;
        EXPECT_FALSE(fs::exists(out)) << md << ": the run started";
        EXPECT_EQ(read_text(model), particle_model);
        EXPECT_TRUE(fs::is_symlink(tmp.path() / "soft.md"));
    }
    // merge reads the model file again: it is an input of the merge too
    const fs::path s0 = tmp.path() / "s0", s1 = tmp.path() / "s1";
    ASSERT_EQ(nhvk(shard_args(cfg, s0, 0), tmp).rc, 0);
    ASSERT_EQ(nhvk(shard_args(cfg, s1, 1), tmp).rc, 0);
    const CliRun m = nhvk({"merge", s0.string(), s1.string(), "--out", (tmp.path() / "merged").string(), "-q",
                           "--summary-md", (tmp.path() / "hard.md").string()},
                          tmp);
    EXPECT_EQ(m.rc, 2) << m.err;
    EXPECT_NE(m.err.find("an input of this command"), std::string::npos) << m.err;
    EXPECT_EQ(read_text(model), particle_model);
    EXPECT_FALSE(fs::exists(tmp.path() / "merged"));
}

TEST(RunInputs, OutputFolderCannotHoldAnInputUnderAnOutputName) {
    TempDir tmp;
    // a config named like an output, in the folder given as --out: the run would write its summary.md over it
    const fs::path cfg = tmp.path() / "summary.md";
    const std::string text = read_text(std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml");
    write(cfg, text);
    const std::vector<std::string> before = names(tmp.path());
    const CliRun r = nhvk(
        {"run", cfg.string(), "--out", tmp.path().string(), "--trajectories", "20", "--threads", "1", "-q"}, tmp, "");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find("run.out: the output folder '" + tmp.path().string() + "' holds 'summary.md', an input"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(read_text(cfg), text);
    std::vector<std::string> after = names(tmp.path());
    after.erase(std::remove(after.begin(), after.end(), "io"), after.end());
    EXPECT_EQ(after, before);
}

TEST(RunInputs, ReportCannotReplaceWhatItIsRenderedFrom) {
    TempDir tmp;
    const fs::path out = tmp.path() / "out";
    const std::string cfg = std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml";
    ASSERT_EQ(nhvk({"run", cfg, "--out", out.string(), "--trajectories", "20", "--threads", "1", "-q"}, tmp, "").rc, 0);
    fs::create_symlink(out / "stats.csv", tmp.path() / "stats_link.html");
    for (const fs::path& page : {out / "summary.json", tmp.path() / "stats_link.html"}) {
        const std::string summary = read_text(out / "summary.json"), stats = read_text(out / "stats.csv");
        const CliRun r = nhvk({"report", out.string(), "--out", page.string()}, tmp, "");
        EXPECT_EQ(r.rc, 2) << page << ": " << r.err;
        EXPECT_NE(r.err.find("--out: '" + page.string() + "' is '"), std::string::npos) << r.err;
        EXPECT_EQ(read_text(out / "summary.json"), summary);
        EXPECT_EQ(read_text(out / "stats.csv"), stats);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Item 14: every output path is checked before any work

TEST(RunInputs, OutputPathsBeyondTheSystemsLimitsAreRefusedBeforeAnyWork) {
    TempDir tmp;
    const std::string cfg = std::string(NHVK_SOURCE_DIR) + "/configs/nh_particle.toml";
    auto run = [&](const fs::path& out, const std::vector<std::string>& more = {}) {
        std::vector<std::string> a = {"run", cfg,         "--out", out.string(), "--trajectories",
                                      "20",  "--threads", "1",     "-q",         "--save-trajectories",
                                      "1"};
        a.insert(a.end(), more.begin(), more.end());
        return nhvk(a, tmp, "");
    };
    // a component of 300 bytes
    const fs::path top = tmp.path() / "top";
    // NOTE: exit 1, as for any output folder that cannot be created (an I/O failure), but before any work
    const CliRun name = run(top / std::string(300, 'a') / "out");
    EXPECT_EQ(name.rc, 1) << name.err;
    EXPECT_NE(name.err.find("run.out: cannot create output folder"), std::string::npos) << name.err;
    EXPECT_NE(name.err.find("is 300 bytes long, more than the"), std::string::npos) << name.err;
    EXPECT_NE(name.err.find("(NAME_MAX)"), std::string::npos) << name.err;
    EXPECT_FALSE(fs::exists(top));
    // a path that fits, but not with the names written under it (trajectories/trajectory_000000.csv.tmp.<pid>)
    fs::path deep = top;
    while (deep.string().size() + 201 < PATH_MAX - 30) deep /= std::string(200, 'b');
    deep /= std::string(PATH_MAX - 30 - deep.string().size() - 1, 'c');
    ASSERT_EQ(deep.string().size(), static_cast<std::size_t>(PATH_MAX - 30));
    const CliRun path = run(deep);
    EXPECT_EQ(path.rc, 1) << path.err;
    EXPECT_NE(path.err.find("(PATH_MAX)"), std::string::npos) << path.err;
    EXPECT_LT(path.err.size(), 1000u) << "the path is clipped in the message";
    EXPECT_FALSE(fs::exists(top));
    // --summary-md: the same limits
    const CliRun md =
        run(tmp.path() / "out", {"--summary-md", (tmp.path() / (std::string(300, 'm') + ".md")).string()});
    EXPECT_EQ(md.rc, 2) << md.err;
    EXPECT_NE(md.err.find("--summary-md: "), std::string::npos) << md.err;
    EXPECT_NE(md.err.find("(NAME_MAX)"), std::string::npos) << md.err;
    EXPECT_FALSE(fs::exists(tmp.path() / "out"));
}

} // namespace
