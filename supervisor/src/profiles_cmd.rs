//! `fence profiles`: the built-in profiles and what each adds to a `fence run` session.

use anyhow::Result;
use policy::profile::{DefaultApprover, PROFILES, Profile};

use crate::ProfilesArgs;

pub fn run(a: ProfilesArgs) -> Result<u8> {
    if a.json {
        let list: Vec<serde_json::Value> = PROFILES.iter().map(record).collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        print_table();
    }
    Ok(0)
}

fn in_home(paths: &[&str], folder: bool) -> Vec<String> {
    paths
        .iter()
        .map(|p| format!("~/{p}{}", if folder { "/" } else { "" }))
        .collect()
}

/// One profile as `fence profiles --json` prints it (a stable record: paths under the home
/// directory start with `~/`, folders end with `/`).
fn record(p: &Profile) -> serde_json::Value {
    serde_json::json!({
        "name": p.name,
        "description": p.description,
        "writable_folders": in_home(p.folders, true),
        "writable_files": in_home(p.files, false),
        "protected": in_home(p.protected, false),
        "protected_entries": in_home(p.protected_entries, true),
        "domains": p.domains,
        "env": p.env,
        "approver": p.approver.map(|a| match a { DefaultApprover::Deny => "deny" }),
        "notes": p.notes,
    })
}

fn print_table() {
    let row = |key: &str, items: Vec<String>, empty: &str| {
        let text = if items.is_empty() {
            empty.to_string()
        } else {
            items.join("  ")
        };
        println!("  {key:<10} {text}");
    };
    for (i, p) in PROFILES.iter().enumerate() {
        if i > 0 {
            println!();
        }
        println!("{}  {}", p.name, p.description);
        let mut writable = in_home(p.folders, true);
        writable.extend(in_home(p.files, false));
        row(
            "writable",
            writable,
            "nothing beyond the worktree and TMPDIR",
        );
        let mut protected = in_home(p.protected, false);
        protected.extend(
            in_home(p.protected_entries, true)
                .into_iter()
                .map(|f| format!("{f}* (the entries there at start)")),
        );
        row("protected", protected, "-");
        row(
            "domains",
            p.domains.iter().map(|d| d.to_string()).collect(),
            "none",
        );
        row(
            "passes",
            p.env.iter().map(|v| v.to_string()).collect(),
            "no credential variable",
        );
        row(
            "approver",
            p.approver
                .map(|a| match a {
                    DefaultApprover::Deny => "deny (every question is No) unless --approver".into(),
                })
                .into_iter()
                .collect(),
            "as for any session",
        );
        row("notes", vec![p.notes.to_string()], "");
    }
    println!(
        "\nfence run --profile NAME adds these to the flags and the user's config (profile = \"NAME\");\n\
         folders are created when missing, files are writable when they exist, protected paths\n\
         are asked before any write, domains go through fence's proxy."
    );
}
