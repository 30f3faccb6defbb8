//! Config: custom prefix rules, action overrides, extra secret paths and
//! exceptions, from TOML.
//!
//! ```toml
//! mode = "default"                 # default | auto | plan | ask-all
//! deny_read = ["~/.config/vault"]  # more secret paths
//! exceptions = ["/opt/sdk"]        # paths the line context treats as inside
//! profile = "claude"               # fence run's profile when --profile is not given
//!
//! [actions]                        # change a built-in rule's action
//! "git.reset-hard" = "deny"
//!
//! [[rules]]                        # custom prefix rules
//! prefix = "terraform apply"
//! description = "Changes real infrastructure"
//! action = "deny"                  # allow | ask | deny
//! contexts = ["line", "exec"]      # optional; both by default
//! ```
//!
//! A config file that lies inside the worktree can be written by the agent,
//! so it may only make things stricter: anything in it that would loosen a
//! rule is skipped with a warning. A file that cannot be read or parsed is an
//! error; a single rule that cannot be read is skipped with a warning naming
//! it, and every other rule still applies.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::level::{Action, Contexts, Level, Mode};
use crate::rules::{BUILTIN_RULES, Origin, Rule, RuleTable};

/// Where a config file came from, and whether it may only tighten.
#[derive(Debug, Clone)]
pub struct ConfigSource {
    pub path: PathBuf,
    /// Inside the worktree: may only make rules stricter.
    pub restricted: bool,
}

/// Something in a config that was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub file: PathBuf,
    pub what: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} (skipped)", self.file.display(), self.what)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    // Not a `source`: the message says it once (fence prints an error with its chain).
    #[error("cannot read config {path}: {reason}")]
    Read {
        path: PathBuf,
        reason: std::io::Error,
    },
    #[error("config {path} is not valid TOML: {message}")]
    Syntax { path: PathBuf, message: String },
}

/// The merged result of the config files.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The mode the config asks for, if any.
    pub mode: Option<Mode>,
    pub deny_read: Vec<String>,
    pub exceptions: Vec<PathBuf>,
    pub warnings: Vec<Warning>,
    /// Strictest mode asked for by a restricted file (applies over the CLI).
    pub min_mode: Option<Mode>,
    /// The `[network]` table (SPEC §4), as written; `fence run` parses the entries.
    pub network: NetworkConfig,
    /// `profile = "NAME"`: the profile `fence run` applies when `--profile` is not given.
    /// Only the user's config (or `--config`) may name one: a profile widens the fence.
    pub profile: Option<&'static crate::profile::Profile>,
}

/// `[network]`: what `fence run` may reach beyond its own loopback, as its flags of the
/// same names take it. Only the user's config (or `--config`) may set it: a file inside
/// the worktree may not widen the fence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkConfig {
    pub allow_net: Vec<String>,
    pub allow_domain: Vec<String>,
    pub allow_unix: Vec<String>,
    pub resolve: Vec<String>,
    /// `allow_dns = true`: as `--allow-dns`.
    pub allow_dns: bool,
}

impl Config {
    /// Reads `sources` in order and applies them to `table`.
    pub fn load(sources: &[ConfigSource], table: &mut RuleTable) -> Result<Config, ConfigError> {
        let mut cfg = Config::default();
        for src in sources {
            let text = read_source(src).map_err(|e| ConfigError::Read {
                path: src.path.clone(),
                reason: e,
            })?;
            cfg.apply_text(&text, src, table)?;
        }
        Ok(cfg)
    }

    /// Applies one file's text.
    pub fn apply_text(
        &mut self,
        text: &str,
        src: &ConfigSource,
        table: &mut RuleTable,
    ) -> Result<(), ConfigError> {
        let doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Syntax {
                path: src.path.clone(),
                message: e.message().to_string(),
            })?;
        let warn = |cfg: &mut Config, what: String| {
            cfg.warnings.push(Warning {
                file: src.path.clone(),
                what,
            })
        };
        for (key, value) in &doc {
            match key.as_str() {
                "mode" => match value.as_str().map(str::parse::<Mode>) {
                    Some(Ok(m)) if src.restricted => {
                        if m.strictness() >= Mode::Default.strictness() {
                            self.min_mode = Some(match self.min_mode {
                                Some(old) if old.strictness() >= m.strictness() => old,
                                _ => m,
                            });
                        } else {
                            warn(self, format!("mode `{m}` would loosen the policy; a config inside the worktree may only tighten it"));
                        }
                    }
                    Some(Ok(m)) => self.mode = Some(m),
                    Some(Err(e)) => warn(self, format!("mode: {e}")),
                    None => warn(self, "mode must be a string".into()),
                },
                "profile" => match value.as_str() {
                    Some(_) if src.restricted => warn(
                        self,
                        "profile would widen the fence (folders, domains, variables); a config inside the worktree may only tighten it".into(),
                    ),
                    Some(name) => match crate::profile::lookup(name) {
                        Ok(p) => self.profile = Some(p),
                        Err(e) => warn(self, format!("profile: {e}")),
                    },
                    None => warn(self, "profile must be a string".into()),
                },
                "deny_read" => match string_list(value) {
                    Some(list) => self.deny_read.extend(list),
                    None => warn(self, "deny_read must be a list of paths".into()),
                },
                "exceptions" => match string_list(value) {
                    Some(_) if src.restricted => warn(
                        self,
                        "exceptions would widen the path fence; a config inside the worktree may only tighten it".into(),
                    ),
                    Some(list) => self.exceptions.extend(
                        list.into_iter()
                            .map(PathBuf::from)
                            .filter(|p| p.is_absolute()),
                    ),
                    None => warn(self, "exceptions must be a list of absolute paths".into()),
                },
                "actions" => match value.as_table() {
                    Some(t) => {
                        for (id, action) in t {
                            if let Err(what) = apply_override(table, id, action, src.restricted) {
                                warn(self, what);
                            }
                        }
                    }
                    None => warn(self, "[actions] must be a table of rule id = action".into()),
                },
                "rules" => match value.as_array() {
                    Some(list) => {
                        for (i, r) in list.iter().enumerate() {
                            match custom_rule(r, i, src.restricted, table) {
                                Ok(rule) => table.rules.push(rule),
                                Err(what) => warn(self, what),
                            }
                        }
                    }
                    None => warn(self, "rules must be an array of [[rules]] tables".into()),
                },
                "network" => match value.as_table() {
                    Some(_) if src.restricted => warn(
                        self,
                        "[network] would widen the network fence; a config inside the worktree may only tighten it".into(),
                    ),
                    Some(t) => {
                        for (k, v) in t {
                            if k == "allow_dns" {
                                match v.as_bool() {
                                    Some(b) => self.network.allow_dns |= b,
                                    None => warn(self, "network.allow_dns must be true or false".into()),
                                }
                                continue;
                            }
                            let list = match k.as_str() {
                                "allow_net" => &mut self.network.allow_net,
                                "allow_domain" => &mut self.network.allow_domain,
                                "allow_unix" => &mut self.network.allow_unix,
                                "resolve" => &mut self.network.resolve,
                                other => {
                                    warn(self, format!("unknown key `network.{other}`"));
                                    continue;
                                }
                            };
                            match string_list(v) {
                                Some(items) => list.extend(items),
                                None => warn(self, format!("network.{k} must be a list of strings")),
                            }
                        }
                    }
                    None => warn(self, "[network] must be a table".into()),
                },
                other => warn(self, format!("unknown key `{other}`")),
            }
        }
        Ok(())
    }
}

fn string_list(v: &toml::Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_str().map(str::to_string))
        .collect()
}

fn apply_override(
    table: &mut RuleTable,
    id: &str,
    action: &toml::Value,
    restricted: bool,
) -> Result<(), String> {
    let Some(idx) = table.find(id) else {
        return Err(format!("[actions] names unknown rule `{id}`"));
    };
    let action: Action = action
        .as_str()
        .ok_or_else(|| format!("[actions] `{id}` must be allow, ask or deny"))?
        .parse()
        .map_err(|e| format!("[actions] `{id}`: {e}"))?;
    let rule = &mut table.rules[idx];
    if rule.absolute && action != Action::Deny {
        return Err(format!(
            "`{id}` is an absolute refusal; it can only stay deny"
        ));
    }
    if restricted && action < rule.action {
        return Err(format!(
            "[actions] `{id}` = {action} would loosen the rule ({}); a config inside the worktree may only tighten it",
            rule.action
        ));
    }
    rule.action = action;
    Ok(())
}

fn custom_rule(
    v: &toml::Value,
    index: usize,
    restricted: bool,
    table: &RuleTable,
) -> Result<Rule, String> {
    let t = v
        .as_table()
        .ok_or_else(|| format!("rules[{index}] is not a table"))?;
    let name = t
        .get("prefix")
        .and_then(|p| p.as_str())
        .map(|p| format!("rules[{index}] (`{p}`)"))
        .unwrap_or_else(|| format!("rules[{index}]"));
    for k in t.keys() {
        if !matches!(
            k.as_str(),
            "prefix" | "description" | "action" | "contexts" | "id"
        ) {
            return Err(format!("{name}: unknown field `{k}`"));
        }
    }
    let prefix = t
        .get("prefix")
        .and_then(|p| p.as_str())
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| format!("{name}: needs a non-empty `prefix`"))?
        .to_string();
    let action: Action = t
        .get("action")
        .and_then(|a| a.as_str())
        .ok_or_else(|| format!("{name}: needs an `action` (allow, ask or deny)"))?
        .parse()
        .map_err(|e| format!("{name}: {e}"))?;
    if restricted && action == Action::Allow {
        return Err(format!(
            "{name}: an allow rule would loosen the policy; a config inside the worktree may only tighten it"
        ));
    }
    let description = match t.get("description") {
        None => prefix.clone(),
        Some(d) => d
            .as_str()
            .ok_or_else(|| format!("{name}: `description` must be a string"))?
            .to_string(),
    };
    let contexts = match t.get("contexts") {
        None => Contexts::BOTH,
        Some(c) => {
            let list =
                string_list(c).ok_or_else(|| format!("{name}: `contexts` must be a list"))?;
            let mut ctx = Contexts {
                line: false,
                exec: false,
            };
            for c in &list {
                match c.as_str() {
                    "line" => ctx.line = true,
                    "exec" => ctx.exec = true,
                    other => return Err(format!("{name}: unknown context `{other}`")),
                }
            }
            if !ctx.line && !ctx.exec {
                return Err(format!("{name}: `contexts` is empty"));
            }
            ctx
        }
    };
    let id = match t.get("id") {
        Some(i) => {
            let id = i
                .as_str()
                .ok_or_else(|| format!("{name}: `id` must be a string"))?
                .to_string();
            if !id.contains('.') {
                return Err(format!("{name}: id `{id}` must be namespace.name"));
            }
            id
        }
        None => format!("custom.{}", slug(&prefix)),
    };
    if BUILTIN_RULES.iter().any(|b| b.name == id) {
        return Err(format!("{name}: id `{id}` is a built-in rule's"));
    }
    let mut id = id;
    let mut n = 2;
    while table.find(&id).is_some() {
        id = format!(
            "{}-{n}",
            id.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-')
        );
        n += 1;
    }
    let level = match action {
        Action::Allow => Level::Green,
        Action::Ask => Level::Yellow,
        Action::Deny => Level::Red,
    };
    Ok(Rule {
        id,
        description,
        commands: vec![prefix.clone()],
        level,
        absolute: false,
        contexts,
        action,
        origin: Origin::Custom { prefix },
    })
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() { "rule".into() } else { out }
}

/// The user's config file: `$XDG_CONFIG_HOME/fence/config.toml`, else
/// `~/.config/fence/config.toml`.
pub fn user_config_path(home: Option<&Path>, xdg_config_home: Option<&Path>) -> Option<PathBuf> {
    match xdg_config_home.filter(|p| p.is_absolute()) {
        Some(x) => Some(x.join("fence/config.toml")),
        None => home.map(|h| h.join(".config/fence/config.toml")),
    }
}

/// The project config inside the worktree (tighten-only).
pub const WORKTREE_CONFIG: &str = ".fence.toml";

/// Most bytes a config file inside the worktree may hold.
const MOST_RESTRICTED_BYTES: u64 = 1 << 20;

/// A config file's text. One inside the worktree (`restricted`) is the sandbox's to write:
/// it is read only as a regular file of at most [`MOST_RESTRICTED_BYTES`], its last name
/// not followed ([`read_regular_file`]). A symlink planted there would have fence read,
/// with the user's rights, a file the sandbox may not (a key, a device that never ends, a
/// FIFO that never opens); such a config is an error, so the session does not start
/// without the rules it may hold.
fn read_source(src: &ConfigSource) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind};
    if !src.restricted {
        return std::fs::read_to_string(&src.path);
    }
    read_regular_file(&src.path, false, MOST_RESTRICTED_BYTES).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            Error::other("a symbolic link; a config inside the worktree must be a regular file")
        } else if e.kind() == ErrorKind::InvalidInput {
            Error::other("not a regular file; a config inside the worktree must be one")
        } else {
            e
        }
    })
}

/// The text of `path` when it is a regular file of at most `most` bytes (else
/// `InvalidInput`, or `FileTooLarge`): opened without waiting (a FIFO opens at once and is
/// then turned down) and without becoming the caller's terminal, its last name followed
/// only when `follow` (else `ELOOP`). For files the sandbox may have written: none of them
/// holds fence or grows it without bound.
pub fn read_regular_file(path: &Path, follow: bool, most: u64) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    use std::os::unix::fs::OpenOptionsExt;
    let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | nofollow)
        .open(path)?;
    let too_large = || Error::new(ErrorKind::FileTooLarge, format!("larger than {most} bytes"));
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    if meta.len() > most {
        return Err(too_large());
    }
    // Bounded again while reading: the file may grow after the look at its size.
    let mut text = String::new();
    file.take(most + 1).read_to_string(&mut text)?;
    if text.len() as u64 > most {
        return Err(too_large());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, restricted: bool) -> (RuleTable, Config) {
        let mut table = RuleTable::default();
        let mut cfg = Config::default();
        cfg.apply_text(
            text,
            &ConfigSource {
                path: PathBuf::from("test.toml"),
                restricted,
            },
            &mut table,
        )
        .unwrap();
        (table, cfg)
    }

    #[test]
    fn network_keys_come_from_the_user_config_only() {
        let text = "[network]\nallow_dns = true\nallow_net = [\"10.0.0.5:5432\"]\nallow_domain = [\"*.example.com\"]\nallow_unix = [\"/run/agent.sock\"]\nresolve = [\"api.test:127.0.0.1\"]\nbogus = 1\n";
        let (_, c) = load(text, false);
        assert_eq!(c.network.allow_net, ["10.0.0.5:5432"]);
        assert_eq!(c.network.allow_domain, ["*.example.com"]);
        assert_eq!(c.network.allow_unix, ["/run/agent.sock"]);
        assert_eq!(c.network.resolve, ["api.test:127.0.0.1"]);
        assert!(c.network.allow_dns);
        assert!(c.warnings.iter().any(|w| w.what.contains("network.bogus")));
        let (_, c) = load(text, true);
        assert_eq!(c.network, NetworkConfig::default());
        assert!(
            c.warnings
                .iter()
                .any(|w| w.what.contains("may only tighten"))
        );
    }

    #[test]
    fn a_profile_comes_from_the_user_config_only() {
        let (_, c) = load("profile = \"claude\"\n", false);
        assert_eq!(c.profile.map(|p| p.name), Some("claude"));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let (_, c) = load("profile = \"claude\"\n", true);
        assert_eq!(c.profile, None);
        assert!(
            c.warnings[0].what.contains("may only tighten"),
            "{:?}",
            c.warnings
        );
        let (_, c) = load("profile = \"vim\"\n", false);
        assert_eq!(c.profile, None);
        assert!(
            c.warnings[0].what.contains("known profiles: claude, codex"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn custom_rules_and_overrides() {
        let (t, c) = load(
            r#"
            mode = "auto"
            [actions]
            "git.reset-hard" = "deny"
            [[rules]]
            prefix = "terraform apply"
            action = "deny"
            description = "infra"
            "#,
            false,
        );
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.mode, Some(Mode::Auto));
        let r = &t.rules[t.find("git.reset-hard").unwrap()];
        assert_eq!(r.action, Action::Deny);
        let custom: Vec<_> = t.custom().collect();
        assert_eq!(custom[0].id, "custom.terraform-apply");
    }

    #[test]
    fn bad_rules_are_skipped_with_a_warning_naming_them() {
        let (t, c) = load(
            r#"
            [[rules]]
            prefix = "ok"
            action = "ask"
            [[rules]]
            prefix = "broken"
            action = "maybe"
            [[rules]]
            action = "deny"
            [actions]
            "git.push-main" = "ask"
            "no.such" = "deny"
            "#,
            false,
        );
        assert_eq!(t.custom().count(), 1);
        assert_eq!(c.warnings.len(), 4, "{:?}", c.warnings);
        assert!(
            c.warnings[0].what.contains("broken")
                || c.warnings.iter().any(|w| w.what.contains("broken"))
        );
        assert_eq!(
            t.rules[t.find("git.push-main").unwrap()].action,
            Action::Deny
        );
    }

    #[test]
    fn worktree_config_may_only_tighten() {
        let (t, c) = load(
            r#"
            mode = "auto"
            exceptions = ["/"]
            [actions]
            "git.push" = "allow"
            "fs.rm" = "deny"
            [[rules]]
            prefix = "curl"
            action = "allow"
            [[rules]]
            prefix = "make deploy"
            action = "deny"
            "#,
            true,
        );
        assert_eq!(c.mode, None);
        assert!(c.exceptions.is_empty());
        assert_eq!(t.rules[t.find("git.push").unwrap()].action, Action::Ask);
        assert_eq!(t.rules[t.find("fs.rm").unwrap()].action, Action::Deny);
        assert_eq!(t.custom().count(), 1);
        assert_eq!(c.warnings.len(), 4, "{:?}", c.warnings);
    }

    #[test]
    fn syntax_error_is_an_error() {
        let mut table = RuleTable::default();
        let mut cfg = Config::default();
        let e = cfg.apply_text(
            "[[rules]\nprefix=",
            &ConfigSource {
                path: "x.toml".into(),
                restricted: false,
            },
            &mut table,
        );
        assert!(matches!(e, Err(ConfigError::Syntax { .. })));
    }
}
