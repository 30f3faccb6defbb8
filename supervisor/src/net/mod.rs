//! The network policy of a session (SPEC §4): which destinations outside the sandbox's own
//! loopback it may reach directly (`--allow-net`, `--resolve`; the checks and the connects
//! themselves are in `run::net_check`), and the proxy that enforces `--allow-domain`.

pub mod allow;
pub mod dns;
pub mod peer_process;
pub mod proxy;
