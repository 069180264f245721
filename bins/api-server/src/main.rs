//! `api-server`: the HTTP API (with the job worker in-process on embedded deployments), plus the
//! operator's `migrate` and `admin` commands.

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use domain::Usd;
use service::{AppConfig, Service};
use tokio::sync::watch;

#[derive(Parser)]
#[command(name = "api-server", version, about = "Media generation API server")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API (the default command).
    Serve(ServeArgs),
    /// Apply pending database migrations and exit.
    Migrate,
    /// Print the OpenAPI 3.1 description.
    Openapi,
    /// Operator commands: accounts, keys, caps, ledger.
    #[command(subcommand)]
    Admin(Admin),
}

#[derive(Args, Default)]
struct ServeArgs {
    /// Do not run jobs in this process (run `worker` processes instead).
    #[arg(long)]
    no_worker: bool,
}

#[derive(Subcommand)]
enum Admin {
    /// Accounts.
    #[command(subcommand)]
    Account(AccountCmd),
    /// API keys.
    #[command(subcommand)]
    Key(KeyCmd),
    /// Check that every stored balance equals its recomputation from the ledger.
    VerifyLedger,
    /// Provider work by provider and engine: billed beside the providers' costs.
    Margin {
        /// Work finished in this many days back.
        #[arg(long, default_value_t = 30)]
        days: u32,
    },
}

#[derive(Subcommand)]
enum AccountCmd {
    /// Create an account with the deployment's free allowance.
    Create {
        /// Unique account name.
        name: String,
        /// The account has a card on file (use beyond the allowance is invoiced).
        #[arg(long)]
        card_on_file: bool,
    },
    /// Set or clear the card-on-file flag.
    Card {
        /// Account name.
        name: String,
        /// A card is on file.
        #[arg(long, conflicts_with = "off", required_unless_present = "off")]
        on: bool,
        /// No card is on file.
        #[arg(long)]
        off: bool,
    },
    /// Print the account's ledger (holds, captures, releases).
    Ledger {
        /// Account name.
        name: String,
    },
    /// Delete an account: revoke every key (cancelling its unfinished jobs, unbilled) and remove its
    /// console login. The ledger stays.
    Delete {
        /// Account name.
        name: String,
    },
    /// Print an invite link that gives the account a developer-console login (valid 7 days,
    /// used once). The link is a secret: send it to that person only.
    Invite {
        /// Account name.
        name: String,
        /// The email the login signs in with.
        #[arg(long)]
        email: String,
    },
}

#[derive(Subcommand)]
enum KeyCmd {
    /// Create a key; the secret is printed alone on the last line and never shown again.
    Create {
        /// Owning account.
        #[arg(long)]
        account: String,
        /// Cumulative spend cap in USD.
        #[arg(long)]
        spend_cap: Option<Usd>,
        /// Free-text label.
        #[arg(long)]
        label: Option<String>,
    },
    /// Revoke a key: it gets 401 everywhere from now on.
    Revoke {
        /// Key id (`key_...`).
        key_id: String,
    },
    /// List an account's keys.
    List {
        /// Account name.
        #[arg(long)]
        account: String,
    },
    /// Change a key's spend cap.
    Cap {
        /// Key id.
        key_id: String,
        /// New cap in USD.
        #[arg(long, conflicts_with = "none", required_unless_present = "none")]
        usd: Option<Usd>,
        /// Remove the cap.
        #[arg(long)]
        none: bool,
    },
    /// Set a key's own request rates, per minute (either left out: the deployment's default,
    /// RATE_LIMIT_SUBMITS_PER_MINUTE and RATE_LIMIT_READS_PER_MINUTE; 0: no limit).
    Rate {
        /// Key id.
        key_id: String,
        /// Spending requests per minute (generate, the recipes, the spending tools).
        #[arg(long)]
        submits_per_minute: Option<u32>,
        /// Other authenticated requests per minute (polls, usage, models, the connector).
        #[arg(long)]
        reads_per_minute: Option<u32>,
    },
    /// Show or change a key's webhooks: its default target (used by its jobs that name no
    /// `webhook_url`) and its signing secret. With no option, shows them.
    Webhook {
        /// Key id.
        key_id: String,
        /// Default webhook URL of the key's jobs.
        #[arg(long, conflicts_with = "clear")]
        url: Option<String>,
        /// With `--url`: send `running` too, not only terminal states.
        #[arg(long, requires = "url")]
        running: bool,
        /// Remove the default webhook.
        #[arg(long)]
        clear: bool,
        /// Make a new signing secret, printed alone on the last line once; the old one keeps
        /// signing beside it for 24 hours.
        #[arg(long)]
        rotate_secret: bool,
    },
}

fn main() -> Result<std::process::ExitCode> {
    // A job process (see `service::JobIsolation`): not a command for operators, so not in --help.
    if std::env::args().nth(1).as_deref() == Some(service::CHILD_COMMAND) {
        return Ok(service::child_main());
    }
    let _logging = service::logging::init(
        service::logging::LogFormat::from_env().map_err(anyhow::Error::msg)?,
        "info,actix_server=warn",
    );
    let cli = Cli::parse();
    let config = AppConfig::from_env()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let outcome = match cli.command.unwrap_or(Command::Serve(ServeArgs::default())) {
        Command::Serve(args) => runtime.block_on(serve(config, args)),
        Command::Migrate => {
            config.build_service().context("migrating the database")?;
            println!("database is up to date");
            Ok(())
        }
        Command::Openapi => {
            let service = config.build_service()?;
            println!("{}", http::openapi_json(service.engines().catalog().engines()));
            Ok(())
        }
        Command::Admin(admin) => runtime.block_on(async {
            let service = config.build_service()?;
            run_admin(&service, admin).await
        }),
    };
    // By now every unfinished job has been released to the queue; media work still running on a
    // blocking thread cannot be interrupted, and waiting for it would hold the exit hostage.
    runtime.shutdown_background();
    outcome.map(|()| std::process::ExitCode::SUCCESS)
}

async fn serve(config: AppConfig, args: ServeArgs) -> Result<()> {
    for line in config.describe() {
        tracing::info!("config {line}");
    }
    let service = config.build_service()?;
    if config.is_embedded() {
        if let Some(new_key) = service.operator().bootstrap_dev_key().await? {
            println!(
                "First start: created account \"dev\" with key {} (free allowance {} USD).",
                new_key.key.id, config.free_allowance
            );
            if let Some(webhook_secret) = &new_key.webhook_secret {
                println!("Its webhook signing secret (shown only now): {webhook_secret}");
            }
            println!("Its secret is shown only now; keep it:");
            println!("{}", new_key.secret);
        }
    }
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let worker = (config.embedded_worker && !args.no_worker).then(|| {
        let worker_config =
            worker::WorkerConfig::from_app_config(&config, format!("api-server-{}", std::process::id()));
        tokio::spawn(worker::run(service.clone(), worker_config, shutdown_rx))
    });
    let listener =
        std::net::TcpListener::bind(&config.bind_addr).with_context(|| format!("binding {}", config.bind_addr))?;
    let addr = listener.local_addr()?;
    let server = http::serve(service.clone(), listener, config.http_workers)?;
    tracing::info!(%addr, public = %config.public_base_url, worker = worker.is_some(), "api-server listening");
    let handle = server.handle();
    let server = tokio::spawn(server);
    worker::termination_signal().await;
    tracing::info!("shutting down: no new jobs are claimed; running jobs get {:?}", config.shutdown_grace);
    let _ = shutdown_tx.send(true);
    handle.stop(true).await;
    if let Some(worker) = worker {
        let _ = worker.await;
    }
    let _ = server.await;
    // Dropped last, once the HTTP workers let go of theirs, so its database listener stops cleanly.
    if !service.until_sole_handle(std::time::Duration::from_secs(5)).await {
        tracing::warn!("the HTTP workers still hold the service; exiting anyway");
    }
    Ok(())
}

async fn run_admin(service: &Service, admin: Admin) -> Result<()> {
    match admin {
        Admin::Account(AccountCmd::Create { name, card_on_file }) => {
            let account = service.operator().create_account(&name, card_on_file).await?;
            println!(
                "created account {} ({}), free allowance {} USD, card on file: {}",
                account.name,
                account.id,
                Usd::from_units(account.free_allowance_units),
                account.card_on_file
            );
        }
        Admin::Account(AccountCmd::Card { name, on, .. }) => {
            let account = service.operator().set_card_on_file(&name, on).await?;
            println!("account {}: card on file: {}", account.name, account.card_on_file);
        }
        Admin::Account(AccountCmd::Ledger { name }) => {
            println!("{:>6}  {:<28}  {:<8}  {:>12}  {:>12}", "seq", "task", "kind", "amount_usd", "allowance_usd");
            for e in service.operator().account_ledger(&name).await? {
                println!(
                    "{:>6}  {:<28}  {:<8}  {:>12}  {:>12}",
                    e.id,
                    e.task_id,
                    e.kind,
                    Usd::from_units(e.amount_units),
                    Usd::from_units(e.allowance_units)
                );
            }
        }
        Admin::Account(AccountCmd::Delete { name }) => {
            let revoked = service.operator().delete_account(&name).await?;
            println!("deleted account {name}: {revoked} keys revoked, its console login removed; the ledger stays");
        }
        Admin::Account(AccountCmd::Invite { name, email }) => {
            let link = service.console().invite(&name, &email).await?;
            println!("invite for {email} to account {name} (valid 7 days, single use; send it to them only):");
            println!("{link}");
        }
        Admin::Key(KeyCmd::Create { account, spend_cap, label }) => {
            let new_key = service.operator().create_key(&account, spend_cap, label.as_deref()).await?;
            let cap = spend_cap.map_or("none".to_string(), |c| format!("{c} USD"));
            println!("created key {} for account {account} (spend cap: {cap})", new_key.key.id);
            if let Some(webhook_secret) = &new_key.webhook_secret {
                println!("webhook signing secret (shown only now): {webhook_secret}");
            }
            println!("secret (shown only now):");
            println!("{}", new_key.secret);
        }
        Admin::Key(KeyCmd::Revoke { key_id }) => {
            let key = service.operator().revoke_key(&key_id).await?;
            println!("revoked key {}", key.id);
        }
        Admin::Key(KeyCmd::List { account }) => {
            println!(
                "{:<28}  {:<8}  {:>12}  {:>12}  {:>12}  label",
                "key", "state", "spent_usd", "held_usd", "cap_usd"
            );
            for key in service.operator().list_keys(&account).await? {
                let limits = key.limits();
                println!(
                    "{:<28}  {:<8}  {:>12}  {:>12}  {:>12}  {}",
                    key.id,
                    if key.revoked_at.is_some() { "revoked" } else { "active" },
                    limits.spent,
                    limits.held,
                    limits.cap.map_or("-".to_string(), |c| c.to_string()),
                    key.label.unwrap_or_default()
                );
            }
        }
        Admin::Key(KeyCmd::Cap { key_id, usd, .. }) => {
            let key = service.operator().set_spend_cap(&key_id, usd).await?;
            let cap = key.limits().cap.map_or("none".to_string(), |c| format!("{c} USD"));
            println!("key {}: spend cap {cap}", key.id);
        }
        Admin::Key(KeyCmd::Rate { key_id, submits_per_minute, reads_per_minute }) => {
            let rates = service::rate_limit::KeyRates { submits_per_minute, reads_per_minute };
            service.operator().set_key_rates(&key_id, rates).await?;
            let shown = |rate: Option<u32>| rate.map_or("the default".to_string(), |r| format!("{r}/min"));
            println!("key {key_id}: submits {}, reads {}", shown(submits_per_minute), shown(reads_per_minute));
        }
        Admin::Key(KeyCmd::Webhook { key_id, url, running, clear, rotate_secret }) => {
            let operator = service.operator();
            // First, so a key without a secret can be given a default in the same call.
            let new_secret = if rotate_secret { Some(operator.rotate_webhook_secret(&key_id).await?) } else { None };
            if url.is_some() || clear {
                operator.set_default_webhook(&key_id, url.as_deref(), running).await?;
            }
            let settings = operator.key_webhook(&key_id).await?;
            match &settings.default {
                Some(default) => println!(
                    "key {key_id}: default webhook {} ({})",
                    default.url,
                    if default.on_running { "running and completed" } else { "completed" }
                ),
                None => println!("key {key_id}: no default webhook"),
            }
            if let Some(secret) = new_secret {
                println!("new webhook signing secret (shown only now; the previous one signs too for 24 hours):");
                println!("{secret}");
            } else if !settings.has_secret {
                println!("no webhook signing secret yet: make one with --rotate-secret");
            }
        }
        Admin::Margin { days } => {
            println!(
                "{:<10}  {:<18}  {:>6}  {:>12}  {:>8}  {:>12}  {:>12}  {:>10}",
                "provider", "engine", "tasks", "billed_usd", "costed", "provider_usd", "margin_usd", "compute_s"
            );
            for m in service.operator().provider_margins(days).await? {
                let provider_cost = Usd::from_units(m.provider_cost_units);
                let margin = domain::billing::margin(Usd::from_units(m.costed_billed_units), provider_cost);
                println!(
                    "{:<10}  {:<18}  {:>6}  {:>12}  {:>8}  {:>12}  {:>12}  {:>10.1}",
                    m.provider,
                    m.engine,
                    m.tasks,
                    Usd::from_units(m.billed_units),
                    m.costed_tasks,
                    provider_cost,
                    margin,
                    m.provider_millis as f64 / 1000.0
                );
            }
        }
        Admin::VerifyLedger => {
            let mismatches = service.operator().verify_ledger().await?;
            if mismatches.is_empty() {
                println!("ledger verified: every balance equals its recomputation");
            } else {
                for m in &mismatches {
                    println!("MISMATCH {} {}: stored {} recomputed {}", m.owner, m.balance, m.stored, m.recomputed);
                }
                anyhow::bail!("{} balances differ from the ledger", mismatches.len());
            }
        }
    }
    Ok(())
}
