//! Signed-out pages: sign in, sign up, confirm an address, reset a password, accept an invite.

use super::{alert, csrf_field, Page};
use maud::html;
use service::console::PASSWORD_MIN_CHARS;

/// What a signed-out form shows again after a refusal.
#[derive(Default)]
pub struct FormState<'a> {
    /// The email typed (never the password).
    pub email: &'a str,
    /// Why the form was refused.
    pub error: Option<&'a str>,
    /// Where to go once signed in (a page of this service, such as an agent's consent page).
    pub next: Option<&'a str>,
}

/// The sign-in form.
pub fn sign_in(form_token: &str, state: &FormState<'_>, sign_up_open: bool) -> Page {
    Page::public(
        "Sign in",
        html! {
            form.card method="post" action="/console/sign-in" novalidate {
                (alert(state.error))
                (csrf_field(form_token))
                @if let Some(next) = state.next { input type="hidden" name="next" value=(next); }
                (email_field(state.email))
                label for="password" { "Password" }
                input #password type="password" name="password" autocomplete="current-password" required
                    autofocus[!state.email.is_empty()];
                button.primary type="submit" { "Sign in" }
            }
            p { a href="/console/reset" { "Forgot your password?" } }
            @if sign_up_open {
                p { "New here? " a href="/console/sign-up" { "Create an account" } " and get the free allowance." }
            } @else {
                p { "Accounts on this deployment are made by its operator, who sends you an invite link." }
            }
        },
    )
}

/// The sign-up form, or the note that sign-up is closed.
pub fn sign_up(form_token: &str, state: &FormState<'_>, open: bool) -> Page {
    Page::public(
        "Create an account",
        html! {
            @if open {
                form.card method="post" action="/console/sign-up" novalidate {
                    (alert(state.error))
                    (csrf_field(form_token))
                    (email_field(state.email))
                    (new_password_field(!state.email.is_empty()))
                    button.primary type="submit" { "Create account" }
                }
                p { "Already have an account? " a href="/console/sign-in" { "Sign in" } }
            } @else {
                p.alert role="alert" {
                    "Sign-up is closed on this deployment. Its operator creates accounts and sends an invite link."
                }
                p { a href="/console/sign-in" { "Sign in" } }
            }
        },
    )
}

/// What a visitor sees after a mail was (or would have been) sent: the same for every address, so
/// the page tells nobody whether it has an account.
pub fn check_your_mail(title: &str, email: &str, what: &str) -> Page {
    Page::public(
        title,
        html! {
            section.card #check-mail role="status" {
                p { "We sent a mail to " strong { (email) } ". " (what) }
                p.hint { "Nothing after a few minutes? Look in the spam folder, or try again." }
            }
            p { a href="/console/sign-in" { "Back to sign in" } }
        },
    )
}

/// The page a verification link opens: one button, so a mail scanner following the link confirms
/// nothing.
pub fn confirm_address(form_token: &str, link_token: &str) -> Page {
    Page::public(
        "Confirm your email address",
        html! {
            form.card method="post" action={ "/console/verify/" (link_token) } {
                (csrf_field(form_token))
                p { "Confirm that this address is yours to finish creating your account." }
                button.primary #confirm type="submit" { "Confirm and sign in" }
            }
        },
    )
}

/// The form that asks for a password-reset link.
pub fn reset_request(form_token: &str, state: &FormState<'_>, _sign_up_open: bool) -> Page {
    Page::public(
        "Reset your password",
        html! {
            form.card method="post" action="/console/reset" novalidate {
                (alert(state.error))
                (csrf_field(form_token))
                p { "Enter your account's email address and we will mail you a link to choose a new password." }
                (email_field(state.email))
                button.primary type="submit" { "Mail me a link" }
            }
            p { a href="/console/sign-in" { "Back to sign in" } }
        },
    )
}

/// The form a reset link opens: the new password.
pub fn reset_form(form_token: &str, link_token: &str, error: Option<&str>) -> Page {
    Page::public(
        "Choose a new password",
        html! {
            form.card method="post" action={ "/console/reset/" (link_token) } novalidate {
                (alert(error))
                (csrf_field(form_token))
                (new_password_field(true))
                button.primary type="submit" { "Set password and sign in" }
            }
        },
    )
}

/// The form that sets the password of an invited login.
pub fn invite(form_token: &str, invite_token: &str, email: &str, error: Option<&str>) -> Page {
    Page::public(
        "Accept your invite",
        html! {
            form.card method="post" action={ "/console/invite/" (invite_token) } novalidate {
                (alert(error))
                (csrf_field(form_token))
                p { "Choose a password for " strong { (email) } "." }
                input type="hidden" name="email" value=(email) autocomplete="username";
                (new_password_field(true))
                button.primary type="submit" { "Set password and sign in" }
            }
        },
    )
}

/// The email field, focused when still empty.
fn email_field(email: &str) -> maud::Markup {
    html! {
        label for="email" { "Email" }
        input #email type="email" name="email" autocomplete="username" required value=(email) autofocus[email.is_empty()];
    }
}

fn new_password_field(autofocus: bool) -> maud::Markup {
    html! {
        label for="password" { "Password" }
        input #password type="password" name="password" autocomplete="new-password" required
            minlength=(PASSWORD_MIN_CHARS) aria-describedby="password-hint" autofocus[autofocus];
        p.hint #password-hint { "At least " (PASSWORD_MIN_CHARS) " characters. A passphrase of a few words works well." }
    }
}
