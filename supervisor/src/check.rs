//! `fence check`: classify one shell line (SPEC §6).

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use policy::{Classifier, Verdict};

use crate::escape::for_terminal;
use crate::{CheckArgs, session};

/// Reads at most this much from stdin; more is judged "too long" by the policy.
const MAX_STDIN: u64 = 8 << 20;

pub fn run(a: CheckArgs) -> Result<u8> {
    let process_cwd = std::env::current_dir().context("cannot read the current directory")?;
    let env = session::environment();
    let home = env.get("HOME").map(PathBuf::from);
    let worktree = session::find_worktree(
        a.worktree.as_deref(),
        &process_cwd,
        home.as_deref(),
        a.force_worktree,
    )?;
    let cwd = match &a.cwd {
        Some(c) => {
            let c = process_cwd.join(c);
            if !c.is_dir() {
                bail!("--cwd {}: not a directory", c.display());
            }
            c
        }
        None => {
            let real = std::fs::canonicalize(&process_cwd).unwrap_or(process_cwd.clone());
            if real.starts_with(&worktree) {
                real
            } else {
                worktree.clone()
            }
        }
    };
    let line = read_line(&a.line)?;
    let mut loaded = session::load(worktree, a.mode, a.config.as_deref())?;
    for w in &loaded.warnings {
        eprintln!("fence: warning: {}", for_terminal(&w.to_string()));
    }
    session::protect_git_code(&mut loaded.settings);
    let classifier = Classifier::new(loaded.settings)?;
    let verdict = classifier.classify_line_bytes(&line, &cwd);
    let text = if a.json {
        format!(
            "{}\n",
            crate::gate::log::json_inert(serde_json::to_string(&verdict)?)
        )
    } else {
        human(&verdict)
    };
    // A reader that went away (`| head`) is not an error of the verdict:
    // the exit status still carries it.
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
    Ok(verdict.exit_code() as u8)
}

fn read_line(words: &[std::ffi::OsString]) -> Result<Vec<u8>> {
    if words.len() == 1 && words[0] == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .take(MAX_STDIN)
            .read_to_end(&mut buf)
            .context("cannot read the line from stdin")?;
        // A trailing newline ends the line; it is not part of it.
        if buf.ends_with(b"\n") {
            buf.pop();
        }
        return Ok(buf);
    }
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(session::os_bytes(w));
    }
    Ok(out)
}

fn human(v: &Verdict) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let abs = if v.absolute { " (absolute)" } else { "" };
    let _ = writeln!(
        out,
        "{}: {}{} — {}",
        v.action,
        v.level,
        abs,
        for_terminal(&v.reason)
    );
    let _ = writeln!(out, "  rule: {}", v.rule);
    let _ = writeln!(out, "  part: {}", for_terminal(&v.part));
    if v.always_offered {
        let _ = writeln!(out, "  \"Always\" may be offered for this exact line");
    }
    if v.parts.len() > 1 {
        let _ = writeln!(out, "  parts:");
        for p in &v.parts {
            let _ = writeln!(
                out,
                "    {:<6} {:<5} {:<26} {}",
                p.level.as_str(),
                p.action.as_str(),
                p.rule,
                for_terminal(&p.part)
            );
        }
    }
    out
}
