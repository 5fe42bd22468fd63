// A small persistent thread pool for CPU_FLASH: parallel_for hands out task indices through an
// atomic counter (dynamic scheduling; causal items vary in cost) and the calling thread takes
// part. No allocation per call, so run() stays allocation-free.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace attnkit::cpu_flash {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);  // total threads including the caller
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }

  // Calls fn(task, thread) for task in [0, n); thread in [0, size()). Blocks until all finish.
  // Concurrent callers are served one after the other.
  template <class Fn>
  void parallel_for(int n, Fn&& fn) {
    auto call = [](void* ctx, int task, int thread) { (*static_cast<Fn*>(ctx))(task, thread); };
    dispatch(n, call, &fn);
  }

 private:
  using Call = void (*)(void*, int, int);
  void dispatch(int n, Call call, void* ctx);
  void work(int thread);

  std::vector<std::thread> workers_;
  std::mutex dispatch_mu_;  // one parallel_for at a time
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  int active_ = 0;
  Call call_ = nullptr;
  void* ctx_ = nullptr;
  int n_ = 0;
  std::atomic<int> next_{0};
};

// One pool per thread count for the whole process, shared by every CPU_FLASH instance (a
// runtime may hold one backend per layer group; they must not each own a set of threads).
std::shared_ptr<ThreadPool> shared_thread_pool(int num_threads);

}  // namespace attnkit::cpu_flash
