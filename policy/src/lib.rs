//! fence policy
