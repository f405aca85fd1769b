#!/usr/bin/env python3
"""The backward-error thresholds theta of the exponential's polynomial approximants.

For a polynomial P approximating exp, write e^-x P(x) = 1 + q(x) and
h(x) = log(1 + q(x)) = sum_k h_k x^k. Scaling and squaring with P has a relative backward
error ||dA|| / ||A|| <= sum_k |h_k| ||A||^(k-1) (Higham 2005; Bader, Blanes & Casas 2019),
so theta_P is the largest t with sum_k |h_k| t^(k-1) <= u, u the unit roundoff. The series
is computed in exact rational arithmetic (the coefficients of P as given, the 1/k! exact),
to degree 120, and t found by bisection. For 15+, whose printed coefficients reproduce
1/k! for k <= 15 only to about 4e-16, those 1/k! are used exactly (main() checks the
match first): the rounding of the printed digits is a rounding error, not truncation.

Prints theta for BBC's T_8, T_12, T_18 (to compare with their published values, which
groups/expm.cpp and PyTorch use) and for Sastre, Ibanez & Defez 2019's 15+, whose
thetas groups/expm.cpp takes from here. Standard library only; a few seconds.

Usage: python3 scripts/expm_thetas.py
"""
from fractions import Fraction
import math

DEGREE = 120  # terms of the series kept
FLOAT_U = 2.0**-24
DOUBLE_U = 2.0**-53

# 15+ (Sastre, Ibanez & Defez 2019, eqs. (10)-(12)), the coefficients of groups/expm.cpp.
SASTRE16 = [4.018761610201036e-4, 2.945531440279683e-3, -8.709066576837676e-3, 4.017568440673568e-1,
            3.230762888122312e-2, 5.768988513026145e0, 2.338576034271299e-2, 2.381070373870987e-1,
            2.224209172496374e0, -5.792361707073261e0, -4.130276365929783e-2, 1.040801735231354e1,
            -6.331712455883370e1, 3.484665863364574e-1]


def poly_add(*ps):
    n = max(len(p) for p in ps)
    return [sum(p[i] for p in ps if i < len(p)) for i in range(n)]


def poly_mul(a, b):
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def scaled(c, p):
    return [Fraction(c) * x for x in p]


def sastre16():
    """The scalar polynomial 15+ evaluates, from its three products."""
    c = SASTRE16
    x, x2, one = [Fraction(0), Fraction(1)], [Fraction(0), Fraction(0), Fraction(1)], [Fraction(1)]
    y0 = poly_mul(x2, poly_add(scaled(c[0], x2), scaled(c[1], x)))
    y1 = poly_add(poly_mul(poly_add(y0, scaled(c[2], x2), scaled(c[3], x)), poly_add(y0, scaled(c[4], x2))),
                  scaled(c[5], y0), scaled(c[6], x2))
    return poly_add(poly_mul(poly_add(y1, scaled(c[7], x2), scaled(c[8], x)),
                             poly_add(y1, scaled(c[9], y0), scaled(c[10], x))),
                    scaled(c[11], y1), scaled(c[12], y0), scaled(c[13], x2), x, one)


def taylor(m):
    return [Fraction(1, math.factorial(k)) for k in range(m + 1)]


def theta(p, u):
    """Largest t with sum_k |h_k| t^(k-1) <= u for h = log(e^-x p(x))."""
    inv_fact = [Fraction(1, math.factorial(k)) for k in range(DEGREE + 1)]
    # q = e^-x p(x) - 1 = sum_j (p_j - 1/j!) x^j * e^-x: no cancellation in the 1/j!.
    diff = [(p[j] if j < len(p) else Fraction(0)) - inv_fact[j] for j in range(DEGREE + 1)]
    q = [sum(diff[j] * (-1) ** (k - j) * inv_fact[k - j] for j in range(k + 1)) for k in range(DEGREE + 1)]
    low = next(k for k in range(DEGREE + 1) if q[k] != 0)
    h = [Fraction(0)] * (DEGREE + 1)
    power = [Fraction(1)] + [Fraction(0)] * DEGREE  # q^i, truncated
    for i in range(1, DEGREE // low + 1):
        nxt = [Fraction(0)] * (DEGREE + 1)
        for a, pa in enumerate(power):
            if pa:
                for b in range(low, DEGREE + 1 - a):
                    nxt[a + b] += pa * q[b]
        power = nxt
        for k in range(DEGREE + 1):
            h[k] += Fraction((-1) ** (i + 1), i) * power[k]
    weights = [abs(float(v)) for v in h]

    def bound(t):
        return sum(weights[k] * t ** (k - 1) for k in range(1, DEGREE + 1))

    lo, hi = 0.0, 20.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if bound(mid) <= u else (lo, mid)
    return lo


def main():
    p16 = sastre16()
    # The 15+ polynomial has Taylor's coefficients to degree 15: check, then use the exact
    # 1/k! there (the printed 16-digit coefficients reproduce them to about 4e-16, a
    # rounding-level difference that would otherwise swamp the double-precision bound).
    for k in range(16):
        assert abs(float(p16[k]) * math.factorial(k) - 1) < 1e-14, k
    print(f"15+: coefficient of x^16 = {float(p16[16] * math.factorial(16)):.10f} / 16!")
    exact16 = taylor(15) + [p16[16]]
    for name, poly in [("T_8", taylor(8)), ("T_12", taylor(12)), ("T_18", taylor(18)), ("15+", exact16)]:
        print(f"{name:5s} float theta {theta(poly, FLOAT_U):.15e}   double theta {theta(poly, DOUBLE_U):.15e}")


if __name__ == "__main__":
    main()
