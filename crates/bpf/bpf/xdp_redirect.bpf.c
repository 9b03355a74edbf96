// SPDX-License-Identifier: GPL-2.0
/* An XDP program that hands every frame arriving on receive queue q to
 * the AF_XDP socket in slot q of `xsks`. A queue without a socket passes
 * its frames to the kernel's stack (XDP_PASS, the redirect's fallback
 * action), so nothing is lost silently: what the socket's rings cannot
 * take the kernel counts in the socket's rx_dropped / rx_ring_full
 * (getsockopt XDP_STATISTICS). */
#include "fairway_bpf.h"

/* One slot per receive queue; the loader sizes it to the queue count. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

SEC("xdp")
int xdp_redirect(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "GPL";
