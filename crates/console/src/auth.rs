//! Sign-up with a confirmed address, sign-in, password resets and changes, invites and sign-out.

use crate::pages::account::{account_page, AccountErrors};
use crate::pages::auth::{self, FormState};
use crate::pages::{self, status_of};
use crate::session::{self, SESSION_COOKIE};
use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use service::console::NewSession;
use service::{Service, ServiceError};

/// A signed-out form's fields.
#[derive(Deserialize)]
pub struct Credentials {
    #[serde(default)]
    email: String,
    /// Where to go once signed in.
    #[serde(default)]
    next: Option<String>,
    #[serde(default)]
    password: String,
    #[serde(default)]
    csrf: String,
}

/// A signed-in form with nothing but its token.
#[derive(Deserialize)]
pub struct TokenOnly {
    #[serde(default)]
    pub(crate) csrf: String,
}

/// `GET /console`: the keys when signed in, else the sign-in page.
pub async fn home(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    match session::signed_in(&service, &req).await {
        Ok(_) => session::see_other("/console/keys"),
        Err(to_sign_in) => to_sign_in,
    }
}

/// `GET /console/sign-in`.
pub async fn sign_in_page(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    let next = next_page(&req);
    if let Ok(_user) = session::signed_in(&service, &req).await {
        return session::see_other(next.as_deref().unwrap_or("/console/keys"));
    }
    let open = service.console().sign_up_open();
    let state = FormState { next: next.as_deref(), ..FormState::default() };
    session::with_form_token(&service, |token| auth::sign_in(token, &state, open))
}

/// The page to go to after signing in, from the `next` query parameter: only a console page (such
/// as an agent's consent page), so the link cannot send anyone elsewhere.
fn next_page(req: &HttpRequest) -> Option<String> {
    let next = url::form_urlencoded::parse(req.query_string().as_bytes()).find(|(k, _)| k == "next")?.1.into_owned();
    safe_next(&next).then_some(next)
}

/// Whether `next` is a page of this service a sign-in may continue to.
pub(crate) fn safe_next(next: &str) -> bool {
    next.starts_with("/console/")
        && !next.contains("//")
        && !next.contains('\\')
        && next.chars().all(|c| !c.is_control())
}

/// `POST /console/sign-in`.
pub async fn sign_in(service: web::Data<Service>, req: HttpRequest, form: web::Form<Credentials>) -> HttpResponse {
    if !session::check_form_token(&service, &req, &form.csrf) {
        return session::forged();
    }
    let address = session::client_address(&service, &req);
    let next = form.next.as_deref().filter(|next| safe_next(next));
    match service.console().sign_in(&form.email, &form.password, &address).await {
        Ok(new_session) => signed_in_response(&service, &req, new_session, next).await,
        Err(error) => refused(&service, &error, &form.email, next, auth::sign_in),
    }
}

/// `GET /console/sign-up`.
pub async fn sign_up_page(service: web::Data<Service>) -> HttpResponse {
    let open = service.console().sign_up_open();
    session::with_form_token(&service, |token| auth::sign_up(token, &FormState::default(), open))
}

/// `POST /console/sign-up`.
pub async fn sign_up(service: web::Data<Service>, req: HttpRequest, form: web::Form<Credentials>) -> HttpResponse {
    if !session::check_form_token(&service, &req, &form.csrf) {
        return session::forged();
    }
    let address = session::client_address(&service, &req);
    match service.console().sign_up(&form.email, &form.password, &address).await {
        Ok(()) => auth::check_your_mail(
            "Check your email",
            form.email.trim(),
            "Follow the link in it to finish creating your account.",
        )
        .respond(),
        Err(error) => refused(&service, &error, &form.email, None, auth::sign_up),
    }
}

/// `GET /console/verify/{token}`: the page a verification link opens.
pub async fn verify_page(service: web::Data<Service>, token: web::Path<String>) -> HttpResponse {
    session::with_form_token(&service, |form| auth::confirm_address(form, &token))
}

/// `POST /console/verify/{token}`: confirms the address and signs in.
pub async fn verify(
    service: web::Data<Service>,
    req: HttpRequest,
    token: web::Path<String>,
    form: web::Form<TokenOnly>,
) -> HttpResponse {
    if !session::check_form_token(&service, &req, &form.csrf) {
        return session::forged();
    }
    let address = session::client_address(&service, &req);
    match service.console().verify_email(&token, &address).await {
        Ok(new_session) => signed_in_response(&service, &req, new_session, None).await,
        Err(e) => pages::service_error(e),
    }
}

/// `GET /console/reset`: asks for the address to mail a reset link to.
pub async fn reset_request_page(service: web::Data<Service>) -> HttpResponse {
    let open = service.console().sign_up_open();
    session::with_form_token(&service, |token| auth::reset_request(token, &FormState::default(), open))
}

/// `POST /console/reset`: mails a reset link if the address has a login; the same answer if not.
pub async fn reset_request(
    service: web::Data<Service>,
    req: HttpRequest,
    form: web::Form<Credentials>,
) -> HttpResponse {
    if !session::check_form_token(&service, &req, &form.csrf) {
        return session::forged();
    }
    let address = session::client_address(&service, &req);
    match service.console().request_password_reset(&form.email, &address).await {
        Ok(()) => auth::check_your_mail(
            "Check your email",
            form.email.trim(),
            "If an account uses this address, the mail has a link to choose a new password; it works for an hour.",
        )
        .respond(),
        Err(error) => refused(&service, &error, &form.email, None, auth::reset_request),
    }
}

/// `GET /console/reset/{token}`: the new-password form a reset link opens.
pub async fn reset_page(service: web::Data<Service>, token: web::Path<String>) -> HttpResponse {
    session::with_form_token(&service, |form| auth::reset_form(form, &token, None))
}

/// `POST /console/reset/{token}`: sets the new password and signs in.
pub async fn reset(
    service: web::Data<Service>,
    req: HttpRequest,
    token: web::Path<String>,
    form: web::Form<Credentials>,
) -> HttpResponse {
    if !session::check_form_token(&service, &req, &form.csrf) {
        return session::forged();
    }
    let address = session::client_address(&service, &req);
    match service.console().reset_password(&token, &form.password, &address).await {
        Ok(new_session) => signed_in_response(&service, &req, new_session, None).await,
        Err(ServiceError::BadRequest(message)) => session::with_form_token(&service, |form_token| {
            auth::reset_form(form_token, &token, Some(&message)).status(StatusCode::BAD_REQUEST)
        }),
        Err(e) => pages::service_error(e),
    }
}

/// The password change form's fields.
#[derive(Deserialize)]
pub struct PasswordChange {
    #[serde(default)]
    current: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    csrf: String,
}

/// `POST /console/account/password`: changes the password; every other session ends.
pub async fn change_password(
    service: web::Data<Service>,
    req: HttpRequest,
    form: web::Form<PasswordChange>,
) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    match service.console().change_password(&user.account_id, &form.current, &form.password).await {
        Ok(new_session) => {
            let mut response = session::see_other("/console/account");
            let _ = response.add_cookie(&session::session_cookie(&service, &new_session));
            response
        }
        Err(ServiceError::BadRequest(message)) => {
            let errors = AccountErrors { password: Some(&message), ..Default::default() };
            account_refused(&service, &user, &errors).await
        }
        Err(e) => pages::service_error(e),
    }
}

/// The delete-account form's fields.
#[derive(Deserialize)]
pub struct AccountDeletion {
    #[serde(default)]
    password: String,
    #[serde(default)]
    csrf: String,
}

/// `POST /console/account/delete`: deletes the account after checking the password.
pub async fn delete_account(
    service: web::Data<Service>,
    req: HttpRequest,
    form: web::Form<AccountDeletion>,
) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    match service.console().delete_account(&user.account_id, &form.password).await {
        Ok(()) => signed_out(&service),
        Err(ServiceError::BadRequest(message)) => {
            let errors = AccountErrors { delete: Some(&message), ..Default::default() };
            account_refused(&service, &user, &errors).await
        }
        Err(e) => pages::service_error(e),
    }
}

/// The account page again, with why one of its forms was refused.
async fn account_refused(
    service: &Service,
    user: &service::console::ConsoleUser,
    errors: &AccountErrors<'_>,
) -> HttpResponse {
    match service.console().account_overview(&user.account_id).await {
        Ok(overview) => account_page(user, &overview, errors).status(StatusCode::BAD_REQUEST).respond(),
        Err(e) => pages::service_error(e),
    }
}

/// `GET /console/invite/{token}`.
pub async fn invite_page(service: web::Data<Service>, token: web::Path<String>) -> HttpResponse {
    match service.console().invite_email(&token).await {
        Ok(email) => session::with_form_token(&service, |form| auth::invite(form, &token, &email, None)),
        Err(e) => pages::service_error(e),
    }
}

/// `POST /console/invite/{token}`.
pub async fn accept_invite(
    service: web::Data<Service>,
    req: HttpRequest,
    token: web::Path<String>,
    form: web::Form<Credentials>,
) -> HttpResponse {
    if !session::check_form_token(&service, &req, &form.csrf) {
        return session::forged();
    }
    match service.console().accept_invite(&token, &form.password).await {
        Ok(new_session) => signed_in_response(&service, &req, new_session, None).await,
        Err(ServiceError::BadRequest(message)) => session::with_form_token(&service, |form_token| {
            auth::invite(form_token, &token, &form.email, Some(&message)).status(StatusCode::BAD_REQUEST)
        }),
        Err(e) => pages::service_error(e),
    }
}

/// `POST /console/sign-out`: ends this session.
pub async fn sign_out(service: web::Data<Service>, req: HttpRequest, form: web::Form<TokenOnly>) -> HttpResponse {
    if let Err(refused) = session::signed_in_form(&service, &req, &form.csrf).await {
        return refused;
    }
    if let Some(token) = session::session_token(&req) {
        if let Err(e) = service.console().sign_out(&token).await {
            return pages::service_error(e);
        }
    }
    signed_out(&service)
}

/// `POST /console/sign-out-everywhere`: ends every session of the account.
pub async fn sign_out_everywhere(
    service: web::Data<Service>,
    req: HttpRequest,
    form: web::Form<TokenOnly>,
) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    match service.console().sign_out_everywhere(&user.account_id).await {
        Ok(_) => signed_out(&service),
        Err(e) => pages::service_error(e),
    }
}

/// A signed-out form shown again with why it was refused, its status, and when to try again if
/// it was rate-limited.
fn refused(
    service: &Service,
    error: &ServiceError,
    email: &str,
    next: Option<&str>,
    form: fn(&str, &FormState<'_>, bool) -> pages::Page,
) -> HttpResponse {
    let (status, message) = status_of(error);
    let open = service.console().sign_up_open();
    let mut response = session::with_form_token(service, |token| {
        form(token, &FormState { email, error: Some(&message), next }, open).status(status)
    });
    if let ServiceError::TooManyRequests { retry_after_secs, .. } = error {
        response.headers_mut().insert(header::RETRY_AFTER, (*retry_after_secs).into());
    }
    response
}

fn signed_out(service: &Service) -> HttpResponse {
    let mut response = session::see_other("/console/sign-in");
    let _ = response.add_cookie(&session::removal(service, SESSION_COOKIE));
    response
}

/// Sets the new session's cookie and sends the user to their keys. A session the browser brought
/// along is ended first: a fresh id at every sign-in, so a planted cookie never becomes a
/// signed-in session.
async fn signed_in_response(
    service: &Service,
    req: &HttpRequest,
    new_session: NewSession,
    next: Option<&str>,
) -> HttpResponse {
    if let Some(old) = session::session_token(req) {
        if let Err(e) = service.console().sign_out(&old).await {
            tracing::warn!(error = %e, "could not end the session replaced at sign-in");
        }
    }
    let mut response = session::see_other(next.unwrap_or("/console/keys"));
    let _ = response.add_cookie(&session::session_cookie(service, &new_session));
    let _ = response.add_cookie(&session::form_cookie_removal(service));
    response
}
