// switch_case: tf.switch_case's behaviour (SwitchCaseTest in TensorFlow's control-flow tests),
// traced once, only the taken branch running, the last branch as the default.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {

auto branches() {
    return xtrace::function(
        [](auto x, auto i) {
            return xtrace::switch_case(
                i,
                [&] {
                    xtrace::print("branch 0");
                    return x * 2.f;
                },
                [&] {
                    xtrace::print("branch 1");
                    return xtrace::exp(x);
                },
                [&] {
                    xtrace::print("branch 2");
                    return -x;
                });
        },
        quiet());
}

} // namespace

TEST_CASE("SwitchCaseTest.testBasic: each index runs its branch, traced once") {
    auto f = branches();
    const xt::xarray<float> x = random_array<float>({2, 3});
    const xt::xarray<float> want[] = {x * 2.f, xt::exp(x), -x};
    for (std::int32_t i = 0; i < 3; ++i) {
        cout_capture out;
        const xt::xarray<float> r = f(x, xt::xarray<std::int32_t>(i));
        CHECK(close(r, want[i]));
        CHECK(out.text() == "branch " + std::to_string(i) + "\n"); // only the taken branch
    }
    CHECK(f.tracing_count() == 1);
}

TEST_CASE("SwitchCaseTest.testBranchIndexOutOfRange: the last branch is the default") {
    auto f = branches();
    const xt::xarray<float> x = random_array<float>({4});
    for (std::int32_t i : {-1, 3, 100}) {
        cout_capture out;
        CHECK(close(xt::xarray<float>(f(x, xt::xarray<std::int32_t>(i))), xt::xarray<float>(-x)));
    }
}

TEST_CASE("switch_case runs the same eagerly, and with a C++ index calls one branch") {
    auto f = branches();
    const xt::xarray<float> x = random_array<float>({3});
    for (std::int32_t i = 0; i < 4; ++i) {
        cout_capture out;
        auto [traced, eager] = both_paths(f, x, xt::xarray<std::int32_t>(i));
        CHECK(close(traced, eager));
    }
    int called = 0;
    auto g = xtrace::function([&](auto x) {
        return xtrace::switch_case(
            1,
            [&] {
                ++called;
                return x;
            },
            [&] { return x + 1.f; });
    });
    CHECK(close(xt::xarray<float>(g(x)), xt::xarray<float>(x + 1.f)));
    CHECK(called == 0);
}

TEST_CASE("switch_case branches read and assign variables") {
    xtrace::variable<float> total(0.f);
    auto f = xtrace::function([&](auto i) {
        xtrace::switch_case(
            i, [&] { total.assign_add(1.f); }, [&] { total.assign_add(10.f); });
        return total.read();
    });
    f(xt::xarray<std::int64_t>(std::int64_t(0)));
    f(xt::xarray<std::int64_t>(std::int64_t(1)));
    CHECK(total.value()() == 11.f);
    CHECK(f.tracing_count() == 1);
}
