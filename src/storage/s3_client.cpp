#include "storage/s3_client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>

#include "storage/in_flight.hpp"
#include "storage/io_observer.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::storage::s3 {

namespace {

constexpr std::size_t kMaxAnswerText = 64 * 1024;  // error documents and small XML answers

CURL* handle(void* p) { return static_cast<CURL*>(p); }

// The text of the first <name>...</name> in a small XML answer ("" when there is none).
std::string xml_value(const std::string& xml, std::string_view name) {
  const std::string open = fmt::format("<{}>", name), close = fmt::format("</{}>", name);
  const auto a = xml.find(open);
  if (a == std::string::npos) return "";
  const auto b = xml.find(close, a + open.size());
  return b == std::string::npos ? "" : xml.substr(a + open.size(), b - a - open.size());
}

bool retryable(int status) { return status == 0 || status == 429 || status >= 500; }

}  // namespace

struct Client::Call {
  Call(Request k, const char* m, const std::string& b, const std::string* o = nullptr) : kind(k), method(m), bucket(&b), key(o) {}
  Request kind;
  const char* method;
  const std::string* bucket;
  const std::string* key;  // nullptr for requests on the bucket
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::pair<std::string, std::string>> headers;  // signed, besides S3's own
  std::span<const char> body;     // sent (PUT, POST)
  std::span<char> dest;           // where a successful answer's body goes (GET)
  bool discard = false;           // keep only what fits in dest, count the rest
  int part = 0;                   // UploadPart's part number
  // Sent with the body: a single read callback position, rewound on retries.
  std::size_t sent = 0;
  std::uint64_t offset = 0;  // where a ranged GET or a part begins in the object
  std::uint64_t length = 0;  // the bytes it asks for or sends (0: the whole object)
  // Set when the request is first sent: its object's identity and Darshan's access pattern.
  std::uint64_t file = 0;
  std::string uri;  // s3://bucket/key: the object's name in traces
  bool data = false, sequential = false, consecutive = false;
};

struct Client::Answer {
  int status = 0;
  std::string curl_error;  // when there was no answer
  bool untrusted = false;  // no answer because the endpoint's TLS certificate is not trusted: trying again cannot help
  std::string text;        // an error document or a small XML answer
  std::string etag;
  std::uint64_t received = 0;
  std::uint64_t content_length = 0;
  std::uint64_t object_size = 0;  // from Content-Range: bytes a-b/size
  bool overflow = false;   // the body did not fit in dest
};

namespace {

int status_of(CURL* curl) {
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  return static_cast<int>(code);
}

}  // namespace

// What one transfer in progress needs to stay where curl's callbacks find it.
struct Client::Transfer {
  CURL* curl = nullptr;
  Call* call = nullptr;
  Answer answer;
  std::string url;
  curl_slist* headers = nullptr;
  RequestRecord record;
  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  ~Transfer() { curl_slist_free_all(headers); }
};

// A handle of its own (its own kept connection) for requests in flight together, and the
// request it carries.
struct Client::Lane {
  void* curl = nullptr;
  std::unique_ptr<Call> call;
  std::string object;  // the call's s3://bucket/key, for the stall watchdog
  Transfer t;
  bool busy = false;
};

Client::Client(Endpoint endpoint) : endpoint_(std::move(endpoint)) {
  static std::once_flag global;
  std::call_once(global, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const auto scheme_end = endpoint_.url.find("://");
  if (scheme_end == std::string::npos)
    throw config_error(fmt::format("storage.storage_options.endpoint_url '{}' has no scheme", endpoint_.url),
                       "write it as http://host:port or https://host");
  scheme_ = endpoint_.url.substr(0, scheme_end);
  host_ = endpoint_.url.substr(scheme_end + 3);
  while (!host_.empty() && host_.back() == '/') host_.pop_back();
  if (host_.empty() || host_.find('/') != std::string::npos)
    throw config_error(fmt::format("storage.storage_options.endpoint_url '{}' is not scheme://host[:port]", endpoint_.url),
                       "give the server's address only, e.g. http://127.0.0.1:9000");
  // Under the stall watchdog, each try gives up within its timeout too (a frozen server), and the
  // watchdog, which watches the request from its first try, ends the job.
  if (const double watched = stall_timeout(); watched > 0) {
    endpoint_.stall_timeout_s = std::min(endpoint_.stall_timeout_s, std::max(1L, std::lround(std::ceil(watched))));
    endpoint_.connect_timeout_ms = std::min(endpoint_.connect_timeout_ms, std::max(1L, std::lround(std::ceil(watched * 1000))));
  }
  curl_ = curl_easy_init();
  if (!curl_) throw internal_error("curl_easy_init failed");
}

Client::~Client() {
  abandon_all();
  for (auto& lane : lanes_) curl_easy_cleanup(handle(lane->curl));
  if (multi_) curl_multi_cleanup(static_cast<CURLM*>(multi_));
  curl_easy_cleanup(handle(curl_));
}

std::string Client::url_of(const std::string& bucket, const std::string& key, std::string& path) const {
  if (endpoint_.path_style) {
    path = "/" + bucket + (key.empty() ? "" : "/" + key);
    return fmt::format("{}://{}{}", scheme_, host_, uri_encode(path, true));
  }
  path = "/" + key;
  return fmt::format("{}://{}.{}{}", scheme_, bucket, host_, uri_encode(path, true));
}

void Client::setup(void* curl, Call& call, Transfer& t) {
  CURL* c = handle(curl);
  curl_easy_reset(c);  // keeps the open connections
  t.curl = c;
  t.call = &call;
  t.answer = Answer();
  curl_slist_free_all(t.headers);
  t.headers = nullptr;
  std::string path;
  t.url = url_of(*call.bucket, call.key ? *call.key : std::string(), path);
  const std::string host = endpoint_.path_style ? host_ : *call.bucket + "." + host_;
  SignedRequest r{.method = call.method, .path = path, .query = call.query, .headers = call.headers};
  const Signature signature = sign(r, endpoint_.credentials, host, endpoint_.region, amz_date_now());
  // The query exactly as signed: sorted, encoded, key= for keys without a value.
  const auto q_start = signature.canonical_request.find('\n', signature.canonical_request.find('\n') + 1) + 1;
  const std::string query = signature.canonical_request.substr(q_start, signature.canonical_request.find('\n', q_start) - q_start);
  if (!query.empty()) t.url += "?" + query;
  for (const auto& [name, value] : signature.headers) t.headers = curl_slist_append(t.headers, (name + ": " + value).c_str());
  t.headers = curl_slist_append(t.headers, "Expect:");  // no 100-continue round trip before a body

  call.sent = 0;
  curl_easy_setopt(c, CURLOPT_URL, t.url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, t.headers);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, endpoint_.connect_timeout_ms);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, endpoint_.stall_timeout_s);
  curl_easy_setopt(c, CURLOPT_PRIVATE, &t);
  if (!endpoint_.ca_bundle.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, endpoint_.ca_bundle.c_str());
  const std::string method = call.method;
  if (method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(call.body.size()));
    curl_easy_setopt(c, CURLOPT_READDATA, &call);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, +[](char* out, size_t size, size_t n, void* p) -> size_t {
      auto* cl = static_cast<Call*>(p);
      const std::size_t take = std::min(size * n, cl->body.size() - cl->sent);
      std::memcpy(out, cl->body.data() + cl->sent, take);
      cl->sent += take;
      return take;
    });
  } else if (method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, call.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call.body.size()));
  } else if (method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, call.method);
  }
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, +[](char* in, size_t size, size_t n, void* p) -> size_t {
    auto* tr = static_cast<Transfer*>(p);
    Answer& a = tr->answer;
    const std::size_t bytes = size * n;
    const int status = status_of(tr->curl);
    if (status >= 200 && status < 300 && tr->call->discard) {
      if (a.received < tr->call->dest.size())
        std::memcpy(tr->call->dest.data() + a.received, in, std::min<std::size_t>(bytes, tr->call->dest.size() - a.received));
    } else if (status >= 200 && status < 300 && !tr->call->dest.empty()) {
      if (a.received + bytes > tr->call->dest.size()) {
        a.overflow = true;
        return 0;  // aborts the transfer
      }
      std::memcpy(tr->call->dest.data() + a.received, in, bytes);
    } else if (a.text.size() < kMaxAnswerText) {
      a.text.append(in, std::min(bytes, kMaxAnswerText - a.text.size()));
    }
    a.received += bytes;
    return bytes;
  });
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t.answer);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, +[](char* in, size_t size, size_t n, void* p) -> size_t {
    auto* a = static_cast<Answer*>(p);
    const std::string_view line(in, size * n);
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string name(line.substr(0, colon));
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
      if (name == "etag") a->etag = value;
      if (name == "content-length") a->content_length = std::strtoull(std::string(value).c_str(), nullptr, 10);
      if (name == "content-range")
        if (const auto slash = value.rfind('/'); slash != std::string_view::npos)
          a->object_size = std::strtoull(std::string(value.substr(slash + 1)).c_str(), nullptr, 10);
    }
    return size * n;
  });
}

void Client::finish(Transfer& t, int rc) {
  Answer& answer = t.answer;
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && answer.overflow)) {
    answer.status = 0;
    answer.curl_error = curl_easy_strerror(static_cast<CURLcode>(rc));
    answer.untrusted = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                       rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_ISSUER_ERROR;
    return;
  }
  answer.status = status_of(t.curl);
  curl_off_t first_byte_us = 0;
  curl_easy_getinfo(t.curl, CURLINFO_STARTTRANSFER_TIME_T, &first_byte_us);
  t.record.first_byte_ns = static_cast<std::int64_t>(first_byte_us) * 1000;
}

namespace {

Op storage_op(Request r) {
  switch (r) {
    case Request::get: return Op::read;
    case Request::put:
    case Request::upload_part: return Op::write;
    case Request::head:
    case Request::head_bucket: return Op::stat;
    case Request::delete_object:
    case Request::abort_upload: return Op::unlink;
    case Request::create_upload: return Op::open;
    case Request::complete_upload: return Op::close;
  }
  return Op::stat;
}

}  // namespace

void Client::mark_access(Call& call) {
  call.uri = fmt::format("s3://{}/{}", *call.bucket, call.key ? *call.key : "");
  call.file = path_hash(call.uri);
  call.data = call.key != nullptr && is_data_file(call.uri);
  // Darshan's pattern as storage::File keeps it per open file, with a request to another object
  // standing for an open: a transfer that starts beyond where the last one on this object ended
  // is sequential; exactly there, consecutive. Judged in the order the requests are sent.
  if (call.file != access_file_) {
    access_file_ = call.file;
    last_byte_read_ = last_byte_written_ = 0;
  }
  const Op op = storage_op(call.kind);
  if (!moves_data(op)) return;
  std::uint64_t& last = op == Op::write ? last_byte_written_ : last_byte_read_;
  call.sequential = call.offset > last;
  call.consecutive = call.offset == last + 1;
  const std::uint64_t bytes = !call.body.empty() ? call.body.size() : call.length ? call.length : call.dest.size();
  if (bytes > 0) last = call.offset + bytes - 1;
}

void Client::report_as_storage_call(const Call& call, const RequestRecord& record) const {
  IoObserver* observer = thread_observer();
  if (!observer) return;
  OpEvent e;
  e.op = storage_op(call.kind);
  e.start_ns = record.start_ns;
  e.ns = record.total_ns;
  e.remote = true;
  e.file = call.file;
  e.path = call.uri;
  e.data = call.data;
  if (moves_data(e.op)) {
    e.bytes = record.bytes;
    e.offset = call.offset;
    e.has_offset = true;
    e.sequential = call.sequential;
    e.consecutive = call.consecutive;
  }
  observer->on_op(e);
}

Client::Answer Client::perform(Call& call) {
  Transfer t;
  t.record.kind = call.kind;
  t.record.start_ns = util::now_ns();
  mark_access(call);
  // The whole request, its retries included, is one call for the stall watchdog.
  const std::string object = fmt::format("s3://{}/{}", *call.bucket, call.key ? *call.key : "");
  const InFlightCall watched(storage_op(call.kind), object, t.record.start_ns);
  for (int n = 1;; ++n) {
    t.record.attempts = n;
    setup(handle(curl_), call, t);
    finish(t, curl_easy_perform(handle(curl_)));
    if (!retryable(t.answer.status) || t.answer.untrusted || n >= std::max(1, endpoint_.max_attempts)) break;
    back_off(n);
  }
  return settle(call, t);
}

void Client::back_off(int tries) {
  // Exponential back-off between tries, as S3 clients do (0.1 s, 0.2 s, ... at most 2 s).
  std::this_thread::sleep_for(std::chrono::milliseconds(std::min(2000, 100 << std::min(tries - 1, 5))));
}

Client::Answer Client::settle(Call& call, Transfer& t) {
  RequestRecord& record = t.record;
  const Answer& answer = t.answer;
  record.status = answer.status;
  record.total_ns = util::now_ns() - record.start_ns;
  record.bytes = call.kind == Request::get ? (answer.status >= 200 && answer.status < 300 ? answer.received : 0)
                                           : call.body.size();
  if (IoObserver* observer = thread_observer()) observer->on_request(record);
  report_as_storage_call(call, record);

  const std::string object = fmt::format("s3://{}/{}", *call.bucket, call.key ? *call.key : "");
  if (answer.untrusted)
    throw io_error(fmt::format("S3 {} of '{}': the TLS certificate of {} is not trusted ({})", request_name(call.kind),
                               object, endpoint_.url, answer.curl_error),
                   "set AWS_CA_BUNDLE to the certificate of the authority that signed the endpoint's certificate");
  if (answer.status == 0)
    throw io_error(fmt::format("S3 {} of '{}': no answer from {} after {} attempt(s): {}", request_name(call.kind), object,
                               endpoint_.url, record.attempts, answer.curl_error),
                   "check that the S3 server is running and reachable at storage.storage_options.endpoint_url");
  if (answer.overflow)
    throw data_error(fmt::format("S3 object '{}' holds more bytes than the plan gives it ({} expected)", object, call.dest.size()),
                     "the bucket holds another dataset: generate this one again, or point dataset.data_folder elsewhere");
  if (answer.status >= 200 && answer.status < 300) return answer;
  if (call.kind == Request::head && answer.status == 404) return answer;  // size_of: no such object

  const std::string code = xml_value(answer.text, "Code"), message = xml_value(answer.text, "Message");
  const std::string what = fmt::format("S3 {} of '{}' failed: HTTP {}{}{}", request_name(call.kind), object, answer.status,
                                       code.empty() ? "" : " " + code, message.empty() ? "" : " (" + message + ")");
  if (answer.status == 403 || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch")
    throw io_error(what, "check storage.storage_options.access_key_id and secret_access_key (or AWS_ACCESS_KEY_ID and "
                         "AWS_SECRET_ACCESS_KEY) and the region");
  if (code == "NoSuchBucket" || (call.kind == Request::head_bucket && answer.status == 404))
    throw io_error(what, fmt::format("create the bucket '{}', or point dataset.data_folder at a bucket that exists (s3://<bucket>/<prefix>)", *call.bucket));
  if (code == "NoSuchKey" || answer.status == 404)
    throw data_error(what, "generate the dataset first (workflow.generate_data=True), or check dataset.data_folder");
  if (retryable(answer.status))
    throw io_error(what + fmt::format(" after {} attempts", record.attempts),
                   "the S3 server kept failing: see its logs, or allow more tries with storage.storage_options.s3_max_attempts");
  throw io_error(what, "see the S3 server's answer above");
}

void Client::check_bucket(const std::string& bucket) {
  Call call(Request::head_bucket, "HEAD", bucket);
  perform(call);
}

std::optional<std::uint64_t> Client::size_of(const std::string& bucket, const std::string& key) {
  Call call(Request::head, "HEAD", bucket, &key);
  const Answer a = perform(call);
  if (a.status == 404) return std::nullopt;
  return a.content_length;
}

std::uint64_t Client::get(const std::string& bucket, const std::string& key, std::span<char> dest, std::uint64_t offset,
                          std::uint64_t length) {
  Call call(Request::get, "GET", bucket, &key);
  if (length > 0) {
    call.headers.emplace_back("range", fmt::format("bytes={}-{}", offset, offset + length - 1));
    dest = dest.first(std::min<std::size_t>(dest.size(), length));
    call.offset = offset;
    call.length = length;
  }
  call.dest = dest;
  return perform(call).received;
}

Client::Lane& Client::free_lane(std::size_t lanes, const std::function<void(Lane&)>& done) {
  for (auto& lane : lanes_)
    if (!lane->busy) return *lane;
  if (lanes_.size() < std::max<std::size_t>(1, lanes)) {
    lanes_.push_back(std::make_unique<Lane>());
    if (!(lanes_.back()->curl = curl_easy_init())) throw internal_error("curl_easy_init failed");
    return *lanes_.back();
  }
  return complete_one(done);
}

void Client::start(Lane& lane, std::unique_ptr<Call> call, int attempts) {
  if (!multi_ && !(multi_ = curl_multi_init())) throw internal_error("curl_multi_init failed");
  if (call) lane.call = std::move(call);
  if (attempts == 1) {
    lane.object = fmt::format("s3://{}/{}", *lane.call->bucket, lane.call->key ? *lane.call->key : "");
    mark_access(*lane.call);
    lane.t.record = RequestRecord();
    lane.t.record.kind = lane.call->kind;
    lane.t.record.start_ns = util::now_ns();
  }
  lane.t.record.attempts = attempts;
  setup(lane.curl, *lane.call, lane.t);
  curl_multi_add_handle(static_cast<CURLM*>(multi_), handle(lane.curl));
  lane.busy = true;
}

Client::Lane& Client::complete_one(const std::function<void(Lane&)>& done) {
  CURLM* multi = static_cast<CURLM*>(multi_);
  while (true) {
    // The request waited for longest stands for the wait, for the stall watchdog.
    const Lane* oldest = nullptr;
    for (const auto& l : lanes_)
      if (l->busy && (!oldest || l->t.record.start_ns < oldest->t.record.start_ns)) oldest = l.get();
    std::optional<InFlightCall> watched;
    if (oldest) watched.emplace(storage_op(oldest->call->kind), oldest->object, oldest->t.record.start_ns);
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &queued)) {
      if (m->msg != CURLMSG_DONE) continue;
      Lane* lane = nullptr;
      for (auto& l : lanes_)
        if (l->curl == m->easy_handle) lane = l.get();
      const CURLcode rc = m->data.result;
      curl_multi_remove_handle(multi, m->easy_handle);
      lane->busy = false;
      finish(lane->t, rc);
      if (retryable(lane->t.answer.status) && !lane->t.answer.untrusted &&
          lane->t.record.attempts < std::max(1, endpoint_.max_attempts)) {
        back_off(lane->t.record.attempts);
        start(*lane, nullptr, lane->t.record.attempts + 1);
        continue;
      }
      settle(*lane->call, lane->t);  // records the request; throws if it failed
      done(*lane);
      return *lane;
    }
    curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
  }
}

void Client::wait_all(const std::function<void(Lane&)>& done) {
  for (const auto& lane : lanes_)
    if (lane->busy) complete_one(done);
  for (const auto& lane : lanes_)
    if (lane->busy) return wait_all(done);
}

void Client::abandon_all() {
  for (auto& lane : lanes_)
    if (lane->busy) {
      curl_multi_remove_handle(static_cast<CURLM*>(multi_), handle(lane->curl));
      lane->busy = false;
    }
}

std::uint64_t Client::read_object(const std::string& bucket, const std::string& key, std::span<char> head,
                                  std::size_t part_bytes, int in_flight) {
  auto part_call = [&](std::uint64_t offset, std::uint64_t size) {
    auto call = std::make_unique<Call>(Request::get, "GET", bucket, &key);
    call->headers.emplace_back("range", fmt::format("bytes={}-{}", offset, offset + size - 1));
    call->offset = offset;
    call->length = size;
    call->discard = true;
    return call;
  };
  const auto first = part_call(0, part_bytes);
  first->dest = head;
  const Answer a = perform(*first);
  const std::uint64_t size = a.status == 206 ? a.object_size : a.received;
  // The remaining parts, up to in_flight at once, each on its own handle (its own connection).
  try {
    const auto nothing = [](Lane&) {};
    for (std::uint64_t offset = part_bytes; offset < size; offset += part_bytes)
      start(free_lane(static_cast<std::size_t>(in_flight), nothing), part_call(offset, std::min<std::uint64_t>(part_bytes, size - offset)), 1);
    wait_all(nothing);
  } catch (...) {
    abandon_all();
    throw;
  }
  return size;
}

void Client::upload_part_async(const std::string& bucket, const std::string& key, const std::string& upload, int part,
                               std::span<const char> body, std::uint64_t offset, int in_flight,
                               std::vector<std::pair<int, std::string>>& etags) {
  const auto collect = [&](Lane& lane) { etags.emplace_back(lane.call->part, lane.t.answer.etag); };
  try {
    auto call = std::make_unique<Call>(Request::upload_part, "PUT", bucket, &key);
    call->query = {{"partNumber", std::to_string(part)}, {"uploadId", upload}};
    call->body = body;
    call->offset = offset;
    call->part = part;
    start(free_lane(static_cast<std::size_t>(in_flight), collect), std::move(call), 1);
  } catch (...) {
    abandon_all();
    throw;
  }
}

void Client::wait_parts(std::vector<std::pair<int, std::string>>& etags) {
  try {
    wait_all([&](Lane& lane) { etags.emplace_back(lane.call->part, lane.t.answer.etag); });
  } catch (...) {
    abandon_all();
    throw;
  }
}

void Client::put(const std::string& bucket, const std::string& key, std::span<const char> body) {
  Call call(Request::put, "PUT", bucket, &key);
  call.body = body;
  perform(call);
}

void Client::remove(const std::string& bucket, const std::string& key) {
  Call call(Request::delete_object, "DELETE", bucket, &key);
  perform(call);
}

std::string Client::create_upload(const std::string& bucket, const std::string& key) {
  Call call(Request::create_upload, "POST", bucket, &key);
  call.query = {{"uploads", ""}};
  const std::string id = xml_value(perform(call).text, "UploadId");
  if (id.empty()) throw io_error(fmt::format("S3 CreateMultipartUpload of 's3://{}/{}' answered without an UploadId", bucket, key),
                                 "the server at storage.storage_options.endpoint_url does not support multipart uploads");
  return id;
}

std::string Client::upload_part(const std::string& bucket, const std::string& key, const std::string& upload, int part,
                                std::span<const char> body, std::uint64_t offset) {
  Call call(Request::upload_part, "PUT", bucket, &key);
  call.query = {{"partNumber", std::to_string(part)}, {"uploadId", upload}};
  call.body = body;
  call.offset = offset;
  return perform(call).etag;
}

void Client::complete_upload(const std::string& bucket, const std::string& key, const std::string& upload,
                             const std::vector<std::string>& etags) {
  std::string xml = "<CompleteMultipartUpload>";
  for (std::size_t i = 0; i < etags.size(); ++i)
    xml += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, etags[i]);
  xml += "</CompleteMultipartUpload>";
  Call call(Request::complete_upload, "POST", bucket, &key);
  call.query = {{"uploadId", upload}};
  call.body = {xml.data(), xml.size()};
  const Answer a = perform(call);
  // S3 can answer 200 with an error document when completing fails late.
  if (!xml_value(a.text, "Code").empty())
    throw io_error(fmt::format("S3 CompleteMultipartUpload of 's3://{}/{}' failed: {}", bucket, key, xml_value(a.text, "Message")),
                   "see the S3 server's logs");
}

void Client::abort_upload(const std::string& bucket, const std::string& key, const std::string& upload) {
  Call call(Request::abort_upload, "DELETE", bucket, &key);
  call.query = {{"uploadId", upload}};
  perform(call);
}

ObjectPath parse_object_path(const std::string& uri) {
  std::string_view rest = uri;
  if (rest.starts_with("s3://")) rest.remove_prefix(5);
  while (rest.starts_with("/")) rest.remove_prefix(1);
  const auto slash = rest.find('/');
  ObjectPath p;
  p.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) p.key = std::string(rest.substr(slash + 1));
  while (!p.key.empty() && p.key.back() == '/') p.key.pop_back();
  return p;
}

}  // namespace trainio::storage::s3
