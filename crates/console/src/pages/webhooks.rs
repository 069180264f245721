//! The webhooks page: each live key's default target and signing secret (a new one shown once),
//! and the account's recent deliveries with every attempt.

use super::{alert, copy_button, csrf_field, key_name, when_rfc3339, Page};
use maud::{html, Markup};
use service::console::ConsoleUser;
use service::views::WebhookDeliveryView;
use service::{AccountKey, KeyWebhookSettings};

/// A signing secret made just now, shown once.
pub struct NewSecret<'a> {
    /// The key it signs for.
    pub key: &'a AccountKey,
    /// `whsec_...`.
    pub secret: &'a str,
}

/// The webhooks page.
pub fn webhooks_page(
    user: &ConsoleUser,
    keys: &[(AccountKey, KeyWebhookSettings)],
    deliveries: &[WebhookDeliveryView],
    new_secret: Option<&NewSecret<'_>>,
    error: Option<&str>,
) -> Page {
    let body = html! {
        (alert(error))
        @if let Some(new) = new_secret {
            section #new-webhook-secret .card .reveal aria-labelledby="new-secret-heading" {
                h2 #new-secret-heading { "New signing secret for " (key_name(new.key)) }
                p.strong { "Copy it now. It is shown only this once." }
                p { "Messages are signed with it from now on, and with the previous secret too for 24 hours, so your \
                     receiver can switch without losing a message." }
                div.secret-row {
                    code #webhook-secret .secret { (new.secret) }
                    (copy_button("copy-webhook-secret", "webhook-secret", "Copy signing secret"))
                }
            }
        }
        section aria-labelledby="targets-heading" {
            h2 #targets-heading { "Targets and secrets" }
            p { "A job sends its webhook to the " code { "webhook_url" } " of its request, or else to its key's \
                 default below. Each message is signed by the Standard Webhooks convention (" code { "webhook-id" } ", "
                 code { "webhook-timestamp" } ", " code { "webhook-signature" } ") with the key's secret." }
            @if keys.is_empty() {
                p { "No live keys." }
            }
            @for (key, settings) in keys { (key_card(user, key, settings)) }
        }
        section aria-labelledby="deliveries-heading" {
            h2 #deliveries-heading { "Recent deliveries" }
            @if deliveries.is_empty() {
                p { "No webhooks sent yet." }
            } @else {
                div.table-scroll {
                    table #deliveries {
                        thead { tr {
                            th scope="col" { "Event at" } th scope="col" { "Job" } th scope="col" { "Event" }
                            th scope="col" { "Receiver" } th scope="col" { "Status" } th scope="col" { "Attempts" }
                            th scope="col" { "Next try" }
                        } }
                        tbody { @for delivery in deliveries { (delivery_row(delivery)) } }
                    }
                }
            }
        }
    };
    Page::signed_in("Webhooks", user, "webhooks", body)
}

fn key_card(user: &ConsoleUser, key: &AccountKey, settings: &KeyWebhookSettings) -> Markup {
    let name = key_name(key);
    let default = settings.default.as_ref();
    html! {
        div.card.webhook-key data-key-id=(key.id) {
            h3 { (name) }
            form.webhook-form method="post" action={ "/console/keys/" (key.id) "/webhook" } {
                (csrf_field(&user.csrf_token))
                div.field {
                    label for={ "webhook-url-" (key.id) } { "Default webhook URL" }
                    input id={ "webhook-url-" (key.id) } type="url" name="url" size="48" placeholder="none"
                        value=[default.map(|d| d.url.as_str())];
                }
                div.field {
                    label {
                        input type="checkbox" name="running" value="on" checked[default.is_some_and(|d| d.on_running)];
                        " also when a job starts"
                    }
                }
                button.secondary type="submit" { "Save" span.visually-hidden { " default webhook of " (name) } }
                p.hint { "Empty: no default; jobs then send webhooks only when their request names one." }
            }
            form.secret-form method="post" action={ "/console/keys/" (key.id) "/webhook-secret" } {
                (csrf_field(&user.csrf_token))
                @if settings.has_secret {
                    p { "Signing secret: set (shown once when made)."
                        @if let Some(until) = settings.previous_secret_until {
                            " The previous one still signs until " (super::when(until)) "."
                        }
                    }
                    button.secondary type="submit" { "Rotate signing secret" span.visually-hidden { " of " (name) } }
                } @else {
                    p { "This key has no signing secret yet; its jobs cannot ask for webhooks until it has one." }
                    button.primary type="submit" { "Make signing secret" span.visually-hidden { " of " (name) } }
                }
            }
        }
    }
}

fn delivery_row(delivery: &WebhookDeliveryView) -> Markup {
    let attempts: Vec<String> = delivery
        .attempts
        .iter()
        .map(|a| a.status_code.map_or_else(|| "no answer".to_string(), |code| code.to_string()))
        .collect();
    let last_error = delivery.attempts.last().and_then(|a| a.error.as_deref());
    html! {
        tr data-delivery-id=(delivery.id) {
            td { (when_rfc3339(&delivery.created_at)) }
            td { code { (delivery.task_id) } }
            td { (delivery.event) }
            td.receiver { (delivery.url) }
            td.status title=[last_error] { (delivery.status) }
            td.attempts title=[last_error] { (attempts.join(", ")) }
            td { (delivery.next_attempt_at.as_deref().map_or("—".to_string(), when_rfc3339)) }
        }
    }
}
