// Independent steps run at once (plan/concurrency.hpp): which steps a plan groups, that no group
// shares memory one of its steps writes, and that a call running a group at once gives the bits
// of the same call running it step by step, on 1, 2 and 8 threads, equal to a hand computation.

#include "support/plans.hpp"
#include "support/testing.hpp"
#include "support/threads.hpp"

#include <xtrace/plan/build.hpp>
#include <xtrace/plan/text.hpp>

#include <cstring>
#include <thread>
#include <variant>

using namespace xtrace;

namespace {

using traced = testing::traced_graph;
using testing::same_bits;

// The node a step runs alone, or no_node for a region or control step.
graph::node_id node_of(const plan::step& s) {
    const auto* n = std::get_if<plan::node_step>(&s);
    return n ? n->node : plan::no_node;
}

// The ops of the steps in group k of `p`.
std::vector<op_kind> group_ops(const graph::graph& g, const plan::plan& p, std::size_t k) {
    std::vector<op_kind> ops;
    const plan::concurrent_steps& c = p.concurrent[k];
    for (std::uint32_t s = c.first; s < c.first + c.count; ++s) {
        const graph::node_id id = node_of(p.steps[s]);
        ops.push_back(id == plan::no_node ? op_kind::add : g[id].op); // add: a region
    }
    return ops;
}

// Whether the step that runs node `id` alone is in a group of `p`.
bool grouped(const plan::plan& p, graph::node_id id) {
    for (const plan::concurrent_steps& c : p.concurrent)
        for (std::uint32_t s = c.first; s < c.first + c.count; ++s)
            if (node_of(p.steps[s]) == id)
                return true;
    return false;
}

// x (m x k) times w (k x n), by hand, summed in k order.
template <class T>
xt::xarray<T> product(const xt::xarray<T>& x, const xt::xarray<T>& w) {
    const std::size_t m = x.shape()[0], k = x.shape()[1], n = w.shape()[1];
    xt::xarray<T> r = xt::xarray<T>::from_shape({m, n});
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            T acc = 0;
            for (std::size_t l = 0; l < k; ++l)
                acc += x(i, l) * w(l, j);
            r(i, j) = acc;
        }
    return r;
}

} // namespace

TEST_CASE("independent products are grouped, moved past their bias to run together") {
    traced t;
    auto x = t.input<0>({8, 16});
    auto a = t.input<1>({16, 16});
    auto c = t.input<2>({16, 16});
    auto p = xtrace::matmul(x, a);
    auto pb = xtrace::tanh(p + 1.f);
    auto q = xtrace::matmul(x, c);
    auto qb = xtrace::tanh(q - 1.f);
    t.b->add_output(pb.id());
    t.b->add_output(qb.id());
    const auto g = t.b->finish();
    const plan::plan pl = plan::build(g, std::vector<shape_t>{{8, 16}, {16, 16}, {16, 16}});
    INFO(plan::to_text(pl, g));
    // Both products first, together; then the two bias regions, which read nothing the other
    // writes, together too (or as one region: either way no product waits on a bias).
    REQUIRE(!pl.concurrent.empty());
    CHECK(pl.concurrent[0].first == 0);
    CHECK(group_ops(g, pl, 0) == std::vector<op_kind>{op_kind::matmul, op_kind::matmul});
    CHECK(plan::to_text(pl, g).find("steps 0 to 1 may run at once") != std::string::npos);
}

TEST_CASE("a chain of products is never grouped") {
    traced t;
    auto x = t.input<0>({8, 8});
    auto a = t.input<1>({8, 8});
    auto p = xtrace::matmul(x, a);
    auto q = xtrace::matmul(p, a);
    auto r = xtrace::matmul(q, a);
    t.b->add_output(r.id());
    const auto g = t.b->finish();
    const plan::plan pl = plan::build(g, std::vector<shape_t>{{8, 8}, {8, 8}});
    INFO(plan::to_text(pl, g));
    CHECK(pl.concurrent.empty());
}

TEST_CASE("steps whose temps overlap are not grouped, whichever way the overlap goes") {
    traced t;
    auto x = t.input<0>({8, 16});
    auto a = t.input<1>({16, 16});
    auto c = t.input<2>({16, 16});
    auto h = xtrace::tanh(x);      // a region, into a temp
    auto p = xtrace::matmul(h, a); // reads that temp
    auto q = xtrace::matmul(x, c); // writes a temp of its own
    auto out = p + q;
    t.b->add_output(out.id());
    const auto g = t.b->finish();
    const plan::plan planned = plan::build(g, std::vector<shape_t>{{8, 16}, {16, 16}, {16, 16}});
    INFO(plan::to_text(planned, g));
    REQUIRE(planned.homes[h.id()].where == plan::location::temp);
    REQUIRE(planned.homes[q.id()].where == plan::location::temp);
    // As planned, the tanh and the second product share nothing: the product moves ahead of
    // the first (which reads the tanh) to run with the tanh.
    CHECK(grouped(planned, q.id()));
    // The second product's result moved over the temp the tanh writes and the first product
    // reads (as the temp allocator may put a value once another is dead): it now conflicts with
    // both, and must run with neither.
    plan::plan moved = planned;
    moved.homes[q.id()].offset = moved.homes[h.id()].offset;
    plan::group_concurrent_steps(g, moved);
    INFO(plan::to_text(moved, g));
    CHECK(!grouped(moved, q.id()));
}

TEMPLATE_TEST_CASE("independent branches on random shapes: the same bits on 1, 2 and 8 threads, "
                   "equal to a hand computation",
                   "", float, double, std::int32_t) {
    using T = TestType;
    // Four independent branches (a product, a row sum of a product of arguments, a column
    // maximum, an elementwise pass), and their results joined by one more step.
    auto f = xtrace::function(
        [](auto x, auto y, auto w) {
            auto p = xtrace::matmul(x, w);
            auto s = xtrace::sum(x * y, {1});
            auto m = xtrace::max(y, {0});
            auto e = xtrace::abs(y) + x;
            return std::make_tuple(p, s, m, e);
        },
        testing::quiet());
    const std::size_t dims[] = {0, 1, 3, 17, 40};
    for (int trial = 0; trial < 12; ++trial) {
        const std::size_t m = dims[testing::rng()() % 5], k = dims[testing::rng()() % 5],
                          n = dims[testing::rng()() % 5];
        INFO("m " << m << ", k " << k << ", n " << n);
        const auto x = testing::random_array<T>({m, k});
        const auto y = testing::random_array<T>({m, k});
        const auto w = testing::random_array<T>({k, n});
        xt::xarray<T> s = xt::zeros<T>({m}), mx = xt::xarray<T>::from_shape({k}), e = x;
        for (std::size_t j = 0; j < k; ++j)
            mx(j) = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                         : std::numeric_limits<T>::lowest();
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < k; ++j) {
                s(i) += x(i, j) * y(i, j);
                mx(j) = std::max(mx(j), y(i, j));
                e(i, j) = (y(i, j) < 0 ? -y(i, j) : y(i, j)) + x(i, j);
            }
        for (std::size_t floor : {std::size_t(1), interp::default_min_chunk_elements}) {
            INFO("chunk floor " << floor);
            const interp::chunk_floor_scope chunks(floor);
            const auto one = testing::on_threads(1, [&] { return f(x, y, w); });
            CHECK(testing::close(std::get<0>(one), product(x, w), 64, 1e-3));
            CHECK(testing::close(std::get<1>(one), s, 64, 1e-3));
            CHECK(same_bits(std::get<2>(one), mx));
            CHECK(same_bits(std::get<3>(one), e));
            for (int threads : {2, 8}) {
                INFO(threads << " threads");
                const auto many = testing::on_threads(threads, [&] { return f(x, y, w); });
                CHECK(same_bits(std::get<0>(many), std::get<0>(one)));
                CHECK(same_bits(std::get<1>(many), std::get<1>(one)));
                CHECK(same_bits(std::get<2>(many), std::get<2>(one)));
                CHECK(same_bits(std::get<3>(many), std::get<3>(one)));
            }
        }
    }
}

TEST_CASE("a group of products past the floor runs at once from 8 callers at a time") {
    auto f = xtrace::function(
        [](auto x, auto a, auto c) { return xtrace::matmul(x, a) + xtrace::matmul(x, c); });
    // 64 rows: each product is one row panel, so only running them at once uses a second
    // thread; each is 2^20 multiply-adds, past the floor.
    const auto x = testing::random_array<float>({64, 128});
    const auto a = testing::random_array<float>({128, 128});
    const auto c = testing::random_array<float>({128, 128});
    const xt::xarray<float> expect = product(x, a) + product(x, c);
    const auto one = testing::on_threads(1, [&] { return f(x, a, c); });
    CHECK(testing::close(one, expect, 64, 1e-3));
    std::vector<xt::xarray<float>> results(8);
    std::vector<std::thread> callers;
    for (std::size_t i = 0; i < results.size(); ++i)
        callers.emplace_back(
            [&, i] { results[i] = testing::on_threads(2, [&] { return f(x, a, c); }); });
    for (auto& t : callers)
        t.join();
    for (const auto& r : results)
        CHECK(same_bits(r, one));
}
