//! A cookie-keeping, non-redirecting HTTP client that uses the console as a browser without
//! JavaScript does: forms, CSRF tokens, cookies and redirects.

use super::TestServer;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use reqwest::StatusCode;
use std::collections::BTreeMap;

pub const PASSWORD: &str = "correct horse battery staple";

/// A cookie-keeping, non-redirecting client: one browser.
pub struct Browser {
    pub client: reqwest::Client,
    pub base: String,
    pub cookies: BTreeMap<String, String>,
    /// An `X-Forwarded-For` this browser sends (as a proxy would, or as a forger does).
    pub forwarded_for: Option<String>,
}

pub struct Answer {
    pub status: StatusCode,
    pub location: Option<String>,
    pub set_cookies: Vec<String>,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Browser {
    pub fn new(server: &TestServer) -> Browser {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
        Browser { client, base: server.base.clone(), cookies: BTreeMap::new(), forwarded_for: None }
    }

    pub async fn get(&mut self, path: &str) -> Answer {
        let request = self.client.get(format!("{}{path}", self.base));
        self.send(request).await
    }

    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Answer {
        let request = self.client.post(format!("{}{path}", self.base)).form(form);
        self.send(request).await
    }

    pub async fn send(&mut self, request: reqwest::RequestBuilder) -> Answer {
        let cookie_header: Vec<String> = self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let request = if cookie_header.is_empty() { request } else { request.header(COOKIE, cookie_header.join("; ")) };
        let request = match &self.forwarded_for {
            Some(address) => request.header("x-forwarded-for", address),
            None => request,
        };
        let response = request.send().await.expect("request");
        let set_cookies: Vec<String> =
            response.headers().get_all(SET_COOKIE).iter().filter_map(|v| v.to_str().ok().map(str::to_string)).collect();
        for cookie in &set_cookies {
            let pair = cookie.split(';').next().unwrap_or_default();
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if value.is_empty() || cookie.contains("Max-Age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_string(), value.to_string());
            }
        }
        let status = response.status();
        let headers = response.headers().clone();
        let location = headers.get(LOCATION).and_then(|v| v.to_str().ok()).map(str::to_string);
        Answer { status, location, set_cookies, headers, body: response.text().await.expect("body") }
    }

    /// The value of the hidden `csrf` field of the page at `path`.
    pub async fn form_token(&mut self, path: &str) -> String {
        let page = self.get(path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.body);
        csrf_of(&page.body)
    }

    pub async fn sign_up(&mut self, email: &str) -> Answer {
        let token = self.form_token("/console/sign-up").await;
        self.post("/console/sign-up", &[("email", email), ("password", PASSWORD), ("csrf", &token)]).await
    }

    /// Follows the verification link last mailed to `email` and confirms: the answer signs in.
    pub async fn confirm(&mut self, server: &TestServer, email: &str) -> Answer {
        let path = server.mailed_link(email, "verify");
        let token = self.form_token(&path).await;
        self.post(&path, &[("csrf", &token)]).await
    }

    pub async fn sign_in(&mut self, email: &str, password: &str) -> Answer {
        let token = self.form_token("/console/sign-in").await;
        self.post("/console/sign-in", &[("email", email), ("password", password), ("csrf", &token)]).await
    }

    /// Creates a key through the form; returns (key id, secret, the answer's body).
    pub async fn create_key(&mut self, label: &str, cap: &str) -> (String, String, Answer) {
        let token = self.form_token("/console/keys").await;
        let answer = self.post("/console/keys", &[("label", label), ("spend_cap", cap), ("csrf", &token)]).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        let secret = between(&answer.body, "id=\"secret\">", "</code>");
        let prefix = &secret[..12];
        let row = answer.body.split("data-key-id=\"").skip(1).find(|row| row.contains(prefix)).expect("key row");
        (row[..row.find('"').expect("id end")].to_string(), secret, answer)
    }
}

pub fn csrf_of(page: &str) -> String {
    between(page, "name=\"csrf\" value=\"", "\"")
}

pub fn between(text: &str, start: &str, end: &str) -> String {
    let from = text.find(start).unwrap_or_else(|| panic!("{start:?} not in {text}")) + start.len();
    text[from..from + text[from..].find(end).expect("end")].to_string()
}

pub fn unique_email() -> String {
    format!("{}@example.com", storage::new_id("dev"))
}

pub async fn signed_up(server: &TestServer) -> (Browser, String) {
    let mut browser = Browser::new(server);
    let email = unique_email();
    let answer = browser.sign_up(&email).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert!(answer.body.contains("We sent a mail to"), "{}", answer.body);
    let confirmed = browser.confirm(server, &email).await;
    assert_eq!(confirmed.status, StatusCode::SEE_OTHER, "{}", confirmed.body);
    assert_eq!(confirmed.location.as_deref(), Some("/console/keys"));
    (browser, email)
}
