//! Wall-time accounting for `--time-passes`, printed like MLIR's `--mlir-timing` report.

use std::fmt::Write;
use std::time::{Duration, Instant};

/// Accumulated wall time per name (a pass, the verifier, the parser), in first-seen order.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    rows: Vec<(String, Duration)>,
}

impl Timings {
    /// Adds `elapsed` to the row `name`.
    pub fn record(&mut self, name: &str, elapsed: Duration) {
        match self.rows.iter_mut().find(|(n, _)| n == name) {
            Some((_, total)) => *total += elapsed,
            None => self.rows.push((name.to_owned(), elapsed)),
        }
    }

    /// Runs `f`, adding its wall time to the row `name`.
    pub fn time<T>(&mut self, name: &str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let result = f();
        self.record(name, start.elapsed());
        result
    }

    /// The rows and their times.
    pub fn rows(&self) -> impl Iterator<Item = (&str, Duration)> {
        self.rows.iter().map(|(n, d)| (n.as_str(), *d))
    }

    /// The report, in MLIR's layout: seconds and share of the total per row.
    pub fn report(&self) -> String {
        let total: Duration = self.rows.iter().map(|(_, d)| *d).sum();
        let share = |d: Duration| {
            if total.is_zero() {
                0.0
            } else {
                100.0 * d.as_secs_f64() / total.as_secs_f64()
            }
        };
        let rule =
            "===-------------------------------------------------------------------------===";
        let mut out = String::new();
        let _ = writeln!(out, "{rule}");
        let _ = writeln!(
            out,
            "                         ... Execution time report ..."
        );
        let _ = writeln!(out, "{rule}");
        let _ = writeln!(
            out,
            "  Total Execution Time: {:.4} seconds\n",
            total.as_secs_f64()
        );
        let _ = writeln!(out, "  ----Wall Time----  ----Name----");
        for (name, d) in self.rows.iter().map(|(n, d)| (n.as_str(), *d)) {
            let _ = writeln!(
                out,
                "{:>10.4} ({:>5.1}%)  {name}",
                d.as_secs_f64(),
                share(d)
            );
        }
        let _ = writeln!(
            out,
            "{:>10.4} ({:>5.1}%)  Total",
            total.as_secs_f64(),
            100.0
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_accumulate_and_report_like_mlir() {
        let mut t = Timings::default();
        t.record("Parser", Duration::from_millis(300));
        t.record("CSE", Duration::from_millis(100));
        t.record("Parser", Duration::from_millis(100));
        assert_eq!(t.time("Output", || 7), 7);
        let rows: Vec<_> = t.rows().map(|(n, _)| n).collect();
        assert_eq!(rows, ["Parser", "CSE", "Output"]);
        let report = t.report();
        assert!(report.contains("  ----Wall Time----  ----Name----\n"));
        assert!(report.contains("    0.4000 ( 80.0%)  Parser\n"), "{report}");
        assert!(report.contains("    0.1000 ( 20.0%)  CSE\n"), "{report}");
        assert!(report.ends_with("(100.0%)  Total\n"), "{report}");
    }
}
