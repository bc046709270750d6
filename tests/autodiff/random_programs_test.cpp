// Gradients of random programs against central finite differences: smooth float64 ops (so that
// differences are exact to their own error), broadcasting between [m,n], [n] and [] values,
// reductions (sum, mean, max, prod), softmax, matmul, transposes, conds on the data, counted
// while_loops and scans over rows, chained at random; every gradient rule on the way is exercised
// in combination with the others. Traced, eagerly, and with an input held in a variable.

#include "autodiff/finite_differences.hpp"

#include <functional>

using namespace xtrace::testing;

namespace {

// What each step computes from one or two earlier values (by position).
enum class kind {
    tanh,
    sigmoid,
    sin,
    square,
    softplus,
    neg,
    add,
    sub,
    mul,
    div,
    sum0,
    mean1,
    sum_all,
    softmax,
    scale,
    cond,
    gram,
    transpose,
    max_shift,
    prod_scale,
    loop,
    scan
};

struct step {
    kind k;
    int a, b;
};

struct program {
    std::vector<step> steps;
    std::vector<std::vector<std::size_t>> shapes; // of every value, inputs first
};

// A random program of `n` steps over inputs x [m,n] and y [n].
program random_program(std::size_t m, std::size_t n, int steps) {
    program p;
    p.shapes = {{m, n}, {n}};
    auto pick = [&] { return static_cast<int>(rng()() % p.shapes.size()); };
    for (int s = 0; s < steps; ++s) {
        const auto k = static_cast<kind>(rng()() % 22);
        int a = pick(), b = pick();
        const auto& sa = p.shapes[static_cast<std::size_t>(a)];
        const auto& sb = p.shapes[static_cast<std::size_t>(b)];
        std::vector<std::size_t> out = sa;
        switch (k) {
        case kind::add:
        case kind::sub:
        case kind::mul:
        case kind::div:
            out = sa.size() >= sb.size() ? sa : sb; // [m,n] with [n] or []: broadcasts
            break;
        case kind::sum0:
            if (sa.size() != 2)
                continue;
            out = {n};
            break;
        case kind::mean1:
            if (sa.size() != 2)
                continue;
            out = {m, 1};
            break;
        case kind::sum_all:
            out = {};
            break;
        case kind::softmax:
            if (sa.empty() || sa.back() == 1)
                continue;
            break;
        case kind::gram:
        case kind::transpose:
            if (sa.size() != 2 || sa[1] == 1)
                continue;
            break;
        case kind::scan:
            if (sa.size() != 2)
                continue;
            break;
        case kind::max_shift:
        case kind::prod_scale:
            if (sa.empty())
                continue;
            break;
        default:
            break;
        }
        if (out.size() == 2 && out[1] == 1 && k != kind::mean1)
            continue; // keep values to [m,n], [n], [] (and mean1's [m,1], used only unary)
        if ((k == kind::add || k == kind::sub || k == kind::mul || k == kind::div) &&
            ((sa.size() == 2 && sa[1] == 1) || (sb.size() == 2 && sb[1] == 1)))
            continue;
        p.steps.push_back({k, a, b});
        p.shapes.push_back(out);
    }
    return p;
}

// Each use of value i reads `v[i]`; read_y below reads y from a variable instead.
struct read_value {
    template <class V>
    V operator()(const std::vector<V>& v, int i) const {
        return v[static_cast<std::size_t>(i)];
    }
};

// The program's value: sum over its values of sum(value), weighted by position. `read` gives
// each value where it is used (inside a cond branch or loop body when used there).
template <class Read = read_value>
auto as_function(const program& p, Read read = {}) {
    return [p, read](auto x, auto y) {
        using value = decltype(xtrace::erase(x)); // erased<double> when traced
        std::vector<value> v{xtrace::erase(x), xtrace::erase(y)};
        for (const step& s : p.steps) {
            const value a = read(v, s.a);
            const auto b_at = [&] { return read(v, s.b); }; // read where it is used
            const value b = b_at();
            switch (s.k) {
            case kind::tanh:
                v.push_back(xtrace::tanh(a));
                break;
            case kind::sigmoid:
                v.push_back(xtrace::sigmoid(a * 2.0));
                break;
            case kind::sin:
                v.push_back(xtrace::sin(a));
                break;
            case kind::square:
                v.push_back(xtrace::square(a) * 0.5);
                break;
            case kind::softplus: // log(1 + exp(tanh a)): exp and log of bounded values
                v.push_back(xtrace::log(1.0 + xtrace::exp(xtrace::tanh(a))));
                break;
            case kind::neg:
                v.push_back(-a);
                break;
            case kind::add:
                v.push_back(a + b);
                break;
            case kind::sub:
                v.push_back(a - b);
                break;
            case kind::mul:
                v.push_back(a * b);
                break;
            case kind::div: // a denominator in [1, 3]
                v.push_back(a / (2.0 + xtrace::sin(b)));
                break;
            case kind::sum0:
                v.push_back(xtrace::sum(a, {0}));
                break;
            case kind::mean1:
                v.push_back(xtrace::mean(a, {1}, xtrace::keep_dims));
                break;
            case kind::sum_all:
                v.push_back(xtrace::sum(a));
                break;
            case kind::softmax:
                v.push_back(xtrace::softmax(a, -1));
                break;
            case kind::scale:
                v.push_back(a * 0.75 + 0.25);
                break;
            case kind::gram: // a [m,n] @ (y y^T) [n,n]
                v.push_back(xtrace::erase(xtrace::matmul(
                    a, xtrace::expand_dims(read(v, 1), 1) * xtrace::expand_dims(read(v, 1), 0))));
                break;
            case kind::transpose: // a transpose, copied back into a's shape
                v.push_back(xtrace::erase(xtrace::reshape(xtrace::transpose(a) * 1.5, a.shape())));
                break;
            case kind::max_shift:
                v.push_back(xtrace::erase(a - xtrace::max(a, {-1}, xtrace::keep_dims)));
                break;
            case kind::prod_scale:
                v.push_back(
                    xtrace::erase(a * xtrace::prod(a * 0.1 + 1.0, {-1}, xtrace::keep_dims)));
                break;
            case kind::loop: { // three steps of a recurrence, counted by an int loop variable
                auto [k, r] = xtrace::while_loop(
                    [](auto i, auto) { return i < 3; },
                    [&](auto i, auto h) {
                        return std::tuple(i + 1, xtrace::tanh(h * 0.9) +
                                                     xtrace::sin(xtrace::sum(b_at())) * 0.1);
                    },
                    xtrace::erase(xtrace::cast<std::int32_t>(xtrace::sum(a) * 0.0)), a);
                (void)k;
                v.push_back(xtrace::erase(r));
                break;
            }
            case kind::scan: { // over a's rows: a carry, a captured value, the stacked steps
                auto [c, rows] = xtrace::scan(
                    [&](auto carry, auto row) {
                        const auto shift = xtrace::sum(b_at()) * 0.3;
                        return std::tuple(xtrace::tanh(carry * row + shift), carry * row);
                    },
                    xtrace::erase(xtrace::sum(a, {0}) * 0.1), a);
                v.push_back(xtrace::erase(rows + xtrace::sum(c)));
                break;
            }
            case kind::cond: // a branch on the data; both branches keep a's shape
                v.push_back(xtrace::erase(xtrace::cond(
                    xtrace::sum(b) > 0.0, [&] { return a * xtrace::sum(b_at()) + 0.5; },
                    [&] { return xtrace::tanh(a) * 2.0; })));
                break;
            }
        }
        value total = xtrace::erase(xtrace::sum(v[0]) * 0.0);
        for (std::size_t i = 2; i < v.size(); ++i)
            total = total + xtrace::sum(v[i]) * (1.0 + 0.1 * static_cast<double>(i));
        return total;
    };
}

} // namespace

TEST_CASE("gradients of random programs agree with finite differences") {
    int checked = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const std::size_t m = 1 + rng()() % 3, n = 1 + rng()() % 4;
        const program p = random_program(m, n, 2 + static_cast<int>(rng()() % 8));
        const auto x = uniform({m, n}, -1.5, 1.5), y = uniform({n}, -1.5, 1.5);
        auto fn = as_function(p);
        auto value = xtrace::function(fn, quiet());
        auto grads = xtrace::function(xtrace::grad(fn, xtrace::argnums<0, 1>), quiet());
        const auto [wx, wy] = finite_differences(value, x, y);
        const auto [gx, gy] = grads(x, y);
        const bool ok = near(gx, wx, 1e-5) && near(gy, wy, 1e-5);
        if (!ok)
            FAIL_CHECK("program " << trial << " of " << p.steps.size() << " steps");
        checked += ok;
    }
    CHECK(checked == 300);
}

TEST_CASE("gradients taken inside a function run eagerly agree with the traced ones") {
    // The eager tape records what the loops, conds and scans did on this call (a loop
    // unrolled, the branch taken), the trace records them whole: the same gradients.
    int checked = 0;
    for (int trial = 0; trial < 100; ++trial) {
        const std::size_t m = 1 + rng()() % 3, n = 1 + rng()() % 4;
        const program p = random_program(m, n, 2 + static_cast<int>(rng()() % 8));
        const auto x = uniform({m, n}, -1.5, 1.5), y = uniform({n}, -1.5, 1.5);
        auto fn = as_function(p);
        auto grads = xtrace::function(
            [&](auto x, auto y) { return xtrace::gradients(fn(x, y), x, y); }, quiet());
        const auto [tx, ty] = grads(x, y);
        xtrace::run_functions_eagerly(true);
        const auto [ex, ey] = grads(x, y);
        xtrace::run_functions_eagerly(false);
        const bool ok = near(ex, tx, 1e-9) && near(ey, ty, 1e-9);
        if (!ok)
            FAIL_CHECK("program " << trial << " of " << p.steps.size() << " steps");
        checked += ok;
    }
    CHECK(checked == 100);
}

TEST_CASE("a variable read inside the conds, loops and scans of random programs gets the "
          "gradient of the argument it stands for") {
    // y is held in a variable, read again wherever the program uses it: at the top level and
    // inside cond branches, loop and scan bodies, where each read counts as a capture.
    int checked = 0, inside = 0;
    for (int trial = 0; trial < 100; ++trial) {
        const std::size_t m = 1 + rng()() % 3, n = 1 + rng()() % 4;
        const program p = random_program(m, n, 2 + static_cast<int>(rng()() % 8));
        bool uses_y = false, in_control_flow = false;
        for (const step& s : p.steps) {
            const bool here = s.a == 1 || s.b == 1 || s.k == kind::gram;
            uses_y = uses_y || here;
            in_control_flow =
                in_control_flow ||
                (s.b == 1 && (s.k == kind::cond || s.k == kind::loop || s.k == kind::scan));
        }
        if (!uses_y) { // no read: "not read by the traced function", tested elsewhere
            ++checked;
            continue;
        }
        inside += in_control_flow;
        const auto x = uniform({m, n}, -1.5, 1.5), y = uniform({n}, -1.5, 1.5);
        xtrace::variable<double> yv(y, "y");
        auto read_y = [&yv](const auto& v, int i) {
            using value = std::decay_t<decltype(v[0])>; // eager_tensor<double> run eagerly
            if (i != 1)
                return v[static_cast<std::size_t>(i)];
            if constexpr (std::is_same_v<value, xtrace::erased<double>>)
                return yv.read();
            else
                return value(xtrace::detail::to_eager(yv.read()));
        };
        auto by_variable = xtrace::function(
            [&](auto x, auto y) { return xtrace::gradients(as_function(p, read_y)(x, y), yv); },
            quiet());
        auto by_argument =
            xtrace::function(xtrace::grad(as_function(p), xtrace::argnums<1>), quiet());
        const auto want = by_argument(x, y);
        bool ok = near(by_variable(x, y), want, 1e-9);
        xtrace::run_functions_eagerly(true);
        ok = near(by_variable(x, y), want, 1e-9) && ok;
        xtrace::run_functions_eagerly(false);
        if (!ok)
            FAIL_CHECK("program " << trial << " of " << p.steps.size() << " steps");
        checked += ok;
    }
    CHECK(checked == 100);
    CHECK(inside >= 10); // programs whose variable is read inside control flow
}
