#include "backends/cuda_mla/capabilities.hpp"

#include "backends/cuda_flash/capabilities.hpp"
#include "backends/cuda_mla/manifest.hpp"

namespace attnkit {

// Head pair, dtypes and KV dtypes are read off the manifest; the rest is what the kernels do
// with a latent cache and what MLA layers need.
const Capabilities& cuda_mla_capabilities() {
  static const Capabilities caps = [] {
    Capabilities c;
    c.name = "CUDA_MLA";
    c.platforms = {Platform::kCuda};
    c.min_compute_capability = 80;
    cuda_flash::declare_manifest(c, cuda_mla::kMlaManifest);
    // The kernel gathers each token's row through the block table: any multiple of 16 works (the
    // latent cache's pages are planned in 16s); 64 is what vLLM's MLA kernels take.
    c.kernel_block_sizes = {BlockSizeEntry::multiple_of(16)};
    c.preferred_block_size = 64;
    c.mla = MlaSupport::kMlaOnly;
    c.attn_types = {AttentionType::kDecoder};
    c.combination = [](const LayerSpec& spec, const DeviceInfo&) {
      return cuda_flash::manifest_reasons(spec, cuda_mla::find_mla_instance);
    };
    return c;
  }();
  return caps;
}

}  // namespace attnkit
