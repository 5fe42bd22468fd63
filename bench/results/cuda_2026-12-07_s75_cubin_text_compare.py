# Session 75: compares the .text section of every kernel in two folders of cubins
# (nvcc -cubin, sm_90a), byte for byte. Usage: python3 cubin_text_compare.py BASE_DIR OTHER_DIR.
# Cubins are plain ELF64; no cuobjdump needed.
import struct, sys, glob, os
def sections(path):
    b = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3A)
    hdrs = []
    for i in range(shnum):
        o = shoff + i * shentsize
        name, typ, flags, addr, off, size = struct.unpack_from('<IIQQQQ', b, o)
        hdrs.append((name, typ, off, size))
    stro = hdrs[shstrndx][2]
    out = {}
    for name, typ, off, size in hdrs:
        n = b[stro + name: b.index(b'\0', stro + name)].decode()
        if n.startswith('.text.'):
            out[n[6:]] = b[off:off + size]
    return out
same = diff = 0
for f in sorted(glob.glob(sys.argv[1] + '/*.cubin')):
    a = sections(f); c = sections(os.path.join(sys.argv[2], os.path.basename(f)))
    assert set(a) == set(c), f
    for k in a:
        if a[k] == c[k]: same += 1
        else:
            diff += 1; print('differs:', os.path.basename(f), k, len(a[k]), len(c[k]))
print('kernels with identical code:', same, 'differing:', diff)
