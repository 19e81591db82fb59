"""Reference values for crates/eval/tests/eval/stats.rs.

A pure-Python transcription of fishtest's server/fishtest/stats/LLRcalc.py (LLR_normalized,
LLR_logistic, LLR_normalized_alt and their helpers), with scipy's brentq replaced by bisection
so that it runs without scipy, and cutechess-cli's Elo class. Run: python3 fishtest_llr.py
"""
import math
from statistics import NormalDist

NELO_DIVIDED_BY_NT = 800 / math.log(10)


def secular(pdf):
    v = min(a for a, p in pdf)
    w = max(a for a, p in pdf)
    assert v * w < 0
    lo, hi = -1 / w + 1e-9, -1 / v - 1e-9
    f = lambda x: sum(p * a / (1 + x * a) for a, p in pdf)
    for _ in range(300):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def stats(pdf):
    s = sum(p * a for a, p in pdf)
    var = sum(p * (a - s) ** 2 for a, p in pdf)
    return s, var


def mle_expected(pdfhat, s):
    x = secular([(a - s, p) for a, p in pdfhat])
    return [(a, p / (1 + x * (a - s))) for a, p in pdfhat]


def mle_t_value(pdfhat, ref, s):
    n = len(pdfhat)
    mle = [(a, 1 / n) for a, p in pdfhat]
    for _ in range(10):
        prev = mle
        mu, var = stats(mle)
        sigma = var ** 0.5
        pdf1 = [(a - ref - s * sigma * (1 + ((mu - a) / sigma) ** 2) / 2, p) for a, p in pdfhat]
        x = secular(pdf1)
        mle = [(pdfhat[i][0], pdfhat[i][1] / (1 + x * pdf1[i][0])) for i in range(n)]
        if max(abs(prev[i][1] - mle[i][1]) for i in range(n)) < 1e-9:
            break
    return mle


def results_to_pdf(results):
    results = [r if r != 0 else 1e-3 for r in results]
    n = sum(results)
    return n, [(i / (len(results) - 1), r / n) for i, r in enumerate(results)]


def llr(pdf, p0, p1):
    return sum(pdf[i][1] * (math.log(p1[i][1]) - math.log(p0[i][1])) for i in range(len(pdf)))


def llr_normalized(nelo0, nelo1, results):
    t0, t1 = [nelo / NELO_DIVIDED_BY_NT * 2 ** 0.5 for nelo in (nelo0, nelo1)]
    n, pdf = results_to_pdf(results)
    return n * llr(pdf, mle_t_value(pdf, 0.5, t0), mle_t_value(pdf, 0.5, t1))


def llr_logistic(elo0, elo1, results):
    s0, s1 = [1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1)]
    n, pdf = results_to_pdf(results)
    return n * llr(pdf, mle_expected(pdf, s0), mle_expected(pdf, s1))


def llr_normalized_alt(nelo0, nelo1, results):
    count, pdf = results_to_pdf(results)
    mu, var = stats(pdf)
    sigma_pg = (2 * var) ** 0.5
    games = 2 * count
    nt0, nt1 = [nelo / NELO_DIVIDED_BY_NT for nelo in (nelo0, nelo1)]
    nt = (mu - 0.5) / sigma_pg
    return (games / 2.0) * math.log((1 + (nt - nt0) ** 2) / (1 + (nt - nt1) ** 2))


def cutechess_elo(w, l, d):
    n = w + l + d
    mu = (w + d / 2) / n
    stdev = math.sqrt(w / n * (1 - mu) ** 2 + l / n * mu ** 2 + d / n * (0.5 - mu) ** 2) / math.sqrt(n)
    elo = lambda p: -400 * math.log10(1 / p - 1)
    lo = mu + NormalDist().inv_cdf(0.025) * stdev
    hi = mu + NormalDist().inv_cdf(0.975) * stdev
    los = 100 * (0.5 + 0.5 * math.erf((w - l) / math.sqrt(2 * (w + l))))
    return elo(mu), (elo(hi) - elo(lo)) / 2, los


if __name__ == "__main__":
    cases = [
        ("normalized", 0, 2, [10, 20, 40, 25, 5]),
        ("normalized", 0, 2, [2, 30, 100, 40, 8]),
        ("normalized", -1.75, 0.25, [390, 16974, 36229, 16618, 365]),
        ("normalized", 0, 2, [390, 16974, 36229, 16618, 365]),
        ("normalized", 0, 2, [0, 0, 3, 10, 37]),
        ("logistic", 0, 5, [10, 20, 40, 25, 5]),
        ("logistic", -3, 1, [10789, 19328, 33806, 19402, 10543]),
    ]
    for model, e0, e1, r in cases:
        f = llr_normalized if model == "normalized" else llr_logistic
        print(model, e0, e1, r, repr(f(e0, e1, r)), "alt:", repr(llr_normalized_alt(e0, e1, r)))
    print("fastchess normalized pentanomial 1, both orders:",
          llr_normalized(0, 2, [365, 16618, 36029 + 200, 16974, 390]),
          llr_normalized(0, 2, [390, 16974, 36029 + 200, 16618, 365]))
    print("fastchess normalized pentanomial 2, both orders:",
          llr_normalized(-1.75, 0.25, [127, 4883, 10311 + 401, 5150, 104]),
          llr_normalized(-1.75, 0.25, [104, 5150, 10311 + 401, 4883, 127]))
    print("fastchess logistic pentanomial 1, both orders:",
          llr_logistic(0.5, 2.5, [223, 9863, 20279 + 1000, 10037, 246]),
          llr_logistic(0.5, 2.5, [246, 10037, 20279 + 1000, 9863, 223]))
    print("fastchess logistic pentanomial 2, both orders:",
          llr_logistic(0, 2, [871, 26175, 55003 + 980, 26678, 821]),
          llr_logistic(0, 2, [821, 26678, 55003 + 980, 26175, 871]))
    print("cutechess 60-20-20 (W-L-D):", cutechess_elo(60, 20, 20))
    print("cutechess 30-10-60:", cutechess_elo(30, 10, 60))
