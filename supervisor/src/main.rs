//! `fence`: the command-line face of fence. Thin: argument parsing, wiring
//! and output; the policy lives in the `policy` crate.

/// `eprintln!` for every module below: fence's messages are written to stderr, and a
/// stderr that went away (`fence run … 2>&1 | head -1`) is not a reason to panic — above
/// all in `fence run`, whose supervisor must go on serving its sandbox. std's macro
/// panics on a failed write; this one drops the message.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod approvals;
mod check;
mod doctor;
mod escape;
mod gate;
mod hook;
mod net;
mod profiles_cmd;
mod rules_cmd;
mod run;
mod session;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use policy::Mode;

/// Exit status for a usage error (bad flags, missing worktree, bad config),
/// as `sysexits.h`'s EX_USAGE.
pub const EXIT_USAGE: u8 = 64;

#[derive(Parser, Debug)]
#[command(
    name = "fence",
    version,
    about = "A sandbox supervisor for coding agents and CI jobs",
    long_about = "fence runs a command line under Landlock and seccomp user notification \
                  (fence run): every exec, write outside the worktree and connection of the \
                  whole process tree reaches a policy and, when it asks, a person \
                  (fence approvals). fence check classifies a shell line with the same rules."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Classify a shell line: green runs, yellow asks, red asks or is refused.
    Check(CheckArgs),
    /// Print the rule table in force (built-in rules and config).
    Rules(RulesArgs),
    #[command(about = RUN_ABOUT)]
    Run(Box<run::RunArgs>),
    /// Answer the questions of running sessions (a terminal UI; --once for scripts).
    Approvals(approvals::ApprovalsArgs),
    /// List the running sessions.
    Sessions(approvals::SessionsArgs),
    /// What this kernel offers fence, and what `fence run` can and cannot enforce here.
    Doctor(doctor::DoctorArgs),
    #[command(about = HOOK_ABOUT)]
    Hook(hook::HookArgs),
    /// List the profiles of `fence run --profile`: what each makes writable, keeps
    /// protected, lets through the proxy and passes.
    Profiles(ProfilesArgs),
    /// The sandbox's first process (started by `fence run`, not by hand).
    #[command(name = "__shim", hide = true)]
    Shim,
}

// Without a final period, as clap shows the doc comments of the other subcommands.
const RUN_ABOUT: &str =
    "Run a command inside the fence: the kernel confines its whole process tree";
const HOOK_ABOUT: &str = "An agent's pre-tool hook: one tool call as JSON on stdin, the decision on stdout (claude-code, codex, gemini)";

/// The parser for `fence SUBCOMMAND …` with only that subcommand built, for the two that
/// start often: `fence run` (every sandbox) and `fence hook` (every tool call of an
/// agent). Building and running the whole tree (nine subcommands) took 0.4–0.6 ms of
/// `fence run`'s start here, `run`'s alone 0.28 ms. The subcommand's `Command` comes from
/// the same derive, so its flags, texts and errors are the same (tested against the tree).
fn single_subcommand(name: &str) -> Option<clap::Command> {
    let sub = match name {
        "run" => run::RunArgs::augment_args(clap::Command::new("run")).about(RUN_ABOUT),
        "hook" => hook::HookArgs::augment_args(clap::Command::new("hook")).about(HOOK_ABOUT),
        _ => return None,
    };
    Some(clap::Command::new("fence").subcommand(sub))
}

fn parse_cli() -> Result<Cli, clap::Error> {
    let first = std::env::args_os().nth(1);
    match first
        .as_ref()
        .and_then(|f| f.to_str())
        .and_then(single_subcommand)
    {
        Some(parser) => {
            use clap::FromArgMatches as _;
            Cli::from_arg_matches(&parser.try_get_matches()?)
        }
        None => Cli::try_parse(),
    }
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The worktree (default: the top of the git worktree of the current directory).
    #[arg(long, value_name = "DIR")]
    worktree: Option<PathBuf>,
    /// Accept / or $HOME as the worktree.
    #[arg(long)]
    force_worktree: bool,
    /// The directory the line runs in (default: the current directory when it is inside the worktree, else the worktree).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// default, auto, plan or ask-all.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    mode: Option<Mode>,
    /// Config file to use instead of ~/.config/fence/config.toml.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// The line, after `--` or after the options (words are joined with spaces); `-` reads
    /// it from stdin.
    #[arg(trailing_var_arg = true, required = true, value_name = "LINE")]
    line: Vec<OsString>,
}

#[derive(Args, Debug)]
pub struct RulesArgs {
    /// Print JSON (one array of rule records).
    #[arg(long)]
    json: bool,
    /// Exit 1 when a rule in the config could not be read.
    #[arg(long)]
    check: bool,
    /// Config file to use instead of ~/.config/fence/config.toml.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The worktree whose .fence.toml applies (default: as for check).
    #[arg(long, value_name = "DIR")]
    worktree: Option<PathBuf>,
    /// Accept / or $HOME as the worktree.
    #[arg(long)]
    force_worktree: bool,
}

#[derive(Args, Debug)]
pub struct ProfilesArgs {
    /// Print JSON (one array of profile records).
    #[arg(long)]
    json: bool,
}

pub(crate) fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

fn main() -> ExitCode {
    // fence waits for its children (`fence run`'s shim, and the shim for the sandbox's
    // processes; `fence doctor`'s probes): with SIGCHLD ignored, as a parent may leave it
    // across exec, the kernel would reap them itself, the waits would find nothing (a
    // session that never ends, a probe taken for failed), and a pid fence kills after such
    // a reap could be another process's. A copied shim inherits this.
    // SAFETY: signal() with SIG_DFL on a valid signal number.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    // The shim (`fence __shim`, started by `fence run` with an empty environment) skips the
    // command-line parser: building it is a noticeable part of the sandbox's start.
    if std::env::args_os().nth(1).is_some_and(|a| a == "__shim") {
        let unshare_net = match std::env::args_os().len() {
            2 => Some(false),
            3 => std::env::args_os()
                .nth(2)
                .is_some_and(|a| a == shim::UNSHARE_NET_ARG)
                .then_some(true),
            _ => None,
        };
        if let Some(unshare_net) = unshare_net {
            return ExitCode::from(
                shim::init_process::run_from_inherited_channel(unshare_net, false) as u8,
            );
        }
    }
    let cli = match parse_cli() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                // `fence run` keeps 126/127 and the command's own statuses apart from
                // its usage errors, like env and timeout (SPEC Appendix A).
                _ if std::env::args_os().nth(1).is_some_and(|a| a == "run") => {
                    run::EXIT_FENCE_FAILED as u8
                }
                // An agent reads 64 as "the hook failed, go on": a hook that
                // cannot read its flags blocks instead.
                _ if std::env::args_os().nth(1).is_some_and(|a| a == "hook") => hook::EXIT_BLOCK,
                _ => EXIT_USAGE,
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    if matches!(
        cli.command,
        Command::Check(_)
            | Command::Rules(_)
            | Command::Profiles(_)
            | Command::Sessions(_)
            | Command::Doctor(_)
    ) {
        // These print and exit: a reader that goes away (`fence rules | head`) ends them
        // as it ends any filter, instead of a write error. `fence run` keeps SIGPIPE
        // ignored: its supervisor must outlive a closed terminal or pipe.
        // SAFETY: signal() with SIG_DFL on a valid signal number, before any thread exists.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let result = match cli.command {
        Command::Check(a) => check::run(a),
        Command::Rules(a) => rules_cmd::run(a),
        Command::Profiles(a) => profiles_cmd::run(a),
        Command::Approvals(a) => approvals::run(a),
        Command::Sessions(a) => approvals::sessions(a),
        Command::Run(a) => return ExitCode::from(run::run(*a) as u8),
        Command::Doctor(a) => return ExitCode::from(doctor::run(a)),
        Command::Hook(a) => return ExitCode::from(hook::run(a)),
        Command::Shim => {
            return ExitCode::from(
                shim::init_process::run_from_inherited_channel(false, false) as u8
            );
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("fence: {}", escape::for_terminal(&format!("{e:#}")));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    fn subcommand_help(mut parent: clap::Command, name: &str) -> String {
        parent.build();
        parent
            .find_subcommand_mut(name)
            .unwrap_or_else(|| panic!("no {name}"))
            .render_long_help()
            .to_string()
    }

    fn parse_single(argv: &[&str]) -> Result<Cli, clap::Error> {
        let parser = single_subcommand(argv[1]).expect("a single-subcommand parser");
        Cli::from_arg_matches(&parser.try_get_matches_from(argv)?)
    }

    #[test]
    fn a_single_subcommand_parser_is_the_tree_s_own_subcommand() {
        for name in ["run", "hook"] {
            let single = single_subcommand(name).unwrap();
            assert_eq!(
                subcommand_help(single, name),
                subcommand_help(Cli::command(), name),
                "{name} --help"
            );
        }
        assert!(single_subcommand("check").is_none());
        // clap drops a doc comment's final period; the constants must match the others.
        for sub in Cli::command().get_subcommands() {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            assert!(!about.ends_with('.'), "{}: {about:?}", sub.get_name());
        }
        for argv in [
            &[
                "fence",
                "run",
                "--allow-write",
                "/x",
                "--mode",
                "auto",
                "--",
                "true",
                "-v",
            ][..],
            &[
                "fence",
                "run",
                "--no-write-watch",
                "--",
                "sh",
                "-c",
                "exit 3",
            ],
            &["fence", "hook", "claude-code", "--mode", "plan"],
        ] {
            let full = Cli::try_parse_from(argv).map(|c| format!("{c:?}"));
            let single = parse_single(argv).map(|c| format!("{c:?}"));
            assert_eq!(
                single.as_ref().map_err(|e| e.to_string()),
                full.as_ref().map_err(|e| e.to_string()),
                "{argv:?}"
            );
            assert!(single.is_ok(), "{argv:?}");
        }
        for argv in [
            &["fence", "run", "--bogus", "--", "true"][..],
            &["fence", "run"],
            &["fence", "run", "--mode", "sometimes", "--", "true"],
            &["fence", "hook", "--mode", "x", "codex"],
            &["fence", "hook"],
        ] {
            let full = Cli::try_parse_from(argv).unwrap_err();
            let single = parse_single(argv).unwrap_err();
            assert_eq!(single.kind(), full.kind(), "{argv:?}");
            assert_eq!(single.to_string(), full.to_string(), "{argv:?}");
        }
    }
}
