//! Profiles (SPEC §6): `fence run --profile NAME` opens the agent's own folder and keeps
//! its settings file protected, passes its API key and nothing else, lets its API domains
//! through the proxy; a worktree config cannot name one; `fence profiles` lists them.
//! Each effect is checked from outside the sandbox: the file on disk, the listener's count.

mod support;

use std::ffi::OsStr;
use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::{World, skip, stderr, stdout};

/// Creates `rel` under the world's home with `text`, owned by whoever runs fence.
fn home_file(w: &World, rel: &str, text: &str) -> std::path::PathBuf {
    let p = w.home.join(rel);
    if let Some(dir) = p.parent()
        && !dir.exists()
    {
        std::fs::create_dir_all(dir).unwrap();
        w.own(dir);
    }
    std::fs::write(&p, text).unwrap();
    w.own(&p);
    p
}

fn fence_with(w: &World, flags: &[&str], script: &str) -> std::process::Output {
    w.write("s.sh", script);
    let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
    args.extend(["--", "/bin/sh", "s.sh"].map(OsStr::new));
    w.fence(&args).output().expect("running fence")
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

/// Without watched writes only the protected paths that exist are held (read-only
/// binds): a profile whose protected paths are not all there is refused, and nothing is
/// made in its folder.
fn no_write_watch_with_a_profile_needs_its_protected_paths(w: &World) {
    let out = fence_with(
        w,
        &["--no-write-watch", "--profile", "claude"],
        "mkdir -p \"$HOME/.claude/agents\" && echo x > \"$HOME/.claude/agents/a.md\"\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert!(
        err.contains("--no-write-watch with a profile needs its protected paths to exist")
            && err.contains(".claude/agents"),
        "{err}"
    );
    assert!(!w.home.join(".claude/agents").exists(), "{err}");
}

fn claude_profile_opens_its_folder_and_nothing_else_in_home(w: &World) {
    // No ~/.claude yet: the profile creates it.
    let out = fence_with(
        w,
        &["--profile", "claude"],
        "echo note > \"$HOME/.claude/x\"\n\
         echo '{\"hooks\":1}' > \"$HOME/.claude/settings.json\"\n\
         echo out > \"$HOME/elsewhere\"\n\
         echo out > \"$HOME/.claude-other\"\n",
    );
    let err = stderr(&out);
    assert_eq!(
        read(&w.home.join(".claude/x")).as_deref(),
        Some("note\n"),
        "{err}"
    );
    assert!(
        !w.home.join(".claude/settings.json").exists(),
        "the agent created its own settings file: {err}"
    );
    assert!(!w.home.join("elsewhere").exists(), "{err}");
    assert!(!w.home.join(".claude-other").exists(), "{err}");
    assert!(
        err.contains("blocked write to a protected path:")
            && err.contains(".claude/settings.json (rule fence.protected-path)"),
        "{err}"
    );
    assert!(
        err.contains("(rule fence.write-outside)") && err.contains("/elsewhere"),
        "{err}"
    );
    assert!(
        err.contains("fence: profile claude (Claude Code): writable ~/.claude; protected ~/.claude/settings.json, ~/.claude/settings.local.json, ~/.claude/hooks, ~/.claude/commands, ~/.claude/skills, ~/.claude/agents, ~/.claude/plugins/cache, ~/.claude/plugins/installed_plugins.json, ~/.claude/plugins/known_marketplaces.json, ~/.claude/plugins/marketplaces"),
        "{err}"
    );
    assert!(
        err.contains("absent, so not writable: ~/.claude.json"),
        "{err}"
    );
}

fn claude_settings_stay_unchanged_while_its_state_file_is_written(w: &World) {
    let settings = home_file(w, ".claude/settings.json", "{\"permissions\":{}}\n");
    let state = home_file(w, ".claude.json", "{}\n");
    let out = fence_with(
        w,
        &["--profile", "claude"],
        "echo '{\"hooks\":\"evil\"}' > \"$HOME/.claude/settings.json\"\n\
         echo '{\"hooks\":\"evil\"}' >> \"$HOME/.claude/settings.json\"\n\
         mv \"$HOME/.claude/settings.json\" \"$HOME/.claude/old.json\"\n\
         rm -f \"$HOME/.claude/settings.json\"\n\
         echo '{\"numStartups\":2}' > \"$HOME/.claude.json\"\n\
         echo cache > \"$HOME/.claude/todo.json\"\n",
    );
    let err = stderr(&out);
    assert_eq!(
        read(&settings).as_deref(),
        Some("{\"permissions\":{}}\n"),
        "the settings file changed: {err}"
    );
    assert!(!w.home.join(".claude/old.json").exists(), "{err}");
    assert_eq!(
        read(&state).as_deref(),
        Some("{\"numStartups\":2}\n"),
        "{err}"
    );
    assert_eq!(
        read(&w.home.join(".claude/todo.json")).as_deref(),
        Some("cache\n"),
        "{err}"
    );
    assert!(err.contains("(rule fence.protected-path)"), "{err}");
    assert!(err.contains("writable ~/.claude, ~/.claude.json;"), "{err}");
}

fn without_a_profile_the_agent_folder_stays_closed(w: &World) {
    let folder = w.home.join(".claude");
    std::fs::create_dir(&folder).unwrap();
    w.own(&folder);
    let out = fence_with(w, &[], "echo note > \"$HOME/.claude/x\"\n");
    assert!(!folder.join("x").exists(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(rule fence.write-outside)"),
        "{}",
        stderr(&out)
    );
}

fn the_profiles_api_key_passes_and_other_credentials_do_not(w: &World) {
    let log = w.outside.join("audit.jsonl");
    let env_of = |flags: &[&str]| {
        let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
        args.extend(["--", "/usr/bin/env"].map(OsStr::new));
        let out = w
            .fence(&args)
            .env("ANTHROPIC_API_KEY", "sk-ant-own")
            .env("OPENAI_API_KEY", "sk-openai-other")
            .env("AWS_SECRET_ACCESS_KEY", "aws-secret")
            .env("GITHUB_TOKEN", "ghp-secret")
            .output()
            .unwrap();
        (stdout(&out), stderr(&out))
    };
    let log_flag = log.to_str().unwrap();
    let (with, err) = env_of(&["--profile", "claude", "--log", log_flag]);
    assert!(with.contains("ANTHROPIC_API_KEY=sk-ant-own"), "{with}{err}");
    for secret in ["sk-openai-other", "aws-secret", "ghp-secret"] {
        assert!(!with.contains(secret), "{secret} reached the child: {with}");
    }
    assert!(err.contains("passes ANTHROPIC_API_KEY"), "{err}");
    let (without, err) = env_of(&[]);
    for secret in ["sk-ant-own", "sk-openai-other", "aws-secret", "ghp-secret"] {
        assert!(
            !without.contains(secret),
            "{secret} reached the child without a profile: {without}{err}"
        );
    }
    let start = read(&log).unwrap_or_default();
    let first: serde_json::Value =
        serde_json::from_str(start.lines().next().unwrap_or("{}")).unwrap();
    assert_eq!(first["event"], "session-start", "{start}");
    assert_eq!(first["profile"], "claude", "{start}");
}

/// Serialises the tests that bind the host's port 443.
static PORT_443: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn the_profiles_domains_go_through_the_proxy_and_others_are_refused(w: &World) {
    let test = "the_profiles_domains_go_through_the_proxy_and_others_are_refused";
    let _guard = PORT_443.lock().unwrap_or_else(|e| e.into_inner());
    // The profile allows api.anthropic.com on port 443 only: a loopback server on 443 of the
    // host stands in for it, reached through the proxy by --resolve (loopback only).
    let listener = match TcpListener::bind("127.0.0.1:443") {
        Ok(l) => l,
        Err(e) => {
            skip(test, &format!("cannot listen on 127.0.0.1:443: {e}"));
            return;
        }
    };
    listener.set_nonblocking(true).unwrap();
    let decoy = TcpListener::bind("127.0.0.1:0").unwrap();
    decoy.set_nonblocking(true).unwrap();
    let decoy_port = decoy.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < until {
            match listener.accept() {
                Ok((mut c, _)) => {
                    c.set_nonblocking(false).unwrap();
                    c.set_read_timeout(Some(Duration::from_millis(500)))
                        .unwrap();
                    let mut buf = vec![0u8; 4096];
                    let n = c.read(&mut buf).unwrap_or(0);
                    seen.push(String::from_utf8_lossy(&buf[..n]).into_owned());
                    let _ = std::io::Write::write_all(
                        &mut c,
                        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n",
                    );
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
            if seen.len() > 1 {
                break;
            }
        }
        seen
    });
    let out = fence_with(
        w,
        &[
            "--profile",
            "claude",
            "--resolve",
            "api.anthropic.com:127.0.0.1",
            "--resolve",
            "example.test:127.0.0.1",
        ],
        &format!(
            "[ -n \"$HTTPS_PROXY\" ] && [ \"$HTTPS_PROXY\" = \"$https_proxy\" ] && echo proxy-set\n\
             curl -sS --max-time 10 http://api.anthropic.com:443/v1/messages\n\
             curl -sS --max-time 10 -o /dev/null -w '%{{http_code}}\\n' http://example.test:443/\n\
             curl -sS --max-time 10 -o /dev/null -w '%{{http_code}}\\n' http://api.anthropic.com:{decoy_port}/\n"
        ),
    );
    // Stop the server early: the allowed request has come or never will.
    let _ = std::net::TcpStream::connect("127.0.0.1:443");
    let seen = server.join().unwrap();
    let err = stderr(&out);
    assert_eq!(stdout(&out), "proxy-set\nok\n403\n403\n", "{err}");
    let real: Vec<_> = seen.iter().filter(|s| !s.is_empty()).collect();
    assert_eq!(real.len(), 1, "the server saw {seen:?}");
    assert!(
        real[0].starts_with("GET /v1/messages HTTP/1.1\r\n")
            && real[0]
                .to_ascii_lowercase()
                .contains("host: api.anthropic.com"),
        "{real:?}"
    );
    assert!(
        decoy.accept().is_err(),
        "a port the profile does not allow was reached"
    );
    assert!(
        err.contains("domains api.anthropic.com:443, platform.claude.com:443 through the proxy"),
        "{err}"
    );
    assert!(err.contains("example.test:443"), "{err}");
}

fn a_profile_in_the_user_config_applies_and_in_the_worktree_config_does_not(w: &World) {
    // Named by the worktree's own config: refused, nothing opened.
    w.write(".fence.toml", "profile = \"claude\"\n");
    let out = fence_with(
        w,
        &[],
        "mkdir -p \"$HOME/.claude\" && echo x > \"$HOME/.claude/x\"\n",
    );
    let err = stderr(&out);
    assert!(!w.home.join(".claude").exists(), "{err}");
    assert!(
        err.contains(".fence.toml: profile would widen the fence")
            && err.contains("may only tighten it (skipped)"),
        "{err}"
    );
    assert!(!err.contains("fence: profile claude"), "{err}");
    std::fs::remove_file(w.worktree.join(".fence.toml")).unwrap();
    // Named by the user's config: applied.
    home_file(w, ".config/fence/config.toml", "profile = \"claude\"\n");
    let out = fence_with(w, &[], "echo x > \"$HOME/.claude/x\"\n");
    let err = stderr(&out);
    assert_eq!(
        read(&w.home.join(".claude/x")).as_deref(),
        Some("x\n"),
        "{err}"
    );
    assert!(err.contains("fence: profile claude"), "{err}");
    // The flag replaces the config's profile.
    let out = fence_with(
        w,
        &["--profile", "codex"],
        "echo y > \"$HOME/.claude/y\"; echo y > \"$HOME/.codex/y\"\n",
    );
    let err = stderr(&out);
    assert!(!w.home.join(".claude/y").exists(), "{err}");
    assert_eq!(
        read(&w.home.join(".codex/y")).as_deref(),
        Some("y\n"),
        "{err}"
    );
}

fn the_ci_profile_opens_nothing(w: &World) {
    let out = fence_with(
        w,
        &["--profile", "ci"],
        "echo $HTTPS_PROXY; echo x > \"$HOME/x\"; echo in > inside\n",
    );
    let err = stderr(&out);
    assert_eq!(stdout(&out), "\n", "{err}");
    assert!(!w.home.join("x").exists(), "{err}");
    assert_eq!(read(&w.worktree.join("inside")).as_deref(), Some("in\n"));
    assert!(
        err.contains("fence: profile ci (a CI job step): no domains; questions answered No"),
        "{err}"
    );
}

fn a_thread_swapping_to_the_settings_file_never_writes_it(w: &World) {
    let test = "a_thread_swapping_to_the_settings_file_never_writes_it";
    if w.who == support::Who::UnprivilegedWithoutNamespaces {
        // Without a mount view a protected path rests on the supervisor's check, which a
        // racing thread can pass (docs/run.md), as for the worktree's own protected paths.
        skip(test, "needs a mount namespace");
        return;
    }
    if Command::new("cc").arg("--version").output().is_err() {
        skip(test, "no C compiler (cc)");
        return;
    }
    let settings = home_file(w, ".claude/settings.json", "{}\n");
    // A writable name of the same length that differs in one byte: each flip is one store,
    // so every path the kernel reads is one of the two, never a torn mix.
    let ok = w.home.join(".claude/settingz.json");
    let flip = ok.as_os_str().len() - ".json".len() - 1;
    let src = format!(
        r#"#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static char path[4096] = "{ok}";
static volatile int stop;
static void spin(void) {{ for (volatile int i = 0; i < 200; i++) {{}} }}
static void *swap(void *arg) {{
    (void)arg;
    while (!stop) {{
        ((volatile char *)path)[{flip}] = 's'; spin();
        ((volatile char *)path)[{flip}] = 'z'; spin();
    }}
    return 0;
}}
int main(void) {{
    pthread_t t;
    int ok = 0, refused = 0;
    pthread_create(&t, 0, swap, 0);
    for (int i = 0; i < 10000; i++) {{
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {{ write(fd, "x", 1); close(fd); ok++; }} else refused++;
    }}
    stop = 1;
    pthread_join(t, 0);
    printf("%d %d\n", ok, refused);
    return 0;
}}
"#,
        ok = ok.display(),
    );
    let bin = w.compile_c("race", &src);
    let out = w
        .fence(&["--profile", "claude", "--quiet-blocks", "--"].map(OsStr::new))
        .arg(&bin)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        read(&settings).as_deref(),
        Some("{}\n"),
        "a swapped path wrote the protected settings file"
    );
    // The race did run: the writable name got writes and the protected one was refused.
    let counts: Vec<u32> = stdout(&out)
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(
        matches!(counts[..], [ok, refused] if ok > 0 && refused > 0),
        "{}",
        stdout(&out)
    );
}

/// The profile's folder outlives the session and is the agent's own: git works there (an
/// agent clones plugins into it), but no symlink left in the worktree may lead into it —
/// directly, through an alias under /proc, or through a link to a folder above it — since
/// the user's git in that link's folder would then use a repository assembled there.
fn a_link_into_the_profiles_folder_is_refused_and_git_works_there(w: &World) {
    home_file(w, ".claude/keep", "k\n");
    let out = fence_with(
        w,
        &["--profile", "claude"],
        "set +e\n\
         d=\"$HOME/.claude/x\"; mkdir -p \"$d\" && git init -q --bare \"$d\"\n\
         (mkdir -p \"$HOME/.claude/y\" && cd \"$HOME/.claude/y\" && git init -q) && echo inited\n\
         ln -s \"$d\" direct\n\
         ln -s \"/proc/self/root$d\" proc\n\
         ln -s \"$HOME\" home\n\
         mkdir plain && ln -s ../home/.claude/x plain/through\n",
    );
    let (text, err) = (stdout(&out), stderr(&out));
    let claude = w.home.join(".claude");
    assert!(
        text.contains("inited"),
        "git init failed in the profile's folder: {err}"
    );
    assert!(claude.join("y/.git/HEAD").is_file(), "{err}");
    for link in ["direct", "proc", "home"] {
        assert!(
            w.worktree.join(link).symlink_metadata().is_err(),
            "{link} was made: {err}"
        );
    }
    assert!(
        w.worktree.join("plain/through").symlink_metadata().is_err()
            || std::fs::read_link(w.worktree.join("plain/through"))
                .is_ok_and(|_| { !w.worktree.join("plain/through").exists() }),
        "{err}"
    );
}

/// Gemini CLI starts the MCP servers of every extension in `~/.gemini/extensions` with each
/// session: the sandbox cannot add one (nor change one that is there), while the rest of
/// the folder stays writable.
fn gemini_extensions_cannot_be_added_from_inside(w: &World) {
    for dir in [".gemini", ".gemini/extensions"] {
        std::fs::create_dir_all(w.home.join(dir)).unwrap();
        w.own(&w.home.join(dir));
    }
    let manifest = home_file(
        w,
        ".gemini/extensions/known/gemini-extension.json",
        "{\"name\":\"known\"}\n",
    );
    let out = fence_with(
        w,
        &["--profile", "gemini"],
        "mkdir -p \"$HOME/.gemini/extensions/evil\"\n\
         echo '{\"mcpServers\":{\"x\":{\"command\":\"sh\"}}}' > \"$HOME/.gemini/extensions/evil/gemini-extension.json\"\n\
         echo '{\"mcpServers\":{}}' > \"$HOME/.gemini/extensions/known/gemini-extension.json\"\n\
         echo state > \"$HOME/.gemini/state.txt\"\n",
    );
    let err = stderr(&out);
    assert!(
        !w.home
            .join(".gemini/extensions/evil/gemini-extension.json")
            .exists(),
        "an extension was added: {err}"
    );
    assert_eq!(
        read(&manifest).as_deref(),
        Some("{\"name\":\"known\"}\n"),
        "{err}"
    );
    assert_eq!(
        read(&w.home.join(".gemini/state.txt")).as_deref(),
        Some("state\n"),
        "{err}"
    );
    assert!(err.contains("(rule fence.protected-path)"), "{err}");
}

/// Code an agent runs outside any sandbox later stays as it was: another session's shell
/// snapshot, which Claude Code and Codex source before every command (a session running
/// unfenced meanwhile would run what was appended), Claude Code's local installation (the
/// launcher users alias), Gemini CLI's skills. The session still makes its own snapshot.
fn snapshots_and_installed_agents_cannot_be_changed_from_inside(w: &World) {
    let claude_snapshot = home_file(
        w,
        ".claude/shell-snapshots/snapshot-bash-1765000000000-abc123.sh",
        "export PATH=/usr/bin:/bin\n",
    );
    let launcher = home_file(w, ".claude/local/claude", "#!/bin/sh\nexec real-claude\n");
    let codex_snapshot = home_file(
        w,
        ".codex/shell_snapshots/1f0-session.sh",
        "alias ll='ls -l'\n",
    );
    let skill = home_file(
        w,
        ".gemini/skills/deploy/run.sh",
        "#!/bin/sh\necho deploy\n",
    );
    let out = fence_with(
        w,
        &["--profile", "claude"],
        "echo 'touch /tmp/planted' >> \"$HOME/.claude/shell-snapshots/snapshot-bash-1765000000000-abc123.sh\"\n\
         printf '#!/bin/sh\\ntouch /tmp/planted\\n' > \"$HOME/.claude/local/claude\"\n\
         echo 'export PATH=/usr/bin' > \"$HOME/.claude/shell-snapshots/snapshot-bash-1765000000001-new.sh\"\n",
    );
    let err = stderr(&out);
    assert_eq!(
        read(&claude_snapshot).as_deref(),
        Some("export PATH=/usr/bin:/bin\n"),
        "{err}"
    );
    assert_eq!(
        read(&launcher).as_deref(),
        Some("#!/bin/sh\nexec real-claude\n"),
        "{err}"
    );
    assert_eq!(
        read(
            &w.home
                .join(".claude/shell-snapshots/snapshot-bash-1765000000001-new.sh")
        )
        .as_deref(),
        Some("export PATH=/usr/bin\n"),
        "the session's own snapshot was not made: {err}"
    );
    assert!(err.contains("(rule fence.protected-path)"), "{err}");
    assert!(
        err.contains("the 1 entry of ~/.claude/shell-snapshots kept as they are"),
        "{err}"
    );
    let out = fence_with(
        w,
        &["--profile", "codex"],
        "echo 'touch /tmp/planted' >> \"$HOME/.codex/shell_snapshots/1f0-session.sh\"\n",
    );
    assert_eq!(
        read(&codex_snapshot).as_deref(),
        Some("alias ll='ls -l'\n"),
        "{}",
        stderr(&out)
    );
    let out = fence_with(
        w,
        &["--profile", "gemini"],
        "echo 'touch /tmp/planted' >> \"$HOME/.gemini/skills/deploy/run.sh\"\n\
         mkdir -p \"$HOME/.gemini/skills/evil\" && echo x > \"$HOME/.gemini/skills/evil/SKILL.md\"\n",
    );
    assert_eq!(
        read(&skill).as_deref(),
        Some("#!/bin/sh\necho deploy\n"),
        "{}",
        stderr(&out)
    );
    assert!(
        !w.home.join(".gemini/skills/evil/SKILL.md").exists(),
        "{}",
        stderr(&out)
    );
}

/// The files from which an agent runs programs the next time it runs unfenced stay as they
/// were: Codex's `hooks.json` (where fence's own hook is installed), Claude Code's hook
/// scripts and its installed plugins' hooks; the agent's other state is written.
fn agents_hook_files_cannot_be_rewritten_from_inside(w: &World) {
    let codex_hooks = home_file(w, ".codex/hooks.json", "{\"hooks\":\"fence hook codex\"}\n");
    let out = fence_with(
        w,
        &["--profile", "codex"],
        "echo '{\"hooks\":\"touch /tmp/x\"}' > \"$HOME/.codex/hooks.json\"\n\
         rm -f \"$HOME/.codex/hooks.json\"\n\
         echo PATH=/tmp/evil > \"$HOME/.codex/.env\"\n\
         echo s > \"$HOME/.codex/state.txt\"\n",
    );
    let err = stderr(&out);
    // Loaded into Codex's environment at its next start.
    assert!(
        !w.home.join(".codex/.env").exists(),
        "~/.codex/.env was made: {err}"
    );
    assert_eq!(
        read(&codex_hooks).as_deref(),
        Some("{\"hooks\":\"fence hook codex\"}\n"),
        "{err}"
    );
    assert_eq!(
        read(&w.home.join(".codex/state.txt")).as_deref(),
        Some("s\n"),
        "{err}"
    );
    assert!(err.contains("(rule fence.protected-path)"), "{err}");
    for dir in [
        ".claude",
        ".claude/hooks",
        ".claude/plugins",
        ".claude/plugins/cache",
        ".claude/plugins/cache/m",
        ".claude/plugins/cache/m/p",
        ".claude/plugins/cache/m/p/1.0",
    ] {
        std::fs::create_dir_all(w.home.join(dir)).unwrap();
        w.own(&w.home.join(dir));
    }
    let script = home_file(w, ".claude/hooks/fmt.sh", "#!/bin/sh\nexit 0\n");
    let plugin = home_file(
        w,
        ".claude/plugins/cache/m/p/1.0/hooks/hooks.json",
        "{\"hooks\":{}}\n",
    );
    let out = fence_with(
        w,
        &["--profile", "claude"],
        "echo 'touch /tmp/x' >> \"$HOME/.claude/hooks/fmt.sh\"\n\
         echo 'touch /tmp/x' > \"$HOME/.claude/hooks/new.sh\"\n\
         echo '{\"hooks\":{\"x\":1}}' > \"$HOME/.claude/plugins/cache/m/p/1.0/hooks/hooks.json\"\n\
         mkdir -p \"$HOME/.claude/plugins/cache/evil\"\n\
         echo s > \"$HOME/.claude/state.txt\"\n",
    );
    let err = stderr(&out);
    assert_eq!(
        read(&script).as_deref(),
        Some("#!/bin/sh\nexit 0\n"),
        "{err}"
    );
    assert!(!w.home.join(".claude/hooks/new.sh").exists(), "{err}");
    assert_eq!(read(&plugin).as_deref(), Some("{\"hooks\":{}}\n"), "{err}");
    assert!(!w.home.join(".claude/plugins/cache/evil").exists(), "{err}");
    assert_eq!(
        read(&w.home.join(".claude/state.txt")).as_deref(),
        Some("s\n"),
        "{err}"
    );
}

/// What an agent's protected settings run — Claude Code's status line script in its
/// folder, a project hook script and an MCP server's file in the worktree — is protected
/// as the settings are: changed, it would run outside any sandbox the next time the agent
/// runs unfenced. Other files beside them stay writable.
fn scripts_an_agents_settings_run_cannot_be_changed_from_inside(w: &World) {
    let statusline = home_file(w, ".claude/statusline.sh", "#!/bin/sh\necho ok\n");
    home_file(
        w,
        ".claude/settings.json",
        "{\"statusLine\": {\"type\": \"command\", \"command\": \"bash ~/.claude/statusline.sh\"}}\n",
    );
    w.mkdir(".claude");
    w.mkdir("tools");
    w.mkdir("srv");
    let hook = w.write("tools/guard.sh", "#!/bin/sh\nexit 0\n");
    let server = w.write("srv/index.js", "// server\n");
    w.write(
        ".claude/settings.json",
        "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"\\\"$CLAUDE_PROJECT_DIR\\\"/tools/guard.sh\"}]}]}}\n",
    );
    w.write(
        ".mcp.json",
        "{\"mcpServers\": {\"s\": {\"command\": \"node\", \"args\": [\"srv/index.js\"]}, \
         \"t\": {\"command\": \"node\", \"args\": [\"bare.js\"]}, \
         \"u\": {\"command\": \"$PWD/tools/link.sh\"}}}\n",
    );
    // A bare name, and a symlink whose name the settings use.
    let bare = w.write("bare.js", "// bare\n");
    let real = w.write("tools/real.sh", "#!/bin/sh\n");
    std::os::unix::fs::symlink("real.sh", w.worktree.join("tools/link.sh")).unwrap();
    w.own(&w.worktree.join("tools/link.sh"));
    let out = fence_with(
        w,
        &["--profile", "claude"],
        "echo 'touch /tmp/x' >> \"$HOME/.claude/statusline.sh\"\n\
         echo 'touch /tmp/x' >> tools/guard.sh\n\
         echo 'require(\"child_process\")' > srv/index.js\n\
         mv srv/index.js srv/old.js\n\
         echo s > \"$HOME/.claude/state.txt\"\n\
         echo s > tools/other.sh\n\
         echo 'evil' > bare.js\n\
         rm -f tools/link.sh; echo evil > tools/link.sh\n\
         echo evil >> tools/real.sh\n",
    );
    let err = stderr(&out);
    assert_eq!(
        read(&statusline).as_deref(),
        Some("#!/bin/sh\necho ok\n"),
        "{err}"
    );
    assert_eq!(read(&hook).as_deref(), Some("#!/bin/sh\nexit 0\n"), "{err}");
    assert_eq!(read(&server).as_deref(), Some("// server\n"), "{err}");
    assert_eq!(read(&bare).as_deref(), Some("// bare\n"), "{err}");
    assert_eq!(read(&real).as_deref(), Some("#!/bin/sh\n"), "{err}");
    assert!(
        std::fs::symlink_metadata(w.worktree.join("tools/link.sh"))
            .is_ok_and(|m| m.file_type().is_symlink()),
        "the link the settings name was replaced: {err}"
    );
    assert!(err.contains("(rule fence.protected-path)"), "{err}");
    assert_eq!(
        read(&w.home.join(".claude/state.txt")).as_deref(),
        Some("s\n"),
        "{err}"
    );
    assert_eq!(
        read(&w.worktree.join("tools/other.sh")).as_deref(),
        Some("s\n"),
        "{err}"
    );
}

/// Programs an agent's settings name under other keys than `command`: Claude Code's
/// `apiKeyHelper` (run at each start), Gemini CLI's `toolDiscoveryCommand`, Codex's
/// `notify` argv and an MCP server in its TOML config, and a server started from a
/// `--directory`.
fn helpers_and_tomls_programs_an_agent_runs_cannot_be_changed_from_inside(w: &World) {
    w.mkdir("tools");
    let key = w.write("tools/key.sh", "#!/bin/sh\necho k\n");
    let discover = w.write("tools/discover.sh", "#!/bin/sh\n");
    let notify = w.write("tools/notify.py", "print(1)\n");
    let mcp = w.write("tools/mcp.py", "print(2)\n");
    let served = w.write("tools/server.py", "print(3)\n");
    home_file(
        w,
        ".claude/settings.json",
        &format!(
            "{{\"apiKeyHelper\": \"{}/tools/key.sh\"}}\n",
            w.worktree.display()
        ),
    );
    w.mkdir(".gemini");
    w.write(
        ".gemini/settings.json",
        "{\"tools\": {\"discoveryCommand\": \"x\"}, \"toolDiscoveryCommand\": \"bash tools/discover.sh\"}\n",
    );
    w.write(
        ".mcp.json",
        "{\"mcpServers\": {\"d\": {\"command\": \"uv\", \"args\": [\"run\", \"--directory\", \"tools\", \"server.py\"]}}}\n",
    );
    home_file(
        w,
        ".codex/config.toml",
        &format!(
            "notify = [\"python3\", \"{wt}/tools/notify.py\"]\n[mcp_servers.m]\ncommand = \"python3\"\nargs = [\"{wt}/tools/mcp.py\"]\n",
            wt = w.worktree.display()
        ),
    );
    let script = "for f in tools/key.sh tools/discover.sh tools/notify.py tools/mcp.py tools/server.py; do echo 'touch /tmp/x' >> $f; done\n\
                  echo s > tools/other.sh\n";
    for profile in ["claude", "codex"] {
        let out = fence_with(w, &["--profile", profile], script);
        let err = stderr(&out);
        assert_eq!(
            read(&key).as_deref(),
            Some("#!/bin/sh\necho k\n"),
            "{profile}: {err}"
        );
        assert_eq!(
            read(&discover).as_deref(),
            Some("#!/bin/sh\n"),
            "{profile}: {err}"
        );
        assert_eq!(
            read(&served).as_deref(),
            Some("print(3)\n"),
            "{profile}: {err}"
        );
        if profile == "codex" {
            assert_eq!(read(&notify).as_deref(), Some("print(1)\n"), "{err}");
            assert_eq!(read(&mcp).as_deref(), Some("print(2)\n"), "{err}");
        }
        assert!(err.contains("(rule fence.protected-path)"), "{err}");
        assert_eq!(
            read(&w.worktree.join("tools/other.sh")).as_deref(),
            Some("s\n"),
            "{err}"
        );
    }
}

both_ways!(
    snapshots_and_installed_agents_cannot_be_changed_from_inside,
    scripts_an_agents_settings_run_cannot_be_changed_from_inside,
    helpers_and_tomls_programs_an_agent_runs_cannot_be_changed_from_inside,
    agents_hook_files_cannot_be_rewritten_from_inside,
    gemini_extensions_cannot_be_added_from_inside,
    a_link_into_the_profiles_folder_is_refused_and_git_works_there,
    a_thread_swapping_to_the_settings_file_never_writes_it,
    claude_profile_opens_its_folder_and_nothing_else_in_home,
    no_write_watch_with_a_profile_needs_its_protected_paths,
    claude_settings_stay_unchanged_while_its_state_file_is_written,
    without_a_profile_the_agent_folder_stays_closed,
    the_profiles_api_key_passes_and_other_credentials_do_not,
    the_profiles_domains_go_through_the_proxy_and_others_are_refused,
    a_profile_in_the_user_config_applies_and_in_the_worktree_config_does_not,
    the_ci_profile_opens_nothing,
);

fn fence() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fence"))
}

#[test]
fn an_unknown_profile_is_a_usage_error_naming_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let out = fence()
        .args(["run", "--profile", "vim", "--", "touch"])
        .arg(&marker)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("unknown profile `vim` (known profiles: claude, codex, gemini, aider, ci)"),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists());
}

#[test]
fn fence_profiles_json_is_a_stable_list() {
    let out = fence().args(["profiles", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<_> = list.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["claude", "codex", "gemini", "aider", "ci"]);
    let claude = &list[0];
    assert_eq!(
        claude["writable_folders"],
        serde_json::json!(["~/.claude/"])
    );
    assert_eq!(
        claude["writable_files"],
        serde_json::json!(["~/.claude.json"])
    );
    assert_eq!(
        claude["protected"],
        serde_json::json!([
            "~/.claude/settings.json",
            "~/.claude/settings.local.json",
            "~/.claude/hooks",
            "~/.claude/commands",
            "~/.claude/skills",
            "~/.claude/agents",
            "~/.claude/plugins/cache",
            "~/.claude/plugins/installed_plugins.json",
            "~/.claude/plugins/known_marketplaces.json",
            "~/.claude/plugins/marketplaces",
            "~/.claude/local",
            "~/.claude/CLAUDE.md"
        ])
    );
    assert_eq!(
        claude["protected_entries"],
        serde_json::json!(["~/.claude/shell-snapshots/"])
    );
    assert_eq!(
        claude["domains"],
        serde_json::json!(["api.anthropic.com:443", "platform.claude.com:443"])
    );
    assert_eq!(claude["env"], serde_json::json!(["ANTHROPIC_API_KEY"]));
    assert_eq!(claude["approver"], serde_json::Value::Null);
    assert_eq!(list[4]["approver"], "deny");
    assert_eq!(list[4]["domains"], serde_json::json!([]));
    for p in &list {
        let mut keys: Vec<_> = p.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "approver",
                "description",
                "domains",
                "env",
                "name",
                "notes",
                "protected",
                "protected_entries",
                "writable_files",
                "writable_folders"
            ]
        );
    }
}

#[test]
fn fence_profiles_prints_a_readable_table() {
    let out = fence().arg("profiles").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        "claude  Claude Code",
        "  writable   ~/.claude/  ~/.claude.json",
        "  protected  ~/.claude/settings.json  ~/.claude/settings.local.json  ~/.claude/hooks  ~/.claude/commands  ~/.claude/skills  ~/.claude/agents  ~/.claude/plugins/cache  ~/.claude/plugins/installed_plugins.json  ~/.claude/plugins/known_marketplaces.json  ~/.claude/plugins/marketplaces  ~/.claude/local  ~/.claude/CLAUDE.md  ~/.claude/shell-snapshots/* (the entries there at start)",
        "  domains    api.anthropic.com:443  platform.claude.com:443",
        "  passes     ANTHROPIC_API_KEY",
        "codex  OpenAI Codex CLI",
        "  protected  ~/.codex/config.toml  ~/.codex/hooks.json  ~/.codex/rules  ~/.codex/.env  ~/.codex/managed_config.toml  ~/.codex/skills  ~/.codex/AGENTS.md  ~/.codex/AGENTS.override.md  ~/.codex/shell_snapshots/* (the entries there at start)",
        "ci  a CI job step",
        "  domains    none",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }
}
