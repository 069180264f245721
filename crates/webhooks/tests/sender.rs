//! One delivery attempt against receivers that misbehave on real sockets: one that never
//! answers, one that sends headers and stalls, one that answers with an endless body (2xx and
//! refusing), and names that resolve inside the network. None may hold the attempt past its time
//! limit or make it read more than a log excerpt.

use engines::fetch::Network;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use webhooks::{Message, Sender, SenderSettings, SigningSecret};

const LIMIT: Duration = Duration::from_millis(800);

/// A receiver on loopback that reads the request's head and then does `answer` with the socket.
async fn receiver<F, Fut>(answer: F) -> String
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut head = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut head).await;
                answer(socket).await;
            });
        }
    });
    url
}

/// Writes `head`, then the same chunk over and over until the peer goes away.
async fn endless(mut socket: tokio::net::TcpStream, head: &'static str) {
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let chunk = vec![b'x'; 64 * 1024];
    while socket.write_all(&chunk).await.is_ok() {}
}

fn sender(allow_private: bool) -> Sender {
    Sender::new(SenderSettings { timeout: LIMIT, allow_private }).unwrap()
}

async fn deliver(sender: &Sender, url: &str) -> (webhooks::Attempt, Duration) {
    let secret = SigningSecret::generate();
    let started = Instant::now();
    let message = Message { id: "msg_1", body: br#"{"id":"task_1","status":"succeeded"}"#, secrets: &[secret] };
    let attempt = sender.send(url, message).await;
    (attempt, started.elapsed())
}

/// Generous bound on an attempt's wall time: its limit and a little scheduling.
fn within_limit(elapsed: Duration) -> bool {
    elapsed < LIMIT + Duration::from_millis(700)
}

#[tokio::test]
async fn a_receiver_that_never_answers_is_given_up_at_the_limit() {
    let url = receiver(|socket| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(socket);
    })
    .await;
    let (attempt, elapsed) = deliver(&sender(true), &url).await;
    assert!(!attempt.delivered());
    assert_eq!(attempt.error.as_deref(), Some("the receiver did not answer in time"));
    assert!(within_limit(elapsed), "{elapsed:?}");
}

#[tokio::test]
async fn a_refusal_whose_body_stalls_is_cut_at_the_limit() {
    let url = receiver(|mut socket| async move {
        let _ = socket.write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 100000\r\n\r\nbusy").await;
        tokio::time::sleep(Duration::from_secs(60)).await;
    })
    .await;
    let (attempt, elapsed) = deliver(&sender(true), &url).await;
    assert_eq!(attempt.status_code, Some(503));
    assert_eq!(attempt.error.as_deref(), Some("the receiver answered 503 Service Unavailable: busy"));
    assert!(within_limit(elapsed), "{elapsed:?}");
}

#[tokio::test]
async fn an_endless_answer_is_not_read() {
    // Taken: a 2xx needs no body, so none is read.
    let url = receiver(|socket| endless(socket, "HTTP/1.1 200 OK\r\ncontent-length: 100000000000\r\n\r\n")).await;
    let (attempt, elapsed) = deliver(&sender(true), &url).await;
    assert!(attempt.delivered(), "{attempt:?}");
    assert!(within_limit(elapsed), "{elapsed:?}");
    // Refused: the log keeps an excerpt of 256 bytes and reads no further.
    let url =
        receiver(|socket| endless(socket, "HTTP/1.1 500 Internal Server Error\r\ntransfer-encoding: chunked\r\n\r\n"))
            .await;
    let (attempt, elapsed) = deliver(&sender(true), &url).await;
    assert_eq!(attempt.status_code, Some(500));
    let error = attempt.error.unwrap();
    assert!(error.len() < 256 + 64, "{} bytes kept", error.len());
    assert!(within_limit(elapsed), "{elapsed:?}");
}

#[tokio::test]
async fn private_receivers_are_refused_unless_allowed() {
    let url = receiver(|mut socket| async move {
        let _ = socket.write_all(b"HTTP/1.1 204 No Content\r\n\r\n").await;
    })
    .await;
    // An address literal.
    let (refused, _) = deliver(&sender(false), &url).await;
    assert_eq!(refused.error.as_deref(), Some("the receiver's address is private, loopback or reserved"));
    assert_eq!(refused.status_code, None);
    let (allowed, _) = deliver(&sender(true), &url).await;
    assert!(allowed.delivered(), "{allowed:?}");
    // A public-looking name that resolves to loopback: refused at submit and when sending.
    let port = url.rsplit(':').next().unwrap().trim_end_matches("/hooks").to_string();
    let lookup: engines::fetch::Lookup =
        Arc::new(|_host: String| Box::pin(async { Ok(vec!["127.0.0.1".parse::<IpAddr>().unwrap()]) }));
    let network = Network { lookup, ..Network::default() };
    let sender = Sender::with_network(SenderSettings { timeout: LIMIT, allow_private: false }, network).unwrap();
    let named = format!("http://hooks.example.com:{port}/hooks");
    let refusal = sender.check_target(&named).await.unwrap_err();
    assert!(refusal.contains("no public address") || refusal.contains("private"), "{refusal}");
    let (attempt, _) = deliver(&sender, &named).await;
    assert_eq!(attempt.error.as_deref(), Some("the receiver's name resolves to no public address"));
}
