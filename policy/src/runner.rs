//! Command runners: programs that set up an environment (a project's
//! virtualenv or bundle, a display, a terminal multiplexer, injected
//! variables) and then run the command they are given. Like the wrappers of
//! SPEC §2 (`timeout`, `nice`…), what they run is judged: `uv run git push -f`
//! is the force push it runs. The runner itself is yellow: it prepares its
//! environment first (syncs a virtualenv, starts a server) and no rule lists it.
//!
//! The table says where each runner's command begins.

use crate::command::Invocation;
use crate::opts::{self, OptSpec};
use crate::rules::RuleId;
use crate::walk::Walker;
use crate::word::Arg;

/// Where a runner's command is.
#[derive(Debug, Clone, Copy)]
enum Runs {
    /// The words after the runner's options (and `skip` operands).
    Argv,
    /// The words after `--`; without one, the words after the options.
    AfterDashDash,
    /// The words after this option (`nix develop -c CMD ARGS…`).
    AfterOption(char, &'static str),
    /// This option's value, a string for `sh -c` (`nix-shell --run 'CMD'`).
    OptionString(char, &'static str),
    /// The operands joined with spaces, a string for `sh -c` (tmux).
    Joined,
    /// Each operand a string for `sh -c` (hyperfine's benchmarks).
    EachString,
    /// GNU parallel: a command template before `:::`, filled with each
    /// argument after it (or, without `:::`, with what it reads).
    Parallel,
    /// The words after the options; with this flag, the first of them is a string for
    /// `sh -c` instead (`entr -s 'make test'`).
    ArgvOrString(char),
    /// The words after this option, up to a `;` word (`fd -x CMD ARGS… \;`).
    AfterOptionUntilSemicolon(char, &'static str),
}

#[derive(Debug, Clone, Copy)]
struct Runner {
    program: &'static str,
    /// Options before the subcommand, for the ones that take a value.
    lead: OptSpec,
    /// The subcommands that run a command (any of them); empty when the
    /// program runs one without a subcommand.
    sub: &'static [&'static str],
    /// The runner's own options after the subcommand.
    spec: OptSpec,
    /// Operands of the runner's own before the command (`direnv exec DIR`).
    skip: usize,
    runs: Runs,
    /// Options whose value is a string for `sh -c` too (hyperfine's `--prepare`).
    strings: &'static [(char, &'static str)],
    /// Options whose value is a command of the program's own, run as `PROGRAM VALUE`
    /// (`cargo watch -x test` runs `cargo test`).
    own_commands: &'static [(char, &'static str)],
}

const fn spec(short_arg: &'static str, long_arg: &'static [&'static str]) -> OptSpec {
    OptSpec {
        short_arg,
        long_arg,
        permute: false,
    }
}

const NONE: OptSpec = spec("", &[]);

const fn runner(
    program: &'static str,
    sub: &'static [&'static str],
    spec: OptSpec,
    runs: Runs,
) -> Runner {
    Runner {
        program,
        lead: NONE,
        sub,
        spec,
        skip: 0,
        runs,
        strings: &[],
        own_commands: &[],
    }
}

const UV_RUN: OptSpec = spec(
    "pw",
    &[
        "with",
        "with-editable",
        "with-requirements",
        "python",
        "project",
        "directory",
        "package",
        "extra",
        "group",
        "only-group",
        "no-group",
        "env-file",
        "index",
        "default-index",
        "index-url",
        "extra-index-url",
        "find-links",
        "config-file",
        "cache-dir",
    ],
);
const UV_LEAD: OptSpec = spec("", &["directory", "project", "config-file", "cache-dir"]);
const CONDA_RUN: OptSpec = spec("np", &["name", "prefix", "cwd"]);
const TMUX_LEAD: OptSpec = spec("LSfT", &[]);
/// The value-taking letters of tmux's commands that run a shell command
/// (`new-session -s NAME`, `split-window -l SIZE`, `run-shell -t PANE`…).
const TMUX_RUN: OptSpec = spec("ceFfnstxyl", &[]);

static RUNNERS: &[Runner] = &[
    Runner {
        lead: UV_LEAD,
        ..runner("uv", &["run"], UV_RUN, Runs::Argv)
    },
    Runner {
        lead: spec("C", &["directory", "project"]),
        ..runner("poetry", &["run"], NONE, Runs::Argv)
    },
    runner("pipenv", &["run"], NONE, Runs::Argv),
    runner("pdm", &["run"], spec("p", &["project", "venv"]), Runs::Argv),
    runner("hatch", &["run"], NONE, Runs::Argv),
    runner("rye", &["run"], NONE, Runs::Argv),
    runner("bundle", &["exec"], spec("", &["gemfile"]), Runs::Argv),
    runner("bundler", &["exec"], spec("", &["gemfile"]), Runs::Argv),
    runner("conda", &["run"], CONDA_RUN, Runs::Argv),
    runner("mamba", &["run"], CONDA_RUN, Runs::Argv),
    runner("micromamba", &["run"], CONDA_RUN, Runs::Argv),
    runner(
        "mise",
        &["exec", "x"],
        spec("C", &["cd"]),
        Runs::AfterDashDash,
    ),
    runner("asdf", &["exec"], NONE, Runs::Argv),
    runner("pyenv", &["exec"], NONE, Runs::Argv),
    runner("rbenv", &["exec"], NONE, Runs::Argv),
    runner("nodenv", &["exec"], NONE, Runs::Argv),
    // `corepack npm publish`: the package manager it names, run with the rest.
    runner("corepack", &[], NONE, Runs::Argv),
    Runner {
        skip: 1,
        ..runner("direnv", &["exec"], NONE, Runs::Argv)
    },
    runner(
        "nix",
        &["develop", "shell"],
        NONE,
        Runs::AfterOption('c', "command"),
    ),
    runner("nix-shell", &[], NONE, Runs::OptionString('\0', "run")),
    runner("nix-shell", &[], NONE, Runs::OptionString('\0', "command")),
    runner(
        "xvfb-run",
        &[],
        spec(
            "nsfepw",
            &[
                "server-num",
                "server-args",
                "auth-file",
                "error-file",
                "xauth-protocol",
                "wait",
            ],
        ),
        Runs::Argv,
    ),
    runner("fakeroot", &[], spec("lisb", &["lib", "faked"]), Runs::Argv),
    runner(
        "dbus-run-session",
        &[],
        spec("", &["config-file", "dbus-daemon"]),
        Runs::Argv,
    ),
    runner("ssh-agent", &[], spec("aEPt", &[]), Runs::Argv),
    runner(
        "numactl",
        &[],
        spec(
            "CNmipP",
            &[
                "physcpubind",
                "cpunodebind",
                "membind",
                "interleave",
                "preferred",
                "preferred-many",
            ],
        ),
        Runs::Argv,
    ),
    runner("cgexec", &[], spec("g", &[]), Runs::Argv),
    runner("proxychains", &[], spec("f", &[]), Runs::Argv),
    runner("proxychains4", &[], spec("f", &[]), Runs::Argv),
    runner(
        "torsocks",
        &[],
        spec("upaP", &["user", "pass", "address", "port"]),
        Runs::Argv,
    ),
    runner("torify", &[], NONE, Runs::Argv),
    Runner {
        skip: 1,
        ..runner("faketime", &[], spec("", &["date-prog"]), Runs::Argv)
    },
    runner("caffeinate", &[], spec("tw", &[]), Runs::Argv),
    runner("ccache", &[], NONE, Runs::Argv),
    runner(
        "perf",
        &["stat", "record", "trace"],
        spec("eoCGFcmtjr", &["event", "output", "cpu", "cgroup"]),
        Runs::Argv,
    ),
    runner("gdb", &[], NONE, Runs::AfterOption('\0', "args")),
    runner("screen", &[], spec("SceHhpTtXs", &["Logfile"]), Runs::Argv),
    Runner {
        lead: TMUX_LEAD,
        ..runner(
            "tmux",
            &[
                "new-session",
                "new",
                "new-window",
                "neww",
                "split-window",
                "splitw",
                "respawn-pane",
                "respawnp",
                "respawn-window",
                "respawnw",
                "run-shell",
                "run",
            ],
            TMUX_RUN,
            Runs::Joined,
        )
    },
    Runner {
        lead: TMUX_LEAD,
        ..runner(
            "tmux",
            &["send-keys", "send"],
            spec("Nt", &[]),
            Runs::Joined,
        )
    },
    runner("dotenv", &[], spec("ecv", &[]), Runs::AfterDashDash),
    runner(
        "dotenvx",
        &["run"],
        spec("f", &["env-file"]),
        Runs::AfterDashDash,
    ),
    runner(
        "doppler",
        &["run"],
        spec("pc", &["project", "config"]),
        Runs::AfterDashDash,
    ),
    runner("op", &["run"], spec("", &["env-file"]), Runs::AfterDashDash),
    runner(
        "infisical",
        &["run"],
        spec("", &["env", "path"]),
        Runs::AfterDashDash,
    ),
    Runner {
        skip: 1,
        ..runner("aws-vault", &["exec"], NONE, Runs::AfterDashDash)
    },
    Runner {
        strings: &[
            ('p', "prepare"),
            ('c', "cleanup"),
            ('s', "setup"),
            ('\0', "conclude"),
        ],
        ..runner(
            "hyperfine",
            &[],
            OptSpec {
                short_arg: "wmMrpcsSPLDnuN",
                long_arg: &[
                    "warmup",
                    "min-runs",
                    "max-runs",
                    "runs",
                    "prepare",
                    "cleanup",
                    "setup",
                    "conclude",
                    "shell",
                    "parameter-scan",
                    "parameter-step-size",
                    "parameter-list",
                    "command-name",
                    "time-unit",
                    "export-asciidoc",
                    "export-csv",
                    "export-json",
                    "export-markdown",
                    "export-orgmode",
                    "output",
                    "reference",
                    "style",
                    "sort",
                    "input",
                ],
                permute: true,
            },
            Runs::EachString,
        )
    },
    runner(
        "parallel",
        &[],
        spec(
            "jSadEINLnPC",
            &[
                "jobs",
                "sshlogin",
                "arg-file",
                "colsep",
                "delimiter",
                "max-args",
                "max-lines",
                "joblog",
                "results",
                "tmpdir",
                "workdir",
                "wd",
                "timeout",
                "delay",
                "halt",
                "memfree",
                "load",
                "retries",
                "basefile",
                "env",
                "tag-string",
                "sshloginfile",
                "transferfile",
                "return",
            ],
        ),
        Runs::Parallel,
    ),
    runner(
        "sem",
        &[],
        spec("j", &["jobs", "id", "semaphorename"]),
        Runs::Parallel,
    ),
    // File finders and watchers that run a command for what they find or see change:
    // entr and watchexec also run it once at start, and on every change after.
    runner(
        "fd",
        &[],
        NONE,
        Runs::AfterOptionUntilSemicolon('x', "exec"),
    ),
    runner(
        "fd",
        &[],
        NONE,
        Runs::AfterOptionUntilSemicolon('X', "exec-batch"),
    ),
    runner(
        "fdfind",
        &[],
        NONE,
        Runs::AfterOptionUntilSemicolon('x', "exec"),
    ),
    runner(
        "fdfind",
        &[],
        NONE,
        Runs::AfterOptionUntilSemicolon('X', "exec-batch"),
    ),
    runner("entr", &[], NONE, Runs::ArgvOrString('s')),
    // watchexec hands its command to a shell (`watchexec 'cargo test && x'`).
    runner("watchexec", &[], WATCHEXEC, Runs::Joined),
    runner("nodemon", &[], NONE, Runs::OptionString('x', "exec")),
    // cargo-watch: `-s CMD` a shell line, `-x CMD` a cargo command, `-- CMD…` a command.
    Runner {
        strings: &[('s', "shell")],
        own_commands: &[('x', "exec")],
        ..runner("cargo", &["watch"], CARGO_WATCH, Runs::AfterDashDash)
    },
    // Each operand is a command line for a shell.
    runner("concurrently", &[], CONCURRENTLY, Runs::EachString),
];

const WATCHEXEC: OptSpec = spec(
    "wWFosdEefji",
    &[
        "watch",
        "watch-non-recursive",
        "watch-file",
        "on-busy-update",
        "signal",
        "stop-signal",
        "stop-timeout",
        "map-signal",
        "debounce",
        "delay-run",
        "shell",
        "emit-events-to",
        "env",
        "wrap-process",
        "color",
        "bell",
        "project-origin",
        "workdir",
        "exts",
        "filter",
        "filter-file",
        "filter-prog",
        "ignore",
        "ignore-file",
        "fs-events",
        "timeout",
    ],
);
const CARGO_WATCH: OptSpec = OptSpec {
    short_arg: "xswidCBLE",
    long_arg: &[
        "exec",
        "shell",
        "watch",
        "ignore",
        "delay",
        "workdir",
        "features",
        "env-var",
        "env-file",
        "use-shell",
    ],
    permute: true,
};
const CONCURRENTLY: OptSpec = OptSpec {
    short_arg: "nsmpclt",
    long_arg: &[
        "names",
        "name-separator",
        "success",
        "max-processes",
        "prefix",
        "prefix-colors",
        "prefix-length",
        "timestamp-format",
        "hide",
        "restart-tries",
        "restart-after",
        "default-input-target",
        "kill-signal",
    ],
    permute: true,
};

/// GNU parallel's separators between a command and its argument lists.
fn is_parallel_separator(t: &str) -> bool {
    matches!(t, ":::" | "::::" | ":::+" | "::::+")
}

/// Words joined with spaces as one string, `{}` replaced by `arg` (appended
/// when no word holds it), as GNU parallel builds the line it runs.
fn joined(words: &[&Arg], arg: Option<&Arg>) -> Arg {
    let mut text = words
        .iter()
        .map(|a| a.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let mut known = words.iter().all(|a| a.known);
    if let Some(arg) = arg {
        if text.contains("{}") {
            text = text.replace("{}", &arg.text);
        } else {
            text.push(' ');
            text.push_str(&arg.text);
        }
        known &= arg.known;
    }
    Arg {
        text,
        known,
        ..Arg::default()
    }
}

/// Key names `tmux send-keys` types that are not text (`Enter`, `C-m`).
fn is_tmux_key(t: &str) -> bool {
    matches!(
        t,
        "Enter" | "KPEnter" | "C-m" | "C-j" | "Escape" | "Tab" | "Space"
    )
}

impl Walker<'_> {
    /// Judges `args` when its program is a command runner in one of its
    /// running forms; returns false otherwise (the caller judges it as a
    /// program).
    pub fn command_runner(
        &mut self,
        name: &str,
        args: &[Arg],
        inv: &Invocation,
        depth: usize,
    ) -> bool {
        let mut runs_something = false;
        for r in RUNNERS.iter().filter(|r| r.program == name) {
            runs_something |= self.runner_form(r, args, inv, depth);
        }
        runs_something
    }

    fn runner_form(&mut self, r: &Runner, args: &[Arg], inv: &Invocation, depth: usize) -> bool {
        let start = if r.sub.is_empty() {
            1
        } else {
            let lead = opts::parse(args, 1, &r.lead);
            match args.get(lead.first_operand) {
                Some(w) if r.sub.contains(&w.text.as_str()) => lead.first_operand + 1,
                _ => return false,
            }
        };
        let p = opts::parse(args, start, &r.spec);
        // The command's first word, for the forms that run words as they are.
        let from = |i: usize| i.min(args.len());
        let command_at = match r.runs {
            Runs::Argv | Runs::ArgvOrString(_) => from(p.first_operand + r.skip),
            Runs::AfterDashDash => match args[start..].iter().position(|a| a.text == "--") {
                Some(i) => start + i + 1,
                None => from(p.first_operand + r.skip),
            },
            Runs::AfterOption(short, long) | Runs::AfterOptionUntilSemicolon(short, long) => {
                let at = args[start..].iter().position(|a| {
                    let t = a.text.as_str();
                    (short != '\0' && t == format!("-{short}")) || opts::is_long(t, long)
                });
                match at {
                    Some(i) => start + i + 1,
                    None => return false,
                }
            }
            Runs::OptionString(..) | Runs::Joined | Runs::EachString | Runs::Parallel => args.len(),
        };
        let command: Vec<Arg> = match r.runs {
            Runs::Argv | Runs::AfterDashDash | Runs::AfterOption(..) => args[command_at..].to_vec(),
            Runs::AfterOptionUntilSemicolon(..) => args[command_at..]
                .iter()
                .take_while(|a| a.text != ";")
                .cloned()
                .collect(),
            Runs::ArgvOrString(flag) if p.has(flag, "") => {
                args[command_at..].iter().take(1).cloned().collect()
            }
            Runs::ArgvOrString(_) => args[command_at..].to_vec(),
            Runs::OptionString(short, long) => {
                // `--run 'CMD'`, `--run='CMD'`, `-X 'CMD'` anywhere among the options.
                let value = args[start..].iter().enumerate().find_map(|(i, a)| {
                    let t = a.text.as_str();
                    if let Some((name, v)) = t.strip_prefix("--").and_then(|l| l.split_once('='))
                        && opts::abbreviates(name, long)
                    {
                        return Some(Arg {
                            text: v.to_string(),
                            known: a.known,
                            ..Arg::default()
                        });
                    }
                    let named =
                        opts::is_long(t, long) || (short != '\0' && t == format!("-{short}"));
                    named.then(|| args.get(start + i + 1).cloned()).flatten()
                });
                match value {
                    Some(s) => vec![s],
                    None => return false,
                }
            }
            Runs::Joined | Runs::EachString | Runs::Parallel => {
                p.operands.iter().map(|&i| args[i].clone()).collect()
            }
        };
        self.find(
            RuleId::DefaultUnknown,
            format!("{} runs a command in an environment it sets up", r.program),
        );
        // The runner's own words (`direnv exec DIR`, `uv run --directory DIR`);
        // strings run by a shell are judged as lines instead.
        if matches!(
            r.runs,
            Runs::Argv
                | Runs::AfterDashDash
                | Runs::AfterOption(..)
                | Runs::AfterOptionUntilSemicolon(..)
                | Runs::ArgvOrString(_)
        ) {
            self.check_path_args(&args[..command_at], &[]);
        }
        for &(short, long) in r.strings {
            let values: Vec<Arg> = p.values_of(short, long).cloned().collect();
            for v in values {
                self.shell_string(&v, inv);
            }
        }
        for &(short, long) in r.own_commands {
            let values: Vec<Arg> = p.values_of(short, long).cloned().collect();
            for v in values {
                let line = Arg {
                    text: format!("{} {}", r.program, v.text),
                    ..v
                };
                self.shell_string(&line, inv);
            }
        }
        match r.runs {
            Runs::OptionString(..) | Runs::EachString => {
                for s in &command {
                    self.shell_string(s, inv);
                }
            }
            Runs::Joined => {
                let words: Vec<&Arg> = command.iter().filter(|a| !is_tmux_key(&a.text)).collect();
                if !words.is_empty() {
                    self.shell_string(&joined(&words, None), inv);
                }
            }
            Runs::Parallel => self.parallel(&command, inv),
            Runs::ArgvOrString(flag) if p.has(flag, "") => {
                for s in &command {
                    self.shell_string(s, inv);
                }
            }
            Runs::Argv
            | Runs::AfterDashDash
            | Runs::AfterOption(..)
            | Runs::AfterOptionUntilSemicolon(..)
            | Runs::ArgvOrString(_) => {
                if !command.is_empty() {
                    // What these run, runs in the project's virtualenv or the conda
                    // environment (each made with its own pip): `poetry run pip install`
                    // installs there, not into the system's Python. (uv's and rye's
                    // environments have no pip of their own: the one found on the PATH
                    // is the system's.)
                    let saved_venv = self.state.venv;
                    if matches!(
                        r.program,
                        "poetry" | "pipenv" | "pdm" | "hatch" | "conda" | "mamba" | "micromamba"
                    ) {
                        self.state.venv = true;
                    }
                    self.judge_argv(&command, inv, depth + 1);
                    self.state.venv = saved_venv;
                }
            }
        }
        true
    }

    /// GNU parallel's runs: `parallel rm -rf ::: ~ /` runs `rm -rf ~` and
    /// `rm -rf /` with a shell; `parallel ::: 'CMD' …` runs each argument.
    fn parallel(&mut self, operands: &[Arg], inv: &Invocation) {
        let split = operands
            .iter()
            .position(|a| is_parallel_separator(&a.text))
            .unwrap_or(operands.len());
        let template: Vec<&Arg> = operands[..split].iter().collect();
        let inputs: Vec<&Arg> = operands[split..]
            .iter()
            .filter(|a| !is_parallel_separator(&a.text))
            .take(8)
            .collect();
        if split == operands.len() {
            // The arguments come from stdin: judged as the template with its
            // arguments still to come (`ls | parallel rm -rf`).
            if !template.is_empty() {
                let blank = Arg::literal("");
                self.shell_string(&joined(&template, Some(&blank)), inv);
            } else if inv.io.stdin_pipe {
                // Without a template each line it reads is a command line of its own:
                // `curl … | parallel` runs what it downloads, as `| sh` does.
                self.find(
                    RuleId::PipeToInterpreter,
                    "parallel runs each line it reads from the pipe as a command",
                );
            }
            return;
        }
        if template.is_empty() {
            for a in inputs {
                self.shell_string(a, inv);
            }
            return;
        }
        for a in inputs {
            // Each argument is one word of the line parallel runs.
            let quoted = Arg {
                text: shell_quote(&a.text),
                known: a.known,
                ..Arg::default()
            };
            self.shell_string(&joined(&template, Some(&quoted)), inv);
        }
    }
}

/// `s` as one single-quoted shell word, as GNU parallel quotes each argument
/// it puts in the line (the calling shell expanded `~` and `$X` already).
pub(crate) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
