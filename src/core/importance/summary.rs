//! How concentrated an importance vector is: the share of the total held by the top 1 % of
//! columns, and the loudest columns by name.

use super::Importance;

/// Columns [`ImportanceSummary::top`] names.
pub const TOP_COLUMNS: usize = 8;

/// An importance vector in a few numbers (over the columns' totals across experts).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ImportanceSummary {
    /// Columns.
    pub columns: usize,
    /// Vectors (experts; 1 for a dense tensor).
    pub matrices: usize,
    /// The sum of every column's importance.
    pub total: f64,
    /// The mean over columns.
    pub mean: f64,
    /// How many columns "the top 1 %" is: `ceil(columns / 100)`.
    pub top_percent_columns: usize,
    /// The share of [`ImportanceSummary::total`] held by those columns (0 to 1; 0 when
    /// the total is 0).
    pub top_percent_share: f64,
    /// The [`TOP_COLUMNS`] most important columns (or all, if fewer), most important
    /// first (the lower index first on ties): `(column, share of the total)`.
    pub top: Vec<(usize, f64)>,
    /// Columns whose importance is 0 (their errors do not count at all).
    pub zero_columns: usize,
}

impl Importance {
    /// The summary of this vector.
    #[must_use]
    pub fn summary(&self) -> ImportanceSummary {
        let totals = self.column_totals();
        let columns = totals.len();
        let total: f64 = totals.iter().sum();
        let mut order: Vec<usize> = (0..columns).collect();
        order.sort_by(|&a, &b| totals[b].total_cmp(&totals[a]).then(a.cmp(&b)));
        let share = |v: f64| if total > 0.0 { v / total } else { 0.0 };
        let top_percent_columns = columns.div_ceil(100).max(1);
        let top_sum: f64 = order
            .iter()
            .take(top_percent_columns)
            .map(|&c| totals[c])
            .sum();
        ImportanceSummary {
            columns,
            matrices: self.matrices(),
            total,
            mean: total / columns.max(1) as f64,
            top_percent_columns,
            top_percent_share: share(top_sum),
            top: order
                .iter()
                .take(TOP_COLUMNS)
                .map(|&c| (c, share(totals[c])))
                .collect(),
            zero_columns: totals.iter().filter(|&&v| v == 0.0).count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ImportanceSource;
    use super::*;

    #[test]
    fn the_top_percent_and_the_loudest_columns() {
        let mut v = vec![1.0f32; 250];
        v[7] = 151.0;
        v[3] = 0.0;
        let imp = Importance::new(
            v,
            250,
            ImportanceSource::Activations {
                name: "x".into(),
                tokens: 1,
            },
        )
        .unwrap();
        let s = imp.summary();
        // 250 columns: the top 1 % is 3 columns, 151 + 1 + 1 of a total of 151 + 248.
        assert_eq!(s.top_percent_columns, 3);
        assert!((s.top_percent_share - 153.0 / 399.0).abs() < 1e-12);
        assert_eq!(s.top[0].0, 7);
        // Ties in index order, the zero column last.
        assert_eq!(s.top[1].0, 0);
        assert_eq!(s.top.len(), TOP_COLUMNS);
        assert_eq!(s.zero_columns, 1);
        assert!((s.mean - 399.0 / 250.0).abs() < 1e-12);
    }
}
