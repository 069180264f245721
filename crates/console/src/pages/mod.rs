//! The console's HTML: the shared layout and formatting helpers, one module per page family.
//! Pages are maud templates, escaped by construction.

pub mod account;
pub mod agents;
pub mod auth;
pub mod chart;
pub mod keys;
pub mod usage;
pub mod webhooks;

use actix_web::http::{header, StatusCode};
use actix_web::HttpResponse;
use domain::Usd;
use maud::{html, Markup, DOCTYPE};
use service::console::ConsoleUser;
use service::{ErrorCode, ServiceError};

/// The console's stylesheet and script, served from the binary.
pub const STYLESHEET: &str = include_str!("../../assets/console.css");
/// See [`STYLESHEET`].
pub const SCRIPT: &str = include_str!("../../assets/console.js");

/// A rendered page with its status.
pub struct Page {
    status: StatusCode,
    title: String,
    body: Markup,
    user: Option<ConsoleUser>,
    current: Option<&'static str>,
    replace_url: Option<&'static str>,
    /// A source its forms may also submit to, or be redirected to (an agent's redirect URI).
    form_target: Option<String>,
}

impl Page {
    /// A page titled `title` for a signed-out visitor.
    pub fn public(title: &str, body: Markup) -> Page {
        Page {
            status: StatusCode::OK,
            title: title.into(),
            body,
            user: None,
            current: None,
            replace_url: None,
            form_target: None,
        }
    }

    /// A page of the signed-in console; `current` is the nav entry it belongs to.
    pub fn signed_in(title: &str, user: &ConsoleUser, current: &'static str, body: Markup) -> Page {
        Page { user: Some(user.clone()), current: Some(current), ..Page::public(title, body) }
    }

    /// Answers with `status` instead of 200.
    pub fn status(mut self, status: StatusCode) -> Page {
        self.status = status;
        self
    }

    /// Has the browser show `path` as the page's address, so a reload is a plain GET of it
    /// (used where a POST's answer shows a secret that must not come back).
    pub fn replace_url(mut self, path: &'static str) -> Page {
        self.replace_url = Some(path);
        self
    }

    /// Lets the page's forms lead to `source` (a CSP source such as `https://app.example.com` or
    /// `com.example.app:`): a consent's answer redirects there, and browsers hold redirects after
    /// a form to the page's `form-action`.
    pub fn form_target(mut self, source: String) -> Page {
        self.form_target = Some(source);
        self
    }

    /// The HTTP response, with the console's security headers.
    pub fn respond(self) -> HttpResponse {
        let status = self.status;
        let form_target = self.form_target.clone();
        let markup = layout(self);
        let mut builder = secured(HttpResponse::build(status));
        if let Some(source) = form_target {
            builder
                .insert_header((header::CONTENT_SECURITY_POLICY, content_security_policy(&format!("'self' {source}"))));
        }
        builder.content_type("text/html; charset=utf-8").body(markup.into_string())
    }
}

/// The console's content security policy, its forms allowed to lead to `form_action`.
fn content_security_policy(form_action: &str) -> String {
    format!(
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; \
         form-action {form_action}; frame-ancestors 'none'; base-uri 'none'"
    )
}

/// Adds the headers every console response carries: no caching (pages show secrets and
/// balances), a strict content security policy (only our own stylesheet and script, no framing),
/// and no referrer (so no console address leaks to the links it shows).
pub fn secured(mut builder: actix_web::HttpResponseBuilder) -> actix_web::HttpResponseBuilder {
    builder
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::CONTENT_SECURITY_POLICY, content_security_policy("'self'")))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"));
    builder
}

const NAV: [(&str, &str); 5] =
    [("keys", "API keys"), ("webhooks", "Webhooks"), ("agents", "Agents"), ("usage", "Usage"), ("account", "Account")];

fn layout(page: Page) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                // No icon request: the console has none.
                link rel="icon" href="data:,";
                title { (page.title) " · Media API console" }
                link rel="stylesheet" href="/console/assets/console.css";
                script src="/console/assets/console.js" defer {}
            }
            body data-replace-url=[page.replace_url] {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    a.brand href="/console" { "Media API" span.brand-sub { " console" } }
                    @if let Some(user) = &page.user {
                        nav aria-label="Console" {
                            ul {
                                @for (path, label) in NAV {
                                    li {
                                        a href={ "/console/" (path) }
                                            aria-current=[(page.current == Some(path)).then_some("page")] { (label) }
                                    }
                                }
                            }
                        }
                        div.who {
                            span.email title="Signed in as" { (user.email) }
                            form method="post" action="/console/sign-out" {
                                (csrf_field(&user.csrf_token))
                                button #sign-out .link type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main #main tabindex="-1" {
                    h1 { (page.title) }
                    (page.body)
                }
                footer.bottom {
                    p { "API reference: " a href="/openapi.json" { "OpenAPI document" } }
                }
            }
        }
    }
}

/// The hidden CSRF field of a form.
pub fn csrf_field(token: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(token); }
}

/// An error message announced to screen readers.
pub fn alert(message: Option<&str>) -> Markup {
    html! {
        @if let Some(message) = message {
            p.alert role="alert" { (message) }
        }
    }
}

/// What the console calls a key: its label, else its prefix, else its id.
pub fn key_name(key: &service::AccountKey) -> String {
    key.label.clone().or_else(|| key.prefix.clone()).unwrap_or_else(|| key.id.clone())
}

/// A dollar amount as the console shows it.
pub fn usd(amount: Usd) -> String {
    format!("${amount}")
}

/// Unix milliseconds as `2026-11-24 10:31 UTC`.
pub fn when(millis: i64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(millis).unwrap_or(0));
    let text = humantime::format_rfc3339_seconds(time).to_string();
    format!("{} {} UTC", &text[..10], &text[11..16])
}

/// An RFC 3339 timestamp as `2026-11-24 10:31 UTC`.
pub fn when_rfc3339(text: &str) -> String {
    match (text.get(..10), text.get(11..16)) {
        (Some(day), Some(time)) => format!("{day} {time} UTC"),
        _ => text.to_string(),
    }
}

/// A copy button for the element `target`.
pub fn copy_button(id: &str, target: &str, label: &str) -> Markup {
    html! {
        button.copy #(id) type="button" data-copy=(target) { (label) }
    }
}

/// An error page with `status` and `message`.
pub fn error_page(status: StatusCode, message: &str) -> HttpResponse {
    let title = match status {
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::FORBIDDEN => "Not allowed",
        StatusCode::TOO_MANY_REQUESTS => "Too many attempts",
        s if s.is_server_error() => "Something went wrong",
        _ => "Cannot do that",
    };
    Page::public(
        title,
        html! {
            p.alert role="alert" { (message) }
            p { a href="/console" { "Back to the console" } }
        },
    )
    .status(status)
    .respond()
}

/// The page for a service error that no form can show.
pub fn service_error(error: ServiceError) -> HttpResponse {
    let (status, message) = status_of(&error);
    error_page(status, &message)
}

/// The status of a page that shows an error with `code`. Console actions (sign-up, sign-in, keys,
/// usage, cancelling a job, invites) meet only these codes; anything else is our fault. The API's table is
/// `http_api::status_of`, which the console cannot use: the HTTP crate mounts the console.
fn page_status(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::InvalidInput => StatusCode::BAD_REQUEST,
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::AlreadyFinished => StatusCode::CONFLICT,
        ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The status and message of a service error, as the console shows it.
pub fn status_of(error: &ServiceError) -> (StatusCode, String) {
    let status = page_status(error.code());
    let message = match error {
        ServiceError::Unavailable(_) => "The service is briefly unavailable; try again in a moment.".into(),
        ServiceError::Internal(detail) => {
            tracing::error!(error = %detail, "internal error in the console");
            "Internal error on our side; it has been logged.".into()
        }
        other => other.to_string(),
    };
    (status, message)
}
