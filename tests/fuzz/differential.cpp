// The random-program differential tester. Each program runs as a traced function (with and
// without static fusion, into fresh results and into the caller's arrays, with every argument
// donated, cut into small chunks on 1, 2 and 8 threads, traced once for arguments of any rank,
// on contiguous arguments and again, from the cache, on strided and transposed ones) and eagerly
// on xtensor; the results must agree: bit for bit where every path computes exactly (integers,
// bools, comparisons, IEEE-exact float ops), within a loose tolerance where the paths may round
// differently (transcendentals, float sums), and with the same exception where one throws. Runs
// that differ only in their thread count must agree bit for bit on every value. A mismatch
// prints the seed and the program, minimised, as C++ ready to paste into a regression test.
//
// XTRACE_FUZZ_SECONDS (default 30) bounds the run, XTRACE_FUZZ_PROGRAMS the count, and
// XTRACE_FUZZ_SEED (default 1) picks the programs. Built with XTRACE_FUZZ_ONNX (the target
// onnx_differential), every program also goes through an ONNX export and load.

#include "../support/threads.hpp"
#include "interpret.hpp"
#include <xtrace/plan/registers.hpp>
#include <xtrace/plan/row_tiles.hpp>

#ifdef XTRACE_FUZZ_ONNX
#include <xtrace/onnx.hpp>
#endif

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <typeinfo>

namespace xtrace::fuzz {
namespace {

template <class T>
using adaptor_t = decltype(xt::adapt(static_cast<T*>(nullptr), std::size_t(0), xt::no_ownership(),
                                     std::vector<std::size_t>{}, std::vector<std::ptrdiff_t>{}));

/// An input's values and the memory the caller passes it in.
template <class T>
struct input {
    xt::xarray<T> values;
    xt::uvector<T> storage; // not std::vector, whose bool form has no data()
    std::vector<std::size_t> shape;
    std::vector<std::ptrdiff_t> strides;

    void lay_out(layout how) {
        shape.assign(values.shape().begin(), values.shape().end());
        const std::size_t rank = shape.size();
        strides.assign(rank, 0);
        std::ptrdiff_t step = how == layout::strided ? 2 : 1;
        if (how == layout::transposed)
            for (std::size_t d = 0; d < rank; step *= static_cast<std::ptrdiff_t>(shape[d++]))
                strides[d] = step;
        else
            for (std::size_t d = rank; d-- > 0; step *= static_cast<std::ptrdiff_t>(shape[d]))
                strides[d] = step;
        storage = xt::uvector<T>(2 * values.size() + 1, T{});
        std::vector<std::size_t> index(rank, 0);
        for (std::size_t k = 0; k < values.size(); ++k) {
            std::ptrdiff_t offset = 0;
            for (std::size_t d = 0; d < rank; ++d)
                offset += static_cast<std::ptrdiff_t>(index[d]) * strides[d];
            storage[static_cast<std::size_t>(offset)] = values.data()[k];
            for (std::size_t d = rank; d-- > 0;) {
                if (++index[d] < shape[d])
                    break;
                index[d] = 0;
            }
        }
    }

    adaptor_t<T> view() {
        // xtensor sizes an adaptor's buffer by its element count whatever its strides; the
        // memory behind it is larger for strided layouts.
        return xt::adapt(storage.data(), values.size(), xt::no_ownership(), shape, strides);
    }
};

template <class T>
T random_value(std::mt19937_64& rng) {
    const int pick = std::uniform_int_distribution<int>(0, 99)(rng);
    if constexpr (std::is_same_v<T, bool>) {
        return pick < 50;
    } else if constexpr (std::is_integral_v<T>) {
        if (pick < 3)
            return std::numeric_limits<T>::min();
        if (pick < 6)
            return std::numeric_limits<T>::max();
        return static_cast<T>(std::uniform_int_distribution<int>(-5, 5)(rng));
    } else {
        constexpr T inf = std::numeric_limits<T>::infinity();
        switch (pick) {
        case 0:
            return std::numeric_limits<T>::quiet_NaN();
        case 1:
            return inf;
        case 2:
            return -inf;
        case 3:
        case 4:
            return T(-0.0);
        case 5:
            return std::numeric_limits<T>::denorm_min() * T(3);
        case 6:
            return std::numeric_limits<T>::max() / T(4);
        default:
            break;
        }
        if (pick < 40) // few distinct values, so that comparisons meet ties
            return static_cast<T>(std::uniform_int_distribution<int>(-6, 6)(rng)) / T(2);
        return static_cast<T>(std::uniform_real_distribution<double>(-4, 4)(rng));
    }
}

template <class T>
xt::xarray<T> random_values(std::mt19937_64& rng, const dims& shape) {
    auto a = xt::xarray<T>::from_shape(std::vector<std::size_t>(shape.begin(), shape.end()));
    for (auto& v : a)
        v = random_value<T>(rng);
    return a;
}

template <class T>
std::string literal(T v) {
    std::ostringstream os;
    if constexpr (std::is_same_v<T, bool>) {
        os << (v ? "true" : "false");
    } else if constexpr (std::is_integral_v<T>) {
        if (v == std::numeric_limits<T>::min())
            os << "std::numeric_limits<" << (sizeof(T) == 4 ? "std::int32_t" : "std::int64_t")
               << ">::min()";
        else
            os << v;
    } else {
        const char* suffix = std::is_same_v<T, float> ? "f" : "";
        if (std::isnan(v))
            os << "NAN";
        else if (std::isinf(v))
            os << (v < 0 ? "-INFINITY" : "INFINITY");
        else if (v == 0 && std::signbit(v))
            os << "-0.0" << suffix;
        else
            os << std::setprecision(std::numeric_limits<T>::max_digits10) << std::showpoint << v
               << suffix;
    }
    return os.str();
}

template <class T>
std::string text_of(const xt::xarray<T>& a) {
    std::string type = std::is_same_v<T, float>          ? "float"
                       : std::is_same_v<T, double>       ? "double"
                       : std::is_same_v<T, std::int32_t> ? "std::int32_t"
                       : std::is_same_v<T, std::int64_t> ? "std::int64_t"
                                                         : "bool";
    std::string out = "xt::adapt(std::vector<" + type + ">{";
    for (std::size_t i = 0; i < a.size(); ++i)
        out += (i ? ", " : "") + literal<T>(a.data()[i]);
    out += "}, std::vector<std::size_t>{";
    for (std::size_t d = 0; d < a.dimension(); ++d)
        out += (d ? ", " : "") + std::to_string(a.shape()[d]);
    return out + "})";
}

/// The inputs of one program: values drawn from `seed` for the program's shapes.
struct inputs {
    input<float> x0, x1;
    input<double> x2;
    input<std::int32_t> x3;
    input<std::int64_t> x4;
    input<bool> x5;

    inputs(const program& p, std::uint64_t seed) {
        std::mt19937_64 rng(seed);
        x0.values = random_values<float>(rng, p.input_shapes[0]);
        x1.values = random_values<float>(rng, p.input_shapes[1]);
        x2.values = random_values<double>(rng, p.input_shapes[2]);
        x3.values = random_values<std::int32_t>(rng, p.input_shapes[3]);
        x4.values = random_values<std::int64_t>(rng, p.input_shapes[4]);
        x5.values = random_values<bool>(rng, p.input_shapes[5]);
    }

    void lay_out(std::mt19937_64& rng) {
        auto pick = [&] {
            return static_cast<layout>(std::uniform_int_distribution<int>(0, 2)(rng));
        };
        x0.lay_out(pick());
        x1.lay_out(pick());
        x2.lay_out(pick());
        x3.lay_out(pick());
        x4.lay_out(pick());
        x5.lay_out(pick());
    }

    void contiguous() {
        for (auto* in : {&x0, &x1})
            in->lay_out(layout::contiguous);
        x2.lay_out(layout::contiguous);
        x3.lay_out(layout::contiguous);
        x4.lay_out(layout::contiguous);
        x5.lay_out(layout::contiguous);
    }

    std::vector<std::string> text() const {
        return {text_of(x0.values), text_of(x1.values), text_of(x2.values),
                text_of(x3.values), text_of(x4.values), text_of(x5.values)};
    }
};

using function_type = decltype(xtrace::function(lambda_of(std::declval<const program&>()), {}));
using result = decltype(std::declval<function_type&>()(
    std::declval<adaptor_t<float>>(), std::declval<adaptor_t<float>>(),
    std::declval<adaptor_t<double>>(), std::declval<adaptor_t<std::int32_t>>(),
    std::declval<adaptor_t<std::int64_t>>(), std::declval<adaptor_t<bool>>()));

/// One path's outcome: the results, or the exception it threw.
struct outcome {
    std::optional<result> values;
    std::string error_type, error;
};

template <class F>
outcome attempt(F&& call) {
    outcome o;
    try {
        o.values = call();
    } catch (const std::logic_error& e) {
        throw; // the tester's own mistake
    } catch (const std::exception& e) {
        o.error_type = typeid(e).name();
        o.error = e.what();
    }
    return o;
}

template <class T>
bool same_bits(T x, T y) {
    return std::memcmp(&x, &y, sizeof x) == 0;
}

// Element k of output slot `slot` agrees; `how` is the value's accuracy.
template <class T>
bool agree(T x, T y, const value_info& how) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x) || std::isnan(y))
            return (std::isnan(x) && std::isnan(y)) || !how.exact;
        if (how.exact)
            return how.zero_sign ? same_bits(x, y) : x == y;
        if (!std::isfinite(x) || !std::isfinite(y) || std::abs(x) > T(1e20) ||
            std::abs(y) > T(1e20))
            return true; // overflow may come a step earlier or later when rounding differs
        const double tol = std::is_same_v<T, float> || how.single ? 2e-3 : 1e-8;
        return std::abs(double(x) - double(y)) <=
               tol * (1 + std::max(std::abs(double(x)), std::abs(double(y))));
    } else {
        return x == y;
    }
}

/// Where two outcomes differ, in words, or "" when they agree.
std::string compare(const outcome& a, const outcome& b, const std::vector<value_info>& info,
                    const std::vector<int>& slots) {
    if (!a.values || !b.values) {
        if (!a.values && !b.values && a.error_type == b.error_type)
            return "";
        return "one path threw and the other did not, or threw another type: '" + a.error +
               "' vs '" + b.error + "'";
    }
    std::string why;
    auto check = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
        if (!why.empty())
            return;
        const auto& x = std::get<K>(*a.values);
        const auto& y = std::get<K>(*b.values);
        const int v = slots[K];
        std::ostringstream os;
        if (x.shape() != y.shape()) {
            os << "output " << K << " (value " << v << "): shapes differ";
            why = os.str();
            return;
        }
        const value_info& how = info[static_cast<std::size_t>(v)];
        for (std::size_t i = 0; i < x.size() && how.checked; ++i)
            if (!agree(x.data()[i], y.data()[i], how)) {
                os << "output " << K << " (value " << v << "), element " << i << ": "
                   << literal(x.data()[i]) << " vs " << literal(y.data()[i]);
                why = os.str();
                return;
            }
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (check(std::integral_constant<std::size_t, K>{}), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<result>>{});
    return why;
}

#ifdef XTRACE_FUZZ_ONNX
/// The program exported to ONNX (with its arguments' dims, or with every dim unknown), loaded
/// back, and run on the same arguments.
outcome through_onnx(const function_type& f, inputs& in, bool symbolic) {
    return attempt([&]() -> result {
        auto spec = [&](const auto& x) {
            using T = typename std::decay_t<decltype(x)>::value_type;
            return xtrace::spec<T>(xtrace::shape_t(x.dimension(), -1));
        };
        const auto v = std::make_tuple(in.x0.view(), in.x1.view(), in.x2.view(), in.x3.view(),
                                       in.x4.view(), in.x5.view());
        const std::string bytes = std::apply(
            [&](const auto&... xs) {
                return symbolic ? xtrace::onnx::export_model(f, spec(xs)...)
                                : xtrace::onnx::export_model(f, xs...);
            },
            v);
        const auto m = xtrace::onnx::load_bytes(bytes);
        const auto outs = std::apply([&](const auto&... xs) { return m(xs...); }, v);
        result r;
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ((std::get<K>(r) =
                  outs.at(K).as<typename std::tuple_element_t<K, result>::value_type>()),
             ...);
        }
        (std::make_index_sequence<std::tuple_size_v<result>>{});
        return r;
    });
}
#endif

/// True when `p` has a step that may need its operands' ranks while tracing (a matmul, a scan
/// slicing rows, a cond, loop or switch_case deciding on a value of unknown rank, a gradient).
bool needs_rank(const program& p) {
    for (const step& s : p.steps)
        if (s.kind == step_kind::matmul || s.kind == step_kind::scan || s.kind == step_kind::cond ||
            s.kind == step_kind::loop || s.kind == step_kind::switch_case ||
            s.kind == step_kind::gradient)
            return true;
    return false;
}

/// `info` with every value compared bit for bit: what two runs that differ only in their
/// thread count must agree on.
std::vector<value_info> bit_exact(std::vector<value_info> info) {
    for (value_info& v : info)
        v.checked = v.exact = v.zero_sign = true;
    return info;
}

/// Programs the any-rank path refused (needs_rank): reported, so that a path refusing
/// everything shows.
std::uint64_t& rank_refusals() {
    static std::uint64_t n = 0;
    return n;
}

/// True when `p` calls back into C++ (host_flatten), which no ONNX model can hold.
bool calls_host(const program& p) {
    for (const step& s : p.steps)
        if (s.kind == step_kind::host_flatten)
            return true;
    return false;
}

/// True when `p` takes a gradient.
bool has_gradient(const program& p) {
    for (const step& s : p.steps)
        if (s.kind == step_kind::gradient)
            return true;
    return false;
}

/// Programs the ONNX exporter refused, as documented: they call back into C++, or export a
/// gradient's sum_to with unknown dims. Reported, like rank_refusals.
std::uint64_t& host_refusals() {
    static std::uint64_t n = 0;
    return n;
}

/// Programs a traced path refused while tracing for a host_function without a gradient callback
/// that a gradient could reach along some path (a cond branch, a scan's steps) that the eager
/// run did not take: tracing differentiates every branch, as TensorFlow's graph mode does for
/// an op without a gradient, and eagerly only what ran is differentiated. Reported.
std::uint64_t& gradient_refusals() {
    static std::uint64_t n = 0;
    return n;
}

/// True when `o` is such a refusal, where the eager run went through.
bool refused_for_host_gradient(const program& p, const outcome& o, const outcome& eager) {
    return !o.values && eager.values && calls_host(p) &&
           o.error_type == typeid(xtrace::tracing_error).name() &&
           o.error.find("host_function has no gradient yet") != std::string::npos;
}

/// Programs whose eager run threw (and every other path threw alike): reported, since a
/// generator that writes only failing programs would test nothing.
std::uint64_t& eager_errors() {
    static std::uint64_t n = 0;
    return n;
}

/// Runs program p on every path; returns what differs, or "".
std::string check(const program& p, std::uint64_t seed) {
    const auto info = infer(p);
    if (!info)
        return "";
    const auto slots = returned_values(p, *info);
    inputs in(p, seed);
    in.contiguous();
    auto call = [&](auto& f) {
        return f(in.x0.view(), in.x1.view(), in.x2.view(), in.x3.view(), in.x4.view(),
                 in.x5.view());
    };
    options quiet;
    quiet.on_warning = [](std::string_view) {};
    auto fused = xtrace::function(lambda_of(p), quiet);
    options plain = quiet;
    plain.static_fusion = false;
    auto interpreted = xtrace::function(lambda_of(p), plain);

    run_functions_eagerly(true);
    const outcome eager = attempt([&] { return call(fused); });
    run_functions_eagerly(false);
    const outcome traced = attempt([&] { return call(fused); });
    const outcome plain_run = attempt([&] { return call(interpreted); });
    const outcome into = attempt([&] { // into the caller's arrays, from the cache
        result r;
        fused.call_into(r, in.x0.view(), in.x1.view(), in.x2.view(), in.x3.view(), in.x4.view(),
                        in.x5.view());
        return r;
    });
    // Cut into chunks of 7 elements (the floor lowered from its default) and run on 1, 2 and
    // 8 threads: on 1 it agrees with eager, and on any count it gives the same bits.
    auto chunked = [&](auto& f, int threads) {
        return attempt([&] {
            const interp::chunk_floor_scope floor(7);
            return testing::on_threads(threads, [&] { return call(f); });
        });
    };
    const outcome chunked_interpreted = chunked(interpreted, 1);
    const outcome chunked_fused = chunked(fused, 1);
    const std::tuple<const char*, int, outcome, const outcome*> more_threads[] = {
        {"interpreted in chunks", 2, chunked(interpreted, 2), &chunked_interpreted},
        {"interpreted in chunks", 8, chunked(interpreted, 8), &chunked_interpreted},
        {"traced in chunks", 2, chunked(fused, 2), &chunked_fused},
    };
    // Planned with a tile budget of one byte: whatever runs row by row runs in tiles of a row.
    // And with row splats on any row: a per-row operand is read as one value per block.
    auto tiled_function = xtrace::function(lambda_of(p), quiet);
    const outcome tiled = attempt([&] {
        const plan::row_tile_scope tiles(1);
        const plan::row_splat_scope splats(1);
        return call(tiled_function);
    });
    // In tiles of a few rows (a tile takes at least 8 elements' rows), each swept through the
    // steps one or two rows at a time, or run step by step.
    auto few_rows = [&](std::size_t sweep) {
        auto f = xtrace::function(lambda_of(p), quiet);
        return attempt([&] {
            const plan::row_tile_scope tiles(8);
            const plan::row_sweep_scope sweeps(sweep);
            return call(f);
        });
    };
    const outcome swept = few_rows(64), stepped = few_rows(0);
    const outcome donated = attempt([&] { // every argument an rvalue array it may write into
        return fused(xt::xarray<float>(in.x0.values), xt::xarray<float>(in.x1.values),
                     xt::xarray<double>(in.x2.values), xt::xarray<std::int32_t>(in.x3.values),
                     xt::xarray<std::int64_t>(in.x4.values), xt::xarray<bool>(in.x5.values));
    });
    // Traced once for arguments of any rank (every axis normalised when planned): what needs a
    // rank while tracing may refuse with a tracing_error, nothing else may differ.
    options any_rank = quiet;
    any_rank.input_signature = std::vector<tensor_spec>{
        spec<float>(xtrace::any_rank),        spec<float>(xtrace::any_rank),
        spec<double>(xtrace::any_rank),       spec<std::int32_t>(xtrace::any_rank),
        spec<std::int64_t>(xtrace::any_rank), spec<bool>(xtrace::any_rank)};
    auto unranked = xtrace::function(lambda_of(p), any_rank);
    outcome unranked_run = attempt([&] { return call(unranked); });
    // A gradient traced for unknown dims may also need them known (a reshape's gradient with
    // more than one unknown dim), as documented.
    if (!unranked_run.values && needs_rank(p) &&
        unranked_run.error_type == typeid(xtrace::detail::needs_known_dims).name() &&
        (unranked_run.error.find("unknown rank") != std::string::npos || has_gradient(p))) {
        ++rank_refusals();
        unranked_run = eager; // a refusal the program explains
    }
#ifdef XTRACE_FUZZ_ONNX
    outcome onnx = through_onnx(fused, in, seed % 2 == 1);
    if (!onnx.values && calls_host(p) && onnx.error_type == typeid(xtrace::model_error).name() &&
        onnx.error.find("runs a C++ callback") != std::string::npos) {
        ++host_refusals();
        onnx = eager; // a model file cannot hold a callback: the exporter says so
    }
    if (!onnx.values && has_gradient(p) &&
        ((onnx.error_type == typeid(xtrace::model_error).name() &&
          onnx.error.find("ONNX needs the summed dims known") != std::string::npos) ||
         onnx.error_type == typeid(xtrace::detail::needs_known_dims).name())) {
        ++host_refusals();
        onnx = eager; // a gradient traced or exported for unknown dims, which it needs known
    }
#endif
    std::mt19937_64 rng(seed ^ 0x5eed);
    in.lay_out(rng);
    const outcome strided = attempt([&] { return call(fused); });

    if (!eager.values) {
        ++eager_errors();
        if (std::getenv("XTRACE_FUZZ_VERBOSE"))
            std::cout << "every path threw: " << eager.error << "\n";
    }
    bool refused = false;
    for (auto [name, o] : {
             std::pair{"traced", &traced},
             std::pair{"interpreted", &plain_run},
             std::pair{"call_into", &into},
             std::pair{"traced on strided arguments", &strided},
             std::pair{"traced for any rank", static_cast<const outcome*>(&unranked_run)},
             std::pair{"traced with donated arguments", &donated},
             std::pair{"interpreted in chunks", &chunked_interpreted},
             std::pair{"traced in chunks", &chunked_fused},
             std::pair{"traced in row tiles", &tiled},
             std::pair{"traced in row tiles of a few rows, swept", &swept},
             std::pair{"traced in row tiles of a few rows, step by step", &stepped},
#ifdef XTRACE_FUZZ_ONNX
             std::pair{"exported to ONNX and loaded", static_cast<const outcome*>(&onnx)},
#endif
         }) {
        if (refused_for_host_gradient(p, *o, eager)) {
            refused = true;
            continue;
        }
        const std::string why = compare(*o, eager, *info, slots);
        if (!why.empty())
            return std::string(name) + " vs eager: " + why;
    }
    gradient_refusals() += refused;
    const auto exact = bit_exact(*info);
    for (const auto& [name, threads, many, one] : more_threads) {
        const std::string why = compare(many, *one, exact, slots);
        if (!why.empty())
            return std::string(name) + " on " + std::to_string(threads) + " threads vs 1: " + why;
    }
    return "";
}

// Smaller programs that still fail, until none is found.
program minimise(program p, std::uint64_t seed) {
    for (int budget = 400; budget > 0;) {
        bool smaller = false;
        for (const program& q : shrink_candidates(p)) {
            if (--budget <= 0)
                break;
            if (infer(q) && !check(q, seed).empty()) {
                p = q;
                smaller = true;
                break;
            }
        }
        if (!smaller)
            break;
    }
    return p;
}

std::uint64_t env(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

} // namespace
} // namespace xtrace::fuzz

int main() {
    using namespace xtrace::fuzz;
    const std::uint64_t seed = env("XTRACE_FUZZ_SEED", 1);
    const std::uint64_t seconds = env("XTRACE_FUZZ_SECONDS", 30);
    const std::uint64_t limit =
        env("XTRACE_FUZZ_PROGRAMS", std::numeric_limits<std::uint64_t>::max());
    std::cout << "differential tester: seed " << seed << ", " << seconds << " s budget\n";
    const auto start = std::chrono::steady_clock::now();
    // A mismatch's program seed, given as XTRACE_FUZZ_FROM, runs that program first.
    const std::uint64_t first = env("XTRACE_FUZZ_FROM", seed * 1000003);
    std::uint64_t programs = 0, failures = 0;
    for (std::uint64_t i = 0; i < limit; ++i) {
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds))
            break;
        const std::uint64_t s = first + i;
        std::mt19937_64 rng(s);
        const program p = generate(rng, std::uniform_int_distribution<std::size_t>(2, 14)(rng));
        ++programs;
        const std::string why = check(p, s);
        if (why.empty())
            continue;
        ++failures;
        const program small = minimise(p, s);
        inputs in(small, s);
        std::cout << "MISMATCH, program seed " << s << ": " << check(small, s) << "\n"
                  << "(first seen as: " << why << ")\n"
                  << to_cpp(small, in.text()) << "\n";
        if (failures >= 5)
            break;
    }
    std::cout << programs << " programs, " << failures << " mismatches, " << eager_errors()
              << " threw on every path, " << rank_refusals()
              << " refused by the any-rank trace (they need ranks), " << gradient_refusals()
              << " refused while tracing (a host function without a gradient on a path not run)";
#ifdef XTRACE_FUZZ_ONNX
    std::cout << ", " << host_refusals()
              << " refused by the ONNX exporter (host functions, gradients of unknown dims)";
#endif
    std::cout << "\n";
    std::cout << (programs - failures) << " passed, " << failures << " failed\n";
    return failures == 0 ? 0 : 1;
}
