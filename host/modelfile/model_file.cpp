// SPDX-License-Identifier: MIT
#include "modelfile/model_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <toml++/toml.h>

#include "input_limits.hpp"
#include "sym/parse.hpp"

namespace nhvk::modelfile {

std::string shown_path(const std::string& path) {
    const bool plain = path.size() <= 200 && std::all_of(path.begin(), path.end(), [](char c) {
                           return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) <= 0x7e;
                       });
    return plain ? path : shown(path, 160);
}

bool is_model_identifier(const std::string& s) {
    if (s.empty() || s.size() > max_name_length || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

namespace {

const std::string name_grammar =
    " (a letter or '_', then letters, digits and '_', at most " + std::to_string(max_name_length) + " characters)";

/** @brief Reports a problem at a node of the file, with the key and the position (of the file) of the problem. */
class Where {
public:
    // NOTE: the path is the user's (any bytes, any length): printed as it is only when it is short, printable text
    Where(std::string source, std::string prefix) : source_(shown_path(source)), prefix_(std::move(prefix)) {}

    [[noreturn]] void fail(const toml::source_region& at, const std::string& key, const std::string& what) const {
        std::string s = source_;
        if (at.begin.line > 0) s += ":" + std::to_string(at.begin.line) + ":" + std::to_string(at.begin.column);
        throw std::runtime_error(s + ": " + (key.empty() ? std::string() : prefix_ + key + ": ") + what);
    }
    [[noreturn]] void fail(const toml::node& n, const std::string& key, const std::string& what) const {
        fail(n.source(), key, what);
    }
    /** A parse error inside the string at `n`: the position is the file's (the string's first character plus the
     *  error's line and column inside the text); the message quotes the expression's line with a caret. */
    [[noreturn]] void fail_in(const toml::node& n, const std::string& key, const std::string& text,
                              const sym::ParseError& e) const {
        const toml::source_region& at = n.source();
        std::string s = source_;
        if (at.begin.line > 0) {
            // NOTE: the string token starts at `at.begin` with its opening delimiter ("…" or """…"""); a multi-line
            // string's first newline right after the delimiter is not part of its value. Escapes shift columns; an
            // expression rarely has any.
            const std::string raw = token_start(at);
            const bool multi = raw.rfind("\"\"\"", 0) == 0 || raw.rfind("'''", 0) == 0;
            const int delim = multi ? 3 : 1;
            long line = static_cast<long>(at.begin.line) + (e.line - 1);
            long col = e.line == 1 ? static_cast<long>(at.begin.column) + delim + e.column - 1 : e.column;
            if (multi && raw.size() > 3 && (raw[3] == '\n' || raw[3] == '\r')) {
                line += 1;
                if (e.line == 1) col = e.column;
            }
            s += ":" + std::to_string(line) + ":" + std::to_string(col);
        }
        std::string msg = s + ": " + prefix_ + key + ": " + e.what();
        // The expression's line and a caret under the column.
        std::istringstream lines(text);
        std::string ln;
        for (int i = 1; std::getline(lines, ln); ++i)
            if (i == e.line) {
                msg += quoted_line(ln, e.column);
                break;
            }
        throw std::runtime_error(msg);
    }
    /** "\n    <line>\n    <caret under the column>", a long line cut to a window around the column. NOTE: an
     *  expression may be megabytes on one line (a sum of 10^5 terms past the node limit). */
    static std::string quoted_line(const std::string& ln, int column) {
        constexpr std::size_t half = 60; // characters each side of the column
        // byte offsets of the characters (a column counts characters, as ParseError's does)
        std::vector<std::size_t> starts;
        for (std::size_t b = 0; b < ln.size(); ++b)
            if ((static_cast<unsigned char>(ln[b]) & 0xC0u) != 0x80u) starts.push_back(b);
        const std::size_t col = static_cast<std::size_t>(std::max(1, column)) - 1; // 0-based character
        const std::size_t first = col > half ? col - half : 0;
        const std::size_t last = std::min(starts.size(), col + half); // one past the last character shown
        const std::size_t from = first < starts.size() ? starts[first] : ln.size();
        const std::size_t to = last < starts.size() ? starts[last] : ln.size();
        const std::string head = first > 0 ? "..." : "", tail = to < ln.size() ? "..." : "";
        // NOTE: a control character is never echoed (a terminal's escape, a fake line): '?' keeps its column
        std::string shown_part = ln.substr(from, to - from);
        for (char& c : shown_part)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
        return "\n    " + head + shown_part + tail + "\n    " +
               std::string(head.size() + (col - std::min(col, first)), ' ') + "^";
    }
    void set_file_text(std::string text) { file_text_ = std::move(text); }

private:
    std::string token_start(const toml::source_region& at) const {
        std::istringstream in(file_text_);
        std::string ln;
        std::string rest;
        for (std::size_t i = 1; std::getline(in, ln); ++i)
            if (i == at.begin.line) {
                rest = ln.substr(std::min(ln.size(), static_cast<std::size_t>(at.begin.column - 1))) + "\n";
                std::string more;
                if (std::getline(in, more)) rest += more;
                break;
            }
        return rest;
    }
    std::string source_, prefix_, file_text_;
};

struct Loader {
    const toml::table& root;
    std::vector<std::string> ignored; // keys the caller reads (an inline model's `params`)
    Where where;
    FileModel m;
    std::vector<std::string> def_names;              // in dependency order
    std::map<std::string, const toml::node*> def_at; // each definition's string node

    const toml::node& require(const std::string& key) const {
        const toml::node* n = root.get(key);
        if (!n) where.fail(root.source(), key, "required key is missing");
        return *n;
    }
    std::string string_at(const toml::node& n, const std::string& key) const {
        if (const auto* s = n.as_string()) return s->get();
        where.fail(n, key, "expected a string (an expression)");
    }
    std::vector<const toml::node*> strings_at(const toml::node& n, const std::string& key) const {
        const toml::array* a = n.as_array();
        if (!a) where.fail(n, key, "expected an array of strings");
        std::vector<const toml::node*> r;
        for (std::size_t i = 0; i < a->size(); ++i) {
            const toml::node& e = *a->get(i);
            if (!e.is_string()) where.fail(e, key + "[" + std::to_string(i) + "]", "expected a string");
            r.push_back(&e);
        }
        return r;
    }

    void read_header(const std::string& default_name) {
        for (auto&& [k, v] : root)
            if (std::find(model_keys().begin(), model_keys().end(), std::string(k.str())) == model_keys().end() &&
                std::find(ignored.begin(), ignored.end(), std::string(k.str())) == ignored.end()) {
                std::string allowed;
                for (const std::string& s : model_keys()) allowed += (allowed.empty() ? "" : ", ") + s;
                const std::string key(k.str());
                where.fail(k.source().begin.line > 0 ? k.source() : v.source(),
                           is_model_identifier(key) ? key : shown(key), "unknown key; a model has: " + allowed);
            }
        m.info.name = default_name;
        if (const toml::node* n = root.get("name")) {
            m.info.name = string_at(*n, "name");
            if (!is_model_identifier(m.info.name))
                where.fail(*n, "name", "expected a name" + name_grammar + "; it names the model in outputs");
        } else if (!is_model_identifier(m.info.name)) {
            // NOTE: the file's stem names the model here and is checked as `name` is: a file name may hold any byte.
            where.fail(root.source(), "",
                       "the model is named after the file, " + shown(m.info.name) + ", which is not a name" +
                           name_grammar + ": add `name = \"...\"` to the model file, or rename the file");
        }
        m.info.description = "model file " + m.source;
        if (const toml::node* n = root.get("description")) m.info.description = string_at(*n, "description");

        const toml::node& cn = require("coordinates");
        std::set<std::string> seen;
        for (const toml::node* c : strings_at(cn, "coordinates")) {
            const std::string s = c->as_string()->get();
            if (!is_model_identifier(s)) where.fail(*c, "coordinates", shown(s) + " is not a name" + name_grammar);
            if (sym::is_reserved_name(s)) where.fail(*c, "coordinates", "'" + s + "' is reserved in expressions");
            if (!seen.insert(s).second) where.fail(*c, "coordinates", "'" + s + "' is listed twice");
            m.info.coords.push_back(s);
        }
        if (m.info.coords.empty()) where.fail(cn, "coordinates", "expected at least one coordinate");
        m.info.n = static_cast<int>(m.info.coords.size());
        m.info.angles.assign(m.info.coords.size(), false);
        if (const toml::node* an = root.get("angles"))
            for (const toml::node* a : strings_at(*an, "angles")) {
                const std::string s = a->as_string()->get();
                const int i = m.info.coord_index(s);
                if (i < 0) where.fail(*a, "angles", shown(s) + " is not one of the coordinates");
                m.info.angles[static_cast<std::size_t>(i)] = true;
            }

        if (const toml::node* pn = root.get("parameters")) {
            const toml::table* pt = pn->as_table();
            if (!pt)
                where.fail(*pn, "parameters",
                           "expected a table of parameters (name = default, or name = "
                           "{ default = ..., range = \"> 0\" })");
            // NOTE: toml++ keeps a table's keys sorted by name, but a parameter's index is its place in the file (as
            // a built-in model's visit_params numbers them: configs, --param and the twins of the built-in models
            // rely on it), so the entries are taken in the order of their positions in the file.
            std::vector<std::pair<const toml::key*, const toml::node*>> entries;
            for (auto&& [k, v] : *pt) entries.emplace_back(&k, &v);
            std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
                const toml::source_position &x = a.first->source().begin, &y = b.first->source().begin;
                return x.line != y.line ? x.line < y.line : x.column < y.column;
            });
            for (const auto& [kp, vp] : entries) {
                const toml::key& k = *kp;
                const toml::node& v = *vp;
                const std::string name(k.str()), key = "parameters." + name;
                if (!is_model_identifier(name))
                    where.fail(v, "parameters", shown(name) + " is not a name" + name_grammar);
                if (sym::is_reserved_name(name)) where.fail(v, key, "'" + name + "' is reserved in expressions");
                if (m.info.coord_index(name) >= 0) where.fail(v, key, "'" + name + "' is also a coordinate");
                ParamInfo p;
                p.name = name;
                const toml::node* dflt = &v;
                const toml::node* range = nullptr;
                if (const toml::table* t = v.as_table()) {
                    for (auto&& [kk, vv] : *t)
                        if (kk.str() != "default" && kk.str() != "range")
                            where.fail(vv, key + "." + std::string(kk.str()),
                                       "unknown key; a parameter has: default, range");
                    dflt = t->get("default");
                    if (!dflt) where.fail(v, key + ".default", "required key is missing");
                    range = t->get("range");
                }
                if (const auto* b = dflt->as_boolean()) {
                    p.is_bool = true;
                    p.default_value = b->get() ? 1.0 : 0.0;
                    if (range) where.fail(*range, key + ".range", "a boolean parameter has no range");
                } else if (dflt->is_integer() || dflt->is_floating_point()) {
                    p.default_value = dflt->is_integer() ? static_cast<double>(dflt->as_integer()->get())
                                                         : dflt->as_floating_point()->get();
                    if (!std::isfinite(p.default_value)) where.fail(*dflt, key, "expected a finite number");
                    if (range) {
                        // the ranges as messages and the README spell them (to_string of model_info.hpp)
                        const auto* rs = range->as_string();
                        const ParamDomain domains[] = {ParamDomain::positive, ParamDomain::non_negative,
                                                       ParamDomain::any};
                        const auto d = std::find_if(std::begin(domains), std::end(domains),
                                                    [&](ParamDomain x) { return rs && rs->get() == to_string(x); });
                        if (d == std::end(domains))
                            where.fail(*range, key + ".range", "expected one of \"> 0\", \">= 0\", \"finite\"");
                        p.domain = *d;
                    }
                    if (!in_domain(p.domain, p.default_value))
                        where.fail(*dflt, key, "the default is outside the range " + std::string(to_string(p.domain)));
                } else {
                    where.fail(*dflt, key, "expected a number or true/false (the default value)");
                }
                if (p.is_bool) m.flags.push_back(static_cast<int>(m.info.params.size()));
                m.info.params.push_back(p);
            }
        }
        if (m.flags.size() > 4)
            where.fail(*root.get("parameters"), "parameters", "at most 4 boolean parameters (each doubles the code)");
    }

    /// Definitions ordered so that each comes after those it uses; a cycle is an error.
    void order_definitions() {
        const toml::node* dn = root.get("definitions");
        if (!dn) return;
        const toml::table* dt = dn->as_table();
        if (!dt) where.fail(*dn, "definitions", "expected a table of name = \"expression\"");
        std::map<std::string, std::vector<std::string>> uses;
        for (auto&& [k, v] : *dt) {
            const std::string name(k.str()), key = "definitions." + name;
            if (!is_model_identifier(name)) where.fail(v, "definitions", shown(name) + " is not a name" + name_grammar);
            if (sym::is_reserved_name(name)) where.fail(v, key, "'" + name + "' is reserved in expressions");
            if (m.info.coord_index(name) >= 0 || m.info.param_index(name) >= 0)
                where.fail(v, key, "'" + name + "' is also a coordinate or parameter");
            def_at[name] = &v;
            uses[name] = sym::names_in(string_at(v, key));
        }
        // A depth-first walk of the uses, each definition after those it uses. NOTE: an explicit stack (a
        // definition and the index of its next use), not a recursion: a chain of definitions is as long as the file.
        std::set<std::string> done, active;
        std::vector<std::pair<std::string, std::size_t>> stack;
        for (const auto& [root, at] : def_at) {
            if (done.count(root)) continue;
            active.insert(root);
            stack.emplace_back(root, 0);
            while (!stack.empty()) {
                const std::string d = stack.back().first;
                const std::vector<std::string>& used = uses[d];
                if (stack.back().second < used.size()) {
                    const std::string& u = used[stack.back().second++];
                    if (!def_at.count(u) || done.count(u)) continue;
                    if (active.count(u))
                        where.fail(*def_at[u], "definitions." + u,
                                   "'" + u + "' is defined in terms of itself (a cycle)");
                    active.insert(u);
                    stack.emplace_back(u, 0);
                    continue;
                }
                stack.pop_back();
                active.erase(d);
                done.insert(d);
                def_names.push_back(d);
            }
        }
    }

    sym::ParseScope scope_for(unsigned bits) const {
        sym::ParseScope s;
        s.max_nodes = max_model_nodes;
        s.max_nodes_why = "the most a model may have (every variant's expressions together), which keeps its "
                          "generated C++ small enough to compile";
        s.coords = m.info.coords;
        int bit = 0;
        for (std::size_t i = 0; i < m.info.params.size(); ++i) {
            if (m.info.params[i].is_bool) s.flags.emplace_back(m.info.params[i].name, ((bits >> bit++) & 1u) != 0);
            else s.params.emplace_back(m.info.params[i].name, static_cast<int>(i));
        }
        return s;
    }

    int parse(sym::ParseScope s, const toml::node& n, const std::string& key, bool velocities, bool time,
              const std::string& context) {
        const std::string text = string_at(n, key);
        s.allow_velocities = velocities;
        s.allow_time = time;
        s.context = context;
        try {
            return sym::parse_expression(*m.graph, text, s);
        } catch (const sym::ParseError& e) {
            where.fail_in(n, key, text, e);
        }
    }
    Condition condition(sym::ParseScope s, const toml::node& n, const std::string& key, bool velocities,
                        bool double_precision, const std::string& context) {
        const std::string text = string_at(n, key);
        s.allow_velocities = velocities;
        s.allow_time = false;
        s.context = context;
        try {
            const sym::Condition c = sym::parse_condition(*m.graph, text, s, double_precision);
            return Condition{c.lhs, c.rhs, c.strict};
        } catch (const sym::ParseError& e) {
            where.fail_in(n, key, text, e);
        }
    }

    /** The conditions of the array `key` (none when absent), for one precision. */
    std::vector<Condition> conditions(const sym::ParseScope& s, const std::string& key, bool velocities,
                                      bool double_precision, const std::string& context) {
        std::vector<Condition> out;
        if (const toml::node* n = root.get(key)) {
            const std::vector<const toml::node*> cs = strings_at(*n, key);
            for (std::size_t i = 0; i < cs.size(); ++i)
                out.push_back(
                    condition(s, *cs[i], key + "[" + std::to_string(i) + "]", velocities, double_precision, context));
        }
        return out;
    }

    void read_variant(unsigned bits) {
        sym::ParseScope s = scope_for(bits);
        for (const std::string& d : def_names)
            s.definitions.emplace_back(d, parse(s, *def_at[d], "definitions." + d, true, true, "a definition"));
        FileVariant fv;
        const toml::node& ln = require("lagrangian");
        fv.lagrangian = parse(s, ln, "lagrangian", true, true, "the Lagrangian");
        const toml::node& cn = require("constraints");
        const std::vector<const toml::node*> cs = strings_at(cn, "constraints");
        if (cs.empty())
            where.fail(cn, "constraints",
                       "expected at least one constraint (a model without constraints "
                       "has nothing to compare)");
        if (static_cast<int>(cs.size()) >= m.info.n)
            where.fail(cn, "constraints",
                       "expected fewer constraints than coordinates (" + std::to_string(m.info.n) + "), got " +
                           std::to_string(cs.size()));
        for (std::size_t a = 0; a < cs.size(); ++a) {
            const std::string key = "constraints[" + std::to_string(a) + "]";
            const int id = parse(s, *cs[a], key, true, true, "a constraint");
            if (!sym::depends_on(*m.graph, id, sym::Var::v))
                where.fail(*cs[a], key,
                           m.graph->is_constant(id)
                               ? "the constraint depends on nothing (it is a constant)"
                               : "the constraint depends on no velocity: nhvk integrates kinematic constraints "
                                 "phi(q, q', t) = 0; write a holonomic constraint f(q, t) = 0 as its time derivative "
                                 "(sum of df/dq_i * q_i' + df/dt)");
            fv.constraints.push_back(id);
        }
        if (const toml::node* fn = root.get("forces")) {
            const std::vector<const toml::node*> fs = strings_at(*fn, "forces");
            if (static_cast<int>(fs.size()) != m.info.n)
                where.fail(*fn, "forces",
                           "expected one force per coordinate (" + std::to_string(m.info.n) + "), got " +
                               std::to_string(fs.size()));
            for (std::size_t i = 0; i < fs.size(); ++i)
                fv.forces.push_back(parse(s, *fs[i], "forces[" + std::to_string(i) + "]", true, true, "a force"));
        }
        for (int prec = 0; prec < 2; ++prec) {
            fv.chart[prec] = conditions(s, "chart", false, prec == 0, "a chart condition (use velocity_chart)");
            fv.velocity_chart[prec] = conditions(s, "velocity_chart", true, prec == 0, "a velocity chart condition");
        }
        if (const toml::node* sr = root.get("source_residual"))
            fv.source_residual = parse(s, *sr, "source_residual", true, true, "the source residual");
        m.variants.push_back(std::move(fv));
    }

    /// Every velocity must enter L or a constraint: one that enters neither gives the saddle-point matrix
    /// [W -J^T; J 0] a zero column (singular). A velocity that enters only the constraints leaves W singular but the
    /// saddle-point matrix may be regular (heisenberg's sub-Riemannian L = (x'^2 + y'^2)/2 with z' in phi).
    void check_lagrangian() {
        const toml::node& ln = require("lagrangian");
        for (const FileVariant& fv : m.variants)
            for (int i = 0; i < m.info.n; ++i) {
                bool in_constraints = false;
                for (int c : fv.constraints)
                    in_constraints = in_constraints || sym::depends_on(*m.graph, c, sym::Var::v, i);
                if (!in_constraints && !sym::depends_on(*m.graph, fv.lagrangian, sym::Var::v, i))
                    where.fail(ln, "lagrangian",
                               "neither the Lagrangian nor a constraint depends on " +
                                   m.info.coords[static_cast<std::size_t>(i)] +
                                   "' (the saddle-point matrix [W -J^T; J 0] has a zero column: it is singular)" +
                                   (m.variants.size() > 1 ? " in variant " + std::to_string(&fv - m.variants.data())
                                                          : std::string()));
            }
        for (const FileVariant& fv : m.variants)
            if (sym::depends_on(*m.graph, fv.lagrangian, sym::Var::t)) m.lagrangian_depends_on_t = true;
    }
};

std::string file_stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

/** Empty for a regular file's `mode`, else why `path` is no model file (a folder, a FIFO, a device, a socket). */
std::string not_regular(mode_t mode, const std::string& path) {
    const std::string kind = non_regular_kind(mode);
    if (kind.empty()) return {};
    return "'" + clip(path) + "' is " + kind + ", not a model file: name the model's TOML file itself";
}

FileModel load(const toml::table& table, const std::string& source, const std::string& key_prefix,
               const std::string& default_name, const std::string& file_text, std::vector<std::string> ignored) {
    Loader ld{table, std::move(ignored), Where(source, key_prefix), {}, {}, {}};
    ld.where.set_file_text(file_text);
    ld.m.source = source;
    ld.m.graph = std::make_shared<sym::Graph>();
    ld.read_header(default_name);
    ld.order_definitions();
    for (unsigned bits = 0; bits < (1u << ld.m.flags.size()); ++bits) ld.read_variant(bits);
    ld.m.info.k = static_cast<int>(ld.m.variants.front().constraints.size());
    ld.check_lagrangian();
    const FileVariant& v0 = ld.m.variants.front();
    ld.m.has_forces = !v0.forces.empty();
    ld.m.has_chart = !v0.chart[0].empty();
    ld.m.has_velocity_chart = !v0.velocity_chart[0].empty();
    ld.m.has_source_residual = v0.source_residual >= 0;
    std::ostringstream canon;
    canon << table;
    ld.m.text = canon.str();
    return std::move(ld.m);
}

} // namespace

const std::vector<std::string>& model_keys() {
    static const std::vector<std::string> k = {"name",           "description",     "coordinates", "angles",
                                               "lagrangian",     "constraints",     "forces",      "chart",
                                               "velocity_chart", "source_residual", "parameters",  "definitions"};
    return k;
}

FileModel load_model_table(const toml::table& table, const std::string& source, const std::string& key_prefix,
                           const std::string& default_name, const std::vector<std::string>& ignored_keys,
                           const std::string& file_text) {
    return load(table, source, key_prefix, default_name, file_text, ignored_keys);
}

FileModel load_model_file(const std::string& path) {
    // NOTE: O_NONBLOCK: opening a FIFO for reading would wait for a writer forever; the kind is then checked on the
    // open descriptor itself, so nothing can swap the file between the check and the read.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        throw std::runtime_error(shown_path(path) + ": cannot read the model file: " + std::strerror(e));
    }
    struct stat st {};
    std::string problem = ::fstat(fd, &st) != 0
                              ? shown_path(path) + ": cannot read the model file: " + std::strerror(errno)
                              : not_regular(st.st_mode, path);
    std::string text;
    char block[1 << 16];
    while (problem.empty()) {
        const ssize_t n = ::read(fd, block, sizeof block);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) problem = shown_path(path) + ": cannot read the model file: " + std::strerror(errno);
        if (n <= 0) break;
        text.append(block, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (!problem.empty()) throw std::runtime_error(problem);
    return load_model_text(text, path, "", file_stem(path), {});
}

FileModel load_model_text(const std::string& toml_text, const std::string& source, const std::string& table_key,
                          const std::string& default_name, const std::vector<std::string>& ignored_keys) {
    // NOTE: before the TOML parser, which recurses into nested tables and keys (input_limits.hpp), as for a config.
    if (const auto deep = toml_nesting_excess(toml_text))
        throw std::runtime_error(source + ":" + std::to_string(deep->line) + ": nested too deep: expected at most " +
                                 std::to_string(max_nesting_depth) +
                                 " levels of tables, dotted key parts, arrays and inline tables together");
    toml::table root;
    try {
        root = toml::parse(toml_text, source);
    } catch (const toml::parse_error& e) {
        const auto& b = e.source().begin;
        throw std::runtime_error(shown_path(source) + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                                 ": " + std::string(e.description()));
    }
    if (table_key.empty()) return load(root, source, "", default_name, toml_text, ignored_keys);
    const toml::table* t = root.get_as<toml::table>(table_key);
    if (!t) throw std::runtime_error(shown_path(source) + ": no [" + table_key + "] table");
    return load(*t, source, table_key + ".", default_name, toml_text, ignored_keys);
}

} // namespace nhvk::modelfile
