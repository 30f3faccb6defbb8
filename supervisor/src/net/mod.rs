//! The network policy of a session (SPEC §4): which destinations outside the sandbox's own
//! loopback it may reach directly (`--allow-net`, `--resolve`). The checks and the connects
//! themselves are in `run::net_check`.

pub mod allow;
