// The list of gradient checks for every autograd op, shared by the test suite and
// `liegrad gradcheck`. Shapes are non-trivial and include batched (3-D) cases and
// products large enough to take the BLAS path. Inputs to non-smooth or restricted
// ops are drawn away from kinks and poles (relu: |x| > 0.1; log, div: positive).
#include <cmath>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"

namespace liegrad::ag {

namespace {

using A = Array<double>;
using Vs = std::vector<Vard>;

// Draws inputs of the given shapes; kind: 'n' normal, 'p' positive (0.5 .. 2.5), 'k' |x| >= 0.1.
A draw(Rng& rng, const Shape& s, char kind) {
  A a = rng.normal_array<double>(s);
  for (int64_t i = 0; i < a.size(); ++i) {
    if (kind == 'p') a[i] = 0.5 + 2.0 * rng.uniform();
    if (kind == 'k') a[i] = (a[i] < 0 ? -1 : 1) * (0.1 + std::abs(a[i]));
  }
  return a;
}

OpCheck make(const std::string& name, std::vector<Shape> shapes, std::string kinds, VjpFn f,
             std::vector<bool> differentiable = {}) {
  return {name, [=](Rng& rng) {
            std::vector<A> inputs;
            for (size_t i = 0; i < shapes.size(); ++i) inputs.push_back(draw(rng, shapes[i], kinds[i]));
            VjpOptions o;
            o.differentiable = differentiable;
            return check_vjp(name, f, inputs, rng, o);
          }};
}

std::vector<int32_t> ids(int64_t n, int64_t V) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<int32_t>((i * 5 + 3) % V);
  return v;
}

}  // namespace

std::vector<OpCheck> autograd_op_checks() {
  std::vector<OpCheck> c;
  const Shape b3{2, 3, 4};
  // Element-wise binary ops, with and without broadcasting.
  c.push_back(make("add", {b3, b3}, "nn", [](const Vs& x) { return add(x[0], x[1]); }));
  c.push_back(make("add(row)", {b3, {4}}, "nn", [](const Vs& x) { return add(x[0], x[1]); }));
  c.push_back(make("sub(scalar)", {{3, 5}, {}}, "nn", [](const Vs& x) { return sub(x[0], x[1]); }));
  c.push_back(make("sub", {b3, b3}, "nn", [](const Vs& x) { return sub(x[0], x[1]); }));
  c.push_back(make("mul", {b3, b3}, "nn", [](const Vs& x) { return mul(x[0], x[1]); }));
  c.push_back(make("mul(row)", {{6, 5}, {1, 5}}, "nn", [](const Vs& x) { return mul(x[0], x[1]); }));
  c.push_back(make("mul(scalar param)", {b3, {}}, "nn", [](const Vs& x) { return mul(x[0], exp(x[1])); }));
  c.push_back(make("div", {b3, b3}, "np", [](const Vs& x) { return div(x[0], x[1]); }));
  c.push_back(make("div(row)", {b3, {4}}, "np", [](const Vs& x) { return div(x[0], x[1]); }));
  c.push_back(make("scale", {b3}, "n", [](const Vs& x) { return scale(x[0], 0.7); }));
  c.push_back(make("add_const", {b3}, "n", [](const Vs& x) { return add_const(x[0], 0.7); }));
  c.push_back(make("neg", {b3}, "n", [](const Vs& x) { return neg(x[0]); }));
  // Unary maps.
  c.push_back(make("exp", {b3}, "n", [](const Vs& x) { return exp(x[0]); }));
  c.push_back(make("log", {b3}, "p", [](const Vs& x) { return log(x[0]); }));
  c.push_back(make("tanh", {b3}, "n", [](const Vs& x) { return tanh(x[0]); }));
  c.push_back(make("sigmoid", {b3}, "n", [](const Vs& x) { return sigmoid(x[0]); }));
  c.push_back(make("relu", {b3}, "k", [](const Vs& x) { return relu(x[0]); }));
  c.push_back(make("gelu", {b3}, "n", [](const Vs& x) { return gelu(x[0]); }));
  c.push_back(make("square", {b3}, "n", [](const Vs& x) { return square(x[0]); }));
  // Products: every transpose combination, 2-D, batched, shared right operand, BLAS path.
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    const std::string f = std::string(ta ? "T" : "N") + (tb ? "T" : "N");
    const Shape a2 = ta ? Shape{4, 3} : Shape{3, 4}, b2 = tb ? Shape{5, 4} : Shape{4, 5};
    const Shape a3 = ta ? Shape{2, 4, 3} : Shape{2, 3, 4}, b3_ = tb ? Shape{2, 5, 4} : Shape{2, 4, 5};
    auto mm = [ta, tb](const Vs& x) { return matmul(x[0], x[1], ta, tb); };
    c.push_back(make("matmul " + f, {a2, b2}, "nn", mm));
    c.push_back(make("matmul batched " + f, {a3, b3_}, "nn", mm));
    c.push_back(make("matmul shared " + f, {a3, b2}, "nn", mm));
  }
  c.push_back(make("matmul BLAS", {{70, 3}, {3, 66}}, "nn", [](const Vs& x) { return matmul(x[0], x[1]); }));
  c.push_back(make("matmul batched BLAS NT", {{2, 65, 3}, {2, 66, 3}}, "nn",
                   [](const Vs& x) { return matmul(x[0], x[1], false, true); }));
  c.push_back(make("transpose", {{3, 5}}, "n", [](const Vs& x) { return transpose(x[0]); }));
  c.push_back(make("transpose batched", {b3}, "n", [](const Vs& x) { return transpose(x[0]); }));
  // Shape ops.
  c.push_back(make("reshape", {b3}, "n", [](const Vs& x) { return reshape(x[0], Shape{6, 4}); }));
  c.push_back(make("slice", {b3}, "n", [](const Vs& x) { return slice(x[0], 1, 1, 3); }));
  c.push_back(make("slice(last axis)", {b3}, "n", [](const Vs& x) { return slice(x[0], -1, 0, 2); }));
  c.push_back(make("concat(axis 0)", {b3, {1, 3, 4}}, "nn", [](const Vs& x) { return concat(Vs{x[0], x[1]}, 0); }));
  c.push_back(make("concat(axis 2)", {b3, {2, 3, 2}}, "nn", [](const Vs& x) { return concat(Vs{x[0], x[1], x[0]}, 2); }));
  // Reductions.
  c.push_back(make("sum", {b3}, "n", [](const Vs& x) { return sum(x[0]); }));
  c.push_back(make("mean", {b3}, "n", [](const Vs& x) { return mean(x[0]); }));
  c.push_back(make("sum(axis 1)", {b3}, "n", [](const Vs& x) { return sum(x[0], 1); }));
  c.push_back(make("mean(axis 0)", {b3}, "n", [](const Vs& x) { return mean(x[0], 0); }));
  c.push_back(make("mean(axis -1)", {b3}, "n", [](const Vs& x) { return mean(x[0], -1); }));
  // Neural-network ops.
  c.push_back(make("softmax", {b3}, "n", [](const Vs& x) { return softmax(x[0]); }));
  c.push_back(make("log_softmax", {b3}, "n", [](const Vs& x) { return log_softmax(x[0]); }));
  c.push_back(make("cross_entropy", {{2, 5, 7}}, "n", [](const Vs& x) { return cross_entropy(x[0], ids(10, 7)); }));
  c.push_back(make("layer_norm", {{2, 3, 6}, {6}, {6}}, "nnn",
                   [](const Vs& x) { return layer_norm(x[0], x[1], x[2], 1e-5); }));
  // 300 rows: two of the backward's 256-row chunks, each summing its own dgamma, dbeta.
  c.push_back(make("layer_norm(300 rows)", {{2, 150, 5}, {5}, {5}}, "nnn",
                   [](const Vs& x) { return layer_norm(x[0], x[1], x[2], 1e-5); }));
  c.push_back(make("embedding", {{7, 4}}, "n", [](const Vs& x) { return embedding(x[0], ids(6, 7), {2, 3}); }));
  // A table of matrices (6,3,7) gives (8,3,7); 8 ids over 6 rows repeat two, and 21
  // columns span two of the backward's column blocks.
  c.push_back(make("embedding (V,3,7) table", {{6, 3, 7}}, "n", [](const Vs& x) { return embedding(x[0], ids(8, 6), {8}); }));
  // Attention scores (followed by softmax so every output is finite).
  const std::vector<double> slopes = {0.5, 0.25, 0.125};
  c.push_back(make("causal_attention_scores(shared)+softmax", {{2, 5, 5}, {3}}, "nn", [slopes](const Vs& x) {
    return softmax(causal_attention_scores(x[0], x[1], slopes, 3, false));
  }));
  c.push_back(make("causal_attention_scores(per head)+softmax", {{6, 5, 5}, {3}}, "nn", [slopes](const Vs& x) {
    return softmax(causal_attention_scores(x[0], x[1], slopes, 3, true));
  }));
  // Fused dense layers, with and without bias, on 3-D inputs.
  c.push_back(make("linear", {{2, 3, 4}, {4, 5}, {5}}, "nnn", [](const Vs& x) { return linear(x[0], x[1], x[2]); }));
  c.push_back(make("linear(no bias)", {{6, 4}, {4, 3}}, "nn", [](const Vs& x) { return linear(x[0], x[1], Vard()); }));
  c.push_back(make("linear_gelu", {{2, 3, 4}, {4, 5}, {5}}, "nnn", [](const Vs& x) {
    return linear_gelu(x[0], x[1], x[2]);
  }));
  // 300 rows: three of linear_gelu's 128-row forward blocks, the last partial.
  c.push_back(make("linear_gelu(300 rows)", {{2, 150, 3}, {3, 4}, {4}}, "nnn", [](const Vs& x) {
    return linear_gelu(x[0], x[1], x[2]);
  }));
  c.push_back(make("linear_residual", {{2, 3, 4}, {4, 5}, {5}, {2, 3, 5}}, "nnnn", [](const Vs& x) {
    return linear_residual(x[0], x[1], x[2], x[3]);
  }));
  c.push_back(make("linear_residual(no bias, r = x)", {{6, 4}, {4, 4}}, "nn", [](const Vs& x) {
    return linear_residual(x[0], x[1], Vard(), x[0]);
  }));
  // A backward assigns a gradient nothing has flowed into yet and adds to one that
  // exists (Node::grad_for_write): the same Var twice in one op, and a Var used by two
  // ops in either order (the later op's backward runs first and assigns).
  c.push_back(make("mul(x, x)", {b3}, "n", [](const Vs& x) { return mul(x[0], x[0]); }));
  c.push_back(make("tanh(x) + x y", {b3, b3}, "nn", [](const Vs& x) {
    const Vard t = tanh(x[0]);
    const Vard p = mul(x[0], x[1]);
    return add(t, p);
  }));
  c.push_back(make("x y + tanh(x)", {b3, b3}, "nn", [](const Vs& x) {
    const Vard p = mul(x[0], x[1]);
    const Vard t = tanh(x[0]);
    return add(p, t);
  }));
  c.push_back(make("reshape(x) + reshape(tanh(x))", {b3}, "n", [](const Vs& x) {
    const Vard r = reshape(x[0], Shape{6, 4});
    return add(r, reshape(tanh(x[0]), Shape{6, 4}));
  }));
  c.push_back(make("reshape(tanh(x)) + reshape(x)", {b3}, "n", [](const Vs& x) {
    const Vard t = reshape(tanh(x[0]), Shape{6, 4});
    return add(t, reshape(x[0], Shape{6, 4}));
  }));
  c.push_back(make("linear(x, x)", {{4, 4}}, "n", [](const Vs& x) { return linear(x[0], x[0], Vard()); }));
  c.push_back(make("linear(x, W, b) + linear(x, W)", {{2, 3, 4}, {4, 5}, {5}}, "nnn", [](const Vs& x) {
    const Vard first = linear(x[0], x[1], x[2]);
    const Vard second = linear(x[0], x[1], Vard());
    return add(first, second);
  }));
  c.push_back(make("split_heads", {{2, 3, 6}}, "n", [](const Vs& x) { return split_heads(x[0], 3); }));
  c.push_back(make("merge_heads", {{6, 3, 2}}, "n", [](const Vs& x) { return merge_heads(x[0], 3); }));
  // modReLU: inputs kept away from the kinks |z| + b = 0 and z = 0.
  c.push_back(make("modrelu", {{4, 5}, {5}}, "kn", [](const Vs& x) { return modrelu(x[0], scale(x[1], 0.05)); }));
  c.push_back(make("dropout", {b3}, "n", [](const Vs& x) {
    Rng fixed(5);  // the same mask on every evaluation
    return dropout(x[0], 0.3, fixed);
  }));
  return c;
}

}  // namespace liegrad::ag
