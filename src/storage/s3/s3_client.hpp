#pragma once
// An S3 client over libcurl: the requests a training job's S3 connector makes (GET of a whole
// object or a byte range, PUT, multipart upload, HEAD, DELETE), each signed with SigV4, with a
// timeout on every request, and what each request sends, retries and makes of its answers as
// one table says (s3_policy.hpp): retries of what may succeed later (5xx, 429, a dropped
// connection or lost answer), a completed upload recognised when its answer was lost, no upload
// left behind by a retried start, and one clear error for what will not succeed (wrong
// credentials, a missing bucket or object, an endpoint that is down). One client per thread: its
// curl handle keeps connections open between requests, as connection-pooling clients do.

#include <cstddef>
#include <cstdint>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "storage/io_observer.hpp"
#include "storage/s3/s3_policy.hpp"
#include "storage/s3/s3_sigv4.hpp"

namespace trainio::storage::s3 {

// s3torchconnector's part size (the CRT's), for reads and writes, and the parts of one object the
// CRT first lets in flight at once.
inline constexpr std::size_t kPartBytes = 8u << 20;
inline constexpr int kPartsInFlight = 8;

struct Endpoint {
  std::string url = "http://127.0.0.1:9000";  // scheme://host[:port], storage_options.endpoint_url
  // Several endpoints (storage_options.endpoint_url lists them): `url` is urls[first], the one
  // this rank uses; with `per_request`, a client sends its requests round robin over all of them
  // from there. Empty: `url` alone.
  std::vector<std::string> urls;
  std::size_t first = 0;
  bool per_request = false;
  std::string region = "us-east-1";
  bool path_style = true;   // s3_force_path_style: http://host/bucket/key; else http://bucket.host/key
  int max_attempts = 5;     // s3_max_attempts: tries of one request, the first included
  Credentials credentials;
  long connect_timeout_ms = 10'000;
  // Certificates to trust for an https endpoint besides the system's (AWS_CA_BUNDLE), e.g. a
  // private S3 service's own authority.
  std::string ca_bundle;
  // A request that moves less than a byte a second for this long is abandoned (and retried): no
  // request can hang, however large.
  long stall_timeout_s = 60;
};

// Every request a client completes goes to the thread's storage::IoObserver twice: as a request
// (on_request: status, tries, time to first byte) and as the storage call it stands for (on_op:
// GET as a read, PUT and UploadPart as writes, HEAD as a stat, DELETE and AbortMultipartUpload as
// unlinks, Create- and CompleteMultipartUpload as open and close, marked remote), so the usual
// I/O figures cover S3 too.
using storage::Request;
using RequestRecord = storage::RequestEvent;

class Client {
 public:
  explicit Client(Endpoint endpoint);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Checks that the bucket is there and the credentials are good (HEAD bucket).
  void check_bucket(const std::string& bucket);
  // The object's size, or nullopt when there is no such object.
  std::optional<std::uint64_t> size_of(const std::string& bucket, const std::string& key);
  // GET of bytes [offset, offset + length) into `dest` (length 0: the whole object, which must
  // fit in `dest`). Returns the bytes received.
  std::uint64_t get(const std::string& bucket, const std::string& key, std::span<char> dest, std::uint64_t offset = 0,
                    std::uint64_t length = 0);
  // GET of bytes [offset, offset + length), counted, not kept (a reader that only moves the
  // bytes, e.g. a Parquet row group's columns). Returns the bytes received.
  std::uint64_t get_counted(const std::string& bucket, const std::string& key, std::uint64_t offset, std::uint64_t length);
  // A whole-object read as the CRT makes one (s3torchconnector's get_object().read()): a first
  // ranged GET of `part_bytes` that learns the object's size, then ranged GETs of the remaining
  // parts, up to `in_flight` at once on as many kept connections. The object's first
  // `head.size()` bytes land in `head`; the rest are counted, not kept. Returns its size.
  std::uint64_t read_object(const std::string& bucket, const std::string& key, std::span<char> head,
                            std::size_t part_bytes, int in_flight);
  void put(const std::string& bucket, const std::string& key, std::span<const char> body);
  void remove(const std::string& bucket, const std::string& key);

  // UploadPart without waiting for it: at most `in_flight` parts are in flight, so this first
  // waits for one when that many are. One object's upload at a time per client. `body` must stay valid until its part's ETag comes back in
  // `etags` (part number, ETag), here or from wait_parts().
  void upload_part_async(const std::string& bucket, const std::string& key, const std::string& upload, int part,
                         std::span<const char> body, std::uint64_t offset, int in_flight,
                         std::vector<std::pair<int, std::string>>& etags);
  void wait_parts(std::vector<std::pair<int, std::string>>& etags);
  // Drops every request in flight without waiting for its answer (an upload given up).
  void cancel_in_flight() { abandon_all(); }

  // After a retry, aborts the key's other uploads in progress: an earlier try may have begun one.
  std::string create_upload(const std::string& bucket, const std::string& key);
  // Returns the part's ETag.
  std::string upload_part(const std::string& bucket, const std::string& key, const std::string& upload,
                          int part, std::span<const char> body, std::uint64_t offset);
  // `etags` of parts 1, 2, ...; `object_bytes`: their total, which a HEAD checks when a retry
  // finds the upload gone (an earlier try completed it and its answer was lost).
  void complete_upload(const std::string& bucket, const std::string& key, const std::string& upload,
                       const std::vector<std::string>& etags, std::uint64_t object_bytes);
  void abort_upload(const std::string& bucket, const std::string& key, const std::string& upload);
  // The ids of the multipart uploads in progress for exactly `key` (ListMultipartUploads).
  std::vector<std::string> uploads_of(const std::string& bucket, const std::string& key);

  const Endpoint& endpoint() const { return endpoint_; }

  // Inside the client (s3_call.hpp).
  struct Call;
  struct Answer;
  struct Transfer;

 private:
  // One request with its retries, then settle().
  Answer perform(Call& call);
  // Signs `call` and readies curl handle `curl` for it; `t` holds what the transfer needs.
  void setup(void* curl, Call& call, Transfer& t);
  // Takes the outcome of a finished transfer (a CURLcode) into t.answer.
  void finish(Transfer& t, int curl_code);
  static void back_off(int tries, std::optional<int> retry_after_s);
  // Records a finished request (observer, storage call) and throws the error its answer means
  // (the policy's verdict; verdicts other than error come back in the answer).
  Answer settle(Call& call, Transfer& t);
  void mark_access(Call& call);
  void report_as_storage_call(const Call& call, const RequestRecord& record) const;
  struct Host;
  std::string url_of(const Host& h, const std::string& bucket, const std::string& key, std::string& path) const;

  Endpoint endpoint_;
  // Each endpoint's scheme (http or https) and host as sent in Host (with the port).
  struct Host {
    std::string scheme, host, url;
  };
  std::vector<Host> hosts_;
  std::size_t next_endpoint_ = 0;  // per_request: the endpoint of the next request
  void* curl_ = nullptr;
  struct Lane;
  // A lane without a request: an idle one, a new one (up to `lanes`), or the first to finish
  // (`done` sees it first). Each lane is one more kept connection.
  Lane& free_lane(std::size_t lanes, const std::function<void(Lane&)>& done);
  void start(Lane& lane, std::unique_ptr<Call> call, int attempts);  // call null: the lane's again
  // Drives the requests in flight until one finishes for good (retries restart on their lane);
  // records it, throws if it failed, else hands it to `done`.
  Lane& complete_one(const std::function<void(Lane&)>& done);
  void wait_all(const std::function<void(Lane&)>& done);
  void abandon_all();  // after an error: no handle stays in flight

  std::vector<std::unique_ptr<Lane>> lanes_;
  std::uint64_t access_file_ = 0, last_byte_read_ = 0, last_byte_written_ = 0;  // for mark_access
  void* multi_ = nullptr;
};

// Splits "s3://bucket/prefix/..." (or "bucket/prefix") into the bucket and the key prefix.
struct ObjectPath {
  std::string bucket, key;
};
ObjectPath parse_object_path(const std::string& uri);

}  // namespace trainio::storage::s3
