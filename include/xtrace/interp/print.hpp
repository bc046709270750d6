#ifndef XTRACE_INTERP_PRINT_HPP
#define XTRACE_INTERP_PRINT_HPP

// What xtrace::print writes when a graph runs: the label and each tensor as xtensor prints it,
// one line, written whole (calls on other threads do not interleave within a line).

#include "../ext/xtensor.hpp"
#include "gather.hpp"

#include <cstddef>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace xtrace::interp {

/// Writes one whole line to std::cout.
inline void print_line(const std::string& line) {
    static std::mutex m;
    std::lock_guard lock(m);
    std::cout << line << std::flush;
}

/// Writes a strided tensor of T; see graph::print_fn.
template <class T>
void print_tensor(std::ostream& os, const std::byte* data, const std::int64_t* strides,
                  const std::int64_t* shape, std::size_t rank) {
    std::vector<std::size_t> dims(shape, shape + rank);
    auto value = xt::xarray<T>::from_shape(dims);
    if (value.size() > 0)
        gather(data, sizeof(T), strides, shape, rank, 0, value.size(),
               reinterpret_cast<std::byte*>(value.data()));
    os << value;
}

} // namespace xtrace::interp

#endif
