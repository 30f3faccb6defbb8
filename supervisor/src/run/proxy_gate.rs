//! The domain proxy's link to the session's gate: a request for a host no `--allow-domain`
//! rule covers becomes a question (host, port, the client process when it can be found),
//! and every decision of the proxy — refusals as `Blocked:` lines, allowed connections when
//! they close, with the bytes they carried — goes to the transcript and the audit log.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use super::blocked_reason::{self, BlockedReason};
use super::path_resolve::Caller;
use super::question::{answer_text, process_info};
use crate::gate::decide::{CallKey, Gate, ProcessInfo, Record, Request, Subject};
use crate::gate::{Destination, EventKind, Level, Route};
use crate::net::peer_process::{ProxyClients, owner_of_connection};
use crate::net::proxy::{HostVerdict, ProxyEvent, ProxyHooks, UnknownHost};

/// What the rule of a proxied question says.
const RULE: &str = "fence.net-domain";
const WHAT: &str = "proxied connection to a host no --allow-domain rule covers";

/// The hooks the session's proxy runs with; `clients` is filled by the connect check.
pub fn hooks(gate: Arc<Gate>, clients: Arc<ProxyClients>, quiet_blocks: bool) -> ProxyHooks {
    let asking = gate.clone();
    let logging = gate.logging();
    ProxyHooks {
        on_event: Arc::new(move |event| record(&gate, &event)),
        ask: Some(Arc::new(move |host| ask(&asking, host, quiet_blocks))),
        identify: Some(Arc::new(move |peer, proxy| {
            clients
                .get(peer.port())
                .or_else(|| owner_of_connection(peer, proxy))
                .map(|pid| process_info(Caller::new(pid)))
        })),
        identify_all: logging,
    }
}

fn client(found: Option<&ProcessInfo>) -> ProcessInfo {
    match found {
        Some(p) => p.clone(),
        // The proxy's peer could not be traced to a process (gone, or not readable).
        None => ProcessInfo {
            pid: 0,
            sandbox_pid: None,
            name: "unknown (through the proxy)".into(),
        },
    }
}

/// Asks the gate about `host`; on a refusal the client process (when known) is told why
/// on its stderr, as for a direct connect.
fn ask(gate: &Gate, host: &UnknownHost, quiet_blocks: bool) -> HostVerdict {
    let authority = authority(&host.host, host.port);
    let request = Request {
        event: EventKind::Connect,
        level: Level::Yellow,
        rule: RULE.into(),
        description: WHAT.into(),
        why: format!("{} request; no --allow-domain rule covers it", host.method),
        subject: Subject::Addr(authority.clone()),
        destination: Some(Destination {
            host: host.host.clone(),
            port: host.port,
            name: None,
            address: host.address.map(|ip| ip.to_string()),
            route: Route::Proxy,
        }),
        process: client(host.client.as_ref()),
        // Not a system call: requests of one process for one host share a question.
        call: CallKey {
            tid: host.client.as_ref().map_or(0, |p| p.pid),
            nr: -1,
            args: [0; 6],
        },
        received: Instant::now(),
    };
    let answer = gate.ask(&request);
    if answer.allows() {
        return HostVerdict::Allowed;
    }
    let text = answer_text(&answer);
    if let Some(p) = host.client.as_ref().filter(|_| !quiet_blocks) {
        blocked_reason::tell(
            Caller::new(p.pid),
            &BlockedReason {
                what: WHAT.into(),
                object: authority.into_bytes(),
                rule: RULE.into(),
                answer: Some(text.clone()),
            },
        );
    }
    HostVerdict::Refused(text)
}

/// `host:port`, with an IPv6 address in brackets.
fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// One decision of the proxy in the transcript (refusals) and the log (all, with the
/// route, the method and, for a connection that closed, the bytes up and down).
fn record(gate: &Gate, event: &ProxyEvent) {
    let subject = Subject::Addr(authority(&event.host, event.port));
    let process = gate.logging().then(|| client(event.client.as_ref()));
    let reason = event
        .reason
        .as_deref()
        .map(|r| format!("{r} (proxy request {})", event.method))
        .unwrap_or_default();
    let mut extra = Map::new();
    extra.insert("route".into(), "proxy".into());
    extra.insert("method".into(), Value::from(event.method.as_str()));
    extra.insert("connection".into(), event.connection.into());
    if event.allowed {
        extra.insert("bytes_up".into(), event.bytes_up.into());
        extra.insert("bytes_down".into(), event.bytes_down.into());
    }
    gate.record_with(
        &Record {
            event: EventKind::Connect,
            subject: &subject,
            process: process.as_ref(),
            level: if event.allowed { "green" } else { "red" },
            action: if event.allowed { "allow" } else { "deny" },
            rule: &event.rule,
            reason: &reason,
            // Each proxy connection is a decision of its own: no refusal of another
            // connection hides its line (the gate shows a thread's repeated refusal once).
            tid: -i32::try_from(event.connection % i32::MAX as u64).unwrap_or(1),
            received: Instant::now(),
        },
        extra,
    );
}
