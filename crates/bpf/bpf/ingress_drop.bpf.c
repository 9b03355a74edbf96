// SPDX-License-Identifier: GPL-2.0
/* A tc classifier for a clsact qdisc's ingress hook, in direct-action
 * mode: drops every IPv4 UDP datagram except those to one kept port,
 * before the IP and UDP receive path. The clsact qdisc counts every
 * drop (`tc -s qdisc show`: dropped). Frames that are not IPv4 UDP pass,
 * and so does a frame too short for the headers it claims. */
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include "fairway_bpf.h"

/* The UDP destination port that passes, host byte order; 0 keeps none.
 * Read-only to the program: the loader sets it before loading. */
const volatile __u16 keep_port = 0;

SEC("classifier")
int ingress_drop(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;

	if ((void *)(eth + 1) > end || eth->h_proto != fw_htons(ETH_P_IP))
		return TC_ACT_OK;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP)
		return TC_ACT_OK;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > end)
		return TC_ACT_OK;
	if (keep_port != 0 && udp->dest == fw_htons(keep_port))
		return TC_ACT_OK;
	return TC_ACT_SHOT;
}

char LICENSE[] SEC("license") = "GPL";
