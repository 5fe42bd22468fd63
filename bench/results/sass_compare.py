#!/usr/bin/env python3
"""Compares the kernels of two binaries by their SASS (cuobjdump -sass): every function body of
the first (per arch, instruction text only: names, addresses and encodings stripped) must occur
in the second. Prints the counts and the first bodies that do not. Usage: sass_compare.py OLD NEW"""
import collections, hashlib, re, subprocess, sys

def bodies(binary):
    out = subprocess.run(["cuobjdump", "-sass", binary], capture_output=True, text=True,
                         check=True).stdout
    arch, name, lines, found = None, None, [], collections.Counter()
    names = {}
    def flush():
        if name is not None:
            h = hashlib.sha1("\n".join(lines).encode()).hexdigest()
            found[(arch, h)] += 1
            names.setdefault((arch, h), name)
    for raw in out.splitlines():
        m = re.search(r"arch = (sm_\w+)", raw)
        if m:
            flush(); name, lines = None, []
            arch = m.group(1)
            continue
        m = re.match(r"\s*Function : (\S+)", raw)
        if m:
            flush()
            name, lines = m.group(1), []
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;?\s*(/\*.*\*/)?\s*$", raw)
        if m and name is not None:
            lines.append(m.group(1))
    flush()
    return found, names

old, old_names = bodies(sys.argv[1])
new, new_names = bodies(sys.argv[2])
missing = [k for k in old if new[k] < old[k]]
print(f"old: {sum(old.values())} functions, new: {sum(new.values())}; "
      f"old bodies found unchanged in new: {sum(old.values()) - len(missing)}; missing: {len(missing)}")
for k in missing[:20]:
    print("  missing:", k[0], old_names[k])
added = [k for k in new if old[k] < new[k]]
print(f"new bodies not in old: {len(added)}")
for k in added[:40]:
    print("  added:", k[0], new_names[k])
