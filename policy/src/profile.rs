//! Profiles (SPEC §6): what one agent, or a CI step, needs beyond the default fence, as
//! data. `fence run --profile NAME` (or `profile = "NAME"` in the user's config) adds a
//! profile's grants to what the flags and the config give; `fence profiles` lists them.
//!
//! A profile names, relative to the home directory, the agent's settings folders (made
//! writable, created when missing) and files it rewrites (made writable when they exist);
//! the files inside those folders that hold the agent's own permissions, hooks and trust
//! decisions, which stay protected (a write there is a protected-path event: asked, never
//! silent); the API domains it reaches through fence's proxy; and the variables it may
//! receive despite the credential scrub (its own API key).

use serde::Serialize;

/// Who answers a profile's questions unless `--approver` says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DefaultApprover {
    /// Nobody: every question is No (a CI job has no one to ask).
    Deny,
}

/// One profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Profile {
    pub name: &'static str,
    pub description: &'static str,
    /// Folders under the home directory made writable (created, mode 0700, when missing).
    pub folders: &'static [&'static str],
    /// Files under the home directory made writable when they exist.
    pub files: &'static [&'static str],
    /// Paths under the home directory that stay protected, with everything beneath them,
    /// although a folder above them is writable.
    pub protected: &'static [&'static str],
    /// Folders under the home directory whose entries at the session's start stay
    /// protected, each with everything beneath it, while new ones may be made: another
    /// session's files that the agent runs as code (a shell snapshot it sources before
    /// every command), in a folder the agent also writes its own in.
    pub protected_entries: &'static [&'static str],
    /// Domains reached through the proxy, as `--allow-domain` takes them.
    pub domains: &'static [&'static str],
    /// Variables passed although they look like credentials, as `--env` takes them.
    pub env: &'static [&'static str],
    /// Who answers questions when `--approver` is not given.
    pub approver: Option<DefaultApprover>,
    /// What the profile deliberately leaves out, for the listing.
    pub notes: &'static str,
}

/// The built-in profiles.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "claude",
        description: "Claude Code",
        folders: &[".claude"],
        files: &[".claude.json"],
        // Hook scripts, and installed plugins (their hooks and MCP servers): programs
        // Claude Code runs outside any sandbox the next time it runs unfenced.
        // Custom commands (their `!` lines run a shell when the user invokes them) and
        // skills (scripts Claude Code runs), and where plugins come from (a marketplace
        // re-pointed elsewhere is fetched again for the plugins the settings enable).
        protected: &[
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".claude/hooks",
            ".claude/commands",
            ".claude/skills",
            // Subagents: their frontmatter's `hooks` and `mcpServers` run programs.
            ".claude/agents",
            ".claude/plugins/cache",
            ".claude/plugins/installed_plugins.json",
            ".claude/plugins/known_marketplaces.json",
            ".claude/plugins/marketplaces",
            // The local installation (`claude migrate-installer`): the `claude` launcher
            // users alias, and the package it runs.
            ".claude/local",
            // The user's memory: instructions every later session reads as the user's,
            // unfenced ones included.
            ".claude/CLAUDE.md",
        ],
        // Each session's snapshot of the user's shell (functions, aliases, options),
        // sourced before every command its Bash tool runs: another session's, unfenced,
        // would run what was appended to it.
        protected_entries: &[".claude/shell-snapshots"],
        domains: &["api.anthropic.com:443", "platform.claude.com:443"],
        env: &["ANTHROPIC_API_KEY"],
        approver: None,
        notes: "platform.claude.com refreshes a claude.ai sign-in; sign in outside fence. \
                Telemetry and error reporting (statsig, sentry) are not allowed. Plugins and the \
                local installation are installed and updated outside fence \
                (~/.claude/plugins/cache and ~/.claude/local are protected). Other sessions' \
                shell snapshots are kept as they are; the session makes its own.",
    },
    Profile {
        name: "codex",
        description: "OpenAI Codex CLI",
        folders: &[".codex"],
        files: &[],
        // hooks.json: where fence's own Codex hook is installed (docs/hooks.md). `.env` is
        // loaded into Codex's environment at every start (PATH, NODE_OPTIONS and the API's
        // address for everything it starts); `managed_config.toml` is read over config.toml.
        protected: &[
            ".codex/config.toml",
            ".codex/hooks.json",
            ".codex/rules",
            ".codex/.env",
            ".codex/managed_config.toml",
            // Skills carry the scripts they run.
            ".codex/skills",
            // The user's instructions, read by every later session as the user's.
            ".codex/AGENTS.md",
            ".codex/AGENTS.override.md",
        ],
        // Each session's shell snapshot, sourced before every command it runs.
        protected_entries: &[".codex/shell_snapshots"],
        domains: &[
            "api.openai.com:443",
            "chatgpt.com:443",
            "auth.openai.com:443",
        ],
        env: &["OPENAI_API_KEY", "CODEX_API_KEY"],
        approver: None,
        notes: "chatgpt.com and auth.openai.com serve a ChatGPT sign-in; sign in outside fence. \
                A CODEX_HOME other than ~/.codex is not covered.",
    },
    Profile {
        name: "gemini",
        description: "Gemini CLI",
        folders: &[".gemini"],
        files: &[],
        protected: &[
            ".gemini/settings.json",
            ".gemini/trustedFolders.json",
            ".gemini/policies",
            ".gemini/.env",
            // Each extension's manifest names MCP servers that Gemini CLI starts with
            // every session: code that would run outside the sandbox the next time the
            // agent runs unfenced, as `mcpServers` in settings.json would.
            ".gemini/extensions",
            // Custom commands: `!{…}` in one runs a shell when it is invoked.
            ".gemini/commands",
            // The user's skills carry the scripts they run.
            ".gemini/skills",
            // The user's instructions, read by every later session as the user's.
            ".gemini/GEMINI.md",
        ],
        protected_entries: &[],
        domains: &[
            "generativelanguage.googleapis.com:443",
            "cloudcode-pa.googleapis.com:443",
            "oauth2.googleapis.com:443",
        ],
        env: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        approver: None,
        notes: "cloudcode-pa and oauth2.googleapis.com serve a Google sign-in; sign in outside \
                fence. Vertex AI needs its regional endpoint added with --allow-domain. \
                Extensions are installed and updated outside fence (~/.gemini/extensions is \
                protected).",
    },
    Profile {
        name: "aider",
        description: "Aider (with OpenAI or Anthropic models)",
        folders: &[".aider"],
        files: &[],
        protected: &[".aider/oauth-keys.env"],
        protected_entries: &[],
        domains: &["api.openai.com:443", "api.anthropic.com:443"],
        env: &["OPENAI_API_KEY", "ANTHROPIC_API_KEY"],
        approver: None,
        notes: "Its config files in the home directory (~/.aider.conf.yml, ~/.env) stay \
                read-only; its histories live in the worktree. Other model providers need \
                their domain and key added with --allow-domain and --env. No update check \
                (pypi.org) and no model list download.",
    },
    Profile {
        name: "ci",
        description: "a CI job step",
        folders: &[],
        files: &[],
        protected: &[],
        protected_entries: &[],
        domains: &[],
        env: &[],
        approver: Some(DefaultApprover::Deny),
        notes: "Nobody is asked: every question is answered No, even on a terminal. No \
                network: package registries are not allowed by the profile; name them \
                with --allow-domain (e.g. registry.npmjs.org, pypi.org, \
                files.pythonhosted.org) or fetch dependencies before the fenced step. \
                cargo keeps its downloads in ~/.cargo, which stays unwritable: run cargo \
                fetch before the fenced step.",
    },
];

/// The profile called `name`.
pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// The profile called `name`, or an error naming the known ones.
pub fn lookup(name: &str) -> Result<&'static Profile, UnknownProfile> {
    find(name).ok_or_else(|| UnknownProfile(name.to_string()))
}

/// The known profile names, comma-separated.
pub fn known_names() -> String {
    PROFILES
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A profile name that is not one of [`PROFILES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile `{0}` (known profiles: {known})", known = known_names())]
pub struct UnknownProfile(pub String);

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Component, Path};

    fn plain_relative(p: &str) -> bool {
        !p.is_empty()
            && Path::new(p)
                .components()
                .all(|c| matches!(c, Component::Normal(_)))
    }

    #[test]
    fn every_path_is_relative_to_home_and_stays_below_it() {
        for p in PROFILES {
            for path in p
                .folders
                .iter()
                .chain(p.files)
                .chain(p.protected)
                .chain(p.protected_entries)
            {
                assert!(plain_relative(path), "{}: {path}", p.name);
            }
        }
    }

    #[test]
    fn protected_paths_lie_inside_a_writable_folder_of_the_same_profile() {
        for p in PROFILES {
            for prot in p.protected.iter().chain(p.protected_entries) {
                assert!(
                    p.folders
                        .iter()
                        .any(|f| Path::new(prot).starts_with(f) && Path::new(prot) != Path::new(f)),
                    "{}: {prot} protects nothing writable",
                    p.name
                );
            }
        }
    }

    #[test]
    fn agent_profiles_keep_their_own_settings_protected() {
        for (name, settings) in [
            ("claude", ".claude/settings.json"),
            ("codex", ".codex/config.toml"),
            ("gemini", ".gemini/settings.json"),
        ] {
            assert!(find(name).unwrap().protected.contains(&settings), "{name}");
        }
    }

    #[test]
    fn code_an_agent_runs_later_outside_is_protected() {
        let claude = find("claude").unwrap();
        assert!(claude.protected.contains(&".claude/local"));
        assert!(
            claude
                .protected_entries
                .contains(&".claude/shell-snapshots")
        );
        let codex = find("codex").unwrap();
        assert!(codex.protected_entries.contains(&".codex/shell_snapshots"));
        assert!(
            find("gemini")
                .unwrap()
                .protected
                .contains(&".gemini/skills")
        );
        // The user's own instructions, which every later session reads.
        assert!(claude.protected.contains(&".claude/CLAUDE.md"));
        assert!(codex.protected.contains(&".codex/AGENTS.md"));
        assert!(
            find("gemini")
                .unwrap()
                .protected
                .contains(&".gemini/GEMINI.md")
        );
    }

    #[test]
    fn domains_carry_the_https_port_and_no_wildcard() {
        for p in PROFILES {
            for d in p.domains {
                assert!(d.ends_with(":443") && !d.contains('*'), "{}: {d}", p.name);
            }
        }
    }

    #[test]
    fn passed_variables_are_api_keys_only() {
        for p in PROFILES {
            for v in p.env {
                assert!(v.ends_with("_API_KEY"), "{}: {v}", p.name);
            }
        }
    }

    #[test]
    fn ci_opens_nothing_and_asks_nobody() {
        let ci = find("ci").unwrap();
        assert!(ci.folders.is_empty() && ci.files.is_empty());
        assert!(ci.domains.is_empty() && ci.env.is_empty());
        assert_eq!(ci.approver, Some(DefaultApprover::Deny));
    }

    #[test]
    fn unknown_names_are_refused_naming_the_known_ones() {
        let e = lookup("vim").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown profile `vim` (known profiles: claude, codex, gemini, aider, ci)"
        );
        assert_eq!(lookup("claude").unwrap().name, "claude");
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = PROFILES.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROFILES.len());
    }
}
