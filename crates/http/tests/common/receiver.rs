//! A webhook receiver on loopback for the tests: it records every request and refuses the first
//! attempts of each message.

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request the receiver got.
#[derive(Clone, Debug)]
pub struct Received {
    pub id: String,
    pub timestamp: i64,
    pub signature: String,
    pub body: Vec<u8>,
    pub answered: u16,
}

impl Received {
    /// Checks the message's signature with `secret`, and that it was signed just now.
    pub fn verify(&self, secret: &webhooks::SigningSecret) {
        let expected = secret.sign(&self.id, self.timestamp, &self.body);
        assert!(self.signature.split(' ').any(|s| s == expected), "{self:?}");
        let now = storage::now_millis() / 1000;
        assert!((now - self.timestamp).abs() < 60, "sent now: {self:?}");
    }
}

/// A webhook receiver on loopback that answers 503 to the first `refusals` attempts of each
/// message (by `webhook-id`), then 200.
pub struct Receiver {
    pub url: String,
    received: Arc<Mutex<Vec<Received>>>,
    _server: actix_web::dev::ServerHandle,
}

impl Receiver {
    pub fn start(refusals: usize) -> Receiver {
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let log = received.clone();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hooks/media", listener.local_addr().unwrap());
        let server = HttpServer::new(move || {
            let log = log.clone();
            App::new().default_service(web::to(move |req: HttpRequest, body: web::Bytes| {
                let log = log.clone();
                async move {
                    let header = |name: &str| {
                        req.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
                    };
                    let mut log = log.lock().unwrap();
                    let id = header("webhook-id");
                    let earlier = log.iter().filter(|r| r.id == id).count();
                    let answered = if earlier < refusals { 503 } else { 200 };
                    log.push(Received {
                        id,
                        timestamp: header("webhook-timestamp").parse().unwrap_or(0),
                        signature: header("webhook-signature"),
                        body: body.to_vec(),
                        answered,
                    });
                    HttpResponse::build(actix_web::http::StatusCode::from_u16(answered).unwrap())
                        .body(if answered == 200 { "ok" } else { "busy, try later" })
                }
            }))
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        tokio::spawn(server);
        Receiver { url, received, _server: handle }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until a message whose body has `status` was taken (answered 200).
    pub async fn taken(&self, status: &str) -> Received {
        self.taken_where(&format!("a {status} message"), |body| body["status"] == status).await
    }

    /// Waits until a message whose JSON body satisfies `wanted` (`what` says which, for the
    /// failure) was taken (answered 200).
    pub async fn taken_where(&self, what: &str, wanted: impl Fn(&Value) -> bool) -> Received {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let taken = self.received().into_iter().find(|r| {
                r.answered == 200 && serde_json::from_slice::<Value>(&r.body).is_ok_and(|body| wanted(&body))
            });
            if let Some(taken) = taken {
                return taken;
            }
            assert!(tokio::time::Instant::now() < deadline, "{what} never taken: {:?}", self.received());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
