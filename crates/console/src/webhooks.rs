//! The webhooks of the signed-in account: each key's default target and signing secret, and the
//! delivery log.

use crate::pages::webhooks::{webhooks_page, NewSecret};
use crate::pages::{self, status_of};
use crate::session;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use service::console::ConsoleUser;
use service::{AccountKey, Service, ServiceError};

/// Deliveries listed on the page.
const RECENT_DELIVERIES: i64 = 50;

/// The default-target form.
#[derive(Deserialize)]
pub struct TargetForm {
    #[serde(default)]
    url: String,
    #[serde(default)]
    running: Option<String>,
    #[serde(default)]
    csrf: String,
}

/// A form with only its CSRF token.
#[derive(Deserialize)]
pub struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

/// `GET /console/webhooks`.
pub async fn page(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    match session::signed_in(&service, &req).await {
        Ok(user) => answer(&service, &user, None, None).await,
        Err(to_sign_in) => to_sign_in,
    }
}

/// `POST /console/keys/{id}/webhook`: sets or clears a key's default target.
pub async fn set_target(
    service: web::Data<Service>,
    req: HttpRequest,
    key_id: web::Path<String>,
    form: web::Form<TargetForm>,
) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let url = Some(form.url.trim()).filter(|url| !url.is_empty());
    let on_running = form.running.is_some();
    match service.console().set_default_webhook(&user.account_id, &key_id, url, on_running).await {
        Ok(()) => session::see_other("/console/webhooks"),
        Err(e) => error(&service, &user, e).await,
    }
}

/// `POST /console/keys/{id}/webhook-secret`: a new signing secret, shown once.
pub async fn rotate_secret(
    service: web::Data<Service>,
    req: HttpRequest,
    key_id: web::Path<String>,
    form: web::Form<CsrfForm>,
) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let made = async {
        let key = service.console().owned_key(&user.account_id, &key_id).await?;
        if key.revoked_at.is_some() {
            return Err(ServiceError::BadRequest("a revoked key sends no webhooks".into()));
        }
        let secret = service.console().rotate_webhook_secret(&user.account_id, &key_id).await?;
        Ok((key, secret))
    };
    match made.await {
        Ok((key, secret)) => answer(&service, &user, Some((&key, &secret)), None).await,
        Err(e) => error(&service, &user, e).await,
    }
}

async fn error(service: &Service, user: &ConsoleUser, error: ServiceError) -> HttpResponse {
    let (status, message) = status_of(&error);
    let mut response = answer(service, user, None, Some(&message)).await;
    if response.status() == StatusCode::OK {
        *response.status_mut() = status;
    }
    response
}

/// The page, with a just-made secret when there is one (its address becomes `/console/webhooks`,
/// so a reload never shows the secret again).
async fn answer(
    service: &Service,
    user: &ConsoleUser,
    new_secret: Option<(&AccountKey, &str)>,
    error: Option<&str>,
) -> HttpResponse {
    let console = service.console();
    let loaded = async {
        let mut keys = Vec::new();
        for key in console.account_keys(&user.account_id).await?.into_iter().filter(|k| k.revoked_at.is_none()) {
            let settings = console.key_webhook(&user.account_id, &key.id).await?;
            keys.push((key, settings));
        }
        let deliveries = console.webhook_deliveries(&user.account_id, RECENT_DELIVERIES).await?;
        Ok::<_, ServiceError>((keys, deliveries))
    };
    let (keys, deliveries) = match loaded.await {
        Ok(loaded) => loaded,
        Err(e) => return pages::service_error(e),
    };
    let new_secret = new_secret.map(|(key, secret)| NewSecret { key, secret });
    let page = webhooks_page(user, &keys, &deliveries, new_secret.as_ref(), error);
    if new_secret.is_some() {
        page.replace_url("/console/webhooks").respond()
    } else {
        page.respond()
    }
}
