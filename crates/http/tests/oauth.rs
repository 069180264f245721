//! The connector as an OAuth 2.1 protected resource with its own authorization server, over real
//! HTTP on SQLite and PostgreSQL: discovery, registration, consent in the console, tokens that
//! spend like a key within the connection's limit, refresh rotation, revocation, disconnection,
//! and every refusal the issue names (a wrong PKCE verifier, a reused code, a redirect URI off by
//! one character, another resource, an expired token, a consent without its CSRF token).

mod common;

use common::browser::{signed_up, Browser};
use common::{Options, TestServer};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;
use storage::Backend;

const REDIRECT: &str = "http://127.0.0.1:9/callback";
const VERIFIER: &str = "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG9mcmVk";

/// Query parameter `name` of `url`.
fn param(url: &str, name: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    parsed.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

async fn register(server: &TestServer) -> String {
    let body = json!({"redirect_uris": [REDIRECT], "client_name": "Test agent", "token_endpoint_auth_method": "none"});
    let answer = server.client.post(format!("{}/oauth/register", server.base)).json(&body).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::CREATED);
    let client: Value = answer.json().await.unwrap();
    assert!(client.get("client_secret").is_none(), "a public client: {client}");
    client["client_id"].as_str().unwrap().to_string()
}

fn authorize_path(server: &TestServer, client_id: &str, redirect: &str, verifier: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect)
        .append_pair("code_challenge", &domain::oauth::s256_challenge(verifier))
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", "xyz")
        .append_pair("scope", "mcp")
        .append_pair("resource", &format!("{}/api/mcp", server.base))
        .finish();
    format!("/console/authorize?{query}")
}

/// Consents in `browser` (signed in) with `cap`; returns the code.
async fn consent(browser: &mut Browser, server: &TestServer, client_id: &str, cap: &str) -> String {
    let page = browser.get(&authorize_path(server, client_id, REDIRECT, VERIFIER)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("Test agent") && page.body.contains("127.0.0.1"), "{}", page.body);
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("form-action 'self' http://127.0.0.1:9"), "{csp}");
    let mut form: Vec<(String, String)> = hidden_fields(&page.body);
    form.push(("spend_cap".into(), cap.into()));
    form.push(("decision".into(), "allow".into()));
    let fields: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let answer = browser.post("/console/authorize", &fields).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let location = answer.location.unwrap();
    assert!(location.starts_with(REDIRECT), "{location}");
    assert_eq!(param(&location, "state").as_deref(), Some("xyz"));
    assert_eq!(param(&location, "iss").as_deref(), Some(server.base.as_str()));
    param(&location, "code").unwrap()
}

/// The hidden fields of the consent form.
fn hidden_fields(page: &str) -> Vec<(String, String)> {
    let form = &page[page.find("id=\"consent\"").expect("the consent form")..];
    let form = &form[..form.find("</form>").expect("its end")];
    form.split("<input type=\"hidden\" name=\"")
        .skip(1)
        .map(|rest| {
            let name = &rest[..rest.find('"').unwrap()];
            let value = rest.split("value=\"").nth(1).unwrap();
            let value = &value[..value.find('"').unwrap()];
            (name.to_string(), value.replace("&amp;", "&").replace("&quot;", "\""))
        })
        .collect()
}

async fn token(server: &TestServer, form: &[(&str, &str)]) -> (StatusCode, Value) {
    let answer = server.client.post(format!("{}/oauth/token", server.base)).form(form).send().await.unwrap();
    let status = answer.status();
    (status, answer.json().await.unwrap())
}

async fn exchange(server: &TestServer, client_id: &str, code: &str, verifier: &str) -> (StatusCode, Value) {
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", REDIRECT),
        ("client_id", client_id),
        ("code_verifier", verifier),
    ];
    token(server, &form).await
}

/// Calls the connector with `token`: the HTTP status and the JSON-RPC answer.
async fn call(server: &TestServer, token: &str, method: &str, params: Value) -> (StatusCode, Value) {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let answer = server
        .client
        .post(format!("{}/api/mcp", server.base))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&message)
        .send()
        .await
        .unwrap();
    let status = answer.status();
    (status, answer.json().await.unwrap_or(Value::Null))
}

async fn list_tools(server: &TestServer, token: &str) -> StatusCode {
    call(server, token, "tools/list", json!({})).await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_connects_spends_within_its_limit_refreshes_and_is_disconnected() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let server = TestServer::start(backend).await;
        // Discovery from the connector's 401.
        let (status, _) = call(&server, "", "tools/list", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let answer = server.client.post(format!("{}/api/mcp", server.base)).send().await.unwrap();
        let challenge = answer.headers()["www-authenticate"].to_str().unwrap().to_string();
        let metadata_url = format!("{}/.well-known/oauth-protected-resource/api/mcp", server.base);
        assert!(challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")), "{challenge}");
        let resource: Value = server.client.get(&metadata_url).send().await.unwrap().json().await.unwrap();
        assert_eq!(resource["resource"], format!("{}/api/mcp", server.base));
        let issuer = resource["authorization_servers"][0].as_str().unwrap().to_string();
        let metadata: Value = server
            .client
            .get(format!("{issuer}/.well-known/oauth-authorization-server"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(metadata["issuer"], issuer);
        assert_eq!(metadata["code_challenge_methods_supported"], json!(["S256"]));

        let client_id = register(&server).await;
        let (mut browser, _email) = signed_up(&server).await;
        // A consent posted without the session's CSRF token is refused.
        let page = browser.get(&authorize_path(&server, &client_id, REDIRECT, VERIFIER)).await;
        let mut forged = hidden_fields(&page.body);
        forged.retain(|(k, _)| k != "csrf");
        forged.push(("decision".into(), "allow".into()));
        forged.push(("spend_cap".into(), "5".into()));
        let fields: Vec<(&str, &str)> = forged.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let refused = browser.post("/console/authorize", &fields).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);

        let code = consent(&mut browser, &server, &client_id, "0.05").await;
        // A wrong verifier is refused, and does not use the code up.
        let (status, error) = exchange(&server, &client_id, &code, &VERIFIER.replace('Z', "Y")).await;
        assert_eq!((status, error["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")), "{error}");
        let (status, tokens) = exchange(&server, &client_id, &code, VERIFIER).await;
        assert_eq!(status, StatusCode::OK, "{tokens}");
        assert_eq!((tokens["token_type"].as_str(), tokens["scope"].as_str()), (Some("Bearer"), Some("mcp")));
        let access = tokens["access_token"].as_str().unwrap().to_string();
        let refresh = tokens["refresh_token"].as_str().unwrap().to_string();

        // The token spends like a key, within the connection's limit of $0.05.
        assert_eq!(list_tools(&server, &access).await, StatusCode::OK);
        let generate = json!({"name": "generate", "arguments": {"model": "alpha-schnell", "prompt": "a porch"}});
        let (status, first) = call(&server, &access, "tools/call", generate.clone()).await;
        assert_eq!(status, StatusCode::OK, "{first}");
        assert_eq!(first["result"]["isError"], false, "{first}");
        let mut refused = None;
        for _ in 0..30 {
            let (_, answer) = call(&server, &access, "tools/call", generate.clone()).await;
            if answer["result"]["isError"] == true {
                refused = Some(answer);
                break;
            }
        }
        let refused = refused.expect("the connection's limit is reached");
        assert_eq!(refused["result"]["structuredContent"]["code"], "spend_cap_reached", "{refused}");

        // Refresh rotates: the new tokens work; the old refresh token used again revokes them all.
        let form =
            [("grant_type", "refresh_token"), ("refresh_token", refresh.as_str()), ("client_id", client_id.as_str())];
        let (status, rotated) = token(&server, &form).await;
        assert_eq!(status, StatusCode::OK, "{rotated}");
        let new_access = rotated["access_token"].as_str().unwrap().to_string();
        assert_ne!(rotated["refresh_token"].as_str().unwrap(), refresh);
        assert_eq!(list_tools(&server, &new_access).await, StatusCode::OK);
        let (status, reused) = token(&server, &form).await;
        assert_eq!((status, reused["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
        assert_eq!(list_tools(&server, &new_access).await, StatusCode::UNAUTHORIZED, "a replayed refresh revokes all");

        // A second connection: revocation, then disconnection from the console.
        let code = consent(&mut browser, &server, &client_id, "5").await;
        let (_, tokens) = exchange(&server, &client_id, &code, VERIFIER).await;
        let access = tokens["access_token"].as_str().unwrap().to_string();
        // The code cannot be used twice (and its reuse revokes what it gave).
        let (status, again) = exchange(&server, &client_id, &code, VERIFIER).await;
        assert_eq!((status, again["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
        assert_eq!(list_tools(&server, &access).await, StatusCode::UNAUTHORIZED);
        let code = consent(&mut browser, &server, &client_id, "5").await;
        let (_, tokens) = exchange(&server, &client_id, &code, VERIFIER).await;
        let access = tokens["access_token"].as_str().unwrap().to_string();
        let revoke = [("token", access.as_str()), ("client_id", client_id.as_str())];
        let answer = server.client.post(format!("{}/oauth/revoke", server.base)).form(&revoke).send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(list_tools(&server, &access).await, StatusCode::UNAUTHORIZED, "revoked");
        let code = consent(&mut browser, &server, &client_id, "5").await;
        let (_, tokens) = exchange(&server, &client_id, &code, VERIFIER).await;
        let access = tokens["access_token"].as_str().unwrap().to_string();
        assert_eq!(list_tools(&server, &access).await, StatusCode::OK);
        let agents = browser.get("/console/agents").await;
        assert!(agents.body.contains("Test agent"), "{}", agents.body);
        let key_id = agents.body.split("data-agent=\"").nth(1).map(|r| r[..r.find('"').unwrap()].to_string()).unwrap();
        let csrf = common::browser::csrf_of(&agents.body);
        let answer = browser.post(&format!("/console/agents/{key_id}/disconnect"), &[("csrf", &csrf)]).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
        assert_eq!(list_tools(&server, &access).await, StatusCode::UNAUTHORIZED, "a disconnected agent is refused");
        server.stop().await;
    }
}

#[tokio::test]
async fn bad_requests_are_refused_without_redirecting_where_they_should_not() {
    let adjust: common::Adjust = Box::new(|config| config.oauth_access_token = Duration::from_secs(1));
    let server =
        TestServer::start_with(Backend::Sqlite, Options { worker: false, adjust: Some(adjust), ..Default::default() })
            .await;
    let client_id = register(&server).await;
    let (mut browser, _) = signed_up(&server).await;
    // A redirect URI that differs by one character: an error page, never a redirect.
    let off_by_one = browser.get(&authorize_path(&server, &client_id, "http://127.0.0.1:9/callbacc", VERIFIER)).await;
    assert_eq!(off_by_one.status, StatusCode::BAD_REQUEST, "{}", off_by_one.body);
    assert!(off_by_one.location.is_none());
    // Another resource is refused at the authorization endpoint (back to the client) and at
    // the token endpoint.
    let path = authorize_path(&server, &client_id, REDIRECT, VERIFIER).replace("%2Fapi%2Fmcp", "%2Fv1");
    let answer = browser.get(&path).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    assert_eq!(param(answer.location.as_deref().unwrap(), "error").as_deref(), Some("invalid_target"));
    let code = consent(&mut browser, &server, &client_id, "5").await;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("client_id", client_id.as_str()),
        ("code_verifier", VERIFIER),
        ("resource", "https://other.example.com/api/mcp"),
    ];
    let (status, error) = token(&server, &form).await;
    assert_eq!((status, error["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_target")), "{error}");
    // A redirect URI other than the code's at the token endpoint.
    let mut wrong = form;
    wrong[5] = ("resource", "");
    wrong[2] = ("redirect_uri", "http://127.0.0.1:9/callbacc");
    let wrong: Vec<_> = wrong.into_iter().filter(|(k, _)| *k != "resource").collect();
    let (status, error) = token(&server, &wrong).await;
    assert_eq!((status, error["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")), "{error}");
    // An unknown client is a 401; an unsupported grant a 400.
    let (status, error) = token(&server, &[("grant_type", "authorization_code"), ("client_id", "mcl_nobody")]).await;
    assert_eq!((status, error["error"].as_str()), (StatusCode::UNAUTHORIZED, Some("invalid_client")));
    let (status, error) = token(&server, &[("grant_type", "password"), ("client_id", client_id.as_str())]).await;
    assert_eq!((status, error["error"].as_str()), (StatusCode::BAD_REQUEST, Some("unsupported_grant_type")));
    // PKCE is required.
    let plain = authorize_path(&server, &client_id, REDIRECT, VERIFIER).replace("S256", "plain");
    let answer = browser.get(&plain).await;
    assert_eq!(param(answer.location.as_deref().unwrap(), "error").as_deref(), Some("invalid_request"));
    // An access token stops working when it expires (here after one second).
    let (status, tokens) = exchange(&server, &client_id, &code, VERIFIER).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(list_tools(&server, access).await, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(list_tools(&server, access).await, StatusCode::UNAUTHORIZED, "expired");
    // An access token is for the connector only, not the HTTP API.
    let answer = server.client.get(format!("{}/v1/usage", server.base)).bearer_auth(access).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    // Signed out, the consent page first asks to sign in, and comes back after.
    let mut stranger = Browser::new(&server);
    let answer = stranger.get(&authorize_path(&server, &client_id, REDIRECT, VERIFIER)).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    assert!(answer.location.as_deref().unwrap().starts_with("/console/sign-in?next=%2Fconsole%2Fauthorize%3F"));
    server.stop().await;
}
