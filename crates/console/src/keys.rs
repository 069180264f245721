//! The API keys of the signed-in account: list, create, change cap and request rates, revoke,
//! rotate.

use crate::pages::keys::{self as view, Action, Revealed};
use crate::pages::{self, status_of};
use crate::session;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use service::console::ConsoleUser;
use service::rate_limit::KeyRates;
use service::{NewKey, Service};

/// The create form.
#[derive(Deserialize)]
pub struct CreateForm {
    #[serde(default)]
    label: String,
    #[serde(default)]
    spend_cap: String,
    #[serde(default)]
    csrf: String,
}

/// The cap form.
#[derive(Deserialize)]
pub struct CapForm {
    #[serde(default)]
    spend_cap: String,
    #[serde(default)]
    csrf: String,
}

/// The rates form: requests per minute, empty for the service's.
#[derive(Deserialize)]
pub struct RatesForm {
    #[serde(default)]
    submits_per_minute: String,
    #[serde(default)]
    reads_per_minute: String,
    #[serde(default)]
    csrf: String,
}

/// `GET /console/keys`.
pub async fn list(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    match session::signed_in(&service, &req).await {
        Ok(user) => keys_answer(&service, &user, None, None).await,
        Err(to_sign_in) => to_sign_in,
    }
}

/// `POST /console/keys`: creates a key and shows its secret, once.
pub async fn create(service: web::Data<Service>, req: HttpRequest, form: web::Form<CreateForm>) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let cap = match view::parse_cap(&form.spend_cap) {
        Ok(cap) => cap,
        Err(message) => return keys_error(&service, &user, StatusCode::BAD_REQUEST, &message).await,
    };
    match service.console().create_account_key(&user.account_id, Some(&form.label), cap).await {
        Ok(new_key) => keys_answer(&service, &user, Some((&new_key, false)), None).await,
        Err(e) => {
            let (status, message) = status_of(&e);
            keys_error(&service, &user, status, &message).await
        }
    }
}

/// `POST /console/keys/{id}/cap`.
pub async fn set_cap(
    service: web::Data<Service>,
    req: HttpRequest,
    key_id: web::Path<String>,
    form: web::Form<CapForm>,
) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let cap = match view::parse_cap(&form.spend_cap) {
        Ok(cap) => cap,
        Err(message) => return keys_error(&service, &user, StatusCode::BAD_REQUEST, &message).await,
    };
    match service.console().set_account_key_cap(&user.account_id, &key_id, cap).await {
        Ok(_) => session::see_other("/console/keys"),
        Err(e) => pages::service_error(e),
    }
}

/// `POST /console/keys/{id}/rates`.
pub async fn set_rates(
    service: web::Data<Service>,
    req: HttpRequest,
    key_id: web::Path<String>,
    form: web::Form<RatesForm>,
) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let rates = match (view::parse_rate(&form.submits_per_minute), view::parse_rate(&form.reads_per_minute)) {
        (Ok(submits_per_minute), Ok(reads_per_minute)) => KeyRates { submits_per_minute, reads_per_minute },
        (Err(message), _) | (_, Err(message)) => {
            return keys_error(&service, &user, StatusCode::BAD_REQUEST, &message).await
        }
    };
    match service.console().set_account_key_rates(&user.account_id, &key_id, rates).await {
        Ok(()) => session::see_other("/console/keys"),
        Err(e) => {
            let (status, message) = status_of(&e);
            keys_error(&service, &user, status, &message).await
        }
    }
}

/// `GET /console/keys/{id}/revoke` and `.../rotate`: asks first.
pub async fn confirm(service: &Service, req: &HttpRequest, key_id: &str, action: Action) -> HttpResponse {
    let user = match session::signed_in(service, req).await {
        Ok(user) => user,
        Err(to_sign_in) => return to_sign_in,
    };
    match service.console().owned_key(&user.account_id, key_id).await {
        Ok(key) if key.revoked_at.is_none() => view::confirm(&user, &key, action).respond(),
        Ok(_) => pages::error_page(StatusCode::CONFLICT, "This key is already revoked."),
        Err(e) => pages::service_error(e),
    }
}

/// `POST /console/keys/{id}/revoke` (back to the list) and `.../rotate` (the new secret, shown
/// once).
pub async fn act(service: &Service, req: &HttpRequest, key_id: &str, csrf: &str, action: Action) -> HttpResponse {
    let user = match session::signed_in_form(service, req, csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let done = match action {
        Action::Revoke => service.console().revoke_account_key(&user.account_id, key_id).await.map(|_| None),
        Action::Rotate => service.console().rotate_account_key(&user.account_id, key_id).await.map(Some),
    };
    match done {
        Ok(None) => session::see_other("/console/keys"),
        Ok(Some(new_key)) => keys_answer(service, &user, Some((&new_key, true)), None).await,
        Err(e) => pages::service_error(e),
    }
}

async fn keys_error(service: &Service, user: &ConsoleUser, status: StatusCode, message: &str) -> HttpResponse {
    let mut response = keys_answer(service, user, None, Some(message)).await;
    if response.status() == StatusCode::OK {
        *response.status_mut() = status;
    }
    response
}

/// The keys page, with a just-made secret when there is one. That answer's address becomes
/// `/console/keys`, so reloading it never shows the secret again or repeats the POST.
async fn keys_answer(
    service: &Service,
    user: &ConsoleUser,
    revealed: Option<(&NewKey, bool)>,
    error: Option<&str>,
) -> HttpResponse {
    let keys = match service.console().account_keys(&user.account_id).await {
        Ok(keys) => keys,
        Err(e) => return pages::service_error(e),
    };
    let Some((new_key, rotated)) = revealed else {
        return view::keys_page(user, &keys, service.config().rate_limits, None, error).respond();
    };
    let connector_url = service.console().connector_url(&new_key.secret);
    let generate_url = service.urls().generate();
    let revealed = Revealed {
        key: &new_key.key,
        secret: &new_key.secret,
        connector_url: &connector_url,
        generate_url: &generate_url,
        rotated,
        webhook_secret: new_key.webhook_secret.as_deref(),
    };
    view::keys_page(user, &keys, service.config().rate_limits, Some(&revealed), error)
        .replace_url("/console/keys")
        .respond()
}
