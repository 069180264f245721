//! The account page: allowance, card on file, invoice balance, sessions.

use super::{csrf_field, usd, Page};
use maud::html;
use service::console::{AccountOverview, ConsoleUser};

/// The account page.
pub fn account_page(user: &ConsoleUser, account: &AccountOverview) -> Page {
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
        section.card aria-labelledby="sessions-heading" {
            h2 #sessions-heading { "Sessions" }
            p { "Signed in on a device you no longer use? Sign out of the console everywhere, this browser included. API keys are not affected." }
            form method="post" action="/console/sign-out-everywhere" {
                (csrf_field(&user.csrf_token))
                button #sign-out-everywhere .secondary type="submit" { "Sign out everywhere" }
            }
        }
    };
    Page::signed_in("Account", user, "account", body)
}
