//! `fence approvals` and `fence sessions` driven over the approval protocol.
