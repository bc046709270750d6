// Gradients of fixed models against PyTorch autograd (float64), computed once by
// reference/make_reference.py and stored with their inputs: an independent implementation of
// every rule on the way (matmul, relu, broadcasting, mean, log-softmax, layer norm).

#include "autodiff/finite_differences.hpp"

#include <vector>

namespace {

struct reference_tensor {
    std::vector<std::size_t> shape;
    std::vector<double> values;

    xt::xarray<double> array() const {
        auto a = xt::xarray<double>::from_shape(shape);
        std::copy(values.begin(), values.end(), a.data());
        return a;
    }
};

#include "autodiff/reference/pytorch_gradients.inc"

bool matches(const xt::xarray<double>& got, const reference_tensor& want) {
    return xtrace::testing::near(got, want.array(), 1e-10);
}

} // namespace

TEST_CASE("an MLP's gradients match PyTorch's") {
    auto f = xtrace::function(
        xtrace::value_and_grad(
            [](auto x, auto w1, auto b1, auto w2, auto b2, auto t) {
                auto y = xtrace::matmul(xtrace::relu(xtrace::matmul(x, w1) + b1), w2) + b2;
                return xtrace::mean(xtrace::square(y - t));
            },
            xtrace::argnums<0, 1, 2, 3, 4>),
        xtrace::testing::quiet());
    auto [loss, dx, dw1, db1, dw2, db2] = f(mlp_x.array(), mlp_w1.array(), mlp_b1.array(),
                                            mlp_w2.array(), mlp_b2.array(), mlp_t.array());
    CHECK(std::abs(loss() - mlp_loss) < 1e-12);
    CHECK(matches(dx, mlp_dx));
    CHECK(matches(dw1, mlp_dw1));
    CHECK(matches(db1, mlp_db1));
    CHECK(matches(dw2, mlp_dw2));
    CHECK(matches(db2, mlp_db2));
}

TEST_CASE("softmax cross-entropy's gradients match PyTorch's") {
    auto f = xtrace::function(
        xtrace::value_and_grad(
            [](auto x, auto w, auto labels) {
                auto logits = xtrace::matmul(x, w);
                auto log_softmax = logits - xtrace::expand_dims(xtrace::logsumexp(logits, -1), -1);
                return -xtrace::mean(xtrace::sum(labels * log_softmax, {1}));
            },
            xtrace::argnums<0, 1>),
        xtrace::testing::quiet());
    auto [loss, dx, dw] = f(softmax_ce_x.array(), softmax_ce_w.array(), softmax_ce_labels.array());
    CHECK(std::abs(loss() - softmax_ce_loss) < 1e-12);
    CHECK(matches(dx, softmax_ce_dx));
    CHECK(matches(dw, softmax_ce_dw));
}

TEST_CASE("layer norm's gradients match PyTorch's") {
    auto f = xtrace::function(xtrace::value_and_grad(
                                  [](auto x, auto gamma, auto beta, auto out) {
                                      auto centred = x - xtrace::mean(x, {-1}, xtrace::keep_dims);
                                      auto var = xtrace::mean(xtrace::square(centred), {-1},
                                                              xtrace::keep_dims);
                                      auto y = centred / xtrace::sqrt(var + 1e-5) * gamma + beta;
                                      return xtrace::sum(y * out);
                                  },
                                  xtrace::argnums<0, 1, 2>),
                              xtrace::testing::quiet());
    auto [loss, dx, dgamma, dbeta] = f(layer_norm_x.array(), layer_norm_gamma.array(),
                                       layer_norm_beta.array(), layer_norm_out.array());
    CHECK(std::abs(loss() - layer_norm_loss) < 1e-12);
    CHECK(matches(dx, layer_norm_dx));
    CHECK(matches(dgamma, layer_norm_dgamma));
    CHECK(matches(dbeta, layer_norm_dbeta));
}

TEST_CASE("an RNN through while_loop: gradients match PyTorch's") {
    auto f = xtrace::function(
        xtrace::value_and_grad(
            [](auto h0, auto w, auto b) {
                auto [k, h] = xtrace::while_loop(
                    [](auto i, auto) { return i < 4; },
                    [&](auto i, auto s) {
                        return std::tuple(i + 1, xtrace::tanh(xtrace::matmul(s, w) + b));
                    },
                    xtrace::erase(xtrace::cast<std::int32_t>(xtrace::sum(h0) * 0.0)), h0);
                (void)k;
                return xtrace::sum(h * h);
            },
            xtrace::argnums<0, 1, 2>),
        xtrace::testing::quiet());
    auto [loss, dh0, dw, db] = f(rnn_h0.array(), rnn_w.array(), rnn_b.array());
    CHECK(std::abs(loss() - rnn_loss) < 1e-12);
    CHECK(matches(dh0, rnn_dh0));
    CHECK(matches(dw, rnn_dw));
    CHECK(matches(db, rnn_db));
}
