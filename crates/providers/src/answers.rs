//! Reading the providers' answers: error reasons and the media a result names.

use crate::MediaRef;
use serde_json::Value;

/// The reason in a provider's error body: fal's `{"detail": "..."}` or
/// `{"detail": [{"loc": [...], "msg": "..."}]}`, an RFC 7807 problem (`title`, `detail`), or
/// `{"error": "..."}`; else the start of the body as text.
pub(crate) fn error_reason(body: &[u8]) -> Option<String> {
    let reason = match serde_json::from_slice::<Value>(body) {
        Ok(value) => reason_in(&value),
        Err(_) => {
            let text = String::from_utf8_lossy(body).trim().to_string();
            (!text.is_empty()).then_some(text)
        }
    }?;
    Some(clip(&reason))
}

fn reason_in(value: &Value) -> Option<String> {
    let detail = match value.get("detail") {
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Array(items)) => {
            let parts: Vec<String> = items
                .iter()
                .map(|item| {
                    let place: Vec<String> = item
                        .get("loc")
                        .and_then(Value::as_array)
                        .map(|loc| {
                            loc.iter().map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_string)).collect()
                        })
                        .unwrap_or_default();
                    let message = item.get("msg").and_then(Value::as_str).unwrap_or("invalid");
                    if place.is_empty() {
                        message.to_string()
                    } else {
                        format!("{}: {message}", place.join("."))
                    }
                })
                .collect();
            (!parts.is_empty()).then(|| parts.join("; "))
        }
        _ => None,
    };
    let title = value.get("title").and_then(Value::as_str);
    match (title, detail) {
        (Some(title), Some(detail)) if title != detail => Some(format!("{title}: {detail}")),
        (_, Some(detail)) => Some(detail),
        (Some(title), None) => Some(title.to_string()),
        (None, None) => value.get("error").and_then(Value::as_str).map(str::to_string),
    }
}

/// A provider's text cut to a length fit for an error message.
pub(crate) fn clip(text: &str) -> String {
    const MAX: usize = 300;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// An http(s) URL, or a base64 `data:` URI of a media type (fal's `sync_mode` and Replicate's
/// synchronous predictions answer files inline).
fn is_file_url(text: &str) -> bool {
    if let Some(inline) = text.strip_prefix("data:") {
        return inline.split_once(";base64,").is_some_and(|(media_type, _)| media_type.contains('/'));
    }
    url::Url::parse(text).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// The fields of a result that name its media, as fal's and Replicate's media models answer
/// them. Nothing else in a result is fetched: a URL in a `prompt`, a `seed` or a model's log is
/// text, not a file.
pub(crate) const MEDIA_FIELDS: [&str; 10] =
    ["images", "image", "video", "videos", "audio", "audio_file", "audio_url", "file", "files", "output"];

/// fal's files in a result: the `{url, content_type}` objects under its [`MEDIA_FIELDS`]
/// (`images[]`, `image`, `video`, `audio`, ...), one object or a list of them, in field order.
pub(crate) fn fal_files(result: &Value, found: &mut Vec<MediaRef>) {
    let file = |value: &Value, found: &mut Vec<MediaRef>| {
        let url = value.get("url").and_then(Value::as_str).filter(|url| is_file_url(url));
        if let Some(url) = url {
            let content_type = value.get("content_type").and_then(Value::as_str).map(str::to_string);
            found.push(MediaRef { url: url.to_string(), content_type });
        }
    };
    for field in MEDIA_FIELDS {
        match result.get(field) {
            Some(Value::Array(items)) => items.iter().for_each(|item| file(item, found)),
            Some(value) => file(value, found),
            None => {}
        }
    }
}

/// Replicate's files in an `output`: a URL, a list of URLs, or an object whose
/// [`MEDIA_FIELDS`] hold a URL or a list of them.
pub(crate) fn output_urls(output: &Value, found: &mut Vec<MediaRef>) {
    let urls = |value: &Value, found: &mut Vec<MediaRef>| {
        let one = |value: &Value, found: &mut Vec<MediaRef>| {
            if let Some(url) = value.as_str().filter(|url| is_file_url(url)) {
                found.push(MediaRef { url: url.to_string(), content_type: None });
            }
        };
        match value {
            Value::Array(items) => items.iter().for_each(|item| one(item, found)),
            other => one(other, found),
        }
    };
    match output {
        Value::Object(map) => {
            for field in MEDIA_FIELDS {
                if let Some(value) = map.get(field) {
                    urls(value, found);
                }
            }
        }
        other => urls(other, found),
    }
}

/// A required string field of an answer.
pub(crate) fn text<'a>(value: &'a Value, pointer: &str) -> Result<&'a str, String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("the answer has no `{}`", pointer.trim_start_matches('/').replace('/', ".")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reasons_are_read_from_each_error_shape() {
        let fal = json!({"detail": [{"loc": ["body", "prompt"], "msg": "field required", "type": "missing"}]});
        assert_eq!(error_reason(fal.to_string().as_bytes()).unwrap(), "body.prompt: field required");
        assert_eq!(error_reason(br#"{"detail": "Not enough credits"}"#).unwrap(), "Not enough credits");
        let problem = json!({"title": "Invalid version", "detail": "The version does not exist", "status": 422});
        assert_eq!(
            error_reason(problem.to_string().as_bytes()).unwrap(),
            "Invalid version: The version does not exist"
        );
        assert_eq!(error_reason(b"<html>bad gateway</html>").unwrap(), "<html>bad gateway</html>");
        assert_eq!(error_reason(b"  "), None);
        assert!(error_reason("x".repeat(5000).as_bytes()).unwrap().len() < 310);
    }

    #[test]
    fn media_are_found_in_every_result_shape() {
        let mut found = Vec::new();
        fal_files(
            &json!({"images": [{"url": "https://v3.fal.media/a.png", "content_type": "image/png"}, {"url": "https://v3.fal.media/b.png"}], "seed": 3, "prompt": "https://not-a-file"}),
            &mut found,
        );
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].content_type.as_deref(), Some("image/png"));
        let mut found = Vec::new();
        fal_files(&json!({"video": {"url": "https://v3.fal.media/v.mp4"}}), &mut found);
        assert_eq!(found[0].url, "https://v3.fal.media/v.mp4");
        let mut found = Vec::new();
        output_urls(&json!(["https://replicate.delivery/a.webp", "file:///etc/passwd", 3]), &mut found);
        assert_eq!(found.len(), 1);
        let mut found = Vec::new();
        output_urls(&json!("https://replicate.delivery/v.mp4"), &mut found);
        assert_eq!(found.len(), 1);
        // Only the media fields are read: a URL elsewhere in a result is text.
        let mut found = Vec::new();
        fal_files(
            &json!({"images": [{"url": "https://v3.fal.media/a.png"}], "debug": {"url": "http://169.254.169.254/"},
                    "timings": [{"url": "https://tracker.example/t"}], "image": {"nested": {"url": "https://x.example/n.png"}}}),
            &mut found,
        );
        assert_eq!(found.iter().map(|f| f.url.as_str()).collect::<Vec<_>>(), ["https://v3.fal.media/a.png"]);
        let mut found = Vec::new();
        output_urls(
            &json!({"video": "https://replicate.delivery/v.mp4", "caption": "https://tracker.example/c",
                    "images": ["https://replicate.delivery/a.png", ["https://replicate.delivery/nested.png"]]}),
            &mut found,
        );
        let urls: Vec<&str> = found.iter().map(|f| f.url.as_str()).collect();
        assert_eq!(urls, ["https://replicate.delivery/a.png", "https://replicate.delivery/v.mp4"]);
        let mut found = Vec::new();
        output_urls(&json!([["https://replicate.delivery/deep.png"]]), &mut found);
        assert!(found.is_empty(), "lists of lists are not a media shape");
        // Files answered inline; text that merely starts like one is not a file.
        let mut found = Vec::new();
        output_urls(&json!(["data:image/png;base64,iVBORw0KGgo=", "data: a caption", "data:;base64,AAAA"]), &mut found);
        assert_eq!(found.len(), 1);
        let mut found = Vec::new();
        fal_files(&json!({"audio": {"url": "data:audio/mpeg;base64,SUQz", "content_type": "audio/mpeg"}}), &mut found);
        assert_eq!(found[0].url, "data:audio/mpeg;base64,SUQz");
    }
}
