//! Printing what was measured: each variant's table, the variants side by side, and the
//! figures the speed targets name.

use super::measure::{Measured, calls_for, ms, us};
use super::{BenchArgs, Variant, Workload};
use std::time::Duration;

/// One variant's table (each workload's fastest round) and the medians of all its rounds.
pub(super) fn print_table(
    workloads: &[Workload],
    fastest: &[Option<Measured>],
    rounds: &[Vec<Duration>],
    args: &BenchArgs,
) {
    println!("| workload | calls | median µs | p99 µs | calls/s (1 task) | fuel/call |");
    println!("|---|---|---|---|---|---|");
    for (w, m) in workloads.iter().zip(fastest) {
        let m = m.as_ref().expect("every workload was measured");
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.0} | {} |",
            w.name,
            calls_for(w, args.calls),
            us(m.median),
            us(m.p99),
            m.calls_per_s,
            m.fuel
        );
    }
    if args.rounds > 1 {
        println!("\nmedians by round, µs (the table shows each workload's fastest):");
        for (w, medians_by_round) in workloads.iter().zip(rounds) {
            let each: Vec<String> = medians_by_round
                .iter()
                .map(|d| format!("{:.1}", us(*d)))
                .collect();
            println!("- {}: {}", w.name, each.join(" / "));
        }
    }
}

/// The variants' fastest medians side by side, measured in the same rounds.
pub(super) fn print_side_by_side(
    variants: &[(Variant, Vec<Workload>)],
    fastest: &[Vec<Option<Measured>>],
) {
    let labels: Vec<&str> = variants.iter().map(|(kind, _)| kind.label()).collect();
    println!(
        "\nside by side, median µs, each variant right after the other in every round:\n\n| workload | {} |\n|---|{}",
        labels.join(" | "),
        "---|".repeat(labels.len())
    );
    for (i, w) in variants[0].1.iter().enumerate() {
        let cells: Vec<String> = fastest
            .iter()
            .map(|by_workload| {
                let m = by_workload[i]
                    .as_ref()
                    .expect("every workload was measured");
                format!("{:.1}", us(m.median))
            })
            .collect();
        println!("| {} | {} |", w.name, cells.join(" | "));
    }
}

/// The figures the speed targets name, gathered while measuring: medians and throughput for
/// each form measured (`--variants`), in order.
#[derive(Default)]
pub(super) struct Summary {
    pub(super) medians: std::collections::HashMap<String, Vec<(&'static str, Duration)>>,
    pub(super) throughput: Vec<(&'static str, f64)>,
    pub(super) memory_per_call: Option<f64>,
    pub(super) fuel_overhead: Option<FuelOverhead>,
    pub(super) one_shot: Option<Duration>,
}

/// Fuel metering's cost on w3, from rounds in which the metered and the unmetered engine ran
/// one after the other.
pub(super) struct FuelOverhead {
    /// The median over rounds of metered / unmetered.
    pub(super) ratio: f64,
    /// The fastest round of each.
    pub(super) metered: Duration,
    pub(super) unmetered: Duration,
    pub(super) rounds: usize,
}

impl FuelOverhead {
    pub(super) fn from_rounds(paired: &[(Duration, Duration)]) -> Self {
        let mut ratios: Vec<f64> = paired
            .iter()
            .map(|(m, u)| m.as_secs_f64() / u.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let middle = ratios.len() / 2;
        let ratio = if ratios.len() % 2 == 1 {
            ratios[middle]
        } else {
            (ratios[middle - 1] + ratios[middle]) / 2.0
        };
        FuelOverhead {
            ratio,
            metered: paired.iter().map(|p| p.0).min().unwrap_or_default(),
            unmetered: paired.iter().map(|p| p.1).min().unwrap_or_default(),
            rounds: paired.len(),
        }
    }
}

impl Summary {
    /// The figures against their targets, as a Markdown table.
    pub(super) fn print(&self) {
        println!("\n| measure | target | Palisade |\n|---|---|---|");
        for (measure, target, value) in self.rows() {
            println!("| {measure} | {target} | {value} |");
        }
    }

    /// Fuel metering's cost on w3, or "not measured".
    fn fuel_cost(&self) -> String {
        self.fuel_overhead.as_ref().map_or_else(
            || "not measured".to_owned(),
            |f| {
                format!(
                    "{:+.0}% (median of {} paired rounds; fastest {:.1} ms metered, {:.1} ms not)",
                    (f.ratio - 1.0) * 100.0,
                    f.rounds,
                    ms(f.metered),
                    ms(f.unmetered)
                )
            },
        )
    }

    /// Each figure the speed targets name: what it measures, its target, the value measured
    /// (one per form measured).
    fn rows(&self) -> [(&'static str, String, String); 7] {
        let na = || "not measured".to_owned();
        // One figure, or one per form measured: "21.1 µs source, 13.1 µs compiled".
        let forms = |figures: Vec<(&str, String)>| match figures.as_slice() {
            [] => na(),
            [(_, figure)] => figure.clone(),
            several => several
                .iter()
                .map(|(form, figure)| format!("{figure} {form}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let median = |name: &str, unit_ms: bool| {
            let by_form = self.medians.get(name).map_or(&[][..], Vec::as_slice);
            forms(
                by_form
                    .iter()
                    .map(|(form, d)| {
                        let figure = if unit_ms {
                            format!("{:.2} ms", ms(*d))
                        } else {
                            format!("{:.1} µs", us(*d))
                        };
                        (*form, figure)
                    })
                    .collect(),
            )
        };
        [
            (
                "trivial call (w1), fresh instance, median",
                "≤ 15 µs".to_owned(),
                median("w1", false),
            ),
            (
                "throughput, trivial calls, all cores",
                "≥ 60,000 calls/s".to_owned(),
                forms(
                    self.throughput
                        .iter()
                        .map(|(form, t)| (*form, format!("{t:.0} calls/s")))
                        .collect(),
                ),
            ),
            (
                "transform (w2), median",
                "≤ 0.5 ms".to_owned(),
                median("w2", true),
            ),
            (
                "fib(25) (w3), median",
                "≤ quickjs-emscripten fresh (bench/compare.sh)".to_owned(),
                median("w3", true),
            ),
            (
                "`palisade run hello.js` one-shot, warm cache, wall",
                "≤ 20 ms".to_owned(),
                self.one_shot
                    .map_or_else(na, |d| format!("{:.1} ms", ms(d))),
            ),
            (
                "resident memory per in-flight call",
                "≤ 4 MiB".to_owned(),
                self.memory_per_call
                    .map_or_else(na, |b| format!("{:.2} MiB", b / (1 << 20) as f64)),
            ),
            (
                "fuel metering overhead on w3",
                "measured".to_owned(),
                self.fuel_cost(),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuel_overhead_is_the_median_of_paired_ratios() {
        let ms = Duration::from_millis;
        // A round caught in a slow phase (the first) does not move the median.
        let odd =
            FuelOverhead::from_rounds(&[(ms(36), ms(20)), (ms(18), ms(20)), (ms(19), ms(20))]);
        assert_eq!(odd.ratio, 19.0 / 20.0);
        assert_eq!(
            (odd.metered, odd.unmetered, odd.rounds),
            (ms(18), ms(20), 3)
        );
        let even = FuelOverhead::from_rounds(&[(ms(10), ms(10)), (ms(12), ms(10))]);
        assert!((even.ratio - 1.1).abs() < 1e-12, "{}", even.ratio);
    }
}
