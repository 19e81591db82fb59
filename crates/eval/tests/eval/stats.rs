//! Elo, error bars, LOS and SPRT against values computed by hand (in the comments) and by an
//! independent transcription of fishtest's formulas (`tests/data/fishtest_llr.py`).

use atomzero_eval::stats::{
    NELO_DIVIDED_BY_NT, elo_from_score, elo_line, fixed, llr_logistic, llr_normalized,
    llr_normalized_approx, score_from_elo, score_line,
};
use atomzero_eval::{EloModel, Hypothesis, Pentanomial, SprtConfig, SprtStatus, Wdl};

fn close(actual: f64, expected: f64, tolerance: f64) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{actual} is not within {tolerance} of {expected}"
    );
}

#[test]
fn a_75_percent_score_is_190_8_elo() {
    // -400 * log10(1/0.75 - 1) = -400 * log10(1/3) = 400 * 0.47712125472 = 190.8485.
    close(elo_from_score(0.75), 190.848_501_887_865, 1e-9);
    close(score_from_elo(190.848_501_887_865), 0.75, 1e-12);
    close(elo_from_score(0.5), 0.0, 1e-12);
    // 70 wins, 10 draws, 20 losses is 75 points of 100.
    let wdl = Wdl::new(70, 10, 20);
    assert_eq!(wdl.score(), 0.75);
    assert_eq!(fixed(wdl.elo().diff, 1), "190.8");
    // An even score prints 0.0, not -0.0 (seen: `Elo difference: -0.0 +/- 321.0` at 1-1).
    assert_eq!(fixed(Wdl::new(1, 0, 1).elo().diff, 1), "0.0");
}

#[test]
fn error_bar_los_and_draw_ratio_by_hand() {
    // W = 60, L = 20, D = 20 (n = 100): w = 0.6, l = 0.2, d = 0.2, mu = 0.6 + 0.2/2 = 0.7.
    // Per-game variance: 0.6 * (1 - 0.7)^2 + 0.2 * (0 - 0.7)^2 + 0.2 * (0.5 - 0.7)^2
    //                  = 0.054 + 0.098 + 0.008 = 0.16; stdev of the mean = 0.4 / 10 = 0.04.
    // 95%: mu -/+ 1.959964 * 0.04 = 0.6216014 and 0.7783986.
    // Elo(0.7783986) = -400 * log10(1/0.7783986 - 1) = -400 * log10(0.2846889) = 218.2518
    // Elo(0.6216014) = -400 * log10(0.6087479) = 86.2250
    // error bar = (218.2518 - 86.2250) / 2 = 66.0134; Elo(0.7) = -400 * log10(3/7) = 147.1907.
    // LOS = 100 * (0.5 + 0.5 * erf((60 - 20) / sqrt(2 * 80))) = 100 * (0.5 + 0.5 * erf(3.16228))
    //     = 100 * (0.5 + 0.5 * 0.99999226) = 99.99961.
    let e = Wdl::new(60, 20, 20).elo();
    close(e.diff, 147.190_714, 1e-5);
    close(e.error, 66.013_381, 1e-5);
    close(e.los, 99.999_613, 1e-5);
    close(e.draw_ratio, 0.2, 1e-15);
}

#[test]
fn lines_are_formatted_as_cutechess_prints_them() {
    let wdl = Wdl::new(60, 20, 20);
    assert_eq!(score_line("A", "B", &wdl), "Score of A vs B: 60 - 20 - 20  [0.700] 100");
    assert_eq!(elo_line(&wdl), "Elo difference: 147.2 +/- 66.0, LOS: 100.0 %, DrawRatio: 20.0 %");
    // Another hand-checkable case: W = 30, L = 10, D = 60 -> score 0.6, Elo 70.4, LOS 99.9 %.
    let wdl = Wdl::new(30, 60, 10);
    assert_eq!(score_line("x", "y", &wdl), "Score of x vs y: 30 - 10 - 60  [0.600] 100");
    assert_eq!(elo_line(&wdl), "Elo difference: 70.4 +/- 42.8, LOS: 99.9 %, DrawRatio: 60.0 %");
}

#[test]
fn perfect_and_zero_scores_get_finite_error_bars() {
    // 30 wins: cutechess prints `inf +/- nan`. With one pseudo-draw: score 61/62, Elo
    // 400 log10(61) = 714.1; standard error sqrt((30/31)(1/62)^2 + (1/31)(30/62)^2) / sqrt(31)
    // = 0.015867, times 1.96 and the slope 400 / (ln 10 * 61/62 * 1/62) = 10947: 340.4.
    let e = Wdl::new(30, 0, 0).elo();
    close(e.diff, 714.13, 0.01);
    close(e.error, 340.4, 0.1);
    let e0 = Wdl::new(0, 0, 30).elo();
    close(e0.diff, -714.13, 0.01);
    close(e0.error, 340.4, 0.1);
    assert_eq!(
        elo_line(&Wdl::new(30, 0, 0)),
        "Elo difference: 714.1 +/- 340.4, LOS: 100.0 %, DrawRatio: 0.0 %"
    );
    // Nearly everything (the 1-39-0): the normal interval would reach below 0.
    let e = Wdl::new(1, 0, 39).elo();
    assert!(e.diff.is_finite() && e.error.is_finite() && e.error > 0.0, "{e:?}");
    assert!(e.diff < -400.0 && e.diff > -700.0, "{e:?}");
    // More wins, a higher lower bound, close to the Wilson interval's lower end n / (n + z^2)
    // (30 games: 0.8865, Elo 357; 300 games: 0.9874, Elo 758).
    let lower = |n: u64| {
        let e = Wdl::new(n, 0, 0).elo();
        e.diff - e.error
    };
    let wilson = |n: f64| elo_from_score(n / (n + 1.959_964f64.powi(2)));
    assert!(lower(300) > lower(30) + 300.0, "{} {}", lower(300), lower(30));
    close(lower(30), wilson(30.0), 25.0);
    close(lower(300), wilson(300.0), 25.0);
    // All draws: 0 +/- 0 with an even LOS, as before nothing is undefined.
    let e = Wdl::new(0, 10, 0).elo();
    assert_eq!((e.diff, e.error, e.los), (0.0, 0.0, 50.0));
}

#[test]
fn sprt_bounds_follow_fishtest() {
    // alpha = beta = 0.05: ln(0.05 / 0.95) = -2.944439, ln(0.95 / 0.05) = 2.944439.
    let sprt = SprtConfig::default();
    close(sprt.lower_bound(), (0.05f64 / 0.95).ln(), 1e-15);
    close(sprt.upper_bound(), (0.95f64 / 0.05).ln(), 1e-15);
    close(sprt.upper_bound(), 2.944_438_979, 1e-9);
    let status = SprtStatus {
        llr: 2.96,
        lower_bound: -2.944,
        upper_bound: 2.944,
        verdict: Some(Hypothesis::H1),
    };
    assert_eq!(
        status.to_string(),
        "SPRT: llr 2.96 (100.5%), lbound -2.94, ubound 2.94 - H1 was accepted"
    );
    let empty = sprt.status(&Pentanomial::default());
    assert_eq!(empty.to_string(), "SPRT: llr 0 (0.0%), lbound -2.94, ubound 2.94");
}

#[test]
fn approximate_llr_by_hand() {
    // Fishtest's LLR_normalized_alt written out for 100 pairs [LL, LD, DD+WL, WD, WW] =
    // [10, 20, 40, 25, 5], nelo0 = 0, nelo1 = 2:
    let counts = [10.0, 20.0, 40.0, 25.0, 5.0];
    let n: f64 = counts.iter().sum(); // 100 pairs, 200 games
    let values = [0.0, 0.25, 0.5, 0.75, 1.0]; // points per game in the pair
    let mu: f64 = values.iter().zip(&counts).map(|(a, c)| a * c / n).sum(); // 0.4875
    let var: f64 = values.iter().zip(&counts).map(|(a, c)| c / n * (a - mu).powi(2)).sum(); // 0.065469
    let sigma = (2.0 * var).sqrt(); // per-game sigma 0.361853
    let t = (mu - 0.5) / sigma; // -0.034544
    let t0 = 0.0 / (800.0 / std::f64::consts::LN_10);
    let t1 = 2.0 / (800.0 / std::f64::consts::LN_10); // 0.0057565
    let expected = (2.0 * n) / 2.0 * ((1.0 + (t - t0).powi(2)) / (1.0 + (t - t1).powi(2))).ln();
    close(mu, 0.4875, 1e-15);
    close(var, 0.065_468_75, 1e-15);
    close(expected, -0.043_023_818_717_645, 1e-12);
    close(NELO_DIVIDED_BY_NT, 347.435_585_522_601_46, 1e-9);
    let pairs = Pentanomial::new([10, 20, 40, 25, 5]);
    close(llr_normalized_approx(&pairs, 0.0, 2.0), expected, 1e-12);
}

#[test]
fn exact_llr_matches_the_fishtest_transcription_and_fastchess() {
    // Values printed by tests/data/fishtest_llr.py (fishtest's LLRcalc in pure Python).
    let cases: [(EloModel, f64, f64, [u64; 5], f64); 7] = [
        (EloModel::Normalized, 0.0, 2.0, [10, 20, 40, 25, 5], -0.043_229_440_702_216_015),
        (EloModel::Normalized, 0.0, 2.0, [2, 30, 100, 40, 8], 0.226_209_874_433_505_46),
        (
            EloModel::Normalized,
            -1.75,
            0.25,
            [390, 16974, 36229, 16618, 365],
            -2.835_020_732_369_536,
        ),
        (EloModel::Normalized, 0.0, 2.0, [390, 16974, 36229, 16618, 365], -6.927_551_294_364_131),
        (EloModel::Normalized, 0.0, 2.0, [0, 0, 3, 10, 37], 0.371_435_020_293_539_5),
        (EloModel::Logistic, 0.0, 5.0, [10, 20, 40, 25, 5], -0.178_564_360_415_789_52),
        (EloModel::Logistic, -3.0, 1.0, [10789, 19328, 33806, 19402, 10543], 2.131_067_811_785_043),
    ];
    for (model, elo0, elo1, counts, expected) in cases {
        let pairs = Pentanomial::new(counts);
        let llr = match model {
            EloModel::Normalized => llr_normalized(&pairs, elo0, elo1),
            EloModel::Logistic => llr_logistic(&pairs, elo0, elo1),
        };
        close(llr, expected, 1e-6 * expected.abs().max(1.0));
        let sprt = SprtConfig { elo0, elo1, alpha: 0.05, beta: 0.05, model };
        assert_eq!(sprt.llr(&pairs), llr);
    }
    // fastchess's published pentanomial tests (tests/sprt_test.cpp: LLR to two decimals),
    // its (LL, LD, WL, DD, WD, WW) counts folded into fishtest's five.
    let normalized = |e0, e1, c| llr_normalized(&Pentanomial::new(c), e0, e1);
    let logistic = |e0, e1, c| llr_logistic(&Pentanomial::new(c), e0, e1);
    close(normalized(0.0, 2.0, [365, 16618, 36029 + 200, 16974, 390]), 2.25, 0.01);
    close(normalized(-1.75, 0.25, [127, 4883, 10311 + 401, 5150, 104]), 3.01, 0.01);
    close(logistic(0.5, 2.5, [223, 9863, 20279 + 1000, 10037, 246]), -3.07, 0.01);
    close(logistic(0.0, 2.0, [871, 26175, 55003 + 980, 26678, 821]), -4.98, 0.01);
}

#[test]
fn sprt_verdicts() {
    let sprt =
        SprtConfig { elo0: 0.0, elo1: 50.0, alpha: 0.05, beta: 0.05, model: EloModel::Logistic };
    // 30 pairs of two wins: overwhelming evidence for H1.
    let status = sprt.status(&Pentanomial::new([0, 0, 0, 0, 30]));
    assert_eq!(status.verdict, Some(Hypothesis::H1), "{status}");
    assert!(status.to_string().ends_with(" - H1 was accepted"));
    // And the mirror image for H0.
    let status = sprt.status(&Pentanomial::new([30, 0, 0, 0, 0]));
    assert_eq!(status.verdict, Some(Hypothesis::H0), "{status}");
    // Even results after few pairs: no verdict yet.
    let status = sprt.status(&Pentanomial::new([1, 2, 4, 2, 1]));
    assert_eq!(status.verdict, None);
    assert!(!status.to_string().contains("accepted"));
}

#[test]
fn sprt_settings_parse_from_key_value_text() {
    let sprt: SprtConfig = "elo0=0,elo1=50,alpha=0.1,beta=0.2".parse().unwrap();
    assert_eq!((sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta), (0.0, 50.0, 0.1, 0.2));
    // A subset keeps the other defaults; spaces around keys and values are allowed.
    let sprt: SprtConfig = " elo1 = 5 ".parse().unwrap();
    let default = SprtConfig::default();
    assert_eq!((sprt.elo0, sprt.elo1, sprt.alpha), (default.elo0, 5.0, default.alpha));
    assert_eq!("".parse::<SprtConfig>().unwrap(), default);
    let err = |text: &str| text.parse::<SprtConfig>().unwrap_err().to_string();
    assert_eq!(err("elo0"), "expected key=value, got 'elo0'");
    assert_eq!(err("elo1=x"), "elo1: not a number: 'x'");
    assert_eq!(err("gamma=1"), "unknown key 'gamma' (elo0, elo1, alpha, beta)");
}
