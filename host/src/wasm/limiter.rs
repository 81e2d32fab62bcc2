//! Per-call resource limiter: caps linear memory and table growth, and
//! remembers a refused memory growth so that the trap the guest raises next
//! (Rust aborts when an allocation fails) is reported as out-of-memory.

use wasmtime::ResourceLimiter;

/// Most table elements one instance may have; generous for Rust guests,
/// which use one small table for indirect calls.
const MAX_TABLE_ELEMENTS: usize = 20_000;

/// Limits one store's memories and tables.
pub(crate) struct MemoryLimiter {
    memory_bytes: usize,
    refused: bool,
    /// The largest size a memory of the store was allowed to grow to.
    grown_to: usize,
}

impl MemoryLimiter {
    pub(crate) fn new(memory_bytes: usize) -> Self {
        MemoryLimiter {
            memory_bytes,
            refused: false,
            grown_to: 0,
        }
    }

    /// The largest linear memory the instance has grown to.
    pub(crate) fn grown_to(&self) -> usize {
        self.grown_to
    }

    /// The limit, when a growth past it was refused during this call.
    pub(crate) fn refused(&self) -> Option<usize> {
        self.refused.then_some(self.memory_bytes)
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            self.refused = true;
            return Ok(false);
        }
        self.grown_to = self.grown_to.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        // A component is several core instances (the program, its shims).
        32
    }

    fn memories(&self) -> usize {
        4
    }

    fn tables(&self) -> usize {
        16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_growth_past_the_limit_and_remembers_it() {
        let mut l = MemoryLimiter::new(1 << 20);
        assert!(l.memory_growing(0, 1 << 20, None).unwrap());
        assert_eq!(l.refused(), None);
        assert_eq!(l.grown_to(), 1 << 20);
        assert!(!l.memory_growing(1 << 20, (1 << 20) + 65536, None).unwrap());
        assert_eq!(l.refused(), Some(1 << 20));
    }
}
