#include "backends/cpu_flash/thread_pool.hpp"

#include <map>

namespace attnkit::cpu_flash {

ThreadPool::ThreadPool(int num_threads) {
  for (int t = 1; t < num_threads; ++t) workers_.emplace_back([this, t] { work(t); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::dispatch(int n, Call call, void* ctx) {
  if (n <= 0) return;
  std::lock_guard<std::mutex> serial(dispatch_mu_);
  if (workers_.empty() || n == 1) {
    for (int i = 0; i < n; ++i) call(ctx, i, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    call_ = call;
    ctx_ = ctx;
    n_ = n;
    next_.store(0, std::memory_order_relaxed);
    active_ = int(workers_.size());
    ++generation_;
  }
  start_cv_.notify_all();
  for (int i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < n;) call(ctx, i, 0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return active_ == 0; });
}

void ThreadPool::work(int thread) {
  uint64_t seen = 0;
  for (;;) {
    Call call;
    void* ctx;
    int n;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      call = call_;
      ctx = ctx_;
      n = n_;
    }
    for (int i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < n;) call(ctx, i, thread);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--active_ == 0) done_cv_.notify_one();
    }
  }
}

std::shared_ptr<ThreadPool> shared_thread_pool(int num_threads) {
  static std::mutex mu;
  static std::map<int, std::weak_ptr<ThreadPool>> pools;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<ThreadPool> p = pools[num_threads].lock();
  if (!p) {
    p = std::make_shared<ThreadPool>(num_threads);
    pools[num_threads] = p;
  }
  return p;
}

}  // namespace attnkit::cpu_flash
