//! The check that no secret reaches a log line. While the suite runs, every service it starts
//! writes its log (access log included) under one directory (`TEST_LOG_DIR`): the in-process
//! servers of the HTTP tests and the real api-servers and workers of the process tests. Afterwards
//! every line is searched for anything shaped like a secret the service handles: API keys,
//! download signatures, callback tokens, console invite, confirmation and reset links, session
//! cookies, webhook secrets and the connector's OAuth tokens, codes and client secrets. A redacted value (`REDACTED`) passes.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// Where the suite's logs are collected.
pub fn dir() -> PathBuf {
    PathBuf::from("target/test-logs")
}

/// Empties the collection directory before a run.
pub fn prepare(dir: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    Ok(())
}

/// Fails on any log line under `dir` that carries a secret; says how much it read.
pub fn check(dir: &Path) -> Result<()> {
    let (mut files, mut lines, mut found) = (0, 0, Vec::new());
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let text = String::from_utf8_lossy(&std::fs::read(&path)?).into_owned();
        files += 1;
        for (number, line) in text.lines().enumerate() {
            lines += 1;
            if let Some(what) = secret_in(line) {
                found.push(format!(
                    "{}:{}: {what}: {}",
                    path.display(),
                    number + 1,
                    line.chars().take(300).collect::<String>()
                ));
            }
        }
    }
    println!("log-secrets: {lines} lines in {files} service logs searched");
    if files == 0 {
        bail!("log-secrets: no service log was collected under {}; the check would prove nothing", dir.display());
    }
    if !found.is_empty() {
        bail!("secrets in the service logs:\n{}", found.join("\n"));
    }
    Ok(())
}

/// What kind of secret `line` carries, if any.
fn secret_in(line: &str) -> Option<&'static str> {
    let hex_run = |s: &str| s.chars().take_while(char::is_ascii_hexdigit).count();
    let unredacted =
        |s: &str| !s.starts_with("REDACTED") && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    let after = |needle: &'static str| line.match_indices(needle).map(move |(at, _)| &line[at + needle.len()..]);
    if after("mgk_").any(|rest| hex_run(rest) >= 16) {
        return Some("an API key");
    }
    for (prefix, what) in [
        ("mat_", "a connector access token"),
        ("mrt_", "a connector refresh token"),
        ("mac_", "an authorization code"),
        ("mcs_", "a connector client secret"),
    ] {
        if after(prefix).any(|rest| hex_run(rest) >= 16) {
            return Some(what);
        }
    }
    if after("sig=").any(|rest| hex_run(rest) >= 32) {
        return Some("a download signature");
    }
    if after("token=").any(unredacted) {
        return Some("a callback token");
    }
    for (path, what) in [
        ("/console/invite/", "an invite link"),
        ("/console/verify/", "a confirmation link"),
        ("/console/reset/", "a password-reset link"),
    ] {
        if after(path).any(unredacted) {
            return Some(what);
        }
    }
    if after("mg_console=").any(unredacted) {
        return Some("a session cookie");
    }
    if after("whsec_").any(|rest| rest.chars().take_while(char::is_ascii_alphanumeric).count() >= 8) {
        return Some("a webhook secret");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_found_and_redactions_pass() {
        let key = format!("mgk_{}", "ab12".repeat(16));
        assert_eq!(secret_in(&format!("GET /v1/usage?key={key}")), Some("an API key"));
        assert_eq!(
            secret_in(&format!("GET /files/x.png?expires=1&sig={}", "0f".repeat(32))),
            Some("a download signature")
        );
        assert_eq!(secret_in("POST /v1/webhooks/fal/task_1?token=abc123"), Some("a callback token"));
        assert_eq!(secret_in("GET /console/verify/Zx81"), Some("a confirmation link"));
        let token = format!("Bearer mat_{}", "9f".repeat(32));
        assert_eq!(secret_in(&token), Some("a connector access token"));
        assert_eq!(secret_in(&format!("refresh mrt_{}", "9f".repeat(32))), Some("a connector refresh token"));
        assert_eq!(secret_in("GET /console/reset/abc HTTP/1.1"), Some("a password-reset link"));
        for clean in [
            "POST /v1/webhooks/fal/task_1?token=REDACTED",
            "GET /console/invite/REDACTED HTTP/1.1",
            "GET /console/reset HTTP/1.1",
            "GET /files/x.png?expires=1&sig=REDACTED",
            "key created: mgk_1a2b3c4d (prefix only)",
        ] {
            assert_eq!(secret_in(clean), None, "{clean}");
        }
    }
}
