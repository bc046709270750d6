#ifndef XTRACE_INTERP_REDUCE_HPP
#define XTRACE_INTERP_REDUCE_HPP

// Reductions (sum, mean, max, min, prod) of a strided tensor over a set of dims. When the
// reduced dims are the innermost and contiguous, each result reduces one contiguous run with
// several SIMD accumulators; otherwise the run is walked with its strides.

#include "../config.hpp"
#include "../core/op.hpp"
#include "../core/scalar_ops.hpp"
#include "../graph/graph.hpp"
#include "functors.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace xtrace::interp {

namespace detail {

// Identity and combination of each reduction; mean sums, then divides.
template <class Op, class T>
struct reducer {
    static constexpr op_kind k = Op::kind;
    /// Whether combine has a batch form for T.
    static constexpr bool simd = k == op_kind::prod ? fn::mul::simd<T> : fn::add::simd<T>;
    static constexpr T identity() {
        if constexpr (k == op_kind::prod)
            return T(1);
        else if constexpr (k == op_kind::max)
            return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
        else if constexpr (k == op_kind::min)
            return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::max();
        else
            return T(0);
    }
    template <class V>
    static V combine(const V& a, const V& b) {
        if constexpr (k == op_kind::prod)
            return fn::mul{}(a, b);
        else if constexpr (k == op_kind::max)
            return fn::maximum{}(a, b);
        else if constexpr (k == op_kind::min)
            return fn::minimum{}(a, b);
        else
            return fn::add{}(a, b);
    }
    static T finish(T acc, std::size_t count) {
        if constexpr (k == op_kind::mean) {
            if constexpr (std::is_integral_v<T>)
                return count == 0 ? T(0) : static_cast<T>(acc / static_cast<T>(count));
            else
                return acc / static_cast<T>(count);
        } else {
            return acc;
        }
    }
};

// A maximum or minimum R without its NaN test, for values known to hold no NaN: `a > b ? a : b`
// (`a < b ? a : b` for min), which R gives then too. On x86 that is one max or min instruction,
// where R takes a compare for NaN and a select more.
template <class R>
struct nan_free : R {
    template <class V>
    static V combine(const V& a, const V& b) {
        static_assert(R::k == op_kind::max || R::k == op_kind::min);
        constexpr bool max = R::k == op_kind::max;
        if constexpr (std::is_arithmetic_v<V>)
            return (max ? a > b : a < b) ? a : b;
#if XSIMD_WITH_SSE2
        else // maxps/minps: the first operand when it is greater (less), else the second
            return max ? xsimd::max(a, b) : xsimd::min(a, b);
#else
        else
            return xsimd::select(max ? a > b : a < b, a, b);
#endif
    }
};

// v, held in a register: an op that reads it cannot read it from memory again, as the compiler
// otherwise has each op that reads a loaded batch do (two loads where one does, each of an
// unaligned batch spanning two cache lines).
template <class V>
XTRACE_INLINE V in_register(V v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if constexpr (std::is_floating_point_v<V>)
        asm("" : "+v"(v));
    else if constexpr (requires { v.data; })
        asm("" : "+v"(v.data));
#endif
    return v;
}

// U batches side by side, read from p on.
template <class B, std::size_t U, class T>
XTRACE_INLINE std::array<B, U> load_batches(const T* p) {
    std::array<B, U> r;
    for (std::size_t u = 0; u < U; ++u)
        r[u] = B::load_unaligned(p + u * B::size);
    return r;
}

// The lanes of v combined pairwise, halves first: lane l with lane l + w/2 for l < w/2, then the
// same on those w/2, down to one. In registers on x86 (each step a batch half as wide, combined
// lanewise, so the same ops as through memory), where storing a batch and reading its halves
// back would wait on the store for each step.
template <class R, class T, class A>
XTRACE_INLINE T fold_lanes(const xsimd::batch<T, A>& v) {
    [[maybe_unused]] constexpr bool real = std::is_same_v<T, float> || std::is_same_v<T, double>;
#if XSIMD_WITH_AVX512F && XSIMD_WITH_AVX
    if constexpr (real && sizeof(v) == 64) {
        using H = xsimd::batch<T, xsimd::avx>;
        if constexpr (std::is_same_v<T, float>) {
            const __m512 r = v;
            return fold_lanes<R, T>(
                R::combine(H(_mm512_castps512_ps256(r)),
                           H(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(r), 1)))));
        } else {
            const __m512d r = v;
            return fold_lanes<R, T>(
                R::combine(H(_mm512_castpd512_pd256(r)), H(_mm512_extractf64x4_pd(r, 1))));
        }
    }
#endif
#if XSIMD_WITH_AVX && XSIMD_WITH_SSE2
    if constexpr (real && sizeof(v) == 32) {
        using H = xsimd::batch<T, xsimd::sse2>;
        if constexpr (std::is_same_v<T, float>) {
            const __m256 r = v;
            return fold_lanes<R, T>(
                R::combine(H(_mm256_castps256_ps128(r)), H(_mm256_extractf128_ps(r, 1))));
        } else {
            const __m256d r = v;
            return fold_lanes<R, T>(
                R::combine(H(_mm256_castpd256_pd128(r)), H(_mm256_extractf128_pd(r, 1))));
        }
    }
#endif
#if XSIMD_WITH_SSE2
    if constexpr (real && sizeof(v) == 16) {
        using H = xsimd::batch<T, A>;
        if constexpr (std::is_same_v<T, float>) {
            const __m128 r = v;
            const __m128 half = R::combine(H(r), H(_mm_movehl_ps(r, r)));
            return _mm_cvtss_f32(R::combine(H(half), H(_mm_shuffle_ps(half, half, 1))));
        } else {
            const __m128d r = v;
            return _mm_cvtsd_f64(R::combine(H(r), H(_mm_unpackhi_pd(r, r))));
        }
    }
#endif
    constexpr std::size_t w = xsimd::batch<T, A>::size;
    alignas(64) T lanes[w];
    v.store_aligned(lanes);
    for (std::size_t h = w / 2; h > 0; h /= 2)
        for (std::size_t l = 0; l < h; ++l)
            lanes[l] = R::combine(lanes[l], lanes[l + h]);
    return lanes[0];
}

// Reduces the n elements that four(i) (four SIMD batches side by side from element i on), batch(i)
// (one batch) and one(i) give: four SIMD accumulators, then their lanes pairwise, then the tail
// one by one.
// reduce_run reads them from memory and a fused piece folding into a reduction computes them
// (static_fusion::fold_kernel), so both add up in one order. (Not always to the same bits: the
// compiler may fuse a piece's last multiply with the accumulating add, where a stored block was
// rounded first.)
//
// A maximum or minimum of floats propagates NaN, which costs a select on two compares per batch;
// it runs first with the plain SIMD max or min and a sum of the same elements that turns NaN if
// any is (or, rarely, when sums of both signs overflow), and only then again with the select,
// on again(i): the same four batches a second time. (A piece that stored its elements, perhaps over
// its own operands, reads them back from where it stored them.)
template <class R, class T, class Four, class Batch, class One, class Again>
XTRACE_INLINE T reduce_elements(std::size_t n, const Four& four, const Batch& batch, const One& one,
                                const Again& again) {
    T acc = R::identity();
    std::size_t i = 0;
    if constexpr (R::simd) {
        using B = simd::batch<T>;
        constexpr std::size_t w = B::size;
        if (n >= 4 * w) {
            B a[4] = {B(R::identity()), B(R::identity()), B(R::identity()), B(R::identity())};
            auto exact = [&](const auto& load) {
                for (; i + 4 * w <= n; i += 4 * w) {
                    // Four batches computed side by side (when a piece computes them, each is a
                    // chain of ops the core overlaps with the others'), then folded.
                    const std::array<B, 4> v = load(i);
                    for (std::size_t u = 0; u < 4; ++u)
                        a[u] = R::combine(a[u], v[u]);
                }
            };
            // The lanes pairwise, halves first: log2(w) steps of independent ops rather than a
            // chain of w, which a row of a few batches would wait on.
            auto fold = [&]<class F>(std::type_identity<F>) {
                return fold_lanes<F, T>(F::combine(F::combine(a[0], a[1]), F::combine(a[2], a[3])));
            };
            if constexpr (std::is_floating_point_v<T> &&
                          (R::k == op_kind::max || R::k == op_kind::min)) {
                B probe[4] = {B(T(0)), B(T(0)), B(T(0)), B(T(0))};
                for (; i + 4 * w <= n; i += 4 * w) {
                    const std::array<B, 4> v = four(i);
                    for (std::size_t u = 0; u < 4; ++u) {
                        const B x = in_register(v[u]); // loaded once for both ops
                        a[u] = R::k == op_kind::max ? xsimd::max(a[u], x) : xsimd::min(a[u], x);
                        probe[u] += x;
                    }
                }
                if (xsimd::any(xsimd::isnan((probe[0] + probe[1]) + (probe[2] + probe[3])))) {
                    const std::size_t end = i;
                    i = 0;
                    for (B& x : a)
                        x = B(R::identity());
                    exact(again);
                    i = end;
                    acc = R::combine(acc, fold(std::type_identity<R>{}));
                } else { // no NaN in a: the lanes fold without the test
                    acc = R::combine(acc, fold(std::type_identity<nan_free<R>>{}));
                }
            } else {
                exact(four);
                acc = R::combine(acc, fold(std::type_identity<R>{}));
            }
        }
    }
    if constexpr (R::simd) { // whole batches left, their elements folded one by one
        using B = simd::batch<T>;
        for (; i + B::size <= n; i += B::size) {
            alignas(64) T lanes[B::size];
            batch(i).store_aligned(lanes);
            for (std::size_t l = 0; l < B::size; ++l)
                acc = R::combine(acc, lanes[l]);
        }
    }
    for (; i < n; ++i)
        acc = R::combine(acc, one(i));
    return acc;
}

// Reduces n contiguous elements.
template <class R, class T>
T reduce_run(const T* p, std::size_t n) {
    using B = simd::batch<T>;
    auto four = [p](std::size_t i) { return load_batches<B, 4>(p + i); };
    return reduce_elements<R, T>(
        n, four, [p](std::size_t i) { return B::load_unaligned(p + i); },
        [p](std::size_t i) { return p[i]; }, four);
}

} // namespace detail

/// Reduction Op of element type T; see graph::reduce_fn.
template <class Op, class T>
void reduce_kernel(const std::byte* in_bytes, const std::int64_t* strides,
                   const std::int64_t* shape, std::size_t rank, std::uint64_t axes_mask,
                   std::byte* out_bytes) {
    using R = detail::reducer<Op, T>;
    const T* in = reinterpret_cast<const T*>(in_bytes);
    T* out = reinterpret_cast<T*>(out_bytes);
    // Kept and reduced dims, each outermost first.
    std::int64_t kept_n[XTRACE_MAX_RANK], kept_s[XTRACE_MAX_RANK];
    std::int64_t red_n[XTRACE_MAX_RANK], red_s[XTRACE_MAX_RANK];
    std::size_t kept = 0, red = 0, out_size = 1, count = 1;
    for (std::size_t d = 0; d < rank; ++d) {
        if (axes_mask >> d & 1) {
            red_n[red] = shape[d];
            red_s[red++] = strides[d];
            count *= static_cast<std::size_t>(shape[d]);
        } else {
            kept_n[kept] = shape[d];
            kept_s[kept++] = strides[d];
            out_size *= static_cast<std::size_t>(shape[d]);
        }
    }
    // The reduced dims form one contiguous run when they are innermost and row-major.
    bool contiguous = true;
    std::int64_t expect = 1;
    for (std::size_t r = red; r-- > 0;) {
        if (red_n[r] != 1 && red_s[r] != expect)
            contiguous = false;
        expect *= red_n[r];
    }
    std::int64_t kidx[XTRACE_MAX_RANK] = {};
    std::int64_t ridx[XTRACE_MAX_RANK];
    std::int64_t base = 0; // of result o: sum of kidx[k] * kept_s[k], kept as kidx moves on
    for (std::size_t o = 0; o < out_size; ++o) {
        T acc;
        if (contiguous) {
            acc = detail::reduce_run<R>(in + base, count);
        } else {
            acc = R::identity();
            for (std::size_t r = 0; r < red; ++r)
                ridx[r] = 0;
            for (std::size_t c = 0; c < count; ++c) {
                std::int64_t off = base;
                for (std::size_t r = 0; r < red; ++r)
                    off += ridx[r] * red_s[r];
                acc = R::combine(acc, in[off]);
                for (std::size_t r = red; r-- > 0;) {
                    if (++ridx[r] < red_n[r])
                        break;
                    ridx[r] = 0;
                }
            }
        }
        out[o] = R::finish(acc, count);
        for (std::size_t k = kept; k-- > 0;) {
            base += kept_s[k];
            if (++kidx[k] < kept_n[k])
                break;
            base -= kidx[k] * kept_s[k];
            kidx[k] = 0;
        }
    }
}

namespace detail {

template <class Op, class T>
void init_results(std::byte* acc, std::size_t n) {
    T* a = reinterpret_cast<T*>(acc);
    for (std::size_t i = 0; i < n; ++i)
        a[i] = reducer<Op, T>::identity();
}

// Each stretch of the block within one row reduces as a run, then joins that row's result.
template <class Op, class T>
void accumulate_rows(const std::byte* block, std::size_t start, std::size_t n, std::size_t inner,
                     std::byte* acc) {
    using R = reducer<Op, T>;
    const T* p = reinterpret_cast<const T*>(block);
    T* a = reinterpret_cast<T*>(acc);
    for (std::size_t i = 0; i < n;) {
        const std::size_t row = (start + i) / inner;
        const std::size_t end = std::min(n, (row + 1) * inner - start);
        a[row] = R::combine(a[row], reduce_run<R>(p + i, end - i));
        i = end;
    }
}

// Element i joins result i % results: stretches of the block aligned with the results combine
// elementwise, in SIMD where the op has it.
template <class Op, class T>
void accumulate_columns(const std::byte* block, std::size_t start, std::size_t n,
                        std::size_t results, std::byte* acc) {
    using R = reducer<Op, T>;
    const T* p = reinterpret_cast<const T*>(block);
    T* a = reinterpret_cast<T*>(acc);
    for (std::size_t i = 0; i < n;) {
        const std::size_t col = (start + i) % results;
        const std::size_t len = std::min(n - i, results - col);
        std::size_t j = 0;
        if constexpr (R::simd) {
            using B = simd::batch<T>;
            for (; j + B::size <= len; j += B::size)
                R::combine(B::load_unaligned(a + col + j), B::load_unaligned(p + i + j))
                    .store_unaligned(a + col + j);
        }
        for (; j < len; ++j)
            a[col + j] = R::combine(a[col + j], p[i + j]);
        i += len;
    }
}

template <class Op, class T>
void finish_results(std::byte* acc, std::size_t n, std::size_t count) {
    T* a = reinterpret_cast<T*>(acc);
    for (std::size_t i = 0; i < n; ++i)
        a[i] = reducer<Op, T>::finish(a[i], count);
}

template <class Op, class T>
void combine_results(std::byte* acc, const std::byte* part, std::size_t n) {
    T* a = reinterpret_cast<T*>(acc);
    const T* p = reinterpret_cast<const T*>(part);
    for (std::size_t i = 0; i < n; ++i)
        a[i] = reducer<Op, T>::combine(a[i], p[i]);
}

// Each run reduces as reduce_kernel reduces a contiguous one, so the results are the same.
template <class Op, class T>
void reduce_rows(const std::byte* in, std::ptrdiff_t step, std::size_t count, std::size_t rows,
                 std::byte* out) {
    using R = reducer<Op, T>;
    T* o = reinterpret_cast<T*>(out);
    for (std::size_t r = 0; r < rows; ++r, in += step)
        o[r] = R::finish(reduce_run<R>(reinterpret_cast<const T*>(in), count), count);
}

} // namespace detail

/// Every kernel of reduction Op on T.
template <class Op, class T>
inline constexpr graph::reduce_kernels reduce_kernels_of{
    &reduce_kernel<Op, T>,           &detail::init_results<Op, T>,
    &detail::accumulate_rows<Op, T>, &detail::accumulate_columns<Op, T>,
    &detail::finish_results<Op, T>,  &detail::combine_results<Op, T>,
    &detail::reduce_rows<Op, T>};

} // namespace xtrace::interp

#endif
