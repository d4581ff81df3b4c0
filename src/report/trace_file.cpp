#include "report/trace_file.hpp"

#include "storage/atomic_file.hpp"
#include "storage/io_observer.hpp"

namespace trainio::report {

namespace {

class TraceFile final : public metrics::trace::Sink {
 public:
  explicit TraceFile(const std::string& path) : file_(open(path)) {}
  void write(std::string_view text) override {
    const storage::ScopedObserver unobserved(nullptr);
    file_.write(text);
  }
  void commit() override {
    const storage::ScopedObserver unobserved(nullptr);
    file_.commit();
  }

 private:
  static storage::AtomicFile open(const std::string& path) {
    const storage::ScopedObserver unobserved(nullptr);
    return storage::AtomicFile(path, false);
  }
  storage::AtomicFile file_;
};

}  // namespace

std::unique_ptr<metrics::trace::Sink> open_trace_file(const std::string& path) { return std::make_unique<TraceFile>(path); }

}  // namespace trainio::report
