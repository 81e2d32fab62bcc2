//! Structural-schema validation, pruning and defaulting of custom resources (in progress).
