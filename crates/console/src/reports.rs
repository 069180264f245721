//! The usage and account pages of the signed-in account.

use crate::pages;
use crate::pages::account::account_page;
use crate::pages::usage::{usage_page, CHART_DAYS};
use crate::session;
use actix_web::{web, HttpRequest, HttpResponse};
use service::{Service, ServiceError};

/// Jobs listed on the usage page.
const RECENT_JOBS: i64 = 50;

/// `GET /console/usage`.
pub async fn usage(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    let user = match session::signed_in(&service, &req).await {
        Ok(user) => user,
        Err(to_sign_in) => return to_sign_in,
    };
    let loaded = async {
        Ok::<_, ServiceError>((
            service.console().daily_spend(&user.account_id, CHART_DAYS).await?,
            service.console().account_keys(&user.account_id).await?,
            service.console().recent_jobs(&user.account_id, RECENT_JOBS).await?,
        ))
    };
    match loaded.await {
        Ok((spend, keys, jobs)) => usage_page(&user, &spend, &keys, &jobs, &service.urls().generate()).respond(),
        Err(e) => pages::service_error(e),
    }
}

/// The cancel form of a job.
#[derive(serde::Deserialize)]
pub struct CancelForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /console/jobs/{id}/cancel`: cancels a queued or running job of the account, unbilled,
/// then shows the usage page again.
pub async fn cancel_job(
    service: web::Data<Service>,
    req: HttpRequest,
    job_id: web::Path<String>,
    form: web::Form<CancelForm>,
) -> HttpResponse {
    let user = match session::signed_in_form(&service, &req, &form.csrf).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    match service.console().cancel_account_job(&user.account_id, &job_id).await {
        Ok(()) => session::see_other("/console/usage"),
        Err(e) => pages::service_error(e),
    }
}

/// `GET /console/account`.
pub async fn account(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    let user = match session::signed_in(&service, &req).await {
        Ok(user) => user,
        Err(to_sign_in) => return to_sign_in,
    };
    match service.console().account_overview(&user.account_id).await {
        Ok(overview) => account_page(&user, &overview, &Default::default()).respond(),
        Err(e) => pages::service_error(e),
    }
}
