/* The few definitions fairway's eBPF programs need beyond the kernel's
 * UAPI headers (linux-libc-dev): section placement, BTF-defined maps,
 * byte order and the one helper they call. libbpf's bpf_helpers.h has
 * the same; defining them here keeps the build to clang and the kernel
 * headers, without libbpf-dev. */
#ifndef FAIRWAY_BPF_H
#define FAIRWAY_BPF_H

#include <linux/bpf.h>

/* Puts a program or map in the ELF section the loader looks for. */
#define SEC(name) __attribute__((section(name), used))

/* BTF-defined map fields, as libbpf spells them. */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define fw_htons(x) __builtin_bswap16(x)
#else
#define fw_htons(x) (x)
#endif

/* long bpf_redirect_map(void *map, __u64 key, __u64 flags): helper
 * number BPF_FUNC_redirect_map, from linux/bpf.h. */
static long (*const bpf_redirect_map)(void *map, __u64 key, __u64 flags) =
	(void *)BPF_FUNC_redirect_map;

#endif
