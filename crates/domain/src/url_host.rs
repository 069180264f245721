//! Which host names of client URLs (inputs, webhook receivers) are accepted, beyond what the URL
//! parser takes: the published URL pattern and the validators agree through this module.

/// Why a host with a reserved label is refused.
pub const RESERVED_LABEL: &str =
    "the host has a label with `--` in its third and fourth places (such as punycode `xn--`), which is not accepted";

/// Whether `url`'s host name has a label with `-` in both its third and fourth places: the form
/// reserved for punycode (`xn--`), which the published URL pattern leaves out, so the validator
/// and the schema accept the same hosts.
pub fn has_reserved_label(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(host)) => host.split('.').any(|label| label.get(2..4) == Some("--")),
        _ => false,
    }
}
