// Tutorial chapter 4a (docs/tutorial/04a-so3-geometry.md): the geometry of SO(3) in closed
// form, in the rotation-vector coordinates w of Sola, Deray & Atchuthan 2018 ("A micro Lie
// theory for state estimation in robotics"; Jr eq. 143, Jl eq. 145, as manif's SO3Tangent
// rjac/ljac cite them) and of manif, against
// liegrad's general exp and log and its coordinates u (w = (-u2, u1, -u0) / sqrt 2).
//
//   Rodrigues  Exp(w) = I + sin t K + (1 - cos t) K^2, t = |w|, K = [w]x / t
//   Log        t = acos((tr R - 1) / 2), [w]x = t (R - R^T) / (2 sin t)
//   adjoint    R [w]x R^T = [R w]x, so Ad_R = R
//   Jacobians  Exp(w + dw) = Exp(w) Exp(Jr dw) = Exp(Jl dw) Exp(w), Jl = R Jr, Jl(w) = Jr(-w)
//              Jr = I - (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2
//   pullback   liegrad's gradient in u is Jr(u)^T times the right-trivialised gradient
//   oplus      X (+) w = X Exp(w), Y (-) X = Log(X^T Y)
// and a figure: the error of the Cayley and the projection retractions against step size.
#include <cmath>
#include <cstdio>

#include "autograd/ops.hpp"
#include "core/rng.hpp"
#include "groups/expm.hpp"
#include "groups/group.hpp"
#include "groups/group_ops.hpp"
#include "tutorial.hpp"

using namespace liegrad;
using tutorial::axpy;
using tutorial::mm;
using Mat = Array<double>;

Mat cross(const double w[3]) {  // [w]x, so that [w]x v = w x v
  Mat K(Shape{3, 3});
  K.at(0, 1) = -w[2], K.at(0, 2) = w[1], K.at(1, 0) = w[2], K.at(1, 2) = -w[0], K.at(2, 0) = -w[1], K.at(2, 1) = w[0];
  return K;
}
void uncross(const Mat& K, double w[3]) { w[0] = K.at(2, 1), w[1] = K.at(0, 2), w[2] = K.at(1, 0); }
double norm3(const double w[3]) { return std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]); }
Mat Exp(const double w[3]) {
  const double t = norm3(w);
  const Mat K = cross(w);
  return axpy(axpy(Mat::eye(3), std::sin(t) / t, K), (1 - std::cos(t)) / (t * t), mm(K, K));
}
void Log(const Mat& R, double w[3]) {
  const double t = std::acos((R.at(0, 0) + R.at(1, 1) + R.at(2, 2) - 1) / 2);
  uncross(axpy(R, -1, mm(R, Mat::eye(3), true)), w);  // R - R^T
  for (int k = 0; k < 3; ++k) w[k] *= t / (2 * std::sin(t));
}
Mat Jr(const double w[3]) {
  const double t = norm3(w);
  const Mat K = cross(w);
  return axpy(axpy(Mat::eye(3), -(1 - std::cos(t)) / (t * t), K), (t - std::sin(t)) / (t * t * t), mm(K, K));
}
void w_of_u(const Mat& u, double w[3]) { w[0] = -u[2] / std::sqrt(2.0), w[1] = u[1] / std::sqrt(2.0), w[2] = -u[0] / std::sqrt(2.0); }
// u = sqrt 2 Q w with Q a signed permutation; the factor cancels in a Jacobian: J(u) = Q J(w) Q^T.
Mat Q_of_w() {
  Mat Q(Shape{3, 3});
  Q.at(0, 2) = -1, Q.at(1, 1) = 1, Q.at(2, 0) = -1;
  return Q;
}
double fro(const Mat& a) { return std::sqrt(tutorial::dot(a, a)); }

int main(int argc, char** argv) {
  tutorial::Checks check;
  const auto g = groups::make_group("SO(3)");
  Rng rng(44);
  const Mat u = rng.normal_array<double>(Shape{3});  // liegrad coordinates
  double w[3], w_back[3], w_lib[3];
  w_of_u(u, w);
  const Mat R = Exp(w), R_lib = g->exp(g->hat(u));
  std::printf("u = (%.6f, %.6f, %.6f): rotation vector w = (%.6f, %.6f, %.6f), angle %.6f rad\n", u[0], u[1], u[2],
              w[0], w[1], w[2], norm3(w));
  check("rodrigues_exp_vs_library_exp", "max_abs_err", max_abs_diff(R, R_lib), 1e-14);
  Log(R, w_back);
  w_of_u(g->vee(g->log(R)), w_lib);
  check("rodrigues_log_inverts_exp", "max_abs_err", std::fmax(std::fabs(w_back[0] - w[0]), std::fmax(std::fabs(w_back[1] - w[1]), std::fabs(w_back[2] - w[2]))), 1e-14);
  check("rodrigues_log_vs_library_log", "max_abs_err", std::fmax(std::fabs(w_lib[0] - w[0]), std::fmax(std::fabs(w_lib[1] - w[1]), std::fabs(w_lib[2] - w[2]))), 1e-13);

  // Adjoint: R [v]x R^T = [R v]x.
  const Mat v = rng.normal_array<double>(Shape{3, 1}), Rv = mm(R, v);
  check("adjoint_is_R", "max_abs_err", max_abs_diff(mm(mm(R, cross(v.data())), R, false, true), cross(Rv.data())), 1e-14);

  // Right and left Jacobians against central differences of Log, and Jl = R Jr.
  const double h = 1e-6;
  double fd_r = 0, fd_l = 0;
  const Mat J = Jr(w), Jl_formula = mm(R, J);
  double mw[3] = {-w[0], -w[1], -w[2]};
  for (int k = 0; k < 3; ++k) {
    double wp[3] = {w[0], w[1], w[2]}, wm[3] = {w[0], w[1], w[2]}, a[3], b[3], c[3], d[3];
    wp[k] += h, wm[k] -= h;
    Log(mm(R, Exp(wp), true), a), Log(mm(R, Exp(wm), true), b);          // Exp(w)^T Exp(w +- h e_k)
    Log(mm(Exp(wp), R, false, true), c), Log(mm(Exp(wm), R, false, true), d);  // Exp(w +- h e_k) Exp(w)^T
    for (int i = 0; i < 3; ++i) {
      fd_r = std::fmax(fd_r, std::fabs((a[i] - b[i]) / (2 * h) - J.at(i, k)));
      fd_l = std::fmax(fd_l, std::fabs((c[i] - d[i]) / (2 * h) - Jl_formula.at(i, k)));
    }
  }
  std::printf("Jr, Jl against central differences of Log (h = 1e-6): %.1e, %.1e\n", fd_r, fd_l);
  check("right_jacobian_fd", "max_abs_err", fd_r, 1e-8);
  check("left_jacobian_fd", "max_abs_err", fd_l, 1e-8);
  check("left_jacobian_is_Jr_of_minus_w", "max_abs_err", max_abs_diff(Jl_formula, Jr(mw)), 1e-14);

  // liegrad's pullback: L = <C, exp(hat u)>; the tape's gradient in u is Jr(u)^T r with
  // r = vee(R^T C) / s (the right-trivialised, "manifold", gradient) and Jr(u) = Q Jr(w) Q^T.
  const Mat C = rng.normal_array<double>(Shape{3, 3});
  ag::Vard uv = ag::Vard::parameter(u);
  ag::backward(ag::sum(ag::mul(groups::expm(groups::hat(*g, uv)), ag::Vard::constant(C))));
  const Mat r = g->vee(mm(R_lib, C, true)), Q = Q_of_w(), Ju = mm(mm(Q, J), Q, false, true);
  check("liegrad_pullback_is_Jr_transpose", "max_abs_err", max_abs_diff(uv.grad(), mm(Ju, r.reshaped(Shape{3, 1}), true).reshaped(Shape{3})), 1e-13);

  // oplus and ominus: (X (+) t) (-) X = t.
  const Mat X = g->sample<double>(rng);
  double tau[3] = {0.4, -0.9, 1.3}, back[3];
  Log(mm(X, mm(X, Exp(tau)), true), back);
  check("oplus_then_ominus", "max_abs_err", std::fmax(std::fabs(back[0] - tau[0]), std::fmax(std::fabs(back[1] - tau[1]), std::fabs(back[2] - tau[2]))), 1e-14);

  // Retractions: Cayley (I - A/2)^-1 (I + A/2) and projection polar(I + A) against exp(A), A = t K.
  const double axis[3] = {0.48, -0.6, 0.64};
  double ts[13], ec[13], ep[13];
  for (int i = 0; i < 13; ++i) {
    ts[i] = std::pow(10.0, -2 + i / 6.0);
    const double tw[3] = {ts[i] * axis[0], ts[i] * axis[1], ts[i] * axis[2]};
    const Mat A = cross(tw), E = Exp(tw);
    const Mat cay = mm(tutorial::inverse3(axpy(Mat::eye(3), -0.5, A)), axpy(Mat::eye(3), 0.5, A));
    Mat P = axpy(Mat::eye(3), 1, A);
    for (int it = 0; it < 30; ++it) P = axpy(axpy(Mat(Shape{3, 3}), 0.5, P), 0.5, mm(Mat::eye(3), tutorial::inverse3(P), false, true));  // polar: P <- (P + P^-T) / 2
    ec[i] = fro(axpy(cay, -1, E)), ep[i] = fro(axpy(P, -1, E));
  }
  const double slope_c = std::log10(ec[6] / ec[0]), slope_p = std::log10(ep[6] / ep[0]);  // over one decade
  std::printf("retraction error at t = 0.01: Cayley %.2e, projection %.2e; slopes per decade %.3f, %.3f\n", ec[0], ep[0],
              slope_c, slope_p);
  check("cayley_error_is_third_order", "abs_err", std::fabs(slope_c - 3), 0.02);
  check("projection_error_is_third_order", "abs_err", std::fabs(slope_p - 3), 0.02);
  if (argc > 1) {  // the figure: log-log, t from 1e-2 to 1e0, error from 1e-8 to 1e0
    std::FILE* f = std::fopen(argv[1], "w");
    auto X_ = [](double t) { return 60 + 300 * (std::log10(t) + 2) / 2; };
    auto Y_ = [](double e) { return 20 + 240 * (-std::log10(e)) / 8; };
    std::fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"420\" height=\"300\" font-family=\"sans-serif\" font-size=\"11\">\n"
                    "<rect x=\"60\" y=\"20\" width=\"300\" height=\"240\" fill=\"none\" stroke=\"black\"/>\n");
    for (int k = 0; k <= 8; k += 2) std::fprintf(f, "<text x=\"55\" y=\"%.1f\" text-anchor=\"end\">1e-%d</text>\n", Y_(std::pow(10.0, -k)) + 4, k);
    for (int k = 0; k <= 2; ++k) std::fprintf(f, "<text x=\"%.1f\" y=\"275\" text-anchor=\"middle\">1e-%d</text>\n", X_(std::pow(10.0, -k)), k);
    std::fprintf(f, "<text x=\"210\" y=\"292\" text-anchor=\"middle\">step t (rad)</text>\n");
    const char* colour[2] = {"#1f77b4", "#d62728"};
    for (int s = 0; s < 2; ++s) {
      std::fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", colour[s]);
      for (int i = 0; i < 13; ++i) std::fprintf(f, "%.1f,%.1f ", X_(ts[i]), Y_(s == 0 ? ec[i] : ep[i]));
      std::fprintf(f, "\"/>\n<text x=\"70\" y=\"%d\" fill=\"%s\">%s</text>\n", 40 + 15 * s, colour[s],
                   s == 0 ? "Cayley: |cay(tK) - exp(tK)|_F" : "projection: |polar(I + tK) - exp(tK)|_F");
    }
    std::fprintf(f, "</svg>\n");
    std::fclose(f);
  }
  return check.status();
}
