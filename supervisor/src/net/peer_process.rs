//! Which process holds the other end of a TCP connection on this host: for the domain
//! proxy, the sandboxed client of a proxy connection, so that a question and the log can
//! name it.
//!
//! The first answer comes from [`ProxyClients`]: every connect of the sandbox to the proxy
//! is performed by the supervisor (run/net_check.rs), which records the connecting thread
//! under the local port the connection got. Only when that port is not there (a connection
//! that did not come from a notified connect) is the client looked for the slow way:
//! the client's socket is found in the kernel's TCP tables (`/proc/net/tcp`, `tcp6`) by its
//! ports — local port the proxy connection's peer port, remote port the proxy's — and its
//! inode is then looked for among the descriptors of every process fence may read
//! (`/proc/PID/fd`). This is information for a person, not a security boundary: the proxy
//! decides on the request, whoever sent it. It costs a walk of `/proc`, so it is done only
//! when a question is asked or the audit log is on. Two fixed-format text tables need no
//! crate.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Mutex;

/// Most connections remembered; beyond, the oldest half is forgotten (their clients are
/// then looked for in `/proc`).
const MAX_REMEMBERED: usize = 4096;

/// The threads that connected to the proxy, by the local port of their connection.
#[derive(Debug, Default)]
pub struct ProxyClients {
    by_port: Mutex<Remembered>,
}

/// A counter of recorded connections, and for each port the number of its latest record
/// and the thread.
type Remembered = (u64, HashMap<u16, (u64, i32)>);

impl ProxyClients {
    /// Thread `tid` connected to the proxy from local port `port`.
    pub fn record(&self, port: u16, tid: i32) {
        let mut guard = self.by_port.lock().unwrap_or_else(|e| e.into_inner());
        let (counter, map) = &mut *guard;
        *counter += 1;
        if map.len() >= MAX_REMEMBERED {
            let cut = *counter - (MAX_REMEMBERED as u64) / 2;
            map.retain(|_, (n, _)| *n >= cut);
        }
        map.insert(port, (*counter, tid));
    }

    /// The thread that connected from `port`, if recorded.
    pub fn get(&self, port: u16) -> Option<i32> {
        let guard = self.by_port.lock().unwrap_or_else(|e| e.into_inner());
        guard.1.get(&port).map(|(_, tid)| *tid)
    }
}

/// The pid (in fence's pid namespace) of a process holding the socket whose local end is
/// `client` and whose remote end is `server`; `None` when none can be found (gone, or not
/// readable by fence).
pub fn owner_of_connection(client: SocketAddr, server: SocketAddr) -> Option<i32> {
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            socket_inode(&text, client.port(), server.port())
        })?;
    let wanted = format!("socket:[{inode}]");
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    // Newer processes first: the client has usually just started.
    pids.sort_unstable_by(|a, b| b.cmp(a));
    pids.into_iter().find(|pid| {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|target| target.as_os_str() == wanted.as_str())
            })
    })
}

/// The inode of the socket in a `/proc/net/tcp` table whose local port is `local_port` and
/// whose remote port is `remote_port`, in any state but listening.
fn socket_inode(table: &str, local_port: u16, remote_port: u16) -> Option<u64> {
    let port_of = |field: &str| {
        let (_, port) = field.rsplit_once(':')?;
        u16::from_str_radix(port, 16).ok()
    };
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 || f[3] == "0A" {
            return None;
        }
        if port_of(f[1])? != local_port || port_of(f[2])? != remote_port {
            return None;
        }
        f[9].parse().ok().filter(|&inode| inode != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_row_is_found_by_its_ports() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0\n\
   1: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 20 4 30 10 -1\n\
   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0 20 4 30 10 -1\n";
        assert_eq!(socket_inode(table, 0xD431, 0x1F90), Some(222));
        assert_eq!(socket_inode(table, 0x1F90, 0xD431), Some(333));
        assert_eq!(
            socket_inode(table, 0x1F90, 0),
            None,
            "a listener is no client"
        );
    }

    #[test]
    fn proxy_clients_remember_the_latest_connections() {
        let clients = ProxyClients::default();
        clients.record(40000, 7);
        clients.record(40000, 8);
        assert_eq!(
            clients.get(40000),
            Some(8),
            "a port reused by a later connection"
        );
        for port in 0..(MAX_REMEMBERED as u16 + 10) {
            clients.record(port, i32::from(port));
        }
        assert_eq!(
            clients.get(MAX_REMEMBERED as u16 + 9),
            Some(i32::from(MAX_REMEMBERED as u16 + 9))
        );
        assert_eq!(clients.get(0), None, "the oldest were forgotten");
    }

    #[test]
    fn a_connection_of_this_process_is_found() {
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(server.local_addr().unwrap()).unwrap();
        let (accepted, peer) = server.accept().unwrap();
        assert_eq!(
            owner_of_connection(peer, accepted.local_addr().unwrap()),
            Some(std::process::id() as i32)
        );
        drop(client);
    }
}
