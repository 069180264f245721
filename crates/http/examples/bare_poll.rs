//! The benchmark's anchor for polling: a bare actix-web server answering `GET /v1/tasks/{id}` with
//! a task-shaped JSON body, built the same way as the service (same actix-web, same release
//! profile) but with no key, no database and no logging. `cargo xtask bench` runs it beside the
//! api-server; whatever the api-server does on a poll beyond this is the cost under measure.
//!
//! `bare_poll ADDR WORKERS` (for example `bare_poll 127.0.0.1:0 2`) prints `listening on ADDR`.

use actix_web::{web, App, HttpResponse, HttpServer};
use serde::Serialize;

/// The shape of a succeeded task as the service answers a poll.
#[derive(Serialize)]
struct Task {
    id: String,
    status: &'static str,
    model: &'static str,
    output: Vec<Output>,
    cost_usd: &'static str,
    price_usd: &'static str,
    error: Option<String>,
    created_at: &'static str,
    started_at: &'static str,
    finished_at: &'static str,
}

#[derive(Serialize)]
struct Output {
    url: String,
    content_type: &'static str,
}

async fn task(id: web::Path<String>) -> HttpResponse {
    let id = id.into_inner();
    let url = format!("http://127.0.0.1/v1/files/{id}/0.wav?expires=1764000000&sig=0123456789abcdef0123456789abcdef");
    HttpResponse::Ok().json(Task {
        id,
        status: "succeeded",
        model: "tts",
        output: vec![Output { url, content_type: "audio/wav" }],
        cost_usd: "0.000150",
        price_usd: "0.000150",
        error: None,
        created_at: "2026-11-26T07:00:00.000Z",
        started_at: "2026-11-26T07:00:00.002Z",
        finished_at: "2026-11-26T07:00:00.070Z",
    })
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".into());
    let workers = args.next().and_then(|w| w.parse().ok()).unwrap_or(2);
    let server =
        HttpServer::new(|| App::new().route("/v1/tasks/{id}", web::get().to(task))).workers(workers).bind(addr)?;
    for addr in server.addrs() {
        println!("listening on {addr}");
    }
    server.run().await
}
