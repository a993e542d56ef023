// SPDX-License-Identifier: MIT
// Model files too large or too deep for the code that reads them (issue 38 item 9: a flat sum of 10^5 terms, 3·10^4
// nested parentheses or `sin(`, 10^5 unary minus signs and a `^` tower 2·10^4 deep each overflowed the stack): the
// loader refuses what is past a stated limit with the file, key and limit, and the walks over what it accepts (the
// ordering of the definitions, the emitter's printer) use no recursion, which the tests check by running them on a
// thread with a small stack, in a forked child (a stack overflow is then an outcome, not the end of the tests).
#include <gtest/gtest.h>
#include <pthread.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "child_outcome.hpp"
#include "input_limits.hpp"
#include "modelfile/model_file.hpp"
#include "sym/parse.hpp"

namespace {

using nhvk::modelfile::load_model_text;

/** A model file with `lagrangian_tail` added to the particle's Lagrangian and `more` appended. */
std::string model(const std::string& lagrangian_tail, const std::string& more = "") {
    return "name = \"particle\"\ncoordinates = [\"x\", \"y\", \"z\"]\nlagrangian = \"0.5*(x'^2 + y'^2 + z'^2)" +
           lagrangian_tail + "\"\nconstraints = [\"z' - y*x'\"]\n" + more;
}

/** Runs `body` on a thread with a stack of `bytes`, in a forked child; a std::runtime_error is the refused
 *  outcome (exit 2), a stack overflow a crash. */
nhvk_test::ChildOutcome on_small_stack(const std::function<void()>& body, std::size_t bytes) {
    return nhvk_test::run_in_child<std::runtime_error>(
        [&] {
            struct Call {
                const std::function<void()>* body;
                std::string error;
            } call{&body, {}};
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            pthread_attr_setstacksize(&attr, bytes);
            pthread_t thread;
            const auto run = [](void* p) -> void* {
                Call& c = *static_cast<Call*>(p);
                try {
                    (*c.body)();
                } catch (const std::exception& e) {
                    c.error = e.what();
                }
                return nullptr;
            };
            if (pthread_create(&thread, &attr, run, &call) != 0) throw std::logic_error("pthread_create failed");
            pthread_join(thread, nullptr);
            pthread_attr_destroy(&attr);
            if (!call.error.empty()) throw std::runtime_error(call.error);
        },
        120);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t small_stack = 1024 * 1024; // AddressSanitizer's frames are several times larger
#else
constexpr std::size_t small_stack = 256 * 1024;
#endif

/** The message of loading `text` as "m.toml" in a child, on a thread with a stack of `bytes` (empty when it loads;
 *  a test failure when it neither loads nor is refused with a message). */
std::string error_of(const std::string& text, std::size_t bytes = 8 * 1024 * 1024) {
    const nhvk_test::ChildOutcome o =
        on_small_stack([&] { (void)load_model_text(text, "m.toml", "", "m", {}); }, bytes);
    EXPECT_TRUE(o.clean()) << nhvk_test::describe(o) << " " << o.message.substr(0, 400);
    return o.refused() ? o.message : std::string();
}

std::string repeat(const std::string& s, int times) {
    std::string r;
    for (int i = 0; i < times; ++i) r += s;
    return r;
}

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack).substr(0, 400)

const std::string too_deep = "nests deeper than " + std::to_string(nhvk::sym::max_nesting) + " levels";

/** `message` refuses an expression that nests too deep, at `where` ("m.toml:3:"), in `key`. */
void expect_too_deep(const std::string& message, const std::string& where, const std::string& key) {
    EXPECT_HAS(message, where);
    EXPECT_HAS(message, ": " + key + ": ");
    EXPECT_HAS(message, too_deep);
}

TEST(ModelFileLimits, DeepNestingIsRefusedWithTheFileTheKeyAndTheLimit) {
    expect_too_deep(error_of(model(" + " + repeat("(", 30000) + "x" + repeat(")", 30000))), "m.toml:3:", "lagrangian");
    expect_too_deep(
        error_of(model("", "forces = [\"0\", \"" + repeat("sin(", 30000) + "y" + repeat(")", 30000) + "\", \"0\"]\n")),
        "m.toml:5:", "forces[1]");
    expect_too_deep(error_of(model(" + d", "[definitions]\nd = \"" + repeat("x^", 20000) + "x\"\n")),
                    "m.toml:6:", "definitions.d");
    expect_too_deep(error_of(model("", "chart = [\"" + repeat("abs(", 300) + "x" + repeat(")", 300) + " > 0\"]\n")),
                    "m.toml:5:", "chart[0]");
    // up to the limit, a model loads
    const int ok = nhvk::sym::max_nesting;
    EXPECT_EQ(error_of(model(" + " + repeat("(", ok) + "x" + repeat(")", ok))), "");
}

TEST(ModelFileLimits, AnyNumberOfSignsLoads) {
    EXPECT_EQ(error_of(model(" + " + std::string(1000000, '-') + "x")), "");
    const nhvk::modelfile::FileModel m =
        load_model_text(model(" + " + std::string(1000001, '-') + "x"), "m.toml", "", "m", {});
    EXPECT_LT(m.graph->size(), 30); // the signs cancel in pairs: one negation is left
}

// A flat sum is read in a loop, but its graph is a chain as long as the sum: past max_model_nodes it is refused, with
// the limit, the key and the place in the file where the model grew past it.
TEST(ModelFileLimits, ASumPastTheNodeLimitIsRefusedWithTheLimit) {
    const int limit = nhvk::modelfile::max_model_nodes;
    std::string sum;
    for (int i = 0; i < 100000; ++i) sum += " + " + std::to_string(i + 2) + "*x";
    const std::string e = error_of(model(sum));
    EXPECT_HAS(e, "m.toml:3:");
    EXPECT_HAS(e, ": lagrangian: the expressions grow past " + std::to_string(limit) + " nodes here");
    EXPECT_HAS(e, "the most a model may have");
    // the message quotes a window of the megabyte-long line around the place, with the caret under it
    EXPECT_LT(e.size(), 800u) << e.substr(0, 2000);
    const std::size_t quote = e.find("\n    ..."), caret = e.find('^', quote);
    ASSERT_NE(caret, std::string::npos) << e;
    const std::size_t above = quote + 1 + (caret - (e.rfind('\n', caret) + 1)); // the character over the caret
    EXPECT_TRUE(e[above] == '*' || e[above] == '+') << e; // the token read when a term's node crossed the limit
    // every variant's expressions count together: a flag doubles the chain of additions (the products are shared)
    const int terms = limit * 2 / 7; // about 3 nodes a term in one variant, 4 in two
    std::string shorter;
    for (int i = 0; i < terms; ++i) shorter += " + " + std::to_string(i + 2) + "*x";
    EXPECT_EQ(error_of(model(" + (x" + shorter + ")")), "");
    const std::string flag = "[parameters]\na = { default = true }\n";
    EXPECT_HAS(error_of(model(" + (if(a, x, y)" + shorter + ")", flag)), "grow past");
}

// A model just under the node limit whose Lagrangian is a chain as deep as the limit (a sum of alternating terms,
// each sum a new node) is emitted, CPU and CUDA units, on a small stack: the printer walks with an explicit stack.
TEST(ModelFileLimits, AModelAsDeepAsTheNodeLimitIsEmittedWithoutRecursion) {
    std::string chain;
    for (int i = 0; i < nhvk::modelfile::max_model_nodes - 40; ++i) chain += i % 2 ? " + y" : " + x";
    const std::string text = model(chain);
    std::size_t cpu_bytes = 0, cuda_bytes = 0;
    const nhvk_test::ChildOutcome o = on_small_stack(
        [&] {
            const nhvk::modelfile::FileModel m = load_model_text(text, "m.toml", "", "m", {});
            if (m.graph->size() < nhvk::modelfile::max_model_nodes - 60) throw std::logic_error("not a deep model");
            cpu_bytes = nhvk::modelfile::emit_model_unit(m).size();
            cuda_bytes = nhvk::modelfile::emit_model_cuda_unit(m).size();
            if (cpu_bytes == 0 || cuda_bytes == 0) throw std::logic_error("nothing emitted");
        },
        small_stack);
    EXPECT_EQ(o.status, 0) << nhvk_test::describe(o) << " " << o.message;
}

// The definitions are ordered by a walk over their uses with an explicit stack: a chain of definitions as long as
// the file loads on a small stack. NOTE: each uses the next in the order of their names, the order of the walk, so
// that the walk goes down the whole chain at once.
TEST(ModelFileLimits, AChainOfDefinitionsIsOrderedWithoutRecursion) {
    constexpr int chain = 5000;
    const auto name = [](int i) {
        const std::string digits = std::to_string(i);
        return "d" + std::string(5 - digits.size(), '0') + digits;
    };
    std::string defs = "[definitions]\n";
    for (int i = 0; i + 1 < chain; ++i) defs += name(i) + " = \"" + name(i + 1) + "\"\n";
    const std::string last = name(chain - 1) + " = \"x\"\n";
    const std::string text = model(" + " + name(0), defs + last);
    EXPECT_EQ(error_of(text, small_stack), "");
    // a cycle through the whole chain is still found, and named
    const std::string cycle = error_of(model(" + " + name(0), defs + name(chain - 1) + " = \"" + name(0) + "\"\n"));
    EXPECT_HAS(cycle, "is defined in terms of itself (a cycle)");
    EXPECT_HAS(cycle, "definitions." + name(0) + ": ");
}

// A model file nested deeper than a config may be is refused before the TOML parser, which recurses, as a config is.
TEST(ModelFileLimits, DeepTomlIsRefusedBeforeTheParser) {
    const std::string deep = model("", "[" + repeat("a.", 50000) + "b]\nc = 1\n");
    const std::string e = error_of(deep);
    EXPECT_HAS(e, "m.toml:5: nested too deep: expected at most " + std::to_string(nhvk::max_nesting_depth));
    // arrays and inline tables too, before the TOML parser's own limit (256 nested values)
    EXPECT_HAS(error_of(model("", "x = " + repeat("[", 200) + repeat("]", 200) + "\n")), "nested too deep");
}

} // namespace
