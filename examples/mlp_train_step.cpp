// A two-layer perceptron trained by gradient descent, its gradients taken by
// xtrace::gradients (tests/autodiff/model_gradients_test.cpp checks them against the
// hand-derived ones). The layers are plain functions over tensors: they run inside whatever
// traces them. Only `predict` and `train_step`, the functions
// that run a whole graph per call, are wrapped in xtrace::function; wrapping each layer too
// would gain nothing (a traced function called while tracing is inlined).

#include <xtrace/xtrace.hpp>

#include <xtrace/ext/xtensor_extras.hpp>

#include <cstdlib>
#include <iostream>
#include <random>

namespace {

xt::xarray<float> random_matrix(std::size_t rows, std::size_t cols, float scale,
                                std::mt19937& gen) {
    std::normal_distribution<float> normal(0.f, scale);
    auto m = xt::xarray<float>::from_shape({rows, cols});
    for (auto& v : m)
        v = normal(gen);
    return m;
}

// The model's state: variables, created once, outside any traced function.
struct mlp {
    xtrace::variable<float> w1, b1, w2, b2;
    mlp(std::size_t in, std::size_t hidden, std::size_t out, std::mt19937& gen)
        : w1(random_matrix(in, hidden, 0.5f, gen), "w1"),
          b1(xt::xarray<float>(xt::zeros<float>({hidden})), "b1"),
          w2(random_matrix(hidden, out, 0.5f, gen), "w2"),
          b2(xt::xarray<float>(xt::zeros<float>({out})), "b2") {}
};

// A layer: a plain function, not wrapped.
auto dense(const auto& x, const auto& w, const auto& b) {
    return xtrace::matmul(x, w) + b;
}

} // namespace

int main() {
    std::mt19937 gen(7);
    mlp model(2, 16, 1, gen);

    auto predict = xtrace::function([&](auto x) {
        auto h = xtrace::relu(dense(x, model.w1.read(), model.b1.read()));
        return dense(h, model.w2.read(), model.b2.read());
    });

    // One step of gradient descent on the mean squared error: the traced graph is the tape.
    auto train_step = xtrace::function([&](auto x, auto target, float rate) {
        auto h = xtrace::relu(dense(x, model.w1.read(), model.b1.read()));
        auto y = dense(h, model.w2.read(), model.b2.read());
        auto loss = xtrace::mean(xtrace::square(y - target));
        auto [gw1, gb1, gw2, gb2] = xtrace::gradients(loss, model.w1, model.b1, model.w2, model.b2);
        model.w1.assign_sub(gw1 * rate);
        model.b1.assign_sub(gb1 * rate);
        model.w2.assign_sub(gw2 * rate);
        model.b2.assign_sub(gb2 * rate);
        return loss;
    });

    // Learn y = x0 * x1 on [-1, 1]^2.
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    auto x = xt::xarray<float>::from_shape({64, 2});
    for (auto& v : x)
        v = uniform(gen);
    xt::xarray<float> target = xt::view(x, xt::all(), 0) * xt::view(x, xt::all(), 1);
    target.reshape({64, 1});

    float first = 0.f, last = 0.f;
    for (int step = 0; step < 500; ++step) {
        last = train_step(x, target, 0.1f)();
        if (step == 0)
            first = last;
    }
    const xt::xarray<float> y = predict(x);
    std::cout << "loss " << first << " -> " << last << "; traces: predict "
              << predict.tracing_count() << ", train_step " << train_step.tracing_count() << '\n';
    const bool learned = last < first * 0.5f && y.shape()[0] == 64;
    return learned && train_step.tracing_count() == 1 ? EXIT_SUCCESS : EXIT_FAILURE;
}
