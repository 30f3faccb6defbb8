//! The file fence as a Landlock ruleset: writes only in the writable roots and on a short
//! list of devices; reads everywhere except the denied paths; abstract-socket and signal
//! scopes where the ABI has them.
//!
//! "Everything readable except X" cannot be said to Landlock directly (rights are only
//! granted, downward). It is built by granting every sibling along the path from `/` down
//! to each denied path — a snapshot taken at start: an entry created later beside them is
//! not readable. Ancestors of a denied path keep `ReadDir`, so names in them stay
//! listable while the contents of the denied path are not readable.

use std::io;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use crate::channel::SandboxSpec;

/// Oldest Landlock ABI that can express fence's file policy: ABI 3 governs `truncate`;
/// below it a truncate of a file outside the fence is not stopped by the kernel.
pub const MIN_LANDLOCK_ABI: i32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum LandlockFenceError {
    #[error(
        "Landlock is not available in this kernel (needs Linux 5.13 with Landlock enabled at boot: lsm=landlock)"
    )]
    Unsupported,
    #[error(
        "Landlock ABI {0} cannot express the file fence: ABI {MIN_LANDLOCK_ABI} (Linux 6.2) is needed to govern truncate"
    )]
    AbiTooOld(i32),
    #[error(
        "Landlock ABI {0} has no signal or abstract-socket scope (ABI 6, Linux 6.12) and no pid and network namespace could be made to confine them"
    )]
    NoScopes(i32),
    #[error(
        "writable path {writable} lies inside the unreadable path {denied}: the fence cannot express this"
    )]
    WritableInsideDenied { writable: PathBuf, denied: PathBuf },
    #[error("cannot read directory {path} while building the read rules: {source}")]
    ReadDir { path: PathBuf, source: io::Error },
    #[error("Landlock rule for {path} failed: {message}")]
    Rule { path: PathBuf, message: String },
    #[error("Landlock ruleset failed: {0}")]
    Ruleset(String),
    #[error(
        "Landlock enforced the ruleset only partially ({0:?}); fence refuses to run weaker than it says"
    )]
    NotFullyEnforced(RulesetStatus),
}

/// What the sandbox may touch, in Landlock terms.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FencePlan {
    /// Granted read and execute beneath.
    pub read: Vec<PathBuf>,
    /// Granted only `ReadDir` beneath: ancestors of denied paths, so listing works.
    pub list_only: Vec<PathBuf>,
    /// Granted every right beneath.
    pub read_write: Vec<PathBuf>,
    /// Granted write rights but not read: writable roots that contain a denied path (its
    /// readable parts come from `read`).
    pub write_only: Vec<PathBuf>,
    /// Devices granted read, write and ioctl.
    pub devices_rw: Vec<PathBuf>,
    /// Devices granted read only.
    pub devices_ro: Vec<PathBuf>,
    /// Handle TCP bind/connect (with no rule: all refused).
    pub deny_tcp: bool,
    /// Scope abstract unix sockets and signals to the sandbox.
    pub scopes: bool,
}

/// Devices every session may read and write (SPEC §2).
const DEVICES_RW: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/shm",
];
/// Devices every session may read.
const DEVICES_RO: [&str; 2] = ["/dev/random", "/dev/urandom"];

/// Works out the plan for `spec` on a kernel with Landlock ABI `abi`.
pub fn plan(spec: &SandboxSpec, abi: i32) -> Result<FencePlan, LandlockFenceError> {
    if abi <= 0 {
        return Err(LandlockFenceError::Unsupported);
    }
    if abi < MIN_LANDLOCK_ABI {
        return Err(LandlockFenceError::AbiTooOld(abi));
    }
    let ns = spec.namespaces;
    let scopes = abi >= 6;
    if !(scopes || (ns.pid && ns.net)) {
        return Err(LandlockFenceError::NoScopes(abi));
    }

    // /dev is denied as a whole; the short device list is granted back below.
    let mut denied: Vec<PathBuf> = spec.deny_read.iter().map(PathBuf::from).collect();
    denied.push(PathBuf::from("/dev"));
    // In a mount namespace the init has covered the unreadable paths with empty mounts:
    // Landlock then needs to carve out only /dev (they still count for the check below).
    let carved: Vec<PathBuf> = if ns.mount {
        vec![PathBuf::from("/dev")]
    } else {
        denied.clone()
    };

    let mut writable: Vec<PathBuf> =
        vec![PathBuf::from(&spec.worktree), PathBuf::from(&spec.tmpdir)];
    writable.extend(spec.allow_write.iter().map(PathBuf::from));

    let mut plan = FencePlan {
        deny_tcp: !ns.net && abi >= 4,
        scopes,
        ..FencePlan::default()
    };
    for w in &writable {
        // /dev is denied only to grant back its short list, /dev/shm among them.
        let granted_back =
            |d: &&PathBuf| d.as_path() == Path::new("/dev") && w.starts_with("/dev/shm");
        if let Some(d) = denied
            .iter()
            .filter(|d| !granted_back(d))
            .find(|d| w.starts_with(d))
        {
            return Err(LandlockFenceError::WritableInsideDenied {
                writable: w.clone(),
                denied: d.clone(),
            });
        }
        if carved.iter().any(|d| d.starts_with(w)) {
            plan.write_only.push(w.clone());
        } else {
            plan.read_write.push(w.clone());
        }
    }
    grant_read_except(Path::new("/"), &carved, &mut plan)?;

    plan.devices_rw = DEVICES_RW
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();
    if let Some(tty) = &spec.session_tty {
        plan.devices_rw.push(PathBuf::from(tty));
    }
    plan.devices_ro = DEVICES_RO
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();
    if Path::new("/dev").is_dir() {
        plan.list_only.push(PathBuf::from("/dev"));
    }
    Ok(plan)
}

/// Grants read beneath `path` except beneath any of `denied`: `path` itself when no denied
/// path lies in it, else each of its entries in turn. Symlinks get no rule: access through
/// one is judged on the object it reaches, so a link to a secret does not open it.
fn grant_read_except(
    path: &Path,
    denied: &[PathBuf],
    plan: &mut FencePlan,
) -> Result<(), LandlockFenceError> {
    if denied.iter().any(|d| d == path) {
        return Ok(());
    }
    if !denied.iter().any(|d| d.starts_with(path)) {
        plan.read.push(path.to_path_buf());
        return Ok(());
    }
    plan.list_only.push(path.to_path_buf());
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        // Unsearchable by us means unreadable by the sandbox too: no grant is the fence.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => return Ok(()),
        Err(e) => {
            return Err(LandlockFenceError::ReadDir {
                path: path.to_path_buf(),
                source: e,
            });
        }
    };
    for entry in entries {
        let entry = entry.map_err(|e| LandlockFenceError::ReadDir {
            path: path.to_path_buf(),
            source: e,
        })?;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        grant_read_except(&entry.path(), denied, plan)?;
    }
    Ok(())
}

/// Creates the ruleset for `plan` and restricts the calling thread with it. Every
/// requested right must be enforced (hard requirement): a partial result is an error.
pub fn restrict_self(plan: &FencePlan, abi_version: i32) -> Result<(), LandlockFenceError> {
    let abi = ABI::from(abi_version);
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let write = AccessFs::from_write(abi);
    let rs_err = |e: landlock::RulesetError| LandlockFenceError::Ruleset(e.to_string());

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(rs_err)?;
    if plan.deny_tcp {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(rs_err)?;
    }
    if plan.scopes {
        ruleset = ruleset
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(rs_err)?;
    }
    let mut created = ruleset.create().map_err(rs_err)?;

    let groups: [(&[PathBuf], BitFlags<AccessFs>); 6] = [
        (&plan.read, read),
        (&plan.list_only, BitFlags::from(AccessFs::ReadDir)),
        (&plan.read_write, all),
        (&plan.write_only, write),
        (&plan.devices_rw, all),
        (&plan.devices_ro, read),
    ];
    for (paths, access) in groups {
        for path in paths {
            let fd = match PathFd::new(path) {
                Ok(fd) => fd,
                // Gone since planning, or unsearchable: no grant, which is the safe side.
                Err(_) if !path.exists() => continue,
                Err(e) => {
                    return Err(LandlockFenceError::Rule {
                        path: path.clone(),
                        message: e.to_string(),
                    });
                }
            };
            let access = if path.is_dir() {
                access
            } else {
                access & AccessFs::from_file(abi)
            };
            if access.is_empty() {
                continue;
            }
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| LandlockFenceError::Rule {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
        }
    }
    let status = created.restrict_self().map_err(rs_err)?;
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(LandlockFenceError::NotFullyEnforced(status.ruleset));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::Namespaces;

    fn spec(root: &Path, deny: &[&Path]) -> SandboxSpec {
        SandboxSpec {
            argv: vec!["true".into()],
            env: vec![],
            cwd: root.join("wt").into(),
            worktree: root.join("wt").into(),
            tmpdir: root.join("tmp").into(),
            allow_write: vec![],
            deny_read: deny.iter().map(|p| p.as_os_str().to_owned()).collect(),
            session_tty: None,
            namespaces: Namespaces::default(),
            uid: 0,
            gid: 0,
            allow_degraded: false,
            nproc_limit: None,
            tmp_size: None,
        }
    }

    #[test]
    fn siblings_of_a_denied_path_are_granted_but_not_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join("src")).unwrap();
        std::fs::write(home.join(".bashrc"), "").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
        let ssh = home.join(".ssh");
        let plan = plan(&spec(dir.path(), &[&ssh]), 7).unwrap();
        assert!(plan.read.contains(&home.join("src")));
        assert!(plan.read.contains(&home.join(".bashrc")));
        assert!(!plan.read.iter().any(|p| p.starts_with(&ssh)));
        assert!(
            !plan.read.contains(&home.join("keys")),
            "a symlink must not carry a grant"
        );
        assert!(
            !plan
                .read
                .iter()
                .any(|p| p == Path::new("/") || home.starts_with(p))
        );
        assert!(plan.list_only.contains(&home));
    }

    #[test]
    fn old_abi_and_missing_landlock_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            plan(&spec(dir.path(), &[]), 0),
            Err(LandlockFenceError::Unsupported)
        ));
        assert!(matches!(
            plan(&spec(dir.path(), &[]), 2),
            Err(LandlockFenceError::AbiTooOld(2))
        ));
        assert!(matches!(
            plan(&spec(dir.path(), &[]), 5),
            Err(LandlockFenceError::NoScopes(5))
        ));
    }

    #[test]
    fn writable_root_inside_a_denied_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = spec(dir.path(), &[dir.path()]);
        assert!(matches!(
            plan(&s, 7),
            Err(LandlockFenceError::WritableInsideDenied { .. })
        ));
    }
}
