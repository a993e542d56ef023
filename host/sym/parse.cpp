// SPDX-License-Identifier: MIT
#include "parse.hpp"

#include "edit_distance.hpp"

#include "nhvk/dynamics.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace nhvk::sym {

namespace {

enum class Tok { number, name, lparen, rparen, comma, plus, minus, star, slash, caret, compare, end };

struct Token {
    Tok kind = Tok::end;
    std::size_t pos = 0; ///< byte offset of the first character
    std::string text;    ///< the characters (a name without its apostrophe)
    bool prime = false;  ///< a name immediately followed by `'`
    double value = 0.0;  ///< a number's value
    bool strict = true;  ///< a comparison: `>`/`<` (true) or `>=`/`<=`
    bool less = false;   ///< a comparison: `<`/`<=`
};

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }

/** @brief Whether `name` begins `candidate` (ignoring case). */
bool begins(const std::string& candidate, const std::string& name) {
    if (name.size() > candidate.size()) return false;
    for (std::size_t i = 0; i < name.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(name[i])) != std::tolower(static_cast<unsigned char>(candidate[i])))
            return false;
    return true;
}

/** @brief "; did you mean 'X'?" for the closest candidate within a few edits (fewer for short names; a candidate
 *         that `name` begins counts as one edit away), else "". */
std::string suggestion(const std::string& name, const std::vector<std::string>& candidates) {
    const std::size_t len = name.size();
    const int allowed = len <= 1 ? 0 : len <= 2 ? 1 : len <= 6 ? 2 : 3;
    const std::string* best = nullptr;
    int best_d = allowed + 1;
    for (const std::string& c : candidates) {
        int d = static_cast<int>(edit_distance(name, c, true));
        if (len >= 2 && begins(c, name)) d = std::min(d, 1);
        if (d < best_d) {
            best_d = d;
            best = &c;
        }
    }
    return best ? "; did you mean '" + *best + "'?" : std::string();
}

template <class V> const typename V::value_type* find_named(const V& list, const std::string& name) {
    for (const auto& e : list)
        if (e.first == name) return &e;
    return nullptr;
}

constexpr unsigned bit(Var v) { return 1u << static_cast<unsigned>(v); }

class Parser {
public:
    Parser(Graph& g, const std::string& text, const ParseScope& scope, bool condition, bool double_precision)
        : g_(g), text_(text), sc_(scope), condition_(condition), double_(double_precision) {
        advance();
    }

    int expression() {
        if (tok_.kind == Tok::end) fail("empty expression", tok_.pos);
        const int e = sum();
        if (tok_.kind == Tok::compare)
            fail(std::string("a comparison ('") + compare_text(tok_) + "') is allowed only in a condition", tok_.pos);
        expect_end();
        return e;
    }

    Condition condition() {
        if (tok_.kind == Tok::end) fail("empty condition", tok_.pos);
        Condition c;
        const int lhs = sum();
        if (tok_.kind != Tok::compare) {
            if (tok_.kind == Tok::end)
                fail("a condition needs a comparison: lhs > rhs, lhs >= rhs, lhs < rhs or lhs <= rhs", tok_.pos);
            expect_end();
        }
        const Token cmp = tok_;
        advance();
        if (tok_.kind == Tok::end) fail("the condition ends after its comparison: expected an expression", tok_.pos);
        const int rhs = sum();
        if (tok_.kind == Tok::compare)
            fail(std::string("a condition has exactly one comparison; this is a second one ('") + compare_text(tok_) +
                     "')",
                 tok_.pos);
        expect_end();
        c.strict = cmp.strict;
        c.lhs = cmp.less ? rhs : lhs; // a < b is b > a
        c.rhs = cmp.less ? lhs : rhs;
        return c;
    }

private:
    // ---- errors ----
    [[noreturn]] void fail(const std::string& message, std::size_t pos) const {
        int line = 1, column = 1;
        for (std::size_t i = 0; i < pos && i < text_.size(); ++i) {
            const unsigned char c = static_cast<unsigned char>(text_[i]);
            if (c == '\n') {
                ++line;
                column = 1;
            } else if ((c & 0xC0u) != 0x80u) { // a character's first byte (UTF-8)
                ++column;
            }
        }
        throw ParseError(message, line, column);
    }
    std::string context() const { return sc_.context.empty() ? std::string("this expression") : sc_.context; }
    static const char* compare_text(const Token& t) {
        if (t.less) return t.strict ? "<" : "<=";
        return t.strict ? ">" : ">=";
    }
    static std::string describe(const Token& t) {
        switch (t.kind) {
        case Tok::number:
        case Tok::name:
            return "'" + t.text + (t.prime ? "'" : "") + "'";
        case Tok::compare:
            return std::string("'") + compare_text(t) + "'";
        case Tok::end:
            return "the end";
        default:
            return "'" + t.text + "'";
        }
    }
    /** @brief The current token is not what `wanted` names: say what is wrong with it. */
    [[noreturn]] void unexpected(const std::string& wanted) const {
        switch (tok_.kind) {
        case Tok::number:
        case Tok::name:
        case Tok::lparen:
            fail("missing operator before " + describe(tok_) + " (expected " + wanted + ")", tok_.pos);
        case Tok::rparen:
            fail("unbalanced parentheses: ')' without a matching '('", tok_.pos);
        case Tok::comma:
            fail("',' outside the arguments of a function (expected " + wanted + ")", tok_.pos);
        default:
            fail("expected " + wanted + ", found " + describe(tok_), tok_.pos);
        }
    }
    void expect_end() const {
        if (tok_.kind != Tok::end) unexpected("an operator or the end of the expression");
    }

public:
    /** @brief The names of the remaining tokens (without their apostrophes), up to the end or the first token the
     *  lexer refuses. */
    void collect_names(std::vector<std::string>& out) {
        while (tok_.kind != Tok::end) {
            if (tok_.kind == Tok::name) out.push_back(tok_.text);
            advance();
        }
    }

private:
    // ---- tokens ----
    void skip_space() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    }
    void advance() {
        skip_space();
        Token t;
        t.pos = pos_;
        if (pos_ >= text_.size()) {
            t.kind = Tok::end;
            tok_ = t;
            return;
        }
        const char c = text_[pos_];
        if (digit(c) || (c == '.' && pos_ + 1 < text_.size() && digit(text_[pos_ + 1]))) {
            lex_number(t);
        } else if (name_start(c)) {
            std::size_t e = pos_;
            while (e < text_.size() && name_char(text_[e])) ++e;
            t.kind = Tok::name;
            t.text = text_.substr(pos_, e - pos_);
            pos_ = e;
            if (pos_ < text_.size() && text_[pos_] == '\'') {
                t.prime = true;
                ++pos_;
            }
        } else if (c == '>' || c == '<') {
            t.kind = Tok::compare;
            t.less = c == '<';
            ++pos_;
            if (pos_ < text_.size() && text_[pos_] == '=') {
                t.strict = false;
                ++pos_;
            }
        } else {
            static const char ops[] = "(),+-*/^";
            static const Tok kinds[] = {Tok::lparen, Tok::rparen, Tok::comma, Tok::plus,
                                        Tok::minus,  Tok::star,   Tok::slash, Tok::caret};
            const char* f = c ? std::strchr(ops, c) : nullptr;
            if (!f) unexpected_character();
            t.kind = kinds[f - ops];
            t.text = std::string(1, c);
            ++pos_;
        }
        tok_ = t;
    }
    [[noreturn]] void unexpected_character() const {
        const char c = text_[pos_];
        if (c == '\'')
            fail("an apostrophe must follow a coordinate's name directly, as in x' (the velocity of x)", pos_);
        if (c == '=' || c == '!')
            fail(std::string("unexpected character '") + c + "': a condition compares with >, >=, < or <=", pos_);
        if (c == '#') fail("unexpected character '#': an expression has no comments", pos_);
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            // NOTE: never echoed raw: a control character in a message is a terminal's escape or a fake line
            char code[8];
            std::snprintf(code, sizeof code, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
            fail(std::string("unexpected control character ") + code, pos_);
        }
        std::size_t e = pos_ + 1; // the whole UTF-8 sequence
        while (e < text_.size() && (static_cast<unsigned char>(text_[e]) & 0xC0u) == 0x80u) ++e;
        fail("unexpected character '" + text_.substr(pos_, e - pos_) + "'", pos_);
    }
    void lex_number(Token& t) {
        const std::size_t start = pos_;
        std::size_t e = pos_;
        while (e < text_.size() && digit(text_[e])) ++e;
        if (e < text_.size() && text_[e] == '.') {
            ++e;
            while (e < text_.size() && digit(text_[e])) ++e;
        }
        if (e < text_.size() && (text_[e] == 'e' || text_[e] == 'E')) {
            ++e;
            if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
            if (e >= text_.size() || !digit(text_[e])) {
                while (e < text_.size() && name_char(text_[e])) ++e;
                fail("malformed number '" + text_.substr(start, e - start) + "': its exponent has no digits", start);
            }
            while (e < text_.size() && digit(text_[e])) ++e;
        }
        t.kind = Tok::number;
        t.text = text_.substr(start, e - start);
        // NOTE: from_chars, not strtod: independent of the locale's decimal separator.
        const char* first = text_.data() + start;
        const char* last = text_.data() + e;
        std::from_chars_result r{};
        if (*first == '.') { // from_chars wants a digit first
            const std::string s = "0" + t.text;
            r = std::from_chars(s.data(), s.data() + s.size(), t.value);
            if (r.ec == std::errc() && r.ptr != s.data() + s.size()) r.ec = std::errc::invalid_argument;
        } else {
            r = std::from_chars(first, last, t.value);
            if (r.ec == std::errc() && r.ptr != last) r.ec = std::errc::invalid_argument;
        }
        if (r.ec == std::errc::result_out_of_range) out_of_range(t);
        if (r.ec != std::errc() || !std::isfinite(t.value))
            fail("the number '" + t.text + "' does not parse to a finite double", t.pos);
        pos_ = e;
    }
    /** @brief A number beyond a double's range: too large (overflow) or so small that it would round to 0
     *         (underflow). NOTE: an underflow is refused rather than read as 0: a literal below 4.9e-324 is almost
     *         surely a typo for another exponent, and 0 is written 0. */
    [[noreturn]] void out_of_range(const Token& t) const {
        // the decimal exponent of the number's first significant digit: the digits before it and the written exponent
        long long magnitude = 0, exponent = 0;
        bool seen_digit = false, in_fraction = false, exp_negative = false;
        std::size_t i = 0;
        for (; i < t.text.size() && t.text[i] != 'e' && t.text[i] != 'E'; ++i) {
            const char c = t.text[i];
            if (c == '.') {
                in_fraction = true;
                continue;
            }
            if (!seen_digit && c == '0') {
                if (in_fraction) --magnitude;
                continue;
            }
            if (!seen_digit) {
                seen_digit = true;
                if (in_fraction) --magnitude;
            } else if (!in_fraction) {
                ++magnitude;
            }
        }
        if (i < t.text.size()) {
            ++i;
            if (i < t.text.size() && (t.text[i] == '+' || t.text[i] == '-')) exp_negative = t.text[i++] == '-';
            for (; i < t.text.size(); ++i) exponent = std::min<long long>(exponent * 10 + (t.text[i] - '0'), 1000000);
        }
        magnitude += exp_negative ? -exponent : exponent;
        if (magnitude < 0)
            fail("the number '" + t.text +
                     "' underflows: it is below the smallest positive double (4.9e-324) and would be 0; write 0 if "
                     "zero is meant",
                 t.pos);
        fail("the number '" + t.text + "' overflows: it is above the largest double (1.8e308)", t.pos);
    }

    // ---- nodes (none while a branch of if(...) that is not taken is parsed) ----
    int constant(double c) { return discard_ ? -1 : counted(g_.constant(c)); }
    int unary(Op op, int a) { return discard_ ? -1 : counted(g_.unary(op, a)); }
    int binary(Op op, int a, int b) { return discard_ ? -1 : counted(g_.binary(op, a, b)); }
    int power(int a, int b) {
        if (discard_) return -1;
        if (g_.is_constant(b)) return counted(g_.power(a, g_.node(b).value));
        // a^b = exp(b·log a) for an exponent that is not a constant (a > 0)
        return counted(g_.unary(Op::exp, g_.binary(Op::mul, b, g_.unary(Op::log, a))));
    }
    /** @brief `id`, after checking the graph against the scope's `max_nodes`. */
    int counted(int id) const {
        if (sc_.max_nodes > 0 && g_.size() > sc_.max_nodes)
            fail("the expressions grow past " + std::to_string(sc_.max_nodes) +
                     " nodes here (operations, counted once where identical)" +
                     (sc_.max_nodes_why.empty() ? std::string() : ": " + sc_.max_nodes_why),
                 tok_.pos);
        return id;
    }

    // ---- grammar ----
    // sum := product (('+' | '-') product)*
    int sum() {
        int a = product();
        while (tok_.kind == Tok::plus || tok_.kind == Tok::minus) {
            const Op op = tok_.kind == Tok::plus ? Op::add : Op::sub;
            advance();
            a = binary(op, a, product());
        }
        return a;
    }
    // product := signed (('*' | '/') signed)*
    int product() {
        int a = signed_factor();
        while (tok_.kind == Tok::star || tok_.kind == Tok::slash) {
            const Op op = tok_.kind == Tok::star ? Op::mul : Op::div;
            advance();
            a = binary(op, a, signed_factor());
        }
        return a;
    }
    // signed := ('-' | '+') signed | power
    // NOTE: a loop, not a recursion: any number of signs costs no stack (−(−x) is x in the graph, so the parity of
    // the minus signs is all that counts).
    int signed_factor() {
        bool negative = false;
        while (tok_.kind == Tok::minus || tok_.kind == Tok::plus) {
            negative ^= tok_.kind == Tok::minus;
            advance();
        }
        const int e = power_factor();
        return negative ? unary(Op::neg, e) : e;
    }
    // power := primary ('^' signed)?   (right-associative: the exponent is itself a signed power)
    int power_factor() {
        const int base = primary();
        if (tok_.kind != Tok::caret) return base;
        const Nesting nest(*this, tok_);
        advance();
        return power(base, signed_factor());
    }
    /** @brief One level of nesting (a parenthesis, a call's arguments, an exponent) while it is parsed: more than
     *         `max_nesting` levels is an error at the token that opens the one too many. NOTE: each level is a few
     *         frames of this recursive-descent parser; the bound keeps the stack small whatever the text. */
    class Nesting {
    public:
        Nesting(Parser& p, const Token& at) : p_(p) {
            if (++p_.depth_ > max_nesting)
                p_.fail("the expression nests deeper than " + std::to_string(max_nesting) +
                            " levels (parentheses, function calls and exponents '^' count)",
                        at.pos);
        }
        ~Nesting() { --p_.depth_; }
        Nesting(const Nesting&) = delete;
        Nesting& operator=(const Nesting&) = delete;

    private:
        Parser& p_;
    };
    int primary() {
        const Token t = tok_;
        switch (t.kind) {
        case Tok::number:
            advance();
            return constant(t.value);
        case Tok::lparen: {
            const Nesting nest(*this, t);
            advance();
            if (tok_.kind == Tok::rparen) fail("empty parentheses: expected an expression inside", tok_.pos);
            const int e = sum();
            close_paren(t);
            return e;
        }
        case Tok::name:
            advance();
            if (tok_.kind == Tok::lparen && !t.prime) return call(t);
            return name(t);
        case Tok::end:
            fail("the expression ends where an operand is expected", t.pos);
        case Tok::rparen:
            fail("expected an operand (a number, a name or '('), found ')'", t.pos);
        default:
            fail("expected an operand (a number, a name or '('), found " + describe(t), t.pos);
        }
    }
    /** @brief Expect the `)` that closes `open`. */
    void close_paren(const Token& open) {
        if (tok_.kind == Tok::rparen) {
            advance();
            return;
        }
        if (tok_.kind == Tok::end) fail("unbalanced parentheses: this '(' is never closed", open.pos);
        unexpected("')' or an operator");
    }

    /** @brief Every name the scope and the language know, for a did-you-mean. */
    std::vector<std::string> known_names() const {
        std::vector<std::string> n(sc_.coords);
        for (const std::string& c : sc_.coords) n.push_back(c + "'");
        for (const auto& p : sc_.params) n.push_back(p.first);
        for (const auto& f : sc_.flags) n.push_back(f.first);
        for (const auto& d : sc_.definitions) n.push_back(d.first);
        for (const FunctionOp& f : function_ops) n.emplace_back(f.name);
        n.emplace_back("if");
        n.emplace_back("t");
        n.emplace_back("pi");
        if (condition_) {
            n.emplace_back("margin");
            n.emplace_back("vfloor");
        }
        return n;
    }
    int coord_index(const std::string& s) const {
        const auto it = std::find(sc_.coords.begin(), sc_.coords.end(), s);
        return it == sc_.coords.end() ? -1 : static_cast<int>(it - sc_.coords.begin());
    }
    static const FunctionOp* function_named(const std::string& s) {
        for (const FunctionOp& f : function_ops)
            if (s == f.name) return &f;
        return nullptr;
    }
    bool is_function_name(const std::string& s) const {
        return function_named(s) || s == "if" || (condition_ && s == "margin");
    }

    /** @brief A name not followed by `(` (or a velocity `x'`). */
    int name(const Token& t) {
        const std::string& s = t.text;
        if (t.prime) {
            const int i = coord_index(s);
            if (i < 0) {
                if (find_named(sc_.params, s) || find_named(sc_.flags, s) || find_named(sc_.definitions, s) ||
                    s == "t" || s == "pi" || is_function_name(s))
                    fail("'" + s + "' is not a coordinate: only a coordinate has a velocity (" + s + "')", t.pos);
                fail("unknown coordinate '" + s + "' in the velocity " + s + "'" + suggestion(s, sc_.coords), t.pos);
            }
            if (!sc_.allow_velocities)
                fail("velocities are not allowed in " + context() + " (found " + s + "')", t.pos);
            return discard_ ? -1 : g_.variable(Var::v, i);
        }
        if (const int i = coord_index(s); i >= 0) return discard_ ? -1 : g_.variable(Var::q, i);
        if (const auto* p = find_named(sc_.params, s)) return discard_ ? -1 : g_.variable(Var::param, p->second);
        if (find_named(sc_.flags, s))
            fail("'" + s + "' is a boolean parameter: it can only choose between two expressions, as in if(" + s +
                     ", a, b)",
                 t.pos);
        if (const auto* d = find_named(sc_.definitions, s)) {
            const unsigned deps = g_.dep_mask(d->second);
            if (!sc_.allow_velocities && (deps & bit(Var::v)))
                fail("'" + s + "' depends on the velocities, which are not allowed in " + context(), t.pos);
            if (!sc_.allow_time && (deps & bit(Var::t)))
                fail("'" + s + "' depends on time 't', which is not allowed in " + context(), t.pos);
            return discard_ ? -1 : d->second;
        }
        if (s == "t") {
            if (!sc_.allow_time) fail("time 't' is not allowed in " + context(), t.pos);
            return discard_ ? -1 : g_.variable(Var::t, 0);
        }
        if (s == "pi") return constant(3.14159265358979323846);
        if (condition_ && s == "vfloor") return vfloor(t);
        if (s == "if") fail("'if' is written if(flag, a, b)", t.pos);
        if (is_function_name(s)) fail("'" + s + "' is a function: call it as " + s + "(...)", t.pos);
        fail("unknown name '" + s + "'" + suggestion(s, known_names()), t.pos);
    }

    /** @brief velocity_chart_margin<T>() · max(1, max_j |v_j|), as velocity_chart_floor of nhvk/dynamics.hpp. */
    int vfloor(const Token& t) {
        if (!sc_.allow_velocities) fail("'vfloor' reads the velocities, which are not allowed in " + context(), t.pos);
        if (discard_) return -1;
        const double margin =
            double_ ? velocity_chart_margin<double>() : static_cast<double>(velocity_chart_margin<float>());
        int s = g_.constant(1.0);
        for (int j = 0; j < static_cast<int>(sc_.coords.size()); ++j)
            s = g_.binary(Op::max, s, g_.unary(Op::abs, g_.variable(Var::v, j)));
        return g_.binary(Op::mul, g_.constant(margin), s);
    }

    /** @brief The arguments of a call, after its `(`, through its `)`. */
    std::vector<int> arguments(const Token& open) {
        std::vector<int> args;
        if (tok_.kind == Tok::rparen) {
            advance();
            return args;
        }
        for (;;) {
            args.push_back(sum());
            if (tok_.kind == Tok::comma) {
                advance();
                continue;
            }
            if (tok_.kind == Tok::rparen) {
                advance();
                return args;
            }
            if (tok_.kind == Tok::end) fail("unbalanced parentheses: this '(' is never closed", open.pos);
            unexpected("',', ')' or an operator");
        }
    }
    [[noreturn]] void arity(const Token& fn, int wanted, std::size_t got, const std::string& what = "") const {
        fail(fn.text + " takes " + std::to_string(wanted) + (wanted == 1 ? " argument" : " arguments") + what +
                 ", got " + std::to_string(got),
             fn.pos);
    }

    /** @brief `name(` ...: a function of the table, if(...), or margin(...) in a condition. */
    int call(const Token& fn) {
        const Nesting nest(*this, fn);
        const Token open = tok_;
        advance();
        if (fn.text == "if") return if_call(fn, open);
        if (condition_ && fn.text == "margin") return margin_call(fn, open);
        if (const FunctionOp* f = function_named(fn.text)) {
            const std::vector<int> args = arguments(open);
            if (static_cast<int>(args.size()) != f->arity) arity(fn, f->arity, args.size());
            if (f->arity == 1) return unary(f->op, args[0]);
            return binary(f->op, args[0], args[1]);
        }
        const std::string& s = fn.text;
        if (coord_index(s) >= 0 || find_named(sc_.params, s) || find_named(sc_.flags, s) ||
            find_named(sc_.definitions, s) || s == "t" || s == "pi" || (condition_ && s == "vfloor"))
            fail("'" + s + "' is not a function (missing operator before '('?)", fn.pos);
        std::vector<std::string> functions;
        for (const FunctionOp& f : function_ops) functions.emplace_back(f.name);
        functions.emplace_back("if");
        if (condition_) functions.emplace_back("margin");
        fail("unknown function '" + s + "'" + suggestion(s, functions), fn.pos);
    }

    /** @brief if(flag, a, b): the branch that `flag`'s value does not take is parsed with no nodes made. */
    int if_call(const Token& fn, const Token& open) {
        const Token f = tok_;
        const auto* flag = f.kind == Tok::name && !f.prime ? find_named(sc_.flags, f.text) : nullptr;
        if (!flag) {
            if (f.kind == Tok::rparen) arity(fn, 3, 0, " (flag, a, b)");
            std::string names;
            for (const auto& fl : sc_.flags) names += (names.empty() ? "" : ", ") + fl.first;
            fail("the first argument of if(flag, a, b) must be a boolean parameter" +
                     (names.empty() ? std::string(" (there are none here)") : " (one of: " + names + ")") + ", found " +
                     describe(f),
                 f.pos);
        }
        advance();
        int branch[2] = {-1, -1};
        std::size_t got = 1;
        for (int i = 0; i < 2; ++i) {
            if (tok_.kind == Tok::rparen) arity(fn, 3, got, " (flag, a, b)");
            if (tok_.kind == Tok::end) fail("unbalanced parentheses: this '(' is never closed", open.pos);
            if (tok_.kind != Tok::comma) unexpected("',' or an operator");
            advance();
            const bool taken = (i == 0) == flag->second;
            if (!taken) ++discard_;
            branch[i] = sum();
            if (!taken) --discard_;
            ++got;
        }
        if (tok_.kind == Tok::comma) { // count the extra arguments for the message
            advance();
            ++discard_;
            const std::vector<int> extra = arguments(open);
            --discard_;
            arity(fn, 3, got + std::max<std::size_t>(extra.size(), 1), " (flag, a, b)");
        }
        close_paren(open);
        return flag->second ? branch[0] : branch[1];
    }

    /** @brief margin(a, b): the number `a` in double precision, `b` in single precision. */
    int margin_call(const Token& fn, const Token& open) {
        double v[2] = {0.0, 0.0};
        std::size_t got = 0;
        for (;;) {
            if (tok_.kind == Tok::rparen && got == 0) break;
            bool negative = false;
            const Token first = tok_;
            while (tok_.kind == Tok::minus || tok_.kind == Tok::plus) {
                negative ^= tok_.kind == Tok::minus;
                advance();
            }
            if (tok_.kind != Tok::number)
                fail("the arguments of margin(a, b) must be numbers, found " + describe(tok_), first.pos);
            if (got < 2) v[got] = negative ? -tok_.value : tok_.value;
            ++got;
            advance();
            if (tok_.kind == Tok::comma) {
                advance();
                continue;
            }
            if (tok_.kind == Tok::rparen) break;
            if (tok_.kind == Tok::end) fail("unbalanced parentheses: this '(' is never closed", open.pos);
            fail("the arguments of margin(a, b) must be numbers, found " + describe(tok_) + " after one", tok_.pos);
        }
        advance();
        if (got != 2) arity(fn, 2, got);
        return constant(double_ ? v[0] : v[1]);
    }

    Graph& g_;
    const std::string& text_;
    const ParseScope& sc_;
    bool condition_, double_;
    std::size_t pos_ = 0;
    Token tok_;
    int discard_ = 0;
    int depth_ = 0; ///< the levels of nesting being parsed (`Nesting`)
};

/** @brief The text of a leaf (a constant or a variable). */
std::string leaf_text(const Node& n, const ParseScope& scope) {
    if (n.op == Op::constant) {
        if (!std::isfinite(n.value)) throw std::logic_error("sym::to_text: a non-finite constant");
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", n.value);
        return n.value < 0 ? "(" + std::string(buf) + ")" : std::string(buf);
    }
    switch (n.var) {
    case Var::q:
    case Var::v:
        if (n.index < 0 || n.index >= static_cast<int>(scope.coords.size()))
            throw std::logic_error("sym::to_text: a coordinate the scope does not name");
        return scope.coords[static_cast<std::size_t>(n.index)] + (n.var == Var::v ? "'" : "");
    case Var::t:
        return "t";
    case Var::param:
        for (const auto& p : scope.params)
            if (p.second == n.index) return p.first;
        throw std::logic_error("sym::to_text: a parameter the scope does not name");
    default:
        throw std::logic_error("sym::to_text: a multiplier has no name in the expression language");
    }
}

/** @brief `root` fully parenthesized. NOTE: an explicit stack, not a recursion: a graph may be as deep as it has
 *         nodes (a flat sum of many terms is a chain). */
void print(const Graph& g, int root, const ParseScope& scope, std::string& out) {
    struct Item {
        int id;           ///< a node to print, or −1: print `text`
        std::string text; ///< the text between and around the arguments
    };
    std::vector<Item> stack{{root, {}}};
    const auto text = [&](std::string t) { stack.push_back({-1, std::move(t)}); };
    const auto node = [&](int id) { stack.push_back({id, {}}); };
    while (!stack.empty()) {
        Item it = std::move(stack.back());
        stack.pop_back();
        if (it.id < 0) {
            out += it.text;
            continue;
        }
        const Node& n = g.node(it.id);
        // the parts of the node, pushed last first
        switch (n.op) {
        case Op::constant:
        case Op::variable:
            out += leaf_text(n, scope);
            continue;
        case Op::neg:
            text(")");
            node(n.a);
            out += "(-";
            continue;
        case Op::pow: {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", n.value);
            text(n.value < 0 ? "^(" + std::string(buf) + "))" : "^" + std::string(buf) + ")");
            node(n.a);
            out += "(";
            continue;
        }
        case Op::add:
        case Op::sub:
        case Op::mul:
        case Op::div:
            text(")");
            node(n.b);
            text(n.op == Op::add ? " + " : n.op == Op::sub ? " - " : n.op == Op::mul ? " * " : " / ");
            node(n.a);
            out += "(";
            continue;
        default:
            break;
        }
        const FunctionOp* f = function_op(n.op);
        if (!f) throw std::logic_error("sym::to_text: unexpected node");
        text(")");
        if (f->arity == 2) {
            node(n.b);
            text(", ");
        }
        node(n.a);
        out += f->name;
        out += "(";
    }
}

} // namespace

int parse_expression(Graph& g, const std::string& text, const ParseScope& scope) {
    return Parser(g, text, scope, false, true).expression();
}

Condition parse_condition(Graph& g, const std::string& text, const ParseScope& scope, bool double_precision) {
    return Parser(g, text, scope, true, double_precision).condition();
}

std::vector<int> dependencies(const Graph& g, int root) {
    std::vector<char> seen(static_cast<std::size_t>(g.size()), 0);
    std::vector<int> stack{root}, out;
    while (!stack.empty()) {
        const int id = stack.back();
        stack.pop_back();
        if (seen[static_cast<std::size_t>(id)]) continue;
        seen[static_cast<std::size_t>(id)] = 1;
        out.push_back(id);
        const Node& n = g.node(id);
        if (n.a >= 0) stack.push_back(n.a);
        if (n.b >= 0) stack.push_back(n.b);
    }
    std::sort(out.begin(), out.end());
    return out;
}

bool depends_on(const Graph& g, int root, Var var, int index) {
    if ((g.dep_mask(root) & bit(var)) == 0u) return false;
    if (index < 0) return true;
    for (const int id : dependencies(g, root)) {
        const Node& n = g.node(id);
        if (n.op == Op::variable && n.var == var && n.index == index) return true;
    }
    return false;
}

std::string to_text(const Graph& g, int root, const ParseScope& scope) {
    std::string out;
    print(g, root, scope, out);
    return out;
}

std::vector<std::string> names_in(const std::string& text) {
    Graph g;
    const ParseScope scope;
    std::vector<std::string> names;
    try {
        Parser(g, text, scope, true, true).collect_names(names);
    } catch (const ParseError&) {
        // NOTE: the names before a character the lexer refuses; parsing the text reports the error with its position
    }
    return names;
}

bool is_reserved_name(const std::string& name) {
    if (name == "t" || name == "pi" || name == "if" || name == "margin" || name == "vfloor") return true;
    for (const FunctionOp& f : function_ops)
        if (name == f.name) return true;
    return false;
}

} // namespace nhvk::sym
