// Traced and untraced code calling each other. Plain C++ calls a traced function like any
// function (it runs the cached graph); a traced function called while another is traced is
// inlined into that graph; and traced code reaches plain C++ on concrete values through
// xtrace::host_function, which runs on every call as one node of the graph.

#include <xtrace/xtrace.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>

namespace {

// Plain C++ that xtrace has no op for: the median of each row.
xt::xarray<double> row_medians(const xt::xarray<double>& m) {
    auto out = xt::xarray<double>::from_shape({m.shape()[0], 1});
    for (std::size_t r = 0; r < m.shape()[0]; ++r) {
        std::vector<double> row(m.shape()[1]);
        for (std::size_t c = 0; c < row.size(); ++c)
            row[c] = m(r, c);
        std::nth_element(row.begin(), row.begin() + row.size() / 2, row.end());
        out(r, 0) = row[row.size() / 2];
    }
    return out;
}

} // namespace

int main() {
    auto standardize = xtrace::function([](auto x) {
        auto centred = x - xtrace::mean(x, {1}, xtrace::keep_dims);
        return centred *
               xtrace::rsqrt(xtrace::mean(xtrace::square(centred), {1}, xtrace::keep_dims) + 1e-9);
    });

    // Traced code calling plain C++: the callback runs when the graph runs.
    auto robust = xtrace::function([&](auto x) {
        auto z = standardize(x); // inlined: one graph
        auto median =
            xtrace::host_function(row_medians, xtrace::spec<double>({x.shape()[0], 1}), z);
        return z - median;
    });

    // Plain C++ calling traced code, in an ordinary loop.
    const xt::xarray<double> data = {{1.0, 2.0, 3.0, 10.0}, {4.0, 4.0, 5.0, 7.0}};
    xt::xarray<double> r;
    for (int i = 0; i < 3; ++i)
        r = robust(data);
    std::cout << r << "\ntraces: robust " << robust.tracing_count() << ", standardize "
              << standardize.tracing_count() << '\n';
    // standardize was only ever inlined: it never traced on its own.
    return robust.tracing_count() == 1 && standardize.tracing_count() == 0 ? EXIT_SUCCESS
                                                                           : EXIT_FAILURE;
}
