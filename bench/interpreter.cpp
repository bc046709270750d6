// The interpreter past static fusion, on 1 thread: elementwise expressions too large for one
// compiled kernel (42 and 105 ops), a row sum of a 42-op expression, layer norm and softmax, each
// against a hand-written xsimd loop (the anchor) measured in the same run. xtrace runs them as
// traced (compiled pieces of at most 32 ops, run by the block interpreter) and op by op
// (`static_fusion = false`: one interpreter kernel per op). Two more anchors tell what the
// plans' structure costs by itself: the hand loop over tiles of 31 rows (`hand_xsimd_tiled`,
// layer norm on 1024 x 1024) and over groups of as many rows as a row sweep takes
// (`hand_xsimd_swept`, layer norm and softmax on 4096 x 256), each pass over a group before the
// next. `--alternate=R` times the hand loop and xtrace in alternating rounds instead (see
// alternate), for a ratio that a busy machine moves less.

#include "ratio_reporter.hpp"

#include <xtrace/xtrace.hpp>

#include <xtrace/ext/xsimd.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace {

using B = xsimd::batch<float>;

// Steps of five ops, every value read once, with a tanh every fourth step: one expression for
// the traced lambda (symbolic tensors) and the hand loop (xsimd batches). Each step has constants
// of its own, so no step repeats another's subexpression: a compiler would compute a repeated
// `y * 0.5f - 0.25f` once in the hand loop, and a compiled piece, whose type cannot tell `x`
// from `y`, once per step.
template <int Steps, class V, class X, class Y>
auto chain(const V& v, const X& x, const Y& y) {
    using std::tanh;
    using xsimd::tanh;
    using xtrace::tanh;
    if constexpr (Steps == 0) {
        return v;
    } else {
        constexpr float scale = 0.5f + 0.0625f * (Steps % 8), shift = 0.25f - 0.03125f * Steps;
        auto next = (chain<Steps - 1>(v, x, y) * 0.75f + x) * (y * scale - shift);
        if constexpr (Steps % 4 == 0)
            return tanh(next);
        else
            return next;
    }
}

constexpr std::size_t n = std::size_t(1) << 20;
constexpr float eps = 1e-5f;

xt::xarray<float> input(std::vector<std::size_t> shape, float phase) {
    xt::xarray<float> x = xt::xarray<float>::from_shape(shape);
    for (std::size_t i = 0; i < x.size(); ++i)
        x.data()[i] =
            static_cast<float>((i * 7 + static_cast<std::size_t>(phase)) % 1000) * 0.004f - 2.f;
    return x;
}

// The workloads, by benchmark argument.
enum workload : std::int64_t {
    ops42,
    ops105,
    row_sum,
    layer_norm,
    softmax,
    layer_norm_short, // short rows: the per-row work of a plan shows
    softmax_short,
    layer_norm_small, // one call whose data stays in L2: a plan's fixed costs show
    softmax_small,
    count
};
const char* const names[] = {"42-op elementwise, 2^20 floats",
                             "105-op elementwise, 2^20 floats",
                             "row sums of a 42-op expression, 1024 x 1024",
                             "layer norm over rows, 1024 x 1024",
                             "softmax over rows, 1024 x 1024",
                             "layer norm over rows, 4096 x 256",
                             "softmax over rows, 4096 x 256",
                             "layer norm over rows, 126 x 256",
                             "softmax over rows, 126 x 256"};

// Rows and columns of a workload over rows.
struct rows_by_cols {
    std::size_t rows, cols;
};
rows_by_cols dims_of(workload w) {
    if (w >= layer_norm_small)
        return {126, 256};
    return w >= layer_norm_short ? rows_by_cols{4096, 256} : rows_by_cols{1024, 1024};
}

// Four batches side by side: a chain of ops on one batch waits on each op's latency, so the hand
// loop runs four independent chains at once, as an out-of-order core needs.
struct quad {
    B v[4];
    static quad load(const float* p) {
        return {B::load_unaligned(p), B::load_unaligned(p + B::size),
                B::load_unaligned(p + 2 * B::size), B::load_unaligned(p + 3 * B::size)};
    }
    void store(float* p) const {
        for (int k = 0; k < 4; ++k)
            v[k].store_unaligned(p + k * B::size);
    }
};
template <class F>
quad each(const quad& a, const quad& b, F f) {
    return {f(a.v[0], b.v[0]), f(a.v[1], b.v[1]), f(a.v[2], b.v[2]), f(a.v[3], b.v[3])};
}
quad operator+(const quad& a, const quad& b) {
    return each(a, b, std::plus<>{});
}
quad operator*(const quad& a, const quad& b) {
    return each(a, b, std::multiplies<>{});
}
quad operator*(const quad& a, float s) {
    return each(a, a, [s](const B& x, const B&) { return x * s; });
}
quad operator-(const quad& a, float s) {
    return each(a, a, [s](const B& x, const B&) { return x - s; });
}
quad tanh(const quad& a) {
    return each(a, a, [](const B& x, const B&) { return xsimd::tanh(x); });
}

template <int Steps>
void hand_chain(const float* x, const float* y, float* out, std::size_t size) {
    std::size_t i = 0;
    for (; i + 4 * B::size <= size; i += 4 * B::size) {
        const quad a = quad::load(x + i), b = quad::load(y + i);
        chain<Steps>(a, a, b).store(out + i);
    }
    for (; i + B::size <= size; i += B::size) {
        const B a = B::load_unaligned(x + i), b = B::load_unaligned(y + i);
        chain<Steps>(a, a, b).store_unaligned(out + i);
    }
    for (; i < size; ++i)
        out[i] = chain<Steps>(x[i], x[i], y[i]);
}

void hand_row_sum(const float* x, const float* y, float* out) {
    const std::size_t rows = 1024, cols = 1024;
    for (std::size_t r = 0; r < rows; ++r) {
        quad s{B(0.f), B(0.f), B(0.f), B(0.f)};
        for (std::size_t i = r * cols; i < (r + 1) * cols; i += 4 * B::size) {
            const quad a = quad::load(x + i), b = quad::load(y + i);
            s = s + chain<8>(a, a, b);
        }
        out[r] = xsimd::hadd((s.v[0] + s.v[1]) + (s.v[2] + s.v[3]));
    }
}

void hand_layer_norm(const float* x, const float* gamma, const float* beta, float* out,
                     rows_by_cols d) {
    const auto [rows, cols] = d;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = x + r * cols;
        B s(0.f);
        for (std::size_t i = 0; i < cols; i += B::size)
            s += B::load_unaligned(row + i);
        const B mean(xsimd::hadd(s) / cols);
        B v(0.f);
        for (std::size_t i = 0; i < cols; i += B::size) {
            const B d = B::load_unaligned(row + i) - mean;
            v += d * d;
        }
        const B scale(1.f / std::sqrt(xsimd::hadd(v) / cols + eps));
        for (std::size_t i = 0; i < cols; i += B::size)
            ((B::load_unaligned(row + i) - mean) * scale * B::load_unaligned(gamma + i) +
             B::load_unaligned(beta + i))
                .store_unaligned(out + r * cols + i);
    }
}

// Layer norm a group of rows at a time, each pass over the whole group before the next (row
// means, row scales, the result): the structure of xtrace's plans, written by hand. Groups of 31
// 1024-float rows are the tiles its plans ran step by step before row sweeps; groups of as many
// rows as fill default_row_sweep_bytes are its row sweeps. Against the row-by-row loop it tells
// what that structure costs, apart from how the steps run.
void hand_layer_norm_grouped(const float* x, const float* gamma, const float* beta, float* out,
                             rows_by_cols d, std::size_t group) {
    const auto [rows, cols] = d;
    std::vector<float> mean(group), scale(group);
    for (std::size_t r0 = 0; r0 < rows; r0 += group) {
        const std::size_t n = std::min(group, rows - r0);
        for (std::size_t r = 0; r < n; ++r) {
            B s(0.f);
            for (std::size_t i = 0; i < cols; i += B::size)
                s += B::load_unaligned(x + (r0 + r) * cols + i);
            mean[r] = xsimd::hadd(s) / cols;
        }
        for (std::size_t r = 0; r < n; ++r) {
            const B m(mean[r]);
            B v(0.f);
            for (std::size_t i = 0; i < cols; i += B::size) {
                const B dv = B::load_unaligned(x + (r0 + r) * cols + i) - m;
                v += dv * dv;
            }
            scale[r] = 1.f / std::sqrt(xsimd::hadd(v) / cols + eps);
        }
        for (std::size_t r = 0; r < n; ++r) {
            const B m(mean[r]), sc(scale[r]);
            for (std::size_t i = 0; i < cols; i += B::size)
                ((B::load_unaligned(x + (r0 + r) * cols + i) - m) * sc *
                     B::load_unaligned(gamma + i) +
                 B::load_unaligned(beta + i))
                    .store_unaligned(out + (r0 + r) * cols + i);
        }
    }
}

// Softmax the same way: row maxima, then exponentials and their sums, then the quotients.
void hand_softmax_grouped(const float* x, float* out, rows_by_cols d, std::size_t group) {
    const auto [rows, cols] = d;
    std::vector<float> top(group), total(group);
    for (std::size_t r0 = 0; r0 < rows; r0 += group) {
        const std::size_t n = std::min(group, rows - r0);
        for (std::size_t r = 0; r < n; ++r) {
            const float* row = x + (r0 + r) * cols;
            B m = B::load_unaligned(row);
            for (std::size_t i = B::size; i < cols; i += B::size)
                m = xsimd::max(m, B::load_unaligned(row + i));
            alignas(64) float lanes[B::size];
            m.store_aligned(lanes);
            top[r] = *std::max_element(lanes, lanes + B::size);
        }
        for (std::size_t r = 0; r < n; ++r) {
            const B t(top[r]);
            B s(0.f);
            for (std::size_t i = 0; i < cols; i += B::size) {
                const B e = xsimd::exp(B::load_unaligned(x + (r0 + r) * cols + i) - t);
                e.store_unaligned(out + (r0 + r) * cols + i);
                s += e;
            }
            total[r] = xsimd::hadd(s);
        }
        for (std::size_t r = 0; r < n; ++r) {
            const B t(total[r]);
            float* o = out + (r0 + r) * cols;
            for (std::size_t i = 0; i < cols; i += B::size)
                (B::load_unaligned(o + i) / t).store_unaligned(o + i);
        }
    }
}

void hand_softmax(const float* x, float* out, rows_by_cols d) {
    const auto [rows, cols] = d;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = x + r * cols;
        float* o = out + r * cols;
        B m = B::load_unaligned(row);
        for (std::size_t i = B::size; i < cols; i += B::size)
            m = xsimd::max(m, B::load_unaligned(row + i));
        alignas(64) float lanes[B::size];
        m.store_aligned(lanes);
        const B top(*std::max_element(lanes, lanes + B::size));
        B s(0.f);
        for (std::size_t i = 0; i < cols; i += B::size) {
            const B e = xsimd::exp(B::load_unaligned(row + i) - top);
            e.store_unaligned(o + i);
            s += e;
        }
        const B total(xsimd::hadd(s));
        for (std::size_t i = 0; i < cols; i += B::size)
            (B::load_unaligned(o + i) / total).store_unaligned(o + i);
    }
}

// Inputs of each workload and the buffer its result goes to, made once and shared by the hand
// loop and xtrace: memory of the same age and pages for both (a fresh 4 MiB buffer may be mapped
// in huge pages or not, which moves a pass over it by a third on this machine).
struct inputs {
    xt::xarray<float> x, y, gamma, beta, out;
    explicit inputs(workload w)
        : x(input(shape_of(w), 0)), y(input(shape_of(w), 3)),
          gamma(input({dims_of(w).cols}, 5) * 0.25f + 1.f),
          beta(input({dims_of(w).cols}, 9) * 0.1f),
          out(xt::zeros<float>(w == row_sum ? std::vector<std::size_t>{dims_of(w).rows}
                                            : shape_of(w))) {}
    static std::vector<std::size_t> shape_of(workload w) {
        if (w <= ops105)
            return {n};
        return {dims_of(w).rows, dims_of(w).cols};
    }
    static inputs& of(workload w) {
        static std::vector<std::unique_ptr<inputs>> made(count);
        if (!made[w])
            made[w] = std::make_unique<inputs>(w);
        return *made[w];
    }
};

// The workload's hand loop, once.
void run_hand(workload w, inputs& in) {
    float* out = in.out.data();
    switch (w) {
    case ops42:
        hand_chain<8>(in.x.data(), in.y.data(), out, n);
        break;
    case ops105:
        hand_chain<21>(in.x.data(), in.y.data(), out, n);
        break;
    case row_sum:
        hand_row_sum(in.x.data(), in.y.data(), out);
        break;
    case layer_norm:
    case layer_norm_short:
    case layer_norm_small:
        hand_layer_norm(in.x.data(), in.gamma.data(), in.beta.data(), out, dims_of(w));
        break;
    default:
        hand_softmax(in.x.data(), out, dims_of(w));
    }
}

void hand_xsimd(benchmark::State& state) {
    const auto w = static_cast<workload>(state.range(0));
    inputs& in = inputs::of(w);
    for (auto _ : state) {
        run_hand(w, in);
        benchmark::DoNotOptimize(in.out.data());
        benchmark::ClobberMemory();
    }
}

// The workload's hand loop a group of `Group` rows at a time (0: as many as a row sweep takes).
template <std::size_t Group>
void hand_grouped(benchmark::State& state) {
    const auto w = static_cast<workload>(state.range(0));
    inputs& in = inputs::of(w);
    const rows_by_cols d = dims_of(w);
    const std::size_t group = Group
                                  ? Group
                                  : std::max<std::size_t>(1, xtrace::plan::default_row_sweep_bytes /
                                                                 (d.cols * sizeof(float)));
    for (auto _ : state) {
        if (w == softmax || w == softmax_short)
            hand_softmax_grouped(in.x.data(), in.out.data(), d, group);
        else
            hand_layer_norm_grouped(in.x.data(), in.gamma.data(), in.beta.data(), in.out.data(), d,
                                    group);
        benchmark::DoNotOptimize(in.out.data());
        benchmark::ClobberMemory();
    }
}

// The traced lambda of each workload (x, y, gamma, beta: each reads what it needs).
template <workload W>
auto traced_lambda() {
    if constexpr (W == ops42)
        return [](auto x, auto y, auto, auto) { return chain<8>(x, x, y); };
    else if constexpr (W == ops105)
        return [](auto x, auto y, auto, auto) { return chain<21>(x, x, y); };
    else if constexpr (W == row_sum)
        return [](auto x, auto y, auto, auto) { return xtrace::sum(chain<8>(x, x, y), {1}); };
    else if constexpr (W == layer_norm || W == layer_norm_short || W == layer_norm_small)
        return [](auto x, auto, auto gamma, auto beta) {
            auto d = x - xtrace::mean(x, {1}, xtrace::keep_dims);
            auto v = xtrace::mean(d * d, {1}, xtrace::keep_dims);
            return d * xtrace::rsqrt(v + eps) * gamma + beta;
        };
    else
        return [](auto x, auto, auto, auto) { return xtrace::softmax(x, 1); };
}

template <workload W, bool Pieces>
void traced(benchmark::State& state) {
    inputs& in = inputs::of(W);
    auto f = xtrace::function(traced_lambda<W>(),
                              xtrace::options{.static_fusion = Pieces, .max_threads = 1});
    xt::xarray<float>& out = in.out;
    f.call_into(out, in.x, in.y, in.gamma, in.beta); // trace outside the timed loop
    for (auto _ : state) {
        f.call_into(out, in.x, in.y, in.gamma, in.beta);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
}

template <workload W>
void register_workload() {
    benchmark::RegisterBenchmark("hand_xsimd", hand_xsimd)->Arg(W);
    benchmark::RegisterBenchmark("xtrace", traced<W, true>)->Arg(W);
    benchmark::RegisterBenchmark("xtrace_op_by_op", traced<W, false>)->Arg(W);
}

// `--alternate=R`: R rounds per workload, each timing 10 hand calls and then 10 traced calls on
// the same inputs, one ratio per round. Load from the machine's neighbours, which moves a whole
// repetition of Google benchmark's runs, moves both halves of a round alike and cancels in its
// ratio. Prints the median ratio, its quartiles and the hand loop's median time per call.
template <workload W>
void alternate(int rounds) {
    inputs& in = inputs::of(W);
    auto f = xtrace::function(traced_lambda<W>(), xtrace::options{.max_threads = 1});
    f.call_into(in.out, in.x, in.y, in.gamma, in.beta); // trace outside the timed rounds
    using clock = std::chrono::steady_clock;
    auto ten = [&](auto&& call) {
        const auto start = clock::now();
        for (int i = 0; i < 10; ++i) {
            call();
            benchmark::DoNotOptimize(in.out.data());
            benchmark::ClobberMemory();
        }
        return std::chrono::duration<double>(clock::now() - start).count() / 10;
    };
    std::vector<double> ratios, hands;
    for (int r = 0; r < rounds; ++r) {
        const double hand = ten([&] { run_hand(W, in); });
        const double traced = ten([&] { f.call_into(in.out, in.x, in.y, in.gamma, in.beta); });
        ratios.push_back(traced / hand);
        hands.push_back(hand);
    }
    std::sort(ratios.begin(), ratios.end());
    std::sort(hands.begin(), hands.end());
    const auto at = [&](double q) { return ratios[static_cast<std::size_t>(q * (rounds - 1))]; };
    std::printf("%-45s hand %8.1f us   xtrace %.3fx (quartiles %.3f-%.3f)\n", names[W],
                hands[hands.size() / 2] * 1e6, at(0.5), at(0.25), at(0.75));
}

} // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--alternate=", 12) == 0) {
            const int rounds = std::max(1, std::atoi(argv[i] + 12));
            std::printf("1 thread, %d rounds of 10 hand calls then 10 xtrace calls: medians\n",
                        rounds);
            [&]<std::size_t... W>(std::index_sequence<W...>) {
                (alternate<static_cast<workload>(W)>(rounds), ...);
            }
            (std::make_index_sequence<count>{});
            return 0;
        }
    benchmark::Initialize(&argc, argv);
    register_workload<ops42>();
    register_workload<ops105>();
    register_workload<row_sum>();
    register_workload<layer_norm>();
    benchmark::RegisterBenchmark("hand_xsimd_tiled", hand_grouped<31>)->Arg(layer_norm);
    register_workload<softmax>();
    register_workload<layer_norm_short>();
    benchmark::RegisterBenchmark("hand_xsimd_swept", hand_grouped<0>)->Arg(layer_norm_short);
    register_workload<softmax_short>();
    benchmark::RegisterBenchmark("hand_xsimd_swept", hand_grouped<0>)->Arg(softmax_short);
    register_workload<layer_norm_small>();
    register_workload<softmax_small>();
    for (std::int64_t w = 0; w < count; ++w)
        std::printf("size %lld: %s\n", static_cast<long long>(w), names[w]);
    xtrace::bench::ratio_reporter reporter("hand_xsimd");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
