// Specs of unknown rank (xtrace::any_rank, TensorFlow's TensorSpec(shape=None)): one trace serves
// every rank; axes written for it are normalised per call shape when the graph is planned.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace xtrace::testing;

namespace {

xtrace::options any_rank_signature(xtrace::options o = quiet()) {
    o.input_signature = std::vector<xtrace::tensor_spec>{xtrace::spec<float>(xtrace::any_rank)};
    return o;
}

// A random shape of `rank` dims in [0, 4].
std::vector<std::size_t> random_shape(std::mt19937& gen, std::size_t rank) {
    std::uniform_int_distribution<int> d(0, 4);
    std::vector<std::size_t> s;
    for (std::size_t i = 0; i < rank; ++i)
        s.push_back(static_cast<std::size_t>(d(gen)));
    return s;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE(
    "reduce_retracing relaxes rank as TensorFlow: shapes [], [1], [2], [3] trace 1, 2, 2, 2") {
    xtrace::options o = quiet();
    o.reduce_retracing = true;
    auto f = xtrace::function([](auto x) { return x * 2.f + xtrace::sum(x); }, o);
    std::vector<std::size_t> counts;
    for (const xt::xarray<float>& x :
         {xt::xarray<float>(3.f), xt::xarray<float>{1.f}, xt::xarray<float>{1.f, 2.f},
          xt::xarray<float>{1.f, 2.f, 4.f}}) {
        CHECK(close(xt::xarray<float>(f(x)), xt::xarray<float>(x * 2.f + xt::sum(x)())));
        counts.push_back(f.tracing_count());
    }
    CHECK(counts == std::vector<std::size_t>{1, 2, 2, 2});
    CHECK(f.retrace_reasons() == std::vector<std::string>{"arg 0: rank changed 0 -> 1"});
    CHECK(f.pretty_printed_signatures().back() == "(x0: float32[...]) -> float32[...]");
    // Any rank now fits the relaxed trace.
    const xt::xarray<float> m = random_array<float>({2, 3, 2});
    CHECK(close(xt::xarray<float>(f(m)), xt::xarray<float>(m * 2.f + xt::sum(m)())));
    CHECK(f.tracing_count() == 2);
}

TEST_CASE("one any_rank trace serves every rank and size, traced and eager") {
    // Elementwise work, full and axis reductions, softmax, and shape ops whose axes count from
    // the end, all normalised per call shape.
    auto f = xtrace::function(
        [](auto x) {
            auto y = xtrace::tanh(x) * 3.f + 1.f;
            return std::make_tuple(y - xtrace::mean(y), xtrace::sum(x * x),
                                   xtrace::max(xtrace::expand_dims(x, -1), {-1}),
                                   xtrace::transpose(xtrace::expand_dims(y, 0)),
                                   xtrace::reshape(x, {-1}));
        },
        any_rank_signature());
    std::mt19937 gen(7);
    for (std::size_t rank = 0; rank <= 4; ++rank)
        for (int repeat = 0; repeat < 3; ++repeat) {
            const auto shape = random_shape(gen, rank);
            const xt::xarray<float> x = random_array<float>(shape);
            const xt::xarray<float> y = xt::tanh(x) * 3.f + 1.f;
            const float mean = y.size() ? xt::mean(y)() : std::numeric_limits<float>::quiet_NaN();
            float squares = 0.f; // by hand: xt::sum of an empty product offsets a null pointer
            for (float v : x)
                squares += v * v;
            auto [traced, eager] = both_paths(f, x);
            for (const auto& r : {traced, eager}) {
                if (y.size())
                    CHECK(
                        close(std::get<0>(r), xt::xarray<float>(y - mean), 64, 1e-5)); // float sums
                CHECK(std::get<0>(r).shape() == y.shape());
                CHECK(close(std::get<1>(r), xt::xarray<float>(squares), 64, 1e-5));
                CHECK(close(std::get<2>(r), x)); // the max over a size-1 dim
                xt::xarray<float> expanded = xt::expand_dims(y, 0);
                CHECK(close(std::get<3>(r), xt::xarray<float>(xt::transpose(expanded))));
                CHECK(close(std::get<4>(r), xt::xarray<float>(xt::flatten(x))));
            }
        }
    CHECK(f.tracing_count() == 1);
    CHECK(f.pretty_printed_signatures().front().find("float32[...]") != std::string::npos);
}

TEST_CASE("softmax over the last axis of any rank; a plan states the axes it bound") {
    auto f = xtrace::function([](auto x) { return xtrace::softmax(x); }, any_rank_signature());
    for (const auto& shape : {std::vector<std::size_t>{5}, std::vector<std::size_t>{2, 3},
                              std::vector<std::size_t>{2, 1, 4}}) {
        const xt::xarray<float> x = random_array<float>(shape);
        // By hand: the last axis is contiguous, so rows of shape.back() elements.
        xt::xarray<float> expected = x;
        const std::size_t n = shape.back();
        for (std::size_t row = 0; row < x.size() / n; ++row) {
            float* r = expected.data() + row * n;
            const float m = *std::max_element(r, r + n);
            float total = 0;
            for (std::size_t i = 0; i < n; ++i)
                total += (r[i] = std::exp(r[i] - m));
            for (std::size_t i = 0; i < n; ++i)
                r[i] /= total;
        }
        auto [traced, eager] = both_paths(f, x);
        CHECK(close(traced, expected, 64, 1e-6));
        CHECK(close(eager, expected, 64, 1e-6));
    }
    CHECK(f.tracing_count() == 1);
    auto cf = f.get_concrete_function(xtrace::spec<float>(xtrace::any_rank));
    CHECK(cf.signature() == "(x0: float32[...]) -> float32[...]");
    CHECK(cf.graph_text().find("axes={-1}") != std::string::npos);       // as written
    CHECK(cf.plan_text({{2, 3}}).find("axes=[1]") != std::string::npos); // as bound
    CHECK(cf.plan_text({{2, 3, 4}}).find("axes=[2]") != std::string::npos);
}

TEST_CASE("an axis the call's rank does not have is a shape_error; the function still works") {
    auto f = xtrace::function([](auto x) { return xtrace::sum(x, {2}); }, any_rank_signature());
    const xt::xarray<float> x3 = random_array<float>({2, 3, 4});
    CHECK(close(xt::xarray<float>(f(x3)), xt::xarray<float>(xt::sum(x3, {2}))));
    const std::string what = message_of([&] { f(xt::xarray<float>{1.f, 2.f}); });
    CHECK(what.find("axis 2 is out of range for shape [2]") != std::string::npos);
    CHECK_THROWS_AS(f(xt::xarray<float>{1.f, 2.f}), xtrace::shape_error);
    CHECK(close(xt::xarray<float>(f(x3)), xt::xarray<float>(xt::sum(x3, {2}))));
}

TEST_CASE("ops that need a rank while tracing give a tracing_error that says what to do") {
    auto shape_read =
        xtrace::function([](auto x) { return x * float(x.shape().size()); }, any_rank_signature());
    const std::string a = message_of([&] { shape_read(xt::xarray<float>{1.f}); });
    CHECK(a.find("unknown rank") != std::string::npos);
    CHECK(a.find("xtrace::spec<T>({-1, -1})") != std::string::npos);
    CHECK_THROWS_AS(shape_read(xt::xarray<float>{1.f}), xtrace::tracing_error);

    auto product =
        xtrace::function([](auto x) { return xtrace::matmul(x, x); }, any_rank_signature());
    const std::string b = message_of([&] { product(xt::xarray<float>{{1.f, 2.f}, {3.f, 4.f}}); });
    CHECK(b.find("xtrace::matmul: an operand has unknown rank") != std::string::npos);

    auto branch = xtrace::function(
        [](auto x) {
            return xtrace::cond(
                x > 0.f, [&] { return x; }, [&] { return -x; });
        },
        any_rank_signature());
    CHECK(message_of([&] { branch(xt::xarray<float>(1.f)); }).find("cond: pred has unknown rank") !=
          std::string::npos);

    auto rows = xtrace::function(
        [](auto x) {
            return xtrace::scan(
                [](auto c, auto r) { return std::make_tuple(c + xtrace::sum(r), c); },
                xtrace::erase(xtrace::sum(x)), x);
        },
        any_rank_signature());
    CHECK(message_of([&] {
              rows(xt::xarray<float>{1.f});
          }).find("xtrace::scan: scanned tensor 0 has unknown rank") != std::string::npos);

    auto grad = xtrace::function([](auto x) { return xtrace::gradients(xtrace::sum(x * x), x); },
                                 any_rank_signature());
    CHECK(message_of([&] { grad(xt::xarray<float>{1.f}); }).find("xtrace::gradients") !=
          std::string::npos);
    CHECK_THROWS_AS(grad(xt::xarray<float>{1.f}), xtrace::tracing_error);

    CHECK_THROWS_AS(xtrace::spec<float>({-2}), xtrace::signature_error);
}

TEST_CASE("control flow on a reduced predicate, and variables, take values of any rank") {
    xtrace::variable<float> total(xt::xarray<float>{0.f, 0.f});
    auto f = xtrace::function(
        [&](auto x) {
            total.assign_add(x); // a 0-d x broadcasts into [2]; [3] cannot
            return xtrace::cond(
                xtrace::sum(x) > 0.f, [&] { return x * 2.f; }, [&] { return -x; });
        },
        any_rank_signature());
    const xt::xarray<float> a = {1.f, 2.f};
    CHECK(close(xt::xarray<float>(f(a)), xt::xarray<float>(a * 2.f)));
    const xt::xarray<float> b = -3.f;
    CHECK(close(xt::xarray<float>(f(b)), xt::xarray<float>(3.f)));
    CHECK(close(total.value(), xt::xarray<float>{-2.f, -1.f}));
    CHECK_THROWS_AS(f(xt::xarray<float>{1.f, 2.f, 3.f}), xtrace::shape_error);
    CHECK_THROWS_AS(f(xt::xarray<float>{{1.f, 2.f}, {3.f, 4.f}}), xtrace::shape_error);
    CHECK(close(total.value(), xt::xarray<float>{-2.f, -1.f})); // nothing ran
    CHECK(close(xt::xarray<float>(f(a)), xt::xarray<float>(a * 2.f)));
    CHECK(f.tracing_count() == 1);
}

TEST_CASE("an inlined function's input_signature checks a caller's unknown rank when planned") {
    auto inner = xtrace::function(
        [](auto x) { return x + 1.f; },
        xtrace::options{.input_signature = {{xtrace::spec<float>({2})}}, .name = "inner"});
    auto outer = xtrace::function([&](auto x) { return inner(x) * 2.f; }, any_rank_signature());
    const xt::xarray<float> ok = {1.f, 2.f};
    CHECK(close(xt::xarray<float>(outer(ok)), xt::xarray<float>((ok + 1.f) * 2.f)));
    const std::string what = message_of([&] { outer(xt::xarray<float>{{1.f, 2.f}}); });
    CHECK(what.find("inner") != std::string::npos);
    CHECK(what.find("[1,2]") != std::string::npos);
    CHECK_THROWS_AS(outer(xt::xarray<float>{1.f, 2.f, 3.f}), xtrace::signature_error);
    CHECK(close(xt::xarray<float>(outer(ok)), xt::xarray<float>((ok + 1.f) * 2.f)));
}
