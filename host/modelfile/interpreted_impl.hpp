// SPDX-License-Identifier: MIT
/** @file
 *  @brief The interpreter of model files (modelfile/interpreted.hpp): a model struct of the model concept whose
 *         functions evaluate the parsed expressions, instantiated per size by the translation units CMake generates
 *         (build/gen/interpreted_<n>_<k>.cpp, one per entry of `NHVK_INTERPRETED_SIZES`).
 *
 *  The engine's ops are plain function pointers without a context argument, and a model struct is built by the
 *  engine as `M{}` (make_model) deep inside its loops. So the model file an `InterpretedModel<N, K>` reads is the one
 *  made *active* for that size: each ModelOps handed out is bound to one of `interpreted_slots` slots and makes its
 *  model active (under a lock of that size) for the length of the call. Calls of two interpreted models of one size
 *  therefore take turns; a run integrates one model.
 */
#pragma once

#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model_ops_impl.hpp"
#include "modelfile/model_file.hpp"
#include "sym/parse.hpp"

namespace nhvk::modelfile::interp {

/** @brief Interpreted models of one size that a process can hold at once. */
inline constexpr int interpreted_slots = 8;

/** @brief Some nodes of a graph as a flat program: each instruction is its node with the arguments' ids replaced by
 *         the indices of their instructions. */
class Tape {
public:
    Tape() = default;
    Tape(const sym::Graph& g, const std::vector<int>& outputs) {
        std::vector<int> slot(static_cast<std::size_t>(g.size()), -1);
        for (const int id : sym::needed_nodes(g, outputs)) {
            sym::Node in = g.node(id);
            if (in.op == sym::Op::variable && (in.var == sym::Var::mu || in.var == sym::Var::lambda))
                throw std::logic_error("interpreted model: a multiplier variable in a model's expression");
            if (in.a >= 0) in.a = slot[static_cast<std::size_t>(in.a)];
            if (in.b >= 0) in.b = slot[static_cast<std::size_t>(in.b)];
            slot[static_cast<std::size_t>(id)] = static_cast<int>(code_.size());
            code_.push_back(in);
        }
        for (int o : outputs) out_.push_back(slot[static_cast<std::size_t>(o)]);
    }

    /** @brief The outputs at `(q, v, t)` with parameters `p`, in any scalar `S`, with the arithmetic of
     *         `sym::evaluate` (`sym::apply_operation`). */
    template <class S> void run(const S* q, const S* v, const S& t, const double* p, S* out) const {
        // NOTE: one scratch vector per thread and scalar type: no allocation per right-hand side once warm. A tape's
        // run calls no other tape, so the vector is never in use twice on a thread.
        thread_local std::vector<S> val;
        if (val.size() < code_.size()) val.resize(code_.size());
        for (std::size_t i = 0; i < code_.size(); ++i) {
            const sym::Node& in = code_[i];
            if (in.op == sym::Op::variable)
                val[i] = in.var == sym::Var::q   ? q[in.index]
                         : in.var == sym::Var::v ? v[in.index]
                         : in.var == sym::Var::t ? t
                                                 : S(p[in.index]);
            else
                val[i] = sym::apply_operation(in, in.a >= 0 ? &val[static_cast<std::size_t>(in.a)] : nullptr,
                                              in.b >= 0 ? &val[static_cast<std::size_t>(in.b)] : nullptr);
        }
        for (std::size_t i = 0; i < out_.size(); ++i) out[i] = val[static_cast<std::size_t>(out_[i])];
    }
    bool empty() const { return out_.empty(); }

private:
    std::vector<sym::Node> code_;
    std::vector<int> out_;
};

/** @brief A chart's conditions as one tape of (lhs, rhs) pairs. */
struct Conditions {
    Tape tape;
    std::vector<bool> strict;
};

/** @brief One combination of the boolean parameters as tapes. */
struct VariantTapes {
    Tape lagrangian, constraints, forces, source_residual;
    Conditions chart[2], velocity_chart[2]; ///< [0]: double precision, [1]: float
};

/** @brief What an interpreted model reads of its model file, made once. */
struct Program {
    ModelInfo info;
    std::vector<int> flags;
    std::vector<VariantTapes> variants;
    bool has_forces = false;

    explicit Program(const FileModel& m) : info(m.info), flags(m.flags), has_forces(m.has_forces) {
        const sym::Graph& g = *m.graph;
        for (const FileVariant& fv : m.variants) {
            VariantTapes vt;
            vt.lagrangian = Tape(g, {fv.lagrangian});
            vt.constraints = Tape(g, fv.constraints);
            if (!fv.forces.empty()) vt.forces = Tape(g, fv.forces);
            if (fv.source_residual >= 0) vt.source_residual = Tape(g, {fv.source_residual});
            for (int prec = 0; prec < 2; ++prec) {
                vt.chart[prec] = conditions(g, fv.chart[prec]);
                vt.velocity_chart[prec] = conditions(g, fv.velocity_chart[prec]);
            }
            variants.push_back(std::move(vt));
        }
    }

private:
    static Conditions conditions(const sym::Graph& g, const std::vector<Condition>& cs) {
        Conditions c;
        std::vector<int> outs;
        for (const Condition& x : cs) {
            outs.push_back(x.lhs);
            outs.push_back(x.rhs);
            c.strict.push_back(x.strict);
        }
        if (!outs.empty()) c.tape = Tape(g, outs);
        return c;
    }
};

/** @brief The active model of each size, and the slots bound to ModelOps. */
template <int N, int K> struct Active {
    static inline std::recursive_mutex mutex;
    static inline const Program* program = nullptr;
    static inline const Program* slots[interpreted_slots] = {};
};

/**
 * @brief A model file of `N` coordinates and `K` constraints, read at run time (the active program of its size).
 *
 * Every optional part of the model concept is declared (`has_force`, a time-dependent `L`, both charts, the source
 * residual): a model file without one gets what the concept's default gives (zero force, `∂L/∂t` exactly 0 by AD of
 * an `L` free of `t`, charts that always hold, a zero residual), so the motion and the statistics are the compiled
 * model's; the balance then carries a `w_F` integral that stays 0, outside the step control.
 */
template <int N, int K> struct InterpretedModel : ModelBase {
    static constexpr int n = N, k = K;
    // NOTE: the names are the active program's (classify and the sampling plan's check read them as M::name)
    static inline const char* name = "";
    static inline const char* description = "";
    static inline bool angles[N] = {};
    static constexpr bool has_force = true;
    static constexpr bool lagrangian_depends_on_t = true;
    static constexpr bool has_chart = true;
    static constexpr bool has_velocity_chart = true;
    static constexpr bool has_source_constraints = true;

    const Program* prog;
    double p[max_params];
    bool b[max_params];

    InterpretedModel() : prog(Active<N, K>::program) {
        if (!prog) throw std::logic_error("interpreted model: no model file is active for its size");
        for (std::size_t i = 0; i < prog->info.params.size(); ++i) {
            p[i] = prog->info.params[i].default_value;
            b[i] = prog->info.params[i].default_value != 0.0;
        }
    }
    template <class V> void visit_params(V&& visit) {
        for (std::size_t i = 0; i < prog->info.params.size(); ++i) {
            const ParamInfo& pi = prog->info.params[i];
            if (pi.is_bool) visit(pi.name.c_str(), b[i]);
            else visit(pi.name.c_str(), p[i], pi.domain);
        }
    }
    /** @brief Whether the model file gives forces (classify reports this, not `has_force`). */
    bool declares_force() const { return prog->has_forces; }

    const VariantTapes& tapes() const {
        unsigned variant = 0;
        for (std::size_t i = 0; i < prog->flags.size(); ++i)
            if (b[prog->flags[i]]) variant |= 1u << i;
        return prog->variants[variant];
    }
    template <class S> S lagrangian(const S* q, const S* v, const S& t) const {
        S L;
        tapes().lagrangian.run(q, v, t, p, &L);
        return L;
    }
    template <class S> void constraints(const S* q, const S* v, const S& t, S* phi) const {
        tapes().constraints.run(q, v, t, p, phi);
    }
    template <class S> void force(const S* q, const S* v, const S& t, S* F) const {
        const Tape& tp = tapes().forces;
        if (tp.empty())
            for (int i = 0; i < N; ++i) F[i] = S(0);
        else tp.run(q, v, t, p, F);
    }
    template <class T> bool in_chart(const T* q) const {
        const T none[N] = {};
        return holds(tapes().chart[sizeof(T) >= 8 ? 0 : 1], q, none);
    }
    template <class T> bool in_velocity_chart(const T* q, const T* v) const {
        return holds(tapes().velocity_chart[sizeof(T) >= 8 ? 0 : 1], q, v);
    }
    template <class T> T source_residual(const T* q, const T* v, const T& t) const {
        const Tape& tp = tapes().source_residual;
        T r = T(0);
        if (!tp.empty()) tp.run(q, v, t, p, &r);
        return r;
    }

private:
    template <class T> bool holds(const Conditions& c, const T* q, const T* v) const {
        if (c.strict.empty()) return true;
        // NOTE: per thread, as the tape's own scratch: the charts are tested at every right-hand side
        thread_local std::vector<T> lr;
        lr.resize(2 * c.strict.size());
        c.tape.run(q, v, T(0), p, lr.data());
        for (std::size_t i = 0; i < c.strict.size(); ++i)
            if (!(c.strict[i] ? lr[2 * i] > lr[2 * i + 1] : lr[2 * i] >= lr[2 * i + 1])) return false;
        return true;
    }
};

/** @brief Makes slot `Slot`'s program the active one of its size for the life of the guard. */
template <int N, int K, int Slot> struct Activate {
    std::lock_guard<std::recursive_mutex> lock{Active<N, K>::mutex};
    const Program* saved = Active<N, K>::program;
    Activate() { activate(Active<N, K>::slots[Slot]); }
    ~Activate() {
        if (saved) activate(saved);
    }
    static void activate(const Program* p) {
        using M = InterpretedModel<N, K>;
        Active<N, K>::program = p;
        M::name = p->info.name.c_str();
        M::description = p->info.description.c_str();
        for (int j = 0; j < N; ++j) M::angles[j] = p->info.angles[static_cast<std::size_t>(j)];
    }
};

/** @brief The ModelOps of slot `Slot`: each entry activates the slot's program, then runs the engine. */
template <int N, int K, int Slot> struct Bound {
    using M = InterpretedModel<N, K>;
    using A = Activate<N, K, Slot>;
    static ModelInfo info() { return Active<N, K>::slots[Slot]->info; }
    static void run_chunk(const ChunkCommon& c, const ChunkArgs& a, int threads) {
        A on;
        ops_detail::run_chunk_cpu_with<M, AdEquations>(c, a, threads);
    }
    static TrajectoryResult trajectory(const TrajectoryRequest& req) {
        A on;
        return ops_detail::trajectory_cpu_with<M, AdEquations>(req);
    }
    static void write_csv(const TrajectoryRequest& req, const TrajectoryResult& r, std::FILE* out) {
        A on;
        ops_detail::write_trajectory_csv_with<M, AdEquations<M, double>>(req, r, out);
    }
    static double constraint_violation(const double* params, const double* q, const double* v, double t) {
        A on;
        return ops_detail::constraint_violation<M>(params, q, v, t);
    }
    static double source_violation(const double* params, const double* q, const double* v, double t) {
        A on;
        return ops_detail::source_violation<M>(params, q, v, t);
    }
    static void sample_chunk(const ChunkCommon& c, const ChunkArgs& a, std::uint64_t first, int threads) {
        A on;
        sample_chunk_cpu<M, AdEquations>(c, a, first, threads);
    }
    static Classification classify(const double* params) {
        A on;
        return ops_detail::classify_model<M>(params);
    }
    static ModelOps ops() {
        ModelOps o;
        o.info = &info;
        o.run_chunk_cpu = &run_chunk;
        o.trajectory_cpu = &trajectory;
        o.write_trajectory_csv = &write_csv;
        o.constraint_violation = &constraint_violation;
        o.source_violation = &source_violation;
        o.sample_chunk_cpu = &sample_chunk;
        o.classify = &classify;
        return o;
    }
};

template <int N, int K, int... Slot> ModelOps bind_slot(int slot, std::integer_sequence<int, Slot...>) {
    ModelOps o{};
    ((Slot == slot ? (void)(o = Bound<N, K, Slot>::ops()) : (void)0), ...);
    return o;
}

/** @brief The ops of `program` (which must outlive them) at size (N, K): the first free slot of that size. */
template <int N, int K> ModelOps bind(const Program* program) {
    std::lock_guard<std::recursive_mutex> lock(Active<N, K>::mutex);
    for (int s = 0; s < interpreted_slots; ++s)
        if (!Active<N, K>::slots[s]) {
            Active<N, K>::slots[s] = program;
            return bind_slot<N, K>(s, std::make_integer_sequence<int, interpreted_slots>{});
        }
    throw std::runtime_error("this process already interprets " + std::to_string(interpreted_slots) +
                             " model files of " + std::to_string(N) + " coordinates and " + std::to_string(K) +
                             " constraints");
}

} // namespace nhvk::modelfile::interp
