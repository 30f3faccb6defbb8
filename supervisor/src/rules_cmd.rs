//! `fence rules`: the rule table in force.

use anyhow::{Context as _, Result};
use policy::Rule;

use crate::escape::for_terminal;
use crate::{RulesArgs, session};

pub fn run(a: RulesArgs) -> Result<u8> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let env = session::environment();
    let home = env.get("HOME").map(std::path::PathBuf::from);
    let worktree = session::find_worktree(
        a.worktree.as_deref(),
        &cwd,
        home.as_deref(),
        a.force_worktree,
    )?;
    let loaded = session::load(worktree, None, a.config.as_deref())?;
    for w in &loaded.warnings {
        eprintln!("fence: warning: {}", for_terminal(&w.to_string()));
    }
    let rules = &loaded.settings.table.rules;
    if a.json {
        println!("{}", serde_json::to_string_pretty(rules)?);
    } else {
        print_table(rules);
    }
    if a.check {
        if loaded.warnings.is_empty() {
            eprintln!("fence: all rules read");
            return Ok(0);
        }
        eprintln!(
            "fence: {} config entr{} skipped",
            loaded.warnings.len(),
            if loaded.warnings.len() == 1 {
                "y was"
            } else {
                "ies were"
            }
        );
        return Ok(1);
    }
    Ok(0)
}

fn print_table(rules: &[Rule]) {
    println!(
        "{:<26} {:<7} {:<6} {:<9} DESCRIPTION",
        "RULE", "LEVEL", "ACTION", "CONTEXTS"
    );
    for r in rules {
        let level = if r.absolute {
            "red!".to_string()
        } else {
            r.level.to_string()
        };
        println!(
            "{:<26} {:<7} {:<6} {:<9} {}",
            r.id,
            level,
            r.action.as_str(),
            r.contexts.names().join(","),
            for_terminal(&r.description)
        );
        if !r.commands.is_empty() {
            println!("{:<26} {}", "", for_terminal(&r.commands.join("  ")));
        }
    }
    println!("\nred! = absolute: refused in every mode, auto-approve included.");
}
