//! The usage and account pages of the signed-in account.

use crate::pages::account::account_page;
use crate::pages::chart::Series;
use crate::pages::usage::{usage_page, CHART_DAYS};
use crate::pages::{self};
use crate::session;
use actix_web::{web, HttpRequest, HttpResponse};
use service::Service;

/// Jobs listed on the usage page.
const RECENT_JOBS: i64 = 50;

/// `GET /console/usage`.
pub async fn usage(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    let user = match session::signed_in(&service, &req).await {
        Ok(user) => user,
        Err(to_sign_in) => return to_sign_in,
    };
    let loaded = async {
        Ok::<_, service::ServiceError>((
            service.daily_spend(&user.account_id, CHART_DAYS).await?,
            service.account_keys(&user.account_id).await?,
            service.recent_jobs(&user.account_id, RECENT_JOBS).await?,
        ))
    };
    let (spend, keys, jobs) = match loaded.await {
        Ok(loaded) => loaded,
        Err(e) => return pages::service_error(e),
    };
    let today = storage::now_millis().div_euclid(86_400_000);
    let days: Vec<i64> = (today - CHART_DAYS + 1..=today).collect();
    // One series per key that spent in the period, in the order of the key list.
    let series: Vec<Series> = keys
        .iter()
        .filter_map(|key| {
            let units: Vec<i64> = days
                .iter()
                .map(|day| spend.iter().filter(|s| s.key_id == key.id && s.day == *day).map(|s| s.units).sum())
                .collect();
            let name = key.label.clone().unwrap_or_else(|| key.prefix.clone().unwrap_or_else(|| key.id.clone()));
            units.iter().any(|u| *u > 0).then_some(Series { name, units })
        })
        .collect();
    usage_page(&user, &days, &series, &keys, &jobs, &service.config().public_base_url).respond()
}

/// `GET /console/account`.
pub async fn account(service: web::Data<Service>, req: HttpRequest) -> HttpResponse {
    let user = match session::signed_in(&service, &req).await {
        Ok(user) => user,
        Err(to_sign_in) => return to_sign_in,
    };
    match service.account_overview(&user.account_id).await {
        Ok(overview) => account_page(&user, &overview).respond(),
        Err(e) => pages::service_error(e),
    }
}
