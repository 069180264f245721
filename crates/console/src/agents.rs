//! The authorization endpoint of the connector's OAuth server, as a console page (the person
//! signs in, sees what the agent asks for, sets its spend limit, allows or denies), and the
//! connected agents of the signed-in account.

use crate::pages::agents::{agents_page, consent_page};
use crate::pages::{self, keys::parse_cap};
use crate::session;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use service::oauth::{AuthorizationParams, AuthorizeRefusal};
use service::Service;

/// `GET /console/authorize`: the consent page, after signing in.
pub async fn authorize_page(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    let params: AuthorizationParams = match authorization_params(req.query_string()) {
        Some(params) => params,
        None => return pages::error_page(StatusCode::BAD_REQUEST, "The authorization request could not be read."),
    };
    let request = match service.authorization().check_authorization(params).await {
        Ok(request) => request,
        Err(refusal) => return refusal_answer(refusal),
    };
    match session::signed_in(&service, &req).await {
        Ok(user) => consent_page(&user, &request, None).respond(),
        Err(_) => {
            let next = format!("/console/authorize?{}", req.query_string());
            let query: String =
                url::form_urlencoded::Serializer::new(String::new()).append_pair("next", &next).finish();
            session::see_other(&format!("/console/sign-in?{query}"))
        }
    }
}

/// The consent form: the request again, the limit, the decision and the session's token.
#[derive(Deserialize)]
pub struct ConsentForm {
    #[serde(default)]
    response_type: String,
    #[serde(default)]
    client_id: String,
    #[serde(default)]
    redirect_uri: String,
    #[serde(default)]
    code_challenge: String,
    #[serde(default)]
    code_challenge_method: String,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    resource: Option<String>,
    #[serde(default)]
    spend_cap: String,
    #[serde(default)]
    decision: String,
    #[serde(default)]
    csrf: String,
}

/// `POST /console/authorize`: the person's answer; the client is sent back with a code or with
/// `access_denied`.
pub async fn authorize(service: web::Data<Service>, req: HttpRequest, form: web::Form<ConsentForm>) -> HttpResponse {
    let form = form.into_inner();
    let params = AuthorizationParams {
        response_type: form.response_type,
        client_id: form.client_id,
        redirect_uri: form.redirect_uri,
        code_challenge: form.code_challenge,
        code_challenge_method: form.code_challenge_method,
        state: form.state,
        scope: form.scope,
        resource: form.resource,
    };
    let (spend_cap, decision, csrf) = (form.spend_cap, form.decision, form.csrf);
    let user = match session::signed_in_form(&service, &req, &csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let request = match service.authorization().check_authorization(params).await {
        Ok(request) => request,
        Err(refusal) => return refusal_answer(refusal),
    };
    if decision != "allow" {
        return session::see_other(&service.authorization().deny(&request));
    }
    let cap = match parse_cap(&spend_cap) {
        Ok(Some(cap)) => cap,
        Ok(None) => {
            return consent_page(&user, &request, Some("Set a spend limit for this connection."))
                .status(StatusCode::BAD_REQUEST)
                .respond()
        }
        Err(message) => return consent_page(&user, &request, Some(&message)).status(StatusCode::BAD_REQUEST).respond(),
    };
    match service.authorization().allow(&user.account_id, &request, cap).await {
        Ok(redirect) => session::see_other(&redirect),
        Err(e) => pages::service_error(e),
    }
}

fn refusal_answer(refusal: AuthorizeRefusal) -> HttpResponse {
    match refusal {
        AuthorizeRefusal::Show(message) => pages::error_page(StatusCode::BAD_REQUEST, &message),
        AuthorizeRefusal::Redirect(url) => session::see_other(&url),
        AuthorizeRefusal::Service(e) => pages::service_error(e),
    }
}

fn authorization_params(query: &str) -> Option<AuthorizationParams> {
    web::Query::<AuthorizationParams>::from_query(query).ok().map(web::Query::into_inner)
}

/// `GET /console/agents`.
pub async fn list(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    let user = match session::signed_in(&service, &req).await {
        Ok(user) => user,
        Err(to_sign_in) => return to_sign_in,
    };
    match service.console().connected_agents(&user.account_id).await {
        Ok(agents) => agents_page(&user, &agents).respond(),
        Err(e) => pages::service_error(e),
    }
}

/// `POST /console/agents/{id}/disconnect`: its tokens stop working at once, its unfinished jobs
/// are cancelled unbilled.
pub async fn disconnect(
    service: web::Data<Service>,
    req: HttpRequest,
    key_id: web::Path<String>,
    form: web::Form<crate::auth::TokenOnly>,
) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    match service.console().disconnect_agent(&user.account_id, &key_id).await {
        Ok(()) => session::see_other("/console/agents"),
        Err(e) => pages::service_error(e),
    }
}
