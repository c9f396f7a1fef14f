//! What users read: reports, packet views, JSON and the CI check.

pub mod filter;
