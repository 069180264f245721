//! The service's public addresses, built in one place from `PUBLIC_BASE_URL`: poll URLs, signed
//! file URLs, the connector, console invites and provider callbacks.

/// The public addresses under one base URL (no trailing slash).
#[derive(Clone, Copy, Debug)]
pub struct PublicUrls<'a> {
    base: &'a str,
}

impl<'a> PublicUrls<'a> {
    /// Addresses under `base`, such as `https://api.example.com`.
    pub fn new(base: &'a str) -> PublicUrls<'a> {
        PublicUrls { base: base.trim_end_matches('/') }
    }

    /// The base URL itself.
    pub fn base(&self) -> &'a str {
        self.base
    }

    /// The connector, which is also the OAuth protected resource its tokens are for.
    pub fn connector(&self) -> String {
        format!("{}/api/mcp", self.base)
    }

    /// An OAuth endpoint, such as `/oauth/token`.
    pub fn oauth(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Where task `id` is polled.
    pub fn task(&self, id: &str) -> String {
        format!("{}/v1/tasks/{id}", self.base)
    }

    /// Where reel `id` is polled.
    pub fn reel(&self, id: &str) -> String {
        format!("{}/v1/recipes/reel/{id}", self.base)
    }

    /// The prefix of every output file's URL.
    pub fn files_prefix(&self) -> String {
        format!("{}/files/", self.base)
    }

    /// The signed download URL of the output stored at `path`.
    pub fn file(&self, path: &str, expires: i64, signature: &str) -> String {
        format!("{}{path}?expires={expires}&sig={signature}", self.files_prefix())
    }

    /// The agent connector's URL with the key embedded, for clients that cannot send headers.
    pub fn connector_with_key(&self, secret: &str) -> String {
        format!("{}/api/mcp?key={secret}", self.base)
    }

    /// The console page a mailed link of `kind` (`verify`, `reset`) with `token` opens.
    pub fn console_link(&self, kind: &str, token: &str) -> String {
        format!("{}/console/{kind}/{token}", self.base)
    }

    /// The console page `name` (`sign-in`).
    pub fn console_page(&self, name: &str) -> String {
        format!("{}/console/{name}", self.base)
    }

    /// The console page that accepts invite `token`.
    pub fn invite(&self, token: &str) -> String {
        format!("{}/console/invite/{token}", self.base)
    }

    /// Where `provider` calls back about `task_id`, with our `token` for it.
    pub fn provider_callback(&self, provider: &str, task_id: &str, token: &str) -> String {
        format!("{}/v1/webhooks/{provider}/{task_id}?token={token}", self.base)
    }

    /// The generate endpoint, as the console's examples show it.
    pub fn generate(&self) -> String {
        format!("{}/v1/generate", self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_share_one_base() {
        let urls = PublicUrls::new("https://api.example.com/");
        assert_eq!(urls.task("task_1"), "https://api.example.com/v1/tasks/task_1");
        assert_eq!(urls.reel("reel_1"), "https://api.example.com/v1/recipes/reel/reel_1");
        assert_eq!(urls.file("tasks/a.png", 9, "ab"), "https://api.example.com/files/tasks/a.png?expires=9&sig=ab");
        assert_eq!(urls.connector_with_key("mgk_x"), "https://api.example.com/api/mcp?key=mgk_x");
    }
}
