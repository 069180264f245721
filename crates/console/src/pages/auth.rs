//! Signed-out pages: sign in, sign up, accept an invite.

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
}

/// The sign-in form.
pub fn sign_in(form_token: &str, state: &FormState<'_>, sign_up_open: bool) -> Page {
    Page::public(
        "Sign in",
        html! {
            form.card method="post" action="/console/sign-in" novalidate {
                (alert(state.error))
                (csrf_field(form_token))
                (email_field(state.email))
                label for="password" { "Password" }
                input #password type="password" name="password" autocomplete="current-password" required
                    autofocus[!state.email.is_empty()];
                button.primary type="submit" { "Sign in" }
            }
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
