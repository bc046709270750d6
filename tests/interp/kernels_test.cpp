// The runtime kernel table (for graphs built without expression types) picks the same kernels
// that traced nodes record from their types.

#include "support/testing.hpp"

using namespace xtrace;

namespace {
template <class Op, class T, class R = T>
void same(dtype operand, dtype result) {
    const auto& k = interp::kernels_of<Op, T, R>;
    CHECK(interp::kernel_for(Op::kind, operand, result) == k.plain);
    if constexpr (info(Op::kind).arity == 2) {
        CHECK(interp::kernel_for(Op::kind, operand, result, 0) == k.splat_first);
        CHECK(interp::kernel_for(Op::kind, operand, result, 1) == k.splat_second);
    }
}
} // namespace

TEST_CASE("kernel_for and kernels_of agree") {
    same<op::exp, float>(dtype::float32, dtype::float32);
    same<op::add, double>(dtype::float64, dtype::float64);
    same<op::div, std::int32_t>(dtype::int32, dtype::int32);
    same<op::less, std::int64_t, bool>(dtype::int64, dtype::boolean);
    same<op::logical_xor, bool>(dtype::boolean, dtype::boolean);
    same<op::where, float>(dtype::float32, dtype::float32);
    same<op::cast<double>, std::int32_t, double>(dtype::int32, dtype::float64);
    CHECK(interp::kernel_for(op_kind::exp, dtype::int32, dtype::int32) == nullptr);
}

TEST_CASE("a node without kernels cannot be planned") {
    graph::graph g;
    graph::node a, e;
    a.op = op_kind::arg;
    a.shape = {3};
    e.op = op_kind::exp;
    e.inputs = {0};
    e.shape = {3};
    g.nodes = {a, e};
    g.args = {0};
    g.outputs = {1};
    CHECK_THROWS_AS(plan::build(g, std::vector<shape_t>{{3}}), xtrace::error);
    g.nodes[1].kernels = &interp::kernels_of<op::exp, float, float>;
    const plan::plan p = plan::build(g, std::vector<shape_t>{{3}});
    REQUIRE(p.steps.size() == 1);
    CHECK(std::holds_alternative<plan::region>(p.steps[0]));
}
