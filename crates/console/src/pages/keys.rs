//! The API keys page: the new secret (once), the create form, the list with caps and request
//! rates, and the confirmation pages of revoke and rotate.

use super::{alert, copy_button, csrf_field, key_name, usd, when, Page};
use domain::Usd;
use maud::{html, Markup};
use service::console::{ConsoleUser, LABEL_MAX_CHARS};
use service::rate_limit::RateLimits;
use service::AccountKey;

/// A secret to show once, with what goes with it.
pub struct Revealed<'a> {
    /// The key it belongs to.
    pub key: &'a AccountKey,
    /// The secret itself.
    pub secret: &'a str,
    /// The MCP connector URL with the secret in it.
    pub connector_url: &'a str,
    /// The generate endpoint, for the curl example.
    pub generate_url: &'a str,
    /// Whether the key was rotated rather than created.
    pub rotated: bool,
    /// The webhook signing secret made with a new key.
    pub webhook_secret: Option<&'a str>,
}

/// The keys page; `revealed` is shown only in the answer to a create or rotate.
pub fn keys_page(
    user: &ConsoleUser,
    keys: &[AccountKey],
    defaults: RateLimits,
    revealed: Option<&Revealed<'_>>,
    error: Option<&str>,
) -> Page {
    let body = html! {
        @if let Some(revealed) = revealed { (reveal(revealed)) }
        section aria-labelledby="create-heading" {
            h2 #create-heading { "Create a key" }
            form #create-key .card .inline method="post" action="/console/keys" {
                (alert(error))
                (csrf_field(&user.csrf_token))
                div.field {
                    label for="label" { "Label" }
                    input #label type="text" name="label" maxlength=(LABEL_MAX_CHARS) placeholder="e.g. production";
                }
                div.field {
                    label for="spend_cap" { "Spend cap (USD, optional)" }
                    input #spend_cap type="text" name="spend_cap" inputmode="decimal" placeholder="no cap"
                        aria-describedby="cap-hint";
                }
                button.primary type="submit" { "Create key" }
                p.hint #cap-hint { "A key with a cap is refused (HTTP 402) once its spend would pass it." }
            }
        }
        section aria-labelledby="list-heading" {
            h2 #list-heading { "Your keys" }
            @if keys.is_empty() {
                p { "No keys yet. Create one above to call the API." }
            } @else {
                div.table-scroll {
                    table #keys {
                        thead { tr {
                            th scope="col" { "Label" } th scope="col" { "Key" } th scope="col" { "Created" }
                            th scope="col" { "Last used" } th scope="col" .num { "Spent" } th scope="col" { "Limits" }
                            th scope="col" { "Status" } th scope="col" { span.visually-hidden { "Actions" } }
                        } }
                        tbody {
                            @for key in keys.iter().rev() { (key_row(user, key, defaults)) }
                        }
                    }
                }
            }
        }
    };
    Page::signed_in("API keys", user, "keys", body)
}

fn key_row(user: &ConsoleUser, key: &AccountKey, defaults: RateLimits) -> Markup {
    let live = key.revoked_at.is_none();
    let limits = key.limits();
    let name = key_name(key);
    html! {
        tr data-key-id=(key.id) {
            td.label { (name) }
            td { code.prefix { (key.prefix.as_deref().unwrap_or("mgk_")) "…" } }
            td { (when(key.created_at)) }
            td { (key.last_used_at.map_or("never".to_string(), when)) }
            td.num { (usd(limits.spent)) }
            td.limits {
                @if live {
                    form.cap-form method="post" action={ "/console/keys/" (key.id) "/cap" } {
                        (csrf_field(&user.csrf_token))
                        label for={ "cap-" (key.id) } { "cap $" span.visually-hidden { " of " (name) } }
                        input id={ "cap-" (key.id) } type="text" name="spend_cap" inputmode="decimal" size="8"
                            placeholder="no cap" value=[limits.cap.map(|c| c.to_string())];
                        button.secondary type="submit" { "Set cap" span.visually-hidden { " of " (name) } }
                    }
                    form.rates-form method="post" action={ "/console/keys/" (key.id) "/rates" } {
                        (csrf_field(&user.csrf_token))
                        (rate_field(key, "submits", "jobs/min", key.rates.submits_per_minute, defaults.submits_per_minute))
                        (rate_field(key, "reads", "other/min", key.rates.reads_per_minute, defaults.reads_per_minute))
                        button.secondary type="submit" { "Set rates" span.visually-hidden { " of " (name) } }
                    }
                } @else {
                    (limits.cap.map_or("no cap".to_string(), |cap| format!("cap {}", usd(cap))))
                }
            }
            td.status { @if live { "active" } @else { "revoked" } }
            td.actions {
                @if live {
                    a.rotate href={ "/console/keys/" (key.id) "/rotate" } { "Rotate" span.visually-hidden { " " (name) } }
                    " "
                    a.revoke.danger href={ "/console/keys/" (key.id) "/revoke" } { "Revoke" span.visually-hidden { " " (name) } }
                }
            }
        }
    }
}

/// One rate input: the key's own rate, or empty with the service's as the placeholder.
fn rate_field(key: &AccountKey, name: &str, shown: &str, own: Option<u32>, default: u32) -> Markup {
    let id = format!("{name}-{}", key.id);
    let service_rate = if default == 0 { "no limit".to_string() } else { default.to_string() };
    html! {
        label for=(id) { (shown) span.visually-hidden { " of " (key_name(key)) } " " }
        input id=(id) type="number" name={ (name) "_per_minute" } min="1" max=[(default > 0).then_some(default)]
            size="6" placeholder=(service_rate) value=[own];
        " "
    }
}

fn reveal(revealed: &Revealed<'_>) -> Markup {
    let curl = curl_example(revealed.generate_url, revealed.secret);
    html! {
        section #new-key .card .reveal aria-labelledby="new-key-heading" {
            h2 #new-key-heading {
                @if revealed.rotated { "New secret for " } @else { "Your new key " }
                (key_name(revealed.key))
            }
            p.strong { "Copy the secret now. It is shown only this once; we keep only a hash of it." }
            @if revealed.rotated { p { "The previous secret of this key no longer works." } }
            div.secret-row {
                code #secret .secret { (revealed.secret) }
                (copy_button("copy-secret", "secret", "Copy secret"))
            }
            @if let Some(webhook_secret) = revealed.webhook_secret {
                h3 { "Webhook signing secret" }
                p { "Verify the " code { "webhook-signature" } " of this key's webhooks with it (Standard Webhooks).                      Also shown only now; the Webhooks page makes a new one." }
                div.secret-row {
                    code #new-key-webhook-secret .secret { (webhook_secret) }
                    (copy_button("copy-new-key-webhook-secret", "new-key-webhook-secret", "Copy signing secret"))
                }
            }
            h3 { "MCP connector URL" }
            p { "Add this URL as a connector in an AI agent to give it the API's tools." }
            div.secret-row {
                code #connector-url .secret { (revealed.connector_url) }
                (copy_button("copy-connector-url", "connector-url", "Copy connector URL"))
            }
            p #connector-warning .warning role="note" {
                strong { "This URL is itself a secret: " }
                "anyone who has it can spend on this key. Use it only over HTTPS, never paste it in a public place, \
                 and if it leaks, rotate or revoke the key here."
            }
            h3 { "First call" }
            pre #curl-example { (curl) }
            (copy_button("copy-curl", "curl-example", "Copy command"))
        }
    }
}

/// A curl command that starts a cheap job with `secret`.
pub fn curl_example(generate_url: &str, secret: &str) -> String {
    format!(
        "curl -X POST {generate_url} \\\n  -H \"Authorization: Bearer {secret}\" \\\n  \
         -H \"Content-Type: application/json\" \\\n  \
         -d '{{\"model\": \"alpha-schnell\", \"prompt\": \"a sunlit living room\"}}'"
    )
}

/// The confirmation page of a revoke or rotate.
pub fn confirm(user: &ConsoleUser, key: &AccountKey, action: Action) -> Page {
    let name = key_name(key);
    let (title, verb, explain, class) = match action {
        Action::Revoke => (
            "Revoke key",
            "Revoke key",
            "Every request with this key, and its connector URL, will be refused (HTTP 401) from now on. \
             This cannot be undone.",
            "danger",
        ),
        Action::Rotate => (
            "Rotate key",
            "Rotate key",
            "The key gets a new secret, shown once. The current secret and its connector URL stop working at \
             once; the key keeps its label, cap, spend and tasks.",
            "primary",
        ),
    };
    let path = match action {
        Action::Revoke => "revoke",
        Action::Rotate => "rotate",
    };
    Page::signed_in(
        title,
        user,
        "keys",
        html! {
            form.card method="post" action={ "/console/keys/" (key.id) "/" (path) } {
                (csrf_field(&user.csrf_token))
                p { strong { (name) } " (" code { (key.prefix.as_deref().unwrap_or("mgk_")) "…" } ", spent "
                    (usd(key.limits().spent)) ")" }
                p { (explain) }
                div.buttons {
                    button #confirm type="submit" class=(class) { (verb) }
                    a.button.secondary href="/console/keys" { "Cancel" }
                }
            }
        },
    )
}

/// What a confirmation page confirms.
#[derive(Clone, Copy, Debug)]
pub enum Action {
    /// Revoke the key.
    Revoke,
    /// Give the key a new secret.
    Rotate,
}

/// Parses a rate typed in a form: empty is the service's.
pub fn parse_rate(text: &str) -> Result<Option<u32>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<u32>()
        .map(Some)
        .map_err(|_| format!("a rate is a whole number of requests per minute, such as 60 (got {text:?})"))
}

/// Parses a spend cap typed in a form: empty is no cap.
pub fn parse_cap(text: &str) -> Result<Option<Usd>, String> {
    let text = text.trim().trim_start_matches('$').trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<Usd>().map(Some).map_err(|_| {
        format!("a spend cap is an amount in USD such as 25 or 2.50, with at most 4 decimals (got {text:?})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_parse_or_explain() {
        assert_eq!(parse_cap("  ").unwrap(), None);
        assert_eq!(parse_cap("$2.50").unwrap(), Some("2.5".parse().unwrap()));
        assert!(parse_cap("-1").is_err());
        assert!(parse_cap("1.00001").is_err());
        assert!(parse_cap("ten").is_err());
    }
}
