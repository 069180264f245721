//! The usage page: spend per day per key, recent jobs with their outputs, and a first-call example.

use super::chart::{self, Series, PALETTE};
use super::{copy_button, csrf_field, key_name, usd, when_rfc3339, Page};
use domain::{TaskStatus, Usd};
use maud::{html, Markup};
use service::console::{ConsoleUser, DailySpendReport, RecentJob};
use service::AccountKey;

/// Days the chart covers.
pub const CHART_DAYS: i64 = 30;

/// The usage page.
pub fn usage_page(
    user: &ConsoleUser,
    spend: &DailySpendReport,
    keys: &[AccountKey],
    jobs: &[RecentJob],
    generate_url: &str,
) -> Page {
    let name_of = |id: &str| keys.iter().find(|k| k.id == id).map_or_else(|| id.to_string(), key_name);
    let series: Vec<Series> =
        spend.keys.iter().map(|k| Series { name: key_name(&k.key), units: k.units.clone() }).collect();
    let body = html! {
        section aria-labelledby="spend-heading" {
            h2 #spend-heading { "Spend per day, last " (CHART_DAYS) " days" }
            div.chart { (chart::spend_chart(&spend.days, &series)) }
            @if series.is_empty() {
                p { "No spend in this period yet." }
            } @else {
                ul.legend aria-label="Keys in the chart" {
                    @for (i, one) in series.iter().enumerate() {
                        li {
                            span class={ "swatch swatch-" (i % PALETTE.len()) } aria-hidden="true" {}
                            (one.name) ": " (usd(Usd::from_units(one.units.iter().sum())))
                        }
                    }
                }
            }
        }
        section aria-labelledby="jobs-heading" {
            h2 #jobs-heading { "Recent jobs" }
            @if jobs.is_empty() {
                p { "No jobs yet. Your first call appears here." }
            } @else {
                div.table-scroll {
                    table #recent-tasks {
                        thead { tr {
                            th scope="col" { "Created" } th scope="col" { "Job" } th scope="col" { "Engine" }
                            th scope="col" { "Key" } th scope="col" { "Status" } th scope="col" .num { "Price" }
                            th scope="col" .num { "Cost" } th scope="col" .num { "Time" } th scope="col" { "Outputs" }
                        } }
                        tbody { @for job in jobs { (job_row(job, &name_of(&job.key_id), &user.csrf_token)) } }
                    }
                }
                p.hint { "Price is what was held when the job was accepted; cost is what was billed. Output links expire; reload the page for fresh ones." }
            }
        }
        section aria-labelledby="curl-heading" {
            h2 #curl-heading { "Call the API" }
            p { "With a key's secret in " code { "MEDIA_API_KEY" } ":" }
            pre #usage-curl { (super::keys::curl_example(generate_url, "$MEDIA_API_KEY")) }
            (copy_button("copy-usage-curl", "usage-curl", "Copy command"))
            p { "Then poll the " code { "poll_url" } " it answers with until " code { "status" } " is " code { "succeeded" } "." }
        }
    };
    Page::signed_in("Usage", user, "usage", body)
}

fn job_row(job: &RecentJob, key_name: &str, csrf_token: &str) -> Markup {
    let view = &job.view;
    let outputs = view.output.as_deref().unwrap_or_default();
    html! {
        tr data-task-id=(view.id) {
            td { (when_rfc3339(&view.created_at)) }
            td { code { (view.id) } }
            td.model { (view.model) }
            td { (key_name) }
            td.status title=[view.error.as_deref()] { (view.status.as_str()) }
            td.price.num { (usd(view.price_usd)) }
            td.cost.num { @if let Some(cost) = view.cost_usd { (usd(cost)) } @else { "—" } }
            td.num { (duration(view.started_at.as_deref(), view.finished_at.as_deref())) }
            td.outputs {
                @if matches!(view.status, TaskStatus::Queued | TaskStatus::Running) {
                    form.cancel-job method="post" action={ "/console/jobs/" (view.id) "/cancel" } {
                        (csrf_field(csrf_token))
                        button.secondary type="submit" { "Cancel" span.visually-hidden { " job " (view.id) } }
                    }
                }
                @if view.status == TaskStatus::Failed {
                    span.error-text { (view.error.as_deref().unwrap_or("failed")) }
                }
                @for (n, output) in outputs.iter().enumerate() {
                    a.output href=(output.url) target="_blank" rel="noopener noreferrer" {
                        (output.content_type.split('/').next().unwrap_or("file")) " " (n + 1)
                    }
                    " "
                }
            }
        }
    }
}

/// Seconds between two RFC 3339 times, as `4.2 s`.
fn duration(started: Option<&str>, finished: Option<&str>) -> String {
    let parse = |t: &str| humantime::parse_rfc3339_weak(t.trim_end_matches('Z')).ok();
    match (started.and_then(parse), finished.and_then(parse)) {
        (Some(start), Some(end)) => {
            end.duration_since(start).map_or("—".to_string(), |d| format!("{:.1} s", d.as_secs_f64()))
        }
        _ => "—".to_string(),
    }
}
