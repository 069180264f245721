//! The mail the console sends (links to verify an address or reset a password, notices to an
//! address's owner), through a configured transport: a directory of `.eml` files (the embedded
//! default, and what tests read), or a `sendmail`-compatible program (Postfix, msmtp, an SMTP
//! relay's client), the standard interface of a mail system on a server.

use crate::ServiceError;
use std::path::PathBuf;

/// Where mail goes (`MAIL_TRANSPORT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MailTransport {
    /// `dir:PATH`: each message is written to a file of its own in the directory.
    Directory(PathBuf),
    /// `sendmail:PATH`: each message is piped to the program, run as `PATH -i -t`.
    Sendmail(PathBuf),
}

impl MailTransport {
    /// Reads a `MAIL_TRANSPORT` value.
    pub fn parse(value: &str) -> Option<MailTransport> {
        match value.split_once(':') {
            Some(("dir", path)) if !path.is_empty() => Some(MailTransport::Directory(path.into())),
            Some(("sendmail", path)) if !path.is_empty() => Some(MailTransport::Sendmail(path.into())),
            _ => None,
        }
    }
}

/// Sends the console's mail.
#[derive(Clone, Debug)]
pub struct Mailer {
    /// Where it goes.
    pub transport: MailTransport,
    /// The `From` address.
    pub from: String,
}

/// One plain-text message.
#[derive(Clone, Debug)]
pub struct Mail {
    /// The recipient (a checked, normalized address: no line breaks can reach the headers).
    pub to: String,
    /// The subject.
    pub subject: String,
    /// The text.
    pub body: String,
}

impl Mailer {
    /// Sends `mail`; a transport that fails is our failure (503), never the visitor's.
    pub async fn send(&self, mail: Mail) -> Result<(), ServiceError> {
        let message = self.render(&mail);
        let transport = self.transport.clone();
        let sent = tokio::task::spawn_blocking(move || deliver(&transport, &message))
            .await
            .map_err(|e| ServiceError::Internal(format!("mail: {e}")))?;
        sent.map_err(|e| {
            tracing::error!(error = %e, "mail could not be sent");
            ServiceError::Unavailable("mail could not be sent; try again shortly".into())
        })
    }

    fn render(&self, mail: &Mail) -> String {
        let clean = |s: &str| s.replace(['\r', '\n'], " ");
        let id = crate::console::random_token();
        let domain = self.from.rsplit_once('@').map_or("localhost", |(_, d)| d);
        format!(
            "From: {}\r\nTo: {}\r\nSubject: {}\r\nDate: {}\r\nMessage-ID: <{id}@{domain}>\r\nMIME-Version: 1.0\r\n\
             Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n{}\r\n",
            clean(&self.from),
            clean(&mail.to),
            clean(&mail.subject),
            httpdate::fmt_http_date(std::time::SystemTime::now()),
            mail.body.replace("\r\n", "\n").replace('\n', "\r\n"),
        )
    }
}

fn deliver(transport: &MailTransport, message: &str) -> std::io::Result<()> {
    match transport {
        MailTransport::Directory(dir) => {
            std::fs::create_dir_all(dir)?;
            let name = format!("{}-{}.eml", storage::now_millis(), crate::console::random_token());
            // Written whole under a temporary name, then renamed, so a reader never sees half a message.
            let partial = dir.join(format!(".{name}"));
            std::fs::write(&partial, message)?;
            std::fs::rename(&partial, dir.join(name))
        }
        MailTransport::Sendmail(program) => {
            use std::io::Write;
            let mut child = std::process::Command::new(program)
                .args(["-i", "-t"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()?;
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(message.as_bytes())?;
            }
            let output = child.wait_with_output()?;
            if !output.status.success() {
                let why = String::from_utf8_lossy(&output.stderr);
                return Err(std::io::Error::other(format!(
                    "{} exited with {}: {}",
                    program.display(),
                    output.status,
                    why.trim()
                )));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn mail_is_written_whole_with_clean_headers_or_piped_to_sendmail() {
        assert_eq!(MailTransport::parse("dir:/tmp/x"), Some(MailTransport::Directory("/tmp/x".into())));
        assert_eq!(MailTransport::parse("smtp://x"), None);
        let dir = std::env::temp_dir().join(storage::new_id("mail-test"));
        let mailer = Mailer { transport: MailTransport::Directory(dir.clone()), from: "console@example.com".into() };
        let mail =
            Mail { to: "a@b.com".into(), subject: "Hi\r\nBcc: evil@x.com".into(), body: "line one\nline two".into() };
        mailer.send(mail.clone()).await.unwrap();
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(files.len(), 1);
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert!(text.contains("To: a@b.com\r\nSubject: Hi  Bcc: evil@x.com\r\n"), "{text}");
        assert!(text.ends_with("\r\n\r\nline one\r\nline two\r\n"), "{text}");

        // A sendmail-compatible program gets the message on its standard input.
        let script = dir.join("sendmail.sh");
        let out = dir.join("piped.eml");
        std::fs::write(&script, format!("#!/bin/sh\ncat > {}\n", out.display())).unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&script).status().unwrap();
        let piped = Mailer { transport: MailTransport::Sendmail(script), ..mailer };
        piped.send(mail).await.unwrap();
        assert!(std::fs::read_to_string(&out).unwrap().contains("To: a@b.com"));
        let failing = Mailer { transport: MailTransport::Sendmail("/bin/false".into()), ..piped };
        let error = failing.send(Mail { to: "a@b.com".into(), subject: "x".into(), body: "y".into() }).await;
        assert!(matches!(error, Err(ServiceError::Unavailable(_))), "{error:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
