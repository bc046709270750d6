#ifndef XTRACE_TESTS_FUZZ_PROGRAM_HPP
#define XTRACE_TESTS_FUZZ_PROGRAM_HPP

// Random tensor programs for the differential tester: a program is a list of steps over six
// typed inputs; every step names its operands by position. Shapes and dtypes are inferred here,
// independently of xtrace, so that the generator only writes valid programs and the minimiser
// can tell a smaller program that still makes sense.

#include <xtrace/core/dtype.hpp>
#include <xtrace/core/op.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace xtrace::fuzz {

using dims = std::vector<std::int64_t>;

/// What a step does.
enum class step_kind : std::uint8_t {
    unary,        ///< op(a)
    binary,       ///< op(a, b), broadcast
    scalar_right, ///< op(a, scalar)
    scalar_left,  ///< op(scalar, a)
    where,        ///< where(a, b, c)
    clip,         ///< clip(a, b, c)
    cast,         ///< cast<to>(a)
    reduce,       ///< op(a, attrs[, keep_dims])
    shape,        ///< op(a, attrs): reshape, transpose, expand_dims, squeeze, broadcast_to
    matmul,       ///< matmul(a, b)
    softmax,      ///< softmax(a, attrs[0])
    logsumexp,    ///< logsumexp(a, attrs[0])
    cond,         ///< cond(a (0-d bool), then: op(b [, c]), else: op2(b))
    loop,         ///< attrs[0] iterations of b = op(b) [op2 with c], counted by a 0-d int32
    switch_case,  ///< switch_case(a (0-d int32), op(b), op2(b), b)
    scan,         ///< scan over b's rows from carry cast(a) (0-d int32): carry + 1, and the
                  ///< stacked op2(op(row), carry); attrs[0] = 1 returns the final carry instead
    host_flatten, ///< host_function giving a's elements as a 1-D tensor, its spec [-1]: what
                  ///< follows runs in a later stage, planned once the callback has returned
    gradient,     ///< gradients(sum(a), b): b a float value of a's dtype, before or after a
                  ///< (a zero gradient then), computed from the trace and from the eager tape
};

/// One step; its result is value number (inputs + its index).
struct step {
    step_kind kind = step_kind::unary;
    op_kind op = op_kind::neg;  ///< the op (cond/loop/scan: the then / body op)
    op_kind op2 = op_kind::neg; ///< cond: the else op; loop: the op combining with c; scan: with
                                ///< the carry
    std::array<int, 3> in{-1, -1, -1};
    dtype to = dtype::float32; ///< cast target
    std::vector<std::int64_t> attrs;
    bool keep = false;
    double scalar = 0;
};

/// An input: dtype and shape, and how the caller lays it out in memory.
enum class layout : std::uint8_t { contiguous, strided, transposed };

/// What the tester knows of a value.
struct value_info {
    dtype type;
    dims shape;
    bool exact; ///< every path computes it bit for bit (no transcendental, no float reduction)
    bool zero_sign = true; ///< the sign of a zero result is the same on every path (not after
                           ///< a max/min reduction, whose order picks between -0 and +0)
    bool single = false;   ///< rounding error of float32 arithmetic may have reached it
    /// Whether its elements are compared at all: an inexact value is compared within a
    /// tolerance only while its error stays relative to its size; after cancellation (a sum, a
    /// difference or a float reduction of inexact values) or a periodic function of one, paths
    /// that round differently may disagree by any amount, and only its shape is compared.
    bool checked = true;
};

/// A program: inputs of the dtypes in `input_types`, steps, and the values returned.
struct program {
    std::vector<dims> input_shapes; ///< one per input_types entry
    std::vector<step> steps;
    std::vector<int> outputs; ///< up to 3 values per dtype, see output_slots
};

/// The dtypes of a program's inputs, in order (the traced function's fixed signature).
inline constexpr std::array<dtype, 6> input_types = {
    dtype::float32, dtype::float32, dtype::float64, dtype::int32, dtype::int64, dtype::boolean};

/// Outputs per dtype: the lambda returns a tuple of 3 values of each of the 5 dtypes.
inline constexpr std::size_t output_slots = 3;

/// The dtypes, in the order of the lambda's result tuple (output_slots each).
inline constexpr std::array<dtype, 5> output_types = {dtype::float32, dtype::float64, dtype::int32,
                                                      dtype::int64, dtype::boolean};

/// The shapes, dtypes and exactness of every value, or nothing when the program is invalid.
std::optional<std::vector<value_info>> infer(const program& p);

/// A random valid program of about `size` steps.
program generate(std::mt19937_64& rng, std::size_t size);

/// The program's values returned in output slot order: per dtype of output_types, up to
/// output_slots value numbers (the last of that dtype); where a dtype has fewer, the input of
/// that dtype stands in.
std::vector<int> returned_values(const program& p, const std::vector<value_info>& vals);

/// The program as C++: a traced function and its call on `inputs_text`.
std::string to_cpp(const program& p, const std::vector<std::string>& inputs_text);

/// Smaller programs to try when minimising `p`: each drops one step or simplifies one.
std::vector<program> shrink_candidates(const program& p);

} // namespace xtrace::fuzz

#endif
