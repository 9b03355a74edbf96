//! The compiled programs' ELF objects, embedded in the library when the
//! `ebpf` feature is on (build.rs compiles them into `OUT_DIR`).

#[cfg(feature = "ebpf")]
mod built {
    /// An ELF object aligned for the loader, which reads its headers in
    /// place.
    #[repr(C, align(8))]
    pub struct Aligned<T: ?Sized>(pub T);

    static INGRESS_DROP: &Aligned<[u8]> =
        &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/ingress_drop.o")));
    static XDP_REDIRECT: &Aligned<[u8]> =
        &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/xdp_redirect.o")));

    /// `bpf/ingress_drop.bpf.c`, compiled.
    pub fn ingress_drop() -> &'static [u8] {
        &INGRESS_DROP.0
    }

    /// `bpf/xdp_redirect.bpf.c`, compiled.
    pub fn xdp_redirect() -> &'static [u8] {
        &XDP_REDIRECT.0
    }
}

#[cfg(feature = "ebpf")]
pub(crate) use built::*;
