//! Every rung of the ladder measures each row exactly as analysing the matrix at that rung's
//! granularity does: the same bits of every row's MAE, RMSE, largest error and SQNR, and the
//! same collapsed rows. The ladder's rungs run their own loop (no clamp counts, the row
//! widened to f64 once for all the rungs, the tensor rung through the loop of the groups),
//! so this holds only if that loop adds every error in the same order as the active pass.

use quantscope::core::config::Clipping;
use quantscope::core::{Config, Granularity, Matrix, PRESETS, PresetOptions, analyse, preset};

/// `rows` rows of `cols` values whose spreads differ by decades, as real weights do, with a
/// row of zeros, a row of one repeated value, a row with one spike, a row of one value and
/// one a hair above it in every fifth column (one code in every group under a symmetric
/// scale: a row that collapses at every granularity), and the same row with its last value
/// lower (whose codes differ only there, after the last whole chunk of eight when the rows
/// are not a multiple of eight long), and a row whose second eight values sit at 1000 and
/// 1000 + 2^-10 (under a tight asymmetric range, a group of them alone has codes too far
/// from its zero point for the specialised loop, while the row's other groups are for it),
/// and a row with zeros of both signs among small values of both signs (rounded codes of
/// −0 and +0, whose reconstructions the ladder's loop may form with either sign).
fn decades(rows: usize, cols: usize) -> Matrix {
    let data: Vec<Vec<f32>> = (0..rows)
        .map(|r| {
            let spread = 10f32.powi(r as i32 % 7 - 4);
            (0..cols)
                .map(|c| match r {
                    1 => 0.0,
                    3 if c == cols / 3 => 40.0,
                    4 | 5 if c % 5 == 0 => 0.250_000_03,
                    5 if c == cols - 1 => 0.2,
                    2 | 4 | 5 => 0.25,
                    6 if (8..16).contains(&c) => 1000.0 + (c % 2) as f32 / 1024.0,
                    7 if c % 3 == 0 => [0.0, -0.0, -1e-6, 1e-6][c % 4],
                    _ => {
                        let k = ((c * 37 + r * 11) % 29) as f32 - 14.0;
                        spread * (k / 7.3 + (c as f32 * 0.618).sin() / 11.0)
                    }
                })
                .collect()
        })
        .collect();
    let refs: Vec<&[f32]> = data.iter().map(Vec::as_slice).collect();
    Matrix::from_rows(&refs).unwrap()
}

/// The bits of a row's metrics.
fn bits(m: &quantscope::core::report::Metrics) -> [u64; 4] {
    [
        m.mae.to_bits(),
        m.rmse.to_bits(),
        m.max_error.to_bits(),
        m.sqnr_db.map_or(u64::MAX, f64::to_bits),
    ]
}

/// Checks every rung of `config`'s ladder on `m` against the analysis at its granularity;
/// returns how many rungs were checked, and how many of them were group rungs with a
/// collapsed row.
fn check(m: &Matrix, config: &Config, what: &str) -> (usize, usize) {
    let Ok(report) = analyse(m, config) else {
        return (0, 0);
    };
    let (mut checked, mut group_collapses) = (0, 0);
    for rung in report.ladder.iter().filter(|r| !r.active) {
        let at = Config {
            granularity: rung.granularity,
            ..*config
        };
        let own = analyse(m, &at).unwrap_or_else(|e| panic!("{what} at {}: {e}", rung.granularity));
        let g = rung.granularity;
        assert_eq!(rung.channels.len(), own.channels.len(), "{what} {g}");
        for (r, (got, want)) in rung.channels.iter().zip(&own.channels).enumerate() {
            assert_eq!(bits(got), bits(&want.metrics), "{what} {g}: row {r}");
        }
        let collapsed = own.channels.iter().filter(|c| c.collapsed).count();
        assert_eq!(
            rung.collapsed_channels, collapsed,
            "{what} {g}: collapsed rows"
        );
        checked += 1;
        if matches!(g, Granularity::Group(_)) && collapsed > 0 {
            group_collapses += 1;
        }
    }
    (checked, group_collapses)
}

#[test]
fn every_rung_measures_its_rows_as_an_analysis_at_its_granularity() {
    // Rows of a multiple of the loop's eight lanes, and rows with values after the last
    // whole chunk of eight.
    let matrices = [decades(12, 512), decades(9, 203)];
    let (mut checked, mut group_collapses) = (0, 0);
    for info in PRESETS {
        for clipping in [Clipping::None, Clipping::Percentile(99.0), Clipping::Mse] {
            let Ok(base) = preset(info.name, PresetOptions::default()) else {
                continue;
            };
            if base.format.is_some() {
                // A format's ladder is the one rung of its own blocks.
                continue;
            }
            let config = Config {
                clipping,
                granularity: Granularity::Channel,
                ..base
            };
            for m in &matrices {
                let what = format!("{} {clipping:?} {:?}", info.name, m.shape());
                let (c, g) = check(m, &config, &what);
                checked += c;
                group_collapses += g;
            }
        }
    }
    // The tensor rung and the group rungs of every integer preset, at least.
    assert!(checked > 100, "only {checked} rungs checked");
    // Group rungs see collapsed rows too, not only the tensor rung (whose loop is another):
    // the first near-constant row collapses under every symmetric preset's groups.
    assert!(
        group_collapses > 10,
        "only {group_collapses} group rungs collapsed a row"
    );
}
