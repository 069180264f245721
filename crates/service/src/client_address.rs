//! The address a request comes from, as rate limits count it. A forwarded header is believed only
//! when the peer that sent it is one of the deployment's trusted proxies: anyone else could write
//! any address into it.

use ipnet::IpNet;
use std::net::IpAddr;

/// The proxies whose `X-Forwarded-For` is believed (`TRUSTED_PROXIES`; none by default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    networks: Vec<IpNet>,
}

impl TrustedProxies {
    /// Parses a comma-separated list of addresses and networks (`10.0.0.0/8, 192.0.2.7`).
    pub fn parse(list: &str) -> Result<TrustedProxies, String> {
        let mut networks = Vec::new();
        for item in list.split(',').map(str::trim).filter(|item| !item.is_empty()) {
            let network = match item.parse::<IpNet>() {
                Ok(network) => network,
                Err(_) => item
                    .parse::<IpAddr>()
                    .map(IpNet::from)
                    .map_err(|_| format!("{item:?} is neither an IP address nor a network such as 10.0.0.0/8"))?,
            };
            networks.push(network);
        }
        Ok(TrustedProxies { networks })
    }

    fn trusts(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.networks.iter().any(|network| network.contains(&address))
    }

    /// The client of a request from `peer` carrying `forwarded_for` (the `X-Forwarded-For`
    /// values, in order): the peer itself unless it is a trusted proxy; otherwise the nearest
    /// address in the header that is not a trusted proxy, read from the right, since each proxy
    /// appends the address it saw and only the ones we trust are honest.
    pub fn client(&self, peer: IpAddr, forwarded_for: &[&str]) -> IpAddr {
        let mut client = canonical(peer);
        if !self.trusts(client) {
            return client;
        }
        let hops = forwarded_for.iter().rev().flat_map(|value| value.rsplit(',')).map(str::trim);
        for hop in hops {
            let Ok(address) = hop.parse::<IpAddr>() else {
                // A malformed entry was not written by a proxy we trust: stop at the last sure one.
                return client;
            };
            client = canonical(address);
            if !self.trusts(client) {
                return client;
            }
        }
        client
    }
}

impl std::fmt::Display for TrustedProxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.networks.is_empty() {
            return f.write_str("none");
        }
        let list: Vec<String> = self.networks.iter().map(IpNet::to_string).collect();
        f.write_str(&list.join(","))
    }
}

/// IPv4 addresses that arrive mapped into IPv6 (`::ffff:192.0.2.7`) count as themselves.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn forwarded_headers_count_only_behind_a_trusted_proxy() {
        let none = TrustedProxies::default();
        // Nobody trusted: a forged header changes nothing.
        assert_eq!(none.client(ip("203.0.113.9"), &["198.51.100.1"]), ip("203.0.113.9"));

        let proxies = TrustedProxies::parse("10.0.0.0/8, 192.0.2.7").unwrap();
        // From an untrusted peer, the header is ignored.
        assert_eq!(proxies.client(ip("203.0.113.9"), &["198.51.100.1"]), ip("203.0.113.9"));
        // Behind the proxy, the address it appended is the client, whatever the client wrote
        // before it.
        assert_eq!(proxies.client(ip("10.1.2.3"), &["6.6.6.6, 198.51.100.1"]), ip("198.51.100.1"));
        assert_eq!(proxies.client(ip("10.1.2.3"), &["6.6.6.6", "198.51.100.1, 192.0.2.7"]), ip("198.51.100.1"));
        // A proxy that sent no header is the client itself; a forged garbage entry stops the walk.
        assert_eq!(proxies.client(ip("10.1.2.3"), &[]), ip("10.1.2.3"));
        assert_eq!(proxies.client(ip("10.1.2.3"), &["not-an-address"]), ip("10.1.2.3"));
        assert_eq!(proxies.client(ip("::ffff:10.9.9.9"), &["198.51.100.1"]), ip("198.51.100.1"));
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
        assert!(TrustedProxies::parse("proxy.internal").is_err());
    }
}
