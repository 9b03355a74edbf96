//! The shaper keeps the memory a reload frees, for the next reload.
//!
//! Why: a reload at thousands of circuits allocates tens of megabytes
//! (the new plan, the edit lists, the added circuits' queues and
//! statistics) and frees as much when the old state goes. glibc's
//! malloc hands blocks over its mmap threshold straight back to the
//! kernel and trims the heap's free top, so the next reload takes the
//! same memory back a page at a time, each page faulted in and zeroed
//! by the kernel: about a tenth of a reload's CPU, in the kernel. With
//! the thresholds raised, freed memory stays in malloc's free lists and
//! the next reload reuses it.
//!
//! What it costs: the process keeps, at most, what its largest reload
//! used at once (it never grows beyond what was in use); a block of
//! [`MMAP_FROM`] or more (the frame pool) is still mapped and unmapped
//! whole. Elsewhere than on glibc nothing is changed.

/// Blocks this large or larger are mapped on their own: the ceiling of
/// glibc's own moving threshold on a 64-bit machine (it raises its
/// threshold up to this as mapped blocks are freed, from 128 KiB).
pub const MMAP_FROM: usize = 32 << 20;

/// The heap's free top is given back to the kernel once it is this
/// large.
pub const TRIM_FROM: usize = 256 << 20;

/// Raises malloc's thresholds so that freed memory is kept for reuse;
/// `true` if the allocator took both (glibc), `false` where there is
/// nothing to set.
pub fn keep_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let set = |param: libc::c_int, value: usize| {
            let Ok(value) = libc::c_int::try_from(value) else {
                return false;
            };
            // SAFETY: mallopt only sets malloc's parameters; glibc
            // takes it at any time, from any thread.
            unsafe { libc::mallopt(param, value) == 1 }
        };
        let mmap = set(libc::M_MMAP_THRESHOLD, MMAP_FROM);
        let trim = set(libc::M_TRIM_THRESHOLD, TRIM_FROM);
        mmap && trim
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_takes_both_thresholds() {
        assert!(keep_freed_memory());
    }
}
