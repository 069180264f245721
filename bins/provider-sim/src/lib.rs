//! A simulator of two upstream AI media providers, fal.ai's queue API and Replicate's
//! predictions API, served over HTTP on loopback. It speaks both protocols closely enough for a
//! real client (authentication, submission, polling, results, cancellation, signed webhooks and
//! downloadable media made by the workspace's local engines), and it can be told to misbehave
//! through [`Faults`]: slowness, queueing, failures, refusals, malformed answers, errors, hangs,
//! dropped connections and expiring media. Tests and benchmarks start one with
//! [`Simulator::start`]; other processes run the `provider-sim` binary and steer it over
//! `/_sim/faults`, `/_sim/stats` and `/_sim/release`.

#![warn(missing_docs)]

mod control;
mod fal;
mod faults;
mod ids;
mod jobs;
mod media;
mod replicate;
mod request;
mod respond;
mod server;
mod signing;
mod state;
mod stats;
mod sync;
mod webhooks;

pub use faults::Faults;
pub use stats::Stats;

use state::Shared;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// How a simulator is set up.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// The key fal clients must send (`Authorization: Key <fal_key>`).
    pub fal_key: String,
    /// The token Replicate clients must send (`Authorization: Bearer <replicate_token>`).
    pub replicate_token: String,
    /// Where to listen; port 0 picks a free port.
    pub bind: SocketAddr,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            fal_key: "sim-fal-key".into(),
            replicate_token: "sim-replicate-token".into(),
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        }
    }
}

/// A running simulator. Dropping it stops the server and every connection it holds open.
pub struct Simulator {
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
}

impl Simulator {
    /// Binds `config.bind` and starts serving on the current tokio runtime.
    pub async fn start(config: SimConfig) -> std::io::Result<Simulator> {
        let listener = TcpListener::bind(config.bind).await?;
        let base_url = format!("http://{}", listener.local_addr()?);
        let (shutdown, stopped) = watch::channel(false);
        let shared = Arc::new(Shared::new(config, base_url, stopped)?);
        tokio::spawn(server::serve(listener, shared.clone()));
        Ok(Simulator { shared, shutdown })
    }

    /// The base URL, such as `http://127.0.0.1:40123` (no trailing slash).
    pub fn url(&self) -> String {
        self.shared.base_url.clone()
    }

    /// Replaces the faults in force.
    pub fn set_faults(&self, faults: Faults) {
        self.shared.set_faults(faults);
    }

    /// The faults in force, with countdowns as far as they have got.
    pub fn faults(&self) -> Faults {
        self.shared.faults()
    }

    /// What the simulator has seen so far.
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// Lets every job held by [`Faults::hold`] finish (now, or when its run time is up).
    pub fn release_held(&self) {
        self.shared.jobs.release_held();
    }

    /// The Replicate webhook signing secret, `whsec_` followed by base64.
    pub fn webhook_secret(&self) -> String {
        self.shared.signer.replicate_secret()
    }

    /// The ED25519 public key fal webhooks are signed with (also published as JWKS at
    /// `/.well-known/jwks.json`).
    pub fn fal_public_key(&self) -> [u8; 32] {
        self.shared.signer.fal_public_key()
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        self.shutdown.send_replace(true);
    }
}
