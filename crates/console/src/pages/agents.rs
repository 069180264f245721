//! An agent's consent page (what it asks for, the spend limit, Allow or Deny) and the list of
//! connected agents, each of which can be disconnected at once.

use super::{alert, csrf_field, usd, when, Page};
use maud::{html, Markup};
use service::console::ConsoleUser;
use service::oauth::{AuthorizationRequest, ConnectedAgent, DEFAULT_CONNECTION_CAP};

/// The consent page of `request`.
pub fn consent_page(user: &ConsoleUser, request: &AuthorizationRequest, error: Option<&str>) -> Page {
    let params = &request.params;
    let redirect = url::Url::parse(&params.redirect_uri).ok();
    let destination = redirect
        .as_ref()
        .map(|u| u.host_str().map_or_else(|| format!("{}:", u.scheme()), str::to_string))
        .unwrap_or_default();
    let hidden = |name: &str, value: &str| html! { input type="hidden" name=(name) value=(value); };
    let body = html! {
        form #consent .card method="post" action="/console/authorize" {
            (alert(error))
            (csrf_field(&user.csrf_token))
            (hidden("response_type", &params.response_type))
            (hidden("client_id", &params.client_id))
            (hidden("redirect_uri", &params.redirect_uri))
            (hidden("code_challenge", &params.code_challenge))
            (hidden("code_challenge_method", &params.code_challenge_method))
            @if let Some(state) = &params.state { (hidden("state", state)) }
            @if let Some(scope) = &params.scope { (hidden("scope", scope)) }
            @if let Some(resource) = &params.resource { (hidden("resource", resource)) }
            p { strong #client-name { (request.client_name) } " asks to connect to your account (" (user.email) ")." }
            p { "Once connected, it may:" }
            ul #grants {
                li { "list the engines and their prices;" }
                li { "start image, video and audio jobs and the real-estate recipes, billed to this account;" }
                li { "read and cancel the jobs it started (not your other keys' jobs)." }
            }
            p { "It never sees your password or your API keys. After you answer, you go back to "
                code #redirect-host { (destination) } "." }
            div.field {
                label for="spend_cap" { "Spend limit for this connection (USD)" }
                input #spend_cap type="text" name="spend_cap" inputmode="decimal" value=(DEFAULT_CONNECTION_CAP)
                    aria-describedby="cap-hint" required;
                p.hint #cap-hint { "Jobs past this total are refused (HTTP 402). Change it under API keys, where the \
                                   connection is listed as “agent: …”, or disconnect the agent under Agents." }
            }
            div.buttons {
                button #allow .primary type="submit" name="decision" value="allow" { "Allow" }
                button #deny .secondary type="submit" name="decision" value="deny" { "Deny" }
            }
        }
    };
    let source = redirect.map(|u| match u.scheme() {
        "http" | "https" => u.origin().ascii_serialization(),
        scheme => format!("{scheme}:"),
    });
    let page = Page::signed_in("Connect an agent", user, "agents", body);
    match source {
        Some(source) => page.form_target(source),
        None => page,
    }
}

/// The connected agents page.
pub fn agents_page(user: &ConsoleUser, agents: &[ConnectedAgent]) -> Page {
    let body = html! {
        p { "Agents connect through OAuth with only the connector's address, " code { "/api/mcp" } "; each \
             connection spends from this account up to its own limit." }
        @if agents.is_empty() {
            p { "No agent is connected." }
        } @else {
            div.table-scroll {
                table #agents {
                    thead { tr {
                        th scope="col" { "Agent" } th scope="col" { "Connected" } th scope="col" { "Last used" }
                        th scope="col" .num { "Spent" } th scope="col" .num { "Limit" } th scope="col" { "Status" }
                        th scope="col" { span.visually-hidden { "Actions" } }
                    } }
                    tbody { @for agent in agents { (agent_row(user, agent)) } }
                }
            }
        }
    };
    Page::signed_in("Connected agents", user, "agents", body)
}

fn agent_row(user: &ConsoleUser, agent: &ConnectedAgent) -> Markup {
    html! {
        tr data-agent=(agent.key_id) {
            td { (agent.client_name) }
            td { (when(agent.connected_at)) }
            td { (agent.last_used_at.map_or("never".to_string(), when)) }
            td.num { (usd(agent.limits.spent)) }
            td.num { (agent.limits.cap.map_or("none".to_string(), usd)) }
            td.status { @if agent.disconnected_at.is_some() { "disconnected" } @else { "connected" } }
            td.actions {
                @if agent.disconnected_at.is_none() {
                    form.disconnect method="post" action={ "/console/agents/" (agent.key_id) "/disconnect" } {
                        (csrf_field(&user.csrf_token))
                        button.danger type="submit" { "Disconnect" span.visually-hidden { " " (agent.client_name) } }
                    }
                }
            }
        }
    }
}
