//! The account page: allowance, card on file, invoice balance, sessions.

use super::{alert, csrf_field, usd, Page};
use maud::html;
use service::console::{AccountOverview, ConsoleUser};

/// Why a form of the account page was refused.
#[derive(Default)]
pub struct AccountErrors<'a> {
    /// The password change.
    pub password: Option<&'a str>,
    /// The deletion.
    pub delete: Option<&'a str>,
}

/// The account page.
pub fn account_page(user: &ConsoleUser, account: &AccountOverview, errors: &AccountErrors<'_>) -> Page {
    let body = html! {
        section.card aria-labelledby="standing-heading" {
            h2 #standing-heading { "Balance" }
            dl.facts {
                dt { "Signed in as" } dd { (account.email) }
                dt { "Free allowance left" }
                dd #free-allowance-left { (usd(account.free_allowance_left)) " of " (usd(account.free_allowance)) }
                dt { "Card on file" }
                dd #card-on-file { @if account.card_on_file { "Yes: use beyond the allowance is invoiced" } @else { "No" } }
                dt { "Invoice balance" } dd #invoice-balance { (usd(account.invoice_balance)) }
            }
            @if !account.card_on_file {
                p.hint {
                    "Without a card on file, jobs are refused (HTTP 402) once the free allowance is used up. "
                    "Payments are not taken in the console: your operator records a card with "
                    code { "api-server admin account card " (account.name) " --on" } "."
                }
            }
        }
        section.card aria-labelledby="password-heading" {
            h2 #password-heading { "Password" }
            form #change-password .stacked method="post" action="/console/account/password" novalidate {
                (alert(errors.password))
                (csrf_field(&user.csrf_token))
                input type="hidden" name="email" value=(account.email) autocomplete="username";
                label for="current" { "Current password" }
                input #current type="password" name="current" autocomplete="current-password" required;
                label for="password" { "New password" }
                input #password type="password" name="password" autocomplete="new-password" required
                    minlength=(service::console::PASSWORD_MIN_CHARS);
                p.hint { "Changing it signs you out of the console everywhere else." }
                button.secondary type="submit" { "Change password" }
            }
        }
        section.card aria-labelledby="sessions-heading" {
            h2 #sessions-heading { "Sessions" }
            p { "Signed in on a device you no longer use? Sign out of the console everywhere, this browser included. API keys are not affected." }
            form method="post" action="/console/sign-out-everywhere" {
                (csrf_field(&user.csrf_token))
                button #sign-out-everywhere .secondary type="submit" { "Sign out everywhere" }
            }
        }
        section.card aria-labelledby="delete-heading" {
            h2 #delete-heading { "Delete the account" }
            p { "Every key is revoked at once and its unfinished jobs are cancelled, unbilled; you are signed out and cannot sign in again. Billing records are kept." }
            form #delete-account .stacked method="post" action="/console/account/delete" novalidate {
                (alert(errors.delete))
                (csrf_field(&user.csrf_token))
                label for="delete-password" { "Your password" }
                input #delete-password type="password" name="password" autocomplete="current-password" required;
                button.danger type="submit" { "Delete account" }
            }
        }
    };
    Page::signed_in("Account", user, "account", body)
}
