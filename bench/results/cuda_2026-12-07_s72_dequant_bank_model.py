# Session 72: the bank-group model behind NOTES "The fp8 prefill's dequantization, one row a lane"
# (16-byte shared accesses, 4 phases of 8 lanes; wavefronts = the most distinct 16-byte
# addresses one bank group takes in a phase). Prints per head the (raw reads, 16-bit writes)
# wavefronts a tile for the padded layout (old), the 192-byte swizzle (new) and one row a lane
# (new+col). No device run: a model.
def layout(rowbytes, new=True):
    if rowbytes%128==0: span=8
    elif rowbytes==192 and new: span=4
    else: span=0
    stride = rowbytes if span else (rowbytes+16 if (rowbytes//16)%2==0 else rowbytes+32)
    def at(r,c):
        if span==8: return r*stride+((c^(r&7))*16)
        if span==4: return r*stride+((c^((r>>1)&3))*16)
        return r*stride+c*16
    return at
def wavefronts(addrs):  # 16-byte accesses of a warp: 4 phases of 8 threads
    tot=0
    for p in range(4):
        grp={}
        for a in addrs[8*p:8*p+8]:
            if a is None: continue
            g=(a//16)%8; grp.setdefault(g,set()).add(a)
        tot+=max((len(v) for v in grp.values()),default=0)
    return tot
def run(head, new, colmajor, BN):
    raw=layout(head,new); dst=layout(2*head,new)
    CK=head//16; tot_r=tot_w=0
    for i in range((BN*CK+127)//128):
        for w in range(4):
            ra=[];wl=[];wh=[]
            for l in range(32):
                c=w*32+l+i*128
                if c>=BN*CK: ra.append(None);wl.append(None);wh.append(None);continue
                r,cc=(c%BN,c//BN) if colmajor else (c//CK,c%CK)
                ra.append(raw(r,cc)); wl.append(dst(r,2*cc)); wh.append(dst(r,2*cc+1))
            tot_r+=wavefronts(ra); tot_w+=wavefronts(wl)+wavefronts(wh)
    return tot_r,tot_w
for head in (64,80,96,128,192,256):
    BN=128 if head<=64 else 64 if head<=128 else 32
    print(head,'old',run(head,False,False,BN),'new',run(head,True,False,BN),'new+col',run(head,True,True,BN))
# Output (python3, this script):
# 64 old (128, 128) new (128, 128) new+col (64, 128)
# 80 old (80, 144) new (80, 144) new+col (40, 80)
# 96 old (96, 160) new (96, 160) new+col (48, 96)
# 128 old (64, 256) new (64, 256) new+col (64, 128)
# 192 old (64, 160) new (48, 160) new+col (48, 96)
# 256 old (64, 256) new (64, 256) new+col (64, 128)
