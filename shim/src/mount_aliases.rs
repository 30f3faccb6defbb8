//! The mount table, and the other names it gives a secret path: another mount of the same
//! file system that shows the secret (a bind of `/` at `/mnt/host`, toolbox's `/run/host`,
//! a second mount of `/home`, a bind of `~/.ssh`, of a folder inside it or of one file of
//! it elsewhere). The mount view's covers and frozen listings, and Landlock's rules carved
//! around the secrets, work by path: a secret is hidden only where each of its names is,
//! so every other name is hidden as the secret is (security boundary, with the view and
//! the carve). The supervisor looks before the session starts, for the carve and its
//! checks; the shim looks again in the sandbox's own mount namespace once that is private,
//! so that a mount the host made between the namespace's copy and the supervisor's look is
//! seen too.
//!
//! From `/proc/self/mountinfo`: the mount a path is reached through (its mount id, from
//! `statx`) gives its place in its file system (the mount's root joined with the rest of
//! the path); every other mount of the same device whose root holds that place shows it
//! again under its own mount point, and one whose root lies inside it shows part of it.
//! A mount inside a secret is part of the secret, and its own file system's other mounts
//! are looked at the same way. A name found so is kept only where it leads to the same
//! object (device and inode, the name itself not followed; for a missing secret, its
//! nearest existing folder): a mount stacked over part of it hides what lies beneath.
//!
//! A mount stacked over a secret, or over a folder above one, hides what lies beneath it,
//! which another mount of the file system under it may still show: that name is hidden
//! too, as is a bind of a secret file since replaced by a rename (mountinfo shows its root
//! as `PATH//deleted`: it shows the old file). Not covered: copies (a btrfs snapshot holds
//! the files as they were).
//!
//! Why by hand: the procfs crate parses mountinfo into strings (non-UTF-8 paths lost), and
//! what is done with the mounts here is this module's own.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One line of mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The mount id (field 1), as `statx` gives it with `STATX_MNT_ID`.
    pub id: u64,
    /// The id of the mount it is mounted on (field 2).
    pub parent: u64,
    /// `major:minor` of the file system.
    pub device: Vec<u8>,
    /// The folder of the file system the mount shows.
    pub root: PathBuf,
    /// Where it is mounted.
    pub point: PathBuf,
    /// Mounted read-only (per-mount options, field 6).
    pub read_only: bool,
    /// Its root was removed or replaced since it was mounted (mountinfo shows the root as
    /// `PATH//deleted`; `root` is `PATH`): a bind of a file that a rename has replaced
    /// shows the old one, which no name of the file system leads to any more.
    pub root_deleted: bool,
}

/// The mounts of this process's mount namespace (`/proc/self/mountinfo`).
pub fn table() -> std::io::Result<Vec<Mount>> {
    std::fs::read("/proc/self/mountinfo").map(|text| parse(&text))
}

/// The mounts of `mountinfo`'s text, in its order. Lines that do not parse are skipped:
/// they name no file system a path can be placed in.
pub fn parse(mountinfo: &[u8]) -> Vec<Mount> {
    mountinfo
        .split(|b| *b == b'\n')
        .filter_map(|line| {
            let mut fields = line.split(|b| *b == b' ');
            let id = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
            let parent = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
            let device = fields.next()?.to_vec();
            let mut root_bytes = unescape(fields.next()?);
            let root_deleted = root_bytes.ends_with(b"//deleted");
            if root_deleted {
                root_bytes.truncate(root_bytes.len() - b"//deleted".len());
            }
            let root = PathBuf::from(OsStr::from_bytes(&root_bytes));
            let point = PathBuf::from(OsStr::from_bytes(&unescape(fields.next()?)));
            let read_only = fields.next()?.split(|b| *b == b',').any(|o| o == b"ro");
            (root.is_absolute() && point.is_absolute()).then_some(Mount {
                id,
                parent,
                device,
                root,
                point,
                read_only,
                root_deleted,
            })
        })
        .collect()
}

/// A mountinfo field with its `\ooo` octal escapes (space, tab, newline, backslash) undone.
pub fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field.get(i + 1..i + 4).filter(|d| {
            field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)) && d[0] <= b'3'
        });
        if let Some(d) = octal {
            out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
            i += 4;
        } else {
            out.push(field[i]);
            i += 1;
        }
    }
    out
}

/// What one look at the mounts has found about each path, each path looked up once: the
/// secrets share their folders (the home, `~/.config`, `/etc`), and each missing one's
/// nearest existing folder was otherwise looked up from the secret's name again for each
/// question asked of it (~700 `statx` calls at each start, supervisor and shim together).
/// A look lasts one call of [`other_names`] or [`other_names_of`], microseconds apart, while
/// no sandboxed process runs yet; the shim looks again in its own namespace.
#[derive(Default)]
struct Looks {
    identities: std::cell::RefCell<std::collections::HashMap<PathBuf, Option<(u64, u64)>>>,
    mount_ids: std::cell::RefCell<std::collections::HashMap<PathBuf, Option<u64>>>,
}

impl Looks {
    /// (device, inode) of `path` itself, not followed if a link.
    fn identity(&self, path: &Path) -> Option<(u64, u64)> {
        if let Some(known) = self.identities.borrow().get(path) {
            return *known;
        }
        let found = identity(path);
        self.identities
            .borrow_mut()
            .insert(path.to_path_buf(), found);
        found
    }

    /// Whether `path` exists (a dangling link does).
    fn exists(&self, path: &Path) -> bool {
        self.identity(path).is_some()
    }

    /// The nearest existing path at or above `path`.
    fn nearest_existing<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.ancestors().find(|p| self.exists(p))
    }

    /// The id of the mount `path` lies on ([`mount_id`]).
    fn mount_id(&self, path: &Path) -> Option<u64> {
        if let Some(known) = self.mount_ids.borrow().get(path) {
            return *known;
        }
        let found = mount_id(path);
        self.mount_ids
            .borrow_mut()
            .insert(path.to_path_buf(), found);
        found
    }
}

/// The id of the mount `path` lies on (its last component not followed), from `statx`
/// (Linux 5.8); `None` where the kernel does not say.
fn mount_id(path: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statx>::uninit();
    // SAFETY: a NUL-terminated path and room for one statx.
    let ret = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW | libc::AT_NO_AUTOMOUNT,
            libc::STATX_MNT_ID,
            st.as_mut_ptr(),
        )
    };
    if ret != 0 {
        return None;
    }
    // SAFETY: filled by statx.
    let st = unsafe { st.assume_init() };
    (st.stx_mask & libc::STATX_MNT_ID != 0).then_some(st.stx_mnt_id)
}

/// (device, inode) of `path` itself, not followed if a link.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// The mount `path` (or, when it is missing, its nearest existing folder) is reached
/// through: the one `statx` names, else the deepest mount point above it, the last
/// mounted there.
fn own_mount<'a>(mounts: &'a [Mount], path: &Path, looks: &Looks) -> Option<&'a Mount> {
    if let Some(id) = looks.nearest_existing(path).and_then(|p| looks.mount_id(p))
        && let Some(m) = mounts.iter().find(|m| m.id == id)
    {
        return Some(m);
    }
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.point))
        .max_by_key(|(i, m)| (m.point.components().count(), *i))
        .map(|(_, m)| m)
}

/// `base` joined with `rest`, without the trailing slash an empty `rest` would add.
fn joined(base: &Path, rest: &Path) -> PathBuf {
    if rest.as_os_str().is_empty() {
        base.to_path_buf()
    } else {
        base.join(rest)
    }
}

/// A name another mount gives: `alias`, which must lead to the same object as `original`,
/// unless it shows what was there before a rename replaced it (`replaced`).
struct Candidate {
    alias: PathBuf,
    original: PathBuf,
    replaced: bool,
}

impl Candidate {
    /// Whether the name shows the secret (or what the secret was before it was replaced).
    fn shows_it(&self, looks: &Looks) -> bool {
        self.replaced && looks.exists(&self.alias)
            || looks.identity(&self.original).is_some()
                && looks.identity(&self.alias) == looks.identity(&self.original)
    }
}

/// The other names `path` (absolute, canonical) may have through `mounts`, from the table
/// alone: for each other mount of its file system, its mount point with the path's place
/// beneath that mount's root; or, when the whole mount lies inside the path, its mount
/// point, standing for the folder of the path it shows.
fn candidates(mounts: &[Mount], path: &Path, looks: &Looks) -> Vec<Candidate> {
    match own_mount(mounts, path, looks) {
        Some(own) => names_through(mounts, own, &[own.id], path),
        None => Vec::new(),
    }
}

/// The names other mounts of `through`'s file system (but those of `skip`) give `path`,
/// placed in that file system by `through`, the mount it lies on.
fn names_through(mounts: &[Mount], through: &Mount, skip: &[u64], path: &Path) -> Vec<Candidate> {
    let Ok(rest) = path.strip_prefix(&through.point) else {
        return Vec::new();
    };
    let place = joined(&through.root, rest);
    let mut out = Vec::new();
    for m in mounts {
        if skip.contains(&m.id) || m.device != through.device {
            continue;
        }
        if let Ok(below) = place.strip_prefix(&m.root) {
            let alias = joined(&m.point, below);
            if alias != path {
                out.push(Candidate {
                    alias,
                    original: path.to_path_buf(),
                    replaced: m.root_deleted,
                });
            }
        } else if let Ok(inner) = m.root.strip_prefix(&place) {
            // A mount of a folder inside the secret: all it shows is the secret's.
            out.push(Candidate {
                alias: m.point.clone(),
                original: joined(path, inner),
                replaced: m.root_deleted,
            });
        }
    }
    out
}

/// The other names of the existing folder `path` alone (a root session's `/etc`): the
/// mounts inside it are not looked at (a container's `/etc/hosts` is one).
pub fn other_names_of(mounts: &[Mount], path: &Path) -> Vec<PathBuf> {
    let looks = Looks::default();
    let mut out: Vec<PathBuf> = candidates(mounts, path, &looks)
        .into_iter()
        .filter(|c| c.shows_it(&looks))
        .map(|c| c.alias)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Every other name of each path of `existing` (canonical, existing) and of `missing`
/// (where a secret would be made): names that lead to an existing secret (or to part of
/// it), and names of a missing one whose nearest existing folder is the missing one's.
/// The mounts inside an existing secret are secrets too, with their own other names.
/// `existing` holds the names found in the first list, `missing` in the second.
pub fn other_names(
    mounts: &[Mount],
    existing: &[PathBuf],
    missing: &[PathBuf],
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut devices: Vec<&[u8]> = mounts.iter().map(|m| m.device.as_slice()).collect();
    devices.sort_unstable();
    let shared_device = devices.windows(2).any(|w| w[0] == w[1]);
    let looks = Looks::default();
    let mut found_existing = Vec::new();
    // The secrets and the mount points inside them.
    let mut secrets: Vec<PathBuf> = existing.to_vec();
    for s in existing {
        secrets.extend(
            mounts
                .iter()
                .filter(|m| m.point.starts_with(s) && m.point != *s)
                .map(|m| m.point.clone()),
        );
    }
    secrets.sort();
    secrets.dedup();
    for s in &secrets {
        if !existing.contains(s) {
            // A mount inside a secret: hidden with it, and its other names too.
            found_existing.push(s.clone());
        }
    }
    // One look for each object: the shim is handed the supervisor's list, which holds every
    // name already (200 binds of `/` would make it 200 times 200).
    let mut looked = std::collections::HashSet::new();
    if shared_device {
        for s in &secrets {
            if looks.identity(s).is_some_and(|id| !looked.insert(id)) {
                continue;
            }
            for c in candidates(mounts, s, &looks) {
                if c.shows_it(&looks) {
                    found_existing.push(c.alias);
                }
            }
        }
    }
    // A mount stacked over a secret, or over a folder above one (a tmpfs on the home), hides
    // what lies beneath it, which another mount of the file system under it still shows:
    // those names are hidden too where they exist, with no object to compare them with
    // (the secret's name leads to the mount on top).
    for s in secrets.iter().chain(missing) {
        for top in mounts.iter().filter(|m| s.starts_with(&m.point)) {
            let Some(under) = mounts.iter().find(|m| m.id == top.parent && m.id != top.id) else {
                continue;
            };
            for c in names_through(mounts, under, &[under.id, top.id], s) {
                if looks.exists(&c.alias) {
                    found_existing.push(c.alias);
                }
            }
        }
    }
    let mut found_missing = Vec::new();
    if shared_device {
        for path in missing {
            let Some(near) = looks.nearest_existing(path).and_then(|p| looks.identity(p)) else {
                continue;
            };
            for c in candidates(mounts, path, &looks) {
                if looks.exists(&c.alias) {
                    // Made since it was found missing (or shown as it was before a rename):
                    // an existing name of it is hidden as the others are.
                    if c.shows_it(&looks) {
                        found_existing.push(c.alias);
                    }
                } else if looks
                    .nearest_existing(&c.alias)
                    .and_then(|p| looks.identity(p))
                    == Some(near)
                {
                    found_missing.push(c.alias);
                }
            }
        }
    }
    // `/` is never a name to hide (a bind of `/` inside a secret would make it one).
    for list in [&mut found_existing, &mut found_missing] {
        list.sort();
        list.dedup();
        list.retain(|p| !existing.contains(p) && !missing.contains(p) && p != Path::new("/"));
    }
    (found_existing, found_missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(id: u64, device: &str, root: &str, point: &str) -> Mount {
        Mount {
            id,
            parent: 1,
            device: device.as_bytes().to_vec(),
            root: root.into(),
            point: point.into(),
            read_only: false,
            root_deleted: false,
        }
    }

    fn aliases(mounts: &[Mount], path: &str) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = candidates(mounts, Path::new(path), &Looks::default())
            .into_iter()
            .map(|c| c.alias)
            .collect();
        out.sort();
        out
    }

    #[test]
    fn mountinfo_lines_parse_with_their_escapes() {
        let text = b"22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
            30 22 254:0 /home/u /mnt/my\\040home ro,nosuid - ext4 /dev/vda rw\n\
            31 22 254:0 /x /mnt/\\377 rw - ext4 /dev/vda rw\n\
            32 22 254:0 /home/u/.netrc//deleted /srv/n rw - ext4 /dev/vda rw\n\
            garbage\n";
        let mut ro = mount(30, "254:0", "/home/u", "/mnt/my home");
        ro.read_only = true;
        ro.parent = 22;
        assert_eq!(
            parse(text),
            vec![
                mount(22, "254:0", "/", "/"),
                ro,
                Mount {
                    point: PathBuf::from(OsStr::from_bytes(b"/mnt/\xff")),
                    parent: 22,
                    ..mount(31, "254:0", "/x", "/")
                },
                Mount {
                    parent: 22,
                    root_deleted: true,
                    ..mount(32, "254:0", "/home/u/.netrc", "/srv/n")
                },
            ]
        );
        // An octal escape above \377 is no escape.
        assert_eq!(unescape(b"a\\040b\\477"), b"a b\\477".to_vec());
        assert_eq!(unescape(b"\\134"), b"\\".to_vec());
    }

    #[test]
    fn a_secret_has_a_name_under_each_other_mount_of_its_file_system() {
        // Paths that do not exist here: the mount is found from the table.
        let mounts = [
            mount(1, "254:0", "/", "/"),
            mount(2, "0:23", "/", "/fence-test-none/shm"),
            // / bound again, and the home bound on its own.
            mount(3, "254:0", "/", "/fence-test-none/host"),
            mount(
                4,
                "254:0",
                "/fence-test-none/home",
                "/fence-test-none/homes",
            ),
            // A bind of a folder inside the secret folder, and of one file of it.
            mount(
                5,
                "254:0",
                "/fence-test-none/home/u/.ssh/keys",
                "/fence-test-none/keys",
            ),
            mount(
                6,
                "254:0",
                "/fence-test-none/home/u/.ssh/id",
                "/fence-test-none/id",
            ),
            // Another file system: no name there.
            mount(7, "7:0", "/", "/fence-test-none/other"),
        ];
        assert_eq!(
            aliases(&mounts, "/fence-test-none/home/u/.ssh"),
            vec![
                PathBuf::from("/fence-test-none/homes/u/.ssh"),
                PathBuf::from("/fence-test-none/host/fence-test-none/home/u/.ssh"),
                PathBuf::from("/fence-test-none/id"),
                PathBuf::from("/fence-test-none/keys"),
            ]
        );
        // A file bound elsewhere: its mount point, without a trailing slash.
        assert_eq!(
            aliases(&mounts, "/fence-test-none/home/u/.ssh/id"),
            vec![
                PathBuf::from("/fence-test-none/homes/u/.ssh/id"),
                PathBuf::from("/fence-test-none/host/fence-test-none/home/u/.ssh/id"),
                PathBuf::from("/fence-test-none/id"),
            ]
        );
        // A path on a file system mounted once has no other name.
        assert!(aliases(&mounts, "/fence-test-none/shm/x").is_empty());
    }

    /// Only names that lead to the secret itself are kept, and a mount inside a secret is
    /// one (checked on real files: a folder that stands in the table's place but is
    /// another folder is no name of it).
    #[test]
    fn names_are_kept_only_where_they_lead_to_the_same_object() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        let other = dir.path().join("other");
        std::fs::create_dir_all(real.join(".ssh")).unwrap();
        std::fs::create_dir_all(other.join(".ssh")).unwrap();
        let d = |p: &Path| p.to_str().unwrap().to_string();
        // A table saying `other` shows `real` (as a bind would): its `.ssh` is another
        // folder, so it is no name of the secret.
        let root = own_mount(&table().unwrap(), &real, &Looks::default())
            .unwrap()
            .clone();
        let mounts = [
            root.clone(),
            Mount {
                id: u64::MAX,
                root: PathBuf::from(d(&real)),
                point: other.clone(),
                ..root.clone()
            },
            Mount {
                id: u64::MAX - 1,
                parent: root.id,
                device: b"0:9999".to_vec(),
                root: "/".into(),
                point: real.join(".ssh/inner"),
                read_only: false,
                root_deleted: false,
            },
        ];
        let (existing, missing) = other_names(
            &mounts,
            &[real.join(".ssh")],
            &[real.join(".ssh/id_rsa"), real.join(".netrc")],
        );
        // The mount inside the secret is hidden with it; nothing else.
        assert_eq!(existing, vec![real.join(".ssh/inner")]);
        assert!(missing.is_empty(), "{missing:?}");
    }
}
