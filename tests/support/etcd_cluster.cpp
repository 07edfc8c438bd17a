#include "tests/support/etcd_cluster.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "adapters/etcd/etcdctl_hashkv.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

std::string LoopbackUrl(const std::string& scheme, int port) {
  return scheme + "://127.0.0.1:" + std::to_string(port);
}

}  // namespace

std::unique_ptr<EtcdCluster> EtcdCluster::Create(int members, const std::string& root,
                                                 const std::string& name_prefix) {
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  cluster->token_ = "ruleplane-test-" + std::to_string(getpid());
  for (int i = 0; i < members; ++i) {
    EtcdMemberSpec spec;
    spec.name = name_prefix + std::to_string(i);
    spec.client_url = LoopbackUrl("http", FreeLoopbackPort());
    spec.peer_url = LoopbackUrl("http", FreeLoopbackPort());
    fs::create_directories(root + "/" + spec.name);
    spec.data_dir = root + "/" + spec.name + "/data";
    spec.log_path = root + "/" + spec.name + "/etcd.log";
    cluster->specs_.push_back(spec);
  }
  cluster->processes_.resize(static_cast<size_t>(members));
  return cluster;
}

void EtcdCluster::EnableTls(const TestPki& pki, bool peers_only) {
  pki_ = pki;
  client_tls_ = !peers_only;
  for (EtcdMemberSpec& spec : specs_) {
    if (client_tls_) spec.client_url = "https" + spec.client_url.substr(spec.client_url.find("://"));
    spec.peer_url = "https" + spec.peer_url.substr(spec.peer_url.find("://"));
  }
}

TlsConfig EtcdCluster::ClientTls() const { return client_tls_ ? pki_->ClientTls() : TlsConfig{}; }

std::string EtcdCluster::Scheme(bool peer) const {
  return (peer ? pki_.has_value() : client_tls_) ? "https" : "http";
}

EtcdCluster::~EtcdCluster() {
  for (ChildProcess& process : processes_) process.Stop(std::chrono::seconds(5));
}

std::vector<std::string> EtcdCluster::ClientUrls() const {
  std::vector<std::string> urls;
  for (const EtcdMemberSpec& spec : specs_) urls.push_back(spec.client_url);
  return urls;
}

std::string EtcdCluster::InitialCluster() const {
  std::string list;
  for (const EtcdMemberSpec& spec : specs_)
    list += (list.empty() ? "" : ",") + spec.name + "=" + spec.peer_url;
  return list;
}

Status EtcdCluster::StartAll(std::chrono::milliseconds timeout) {
  // The ports were free when Create chose them; another process may have
  // bound one since. Then that member exits saying so, and the whole cluster
  // starts again from empty data directories on new ports.
  constexpr int kStartAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    std::vector<std::uintmax_t> log_starts;
    for (int i = 0; i < size(); ++i) {
      log_starts.push_back(LogSize(specs_[static_cast<size_t>(i)].log_path));
      if (Status started = StartMember(i); !started.ok()) return started;
    }
    Status ready = WaitAllReady(timeout);
    if (ready.ok()) return ready;
    bool lost_port = false;
    for (int i = 0; i < size(); ++i) {
      lost_port = lost_port || (!IsRunning(i) && LogSaysAddressInUse(specs_[static_cast<size_t>(i)].log_path,
                                                                     log_starts[static_cast<size_t>(i)]));
    }
    if (!lost_port || attempt == kStartAttempts) return ready;
    for (int i = 0; i < size(); ++i) {
      StopMember(i);
      EtcdMemberSpec& spec = specs_[static_cast<size_t>(i)];
      std::error_code removed;
      fs::remove_all(spec.data_dir, removed);
      spec.client_url = LoopbackUrl(Scheme(false), FreeLoopbackPort());
      spec.peer_url = LoopbackUrl(Scheme(true), FreeLoopbackPort());
    }
  }
}

Status EtcdCluster::WaitAllReady(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int i = 0; i < size(); ++i) {
    // A member that exited fails the wait at once: the others would wait for it until the deadline.
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (Status ready = WaitReady(i, std::max(left, std::chrono::milliseconds(0)), true); !ready.ok())
      return ready;
  }
  return {};
}

Status EtcdCluster::StartMember(int i, const std::string& initial_cluster_state) {
  const EtcdMemberSpec& spec = specs_[static_cast<size_t>(i)];
  std::vector<std::string> argv(
      {"etcd", "--name", spec.name, "--data-dir", spec.data_dir, "--listen-client-urls", spec.client_url,
       "--advertise-client-urls", spec.client_url, "--listen-peer-urls", spec.peer_url,
       "--initial-advertise-peer-urls", spec.peer_url, "--initial-cluster", InitialCluster(),
       "--initial-cluster-token", token_, "--initial-cluster-state", initial_cluster_state});
  if (client_tls_) {
    argv.insert(argv.end(), {"--cert-file", pki_->member_cert, "--key-file", pki_->member_key,
                             "--trusted-ca-file", pki_->ca_cert, "--client-cert-auth"});
  }
  if (pki_) {
    argv.insert(argv.end(), {"--peer-cert-file", pki_->member_cert, "--peer-key-file", pki_->member_key,
                             "--peer-trusted-ca-file", pki_->ca_cert, "--peer-client-cert-auth"});
  }
  argv.insert(argv.end(), extra_flags_.begin(), extra_flags_.end());
  auto process = ChildProcess::Start(argv, spec.log_path);
  if (!process.ok()) return process.error();
  processes_[static_cast<size_t>(i)] = std::move(*process);
  return {};
}

Status EtcdCluster::StartMemberWithConfig(int i, const std::string& config_file) {
  auto process =
      ChildProcess::Start({"etcd", "--config-file", config_file}, specs_[static_cast<size_t>(i)].log_path);
  if (!process.ok()) return process.error();
  processes_[static_cast<size_t>(i)] = std::move(*process);
  return {};
}

Status EtcdCluster::WaitReady(int i, std::chrono::milliseconds timeout) {
  return WaitReady(i, timeout, false);
}

Status EtcdCluster::WaitReady(int i, std::chrono::milliseconds timeout, bool stop_when_any_exits) {
  const EtcdMemberSpec& spec = specs_[static_cast<size_t>(i)];
  EtcdClient client(EtcdClientConfig{{spec.client_url}, ClientTls(), std::chrono::seconds(2)});
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    RequestLog reads;
    auto status = client.MemberStatus(spec.client_url, reads);
    // Ready: it answers and knows a leader.
    if (status.ok() && status->leader != 0) return {};
    if (!IsRunning(i)) return Error{ErrorCode::kUnavailable, spec.name + " exited; see " + spec.log_path, {}};
    for (int j = 0; stop_when_any_exits && j < size(); ++j) {
      if (!IsRunning(j)) {
        const EtcdMemberSpec& other = specs_[static_cast<size_t>(j)];
        return Error{ErrorCode::kUnavailable, other.name + " exited; see " + other.log_path, {}};
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Error{ErrorCode::kDeadlineExceeded,
                   spec.name + " is not ready (" + (status.ok() ? "no leader" : status.error().message) +
                       "); see " + spec.log_path,
                   {}};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

bool EtcdCluster::WaitLeaderless(int i, std::chrono::milliseconds timeout) const {
  const std::string url = member(i).client_url;
  EtcdClient client(EtcdClientConfig{{url}, ClientTls(), std::chrono::seconds(2)});
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    RequestLog reads;
    auto status = client.MemberStatus(url, reads);
    if (status.ok() && status->leader == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

void EtcdCluster::StopMember(int i) { processes_[static_cast<size_t>(i)].Stop(std::chrono::seconds(10)); }

void EtcdCluster::KillMember(int i) {
  processes_[static_cast<size_t>(i)].Kill(SIGKILL);
  processes_[static_cast<size_t>(i)].Stop();
}

void EtcdCluster::SignalMember(int i, int signal) { processes_[static_cast<size_t>(i)].Kill(signal); }

bool EtcdCluster::IsRunning(int i) { return processes_[static_cast<size_t>(i)].running(); }

EtcdClient EtcdCluster::Client() const {
  return EtcdClient(EtcdClientConfig{ClientUrls(), ClientTls(), std::chrono::seconds(5)});
}

Status EtcdCluster::WriteConfigTemplate(int i, const std::string& path) const {
  const EtcdMemberSpec& spec = specs_[static_cast<size_t>(i)];
  std::ofstream out(path);
  out << "name: " << spec.name << "\n"
      << "data-dir: " << spec.data_dir << "\n"
      << "listen-client-urls: " << spec.client_url << "\n"
      << "advertise-client-urls: " << spec.client_url << "\n"
      << "listen-peer-urls: " << spec.peer_url << "\n"
      << "initial-advertise-peer-urls: " << spec.peer_url << "\n"
      << "initial-cluster: " << InitialCluster() << "\n"
      << "initial-cluster-token: " << token_ << "\n"
      << "initial-cluster-state: new\n"
      << "snapshot-count: 10000\n";
  auto transport_security = [&](const char* side) {
    out << side << "-transport-security:\n"
        << "  cert-file: " << pki_->member_cert << "\n"
        << "  key-file: " << pki_->member_key << "\n"
        << "  trusted-ca-file: " << pki_->ca_cert << "\n"
        << "  client-cert-auth: true\n";
  };
  if (client_tls_) transport_security("client");
  if (pki_) transport_security("peer");
  if (!out.flush()) return Error{ErrorCode::kIo, "cannot write " + path, {}};
  return {};
}

NumberedWriter::NumberedWriter(std::vector<std::string> endpoints, std::string prefix, TlsConfig tls)
    : endpoints_(std::move(endpoints)), prefix_(std::move(prefix)), tls_(std::move(tls)) {}

NumberedWriter::~NumberedWriter() { Stop(); }

void NumberedWriter::Start(std::chrono::milliseconds interval) {
  if (running_.exchange(true)) return;
  thread_ = std::thread([this, interval] { Loop(interval); });
}

void NumberedWriter::Stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

std::string NumberedWriter::KeyOf(int64_t index) const {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%08lld", static_cast<long long>(index));
  return prefix_ + digits;
}

Status NumberedWriter::WriteSome(int count) {
  EtcdClient client(EtcdClientConfig{endpoints_, tls_, std::chrono::seconds(5)});
  for (int i = 0; i < count; ++i) {
    RequestLog log;
    const int64_t index = next_++;
    auto revision = client.Put(KeyOf(index), "value " + std::to_string(index), log);
    if (!revision.ok()) return revision.error();
    std::lock_guard<std::mutex> lock(mutex_);
    acks_.push_back({index, *revision});
  }
  return {};
}

void NumberedWriter::Loop(std::chrono::milliseconds interval) {
  EtcdClient client(EtcdClientConfig{endpoints_, tls_, std::chrono::seconds(2)});
  auto last_success = std::chrono::steady_clock::now();
  while (running_) {
    RequestLog log;
    const int64_t index = next_++;
    auto revision = client.Put(KeyOf(index), "value " + std::to_string(index), log);
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_success);
      longest_gap_ = std::max(longest_gap_, gap);
      if (revision.ok()) {
        acks_.push_back({index, *revision});
        last_success = now;
      } else {
        ++failures_;
        longest_outage_ = std::max(longest_outage_, gap);
      }
    }
    std::this_thread::sleep_for(interval);
  }
}

int64_t NumberedWriter::failures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failures_;
}

std::chrono::milliseconds NumberedWriter::longest_outage() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return longest_outage_;
}

std::chrono::milliseconds NumberedWriter::longest_gap() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return longest_gap_;
}

std::vector<NumberedWriter::Ack> NumberedWriter::acknowledged() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return acks_;
}

std::vector<std::string> MissingKeys(EtcdClient& client, const NumberedWriter& writer,
                                     int64_t up_to_revision) {
  std::vector<std::string> missing;
  // The acknowledgements before the read: a writer still running may add some after it.
  const std::vector<NumberedWriter::Ack> acknowledged = writer.acknowledged();
  RequestLog reads;
  const std::string prefix = writer.KeyOf(0).substr(0, writer.KeyOf(0).size() - 8);
  std::string end = prefix;
  end.back() = static_cast<char>(end.back() + 1);
  auto range = client.Range(prefix, end, 0, reads);
  if (!range.ok()) return {"the range read failed: " + range.error().message};
  std::set<std::string> present;
  for (const KeyValue& kv : range->second) present.insert(kv.key);
  for (const NumberedWriter::Ack& ack : acknowledged) {
    if (ack.revision <= up_to_revision && present.count(writer.KeyOf(ack.index)) == 0) {
      missing.push_back(writer.KeyOf(ack.index) + " (revision " + std::to_string(ack.revision) + ")");
    }
  }
  return missing;
}

Result<MemberView> MemberViewAt(const std::string& client_url, const TlsConfig& tls) {
  EtcdClient client(EtcdClientConfig{{client_url}, tls, std::chrono::seconds(5)});
  RequestLog reads;
  auto status = client.MemberStatus(client_url, reads);
  if (!status.ok()) return status.error();
  auto members = client.MemberList(reads);
  if (!members.ok()) return members.error();
  MemberView view{status->cluster_id, status->revision, {}};
  for (const EtcdMember& member : *members) {
    std::string peers;
    for (const std::string& peer : member.peer_urls) peers += (peers.empty() ? "" : ",") + peer;
    view.members.push_back(MemberIdHex(member.id) + " " +
                           (member.name.empty() ? "(unstarted)" : member.name) + " " + peers +
                           (member.is_learner ? " learner" : ""));
  }
  std::sort(view.members.begin(), view.members.end());
  return view;
}

Result<uint32_t> HashKvAt(const std::string& client_url, int64_t revision, int attempts,
                          const TlsConfig& tls) {
  Result<HashKvResult> result = Error{ErrorCode::kUnavailable, "not asked", {}};
  for (int attempt = 0; attempt < attempts; ++attempt) {
    result = EndpointHashKV(client_url, revision, tls, std::chrono::seconds(10));
    if (result.ok()) return result->hash;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return result.error();
}

}  // namespace ruleplane::testing
