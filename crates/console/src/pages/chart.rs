//! The spend chart: stacked daily bars per key, drawn as SVG on the server (no chart library).

use super::usd;
use domain::Usd;
use maud::{html, Markup};

/// One key's spend per day, aligned with the chart's days.
pub struct Series {
    /// What the legend calls the key.
    pub name: String,
    /// Ten-thousandths of a dollar per day.
    pub units: Vec<i64>,
}

/// Bar colours: the Okabe–Ito palette, distinguishable with the common colour-vision deficiencies
/// (its yellow is left out: too light on white).
pub const PALETTE: [&str; 7] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000"];

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 30.0;

/// The chart of `series` over `days` (days since 1970-01-01, oldest first).
pub fn spend_chart(days: &[i64], series: &[Series]) -> Markup {
    let totals: Vec<i64> =
        (0..days.len()).map(|d| series.iter().map(|s| s.units.get(d).copied().unwrap_or(0)).sum()).collect();
    let top = nice_ceiling(totals.iter().copied().max().unwrap_or(0));
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = plot_w / days.len().max(1) as f64;
    let bar = (slot * 0.7).max(1.0);
    let y_of = |units: i64| TOP + plot_h - plot_h * units as f64 / top as f64;
    let sum: i64 = totals.iter().sum();
    let summary = format!(
        "Spend per day over the last {} days, stacked by key: {} in all, highest day {}.",
        days.len(),
        usd(Usd::from_units(sum)),
        usd(Usd::from_units(totals.iter().copied().max().unwrap_or(0)))
    );
    let mut bars = Vec::new();
    for (d, day) in days.iter().enumerate() {
        let x = LEFT + slot * d as f64 + (slot - bar) / 2.0;
        let mut base = 0i64;
        for (s, one) in series.iter().enumerate() {
            let units = one.units.get(d).copied().unwrap_or(0);
            if units <= 0 {
                continue;
            }
            let y = y_of(base + units);
            bars.push(Bar {
                x,
                y,
                width: bar,
                height: (y_of(base) - y).max(1.0),
                colour: PALETTE[s % PALETTE.len()],
                title: format!("{}, {}: {}", label_of_day(*day), one.name, usd(Usd::from_units(units))),
            });
            base += units;
        }
    }
    html! {
        svg #spend-chart xmlns="http://www.w3.org/2000/svg" viewBox={ "0 0 " (WIDTH) " " (HEIGHT) }
            role="img" aria-labelledby="spend-chart-title" preserveAspectRatio="xMidYMid meet" {
            title #spend-chart-title { (summary) }
            @for step in 0..=4 {
                @let units = top * step / 4;
                @let y = y_of(units);
                line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(y) y2=(y) stroke="#d0d4dc" stroke-width="1" {}
                text x=(LEFT - 6.0) y=(y + 4.0) text-anchor="end" font-size="11" fill="#3d4451" { (usd(Usd::from_units(units))) }
            }
            @for bar in &bars {
                rect x=(format!("{:.1}", bar.x)) y=(format!("{:.1}", bar.y)) width=(format!("{:.1}", bar.width))
                    height=(format!("{:.1}", bar.height)) fill=(bar.colour) {
                    title { (bar.title) }
                }
            }
            @for (d, day) in days.iter().enumerate() {
                @if d % 5 == (days.len() - 1) % 5 {
                    text x=(format!("{:.1}", LEFT + slot * d as f64 + slot / 2.0)) y=(HEIGHT - 10.0)
                        text-anchor="middle" font-size="11" fill="#3d4451" { (label_of_day(*day)) }
                }
            }
            line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(TOP + plot_h) y2=(TOP + plot_h) stroke="#3d4451" stroke-width="1" {}
        }
    }
}

struct Bar {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    colour: &'static str,
    title: String,
}

/// `Nov 24` for a day number.
pub fn label_of_day(day: i64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(u64::try_from(day.max(0)).unwrap_or(0) * 86_400);
    let text = humantime::format_rfc3339_seconds(time).to_string();
    let month = text.get(5..7).and_then(|m| m.parse::<usize>().ok()).unwrap_or(1);
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!("{} {}", MONTHS[(month + 11) % 12], text.get(8..10).unwrap_or("").trim_start_matches('0'))
}

/// The smallest "round" amount (1, 2 or 5 times a power of ten, in ten-thousandths of a dollar)
/// at or above `units`, so the axis reads in plain steps; at least one cent.
fn nice_ceiling(units: i64) -> i64 {
    let units = units.max(100);
    let mut power = 1i64;
    while power.saturating_mul(10) <= units {
        power *= 10;
    }
    [1, 2, 5, 10].iter().map(|m| m * power).find(|&v| v >= units).unwrap_or(units)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_tops_are_round() {
        assert_eq!(nice_ceiling(0), 100);
        assert_eq!(nice_ceiling(101), 200);
        assert_eq!(nice_ceiling(4_000), 5_000);
        assert_eq!(nice_ceiling(5_001), 10_000);
    }

    #[test]
    fn days_are_labelled() {
        assert_eq!(label_of_day(0), "Jan 1");
        assert_eq!(label_of_day(20_416), "Nov 24");
    }

    #[test]
    fn bars_stack_to_the_day_total() {
        let svg = spend_chart(
            &[0, 1],
            &[Series { name: "a".into(), units: vec![500, 0] }, Series { name: "b".into(), units: vec![500, 250] }],
        )
        .into_string();
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.contains("$0.1"), "{svg}");
    }
}
