//! How package tools read their subcommand word. npm and RubyGems take any unambiguous
//! abbreviation of a command (`npm pub` is `npm publish`, `gem pu` is `gem push`), and
//! cargo expands aliases from its config files and environment (`[alias] p = "publish"`),
//! all in the same process: no exec of the command meant is seen, so the word is judged
//! as the command the tool will run.

use std::path::Path;

use crate::path::FsView;

/// npm's commands (`lib/utils/cmd-list.js`, npm 11).
#[rustfmt::skip]
const NPM_COMMANDS: &[&str] = &[
    "access", "adduser", "approve-scripts", "audit", "bugs", "cache", "ci", "completion",
    "config", "dedupe", "deny-scripts", "deprecate", "diff", "dist-tag", "docs", "doctor",
    "edit", "exec", "explain", "explore", "find-dupes", "fund", "get", "help", "help-search",
    "init", "install", "install-ci-test", "install-scripts", "install-test", "link", "ll",
    "login", "logout", "ls", "org", "outdated", "owner", "pack", "ping", "pkg", "prefix",
    "profile", "prune", "publish", "query", "rebuild", "repo", "restart", "root", "run",
    "sbom", "search", "set", "shrinkwrap", "stage", "star", "stars", "start", "stop", "team",
    "test", "token", "trust", "undeprecate", "uninstall", "unpublish", "unstar", "update",
    "version", "view", "whoami",
];

/// npm's aliases, each with the command it runs.
#[rustfmt::skip]
const NPM_ALIASES: &[(&str, &str)] = &[
    ("author", "owner"), ("home", "docs"), ("issues", "bugs"), ("info", "view"),
    ("show", "view"), ("find", "search"), ("add", "install"), ("unlink", "uninstall"),
    ("remove", "uninstall"), ("rm", "uninstall"), ("r", "uninstall"), ("un", "uninstall"),
    ("rb", "rebuild"), ("list", "ls"), ("ln", "link"), ("create", "init"), ("i", "install"),
    ("it", "install-test"), ("cit", "install-ci-test"), ("u", "update"), ("up", "update"),
    ("c", "config"), ("s", "search"), ("se", "search"), ("tst", "test"), ("t", "test"),
    ("ddp", "dedupe"), ("v", "view"), ("run-script", "run"), ("clean-install", "ci"),
    ("clean-install-test", "install-ci-test"), ("x", "exec"), ("why", "explain"),
    ("la", "ll"), ("verison", "version"), ("ic", "ci"), ("innit", "init"), ("in", "install"),
    ("ins", "install"), ("inst", "install"), ("insta", "install"), ("instal", "install"),
    ("isnt", "install"), ("isnta", "install"), ("isntal", "install"), ("isntall", "install"),
    ("install-clean", "ci"), ("isntall-clean", "ci"), ("hlep", "help"),
    ("dist-tags", "dist-tag"), ("upgrade", "update"), ("udpate", "update"), ("rum", "run"),
    ("sit", "install-ci-test"), ("urn", "run"), ("ogr", "org"), ("add-user", "adduser"),
];

/// The npm command the word `typed` runs (npm's `deref`): a command, an alias's command, or
/// the one command or alias it is an unambiguous abbreviation of. `None` when it names
/// none.
pub fn npm_command(typed: &str) -> Option<&'static str> {
    // npm reads `installTest` as `install-test`.
    let mut name = String::with_capacity(typed.len());
    for c in typed.chars() {
        if c.is_ascii_uppercase() {
            name.push('-');
        }
        name.push(c.to_ascii_lowercase());
    }
    let alias = |a: &str| NPM_ALIASES.iter().find(|(n, _)| *n == a).map(|(_, c)| *c);
    if let Some(c) = NPM_COMMANDS.iter().find(|c| **c == name) {
        return Some(c);
    }
    if let Some(c) = alias(&name) {
        return Some(c);
    }
    let mut starting = NPM_COMMANDS
        .iter()
        .copied()
        .chain(NPM_ALIASES.iter().map(|(n, _)| *n))
        .filter(|n| n.starts_with(name.as_str()));
    match (starting.next(), starting.next()) {
        (Some(one), None) => Some(alias(one).unwrap_or(one)),
        _ => None,
    }
}

/// RubyGems' commands (`gem help commands`, RubyGems 3).
#[rustfmt::skip]
const GEM_COMMANDS: &[&str] = &[
    "build", "cert", "check", "cleanup", "contents", "dependency", "environment", "exec",
    "fetch", "generate_index", "help", "info", "install", "list", "lock", "mirror", "open",
    "outdated", "owner", "pristine", "push", "query", "rdoc", "rebuild", "search", "signin",
    "signout", "sources", "specification", "stale", "uninstall", "unpack", "update", "which",
    "yank",
];

/// The gem command the word `typed` runs (`Gem::CommandManager#find_command`): an alias's
/// command, the command of that name, or the one command it starts. `None` when it names
/// none.
pub fn gem_command(typed: &str) -> Option<&'static str> {
    let typed = match typed {
        "i" => "install",
        "login" => "signin",
        "logout" => "signout",
        t => t,
    };
    if let Some(c) = GEM_COMMANDS.iter().find(|c| **c == typed) {
        return Some(c);
    }
    let mut starting = GEM_COMMANDS.iter().filter(|c| c.starts_with(typed));
    match (starting.next(), starting.next()) {
        (Some(one), None) if !typed.is_empty() => Some(one),
        _ => None,
    }
}

/// cargo's own commands, which no alias replaces: those every cargo since 1.66 has. A
/// newer one (`info`) is looked up as an alias too, as an older cargo would.
#[rustfmt::skip]
pub const CARGO_BUILTINS: &[&str] = &[
    "add", "bench", "build", "check", "clean", "doc", "fetch", "fix", "generate-lockfile",
    "git-checkout", "help", "init", "install", "locate-project", "login", "logout",
    "metadata", "new", "owner", "package", "pkgid", "publish", "read-manifest", "remove",
    "run", "rustc", "rustdoc", "search", "test", "tree", "uninstall", "update", "vendor",
    "verify-project", "version", "yank",
];

/// Where cargo reads its aliases for one command.
pub struct CargoConfig<'a> {
    pub fs: &'a dyn FsView,
    /// The working directory: its `.cargo/config.toml` and every parent's.
    pub cwd: &'a Path,
    /// `$CARGO_HOME`, whose `config.toml` comes last.
    pub cargo_home: &'a Path,
    /// The value of `CARGO_ALIAS_<NAME>` in cargo's environment (`Some(None)`: set, to a
    /// value not known).
    pub env_value: Option<Option<String>>,
    /// The `--config` values given before the subcommand: `KEY=VALUE` or a file.
    pub cli: &'a [String],
}

/// A config file is small; more is not read.
const MOST: u64 = 1 << 20;

impl CargoConfig<'_> {
    /// Every definition of the alias `name` cargo may see, lowest precedence first:
    /// `$CARGO_HOME/config.toml`, the config of each folder from `/` down to the working
    /// directory, the environment, `--config`. cargo takes the strongest string and joins
    /// lists in that order, so a caller judges each definition and their join. An error
    /// says why a definition cannot be read.
    pub fn alias(&self, name: &str) -> Result<Vec<Vec<String>>, String> {
        let mut files = vec![self.cargo_home.join("config.toml")];
        let mut dirs: Vec<&Path> = self.cwd.ancestors().collect();
        dirs.reverse();
        for dir in dirs {
            // A folder with both files: cargo reads the one without the extension.
            let plain = dir.join(".cargo/config");
            if self.fs.exists(&plain) {
                files.push(plain);
            } else {
                files.push(dir.join(".cargo/config.toml"));
            }
        }
        // `$CARGO_HOME` may be one of them (`~/.cargo`): read once, as cargo does.
        let mut seen = std::collections::HashSet::new();
        files.retain(|f| seen.insert(f.clone()));
        let mut out = Vec::new();
        for file in files {
            let text = self
                .fs
                .read_file(&file, MOST)
                .map_err(|e| format!("{}: {e}", file.display()))?;
            if let Some(text) = text {
                out.extend(
                    config_alias(&text, name).map_err(|e| format!("{}: {e}", file.display()))?,
                );
            }
        }
        match &self.env_value {
            Some(Some(v)) => out.push(v.split_whitespace().map(str::to_string).collect()),
            Some(None) => return Err(format!("{} is set to a value not known", env_name(name))),
            None => {}
        }
        for c in self.cli {
            // `KEY=VALUE` when it reads as TOML, else a file.
            if let Ok(words) = config_alias(c, name) {
                out.extend(words);
                continue;
            }
            let file = self.cwd.join(c);
            let text = self
                .fs
                .read_file(&file, MOST)
                .map_err(|e| format!("--config {c}: {e}"))?
                .ok_or_else(|| format!("--config {c} cannot be read"))?;
            out.extend(config_alias(&text, name).map_err(|e| format!("--config {c}: {e}"))?);
        }
        Ok(out)
    }
}

/// The environment variable that sets cargo's alias `name`.
pub fn env_name(name: &str) -> String {
    format!(
        "CARGO_ALIAS_{}",
        name.to_ascii_uppercase().replace('-', "_")
    )
}

/// The alias `name` a cargo config text defines: its words, when it does.
fn config_alias(text: &str, name: &str) -> Result<Option<Vec<String>>, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    if table.contains_key("include") {
        return Err("it includes other config files".into());
    }
    let Some(value) = table.get("alias").and_then(|a| a.get(name)) else {
        return Ok(None);
    };
    match value {
        toml::Value::String(s) => Ok(Some(s.split_whitespace().map(str::to_string).collect())),
        toml::Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| format!("alias.{name} is not a list of strings")),
        _ => Err(format!("alias.{name} is neither a string nor a list")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::RealFs;

    #[test]
    fn npm_abbreviations_reach_the_command() {
        for typed in ["pu", "pub", "publ", "publi", "publish"] {
            assert_eq!(npm_command(typed), Some("publish"), "{typed}");
        }
        assert_eq!(npm_command("unp"), Some("unpublish"));
        assert_eq!(npm_command("ln"), Some("link"));
        assert_eq!(npm_command("installTest"), Some("install-test"));
        assert_eq!(npm_command("exe"), Some("exec"));
        // Ambiguous: pack, ping, pkg, prefix, profile, prune, publish.
        assert_eq!(npm_command("p"), None);
        assert_eq!(npm_command("frob"), None);
    }

    #[test]
    fn gem_prefixes_reach_the_command() {
        assert_eq!(gem_command("pu"), Some("push"));
        assert_eq!(gem_command("pus"), Some("push"));
        assert_eq!(gem_command("i"), Some("install"));
        assert_eq!(gem_command("p"), None);
        assert_eq!(gem_command(""), None);
    }

    #[test]
    fn cargo_aliases_come_from_every_config_the_environment_and_the_command_line() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home/.cargo");
        let wt = d.path().join("wt");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(wt.join(".cargo")).unwrap();
        std::fs::write(
            home.join("config.toml"),
            "[alias]\nh = [\"publish\", \"--dry-run\"]\n",
        )
        .unwrap();
        std::fs::write(
            wt.join(".cargo/config.toml"),
            "[alias]\np = \"publish --allow-dirty\"\n",
        )
        .unwrap();
        let cli = vec!["alias.q=\"publish\"".to_string()];
        let config = |env_value| CargoConfig {
            fs: &RealFs,
            cwd: &wt,
            cargo_home: &home,
            env_value,
            cli: &cli,
        };
        assert_eq!(
            config(None).alias("p").unwrap(),
            [["publish", "--allow-dirty"]]
        );
        assert_eq!(config(None).alias("h").unwrap(), [["publish", "--dry-run"]]);
        assert_eq!(config(None).alias("q").unwrap(), [["publish"]]);
        assert_eq!(
            config(Some(Some("publish".into()))).alias("e").unwrap(),
            [["publish"]]
        );
        assert!(config(None).alias("none").unwrap().is_empty());
        assert!(config(Some(None)).alias("e").is_err());
        std::fs::write(wt.join(".cargo/config.toml"), "[alias\n").unwrap();
        assert!(config(None).alias("p").is_err());
    }
}
