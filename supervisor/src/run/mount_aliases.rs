//! Other names of a secret path: another mount of the same file system that shows the
//! folder holding it (a bind of `/` at `/mnt/host`, toolbox's `/run/host`, a second mount
//! of `/home`, a bind of `~/.ssh` itself). The mount view's covers and frozen listings, and
//! Landlock's rules carved around the secrets, work by path: a secret is hidden only where
//! each of its names is, so every other name is hidden as the secret is (security
//! boundary, with the view and the carve).
//!
//! From `/proc/self/mountinfo`: the mount a path is reached through gives its place in the
//! file system (the mount's root joined with the rest of the path); every other mount of
//! the same device whose root holds that place shows it again, under its own mount point.
//! A name found so is kept only where it leads to the same object (device and inode; for
//! a missing secret, its nearest existing folder): a mount stacked over part of it hides
//! the file system beneath.
//!
//! Why by hand: the procfs crate parses mountinfo into owned strings (non-UTF-8 paths
//! lost), and what is done with the mounts here is this module's own.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One line of mountinfo: the device, the mount's root in its file system, its mount point.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    device: Vec<u8>,
    root: PathBuf,
    point: PathBuf,
}

/// The mounts of `mountinfo`'s text, in its order (later ones stacked over earlier ones).
/// Lines that do not parse are skipped: they name no file system fence can place.
fn parse(mountinfo: &[u8]) -> Vec<Mount> {
    mountinfo
        .split(|b| *b == b'\n')
        .filter_map(|line| {
            let mut fields = line.split(|b| *b == b' ');
            let (_id, _parent) = (fields.next()?, fields.next()?);
            let device = fields.next()?.to_vec();
            let root = PathBuf::from(OsStr::from_bytes(&unescape(fields.next()?)));
            let point = PathBuf::from(OsStr::from_bytes(&unescape(fields.next()?)));
            (root.is_absolute() && point.is_absolute()).then_some(Mount {
                device,
                root,
                point,
            })
        })
        .collect()
}

/// A mountinfo field with its `\ooo` octal escapes (space, tab, newline, backslash) undone.
fn unescape(field: &[u8]) -> Vec<u8> {
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

/// The other names `path` (absolute, canonical) has through `mounts`, found from the
/// table alone: for each other mount of its file system, its mount point with the path's
/// place beneath that mount's root, or the mount point itself when the whole mount lies
/// inside the path.
fn candidates(mounts: &[Mount], path: &Path) -> Vec<PathBuf> {
    // The mount the path is reached through: the deepest mount point above it, the last
    // mounted there when several are.
    let Some(own) = mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.point))
        .max_by_key(|(i, m)| (m.point.components().count(), *i))
    else {
        return Vec::new();
    };
    let (own_index, own) = own;
    let Ok(rest) = path.strip_prefix(&own.point) else {
        return Vec::new();
    };
    let place = own.root.join(rest);
    let mut out = Vec::new();
    for (i, m) in mounts.iter().enumerate() {
        if i == own_index || m.device != own.device {
            continue;
        }
        if let Ok(below) = place.strip_prefix(&m.root) {
            let alias = m.point.join(below);
            if alias != path {
                out.push(alias);
            }
        } else if m.root.starts_with(&place) {
            // A mount of a folder inside the secret: all it shows is the secret's.
            out.push(m.point.clone());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// (device, inode) of what `path` leads to, following links.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The nearest existing folder above `path` (or `path` itself when it exists).
fn nearest_existing(path: &Path) -> Option<&Path> {
    path.ancestors().find(|p| p.symlink_metadata().is_ok())
}

/// Every other name of each path of `existing` (canonical, existing) and of `missing`
/// (where a secret would be made), as two lists of the same kinds: the other names of an
/// existing one that lead to it, and of a missing one whose nearest existing folder is
/// the same as the missing one's. Empty, at the cost of one read of mountinfo, where no
/// file system is mounted twice.
pub fn other_names(existing: &[PathBuf], missing: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let Ok(text) = std::fs::read("/proc/self/mountinfo") else {
        return (Vec::new(), Vec::new());
    };
    other_names_in(&parse(&text), existing, missing)
}

fn other_names_in(
    mounts: &[Mount],
    existing: &[PathBuf],
    missing: &[PathBuf],
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut devices: Vec<&[u8]> = mounts.iter().map(|m| m.device.as_slice()).collect();
    devices.sort_unstable();
    if devices.windows(2).all(|w| w[0] != w[1]) {
        return (Vec::new(), Vec::new());
    }
    let mut found_existing = Vec::new();
    for path in existing {
        let Some(id) = identity(path) else { continue };
        for alias in candidates(mounts, path) {
            if identity(&alias) == Some(id) {
                found_existing.push(alias);
            }
        }
    }
    let mut found_missing = Vec::new();
    for path in missing {
        let Some(near) = nearest_existing(path).and_then(identity) else {
            continue;
        };
        for alias in candidates(mounts, path) {
            if alias.symlink_metadata().is_ok() {
                // Made since the table was read, or the alias lands on something else:
                // an existing name of the same object is hidden like the others.
                if identity(&alias) == identity(path) && identity(path).is_some() {
                    found_existing.push(alias);
                }
            } else if nearest_existing(&alias).and_then(identity) == Some(near) {
                found_missing.push(alias);
            }
        }
    }
    for list in [&mut found_existing, &mut found_missing] {
        list.sort();
        list.dedup();
    }
    (found_existing, found_missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(device: &str, root: &str, point: &str) -> Mount {
        Mount {
            device: device.as_bytes().to_vec(),
            root: root.into(),
            point: point.into(),
        }
    }

    #[test]
    fn mountinfo_lines_parse_with_their_escapes() {
        let text = b"22 1 254:0 / / rw - ext4 /dev/vda rw\n\
            30 22 254:0 /home/u /mnt/my\\040home rw - ext4 /dev/vda rw\n\
            garbage\n";
        assert_eq!(
            parse(text),
            vec![
                mount("254:0", "/", "/"),
                mount("254:0", "/home/u", "/mnt/my home"),
            ]
        );
    }

    #[test]
    fn a_secret_has_a_name_under_each_other_mount_of_its_file_system() {
        let mounts = [
            mount("254:0", "/", "/"),
            mount("0:23", "/", "/dev/shm"),
            // / bound again, and the home bound on its own.
            mount("254:0", "/", "/mnt/host"),
            mount("254:0", "/home", "/srv/homes"),
            // A bind of a folder inside the secret folder.
            mount("254:0", "/home/u/.ssh/keys", "/opt/keys"),
            // Another file system: no name there.
            mount("7:0", "/", "/mnt/other"),
        ];
        assert_eq!(
            candidates(&mounts, Path::new("/home/u/.ssh")),
            vec![
                PathBuf::from("/mnt/host/home/u/.ssh"),
                PathBuf::from("/opt/keys"),
                PathBuf::from("/srv/homes/u/.ssh"),
            ]
        );
        // Reached through the second mount, the first names it too.
        assert_eq!(
            candidates(&mounts, Path::new("/srv/homes/u/.netrc")),
            vec![
                PathBuf::from("/home/u/.netrc"),
                PathBuf::from("/mnt/host/home/u/.netrc"),
            ]
        );
        // A path on a file system mounted once has no other name.
        assert!(candidates(&mounts, Path::new("/dev/shm/x")).is_empty());
    }

    /// Only names that lead to the secret itself are kept (checked on real files: a
    /// folder that stands in the table's place but is another folder is no name of it).
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
        let mounts = [
            mount("254:0", "/", "/"),
            mount("254:0", &d(&real), &d(&other)),
        ];
        let (existing, missing) = other_names_in(
            &mounts,
            &[real.join(".ssh")],
            &[real.join(".ssh/id_rsa"), real.join(".netrc")],
        );
        assert!(existing.is_empty(), "{existing:?}");
        assert!(missing.is_empty(), "{missing:?}");
        // No file system mounted twice: nothing looked at.
        let single = [mount("254:0", "/", "/"), mount("0:23", "/", "/dev/shm")];
        assert_eq!(
            other_names_in(&single, &[real.join(".ssh")], &[]),
            (vec![], vec![])
        );
    }
}
