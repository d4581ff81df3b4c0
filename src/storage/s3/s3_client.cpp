// How requests move: signing, libcurl transfers one at a time or several on lanes, retries as
// the request policy says (s3_policy.hpp), and the record of each. The requests themselves are in
// s3_requests.cpp.
#include "storage/s3/s3_client.hpp"

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
#include "storage/s3/s3_call.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

namespace trainio::storage::s3 {

namespace {

constexpr std::size_t kMaxAnswerText = 64 * 1024;  // error documents and small XML answers

CURL* handle(void* p) { return static_cast<CURL*>(p); }

int status_of(CURL* curl) {
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  return static_cast<int>(code);
}

// Whether the answer asks for another try, as the request policy says.
bool again(const Client::Answer& a) { return !a.untrusted && retryable(a.status, a.code); }

}  // namespace

std::string xml_value(const std::string& xml, std::string_view name, std::size_t from) {
  const std::string open = fmt::format("<{}>", name), close = fmt::format("</{}>", name);
  const auto a = xml.find(open, from);
  if (a == std::string::npos) return "";
  const auto b = xml.find(close, a + open.size());
  return b == std::string::npos ? "" : xml.substr(a + open.size(), b - a - open.size());
}

void Client::Call::set_range(std::uint64_t from, std::uint64_t bytes) {
  headers.emplace_back("range", fmt::format("bytes={}-{}", from, from + bytes - 1));
  ranged = true;
  offset = from;
  length = bytes;
}

Client::Client(Endpoint endpoint) : endpoint_(std::move(endpoint)) {
  static std::once_flag global;
  std::call_once(global, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (endpoint_.urls.empty()) endpoint_.urls = {endpoint_.url};
  endpoint_.first %= endpoint_.urls.size();
  next_endpoint_ = endpoint_.first;
  for (const std::string& url : endpoint_.urls) {
    Host& h = hosts_.emplace_back();
    h.url = url;
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos)
      throw config_error(fmt::format("storage.storage_options.endpoint_url '{}' has no scheme", url),
                         "write it as http://host:port or https://host");
    h.scheme = url.substr(0, scheme_end);
    h.host = url.substr(scheme_end + 3);
    while (!h.host.empty() && h.host.back() == '/') h.host.pop_back();
    if (h.host.empty() || h.host.find('/') != std::string::npos)
      throw config_error(fmt::format("storage.storage_options.endpoint_url '{}' is not scheme://host[:port]", url),
                         "give the server's address only, e.g. http://127.0.0.1:9000");
  }
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

std::string Client::url_of(const Host& h, const std::string& bucket, const std::string& key, std::string& path) const {
  if (endpoint_.path_style) {
    path = "/" + bucket + (key.empty() ? "" : "/" + key);
    return fmt::format("{}://{}{}", h.scheme, h.host, uri_encode(path, true));
  }
  path = "/" + key;
  return fmt::format("{}://{}.{}{}", h.scheme, bucket, h.host, uri_encode(path, true));
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
  const Host& h = hosts_[call.endpoint];
  t.url = url_of(h, *call.bucket, call.key ? *call.key : std::string(), path);
  const std::string host = endpoint_.path_style ? h.host : *call.bucket + "." + h.host;
  const Policy& policy = call.policy();
  SignedRequest r{.method = call.method, .path = path, .query = call.query, .headers = call.headers};
  // The policy's type, signed; without one libcurl would label a POST an HTML form's.
  if (policy.content_type) r.headers.emplace_back("content-type", policy.content_type);
  const Signature signature = sign(r, endpoint_.credentials, host, endpoint_.region, amz_date_now());
  // The query exactly as signed: sorted, encoded, key= for keys without a value.
  const auto q_start = signature.canonical_request.find('\n', signature.canonical_request.find('\n') + 1) + 1;
  const std::string query = signature.canonical_request.substr(q_start, signature.canonical_request.find('\n', q_start) - q_start);
  if (!query.empty()) t.url += "?" + query;
  for (const auto& [name, value] : signature.headers) t.headers = curl_slist_append(t.headers, (name + ": " + value).c_str());
  t.headers = curl_slist_append(t.headers, "Expect:");  // no 100-continue round trip before a body

  call.sent = 0;
  curl_easy_setopt(c, CURLOPT_URL, t.url.c_str());
  // The path as signed: libcurl would otherwise remove "./" and "../" from keys that hold them.
  curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, t.headers);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, endpoint_.connect_timeout_ms);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, endpoint_.stall_timeout_s);
  curl_easy_setopt(c, CURLOPT_PRIVATE, &t);
  if (!endpoint_.ca_bundle.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, endpoint_.ca_bundle.c_str());
  // On a kept connection that died, libcurl resends a request without telling: harmless for
  // most, but a second CreateMultipartUpload is a second upload (s3_policy.hpp).
  if (policy.fresh_connection) curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
  const std::string method = call.method;
  if (method == "PUT" || method == "POST") {
    // Bodies through a read callback that cannot rewind: libcurl then fails where it would
    // resend unseen, and the policy's retry (counted) sends again.
    curl_easy_setopt(c, method == "PUT" ? CURLOPT_UPLOAD : CURLOPT_POST, 1L);
    curl_easy_setopt(c, method == "PUT" ? CURLOPT_INFILESIZE_LARGE : CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(call.body.size()));
    curl_easy_setopt(c, CURLOPT_READDATA, &call);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, +[](char* out, size_t size, size_t n, void* p) -> size_t {
      auto* cl = static_cast<Call*>(p);
      const std::size_t take = std::min(size * n, cl->body.size() - cl->sent);
      std::memcpy(out, cl->body.data() + cl->sent, take);
      cl->sent += take;
      return take;
    });
  } else if (method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
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
      if (name == "retry-after" && !value.empty() && std::isdigit(static_cast<unsigned char>(value.front())))
        a->retry_after = std::atoi(std::string(value).c_str());
      if (name == "content-range")
        if (const auto slash = value.rfind('/'); slash != std::string_view::npos) {
          a->object_size = std::strtoull(std::string(value.substr(slash + 1)).c_str(), nullptr, 10);
          a->has_content_range = true;
        }
    }
    return size * n;
  });
}

void Client::finish(Transfer& t, int rc) {
  Answer& answer = t.answer;
  // s3rver answers a range of an empty object "206, bytes 0-0/0" with one byte promised and
  // none sent: the object is there and empty.
  const bool empty = rc == CURLE_PARTIAL_FILE && answer.has_content_range && answer.object_size == 0 && answer.received == 0;
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && answer.overflow) && !empty) {
    answer.status = 0;
    answer.curl_error = curl_easy_strerror(static_cast<CURLcode>(rc));
    answer.untrusted = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                       rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_ISSUER_ERROR;
    return;
  }
  answer.status = status_of(t.curl);
  // An error document's code decides retries and the error; S3 may also answer a
  // CompleteMultipartUpload 200 with one, to be retried like a 500.
  if (answer.status >= 300 || (t.call->kind == Request::complete_upload && answer.text.find("<Error>") != std::string::npos))
    answer.code = xml_value(answer.text, "Code");
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
    case Request::head_bucket:
    case Request::list_uploads: return Op::stat;
    case Request::delete_object:
    case Request::abort_upload: return Op::unlink;
    case Request::create_upload: return Op::open;
    case Request::complete_upload: return Op::close;
  }
  return Op::stat;
}

}  // namespace

void Client::mark_access(Call& call) {
  call.endpoint = endpoint_.per_request ? next_endpoint_++ % hosts_.size() : endpoint_.first;
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
  t.record.endpoint = static_cast<std::uint16_t>(call.endpoint);
  // The whole request, its retries included, is one call for the stall watchdog.
  const std::string object = fmt::format("s3://{}/{}", *call.bucket, call.key ? *call.key : "");
  const InFlightCall watched(storage_op(call.kind), object, t.record.start_ns);
  for (int n = 1;; ++n) {
    t.record.attempts = n;
    setup(handle(curl_), call, t);
    finish(t, curl_easy_perform(handle(curl_)));
    if (!again(t.answer) || n >= std::max(1, endpoint_.max_attempts)) break;
    t.record.note_retry(t.answer.status);
    back_off(n, t.answer.retry_after);
  }
  return settle(call, t);
}

void Client::back_off(int tries, std::optional<int> retry_after_s) {
  std::this_thread::sleep_for(std::chrono::milliseconds(retry_wait_ms(tries, retry_after_s)));
}

Client::Answer Client::settle(Call& call, Transfer& t) {
  RequestRecord& record = t.record;
  Answer& answer = t.answer;
  record.status = answer.status;
  record.total_ns = util::now_ns() - record.start_ns;
  record.bytes = call.kind == Request::get ? (answer.status >= 200 && answer.status < 300 ? answer.received : 0)
                                           : call.body.size();
  if (IoObserver* observer = thread_observer()) observer->on_request(record);
  report_as_storage_call(call, record);
  answer.attempts = record.attempts;

  const std::string object = fmt::format("s3://{}/{}", *call.bucket, call.key ? *call.key : "");
  if (answer.overflow)
    throw data_error(fmt::format("S3 object '{}' holds more bytes than the plan gives it ({} expected)", object, call.dest.size()),
                     "the bucket holds another dataset: generate this one again, or point dataset.data_folder elsewhere");
  const Policy& policy = call.policy();
  answer.verdict = answer.untrusted || answer.status == 0
                       ? Verdict::error
                       : verdict_of(policy, answer.status, answer.code, record.attempts > 1, call.offset);
  if (answer.verdict != Verdict::error) return answer;
  throw_failure(policy,
                {.status = answer.status, .code = answer.code, .message = xml_value(answer.text, "Message"),
                 .curl_error = answer.curl_error, .untrusted = answer.untrusted, .attempts = record.attempts},
                object, *call.bucket, hosts_[call.endpoint].url);
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
    lane.t.record.endpoint = static_cast<std::uint16_t>(lane.call->endpoint);
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
      if (again(lane->t.answer) && lane->t.record.attempts < std::max(1, endpoint_.max_attempts)) {
        lane->t.record.note_retry(lane->t.answer.status);
        back_off(lane->t.record.attempts, lane->t.answer.retry_after);
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
