// SPDX-License-Identifier: MIT
// Loading and validating `nhvk run` configurations; the schema is documented in config.hpp.
#include "config.hpp"
#include "config_schema.hpp"
#include "nhvk/step_budget.hpp"

#include "checks.hpp"
#include "edit_distance.hpp"
#include "input_limits.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <toml++/toml.h>

#include "modelfile/file_models.hpp"
#include "sweep_design.hpp"

namespace nhvk {

const std::vector<std::string>& fit_statistics() {
    static const std::vector<std::string> s = {"median", "mean", "p05", "p25", "p75", "p95"};
    return s;
}

const std::vector<ConfigTable>& config_sections() {
    static const std::vector<ConfigTable> sections = {
        {"", {"model", "initial", "integrator", "times", "divergence", "statistics", "diagnostics", "run", "sweep"}},
        // a built-in model's name, or a model file, or an inline model: every key of a model (modelfile/)
        {"model",
         [] {
             std::vector<std::string> keys{"name", "params", "file"};
             for (const std::string& k : modelfile::model_keys())
                 if (k != "name") keys.push_back(k);
             return keys;
         }()},
        {"initial", {"t0", "energy", "q", "v", "mu"}},
        {"integrator", {"method", "rtol", "atol", "dt", "min_step", "max_steps", "project", "precision", "equations"}},
        {"times", {"t_end", "spacing", "count", "t_first", "list"}},
        {"divergence",
         {"coordinates", "weights", "metric", "onset_threshold", "growth_t_max", "stop_at", "fit", "rate"}},
        {"divergence.fit", {"statistic", "window", "exponent", "exponent_v"}},
        {"divergence.rate", {"window", "statistic"}},
        {"statistics", {"population", "low_population_fraction", "replicas"}},
        {"diagnostics", {"balance_tolerance"}},
        {"run",
         {"trajectories", "seed", "backend", "chunk", "threads", "out", "exact_memory_mb", "save_trajectories",
          "save_samples", "save_members", "member_metrics", "members_deflate"}},
        {"sweep", {"combine", "points", "axes"}},
        {"sweep.axes", {"key", "name", "values", "range", "count", "spacing"}},
    };
    return sections;
}

const std::vector<ConfigTable>& distribution_kinds() {
    static const std::vector<ConfigTable> kinds = {
        {"fixed", {"dist", "value"}}, {"uniform", {"dist", "low", "high"}}, {"normal", {"dist", "mean", "std"}}};
    return kinds;
}

const std::vector<std::string>& config_keys(const std::vector<ConfigTable>& tables, std::string_view name) {
    for (const ConfigTable& t : tables)
        if (t.name == name) return t.keys;
    throw std::logic_error("config schema: no table " + std::string(name));
}

const char* to_string(Spacing s) {
    switch (s) {
    case Spacing::log:
        return "log";
    case Spacing::list:
        return "list";
    case Spacing::linear:
    default:
        return "linear";
    }
}
const char* to_string(Backend b) {
    switch (b) {
    case Backend::cpu:
        return "cpu";
    case Backend::cuda:
        return "cuda";
    case Backend::automatic:
    default:
        return "auto";
    }
}

namespace {

constexpr const char* override_prefix = "--set ";

// ---------------------------------------------------------------------------------------------------------------
// Formatting

/** `s` as a TOML basic string (only `"` and `\\` need escaping for the values built here). */
std::string toml_string(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

/** `s` quoted for a message, cut to a bounded length (input_limits.hpp). */
std::string quote(std::string_view s) { return toml_string(clip(s)); }

/** What a node is, for "got …": `"rk5"`, `42`, `1.5`, `true`, `a table`, `an array`, `a date`. */
std::string describe(const toml::node& n) {
    switch (n.type()) {
    case toml::node_type::string:
        return quote(n.as_string()->get());
    case toml::node_type::integer:
        return std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point:
        return format_number(n.as_floating_point()->get());
    case toml::node_type::boolean:
        return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::table:
        return "a table";
    case toml::node_type::array:
        return "an array";
    case toml::node_type::date:
        return "a date";
    case toml::node_type::time:
        return "a time";
    case toml::node_type::date_time:
        return "a date-time";
    case toml::node_type::none:
    default:
        return "nothing";
    }
}

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ") {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += sep;
        out += items[i];
    }
    return items.empty() ? std::string("(none)") : out;
}

/** `"a" or "b"`, `"a", "b" or "c"`. */
std::string one_of(const std::vector<std::string>& options) {
    std::string out;
    for (std::size_t i = 0; i < options.size(); ++i) {
        if (i) out += (i + 1 == options.size()) ? " or " : ", ";
        out += quote(options[i]);
    }
    return out;
}

/** " (did you mean "x"?)" for a near miss, else "". */
std::string suggestion(std::string_view got, const std::vector<std::string>& valid) {
    std::size_t best = 3;
    std::string best_name;
    for (const std::string& v : valid) {
        // NOTE: the distance is at least the difference in length: a long key (10 MB) costs no quadratic work
        if (std::max(got.size(), v.size()) - std::min(got.size(), v.size()) >= best) continue;
        const std::size_t d = edit_distance(got, v);
        if (d < best && 2 * d < std::max(got.size(), v.size())) best = d, best_name = v; // not "w" for "x"
    }
    return best_name.empty() ? std::string() : " (did you mean " + quote(best_name) + "?)";
}

std::string child_key(const std::string& prefix, std::string_view key) {
    return prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
}

// ---------------------------------------------------------------------------------------------------------------
// Error reporting

/** Knows where things came from: the file, or one of the `--set` overrides (recognized by their source path). */
class Reporter {
public:
    explicit Reporter(std::string file) : file_(std::move(file)) {}

    void add_override_source(const std::string& name) { overrides_.push_back(name); }

    [[noreturn]] void fail(const toml::source_region& where, const std::string& key, const std::string& what) const {
        std::string prefix = file_;
        int line = 0, column = 0;
        const bool from_override =
            where.path && std::find(overrides_.begin(), overrides_.end(), *where.path) != overrides_.end();
        if (from_override) {
            prefix = clip(*where.path);
        } else if (where.begin.line > 0) {
            line = static_cast<int>(where.begin.line);
            column = static_cast<int>(where.begin.column);
            prefix += ":" + std::to_string(line) + ":" + std::to_string(column);
        }
        throw ConfigError(prefix + ": " + (key.empty() ? std::string() : clip(key) + ": ") + what, key, line, column);
    }
    [[noreturn]] void fail(const toml::node& n, const std::string& key, const std::string& what) const {
        fail(n.source(), key, what);
    }
    [[noreturn]] void expected(const toml::node& n, const std::string& key, const std::string& what) const {
        fail(n, key, "expected " + what + ", got " + describe(n));
    }
    /** A required key absent from `parent` (the table it belongs in; null when that table is absent too). */
    [[noreturn]] void missing(const toml::table* parent, const std::string& key, const std::string& hint) const {
        fail(parent ? parent->source() : toml::source_region{}, key,
             "required key is missing" + (hint.empty() ? std::string() : " (" + hint + ")"));
    }

private:
    std::string file_;
    std::vector<std::string> overrides_;
};

// ---------------------------------------------------------------------------------------------------------------
// Typed access

/** Every key of any distribution kind, `dist` first, each once. */
const std::vector<std::string>& any_distribution_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> all;
        for (const ConfigTable& kind : distribution_kinds())
            for (const std::string& k : kind.keys)
                if (std::find(all.begin(), all.end(), k) == all.end()) all.push_back(k);
        return all;
    }();
    return keys;
}

class Reader {
public:
    explicit Reader(const Reporter& rep) : rep_(rep) {}

    const Reporter& report() const { return rep_; }

    /** Every key of `t` must be in `allowed`. */
    void check_keys(const toml::table& t, const std::string& prefix, const std::vector<std::string>& allowed,
                    const std::string& what = "allowed keys", const std::string& noun = "key") const {
        for (auto&& [k, v] : t) {
            if (std::find(allowed.begin(), allowed.end(), k.str()) != allowed.end()) continue;
            const toml::source_region& where = k.source().path ? k.source() : v.source();
            rep_.fail(where, child_key(prefix, k.str()),
                      "unknown " + noun + suggestion(k.str(), allowed) + "; " + what + ": " + join(allowed));
        }
    }

    /** The sub-table `key` of `t`, or null when absent; an error when present but not a table. */
    const toml::table* table(const toml::table* t, std::string_view key, const std::string& full_key) const {
        if (!t) return nullptr;
        const toml::node* n = t->get(key);
        if (!n) return nullptr;
        if (!n->is_table()) rep_.expected(*n, full_key, "a table");
        return n->as_table();
    }

    double number(const toml::node& n, const std::string& key) const {
        double x = 0.0;
        if (const auto* i = n.as_integer()) x = static_cast<double>(i->get());
        else if (const auto* f = n.as_floating_point()) x = f->get();
        else rep_.expected(n, key, "a number");
        if (!std::isfinite(x)) rep_.expected(n, key, "a finite number");
        return x;
    }

    /** An integer; a float with an integral value is accepted (`max_steps = 1e7`). */
    std::int64_t integer(const toml::node& n, const std::string& key) const {
        if (const auto* i = n.as_integer()) return i->get();
        if (const auto* f = n.as_floating_point()) {
            const double x = f->get();
            if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 9.2e18) return static_cast<std::int64_t>(x);
        }
        rep_.expected(n, key, "an integer");
    }

    bool boolean(const toml::node& n, const std::string& key) const {
        if (const auto* b = n.as_boolean()) return b->get();
        rep_.expected(n, key, "true or false");
    }

    std::string string(const toml::node& n, const std::string& key) const {
        if (const auto* s = n.as_string()) return s->get();
        rep_.expected(n, key, "a string");
    }

    /** A string that must be one of `options`; returns its index. */
    int choice(const toml::node& n, const std::string& key, const std::vector<std::string>& options) const {
        if (const auto* s = n.as_string()) {
            const auto it = std::find(options.begin(), options.end(), s->get());
            if (it != options.end()) return static_cast<int>(it - options.begin());
        }
        rep_.expected(n, key, one_of(options));
    }

    // Optional keys with a default, and range checks --------------------------------------------------------

    const toml::node* get(const toml::table* t, std::string_view key) const { return t ? t->get(key) : nullptr; }

    double number_or(const toml::table* t, std::string_view k, const std::string& prefix, double dflt) const {
        const toml::node* n = get(t, k);
        return n ? number(*n, child_key(prefix, k)) : dflt;
    }
    std::int64_t integer_or(const toml::table* t, std::string_view k, const std::string& prefix,
                            std::int64_t dflt) const {
        const toml::node* n = get(t, k);
        return n ? integer(*n, child_key(prefix, k)) : dflt;
    }
    bool boolean_or(const toml::table* t, std::string_view k, const std::string& prefix, bool dflt) const {
        const toml::node* n = get(t, k);
        return n ? boolean(*n, child_key(prefix, k)) : dflt;
    }

    /** Fails unless `ok`, reporting the value at `k` (which must be present when `ok` is false). */
    void require(bool ok, const toml::table* t, std::string_view k, const std::string& prefix,
                 const std::string& what) const {
        if (ok) return;
        const toml::node* n = get(t, k);
        if (n) rep_.expected(*n, child_key(prefix, k), what);
        rep_.fail(toml::source_region{}, child_key(prefix, k), "expected " + what);
    }

    /** `{ dist = ..., ... }` or a bare number. */
    Distribution distribution(const toml::node& n, const std::string& key) const {
        if (n.is_integer() || n.is_floating_point()) return make_fixed(number(n, key));
        if (!n.is_table())
            rep_.expected(n, key, "a number or a distribution { dist = \"fixed\" | \"uniform\" | \"normal\", ... }");
        return distribution_table(*n.as_table(), key);
    }

    Distribution distribution_table(const toml::table& t, const std::string& key) const {
        const toml::node* d = t.get("dist");
        if (!d) {
            check_keys(t, key, any_distribution_keys());
            rep_.missing(&t, child_key(key, "dist"),
                         "a distribution needs dist = \"fixed\", \"uniform\" or \"normal\"");
        }
        const int kind = choice(*d, child_key(key, "dist"), {"fixed", "uniform", "normal"});
        auto need = [&](std::string_view k, const char* hint) -> double {
            const toml::node* n = t.get(k);
            if (!n) rep_.missing(&t, child_key(key, k), hint);
            return number(*n, child_key(key, k));
        };
        if (kind == 0) {
            check_keys(t, key, config_keys(distribution_kinds(), "fixed"), "allowed keys for dist = \"fixed\"");
            return make_fixed(need("value", "dist = \"fixed\" needs value"));
        }
        if (kind == 1) {
            check_keys(t, key, config_keys(distribution_kinds(), "uniform"), "allowed keys for dist = \"uniform\"");
            const double low = need("low", "dist = \"uniform\" needs low and high");
            const double high = need("high", "dist = \"uniform\" needs low and high");
            if (!(low < high))
                rep_.expected(*t.get("high"), child_key(key, "high"), "high > low = " + format_number(low));
            // NOTE: a draw is low + (high − low)·u: with an infinite width no draw is a number
            if (!std::isfinite(high - low))
                rep_.expected(*t.get("high"), child_key(key, "high"),
                              "a uniform whose width high − low is a finite number (draws are low + (high − low)·u)");
            return make_uniform(low, high);
        }
        check_keys(t, key, config_keys(distribution_kinds(), "normal"), "allowed keys for dist = \"normal\"");
        const double mean = need("mean", "dist = \"normal\" needs mean and std");
        const double std = need("std", "dist = \"normal\" needs mean and std");
        if (!(std >= 0.0)) rep_.expected(*t.get("std"), child_key(key, "std"), "std >= 0");
        // NOTE: a draw is mean + std·z with |z| < 8.6 (Box–Muller on 53-bit uniforms): it must stay a number
        if (!std::isfinite(std::fabs(mean) + 9.0 * std))
            rep_.expected(*t.get("std"), child_key(key, "std"),
                          "std with |mean| + 9·std a finite number (draws are mean + std·z, |z| < 8.6)");
        return make_normal(mean, std);
    }

private:
    const Reporter& rep_;
};

// ---------------------------------------------------------------------------------------------------------------
// Overrides

bool is_bare_key(std::string_view s) {
    if (s.empty()) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

bool is_bare_word(std::string_view s) {
    if (s.empty() || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == '.' || c == '/';
    });
}

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(" \t");
    return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split_key(const std::string& key) {
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
        const auto dot = key.find('.', start);
        parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return parts;
}

/** Puts `value` at the dotted key `parts` of `root`, creating missing tables marked as coming from `source`. */
void insert_at(toml::table& root, const std::vector<std::string>& parts, toml::node&& value,
               const std::string& source) {
    toml::table* t = &root;
    std::string path;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        path = child_key(path, parts[i]);
        toml::node* n = t->get(parts[i]);
        if (!n) { // a new table, marked as the override's (a table built here would have no source)
            toml::table holder = toml::parse("value = {}", source);
            n = t->insert(parts[i], std::move(*holder.get("value"))).first->second.as_table();
        }
        if (!n->is_table())
            throw ConfigError(clip(source) + ": " + clip(path) + " is " + describe(*n) + ", not a table", path);
        t = n->as_table();
    }
    t->insert_or_assign(parts.back(), std::move(value));
}

/** Applies `KEY=VALUE`: VALUE is parsed as a TOML value (a bare word such as cuda is taken as a string), then
 *  inserted at the dotted KEY, creating missing tables. The value keeps its source path, "--set KEY=VALUE", so
 *  that later errors about it name the override. */
void apply_override(toml::table& root, const std::string& arg, Reporter& rep) {
    const std::string name = override_prefix + arg;
    const std::string shown = override_prefix + clip(arg); // NOTE: the argument as messages repeat it, cut short
    const auto eq = arg.find('=');
    if (eq == std::string::npos) throw ConfigError(shown + ": expected KEY=VALUE");
    const std::string key = trim(std::string_view(arg).substr(0, eq));
    const std::string value = trim(std::string_view(arg).substr(eq + 1));

    const std::vector<std::string> parts = split_key(key);
    for (const std::string& p : parts)
        if (!is_bare_key(p))
            throw ConfigError(
                shown + ": invalid key " + quote(key) + " (expected dotted names such as integrator.rtol)", key);
    if (value.empty()) throw ConfigError(shown + ": " + clip(key) + ": missing value", key);
    // NOTE: before the TOML parser, which recurses into nested values (input_limits.hpp); the key is bare and
    // dotted, so `key = value` nests as deep as the override would put its value.
    if (const auto deep = toml_nesting_excess(key + " = " + value))
        throw ConfigError(shown + ": " + clip(key) + ": nested too deep: expected at most " +
                              std::to_string(max_nesting_depth) +
                              " levels of dotted key parts, arrays and inline tables together",
                          key);

    rep.add_override_source(name);
    toml::table parsed;
    try {
        parsed = toml::parse("value = " + value, name);
    } catch (const toml::parse_error& e) {
        if (!is_bare_word(value))
            throw ConfigError(shown + ": " + clip(key) + ": cannot parse the value as TOML: " + clip(e.description()),
                              key);
        parsed = toml::parse("value = " + toml_string(value), name); // as a string, still marked as the override's
    }
    if (parsed.size() != 1 || !parsed.get("value"))
        throw ConfigError(shown + ": " + clip(key) + ": expected a single TOML value", key);

    insert_at(root, parts, std::move(*parsed.get("value")), name);
}

/** Applies a command-line option that sets one key (`--out`, `--seed`, …): a string key takes the text as typed
 *  (never parsed as TOML, so any path works); a numeric one takes the number the whole text spells, or else the
 *  text as a string, which the schema then refuses by name. The value's source is the option, so errors name it. */
void apply_option(toml::table& root, const OptionOverride& o, Reporter& rep) {
    if (o.value.empty()) throw ConfigError(o.option + ": expected a non-empty value, got ''", o.key);
    rep.add_override_source(o.option);
    // NOTE: nodes parsed under the option's name, then given the value, so that their source is the option.
    toml::table parsed = toml::parse("value = \"\"", o.option);
    if (!o.is_string) {
        const char* text = o.value.c_str();
        char* end = nullptr;
        errno = 0;
        const long long i = std::strtoll(text, &end, 10);
        if (errno == 0 && end != text && *end == '\0') {
            parsed = toml::parse("value = 0", o.option);
            *parsed["value"].as_integer() = i;
        } else if (const double x = std::strtod(text, &end); end != text && *end == '\0' && !std::isspace(*text)) {
            parsed = toml::parse("value = 0.0", o.option);
            *parsed["value"].as_floating_point() = x;
        } else {
            *parsed["value"].as_string() = o.value;
        }
    } else {
        *parsed["value"].as_string() = o.value;
    }
    insert_at(root, split_key(o.key), std::move(*parsed.get("value")), o.option);
}

// ---------------------------------------------------------------------------------------------------------------
// Sections

/** A model file (`model.file`) or an inline model (`[model]` with `lagrangian`): loaded, registered under its name
 *  (modelfile/file_models.hpp), and its description in the registry returned; null for a built-in model's name. */
const ModelInfo* parse_file_model(const Reader& rd, const toml::table* model, const std::string& source_name) {
    if (!model) return nullptr;
    const toml::node* file = model->get("file");
    const toml::node* lagrangian = model->get("lagrangian");
    if (!file && !lagrangian) {
        for (auto&& [k, v] : *model)
            if (k.str() != "name" && k.str() != "params")
                rd.report().fail(v, child_key("model", k.str()),
                                 "a key of an inline model, but [model] has no `lagrangian` (an inline model needs "
                                 "coordinates, lagrangian and constraints; or name a model file with model.file)");
        return nullptr;
    }
    if (file && lagrangian)
        rd.report().fail(*lagrangian, "model.lagrangian",
                         "model.file and an inline model exclude each other: the model is either in the file or here");
    if (file) {
        for (auto&& [k, v] : *model)
            if (k.str() != "file" && k.str() != "params")
                rd.report().fail(v, child_key("model", k.str()),
                                 "with model.file the model is the file's: only model.params may go beside it");
        std::filesystem::path path = rd.string(*file, "model.file");
        // A relative path is the config file's neighbour (when the config is a file), so a config and its model
        // travel together.
        const std::filesystem::path dir = std::filesystem::path(source_name).parent_path();
        std::error_code ec;
        if (path.is_relative() && !dir.empty() && std::filesystem::is_directory(dir, ec)) path = dir / path;
        // NOTE: before the file is opened: a FIFO would block the open, a folder would read as an empty model
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            const std::string why = std::strerror(errno);
            rd.report().fail(*file, "model.file", "no model file " + quote(path.string()) + " (" + why + ")");
        }
        if (const std::string kind = non_regular_kind(st.st_mode); !kind.empty())
            rd.report().fail(*file, "model.file",
                             "'" + clip(path.string()) + "' is " + kind +
                                 ", not a model file: name the model's TOML file itself");
        try {
            return &modelfile::register_model(modelfile::load_model_file(path.string()));
        } catch (const std::runtime_error& e) {
            throw ConfigError(e.what(), "model.file", 0, 0);
        }
    }
    try {
        // NOTE: the config's own text, when it is a file, lets error positions inside multi-line strings be exact.
        std::string text;
        if (std::ifstream in(source_name, std::ios::binary); in) {
            std::ostringstream ss;
            ss << in.rdbuf();
            text = ss.str();
        }
        return &modelfile::register_model(
            modelfile::load_model_table(*model, source_name, "model.", "inline_model", {"params"}, text));
    } catch (const std::runtime_error& e) {
        throw ConfigError(e.what(), "model", 0, 0);
    }
}

const ModelInfo& parse_model(const Reader& rd, const toml::table& root, const std::vector<ModelInfo>& registry,
                             const std::string& source_name) {
    std::vector<std::string> names;
    for (const ModelInfo& m : registry) names.push_back(m.name);
    const toml::table* model = rd.table(&root, "model", "model");
    if (model) rd.check_keys(*model, "model", config_keys(config_sections(), "model"));
    if (const ModelInfo* file_model = parse_file_model(rd, model, source_name)) return *file_model;
    const toml::node* name = rd.get(model, "name");
    if (!name) rd.report().missing(model, "model.name", "known models: " + join(names));
    const std::string s = rd.string(*name, "model.name");
    for (const ModelInfo& m : registry)
        if (m.name == s) return m;
    rd.report().fail(*name, "model.name",
                     "unknown model " + quote(s) + suggestion(s, names) + "; known models: " + join(names));
}

void parse_params(const Reader& rd, const toml::table& root, RunConfig& cfg) {
    const ModelInfo& m = cfg.model;
    cfg.params.clear();
    cfg.param_dists.clear();
    std::vector<std::string> names;
    for (const ParamInfo& p : m.params) {
        cfg.params.push_back(p.default_value);
        cfg.param_dists.push_back(make_fixed(p.default_value));
        names.push_back(p.name);
    }
    const toml::table* params = rd.table(rd.table(&root, "model", "model"), "params", "model.params");
    if (!params) return;
    rd.check_keys(*params, "model.params", names, "parameters of model " + quote(m.name), "parameter");
    for (auto&& [k, v] : *params) {
        const int i = m.param_index(std::string(k.str()));
        const std::string key = child_key("model.params", k.str());
        if (m.params[i].is_bool) {
            double x = 0.0;
            if (const auto* b = v.as_boolean()) x = b->get() ? 1.0 : 0.0;
            else if (const auto* n = v.as_integer(); n && (n->get() == 0 || n->get() == 1))
                x = static_cast<double>(n->get());
            else rd.report().expected(v, key, "true or false (a boolean parameter)");
            cfg.params[i] = x;
            cfg.param_dists[i] = make_fixed(x);
            continue;
        }
        if (v.is_boolean()) rd.report().expected(v, key, "a number or a distribution (not a boolean parameter)");
        const Distribution d = rd.distribution(v, key);
        if (const std::optional<std::string> e = check_param(m.params[i], d)) {
            // NOTE: point at the entry of a distribution table that leaves the range (a fixed value, low, high, or a
            // normal's std).
            const toml::table* dist = v.as_table();
            const char* part = d.kind == DistKind::fixed    ? "value"
                               : d.kind == DistKind::normal ? (check_param(m.params[i], d.a) ? "mean" : "std")
                                                            : (check_param(m.params[i], d.a) ? "low" : "high");
            if (dist && dist->get(part)) rd.report().expected(*dist->get(part), child_key(key, part), *e);
            rd.report().expected(v, key, *e);
        }
        cfg.param_dists[i] = d;
        cfg.params[i] = d.kind == DistKind::uniform ? 0.5 * (d.a + d.b) : d.a;
    }
}

std::vector<Distribution> parse_coordinate_dists(const Reader& rd, const toml::table* initial, std::string_view which,
                                                 const ModelInfo& m) {
    std::vector<Distribution> out(static_cast<std::size_t>(m.n), make_fixed(0.0));
    const std::string prefix = child_key("initial", which);
    const toml::table* t = rd.table(initial, which, prefix);
    if (!t) return out;
    rd.check_keys(*t, prefix, m.coords, "coordinates of model " + quote(m.name), "coordinate");
    for (auto&& [k, v] : *t) out[m.coord_index(std::string(k.str()))] = rd.distribution(v, child_key(prefix, k.str()));
    return out;
}

void parse_initial(const Reader& rd, const toml::table& root, RunConfig& cfg) {
    const toml::table* initial = rd.table(&root, "initial", "initial");
    if (initial) rd.check_keys(*initial, "initial", config_keys(config_sections(), "initial"));
    cfg.t0 = rd.number_or(initial, "t0", "initial", 0.0);
    if (const toml::node* e = rd.get(initial, "energy")) cfg.energy = rd.number(*e, "initial.energy");
    cfg.q0 = parse_coordinate_dists(rd, initial, "q", cfg.model);
    cfg.v0 = parse_coordinate_dists(rd, initial, "v", cfg.model);

    const int k = cfg.model.k;
    cfg.mu0.assign(static_cast<std::size_t>(k), make_fixed(0.0));
    const toml::node* mu = rd.get(initial, "mu");
    if (!mu) return;
    if (const toml::array* a = mu->as_array()) {
        if (static_cast<int>(a->size()) != k)
            rd.report().fail(*mu, "initial.mu",
                             "expected an array of exactly " + std::to_string(k) + " entries (one per constraint of " +
                                 quote(cfg.model.name) + "), got " + std::to_string(a->size()) + " entries");
        for (int i = 0; i < k; ++i)
            cfg.mu0[i] = rd.distribution(*a->get(static_cast<std::size_t>(i)), "initial.mu[" + std::to_string(i) + "]");
        return;
    }
    if (!mu->is_table() && !mu->is_integer() && !mu->is_floating_point())
        rd.report().expected(*mu, "initial.mu",
                             "a distribution (for all components), a number, or an array of " + std::to_string(k) +
                                 " of them");
    const Distribution d = rd.distribution(*mu, "initial.mu");
    cfg.mu0.assign(static_cast<std::size_t>(k), d);
}

void parse_integrator(const Reader& rd, const toml::table& root, RunConfig& cfg) {
    const std::string p = "integrator";
    const toml::table* t = rd.table(&root, "integrator", p);
    if (t) rd.check_keys(*t, p, config_keys(config_sections(), p));
    IntegratorSettings& s = cfg.integrator;
    s = IntegratorSettings{};
    if (const toml::node* n = rd.get(t, "method")) {
        std::vector<std::string> names;
        for (const MethodInfo& m : method_table) names.push_back(m.name);
        s.method = method_table[rd.choice(*n, "integrator.method", names)].id;
    }
    if (const toml::node* n = rd.get(t, "precision"))
        s.precision = rd.choice(*n, "integrator.precision", {"double", "float"}) == 0 ? Precision::f64 : Precision::f32;
    if (const toml::node* n = rd.get(t, "equations"))
        s.equations = rd.choice(*n, "integrator.equations", {"generated", "ad"}) == 0 ? EquationsKind::generated
                                                                                      : EquationsKind::ad;
    s.rtol = rd.number_or(t, "rtol", p, default_rtol(s.precision));
    s.atol = rd.number_or(t, "atol", p, default_atol(s.precision));
    s.dt = rd.number_or(t, "dt", p, default_dt(s.method));
    s.min_step = rd.number_or(t, "min_step", p, StepDefaults::min_step);
    const bool max_steps_given = rd.get(t, "max_steps") != nullptr;
    s.max_steps = rd.integer_or(t, "max_steps", p, 1);
    s.project = rd.boolean_or(t, "project", p, false);
    if (const std::optional<SettingProblem> e = check_integrator(s))
        rd.require(false, t, e->key.substr(p.size() + 1), p, e->expected);
    // NOTE: 0 until the output times are known: the default depends on their count (default_max_steps).
    if (!max_steps_given) s.max_steps = 0;
}

void parse_times(const Reader& rd, const toml::table& root, RunConfig& cfg) {
    const std::string p = "times";
    const toml::table* t = rd.table(&root, "times", p);
    if (t) rd.check_keys(*t, p, config_keys(config_sections(), p));
    TimeGrid& g = cfg.time_grid;
    g = TimeGrid{};
    const double t0 = cfg.t0;
    const toml::node* t_end = rd.get(t, "t_end");
    if (!t_end) rd.report().missing(t, "times.t_end", "the end time of the run, > t0");
    g.t_end = rd.number(*t_end, "times.t_end");
    rd.require(g.t_end > t0, t, "t_end", p, "t_end > t0 = " + format_number(t0));
    if (const toml::node* n = rd.get(t, "spacing"))
        g.spacing = static_cast<Spacing>(rd.choice(*n, "times.spacing", {"linear", "log", "list"}));
    const char* spacing = to_string(g.spacing);

    // Keys of another spacing would silently do nothing: refuse them.
    auto refuse = [&](std::string_view k, const char* used_with) {
        if (const toml::node* n = rd.get(t, k))
            rd.report().fail(*n, child_key(p, k),
                             std::string("only used with spacing = \"") + used_with + "\", but spacing is \"" +
                                 spacing + "\"");
    };
    std::vector<double>& times = cfg.times;
    times.clear();
    const double span = g.t_end - t0;

    if (g.spacing == Spacing::list) {
        refuse("count", "linear\" or \"log");
        refuse("t_first", "log");
        const toml::node* n = rd.get(t, "list");
        if (!n) rd.report().missing(t, "times.list", "spacing = \"list\" needs list = [t1, t2, ..., t_end]");
        const toml::array* a = n->as_array();
        if (!a || a->empty()) rd.report().expected(*n, "times.list", "a non-empty array of output times");
        if (a->size() > static_cast<std::size_t>(max_output_times))
            rd.report().fail(*n, "times.list",
                             "at most " + std::to_string(max_output_times) + " output times, got " +
                                 std::to_string(a->size()));
        for (std::size_t i = 0; i < a->size(); ++i) {
            const toml::node& e = *a->get(i);
            const std::string key = "times.list[" + std::to_string(i) + "]";
            const double x = rd.number(e, key);
            if (i == 0 && !(x > t0)) rd.report().expected(e, key, "an output time > t0 = " + format_number(t0));
            if (i > 0 && !(x > times.back()))
                rd.report().expected(e, key,
                                     "an output time > " + format_number(times.back()) + " (strictly increasing)");
            times.push_back(x);
        }
        if (times.back() != g.t_end)
            rd.report().expected(*a->get(a->size() - 1), "times.list[" + std::to_string(a->size() - 1) + "]",
                                 "the last output time to equal t_end = " + format_number(g.t_end));
        g.count = static_cast<int>(times.size());
        g.t_first = times.front();
        return;
    }

    refuse("list", "list");
    const bool log = g.spacing == Spacing::log;
    if (!log) refuse("t_first", "log");
    const std::int64_t count = rd.integer_or(t, "count", p, 50);
    rd.require(count >= (log ? 2 : 1) && count <= max_output_times, t, "count", p,
               std::string("an integer in [") + (log ? "2" : "1") + ", " + std::to_string(max_output_times) + "]" +
                   (log ? " (log spacing)" : ""));
    g.count = static_cast<int>(count);
    if (log) {
        g.t_first = rd.number_or(t, "t_first", p, t0 + span * 1e-3);
        rd.require(g.t_first > t0 && g.t_first < g.t_end, t, "t_first", p,
                   "t0 = " + format_number(t0) + " < t_first < t_end = " + format_number(g.t_end));
        // t_i = t0 + τ_first·(τ_end/τ_first)^(i/(count−1)), τ = t − t0
        const double tau_first = g.t_first - t0;
        const double ratio = span / tau_first;
        for (int i = 0; i < g.count; ++i)
            times.push_back(t0 + tau_first * std::pow(ratio, static_cast<double>(i) / (g.count - 1)));
        times.front() = g.t_first;
    } else {
        // t_i = t0 + (t_end − t0)·i/count, i = 1…count
        for (int i = 1; i <= g.count; ++i) times.push_back(t0 + span * static_cast<double>(i) / g.count);
        g.t_first = times.front();
    }
    times.back() = g.t_end;
    for (std::size_t i = 1; i < times.size(); ++i)
        if (!(times[i] > times[i - 1]))
            rd.report().fail(t ? t->source() : toml::source_region{}, "times",
                             "the " + std::to_string(count) +
                                 " output times are not strictly increasing in double "
                                 "precision; use fewer or a wider range");
}

void parse_divergence(const Reader& rd, const toml::table& root, RunConfig& cfg) {
    const std::string p = "divergence";
    const toml::table* t = rd.table(&root, "divergence", p);
    if (t) rd.check_keys(*t, p, config_keys(config_sections(), p));
    const ModelInfo& m = cfg.model;
    cfg.divergence_coords.clear();
    if (const toml::node* n = rd.get(t, "coordinates")) {
        const toml::array* a = n->as_array();
        if (!a || a->empty())
            rd.report().expected(*n, "divergence.coordinates",
                                 "a non-empty array of coordinate names of " + quote(m.name) + " (" + join(m.coords) +
                                     ")");
        for (std::size_t i = 0; i < a->size(); ++i) {
            const toml::node& e = *a->get(i);
            const std::string key = "divergence.coordinates[" + std::to_string(i) + "]";
            const std::string name = rd.string(e, key);
            const int idx = m.coord_index(name);
            if (idx < 0)
                rd.report().fail(e, key,
                                 "unknown coordinate " + quote(name) + suggestion(name, m.coords) +
                                     "; coordinates of model " + quote(m.name) + ": " + join(m.coords));
            if (std::find(cfg.divergence_coords.begin(), cfg.divergence_coords.end(), idx) !=
                cfg.divergence_coords.end())
                rd.report().fail(e, key, "coordinate " + quote(name) + " is listed twice");
            cfg.divergence_coords.push_back(idx);
        }
    } else {
        cfg.divergence_coords = default_divergence_coords(m);
    }
    cfg.divergence_weights.assign(static_cast<std::size_t>(m.n), 1.0);
    if (const toml::table* w = rd.table(t, "weights", p + ".weights")) {
        for (auto&& [key, node] : *w) {
            const std::string name(key.str());
            const std::string full = p + ".weights." + name;
            const int idx = m.coord_index(name);
            if (idx < 0)
                rd.report().fail(node, full,
                                 "unknown coordinate " + quote(name) + suggestion(name, m.coords) +
                                     "; coordinates of model " + quote(m.name) + ": " + join(m.coords));
            if (std::find(cfg.divergence_coords.begin(), cfg.divergence_coords.end(), idx) ==
                cfg.divergence_coords.end())
                rd.report().fail(node, full,
                                 "coordinate " + quote(name) +
                                     " is not in divergence.coordinates; list it there to "
                                     "weigh it");
            const double x = rd.number(node, full);
            if (!(x > 0.0)) rd.report().expected(node, full, "a number > 0");
            cfg.divergence_weights[static_cast<std::size_t>(idx)] = x;
        }
    }
    cfg.divergence_kinetic = false;
    if (const toml::node* n = rd.get(t, "metric"))
        cfg.divergence_kinetic = rd.choice(*n, p + ".metric", {"euclidean", "kinetic"}) == 1;
    cfg.onset_threshold = rd.number_or(t, "onset_threshold", p, 1e-3);
    rd.require(cfg.onset_threshold > 0.0, t, "onset_threshold", p, "a number > 0");
    cfg.stop_at = std::numeric_limits<double>::infinity();
    if (rd.get(t, "stop_at")) {
        cfg.stop_at = rd.number_or(t, "stop_at", p, 0.0);
        rd.require(std::isfinite(cfg.stop_at) && cfg.stop_at > cfg.onset_threshold, t, "stop_at", p,
                   "a number > onset_threshold = " + format_number(cfg.onset_threshold) +
                       " (a member stops when its d_q passes it; leave it out to never stop)");
    }
    const std::size_t fourth = std::min<std::size_t>(3, cfg.times.size() - 1);
    const double dflt = std::max(cfg.t0 + (cfg.time_grid.t_end - cfg.t0) * 0.05, cfg.times[fourth]);
    cfg.growth_t_max = rd.number_or(t, "growth_t_max", p, dflt);
    rd.require(cfg.growth_t_max > cfg.t0, t, "growth_t_max", p, "a time > t0 = " + format_number(cfg.t0));
    cfg.growth_t_min = cfg.t0;
    cfg.growth_statistic = "median";
    cfg.growth_exponent = cfg.growth_exponent_v = std::numeric_limits<double>::quiet_NaN();
    // A window [t_min, t_max] of times, t0 <= t_min < t_max, read from `key`.
    const auto window = [&](const toml::node& n, const std::string& key, double& lo, double& hi) {
        const toml::array* a = n.as_array();
        if (!a || a->size() != 2)
            rd.report().expected(n, key, "an array [t_min, t_max] of two times, t0 <= t_min < t_max");
        lo = rd.number(*a->get(0), key + "[0]");
        hi = rd.number(*a->get(1), key + "[1]");
        if (!(std::isfinite(lo) && lo >= cfg.t0))
            rd.report().expected(*a->get(0), key + "[0]", "a time >= t0 = " + format_number(cfg.t0));
        if (!(std::isfinite(hi) && hi > lo))
            rd.report().expected(*a->get(1), key + "[1]", "a finite time > t_min = " + format_number(lo));
    };
    const auto statistic = [&](const toml::table* s, const std::string& prefix) {
        const toml::node* n = rd.get(s, "statistic");
        return n ? fit_statistics()[static_cast<std::size_t>(rd.choice(*n, prefix + ".statistic", fit_statistics()))]
                 : std::string("median");
    };
    if (const toml::table* f = rd.table(t, "fit", p + ".fit")) {
        const std::string q = p + ".fit";
        rd.check_keys(*f, q, config_keys(config_sections(), q));
        cfg.growth_statistic = statistic(f, q);
        if (const toml::node* w = f->get("window")) {
            const double given = cfg.growth_t_max;
            window(*w, q + ".window", cfg.growth_t_min, cfg.growth_t_max);
            // NOTE: both may be given where they agree (a resolved config, summary.json's, has both)
            if (rd.get(t, "growth_t_max") && cfg.growth_t_max != given)
                rd.report().fail(*w, q + ".window",
                                 "give the fit window either as divergence.growth_t_max or as divergence.fit.window, "
                                 "not both (they disagree: growth_t_max = " +
                                     format_number(given) + ", window ends at " + format_number(cfg.growth_t_max) +
                                     ")");
        }
        if (const toml::node* e = f->get("exponent")) {
            cfg.growth_exponent = rd.number(*e, q + ".exponent");
            if (!std::isfinite(cfg.growth_exponent)) rd.report().expected(*e, q + ".exponent", "a finite number");
            // NOTE: Δv is the time derivative of Δq, so d_q ~ C t^p gives d_v ~ pC t^(p − 1) at small times
            cfg.growth_exponent_v = cfg.growth_exponent - 1.0;
        }
        if (const toml::node* e = f->get("exponent_v")) {
            cfg.growth_exponent_v = rd.number(*e, q + ".exponent_v");
            if (!std::isfinite(cfg.growth_exponent_v)) rd.report().expected(*e, q + ".exponent_v", "a finite number");
        }
    }
    cfg.rate_fit = false;
    if (const toml::table* r = rd.table(t, "rate", p + ".rate")) {
        const std::string q = p + ".rate";
        rd.check_keys(*r, q, config_keys(config_sections(), q));
        const toml::node* w = r->get("window");
        if (!w) rd.report().missing(r, q + ".window", "the window [t_min, t_max] of the long-time rate's fit");
        window(*w, q + ".window", cfg.rate_t_min, cfg.rate_t_max);
        cfg.rate_statistic = statistic(r, q);
        cfg.rate_fit = true;
    }
}

void parse_statistics(const Reader& rd, const toml::table& root, RunConfig& cfg) {
    const std::string p = "statistics";
    const toml::table* t = rd.table(&root, "statistics", p);
    if (t) rd.check_keys(*t, p, config_keys(config_sections(), p));
    cfg.alive_population = true;
    if (const toml::node* n = rd.get(t, "population"))
        cfg.alive_population = rd.choice(*n, p + ".population", {"alive", "survivors"}) == 0;
    cfg.low_population_fraction = rd.number_or(t, "low_population_fraction", p, 0.5);
    rd.require(cfg.low_population_fraction >= 0.0 && cfg.low_population_fraction <= 1.0, t, "low_population_fraction",
               p, "a number in [0, 1]");
    const long long r = rd.integer_or(t, "replicas", p, 10);
    rd.require(r == 0 || (r >= 2 && r <= 1000), t, "replicas", p, "0 (no replica groups) or an integer in [2, 1000]");
    cfg.replicas = static_cast<int>(r);
}

void parse_diagnostics(const Reader& rd, const toml::table& root, RunConfig& cfg) {
    const std::string p = "diagnostics";
    const toml::table* t = rd.table(&root, "diagnostics", p);
    if (t) rd.check_keys(*t, p, config_keys(config_sections(), p));
    cfg.balance_tolerance = rd.number_or(t, "balance_tolerance", p, 1e-6);
    rd.require(cfg.balance_tolerance > 0.0, t, "balance_tolerance", p, "a number > 0");
}

void parse_run(const Reader& rd, const toml::table& root, RunConfig& cfg) {
    const std::string p = "run";
    const toml::table* t = rd.table(&root, "run", p);
    if (t) rd.check_keys(*t, p, config_keys(config_sections(), p));
    RunSettings& s = cfg.run;
    s = RunSettings{};
    s.trajectories = rd.integer_or(t, "trajectories", p, 1000);
    rd.require(s.trajectories >= 1, t, "trajectories", p, "an integer >= 1");
    const std::int64_t seed = rd.integer_or(t, "seed", p, 1);
    rd.require(seed >= 0, t, "seed", p, "an integer >= 0");
    s.seed = static_cast<std::uint64_t>(seed);
    if (const toml::node* n = rd.get(t, "backend"))
        s.backend = static_cast<Backend>(rd.choice(*n, "run.backend", {"cpu", "cuda", "auto"}));
    s.chunk = rd.integer_or(t, "chunk", p, 65536);
    rd.require(s.chunk >= 1, t, "chunk", p, "an integer >= 1");
    const std::int64_t threads = rd.integer_or(t, "threads", p, 0);
    rd.require(threads >= 0 && threads <= 65536, t, "threads", p, "an integer in [0, 65536] (0 = all cores)");
    s.threads = static_cast<int>(threads);
    if (const toml::node* n = rd.get(t, "out")) {
        s.out = rd.string(*n, "run.out");
        if (s.out.empty()) rd.report().expected(*n, "run.out", "a non-empty folder name");
    }
    s.exact_memory_mb = rd.integer_or(t, "exact_memory_mb", p, 1024);
    rd.require(s.exact_memory_mb >= 0 && s.exact_memory_mb <= max_exact_memory_mb, t, "exact_memory_mb", p,
               "an integer in [0, " + std::to_string(max_exact_memory_mb) + "]");
    s.save_trajectories = rd.integer_or(t, "save_trajectories", p, 0);
    rd.require(s.save_trajectories >= 0, t, "save_trajectories", p, "an integer >= 0");
    s.save_trajectories = std::min(s.save_trajectories, s.trajectories);
    s.save_samples = rd.boolean_or(t, "save_samples", p, false);
    s.save_members = rd.boolean_or(t, "save_members", p, false);
    if (const toml::node* n = rd.get(t, "member_metrics")) {
        std::vector<std::string> names;
        for (int m = 0; m < metric_count; ++m) names.push_back(metric_info(m).name);
        const toml::array* a = n->as_array();
        if (!a || a->empty())
            rd.report().expected(*n, "run.member_metrics", "a non-empty array of metric names (" + join(names) + ")");
        s.member_metrics.clear();
        for (std::size_t i = 0; i < a->size(); ++i) {
            const toml::node& e = *a->get(i);
            const std::string key = "run.member_metrics[" + std::to_string(i) + "]";
            const std::string name = rd.string(e, key);
            const auto it = std::find(names.begin(), names.end(), name);
            if (it == names.end())
                rd.report().fail(
                    e, key, "unknown metric " + quote(name) + suggestion(name, names) + "; metrics: " + join(names));
            const int m = static_cast<int>(it - names.begin());
            if (std::find(s.member_metrics.begin(), s.member_metrics.end(), m) != s.member_metrics.end())
                rd.report().fail(e, key, "metric " + quote(name) + " is listed twice");
            s.member_metrics.push_back(m);
        }
    }
    const std::int64_t deflate = rd.integer_or(t, "members_deflate", p, 0);
    rd.require(deflate >= 0 && deflate <= 9, t, "members_deflate", p, "an integer in [0, 9] (0: not compressed)");
    s.members_deflate = static_cast<int>(deflate);
}

// ---------------------------------------------------------------------------------------------------------------
// JSON

nlohmann::json dist_json(const Distribution& d) {
    switch (d.kind) {
    case DistKind::uniform:
        return {{"dist", "uniform"}, {"low", d.a}, {"high", d.b}};
    case DistKind::normal:
        return {{"dist", "normal"}, {"mean", d.a}, {"std", d.b}};
    case DistKind::fixed:
    default:
        return d.a;
    }
}

} // namespace

nlohmann::json RunConfig::resolved_json() const {
    using nlohmann::json;
    json params_json = json::object();
    for (std::size_t i = 0; i < model.params.size(); ++i) {
        const ParamInfo& p = model.params[i];
        params_json[p.name] = p.is_bool ? json(params[i] != 0.0) : dist_json(param_dists[i]);
    }
    json q = json::object(), v = json::object(), mu = json::array();
    for (int i = 0; i < model.n; ++i) {
        q[model.coords[i]] = dist_json(q0[i]);
        v[model.coords[i]] = dist_json(v0[i]);
    }
    for (const Distribution& d : mu0) mu.push_back(dist_json(d));

    json times_json = {{"t_end", time_grid.t_end}, {"spacing", to_string(time_grid.spacing)}};
    if (time_grid.spacing == Spacing::list) times_json["list"] = times;
    else times_json["count"] = time_grid.count;
    if (time_grid.spacing == Spacing::log) times_json["t_first"] = time_grid.t_first;

    json coords = json::array();
    json weights = json::object();
    for (int i : divergence_coords) {
        coords.push_back(model.coords[i]);
        weights[model.coords[i]] = divergence_weights.empty() ? 1.0 : divergence_weights[static_cast<std::size_t>(i)];
    }

    json out = {
        {"model", {{"name", model.name}, {"params", params_json}}},
        {"initial", {{"t0", t0}, {"energy", energy ? json(*energy) : json(nullptr)}, {"q", q}, {"v", v}, {"mu", mu}}},
        {"integrator",
         {{"method", to_string(integrator.method)},
          {"rtol", integrator.rtol},
          {"atol", integrator.atol},
          {"dt", integrator.dt},
          {"min_step", integrator.min_step},
          {"max_steps", integrator.max_steps},
          {"project", integrator.project},
          {"precision", to_string(integrator.precision)},
          {"equations", to_string(integrator.equations)}}},
        {"times", times_json},
        {"divergence",
         {{"coordinates", coords},
          {"weights", weights},
          {"metric", divergence_kinetic ? "kinetic" : "euclidean"},
          {"onset_threshold", onset_threshold},
          {"stop_at", std::isfinite(stop_at) ? json(stop_at) : json(nullptr)},
          {"growth_t_max", growth_t_max},
          {"fit",
           {{"statistic", growth_statistic},
            {"window", {growth_t_min, growth_t_max}},
            {"exponent", std::isfinite(growth_exponent) ? json(growth_exponent) : json(nullptr)},
            {"exponent_v", std::isfinite(growth_exponent_v) ? json(growth_exponent_v) : json(nullptr)}}},
          {"rate",
           rate_fit ? json{{"statistic", rate_statistic}, {"window", {rate_t_min, rate_t_max}}} : json(nullptr)}}},
        {"statistics",
         {{"population", alive_population ? "alive" : "survivors"},
          {"low_population_fraction", low_population_fraction},
          {"replicas", replicas}}},
        {"diagnostics", {{"balance_tolerance", balance_tolerance}}},
        {"run",
         {{"trajectories", run.trajectories},
          {"seed", run.seed},
          {"backend", to_string(run.backend)},
          {"chunk", run.chunk},
          {"threads", run.threads},
          {"out", run.out},
          {"exact_memory_mb", run.exact_memory_mb},
          {"save_trajectories", run.save_trajectories},
          {"save_samples", run.save_samples},
          {"save_members", run.save_members},
          {"member_metrics",
           [&] {
               json a = json::array();
               for (int m : run.member_metrics) a.push_back(metric_info(m).name);
               return a;
           }()},
          {"members_deflate", run.members_deflate}}},
    };
    if (sweep) {
        json axes = json::array();
        // NOTE: as written (loadable back); the points' values are in summary.json's "sweep"
        for (const SweepAxis& a : sweep->axes) {
            json axis = {{"key", a.key}, {"name", a.name}};
            if (a.kind == "list") {
                axis["values"] = a.values;
            } else {
                axis["range"] = {a.low, a.high};
                axis["spacing"] = a.log ? "log" : "linear";
                if (a.kind == "range") axis["count"] = a.values.size();
            }
            axes.push_back(axis);
        }
        out["sweep"] = {{"combine", sweep->combine}, {"axes", axes}};
        if (sweep->random_design()) out["sweep"]["points"] = sweep->values.size();
    }
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Sweeps

namespace {

/** The sections of a configuration, from its (overridden) table. */
RunConfig parse_sections(const Reader& rd, const toml::table& root, const std::string& source_name,
                         const std::vector<ModelInfo>& registry) {
    rd.check_keys(root, "", config_keys(config_sections(), ""), "allowed sections", "section");
    RunConfig cfg;
    cfg.source_path = source_name;
    cfg.model = parse_model(rd, root, registry, source_name);
    parse_params(rd, root, cfg);
    parse_initial(rd, root, cfg);
    parse_integrator(rd, root, cfg);
    parse_times(rd, root, cfg);
    if (cfg.integrator.max_steps == 0)
        cfg.integrator.max_steps = default_max_steps(static_cast<long long>(cfg.times.size()));
    if (const std::optional<SettingProblem> e = check_step_count(cfg.integrator, cfg.t0, cfg.times))
        rd.require(false, rd.table(&root, "integrator", "integrator"), "dt", "integrator", e->expected);
    parse_divergence(rd, root, cfg);
    parse_statistics(rd, root, cfg);
    parse_diagnostics(rd, root, cfg);
    parse_run(rd, root, cfg);
    return cfg;
}

/** What an axis may set: a model parameter, or a sampling setting under [initial] (a number: the energy shell, a
 *  fixed value, or a distribution's low, high, mean, std or value). Fails at the key's node otherwise. */
void check_axis_key(const Reader& rd, const toml::node& at, const std::string& key_name, const std::string& key,
                    const RunConfig& cfg) {
    const std::vector<std::string> parts = split_key(key);
    const auto fail = [&](const std::string& what) { rd.report().fail(at, key_name, what); };
    for (const std::string& p : parts)
        if (!is_bare_key(p)) fail("expected a dotted config key such as \"model.params.Omega\", got " + quote(key));
    const std::string where = "a model parameter (model.params.NAME) or a sampling setting under [initial] "
                              "(initial.energy, initial.q.NAME[.low|.high|.mean|.std|.value], the same under "
                              "initial.v, initial.mu[.std|…])";
    if (parts.size() == 3 && parts[0] == "model" && parts[1] == "params") {
        std::vector<std::string> names;
        for (const ParamInfo& p : cfg.model.params) names.push_back(p.name);
        if (std::find(names.begin(), names.end(), parts[2]) == names.end())
            fail("unknown parameter " + quote(parts[2]) + " of model " + quote(cfg.model.name) +
                 suggestion(parts[2], names) + "; parameters: " + join(names));
        return;
    }
    if (parts.size() < 2 || parts[0] != "initial") fail("expected " + where + ", got " + quote(key));
    const std::vector<std::string>& dist_keys = any_distribution_keys();
    const auto is_number_key = [&](const std::string& k) {
        return k != "dist" && std::find(dist_keys.begin(), dist_keys.end(), k) != dist_keys.end();
    };
    if (parts[1] == "energy" && parts.size() == 2) return;
    if (parts[1] == "mu" && (parts.size() == 2 || (parts.size() == 3 && is_number_key(parts[2])))) return;
    if ((parts[1] == "q" || parts[1] == "v") && (parts.size() == 3 || parts.size() == 4)) {
        if (std::find(cfg.model.coords.begin(), cfg.model.coords.end(), parts[2]) == cfg.model.coords.end())
            fail("unknown coordinate " + quote(parts[2]) + " of model " + quote(cfg.model.name) +
                 suggestion(parts[2], cfg.model.coords) + "; coordinates: " + join(cfg.model.coords));
        if (parts.size() == 3 || is_number_key(parts[3])) return;
    }
    fail("expected " + where + ", got " + quote(key));
}

/** [sweep]'s axes and points, and every point's configuration: the base table with the point's values set, parsed
 *  and checked as a configuration of its own. */
std::shared_ptr<const Sweep> parse_sweep(const Reader& rd, const toml::table& root, const RunConfig& base,
                                         const std::string& source_name, const std::vector<ModelInfo>& registry) {
    const toml::table* t = rd.table(&root, "sweep", "sweep");
    if (!t) return nullptr;
    rd.check_keys(*t, "sweep", config_keys(config_sections(), "sweep"));
    auto sw = std::make_shared<Sweep>();
    sw->combine = "product";
    const std::vector<std::string> combines = {"product", "zip", "sobol", "latin_hypercube"};
    if (const toml::node* n = rd.get(t, "combine")) sw->combine = combines[rd.choice(*n, "sweep.combine", combines)];
    const bool design = sw->random_design();
    std::size_t design_points = 0;
    if (const toml::node* n = rd.get(t, "points")) {
        if (!design)
            rd.report().fail(*n, "sweep.points",
                             "points is the size of a random design: it needs combine = \"sobol\" or "
                             "\"latin_hypercube\" (a grid's points are its axes' values)");
        const std::int64_t P = rd.integer(*n, "sweep.points");
        rd.require(P >= 1 && P <= static_cast<std::int64_t>(max_sweep_points), t, "points", "sweep",
                   "an integer in [1, " + std::to_string(max_sweep_points) + "]");
        design_points = static_cast<std::size_t>(P);
    } else if (design) {
        rd.report().missing(t, "sweep.points", "the number of points a random design draws");
    }
    const toml::node* axes_node = rd.get(t, "axes");
    if (!axes_node) rd.report().missing(t, "sweep.axes", "one [[sweep.axes]] table per swept setting");
    const toml::array* axes = axes_node->as_array();
    if (!axes || axes->empty() || !axes->is_array_of_tables())
        rd.report().expected(*axes_node, "sweep.axes",
                             "a non-empty array of tables ([[sweep.axes]] with key = \"…\" and values or range)");
    if (sw->combine == "sobol" && axes->size() > sobol_max_dimensions)
        rd.report().fail(*axes_node, "sweep.axes",
                         "expected at most " + std::to_string(sobol_max_dimensions) +
                             " axes with combine = "
                             "\"sobol\" (the direction numbers nhvk keeps), got " +
                             std::to_string(axes->size()));
    for (std::size_t a = 0; a < axes->size(); ++a) {
        const toml::table& at = *axes->get(a)->as_table();
        const std::string p = "sweep.axes[" + std::to_string(a) + "]";
        rd.check_keys(at, p, config_keys(config_sections(), "sweep.axes"));
        SweepAxis axis;
        const toml::node* key = at.get("key");
        if (!key) rd.report().missing(&at, p + ".key", "the config key this axis sets, e.g. \"model.params.Omega\"");
        axis.key = rd.string(*key, p + ".key");
        check_axis_key(rd, *key, p + ".key", axis.key, base);
        for (const SweepAxis& other : sw->axes)
            if (other.key == axis.key)
                rd.report().fail(*key, p + ".key", "the key " + quote(axis.key) + " is swept twice");
        const std::vector<std::string> parts = split_key(axis.key);
        axis.name = parts.size() == 3 && parts[0] == "model" ? parts[2] : axis.key;
        if (const toml::node* n = at.get("name")) {
            axis.name = rd.string(*n, p + ".name");
            if (axis.name.empty()) rd.report().expected(*n, p + ".name", "a non-empty column name");
        }
        const toml::node* values = at.get("values");
        const toml::node* range = at.get("range");
        const toml::node* count = at.get("count");
        const toml::node* spacing = at.get("spacing");
        if (values && (range || count || spacing))
            rd.report().fail(*values, p + ".values", "give either values or range (with count and spacing), not both");
        if (design && (values || count))
            rd.report().fail(values ? *values : *count, p + (values ? ".values" : ".count"),
                             "a random design (combine = " + quote(sw->combine) +
                                 ") draws its points in each axis' range: give range = [low, high] (and spacing), "
                                 "not values or count");
        if (spacing) axis.log = rd.choice(*spacing, p + ".spacing", {"linear", "log"}) == 1;
        if (values) {
            const toml::array* list = values->as_array();
            if (!list || list->empty()) rd.report().expected(*values, p + ".values", "a non-empty array of numbers");
            for (std::size_t i = 0; i < list->size(); ++i)
                axis.values.push_back(rd.number(*list->get(i), p + ".values[" + std::to_string(i) + "]"));
            axis.kind = "list";
        } else {
            if (!range) rd.report().missing(&at, p + ".values", "an axis needs values = [...] or range = [low, high]");
            const toml::array* r = range->as_array();
            if (!r || r->size() != 2) rd.report().expected(*range, p + ".range", "an array [low, high] of two numbers");
            axis.low = rd.number(*r->get(0), p + ".range[0]");
            axis.high = rd.number(*r->get(1), p + ".range[1]");
            if (!(axis.low < axis.high))
                rd.report().expected(*r->get(1), p + ".range[1]",
                                     "high > low = " + format_number(axis.low) + " (an empty or inverted range)");
            if (axis.log && !(axis.low > 0.0))
                rd.report().expected(*r->get(0), p + ".range[0]",
                                     "low > 0 with spacing = \"log\" (a logarithmic range cannot reach or cross 0)");
            if (!design) {
                if (!count) rd.report().missing(&at, p + ".count", "how many values the range takes, >= 2");
                const std::int64_t c = rd.integer(*count, p + ".count");
                if (!(c >= 2 && c <= static_cast<std::int64_t>(max_sweep_points)))
                    rd.report().expected(*count, p + ".count",
                                         "an integer in [2, " + std::to_string(max_sweep_points) + "]");
                axis.values = sweep_range(axis.low, axis.high, static_cast<int>(c), axis.log);
                axis.kind = "range";
            } else {
                axis.kind = "sample";
            }
        }
        sw->axes.push_back(std::move(axis));
    }

    // ---- the points ----
    const std::size_t A = sw->axes.size();
    if (design) {
        const auto u = sw->combine == "sobol" ? sobol_design(design_points, A, base.run.seed)
                                              : latin_hypercube_design(design_points, A, base.run.seed);
        for (const std::vector<double>& x : u) {
            std::vector<double> v(A);
            for (std::size_t a = 0; a < A; ++a)
                v[a] = sweep_scale(x[a], sw->axes[a].low, sw->axes[a].high, sw->axes[a].log);
            sw->values.push_back(std::move(v));
        }
    } else if (sw->combine == "zip") {
        const std::size_t P = sw->axes[0].values.size();
        for (std::size_t a = 1; a < A; ++a)
            if (sw->axes[a].values.size() != P)
                rd.report().fail(*axes->get(a), "sweep.axes[" + std::to_string(a) + "]",
                                 "combine = \"zip\" pairs the axes' values one to one: expected " + std::to_string(P) +
                                     " values (as sweep.axes[0]), got " + std::to_string(sw->axes[a].values.size()));
        for (std::size_t i = 0; i < P; ++i) {
            std::vector<double> v(A);
            for (std::size_t a = 0; a < A; ++a) v[a] = sw->axes[a].values[i];
            sw->values.push_back(std::move(v));
        }
    } else {
        double P = 1.0;
        for (const SweepAxis& axis : sw->axes) P *= static_cast<double>(axis.values.size());
        if (P > static_cast<double>(max_sweep_points))
            rd.report().fail(*axes_node, "sweep.axes",
                             "the product of the axes has " + format_number(P) + " points, more than " +
                                 std::to_string(max_sweep_points));
        // NOTE: the last axis varies fastest (row-major, as numpy's meshgrid with indexing="ij" flattens)
        std::vector<std::size_t> idx(A, 0);
        for (std::size_t p = 0; p < static_cast<std::size_t>(P); ++p) {
            std::vector<double> v(A);
            for (std::size_t a = 0; a < A; ++a) v[a] = sw->axes[a].values[idx[a]];
            sw->values.push_back(std::move(v));
            for (std::size_t a = A; a-- > 0;) {
                if (++idx[a] < sw->axes[a].values.size()) break;
                idx[a] = 0;
            }
        }
    }
    const double members = static_cast<double>(base.run.trajectories) * static_cast<double>(sw->values.size());
    if (!(members <= 4.0e18))
        rd.report().fail(*t, "run.trajectories",
                         "expected run.trajectories × sweep points below 4e18, got " + format_number(members));

    // ---- every point's configuration, checked as the run of that point alone would be ----
    toml::table without = root;
    without.erase("sweep");
    for (std::size_t p = 0; p < sw->values.size(); ++p) {
        const std::string point = clip(source_name) + ": [sweep] point " + std::to_string(p) + " of " +
                                  std::to_string(sw->values.size()) + " (" + sw->label(p) + ")";
        Reporter rep(source_name);
        rep.add_override_source(point);
        try {
            toml::table tree = without;
            for (std::size_t a = 0; a < A; ++a) {
                toml::table parsed = toml::parse("value = " + sweep_value_text(sw->values[p][a]), point);
                insert_at(tree, split_key(sw->axes[a].key), std::move(*parsed.get("value")), point);
            }
            sw->configs.push_back(parse_sections(Reader(rep), tree, source_name, registry));
        } catch (const ConfigError& e) {
            const std::string what = e.what();
            if (what.rfind(point, 0) == 0) throw;
            throw ConfigError(point + ": " + what, e.key(), e.line(), e.column());
        }
    }
    return sw;
}

} // namespace

RunConfig parse_config(std::string_view toml_text, const std::string& source_name,
                       const std::vector<std::string>& set_overrides, const std::vector<ModelInfo>& registry,
                       const std::vector<OptionOverride>& options) {
    Reporter rep(source_name);
    // NOTE: before the TOML parser, which recurses into nested tables and keys: tens of thousands of levels
    // overflow the stack (input_limits.hpp).
    if (const auto deep = toml_nesting_excess(toml_text))
        throw ConfigError(clip(source_name) + ":" + std::to_string(deep->line) +
                              ": nested too deep: expected at most " + std::to_string(max_nesting_depth) +
                              " levels of tables, dotted key parts, arrays and inline tables together",
                          {}, static_cast<int>(deep->line), 0);
    toml::table root;
    try {
        root = toml::parse(toml_text, source_name);
    } catch (const toml::parse_error& e) {
        const auto& b = e.source().begin;
        throw ConfigError(clip(source_name) + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                              ": TOML syntax error: " + clip(e.description()),
                          {}, static_cast<int>(b.line), static_cast<int>(b.column));
    }
    for (const std::string& o : set_overrides) apply_override(root, o, rep);
    for (const OptionOverride& o : options) apply_option(root, o, rep);

    const Reader rd(rep);
    RunConfig cfg = parse_sections(rd, root, source_name, registry);
    cfg.sweep = parse_sweep(rd, root, cfg, source_name, registry);
    return cfg;
}

std::size_t RunConfig::points() const { return sweep ? sweep->values.size() : 1u; }

std::vector<std::string> Sweep::sets(std::size_t p) const {
    std::vector<std::string> out;
    for (std::size_t a = 0; a < axes.size(); ++a) out.push_back(axes[a].key + "=" + sweep_value_text(values[p][a]));
    return out;
}

std::string Sweep::label(std::size_t p) const {
    std::string out;
    for (std::size_t a = 0; a < axes.size(); ++a)
        out += (a ? ", " : "") + axes[a].name + " = " + sweep_value_text(values[p][a]);
    return out;
}

std::string read_config_text(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw ConfigError("cannot open config '" + clip(path) + "': is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError("cannot open config '" + clip(path) + "': " + std::strerror(errno));
    // NOTE: read at most one byte more than the limit, so that a huge file (or /dev/zero) is refused, not slurped.
    std::string text(static_cast<std::size_t>(max_config_bytes) + 1, '\0');
    in.read(&text[0], static_cast<std::streamsize>(text.size()));
    if (in.bad()) throw ConfigError("cannot read config '" + clip(path) + "': " + std::strerror(errno));
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > static_cast<std::size_t>(max_config_bytes))
        throw ConfigError("config '" + clip(path) + "' is larger than " +
                          std::to_string(max_config_bytes / (1024 * 1024)) +
                          " MiB; a run configuration is a few kB (is this the right file?)");
    // NOTE: the text is kept for the run's state files: without the room read into (16 MiB, every page touched)
    text.shrink_to_fit();
    return text;
}

RunConfig load_config(const std::string& path, const std::vector<std::string>& set_overrides,
                      const std::vector<ModelInfo>& registry, const std::vector<OptionOverride>& options) {
    return parse_config(read_config_text(path), path, set_overrides, registry, options);
}

} // namespace nhvk
