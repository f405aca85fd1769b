"""When a difference of seed means is beyond the seeds' noise, for docs/results.md
(scripts/results_doc.py, scripts/convergence_doc.py): Welch's standard error of a
difference of means, its Welch–Satterthwaite degrees of freedom, and the Student t
critical value t_{0.975, df} it is judged by. A difference is beyond noise when
|difference| > t_{0.975, df} × SE (a two-sided 95% test); within it, the comparison is a
tie. With 3 seeds a side df is about 2 to 4, where t_{0.975, df} is 4.30 to 2.78, so
"twice the standard error" (about 80% coverage at df 2) would call noise a difference.
Standard library only (no scipy here): the t quantile is found by bisection on the t
distribution function, written with the regularized incomplete beta function."""
import math

LEVEL = 0.975  # the quantile: two-sided 95%


def _beta_cf(a, b, x):
    """The continued fraction of the incomplete beta function, evaluated by the modified
    Lentz method: Numerical Recipes in C, 2nd ed., section 6.4, betacf (the fraction is
    Abramowitz & Stegun 26.5.8)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (Numerical Recipes 6.4, betai:
    the fraction converges fast for x < (a + 1)/(a + b + 2), else the symmetry
    I_x(a, b) = 1 - I_{1-x}(b, a) is used)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with df degrees of freedom (df > 0, not necessarily an
    integer): P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2) (Abramowitz & Stegun 26.7.1 with
    26.5.27; Numerical Recipes 6.4, eq. 6.4.9)."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p, df):
    """The t with t_cdf(t, df) = p, for 0.5 <= p < 1, by bisection (t_cdf increases in t)."""
    if not 0.5 <= p < 1.0 or df <= 0:
        raise ValueError("t_quantile needs 0.5 <= p < 1 and df > 0, got p=%r df=%r" % (p, df))
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def parts(row, key):
    """The variance parts a seed mean contributes to the standard error of a difference:
    [(s^2/n, n - 1)] for a row with n > 1 seeds, KEY_mean and KEY_std; None with one seed
    (no spread of its own) or no standard deviation."""
    s = row.get(key + "_std")
    if row.get("n", 0) > 1 and s is not None:
        return [(s * s / row["n"], row["n"] - 1)]
    return None


def welch(*groups):
    """(standard error, Welch–Satterthwaite df) of a sum or difference of independent
    means, given their variance parts [(s^2/n, n - 1), ...] (parts()): SE = sqrt(sum v),
    df = (sum v)^2 / sum(v^2 / (n - 1)) (Welch 1947; Satterthwaite 1946). df is None when
    no part has any spread (SE 0). None when a group is None (a side without a spread)."""
    if any(g is None for g in groups):
        return None
    vs = [p for g in groups for p in g]
    total = sum(v for v, _ in vs)
    denom = sum(v * v / k for v, k in vs if k > 0)
    return math.sqrt(total), (total * total / denom if denom > 0 else None)


def bound(se, df):
    """(t_{0.975, df}, t × SE): the half-width of noise a difference must exceed. With no
    df (no spread at all) the bound is 0 and any nonzero difference is beyond it."""
    if df is None:
        return None, 0.0
    t = t_quantile(LEVEL, df)
    return t, t * se


def beyond(d, se, df):
    """Whether |d| exceeds t_{0.975, df} × SE."""
    return abs(d) > bound(se, df)[1]


def df_text(df):
    """Degrees of freedom as printed: '2' when whole, else '2.03' (the t printed beside it
    is the one at the unrounded df)."""
    return "%d" % round(df) if abs(df - round(df)) < 1e-9 else "%.2f" % df


def digits(x, y):
    """The decimals (3 to 6) that print |x| and |y| apart, so that a difference close to
    its bound does not print equal to it."""
    for k in range(3, 7):
        if round(abs(x), k) != round(abs(y), k):
            return k
    return 6


def judged_text(d, se, df, what="difference"):
    """'Welch df 2.1, t_0.975 = 4.21: within noise, |difference| <= t·SE = 0.101, a tie'
    style words for a difference d with standard error se and df (welch())."""
    t, b = bound(se, df)
    if t is None:
        return "the seeds do not spread, SE 0: %s" % ("beyond noise" if d != 0 else "no %s, a tie" % what)
    k = digits(d, b)
    size = "|%s|%s" % (what, " = %.*f" % (k, abs(d)) if k > 3 else "")  # close: both printed finer
    if abs(d) > b:
        return "Welch df %s, t_0.975 = %.2f: beyond noise, %s > t·SE = %.*f" % (df_text(df), t, size, k, b)
    return "Welch df %s, t_0.975 = %.2f: within noise, %s ≤ t·SE = %.*f, a tie" % (df_text(df), t, size, k, b)
