"""Self cost per instruction from a callgrind output file, charged to the
source function that owns it. Used by `vs-dummynet.py --instructions`.

An optimised build inlines the whole hot path into one loop, so callgrind's
own per-symbol totals say little. Run with `--dump-instr=yes`, callgrind
gives the cost of every instruction address; `addr2line -i` gives the chain
of (inlined) functions each address belongs to, innermost first. Each
instruction is charged to the innermost function of that chain whose source
is under one of the given roots (this repository, the dummynet checkout), so
a bounds check or `Vec::pop` counts for the fairway or dummynet function
that used it, not for the standard library.
"""

import os
import re
import subprocess

_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


def _name(table, text):
    """Resolves callgrind's name compression: `(id) name` defines, `(id)` refers."""
    m = _NAMED.match(text)
    if not m:
        return text
    if m.group(2) is not None:
        table[m.group(1)] = m.group(2)
        return m.group(2)
    return table.get(m.group(1), text)


def _position(token, last):
    """A position column: absolute (`0x..` hex or decimal), relative to the
    previous line's (`+n`, `-n`, decimal) or the same (`*`)."""
    if token == "*":
        return last
    if token[0] in "+-":
        return last + int(token)
    return int(token, 0)


def instr_costs(path):
    """{(object file, address): self Ir} from a `--dump-instr=yes` output."""
    objs, costs = {}, {}
    ob = None
    npos = 1
    last = [0, 0]
    skip_next = False
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line.startswith("positions:"):
                npos = len(line.split()) - 1
                continue
            head = line.split("=", 1)
            if len(head) == 2 and head[0] in ("ob", "cob"):
                name = _name(objs, head[1])
                if head[0] == "ob":
                    ob = name
                continue
            if len(head) == 2 and head[0] == "calls":
                skip_next = True  # the next cost line is the call's inclusive cost
                continue
            if len(head) == 2:
                continue
            first = line[0]
            if not (first.isdigit() or first in "+-*"):
                continue
            parts = line.split()
            for i in range(min(npos, 2)):
                last[i] = _position(parts[i], last[i])
            if skip_next:
                skip_next = False
                continue
            ir = int(parts[npos]) if len(parts) > npos else 0
            k = (ob, last[0])
            costs[k] = costs.get(k, 0) + ir
    return costs


def _short_fn(name):
    """`<fairway_core::sched::drr::Drr<P> as Scheduler<P>>::dequeue` -> `Drr::dequeue`."""
    prev = None
    while prev != name:  # drop generic arguments, innermost first
        prev, name = name, re.sub(r"<([^<>]*)>", lambda m: "" if " as " not in m.group(1) else "\x00" + m.group(1) + "\x01", name)
    name = name.replace("\x00", "<").replace("\x01", ">")
    m = re.fullmatch(r"<([\w:]+) as [\w:]+>::(\w+)", name)
    if m:
        name = f"{m.group(1)}::{m.group(2)}"
    name = name.replace("::{{closure}}", "")
    parts = [p for p in name.split("::") if p]
    return "::".join(parts[-2:]) if len(parts) >= 2 else name


def _chains(obj, addrs):
    """For each address, its inline chain [(function, file)], innermost first."""
    out = {}
    if not obj or not os.path.isfile(obj):
        return {a: [] for a in addrs}
    order = sorted(addrs)
    text = subprocess.run(["addr2line", "-i", "-f", "-C", "-a", "-e", obj],
                          input="".join(f"{a:#x}\n" for a in order),
                          capture_output=True, text=True, check=True).stdout
    cur = None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("0x") and (i + 1 >= len(lines) or not lines[i + 1].startswith("0x")) \
                and re.fullmatch(r"0x[0-9a-f]+", ln):
            cur = int(ln, 16)
            out[cur] = []
            i += 1
            continue
        fn = ln
        loc = lines[i + 1] if i + 1 < len(lines) else "??:0"
        out.setdefault(cur, []).append((fn, loc.rsplit(":", 1)[0]))
        i += 2
    return out


def function_costs(costs, roots):
    """{'function': Ir}: each instruction charged to the innermost function
    of its inline chain whose source lies under one of `roots`."""
    by_obj = {}
    for (obj, addr), ir in costs.items():
        by_obj.setdefault(obj, {})[addr] = ir
    out = {}
    for obj, addrs in by_obj.items():
        chains = _chains(obj, addrs)
        for addr, ir in addrs.items():
            chain = chains.get(addr, [])
            label = None
            for fn, path in chain:
                if any(r and path.startswith(r) for r in roots):
                    label = _short_fn(fn)
                    break
            if label is None:
                label = f"{os.path.basename(obj or '?')}:" + (_short_fn(chain[0][0]) if chain else "?")
            out[label] = out.get(label, 0) + ir
    return out


def difference(a, b):
    """Per-key a - b (the cost of the extra work of the longer run)."""
    keys = set(a) | set(b)
    return {k: a.get(k, 0) - b.get(k, 0) for k in keys}
