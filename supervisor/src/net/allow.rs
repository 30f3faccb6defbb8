//! `--allow-net HOST:PORT` and `--resolve HOST:IP`: the destinations a session may connect
//! to directly.
//!
//! HOST is an IPv4 address, an IPv6 address in brackets, or a name; PORT a number or a range
//! `1000-2000`. Names are resolved by the supervisor once, when the session starts (with
//! `--resolve` taking the place of DNS for the names it gives), and the session allows the
//! addresses they had then. An address in the loopback, private, link-local or
//! cloud-metadata ranges that a *name* resolved to is refused unless that address is
//! allowed by IP (a rule naming it, or `--resolve`), so a name cannot be pointed at the
//! host's own services or the internal network by whoever controls its DNS.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::ops::RangeInclusive;

/// One `--allow-net` rule as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetRule {
    pub host: Host,
    pub ports: RangeInclusive<u16>,
    /// The rule as written, for reasons and the log.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Ip(IpAddr),
    Name(String),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RuleError {
    #[error("{0:?}: expected HOST:PORT (an IPv6 address in brackets: [::1]:443)")]
    Shape(String),
    #[error("{0:?}: the port must be a number 1-65535 or a range such as 1000-2000")]
    Port(String),
    #[error("{0:?}: not a host name or address")]
    Host(String),
    #[error("{0:?}: expected HOST:IP")]
    Resolve(String),
}

/// Parses `HOST:PORT` as `--allow-net` takes it.
pub fn parse_rule(text: &str) -> Result<NetRule, RuleError> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (ip, after) = rest
            .split_once(']')
            .ok_or_else(|| RuleError::Shape(text.into()))?;
        let port = after
            .strip_prefix(':')
            .ok_or_else(|| RuleError::Shape(text.into()))?;
        let ip: std::net::Ipv6Addr = ip.parse().map_err(|_| RuleError::Host(text.into()))?;
        (Host::Ip(IpAddr::V6(ip)), port)
    } else {
        let (host, port) = text
            .rsplit_once(':')
            .ok_or_else(|| RuleError::Shape(text.into()))?;
        if host.contains(':') {
            return Err(RuleError::Shape(text.into()));
        }
        (
            parse_host(host).ok_or_else(|| RuleError::Host(text.into()))?,
            port,
        )
    };
    let ports = parse_ports(port).ok_or_else(|| RuleError::Port(text.into()))?;
    Ok(NetRule {
        host,
        ports,
        text: text.into(),
    })
}

fn parse_host(host: &str) -> Option<Host> {
    if let Ok(ip) = host.parse::<std::net::Ipv4Addr>() {
        return Some(Host::Ip(IpAddr::V4(ip)));
    }
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    (!name.is_empty() && name.len() <= 253 && name.split('.').all(label_ok))
        .then_some(Host::Name(name))
}

fn parse_ports(text: &str) -> Option<RangeInclusive<u16>> {
    let one = |s: &str| s.parse::<u16>().ok().filter(|&p| p != 0);
    match text.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (one(a)?, one(b)?);
            (a <= b).then_some(a..=b)
        }
        None => one(text).map(|p| p..=p),
    }
}

/// Parses `HOST:IP` as `--resolve` takes it (`example.com:127.0.0.1`,
/// `example.com:[::1]` or `example.com:::1`).
pub fn parse_resolve(text: &str) -> Result<(String, IpAddr), RuleError> {
    let err = || RuleError::Resolve(text.into());
    let (name, ip) = text.split_once(':').ok_or_else(err)?;
    let ip = ip.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = ip.parse().map_err(|_| err())?;
    match parse_host(name) {
        Some(Host::Name(n)) => Ok((n, ip)),
        _ => Err(err()),
    }
}

/// Whether `ip` is an address of an interface in fence's own network namespace (the
/// host's, where a sandbox with a namespace of its own has its approved connections made).
///
/// The list is read again at most once a second (a `getifaddrs` is a netlink dump, slow on
/// a host with hundreds of interfaces, and the proxy asks on every connection it makes).
pub fn is_address_of_this_machine(ip: IpAddr) -> bool {
    use std::sync::Mutex;
    use std::time::{Duration, Instant};
    static LAST: Mutex<Option<(Instant, Vec<IpAddr>)>> = Mutex::new(None);
    let read = || -> Vec<IpAddr> {
        nix::ifaddrs::getifaddrs()
            .map(|addrs| {
                addrs
                    .filter_map(|a| {
                        let s = a.address?;
                        s.as_sockaddr_in()
                            .map(|v4| IpAddr::V4(v4.ip()))
                            .or_else(|| s.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
                            .map(|o| o.to_canonical())
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let ip = ip.to_canonical();
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let fresh = last
        .as_ref()
        .is_some_and(|(at, _)| at.elapsed() < Duration::from_secs(1));
    if !fresh {
        *last = Some((Instant::now(), read()));
    }
    last.as_ref().is_some_and(|(_, own)| own.contains(&ip))
}

/// Loopback, private, link-local, unique-local and cloud-metadata addresses (SPEC §4):
/// a name resolving here is refused unless the address is allowed by IP.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                // 100.64/10, carrier-grade NAT, where some clouds put metadata services.
                || (v4.octets()[0] == 100 && v4.octets()[1] & 0xc0 == 64)
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xfe00) == 0xfc00
                || (v6.segments()[0] & 0xffc0) == 0xfe80
        }
    }
}

/// One allowed address and port range, and the rule it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Allowed {
    ip: IpAddr,
    ports: RangeInclusive<u16>,
    rule: String,
}

/// The destinations a session may reach directly, with names already resolved.
#[derive(Debug, Clone, Default)]
pub struct AllowedDestinations {
    allowed: Vec<Allowed>,
}

impl AllowedDestinations {
    /// Resolves the rules' names (`--resolve` first, else the system resolver through
    /// `resolve`) and keeps what may be allowed. Returns the destinations and a warning for
    /// each address refused or name that did not resolve.
    pub fn build(
        rules: &[NetRule],
        overrides: &[(String, IpAddr)],
        resolve: &dyn Fn(&str) -> std::io::Result<Vec<IpAddr>>,
    ) -> (AllowedDestinations, Vec<String>) {
        let mut warnings = Vec::new();
        let mut forced: HashMap<&str, Vec<IpAddr>> = HashMap::new();
        for (name, ip) in overrides {
            forced.entry(name.as_str()).or_default().push(*ip);
        }
        let mut allowed = Vec::new();
        for rule in rules {
            // A name's internal addresses are allowed only where the user mapped that very
            // name (`--resolve`): one the resolver gives (a name whose DNS points at the
            // host's loopback) is refused, whatever else is allowed by address (a rule
            // naming the address allows it on that rule's own ports).
            let mut mapped = false;
            let ips = match &rule.host {
                Host::Ip(ip) => vec![*ip],
                Host::Name(name) => match forced.get(name.as_str()) {
                    Some(ips) => {
                        mapped = true;
                        ips.clone()
                    }
                    None => match resolve(name) {
                        Ok(ips) => ips,
                        Err(e) => {
                            warnings.push(format!(
                                "--allow-net {}: {name} does not resolve ({e}); nothing allowed for it",
                                rule.text
                            ));
                            continue;
                        }
                    },
                },
            };
            for ip in ips {
                let ip = ip.to_canonical();
                if matches!(rule.host, Host::Name(_))
                    && (is_internal(ip) || is_address_of_this_machine(ip))
                    && !mapped
                {
                    warnings.push(format!(
                        "--allow-net {}: resolves to {ip}, a loopback, private or link-local address or one of this machine's: not allowed (allow it by IP, or map the name with --resolve)",
                        rule.text
                    ));
                    continue;
                }
                allowed.push(Allowed {
                    ip,
                    ports: rule.ports.clone(),
                    rule: rule.text.clone(),
                });
            }
        }
        (AllowedDestinations { allowed }, warnings)
    }

    /// Allows `dest` under `rule` (the session's own proxy).
    pub fn add(&mut self, dest: SocketAddr, rule: &str) {
        self.allowed.push(Allowed {
            ip: dest.ip().to_canonical(),
            ports: dest.port()..=dest.port(),
            rule: rule.into(),
        });
    }

    /// The rule that allows a connection to `dest`, if any.
    pub fn rule_for(&self, dest: SocketAddr) -> Option<&str> {
        let ip = dest.ip().to_canonical();
        self.allowed
            .iter()
            .find(|a| a.ip == ip && a.ports.contains(&dest.port()))
            .map(|a| a.rule.as_str())
    }
}

/// The system resolver (getaddrinfo), as the supervisor sees it.
pub fn system_resolve(name: &str) -> std::io::Result<Vec<IpAddr>> {
    Ok((name, 0u16)
        .to_socket_addrs()?
        .map(|a| a.ip())
        .collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_take_ipv4_bracketed_ipv6_names_and_port_ranges() {
        let r = parse_rule("10.1.2.3:443").unwrap();
        assert_eq!(r.host, Host::Ip("10.1.2.3".parse().unwrap()));
        assert_eq!(r.ports, 443..=443);
        let r = parse_rule("[::1]:8000-8010").unwrap();
        assert_eq!(r.host, Host::Ip("::1".parse().unwrap()));
        assert_eq!(r.ports, 8000..=8010);
        let r = parse_rule("API.Example.com.:443").unwrap();
        assert_eq!(r.host, Host::Name("api.example.com".into()));
        for bad in [
            "example.com",
            "::1:443",
            "[::1]443",
            "host:0",
            "host:99999",
            "host:20-10",
            "bad_name:80",
            "-x.com:80",
            ":80",
        ] {
            assert!(parse_rule(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn resolve_overrides_parse() {
        assert_eq!(
            parse_resolve("api.test:127.0.0.1").unwrap(),
            ("api.test".into(), "127.0.0.1".parse().unwrap())
        );
        assert_eq!(
            parse_resolve("api.test:[::1]").unwrap().1,
            "::1".parse::<IpAddr>().unwrap()
        );
        assert!(parse_resolve("api.test").is_err());
        assert!(parse_resolve("api.test:nope").is_err());
    }

    #[test]
    fn a_name_resolving_inside_is_refused_unless_allowed_by_ip() {
        let rules = [
            parse_rule("internal.test:80").unwrap(),
            parse_rule("public.test:443").unwrap(),
            parse_rule("mapped.test:8080").unwrap(),
        ];
        let dns = |name: &str| -> std::io::Result<Vec<IpAddr>> {
            match name {
                "internal.test" => Ok(vec![
                    "127.0.0.1".parse().unwrap(),
                    "169.254.169.254".parse().unwrap(),
                ]),
                "public.test" => Ok(vec!["93.184.216.34".parse().unwrap()]),
                _ => Err(std::io::Error::other("NXDOMAIN")),
            }
        };
        let overrides = [("mapped.test".to_string(), "127.0.0.1".parse().unwrap())];
        let (allowed, warnings) = AllowedDestinations::build(&rules, &[], &dns);
        assert_eq!(allowed.rule_for("127.0.0.1:80".parse().unwrap()), None);
        assert_eq!(
            allowed.rule_for("169.254.169.254:80".parse().unwrap()),
            None
        );
        assert_eq!(
            allowed.rule_for("93.184.216.34:443".parse().unwrap()),
            Some("public.test:443")
        );
        assert_eq!(allowed.rule_for("93.184.216.34:80".parse().unwrap()), None);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        // --resolve maps its own name there, and no other name resolving there.
        let (allowed, _) = AllowedDestinations::build(&rules, &overrides, &dns);
        assert_eq!(
            allowed.rule_for("127.0.0.1:8080".parse().unwrap()),
            Some("mapped.test:8080")
        );
        assert_eq!(allowed.rule_for("127.0.0.1:80".parse().unwrap()), None);
        // A rule naming the address allows it on its own ports only: a name resolving
        // there gets no other port of it.
        let with_ip = [
            parse_rule("127.0.0.1:5432").unwrap(),
            parse_rule("internal.test:80").unwrap(),
        ];
        let (allowed, _) = AllowedDestinations::build(&with_ip, &[], &dns);
        assert_eq!(
            allowed.rule_for("127.0.0.1:5432".parse().unwrap()),
            Some("127.0.0.1:5432")
        );
        assert_eq!(allowed.rule_for("127.0.0.1:80".parse().unwrap()), None);
        assert_eq!(
            allowed.rule_for("169.254.169.254:80".parse().unwrap()),
            None
        );
    }

    #[test]
    fn internal_ranges() {
        for ip in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:2800:220:1::", "172.32.0.1"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn ipv4_mapped_destinations_match_ipv4_rules() {
        let (allowed, _) =
            AllowedDestinations::build(&[parse_rule("127.0.0.1:5432").unwrap()], &[], &|_| {
                Ok(vec![])
            });
        assert!(
            allowed
                .rule_for("[::ffff:127.0.0.1]:5432".parse().unwrap())
                .is_some()
        );
        assert!(
            allowed
                .rule_for("127.0.0.1:5433".parse().unwrap())
                .is_none()
        );
    }
}
