//! The vocabulary of a decision: levels, actions, modes and contexts.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How dangerous an event is. Ordered: `Green < Yellow < Red`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Reads only: runs, nobody is asked.
    Green,
    /// Anything not known to be harmless: a person is asked, "Always" may be offered.
    Yellow,
    /// Dangerous: a person is asked, "Always" is never offered (or refused outright when absolute).
    Red,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Green => "green",
            Level::Yellow => "yellow",
            Level::Red => "red",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happens to an event. Ordered by strictness: `Allow < Ask < Deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }

    /// The action a level carries when no rule or mode says otherwise.
    pub fn for_level(level: Level, absolute: bool) -> Action {
        match (level, absolute) {
            (_, true) => Action::Deny,
            (Level::Green, false) => Action::Allow,
            (Level::Yellow | Level::Red, false) => Action::Ask,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Action {
    type Err = String;

    /// Accepts the words of the rule record (`allow|ask|deny`) and the seed
    /// products' words (`approve`), case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "allow" | "approve" => Ok(Action::Allow),
            "ask" => Ok(Action::Ask),
            "deny" => Ok(Action::Deny),
            _ => Err(format!(
                "unknown action `{s}` (expected allow, ask or deny)"
            )),
        }
    }
}

/// The session's approval mode (SPEC §2, "Modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Green runs, yellow and red ask, absolute refuses.
    #[default]
    Default,
    /// Auto-approve: whatever would be asked runs; absolute refusals still refuse.
    Auto,
    /// Read-only turn: commands with a write effect are denied, test runners run.
    Plan,
    /// Exec context asks for every program no rule matches; line context as default.
    AskAll,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Auto => "auto",
            Mode::Plan => "plan",
            Mode::AskAll => "ask-all",
        }
    }

    /// How strict a mode is, for configs that may only tighten (`auto` is the loosest).
    pub fn strictness(self) -> u8 {
        match self {
            Mode::Auto => 0,
            Mode::Default => 1,
            Mode::AskAll => 2,
            Mode::Plan => 3,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(Mode::Default),
            "auto" | "auto-approve" => Ok(Mode::Auto),
            "plan" => Ok(Mode::Plan),
            "ask-all" => Ok(Mode::AskAll),
            _ => Err(format!(
                "unknown mode `{s}` (expected default, auto, plan or ask-all)"
            )),
        }
    }
}

/// Where an event was seen (SPEC §2, "Contexts").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Context {
    /// A whole shell line proposed by an agent, judged before it runs.
    Line,
    /// One `execve` seen by the supervisor inside the sandbox.
    Exec,
}

impl Context {
    pub fn as_str(self) -> &'static str {
        match self {
            Context::Line => "line",
            Context::Exec => "exec",
        }
    }
}

/// The set of contexts a rule applies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Contexts {
    pub line: bool,
    pub exec: bool,
}

impl Contexts {
    pub const LINE: Contexts = Contexts {
        line: true,
        exec: false,
    };
    pub const BOTH: Contexts = Contexts {
        line: true,
        exec: true,
    };

    pub fn contains(self, c: Context) -> bool {
        match c {
            Context::Line => self.line,
            Context::Exec => self.exec,
        }
    }

    pub fn names(self) -> Vec<&'static str> {
        let mut v = Vec::with_capacity(2);
        if self.line {
            v.push("line");
        }
        if self.exec {
            v.push("exec");
        }
        v
    }
}

impl Serialize for Contexts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(s)
    }
}
