#!/bin/bash
# Session 72, device call 2a: puts (b)'s attnkit (calls 0-1's build, .devbin/s72b/bin.txz, not in
# git) in /tmp/b for call 2b on the same warm machine.
cd "$(dirname "$0")/../.." && rm -rf /tmp/b && mkdir -p /tmp/b && tar xJf .devbin/s72b/bin.txz -C /tmp/b
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader
ls -la /tmp/b
