// Session 44 run 2's diagnostic test (appended to tests/backends/cuda_flash_test.cpp for that run
// only, not kept): a chunked (256) and an unchunked decode batch, graph-replayed and run directly,
// first over 300/2000/700 keys, then replanned to 310/2049/767 (the cache holds the latter); the
// chunk pieces' metadata dumped from the workspace after the graph's second replay. All four
// variants matched the oracle (cuda_s44_r2/diag.txt): run 1's failure of
// CudaFlash.ChunkedLocalRunChecksAndGraphReplay came from a test binary compiled while that test
// was being rewritten (its first version replayed over cache slots it had never written).
TEST(CudaFlashDiag, ChunkGraphGrowth) {
  if (!gpu_present()) GTEST_SKIP();
  for (int chunk : {256, 0})
    for (int graph : {1, 0}) {
      Case c{.name = "diag",
             .hq = 8,
             .hkv = 2,
             .seqs = {{1, 310}, {1, 2049}, {1, 767}},
             .chunk = chunk};
      PreparedCase pc(c, 32);
      Problem& P = pc.P;
      size_t ws1 = 0;
      auto step = [&](std::vector<int32_t> used) {
        P.used = used;
        P.c.seqs = {{1, used[0]}, {1, used[1]}, {1, used[2]}};
        pc.be->plan(host_batch(P), layer_of(P, true));
        ck(cudaMemcpy(P.dused.p, P.used.data(), P.used.size() * 4, cudaMemcpyHostToDevice));
        pc.r.poison_out();
      };
      step({300, 2000, 700});
      ws1 = pc.be->workspace_bytes();
      std::unique_ptr<CapturedRun> g;
      if (graph) g = std::make_unique<CapturedRun>(*pc.be, pc.r.args);
      if (graph)
        g->replay();
      else {
        pc.be->run(pc.r.args, nullptr);
        ck(cudaDeviceSynchronize());
      }
      std::string tag = "chunk " + std::to_string(chunk) + (graph ? " graph" : " direct");
      compare(P, reference(P), pc.r.out, pc.r.lse, tag + " 1");
      step({310, 2049, 767});
      if (graph)
        g->replay();
      else {
        pc.be->run(pc.r.args, nullptr);
        ck(cudaDeviceSynchronize());
      }
      compare(P, reference(P), pc.r.out, pc.r.lse, tag + " 2");
      std::printf("%s: splits %d ws1 %zu ws2 %zu\n", tag.c_str(), cuda_flash_planned_splits(*pc.be),
                  ws1, pc.be->workspace_bytes());
      if (chunk && graph) {
        const size_t region = (3 * (2 + 130) + 1) * 4;
        std::vector<int32_t> h(region / 4);
        ck(cudaMemcpy(h.data(), pc.r.ws.as<char>() + ws1 - region, region, cudaMemcpyDeviceToHost));
        std::printf("cu %d %d %d %d used %d %d %d\n", h[0], h[1], h[2], h[3], h[4], h[5], h[6]);
        for (int v = 0; v < 3; ++v) {
          std::printf("row %d:", v);
          for (int e = 0; e < 16; ++e) std::printf(" %d", h[7 + v * 16 + e]);
          std::printf("\n");
        }
        for (int s = 0; s < 3; ++s) {
          std::printf("src %d:", s);
          for (int e = 0; e < 48 && e < P.bt_stride; ++e)
            std::printf(" %d", P.bt[s * P.bt_stride + e]);
          std::printf("\n");
        }
      }
    }
}
