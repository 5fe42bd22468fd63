// Programmatic dependent launch (SM90+; no-ops below). A kernel launched with
// cudaLaunchAttributeProgrammaticStreamSerialization may start once every CTA of the stream's
// previous kernel has called pdl_launch_dependents() (or exited); pdl_wait_primary() then waits
// for that kernel's completion and its memory. The chain here: the KV write lets the decode
// kernel launch, the decode kernel its combine kernel, the combine kernel the next layer's decode
// kernel, each of which reads only the batch metadata before its wait (docs/semantics.md §7).
#pragma once

namespace attnkit::cuda_flash {

__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait_primary() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

}  // namespace attnkit::cuda_flash
