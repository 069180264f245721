//! The developer console over real HTTP, as a browser without JavaScript uses it: forms, cookies
//! and redirects. Security properties first: CSRF tokens, fresh session ids, accounts isolated from
//! each other, rate-limited sign-in, a secret shown only in the answer that creates it.

mod common;

use common::browser::{between, csrf_of, signed_up, unique_email, Browser, PASSWORD};
use common::{Options, TestServer};
use reqwest::StatusCode;
use service::AppConfig;
use storage::Backend;

#[tokio::test]
async fn sign_up_create_key_call_the_api_and_see_it_in_usage() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let server = TestServer::start(backend).await;
        let (mut browser, email) = signed_up(&server).await;
        let (key_id, secret, created) = browser.create_key("ci", "2.5").await;
        assert!(created.body.contains(&format!("{}/api/mcp?key={secret}", server.base)), "connector URL shown");
        assert_eq!(created.headers["cache-control"], "no-store");

        // The secret is never in a page again.
        for path in ["/console/keys", "/console/usage", "/console/account", &format!("/console/keys/{key_id}/revoke")] {
            let page = browser.get(path).await;
            assert_eq!(page.status, StatusCode::OK, "{path}");
            assert!(!page.body.contains(&secret[4..]), "{path} shows the secret");
        }
        let keys = browser.get("/console/keys").await.body;
        assert!(keys.contains(&secret[..12]) && keys.contains("2.5000") && keys.contains(">active<"), "{keys}");

        // The key works; the job shows in usage with its cost; the account has the allowance.
        let queued = server.submit(&secret, serde_json::json!({"model": "alpha-schnell", "prompt": "a porch"})).await;
        let done = server.wait(&secret, queued["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "succeeded", "{done}");
        let usage = browser.get("/console/usage").await.body;
        assert!(usage.contains(&format!("data-task-id=\"{}\"", done["id"].as_str().unwrap())), "{usage}");
        assert!(usage.contains(&format!("${}", done["cost_usd"].as_str().unwrap())), "{usage}");
        // The day's spend is drawn as a bar (the per-day query runs on both backends).
        let chart = between(&usage, "<svg id=\"spend-chart\"", "</svg>");
        assert_eq!(chart.matches("<rect").count(), 1, "{chart}");
        assert!(chart.contains(&format!("ci: ${}", done["cost_usd"].as_str().unwrap())), "{chart}");
        let account = browser.get("/console/account").await.body;
        assert!(account.contains(&email) && account.contains("of $5"), "{account}");
        let keys = browser.get("/console/keys").await.body;
        assert!(!keys.contains(">never<"), "last use recorded: {keys}");
    }
}

#[tokio::test]
async fn forms_without_their_csrf_token_are_refused() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (mut browser, _) = signed_up(&server).await;
    for token in ["", "0000", &"a".repeat(64)] {
        let answer = browser.post("/console/keys", &[("label", "forged"), ("csrf", token)]).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.body);
        assert!(answer.headers["content-type"].to_str().unwrap().starts_with("text/html"));
    }
    let (key_id, _, _) = browser.create_key("real", "").await;
    for action in ["revoke", "rotate", "cap"] {
        let answer = browser.post(&format!("/console/keys/{key_id}/{action}"), &[("spend_cap", "1")]).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{action}");
    }
    assert_eq!(browser.post("/console/sign-out", &[]).await.status, StatusCode::FORBIDDEN);
    assert_eq!(browser.post("/console/sign-out-everywhere", &[("csrf", "x")]).await.status, StatusCode::FORBIDDEN);
    let keys = browser.get("/console/keys").await.body;
    assert!(!keys.contains("forged") && keys.contains(">active<"), "nothing forged took effect: {keys}");

    // Signed-out forms need the token of their own cookie (login CSRF).
    let mut stranger = Browser::new(&server);
    let answer =
        stranger.post("/console/sign-up", &[("email", &unique_email()), ("password", PASSWORD), ("csrf", "x")]).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    let token = stranger.form_token("/console/sign-in").await;
    stranger.cookies.clear();
    let answer =
        stranger.post("/console/sign-in", &[("email", "a@b.co"), ("password", PASSWORD), ("csrf", &token)]).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "a token without its cookie");

    // A cookie planted with a value of the planter's choosing (by a sibling host over plain HTTP)
    // does not make its token valid: the service signed none of these, or its signature expired.
    let random = "ab".repeat(32);
    let expired = {
        let (_, expires_and_signature) = token.split_once('.').unwrap();
        let (expires, signature) = expires_and_signature.split_once('.').unwrap();
        let earlier: i64 = expires.parse::<i64>().unwrap() - 3 * 3_600;
        format!("{}.{earlier}.{signature}", &token[..64])
    };
    for planted in [random.clone(), format!("{random}.9999999999.{}", "00".repeat(32)), expired] {
        let mut planted_browser = Browser::new(&server);
        planted_browser.cookies.insert("mg_form".into(), planted.clone());
        let answer = planted_browser
            .post("/console/sign-in", &[("email", "a@b.co"), ("password", PASSWORD), ("csrf", &planted)])
            .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{planted}");
    }
    // The service's own token, with its cookie, passes (a wrong password then is a 401).
    let mut visitor = Browser::new(&server);
    let token = visitor.form_token("/console/sign-in").await;
    assert_eq!(token.split('.').count(), 3, "{token}");
    let answer =
        visitor.post("/console/sign-in", &[("email", "a@b.co"), ("password", PASSWORD), ("csrf", &token)]).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn sign_in_issues_a_fresh_session_and_sign_out_ends_it() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (mut first, email) = signed_up(&server).await;
    let first_session = first.cookies[console::SESSION_COOKIE].clone();

    // A planted session id never becomes a signed-in session.
    let mut victim = Browser::new(&server);
    victim.cookies.insert(console::SESSION_COOKIE.into(), "planted".into());
    let answer = victim.sign_in(&email, PASSWORD).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let cookie = answer.set_cookies.iter().find(|c| c.starts_with(console::SESSION_COOKIE)).expect("session cookie");
    for flag in ["HttpOnly", "SameSite=Lax", "Path=/console"] {
        assert!(cookie.contains(flag), "{cookie} lacks {flag}");
    }
    assert!(!cookie.contains("Secure"), "plain-HTTP deployment: {cookie}");
    let victim_session = victim.cookies[console::SESSION_COOKIE].clone();
    assert!(victim_session != "planted" && victim_session != first_session);
    let mut planted = Browser::new(&server);
    planted.cookies.insert(console::SESSION_COOKIE.into(), "planted".into());
    assert_eq!(planted.get("/console/keys").await.location.as_deref(), Some("/console/sign-in"));

    // Signing in again (the sign-in page itself sends a signed-in browser to its keys) replaces
    // the browser's session; the old id is dead.
    assert_eq!(victim.get("/console/sign-in").await.location.as_deref(), Some("/console/keys"));
    let token = victim.form_token("/console/sign-up").await;
    let answer = victim.post("/console/sign-in", &[("email", &email), ("password", PASSWORD), ("csrf", &token)]).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    let mut replayed = Browser::new(&server);
    replayed.cookies.insert(console::SESSION_COOKIE.into(), victim_session);
    assert_eq!(replayed.get("/console/keys").await.status, StatusCode::SEE_OTHER);

    // Sign out everywhere ends the other browser's session too.
    let token = victim.form_token("/console/account").await;
    let answer = victim.post("/console/sign-out-everywhere", &[("csrf", &token)]).await;
    assert_eq!(answer.location.as_deref(), Some("/console/sign-in"));
    assert_eq!(first.get("/console/keys").await.location.as_deref(), Some("/console/sign-in"));
    assert_eq!(victim.get("/console/keys").await.location.as_deref(), Some("/console/sign-in"));
}

#[tokio::test]
async fn another_accounts_keys_and_tasks_are_not_found() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (mut owner, _) = signed_up(&server).await;
    let (key_id, secret, _) = owner.create_key("owner's", "").await;
    let queued = server.submit(&secret, serde_json::json!({"model": "alpha-schnell", "prompt": "a barn"})).await;
    server.wait(&secret, queued["id"].as_str().unwrap()).await;

    let (mut intruder, _) = signed_up(&server).await;
    let token = intruder.form_token("/console/keys").await;
    for path in [format!("/console/keys/{key_id}/revoke"), format!("/console/keys/{key_id}/rotate")] {
        assert_eq!(intruder.get(&path).await.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(intruder.post(&path, &[("csrf", &token)]).await.status, StatusCode::NOT_FOUND, "{path}");
    }
    let cap = intruder.post(&format!("/console/keys/{key_id}/cap"), &[("spend_cap", "0"), ("csrf", &token)]).await;
    assert_eq!(cap.status, StatusCode::NOT_FOUND);
    for path in ["/console/keys", "/console/usage"] {
        let page = intruder.get(path).await.body;
        assert!(!page.contains(&key_id) && !page.contains(queued["id"].as_str().unwrap()), "{path} leaks");
    }
    let (status, _) = server.get(&secret, "/v1/usage").await;
    assert_eq!(status, StatusCode::OK, "the owner's key still works");
    assert!(owner.get("/console/keys").await.body.contains(">active<"));
}

#[tokio::test]
async fn failed_sign_ins_are_limited_per_account_and_per_address() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (_, email) = signed_up(&server).await;
    let mut guesser = Browser::new(&server);
    for _ in 0..service::console::SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS {
        let answer = guesser.sign_in(&email, "wrong password!").await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.body);
        assert!(answer.body.contains("wrong email or password"));
    }
    // Past the limit even the right password is refused, with a time to wait.
    let answer = guesser.sign_in(&email, PASSWORD).await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS, "{}", answer.body);
    let wait: u64 = answer.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(wait > 0 && wait <= 15 * 60, "{wait}");
    assert!(!answer.set_cookies.iter().any(|c| c.starts_with(console::SESSION_COOKIE)));

    // Unknown emails from one address count against that address.
    let budget =
        service::console::SIGN_IN_FAILURES_PER_ADDRESS - service::console::SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS;
    for _ in 0..budget {
        assert_eq!(guesser.sign_in(&unique_email(), PASSWORD).await.status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(guesser.sign_in(&unique_email(), PASSWORD).await.status, StatusCode::TOO_MANY_REQUESTS);
}

/// Many guesses sent at once are counted before any password is checked: together they get no more
/// tries than one after another would.
#[tokio::test]
async fn parallel_guesses_never_pass_the_limit() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let server = TestServer::start_with(backend, Options { worker: false, ..Options::default() }).await;
        let (_, email) = signed_up(&server).await;
        let mut guessers = Vec::new();
        for _ in 0..30 {
            let mut guesser = Browser::new(&server);
            let token = guesser.form_token("/console/sign-in").await;
            guessers.push((guesser, token));
        }
        let answers = futures::future::join_all(guessers.iter_mut().map(|(guesser, token)| {
            let form = [("email", email.as_str()), ("password", "wrong password!"), ("csrf", token.as_str())];
            async move { guesser.post("/console/sign-in", &form).await.status }
        }))
        .await;
        let tried = answers.iter().filter(|s| **s == StatusCode::UNAUTHORIZED).count();
        let refused = answers.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count();
        let limit = usize::try_from(service::console::SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS).unwrap();
        assert_eq!((tried, refused), (limit, 30 - limit), "{backend:?}: {answers:?}");
        let owner = Browser::new(&server).sign_in(&email, PASSWORD).await;
        assert_eq!(owner.status, StatusCode::TOO_MANY_REQUESTS, "{backend:?}: the right password after the limit");
    }
}

/// Without trusted proxies a client cannot choose the address it is counted under.
#[tokio::test]
async fn a_forged_forwarded_header_does_not_reset_the_limits() {
    let options = Options { worker: false, console_sign_ups_per_address: 2, ..Options::default() };
    let server = TestServer::start_with(Backend::Sqlite, options).await;
    for n in 0..2 {
        let mut browser = Browser::new(&server);
        browser.forwarded_for = Some(format!("198.51.100.{n}"));
        assert_eq!(browser.sign_up(&unique_email()).await.status, StatusCode::OK);
    }
    let mut farmer = Browser::new(&server);
    farmer.forwarded_for = Some("203.0.113.77".into());
    let refused = farmer.sign_up(&unique_email()).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{}", refused.body);
}

/// Behind a trusted proxy each client is counted under the address the proxy saw: an attacker
/// locks only themself out, and the owner still signs in from their own address.
#[tokio::test]
async fn behind_a_trusted_proxy_each_client_has_its_own_limits() {
    let options = Options {
        worker: false,
        console_sign_ups_per_address: 1,
        adjust: Some(Box::new(|config: &mut AppConfig| {
            config.trusted_proxies = service::client_address::TrustedProxies::parse("127.0.0.1").unwrap();
        })),
        ..Options::default()
    };
    let server = TestServer::start_with(Backend::Sqlite, options).await;
    let mut owner = Browser::new(&server);
    owner.forwarded_for = Some("198.51.100.1".into());
    let email = unique_email();
    assert_eq!(owner.sign_up(&email).await.status, StatusCode::OK);
    assert_eq!(owner.confirm(&server, &email).await.status, StatusCode::SEE_OTHER);
    let mut again = Browser::new(&server);
    again.forwarded_for = Some("198.51.100.1".into());
    assert_eq!(again.sign_up(&unique_email()).await.status, StatusCode::TOO_MANY_REQUESTS);
    // The client cannot prepend its way out: the proxy's appended address is the one counted.
    again.forwarded_for = Some("203.0.113.5, 198.51.100.1".into());
    assert_eq!(again.sign_up(&unique_email()).await.status, StatusCode::TOO_MANY_REQUESTS);

    let mut attacker = Browser::new(&server);
    attacker.forwarded_for = Some("203.0.113.9".into());
    for _ in 0..service::console::SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS {
        assert_eq!(attacker.sign_in(&email, "wrong password!").await.status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(attacker.sign_in(&email, PASSWORD).await.status, StatusCode::TOO_MANY_REQUESTS);
    let mut owner_again = Browser::new(&server);
    owner_again.forwarded_for = Some("198.51.100.1".into());
    assert_eq!(owner_again.sign_in(&email, PASSWORD).await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn one_address_creates_a_bounded_number_of_accounts_a_day() {
    let options = Options { worker: false, console_sign_ups_per_address: 3, ..Options::default() };
    let server = TestServer::start_with(Backend::Sqlite, options).await;
    for _ in 0..3 {
        signed_up(&server).await;
    }
    let mut farmer = Browser::new(&server);
    let refused = farmer.sign_up(&unique_email()).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{}", refused.body);
    assert!(refused.body.contains("too many new accounts"), "{}", refused.body);
    assert!(refused.headers.contains_key("retry-after"));
}

#[tokio::test]
async fn rotate_revoke_and_cap_act_on_the_key() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (mut browser, _) = signed_up(&server).await;
    let (key_id, old_secret, _) = browser.create_key("rotating", "3").await;
    let token = browser.form_token("/console/keys").await;

    let bad = browser.post(&format!("/console/keys/{key_id}/cap"), &[("spend_cap", "-1"), ("csrf", &token)]).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("role=\"alert\"") && bad.body.contains("spend cap is an amount"), "{}", bad.body);
    let capped = browser.post(&format!("/console/keys/{key_id}/cap"), &[("spend_cap", "$0.5"), ("csrf", &token)]).await;
    assert_eq!(capped.status, StatusCode::SEE_OTHER);
    let (_, usage) = server.get(&old_secret, "/v1/usage").await;
    assert_eq!(usage["spend_cap_usd"], "0.5000", "{usage}");

    let rotated = browser.post(&format!("/console/keys/{key_id}/rotate"), &[("csrf", &token)]).await;
    assert_eq!(rotated.status, StatusCode::OK);
    let new_secret = between(&rotated.body, "id=\"secret\">", "</code>");
    assert_ne!(new_secret, old_secret);
    assert_eq!(server.get(&old_secret, "/v1/usage").await.0, StatusCode::UNAUTHORIZED);
    let (status, usage) = server.get(&new_secret, "/v1/usage").await;
    assert_eq!((status, usage["key_id"].as_str()), (StatusCode::OK, Some(key_id.as_str())), "same key, cap kept");
    assert_eq!(usage["spend_cap_usd"], "0.5000");

    let revoked = browser.post(&format!("/console/keys/{key_id}/revoke"), &[("csrf", &token)]).await;
    assert_eq!(revoked.location.as_deref(), Some("/console/keys"));
    assert_eq!(server.get(&new_secret, "/v1/usage").await.0, StatusCode::UNAUTHORIZED);
    assert!(browser.get("/console/keys").await.body.contains(">revoked<"));
    assert_eq!(browser.get(&format!("/console/keys/{key_id}/rotate")).await.status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn owners_lower_a_keys_request_rates_but_never_raise_them() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (mut browser, _) = signed_up(&server).await;
    let (key_id, secret, _) = browser.create_key("slow client", "").await;
    let token = browser.form_token("/console/keys").await;
    let page = browser.get("/console/keys").await.body;
    // The service's rates are the fields' placeholders.
    assert!(page.contains("placeholder=\"600\"") && page.contains("placeholder=\"3000\""), "{page}");

    let path = format!("/console/keys/{key_id}/rates");
    for (submits, reads, says) in
        [("601", "", "between 1 and"), ("0", "", "between 1 and"), ("", "fast", "whole number")]
    {
        let refused = browser
            .post(&path, &[("submits_per_minute", submits), ("reads_per_minute", reads), ("csrf", &token)])
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{submits} {reads}");
        assert!(refused.body.contains(says), "{}", refused.body);
    }
    let lowered = browser.post(&path, &[("submits_per_minute", ""), ("reads_per_minute", "6"), ("csrf", &token)]).await;
    assert_eq!(lowered.status, StatusCode::SEE_OTHER);
    assert!(browser.get("/console/keys").await.body.contains("value=\"6\""));
    // Six a minute in bursts of one: the second read at once is a 429.
    assert_eq!(server.get(&secret, "/v1/usage").await.0, StatusCode::OK);
    assert_eq!(server.get(&secret, "/v1/usage").await.0, StatusCode::TOO_MANY_REQUESTS);
    // Another account cannot touch the key.
    let (mut intruder, _) = signed_up(&server).await;
    let intruder_token = intruder.form_token("/console/keys").await;
    let foreign = intruder.post(&path, &[("reads_per_minute", "1"), ("csrf", &intruder_token)]).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn closed_sign_up_uses_operator_invites() {
    let options = Options { console_sign_up: false, worker: false, ..Options::default() };
    let server = TestServer::start_with(Backend::Sqlite, options).await;
    let mut visitor = Browser::new(&server);
    let page = visitor.get("/console/sign-up").await;
    assert!(page.body.contains("Sign-up is closed"), "{}", page.body);
    let token = visitor.form_token("/console/sign-in").await;
    let refused =
        visitor.post("/console/sign-up", &[("email", &unique_email()), ("password", PASSWORD), ("csrf", &token)]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);

    server.service.operator().create_account("acme", true).await.unwrap();
    let operator_key = server.service.operator().create_key("acme", None, Some("from the CLI")).await.unwrap();
    let link = server.service.console().invite("acme", "Dev@Acme.example").await.unwrap();
    let path = link.strip_prefix(&server.base).expect("link on the public URL").to_string();
    let token = visitor.form_token(&path).await;
    let short = visitor.post(&path, &[("password", "short"), ("csrf", &token), ("email", "dev@acme.example")]).await;
    assert_eq!(short.status, StatusCode::BAD_REQUEST);
    let token = csrf_of(&short.body);
    let accepted = visitor.post(&path, &[("password", PASSWORD), ("csrf", &token), ("email", "x")]).await;
    assert_eq!(accepted.location.as_deref(), Some("/console/keys"), "{}", accepted.body);
    let keys = visitor.get("/console/keys").await.body;
    assert!(keys.contains(&operator_key.key.id) && keys.contains("from the CLI"), "{keys}");
    assert_eq!(Browser::new(&server).get(&path).await.status, StatusCode::NOT_FOUND, "used once");
    let mut again = Browser::new(&server);
    assert_eq!(again.sign_in("dev@acme.example", PASSWORD).await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn pages_are_html_with_security_headers_and_api_errors_stay_json() {
    let options = Options { public_base_url: Some("https://api.example.com"), worker: false, ..Options::default() };
    let server = TestServer::start_with(Backend::Sqlite, options).await;
    let mut browser = Browser::new(&server);
    let page = browser.get("/console/sign-in").await;
    for (name, expected) in [
        ("cache-control", "no-store"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("x-content-type-options", "nosniff"),
    ] {
        assert_eq!(page.headers[name], expected, "{name}");
    }
    assert!(page.headers["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    let form_cookie = page.set_cookies.iter().find(|c| c.starts_with(console::HOST_FORM_COOKIE)).expect("form cookie");
    assert!(form_cookie.contains("Secure") && form_cookie.split("; ").any(|a| a == "Path=/"), "{form_cookie}");
    let email = unique_email();
    browser.sign_up(&email).await;
    let answer = browser.confirm(&server, &email).await;
    let session = answer.set_cookies.iter().find(|c| c.starts_with(console::SESSION_COOKIE)).expect("cookie");
    assert!(session.contains("Secure"), "HTTPS deployment: {session}");

    let missing = browser.get("/console/nowhere").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(missing.headers["content-type"].to_str().unwrap().starts_with("text/html"));
    let api = browser.get("/v2/nowhere").await;
    assert_eq!(api.status, StatusCode::NOT_FOUND);
    assert!(serde_json::from_str::<serde_json::Value>(&api.body).unwrap()["error"].is_string());
    let oversized = browser.post("/console/sign-in", &[("email", &"a".repeat(20_000))]).await;
    assert_eq!(oversized.status, StatusCode::BAD_REQUEST);
    let css = browser.get("/console/assets/console.css").await;
    assert!(css.headers["content-type"].to_str().unwrap().starts_with("text/css"));
}

/// Sign-up answers the same for a new address, a taken one and an invited one; only the mailbox
/// learns which. The free allowance waits for the address to be confirmed, and is given once per
/// identity and a bounded number of times per address range.
#[tokio::test]
async fn sign_up_reveals_nothing_and_the_allowance_waits_for_the_mailbox() {
    let options = Options {
        worker: false,
        adjust: Some(Box::new(|config: &mut AppConfig| config.allowances_per_address_range = 2)),
        ..Options::default()
    };
    let server = TestServer::start_with(Backend::Sqlite, options).await;
    let email = format!("{}@gmail.com", storage::new_id("jane.doe").replace('_', "."));
    let mut owner = Browser::new(&server);
    let first = owner.sign_up(&email).await;
    assert_eq!(first.status, StatusCode::OK);
    assert!(first.set_cookies.iter().all(|c| !c.starts_with(console::SESSION_COOKIE)), "signed in unconfirmed");
    let refused = Browser::new(&server).sign_in(&email, PASSWORD).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(refused.body.contains("confirm your email address first"), "{}", refused.body);
    assert!(owner.confirm(&server, &email).await.location.as_deref() == Some("/console/keys"));
    assert!(owner.get("/console/account").await.body.contains("$5.0000 of $5.0000"));
    assert_eq!(owner.confirm(&server, &email).await.status, StatusCode::NOT_FOUND, "a link works once");

    // The same address again: the same page, and a notice to its owner instead of a new account.
    let again = Browser::new(&server).sign_up(&email).await;
    assert_eq!((again.status, strip_tokens(&again.body)), (first.status, strip_tokens(&first.body)));
    assert!(server.mail_to(&email).last().unwrap().contains("already has one"), "the owner is told");

    // The same Gmail box under another spelling gets an account but no second allowance.
    let (local, _) = email.split_once('@').unwrap();
    let alias = format!("{}+free@googlemail.com", local.replace('.', ""));
    let mut farmer = Browser::new(&server);
    farmer.sign_up(&alias).await;
    farmer.confirm(&server, &alias).await;
    assert!(farmer.get("/console/account").await.body.contains("$0.0000 of $0.0000"), "a second allowance");

    // One address range earns two allowances; the third account from it gets none.
    let second = signed_up(&server).await.0;
    let mut third = signed_up(&server).await.0;
    let _ = second;
    assert!(third.get("/console/account").await.body.contains("$0.0000 of $0.0000"), "the range's third allowance");
}

/// The page with its per-request tokens blanked, to compare two answers.
fn strip_tokens(page: &str) -> String {
    page.split("value=\"").map(|part| part.split_once('"').map_or(part, |(_, rest)| rest)).collect()
}

#[tokio::test]
async fn a_forgotten_password_is_reset_by_mail_and_a_changed_one_ends_other_sessions() {
    let server = TestServer::start(Backend::Sqlite).await;
    let (mut owner, email) = signed_up(&server).await;
    let mut visitor = Browser::new(&server);
    let token = visitor.form_token("/console/reset").await;
    let unknown = visitor.post("/console/reset", &[("email", &unique_email()), ("csrf", &token)]).await;
    let known = visitor.post("/console/reset", &[("email", &email), ("csrf", &token)]).await;
    assert_eq!((unknown.status, known.status), (StatusCode::OK, StatusCode::OK));
    assert!(known.body.contains("If an account uses this address"), "{}", known.body);

    let link = server.mailed_link(&email, "reset");
    let token = visitor.form_token(&link).await;
    let short = visitor.post(&link, &[("password", "short"), ("csrf", &token)]).await;
    assert_eq!(short.status, StatusCode::BAD_REQUEST, "{}", short.body);
    let token = csrf_of(&short.body);
    let new_password = "a brand new passphrase";
    let reset = visitor.post(&link, &[("password", new_password), ("csrf", &token)]).await;
    assert_eq!(reset.location.as_deref(), Some("/console/keys"), "{}", reset.body);
    assert_eq!(owner.get("/console/keys").await.location.as_deref(), Some("/console/sign-in"), "old sessions end");
    assert_eq!(Browser::new(&server).sign_in(&email, PASSWORD).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(Browser::new(&server).sign_in(&email, new_password).await.status, StatusCode::SEE_OTHER);
    let token = visitor.form_token(&link).await;
    assert_eq!(
        visitor.post(&link, &[("password", "another passphrase!"), ("csrf", &token)]).await.status,
        StatusCode::NOT_FOUND
    );

    // A change needs the current password and ends the other browsers' sessions.
    let mut elsewhere = Browser::new(&server);
    assert_eq!(elsewhere.sign_in(&email, new_password).await.status, StatusCode::SEE_OTHER);
    let token = visitor.form_token("/console/account").await;
    let wrong = visitor
        .post("/console/account/password", &[("current", "not it at all"), ("password", PASSWORD), ("csrf", &token)])
        .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert!(wrong.body.contains("the current password is wrong"), "{}", wrong.body);
    let changed = visitor
        .post("/console/account/password", &[("current", new_password), ("password", PASSWORD), ("csrf", &token)])
        .await;
    assert_eq!(changed.location.as_deref(), Some("/console/account"), "{}", changed.body);
    assert_eq!(visitor.get("/console/keys").await.status, StatusCode::OK, "this browser stays signed in");
    assert_eq!(elsewhere.get("/console/keys").await.location.as_deref(), Some("/console/sign-in"));
    assert_eq!(Browser::new(&server).sign_in(&email, PASSWORD).await.status, StatusCode::SEE_OTHER);
}

/// An invite belongs to its address: open sign-up cannot take the address first.
#[tokio::test]
async fn an_invited_address_cannot_be_taken_by_sign_up() {
    let server = TestServer::start_with(Backend::Sqlite, Options { worker: false, ..Options::default() }).await;
    server.service.operator().create_account("acme", true).await.unwrap();
    let email = unique_email();
    let link = server.service.console().invite("acme", &email).await.unwrap();
    let squatter = Browser::new(&server).sign_up(&email).await;
    assert_eq!(squatter.status, StatusCode::OK);
    assert!(server.mail_to(&email).iter().all(|m| !m.contains("/console/verify/")), "a link to the squatter");
    let path = link.strip_prefix(&server.base).unwrap().to_string();
    let mut invited = Browser::new(&server);
    let token = invited.form_token(&path).await;
    let accepted = invited.post(&path, &[("password", PASSWORD), ("csrf", &token), ("email", &email)]).await;
    assert_eq!(accepted.location.as_deref(), Some("/console/keys"), "{}", accepted.body);
}

/// Deleting an account revokes its keys, cancels their unfinished jobs unbilled, and removes the
/// login; the ledger stays and balances.
#[tokio::test]
async fn deleting_an_account_stops_everything_it_had_running_or_queued() {
    let server = TestServer::start_with(Backend::Sqlite, Options { worker: false, ..Options::default() }).await;
    let (mut browser, email) = signed_up(&server).await;
    let (_, secret, _) = browser.create_key("doomed", "").await;
    let queued = server.submit(&secret, serde_json::json!({"model": "alpha-schnell", "prompt": "a porch"})).await;
    let id = queued["id"].as_str().unwrap().to_string();
    let token = browser.form_token("/console/account").await;
    let wrong = browser.post("/console/account/delete", &[("password", "not the password"), ("csrf", &token)]).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert!(wrong.body.contains("the password is wrong"), "{}", wrong.body);
    let deleted = browser.post("/console/account/delete", &[("password", PASSWORD), ("csrf", &token)]).await;
    assert_eq!(deleted.location.as_deref(), Some("/console/sign-in"), "{}", deleted.body);
    assert_eq!(server.get(&secret, "/v1/usage").await.0, StatusCode::UNAUTHORIZED);
    let row = server.service.database().task(&id).unwrap().unwrap();
    assert_eq!(row.status, "failed", "{row:?}");
    assert_eq!(browser.get("/console/keys").await.location.as_deref(), Some("/console/sign-in"));
    assert_eq!(Browser::new(&server).sign_in(&email, PASSWORD).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(server.service.database().verify_ledger().unwrap(), vec![]);
}

/// Deleting an account with a job running on the only worker slot stops that job's process,
/// unbilled, and the slot goes to the next account's job.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deleting_an_account_stops_its_running_job_and_frees_the_worker() {
    let server = TestServer::start_with(Backend::Sqlite, Options { worker_concurrency: 1, ..Options::default() }).await;
    let (mut browser, _) = signed_up(&server).await;
    let (_, secret, _) = browser.create_key("doomed", "").await;
    let long = serde_json::json!({"model": "lambda-t2v", "prompt": "a long tour",
        "params": {"duration": 5, "resolution": "720p"}});
    let running = server.submit(&secret, long).await;
    let id = running["id"].as_str().unwrap().to_string();
    server.wait_running(&secret, &id).await;
    let token = browser.form_token("/console/account").await;
    let deleted = browser.post("/console/account/delete", &[("password", PASSWORD), ("csrf", &token)]).await;
    assert_eq!(deleted.location.as_deref(), Some("/console/sign-in"), "{}", deleted.body);
    let row = server.service.database().task(&id).unwrap().unwrap();
    assert_eq!(row.status, "failed", "{row:?}");
    // The only slot is free: another account's job runs now, not after the video.
    let other = server.key(None, true).await;
    let next = server.run(&other, serde_json::json!({"model": "tts", "prompt": "next in line"})).await;
    assert_eq!(next["status"], "succeeded");
    let row = server.service.database().task(&id).unwrap().unwrap();
    assert_eq!(row.status, "failed", "stays failed: {row:?}");
    let ledger = server.service.database().task_ledger(&id).unwrap();
    assert!(ledger.iter().all(|entry| entry.kind != "capture"), "{ledger:?}");
    assert_eq!(server.service.database().verify_ledger().unwrap(), vec![]);
    server.stop().await;
}

/// Tries spread over many addresses fill an email's own limit, which then refuses every new
/// address; the address its owner signed in from keeps working.
#[tokio::test]
async fn a_distributed_guesser_does_not_lock_the_owner_out_of_their_own_address() {
    let options = Options {
        worker: false,
        adjust: Some(Box::new(|config: &mut AppConfig| {
            config.trusted_proxies = service::client_address::TrustedProxies::parse("127.0.0.1").unwrap();
        })),
        ..Options::default()
    };
    let server = TestServer::start_with(Backend::Sqlite, options).await;
    let (_, email) = signed_up(&server).await;
    let mut owner = Browser::new(&server);
    owner.forwarded_for = Some("198.51.100.1".into());
    assert_eq!(owner.sign_in(&email, PASSWORD).await.status, StatusCode::SEE_OTHER);
    // The owner's own sign-in counted as one of the email's tries.
    for n in 0..service::console::SIGN_IN_FAILURES_PER_ACCOUNT - 1 {
        let mut guesser = Browser::new(&server);
        guesser.forwarded_for = Some(format!("203.0.{}.{}", n / 200, n % 200 + 1));
        assert_eq!(guesser.sign_in(&email, "wrong password!").await.status, StatusCode::UNAUTHORIZED, "try {n}");
    }
    let mut stranger = Browser::new(&server);
    stranger.forwarded_for = Some("192.0.2.77".into());
    assert_eq!(stranger.sign_in(&email, PASSWORD).await.status, StatusCode::TOO_MANY_REQUESTS, "a new address");
    let mut owner_again = Browser::new(&server);
    owner_again.forwarded_for = Some("198.51.100.1".into());
    assert_eq!(owner_again.sign_in(&email, PASSWORD).await.status, StatusCode::SEE_OTHER, "the owner's address");
}

/// The usage page offers Cancel on unfinished jobs: the owner's cancel ends the job unbilled, and
/// another account's (with its own valid form token) is a 404 that leaves the job alone.
#[tokio::test]
async fn the_usage_page_cancels_an_unfinished_job_of_the_account_only() {
    let options = common::Options { worker: false, ..Default::default() };
    let server = TestServer::start_with(Backend::Sqlite, options).await;
    let (mut owner, _) = signed_up(&server).await;
    let (_, secret, _) = owner.create_key("owner's", "").await;
    let queued = server.submit(&secret, serde_json::json!({"model": "tts", "prompt": "a long read"})).await;
    let id = queued["id"].as_str().unwrap();
    let page = owner.get("/console/usage").await.body;
    let action = format!("/console/jobs/{id}/cancel");
    assert!(page.contains(&format!("action=\"{action}\"")), "the queued job has its Cancel form");

    let (mut intruder, _) = signed_up(&server).await;
    let token = intruder.form_token("/console/usage").await;
    assert_eq!(intruder.post(&action, &[("csrf", &token)]).await.status, StatusCode::NOT_FOUND);
    assert_eq!(server.get(&secret, &format!("/v1/tasks/{id}")).await.1["status"], "queued", "untouched");
    assert_eq!(owner.post(&action, &[("csrf", "forged")]).await.status, StatusCode::FORBIDDEN);

    let token = owner.form_token("/console/usage").await;
    let answer = owner.post(&action, &[("csrf", &token)]).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    let task = server.get(&secret, &format!("/v1/tasks/{id}")).await.1;
    assert_eq!((task["status"].as_str(), task["error"].as_str()), (Some("failed"), Some("cancelled by client")));
    assert_eq!(server.get(&secret, "/v1/usage").await.1["held_usd"], "0.0000");
    let page = owner.get("/console/usage").await.body;
    assert!(!page.contains(&format!("action=\"{action}\"")), "no Cancel once ended");
    assert_eq!(owner.post(&action, &[("csrf", &token)]).await.status, StatusCode::CONFLICT);
}

/// The Webhooks page: a new key's signing secret is shown once with the key; a default target set
/// on the page is used by the key's jobs, signed with that secret; the delivery shows in the log;
/// a rotated secret is shown once; another account cannot touch the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_webhooks_page_sets_a_default_target_rotates_the_secret_and_shows_deliveries() {
    let adjust: common::Adjust = Box::new(|config| config.allow_private_webhook_urls = true);
    let server = TestServer::start_with(Backend::Sqlite, Options { adjust: Some(adjust), ..Options::default() }).await;
    let receiver = common::receiver::Receiver::start(0);
    let (mut browser, _) = signed_up(&server).await;
    let (key_id, secret, created) = browser.create_key("hooks", "").await;
    let made_with_key = between(&created.body, "id=\"new-key-webhook-secret\">", "</code>");
    let signing = webhooks::SigningSecret::parse(&made_with_key).expect("a whsec_ secret with the new key");
    let page = browser.get("/console/webhooks").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(!page.body.contains("whsec_") && page.body.contains("Signing secret: set"), "{}", page.body);
    let token = csrf_of(&page.body);
    let target = format!("/console/keys/{key_id}/webhook");

    let refused = browser.post(&target, &[("url", "ftp://example.com/hooks"), ("csrf", &token)]).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.body.contains("role=\"alert\"") && refused.body.contains("http(s)"), "{}", refused.body);
    let saved = browser.post(&target, &[("url", &receiver.url), ("csrf", &token)]).await;
    assert_eq!(saved.location.as_deref(), Some("/console/webhooks"), "{}", saved.body);
    assert!(browser.get("/console/webhooks").await.body.contains(&format!("value=\"{}\"", receiver.url)));

    // A job that names no webhook_url goes to the key's default, signed with the key's secret.
    let queued = server.submit(&secret, serde_json::json!({"model": "tts", "prompt": "Open house."})).await;
    let id = queued["id"].as_str().unwrap();
    assert_eq!(server.wait(&secret, id).await["status"], "succeeded");
    let message = receiver.taken("succeeded").await;
    message.verify(&signing);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let page = browser.get("/console/webhooks").await.body;
        if page.contains("data-delivery-id") && page.contains(id) && page.contains(">delivered<") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{page}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // Rotation shows the new secret once; the page's own address never shows it again.
    let rotated = browser.post(&format!("/console/keys/{key_id}/webhook-secret"), &[("csrf", &token)]).await;
    assert_eq!(rotated.status, StatusCode::OK);
    let new_secret = between(&rotated.body, "id=\"webhook-secret\">", "</code>");
    assert!(new_secret.starts_with("whsec_") && new_secret != made_with_key, "{new_secret}");
    assert_eq!(rotated.headers["cache-control"], "no-store");
    let after = browser.get("/console/webhooks").await.body;
    assert!(!after.contains(&new_secret) && after.contains("previous one still signs until"), "{after}");

    // Another account cannot set or rotate this key's webhooks.
    let (mut intruder, _) = signed_up(&server).await;
    let intruder_token = intruder.form_token("/console/webhooks").await;
    let foreign = intruder.post(&target, &[("url", "https://93.184.216.34/x"), ("csrf", &intruder_token)]).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    let foreign = intruder.post(&format!("/console/keys/{key_id}/webhook-secret"), &[("csrf", &intruder_token)]).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    assert!(!intruder.get("/console/webhooks").await.body.contains(id), "deliveries are the account's own");
    server.stop().await;
}
