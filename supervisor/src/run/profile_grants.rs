//! `--profile` (or `profile = "NAME"` in the user's config): what a profile adds to this
//! session — its folders and files made writable, its settings kept protected, its domains
//! through the proxy, its API key passed — resolved against the home directory, and the
//! start line that says so.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use policy::profile::{DefaultApprover, Profile};

/// A profile resolved for this session.
#[derive(Debug, Clone)]
pub struct ProfileGrants {
    pub profile: &'static Profile,
    /// Folders and files made writable (canonical).
    pub writable: Vec<PathBuf>,
    /// Protected paths inside them (the folder's canonical path joined with the rest), the
    /// entries of [`Profile::protected_entries`] folders there at start included.
    pub protected: Vec<PathBuf>,
    /// The [`Profile::protected_entries`] folders, with how many entries of each are
    /// protected (`None`: the whole folder, having more than [`MOST_ENTRIES`]).
    pub entries_of: Vec<(PathBuf, Option<usize>)>,
    /// Files of the profile that do not exist, so are not writable.
    pub absent: Vec<PathBuf>,
    /// Folders created for the session (they stay: the agent keeps its state there).
    pub created: Vec<PathBuf>,
    home: Option<PathBuf>,
}

/// Most entries of a [`Profile::protected_entries`] folder protected one by one (each is a
/// read-only bind of the mount view); a folder with more is protected whole, so that the
/// agent's own new file there is asked.
const MOST_ENTRIES: usize = 256;

/// `--profile NAME`: a known profile, or a usage error naming the known ones.
pub fn parse_profile(s: &str) -> Result<&'static Profile, String> {
    policy::profile::lookup(s).map_err(|e| e.to_string())
}

impl ProfileGrants {
    /// Resolves `profile` against `home`: creates its missing folders (mode 0700), finds its
    /// files, and refuses a folder or file whose real path would open the home directory or
    /// an ancestor of it (a symlink such as `~/.claude -> ~`).
    pub fn resolve(
        profile: &'static Profile,
        home: Option<&Path>,
    ) -> Result<ProfileGrants, String> {
        let needs_home = !(profile.folders.is_empty() && profile.files.is_empty());
        let home = match home.filter(|h| h.is_absolute()) {
            Some(h) => Some(h.canonicalize().map_err(|e| {
                format!(
                    "--profile {}: the home directory {}: {e}",
                    profile.name,
                    h.display()
                )
            })?),
            None if needs_home => {
                return Err(format!(
                    "--profile {}: HOME is not set to an absolute path, so its folders ({}) cannot be found",
                    profile.name,
                    profile.folders.join(", ")
                ));
            }
            None => None,
        };
        let mut grants = ProfileGrants {
            profile,
            writable: Vec::new(),
            protected: Vec::new(),
            entries_of: Vec::new(),
            absent: Vec::new(),
            created: Vec::new(),
            home: home.clone(),
        };
        let Some(home) = home else {
            return Ok(grants);
        };
        let fail = |rel: &str, e: &dyn std::fmt::Display| {
            format!("--profile {}: ~/{rel}: {e}", profile.name)
        };
        for rel in profile.folders {
            let path = home.join(rel);
            if path.symlink_metadata().is_err() {
                std::fs::DirBuilder::new()
                    .mode(0o700)
                    .create(&path)
                    .map_err(|e| fail(rel, &format!("cannot create it: {e}")))?;
                grants.created.push(path.clone());
            }
            let real = path.canonicalize().map_err(|e| fail(rel, &e))?;
            if !real.is_dir() {
                return Err(fail(rel, &"not a directory"));
            }
            grants
                .writable
                .push(checked_below_home(&real, &home).map_err(|e| fail(rel, &e))?);
        }
        for rel in profile.files {
            let path = home.join(rel);
            match path.canonicalize() {
                Ok(real) if real.is_file() => {
                    grants
                        .writable
                        .push(checked_below_home(&real, &home).map_err(|e| fail(rel, &e))?);
                }
                Ok(_) => return Err(fail(rel, &"not a regular file")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => grants.absent.push(path),
                Err(e) => return Err(fail(rel, &e)),
            }
        }
        // Inside one of the profile's folders: resolved through the folder's real path, so
        // the check meets the paths the supervisor resolves.
        let inside = |rel: &str| -> Result<PathBuf, String> {
            let Some((folder, real)) = profile
                .folders
                .iter()
                .zip(&grants.writable)
                .find(|(f, _)| Path::new(rel).starts_with(f))
            else {
                return Err(fail(rel, &"protects nothing the profile opens"));
            };
            let rest = Path::new(rel)
                .strip_prefix(folder)
                .unwrap_or(Path::new(rel));
            Ok(real.join(rest))
        };
        let mut protected = Vec::new();
        for rel in profile.protected {
            protected.push(inside(rel)?);
        }
        let mut entries_of = Vec::new();
        for rel in profile.protected_entries {
            let folder = inside(rel)?;
            // A folder that is not there holds nothing of another session's yet; one that
            // cannot be listed is protected whole.
            let names = match std::fs::read_dir(&folder) {
                Ok(list) => list
                    .map(|e| e.map(|e| folder.join(e.file_name())))
                    .take(MOST_ENTRIES + 1)
                    .collect::<std::io::Result<Vec<_>>>()
                    .ok(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(Vec::new()),
                Err(_) => None,
            };
            match names.filter(|n| n.len() <= MOST_ENTRIES) {
                Some(names) => {
                    entries_of.push((folder, Some(names.len())));
                    protected.extend(names);
                }
                None => {
                    protected.push(folder.clone());
                    entries_of.push((folder, None));
                }
            }
        }
        grants.protected = protected;
        grants.entries_of = entries_of;
        Ok(grants)
    }

    /// Adds the profile's domains, variables and default approver to the session's flags.
    pub fn apply_to(&self, args: &mut super::RunArgs) -> Result<(), String> {
        for d in self.profile.domains {
            let rule = crate::net::proxy::parse_domain_rule(d)
                .map_err(|e| format!("--profile {}: domain {d}: {e}", self.profile.name))?;
            args.allow_domain.push(rule);
        }
        args.env
            .extend(self.profile.env.iter().map(|v| v.to_string()));
        if args.approver.is_none() {
            args.approver = self
                .profile
                .approver
                .map(|DefaultApprover::Deny| super::approval::ApproverChoice::Deny);
        }
        Ok(())
    }

    /// The start line: what the profile opened, what stays protected, what it passes.
    pub fn banner(&self) -> String {
        let show = |p: &Path| self.tilde(p);
        let list = |paths: &[PathBuf]| paths.iter().map(|p| show(p)).collect::<Vec<_>>().join(", ");
        let mut parts = Vec::new();
        if !self.writable.is_empty() {
            parts.push(format!("writable {}", list(&self.writable)));
        }
        // The entries of a `protected_entries` folder are said as the folder's.
        let named: Vec<PathBuf> = self
            .protected
            .iter()
            .filter(|p| {
                !self
                    .entries_of
                    .iter()
                    .any(|(f, each)| each.is_some() && p.parent() == Some(f.as_path()))
            })
            .cloned()
            .collect();
        if !named.is_empty() {
            parts.push(format!(
                "protected {} (a write there is asked)",
                list(&named)
            ));
        }
        for (folder, each) in &self.entries_of {
            if let Some(n) = each.filter(|n| *n > 0) {
                parts.push(format!(
                    "the {n} entr{} of {} kept as they are (new ones may be made)",
                    if n == 1 { "y" } else { "ies" },
                    show(folder)
                ));
            }
        }
        if !self.absent.is_empty() {
            parts.push(format!("absent, so not writable: {}", list(&self.absent)));
        }
        if !self.created.is_empty() {
            parts.push(format!("created {}", list(&self.created)));
        }
        if self.profile.domains.is_empty() {
            parts.push("no domains".into());
        } else {
            parts.push(format!(
                "domains {} through the proxy",
                self.profile.domains.join(", ")
            ));
        }
        if !self.profile.env.is_empty() {
            parts.push(format!("passes {}", self.profile.env.join(", ")));
        }
        if self.profile.approver == Some(DefaultApprover::Deny) {
            parts.push("questions answered No unless --approver says otherwise".into());
        }
        format!(
            "fence: profile {} ({}): {}",
            self.profile.name,
            self.profile.description,
            parts.join("; ")
        )
    }

    /// `path` with the home directory shown as `~`, escaped for the terminal.
    fn tilde(&self, path: &Path) -> String {
        let shown = match self.home.as_deref().and_then(|h| path.strip_prefix(h).ok()) {
            Some(rest) => format!("~/{}", rest.display()),
            None => path.display().to_string(),
        };
        crate::escape::for_terminal(&shown)
    }
}

/// `real` when it lies strictly below `home`'s subtree or elsewhere without containing
/// `home`: a profile must never make the home directory itself, or `/`, writable.
fn checked_below_home(real: &Path, home: &Path) -> Result<PathBuf, String> {
    if home.starts_with(real) {
        return Err(format!(
            "resolves to {}, which holds the home directory: refused",
            real.display()
        ));
    }
    Ok(real.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(name: &str) -> &'static Profile {
        policy::profile::find(name).unwrap()
    }

    /// Another session's shell snapshot there at start is protected, one by one, and the
    /// folder is not: the session makes its own. A folder with more entries than are bound
    /// one by one is protected whole.
    #[test]
    fn the_entries_of_a_snapshot_folder_at_start_are_protected_one_by_one() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        let snapshots = h.join(".claude/shell-snapshots");
        std::fs::create_dir_all(&snapshots).unwrap();
        std::fs::write(snapshots.join("snapshot-bash-1-a.sh"), "# other session\n").unwrap();
        std::fs::write(snapshots.join("snapshot-zsh-2-b.sh"), "# other session\n").unwrap();
        let g = ProfileGrants::resolve(profile("claude"), Some(&h)).unwrap();
        assert!(
            g.protected
                .contains(&snapshots.join("snapshot-bash-1-a.sh"))
        );
        assert!(g.protected.contains(&snapshots.join("snapshot-zsh-2-b.sh")));
        assert!(!g.protected.contains(&snapshots));
        assert_eq!(g.entries_of, [(snapshots.clone(), Some(2))]);
        let banner = g.banner();
        assert!(
            banner.contains("the 2 entries of ~/.claude/shell-snapshots kept as they are")
                && !banner.contains("snapshot-bash-1-a.sh"),
            "{banner}"
        );
        for i in 0..=MOST_ENTRIES {
            std::fs::write(snapshots.join(format!("s{i}.sh")), "").unwrap();
        }
        let g = ProfileGrants::resolve(profile("claude"), Some(&h)).unwrap();
        assert!(g.protected.contains(&snapshots));
        assert_eq!(g.entries_of, [(snapshots.clone(), None)]);
        assert!(g.banner().contains("~/.claude/shell-snapshots"));
    }

    #[test]
    fn folders_are_created_files_found_and_settings_protected() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        std::fs::write(h.join(".claude.json"), "{}").unwrap();
        let g = ProfileGrants::resolve(profile("claude"), Some(&h)).unwrap();
        assert_eq!(g.writable, [h.join(".claude"), h.join(".claude.json")]);
        assert!(h.join(".claude").is_dir());
        assert_eq!(g.created, [h.join(".claude")]);
        assert_eq!(
            g.protected,
            [
                h.join(".claude/settings.json"),
                h.join(".claude/settings.local.json"),
                h.join(".claude/hooks"),
                h.join(".claude/commands"),
                h.join(".claude/skills"),
                h.join(".claude/agents"),
                h.join(".claude/plugins/cache"),
                h.join(".claude/plugins/installed_plugins.json"),
                h.join(".claude/plugins/known_marketplaces.json"),
                h.join(".claude/plugins/marketplaces"),
                h.join(".claude/local"),
                h.join(".claude/CLAUDE.md"),
            ]
        );
        let banner = g.banner();
        assert!(
            banner.starts_with("fence: profile claude (Claude Code): writable ~/.claude, ~/.claude.json; protected ~/.claude/settings.json"),
            "{banner}"
        );
        assert!(banner.contains("passes ANTHROPIC_API_KEY"), "{banner}");
    }

    #[test]
    fn an_absent_file_is_named_and_not_opened() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        let g = ProfileGrants::resolve(profile("claude"), Some(&h)).unwrap();
        assert_eq!(g.writable, [h.join(".claude")]);
        assert_eq!(g.absent, [h.join(".claude.json")]);
        assert!(
            g.banner()
                .contains("absent, so not writable: ~/.claude.json")
        );
    }

    #[test]
    fn a_folder_resolving_to_the_home_directory_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(&h, h.join(".codex")).unwrap();
        let e = ProfileGrants::resolve(profile("codex"), Some(&h)).unwrap_err();
        assert!(e.contains("holds the home directory"), "{e}");
        std::fs::remove_file(h.join(".codex")).unwrap();
        std::os::unix::fs::symlink("/", h.join(".codex")).unwrap();
        assert!(ProfileGrants::resolve(profile("codex"), Some(&h)).is_err());
    }

    #[test]
    fn protected_paths_follow_the_folders_real_path() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        std::fs::create_dir(h.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(h.join("elsewhere"), h.join(".gemini")).unwrap();
        let g = ProfileGrants::resolve(profile("gemini"), Some(&h)).unwrap();
        assert_eq!(g.writable, [h.join("elsewhere")]);
        assert!(g.protected.contains(&h.join("elsewhere/settings.json")));
    }

    fn run_args(flags: &[&str]) -> super::super::RunArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            run: super::super::RunArgs,
        }
        let argv = ["fence"].iter().chain(flags).chain(&["--", "true"]);
        <Cli as clap::Parser>::try_parse_from(argv).unwrap().run
    }

    #[test]
    fn a_profile_adds_to_the_flags_and_the_flags_still_apply() {
        use super::super::approval::ApproverChoice;
        let home = tempfile::tempdir().unwrap();
        let g = ProfileGrants::resolve(profile("gemini"), Some(home.path())).unwrap();
        let mut args = run_args(&["--allow-domain", "example.com", "--env", "MY_TOKEN"]);
        g.apply_to(&mut args).unwrap();
        assert_eq!(args.allow_domain.len(), 4);
        assert_eq!(args.env, ["MY_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY"]);
        assert_eq!(args.approver, None);

        let ci = ProfileGrants::resolve(profile("ci"), None).unwrap();
        let mut args = run_args(&[]);
        ci.apply_to(&mut args).unwrap();
        assert_eq!(args.approver, Some(ApproverChoice::Deny));
        assert!(args.allow_domain.is_empty() && args.env.is_empty());
        let mut args = run_args(&["--approver", "socket"]);
        ci.apply_to(&mut args).unwrap();
        assert_eq!(args.approver, Some(ApproverChoice::Socket));
    }

    #[test]
    fn ci_needs_no_home_and_opens_nothing() {
        let g = ProfileGrants::resolve(profile("ci"), None).unwrap();
        assert!(g.writable.is_empty() && g.protected.is_empty());
        assert!(g.banner().contains("no domains"), "{}", g.banner());
        assert!(ProfileGrants::resolve(profile("aider"), None).is_err());
    }
}
