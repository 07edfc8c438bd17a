// Issue 24, the file side: hostile files and backup stores. Each test failed
// before its fix:
//   class 2  decompression bombs (gzip, zlib, LZW) took memory without
//            bound; /dev/zero or a FIFO given as an input file exhausted
//            memory or blocked for ever;
//   class 5  a delta the replay refuses was stored; a stopped `backup full`
//            left its .part file in the store;
//   class 6  symbolic links were followed out of the store, a link loop named
//            like a snapshot ended the listing with an exception, a stray
//            Full-...-9223372036854775807 passed for the latest backup;
//   class 9  `memberList: null` without a reason.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "adapters/local/backup_store.h"
#include "adapters/local/compression.h"
#include "adapters/local/delta_file.h"
#include "adapters/local/snapshot_file.h"
#include "cli/commands.h"
#include "engine/common/json_value.h"
#include "engine/common/sha256.h"
#include "engine/common/time_util.h"
#include "observers/member_observer.h"
#include "platform/file_input.h"
#include "platform/process.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::Put;
using testing::Slurp;
using testing::TempDir;

// LZW in Go's compress/lzw layout (LSB, literal width 8) that decodes to
// `repeats` copies of the longest run of zeros the 12-bit table holds
// (3,839 bytes a 12-bit code): ~2,500-fold.
std::string LzwBomb(int repeats) {
  std::string out;
  uint64_t bits = 0;
  int count = 0, width = 9, next = 258;
  bool first = true;
  auto emit = [&](int code) {
    bits |= static_cast<uint64_t>(code) << count;
    count += width;
    while (count >= 8) {
      out.push_back(static_cast<char>(bits & 0xff));
      bits >>= 8;
      count -= 8;
    }
    // What the decoder does after each code.
    if (!first && next < 4096) ++next;
    first = false;
    if (next >= (1 << width) && width < 12) ++width;
  };
  emit(0);
  for (int code = 258; code < 4096; ++code) emit(code);  // "00", "000", ...: each the entry being defined
  for (int i = 0; i < repeats; ++i) emit(4095);
  emit(257);
  if (count > 0) out.push_back(static_cast<char>(bits & 0xff));
  return out;
}

// The peak resident memory (KiB) of `work` run in a child process, or -1.
long PeakKilobytesOf(const std::function<void()>& work) {
  const pid_t child = fork();
  if (child == 0) {
    work();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    // The exit status carries the peak in MiB (at most 255).
    _exit(static_cast<int>(std::min<long>(usage.ru_maxrss / 1024, 255)));
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return static_cast<long>(WEXITSTATUS(status)) * 1024;
}

long CurrentKilobytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// --- class 2: special files and bounded whole-file reads -----------------

TEST(FileInput, RefusesDevicesAndFifosByTypeWithoutBlocking) {
  TempDir dir("file-input");
  auto zero = ReadRegularFile("/dev/zero", kMaxConfigFileBytes);
  ASSERT_FALSE(zero.ok());
  EXPECT_TRUE(Contains(zero.error().message, "a character device, not a regular file"))
      << zero.error().message;

  const std::string fifo = dir.path() + "/etcd.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto started = std::chrono::steady_clock::now();
  auto piped = ReadRegularFile(fifo, kMaxConfigFileBytes);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2)) << "blocked on the FIFO";
  ASSERT_FALSE(piped.ok());
  EXPECT_TRUE(Contains(piped.error().message, "a FIFO")) << piped.error().message;

  Put(dir.path() + "/big", std::string(2048, 'x'));
  auto big = ReadRegularFile(dir.path() + "/big", 1024);
  ASSERT_FALSE(big.ok());
  EXPECT_TRUE(Contains(big.error().message, "larger than the limit of 1 KiB")) << big.error().message;
  auto fits = ReadRegularFile(dir.path() + "/big", 2048);
  ASSERT_TRUE(fits.ok()) << fits.error().message;
  EXPECT_EQ(fits->size(), 2048u);

  fs::create_symlink(dir.path() + "/big", dir.path() + "/link");
  EXPECT_TRUE(ReadRegularFile(dir.path() + "/link", 4096).ok()) << "links are followed unless refused";
  auto refused = ReadRegularFile(dir.path() + "/link", 4096, Links::kRefuse);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.error().message, "symbolic link")) << refused.error().message;
}

// A full backup of a stopped member copies its member/snap/db: a FIFO there
// blocked the copy for ever, /dev/zero filled the disk.
TEST(FileInput, TheDatabaseCopiedIntoAFullSnapshotIsARegularFile) {
  TempDir dir("snapshot-stream");
  const std::string fifo = dir.path() + "/db";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto started = std::chrono::steady_clock::now();
  Status piped = WriteSnapshotStream(fifo, dir.path() + "/out");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2)) << "blocked on the FIFO";
  ASSERT_FALSE(piped.ok());
  EXPECT_TRUE(Contains(piped.error().message, "a FIFO, not a regular file")) << piped.error().message;
  Status zero = WriteSnapshotStream("/dev/zero", dir.path() + "/out");
  ASSERT_FALSE(zero.ok());
  EXPECT_TRUE(Contains(zero.error().message, "a character device")) << zero.error().message;

  Put(dir.path() + "/real-db", "bbolt pages");
  ASSERT_TRUE(WriteSnapshotStream(dir.path() + "/real-db", dir.path() + "/out").ok());
  EXPECT_EQ(Slurp(dir.path() + "/out"), "bbolt pages" + Sha256Digest("bbolt pages"));
}

// member-init and `observe member` read the Etcd, a Lease and the etcd
// configuration whole: /dev/zero exhausted memory, a FIFO blocked for ever.
TEST(FileInput, ObserveMemberRefusesAFifoOrDevZeroAsItsInputs) {
  TempDir dir("observe-fifo");
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string config = dir.path() + "/etcd.conf.yaml";
  Put(config, "name: m0\ninitial-cluster: m0=http://127.0.0.1:12380\n");
  for (const auto& [flag, file] :
       std::vector<std::pair<std::string, std::string>>{{"--etcd", fifo},
                                                        {"--etcd", "/dev/zero"},
                                                        {"--config-template", fifo},
                                                        {"--config-template", "/dev/zero"}}) {
    cli::Args args = {"member",
                      "--name",
                      "m0",
                      "--peer-url",
                      "http://127.0.0.1:12380",
                      "--endpoints",
                      "http://127.0.0.1:1",
                      "--data-dir",
                      dir.path() + "/data",
                      "--config-template",
                      flag == "--config-template" ? file : config,
                      "--etcd",
                      flag == "--etcd" ? file : "-"};
    std::istringstream in(
        R"({"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd","metadata":{"name":"e"}})");
    std::ostringstream out, err;
    const auto started = std::chrono::steady_clock::now();
    const int code = cli::RunObserve(args, in, out, err);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5)) << flag << " " << file;
    EXPECT_NE(code, 0) << flag << " " << file << ": " << out.str();
    EXPECT_TRUE(Contains(err.str(), "not a regular file")) << flag << " " << file << ": " << err.str();
  }
}

// --- class 2: decompression bombs -----------------------------------------

TEST(Decompression, AGzipBombStopsAtTheRatioLimit) {
  auto bomb = Compress(std::string(size_t{64} << 20, '\0'), ".gz");  // 64 MiB of zeros: ~64 KB
  ASSERT_TRUE(bomb.ok());
  auto plain = Decompress(*bomb, ".gz");
  ASSERT_FALSE(plain.ok());
  EXPECT_TRUE(Contains(plain.error().message, "200-fold")) << plain.error().message;
  // Below the ratio floor, the same data decompresses.
  auto small = Compress(std::string(size_t{1} << 20, '\0'), ".zlib");
  ASSERT_TRUE(small.ok());
  auto back = Decompress(*small, ".zlib");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->size(), size_t{1} << 20);
}

TEST(Decompression, TheAbsoluteLimitHoldsWhateverTheRatio) {
  auto data = Compress(std::string(size_t{3} << 20, 'a'), ".gz");
  ASSERT_TRUE(data.ok());
  DecompressionLimits limits;
  limits.max_bytes = int64_t{2} << 20;
  limits.max_ratio = int64_t{1} << 40;
  auto plain = Decompress(*data, ".gz", limits);
  ASSERT_FALSE(plain.ok());
  EXPECT_TRUE(Contains(plain.error().message, "larger than the limit of 2 MiB")) << plain.error().message;
}

// member-init --max-delta-bytes sets the bound of a delta read from the store.
TEST(Decompression, ADeltaOverTheStoresLimitIsRefusedByName) {
  TempDir dir("store-delta-limit");
  const std::string store_dir = dir.path() + "/etcd-main";
  Put(store_dir + "/v2/Incr-00000002-00000005-1714557600", std::string(2048, 'x'));
  BackupStore store(store_dir);
  EXPECT_EQ(store.max_delta_bytes(), int64_t{128} << 20);
  EXPECT_TRUE(store.ReadSnapshot("Incr-00000002-00000005-1714557600").ok());
  store.set_max_delta_bytes(1024);
  auto read = store.ReadSnapshot("Incr-00000002-00000005-1714557600");
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(Contains(read.error().message,
                       "v2/Incr-00000002-00000005-1714557600: is larger than the limit of 1 KiB"))
      << read.error().message;
}

TEST(Decompression, AnLzwBombStopsAtTheRatioLimit) {
  const std::string bomb = LzwBomb(200000);  // 300 KB that decode to 768 MB
  DecompressionLimits unlimited;
  unlimited.max_bytes = int64_t{1} << 40;
  unlimited.max_ratio = int64_t{1} << 40;
  unlimited.ratio_floor_bytes = 0;
  // The crafted stream is valid LZW (checked on a small one).
  auto small = Decompress(LzwBomb(10), ".Z", unlimited);
  ASSERT_TRUE(small.ok()) << small.error().message;
  EXPECT_EQ(small->find_first_not_of('\0'), std::string::npos);
  auto plain = Decompress(bomb, ".Z");
  ASSERT_FALSE(plain.ok());
  EXPECT_TRUE(Contains(plain.error().message, "200-fold")) << plain.error().message;
}

// A delta bomb in the store, read as `member-init` (dry run too) reads it:
// refused by name, and the process stays far below the bomb's size.
TEST(Decompression, AStoredDeltaBombIsRefusedAndMemoryStaysBounded) {
  TempDir dir("store-bomb");
  const std::string store_dir = dir.path() + "/etcd-main";
  Put(store_dir + "/v2/Incr-00000002-00000005-1714557600.Z", LzwBomb(400000));  // 600 KB -> 1.5 GB
  BackupStore store(store_dir);
  auto read = store.ReadSnapshot("Incr-00000002-00000005-1714557600.Z");
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(Contains(read.error().message, "Incr-00000002-00000005-1714557600.Z")) << read.error().message;
  EXPECT_TRUE(Contains(read.error().message, "200-fold")) << read.error().message;

  const long before = CurrentKilobytes();
  const long peak = PeakKilobytesOf([&] { (void)store.ReadSnapshot("Incr-00000002-00000005-1714557600.Z"); });
  ASSERT_GT(peak, 0);
  EXPECT_LT(peak, before + 96 * 1024) << "peak " << peak << " KiB, before " << before << " KiB";
}

// A full snapshot is decompressed to disk as it streams: a gzip bomb is
// refused at the ratio limit, nothing is left at the destination, and the
// memory used does not grow with the file.
TEST(Decompression, AFullSnapshotStreamsToDiskAndABombLeavesNothing) {
  TempDir dir("store-full-bomb");
  const std::string store_dir = dir.path() + "/etcd-main";
  auto bomb = Compress(std::string(size_t{64} << 20, '\0'), ".gz");
  ASSERT_TRUE(bomb.ok());
  Put(store_dir + "/v2/Full-00000000-00000007-1714557600.gz", *bomb);
  BackupStore store(store_dir);
  const std::string destination = dir.path() + "/restore/snapshot.db";
  fs::create_directories(dir.path() + "/restore");
  Status copied = store.ReadSnapshotToFile("Full-00000000-00000007-1714557600.gz", destination);
  ASSERT_FALSE(copied.ok());
  EXPECT_TRUE(Contains(copied.error().message, "200-fold")) << copied.error().message;
  EXPECT_TRUE(fs::is_empty(dir.path() + "/restore")) << "neither the destination nor a temporary file";

  // A snapshot of 32 MiB (compressible a few-fold) streams in constant memory.
  std::string database;
  database.reserve(size_t{32} << 20);
  uint32_t state = 1;
  while (database.size() < (size_t{32} << 20)) {
    state = state * 1103515245 + 12345;
    database.append(16, static_cast<char>('a' + (state >> 16) % 8));
  }
  database += Sha256Digest(database);
  auto compressed = Compress(database, ".zlib");
  ASSERT_TRUE(compressed.ok());
  Put(store_dir + "/v2/Full-00000000-00000009-1714557601.zlib", *compressed);
  const long before = CurrentKilobytes();
  const long peak = PeakKilobytesOf(
      [&] { (void)store.ReadSnapshotToFile("Full-00000000-00000009-1714557601.zlib", destination); });
  ASSERT_GT(peak, 0);
  EXPECT_LT(peak, before + 16 * 1024) << "peak " << peak << " KiB, before " << before << " KiB";
  EXPECT_TRUE(Slurp(destination) == database);
}

// --- class 5: deltas the replay would refuse ------------------------------

EtcdEvent Event(const std::string& key, int64_t revision) {
  EtcdEvent event;
  event.kv.key = key;
  event.kv.value = "v";
  event.kv.create_revision = revision;
  event.kv.mod_revision = revision;
  event.kv.version = 1;
  return event;
}

TEST(DeltaValidation, ADeltaTheReplayWouldRefuseIsNotStored) {
  TempDir dir("store-bad-delta");
  BackupStore store(dir.path() + "/etcd-main");
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1714557600));
  EtcdEvent without_revision = Event("/b", 0);
  const std::vector<std::pair<std::string, std::vector<EtcdEvent>>> bad = {
      {"goes back in revision", {Event("/a", 3), Event("/b", 2), Event("/c", 5)}},
      {"has no mod_revision", {Event("/a", 2), without_revision, Event("/c", 5)}},
      {"not at its last revision", {Event("/a", 2), Event("/b", 3)}},
      {"before its start revision", {Event("/a", 1), Event("/b", 5)}},
      {"no event", {}},
  };
  for (const bool dry_run : {false, true}) {
    for (const auto& [why, events] : bad) {
      RequestLog log(dry_run);
      auto name = store.WriteDelta(SerializeDelta(events, "2024-05-01T10:00:00Z"), 2, 5, 0, now, ".gz", log);
      ASSERT_FALSE(name.ok()) << why;
      EXPECT_EQ(name.error().code, ErrorCode::kFailedPrecondition) << name.error().message;
      EXPECT_TRUE(Contains(name.error().message, why)) << name.error().message;
      EXPECT_TRUE(log.requests().empty()) << why << ": nothing is recorded as written";
    }
  }
  EXPECT_FALSE(fs::exists(store.location() + "/v2")) << "nothing written";

  RequestLog log;
  auto good = store.WriteDelta(SerializeDelta({Event("/a", 2), Event("/b", 5)}, "2024-05-01T10:00:00Z"), 2, 5,
                               0, now, "", log);
  ASSERT_TRUE(good.ok()) << good.error().message;
}

// A minimal etcd JSON gateway on loopback: the member list, a status at
// `revision`, and a snapshot stream that sends one message and then stalls
// until stopped.
class StallingEtcd {
 public:
  explicit StallingEtcd(int64_t revision) : revision_(revision) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(listener_, 16);
    socklen_t size = sizeof address;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~StallingEtcd() {
    stopping_ = true;
    thread_.join();
    close(listener_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void Serve() {
    while (!stopping_) {
      pollfd ready{listener_, POLLIN, 0};
      if (poll(&ready, 1, 50) <= 0) continue;
      const int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) continue;
      std::string request;
      char buffer[4096];
      size_t header_end = std::string::npos;
      while (header_end == std::string::npos) {
        pollfd readable{connection, POLLIN, 0};
        if (poll(&readable, 1, 2000) <= 0) break;
        const ssize_t got = recv(connection, buffer, sizeof buffer, 0);
        if (got <= 0) break;
        request.append(buffer, static_cast<size_t>(got));
        header_end = request.find("\r\n\r\n");
      }
      const std::string path = request.substr(
          request.find(' ') + 1, request.find(' ', request.find(' ') + 1) - request.find(' ') - 1);
      const std::string status = R"({"header":{"cluster_id":"1","member_id":"2","revision":")" +
                                 std::to_string(revision_) +
                                 R"(","raft_term":"2"},"version":"3.5.0",)"
                                 R"("dbSize":"4096","leader":"2","raftIndex":"9","raftTerm":"2"})";
      const std::string members = R"({"header":{"cluster_id":"1","member_id":"2"},"members":[{"ID":"2",)"
                                  R"("name":"m0","peerURLs":["http://127.0.0.1:12380"],"clientURLs":[")" +
                                  url() + R"("]}]})";
      if (path == "/v3/maintenance/snapshot") {
        Send(connection,
             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
             "{\"result\":{\"remaining_bytes\":\"100000\",\"blob\":\"AAAAAAAA\"}}\n");
        while (!stopping_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      } else {
        const std::string& body = path == "/v3/cluster/member/list" ? members : status;
        Send(connection,
             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
             "Content-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n" + body);
      }
      close(connection);
    }
  }
  static void Send(int connection, const std::string& text) {
    (void)send(connection, text.data(), text.size(), MSG_NOSIGNAL);
  }

  int64_t revision_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// `ruleplane backup full` stopped by SIGTERM in the middle of the snapshot
// stream left its .part file in the store. (The binary, started as its own
// process: a fork of this process, which has the server's thread, could
// deadlock in the allocator, as one did under AddressSanitizer.)
TEST(BackupStop, ASignalledFullBackupLeavesNothingInTheStore) {
  TempDir dir("backup-stop");
  const std::string store_dir = dir.path() + "/etcd-main";
  fs::create_directories(store_dir);
  StallingEtcd etcd(7);
  auto backup = ChildProcess::Start(
      {testing::RuleplaneBinary(), "backup", "full", "--endpoints", etcd.url(), "--backup-store", store_dir},
      dir.path() + "/backup.log");
  ASSERT_TRUE(backup.ok()) << backup.error().message;
  // Until the download has begun.
  bool begun = false;
  for (int i = 0; i < 400 && !begun; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    for (const auto& entry : fs::directory_iterator(store_dir))
      begun = begun || entry.path().extension() == ".part";
  }
  ASSERT_TRUE(begun) << "the download did not begin: " << Slurp(dir.path() + "/backup.log");
  // SIGTERM first; an exit status of -1 is a process the signal (or the
  // SIGKILL after the grace period) ended, not one that stopped.
  EXPECT_EQ(backup->Stop(std::chrono::seconds(30)), 1) << Slurp(dir.path() + "/backup.log");
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(store_dir))
    left.push_back(entry.path().filename().string());
  EXPECT_TRUE(left.empty()) << "left in the store: " << left.front();
}

// --- class 6: names and links ---------------------------------------------

TEST(StoreListing, SymbolicLinksAreNotFollowedAndALoopIsReportedNotFatal) {
  TempDir dir("store-links");
  const std::string store_dir = dir.path() + "/etcd-main";
  Put(store_dir + "/v2/Full-00000000-00000005-1714557600", "inside");
  Put(dir.path() + "/outside/secret", "outside the store");
  fs::create_symlink(dir.path() + "/outside/secret", store_dir + "/v2/Full-00000000-00000009-1714557700");
  fs::create_symlink(store_dir + "/v2/Incr-00000006-00000007-1714557800",
                     store_dir + "/v2/Incr-00000006-00000007-1714557800");  // loops on itself
  fs::create_directories(dir.path() + "/elsewhere/Backup-1700000000");
  Put(dir.path() + "/elsewhere/Backup-1700000000/Full-00000000-00000099-1700000000", "outside too");
  fs::create_symlink(dir.path() + "/elsewhere", store_dir + "/v1");
  BackupStore store(store_dir);
  auto listing = store.List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  ASSERT_EQ(listing->snapshots.size(), 1u);
  EXPECT_EQ(listing->snapshots[0].name, "Full-00000000-00000005-1714557600");
  std::string warnings;
  for (const std::string& warning : listing->warnings) warnings += warning + "\n";
  EXPECT_TRUE(Contains(warnings, "v2/Full-00000000-00000009-1714557700 is a symbolic link")) << warnings;
  EXPECT_TRUE(Contains(warnings, "v2/Incr-00000006-00000007-1714557800 is a symbolic link")) << warnings;
  EXPECT_TRUE(Contains(warnings, "v1 is a symbolic link")) << warnings;
  // Nor is a link read when named directly.
  auto read = store.ReadSnapshot("Full-00000000-00000009-1714557700");
  EXPECT_FALSE(read.ok());
  fs::remove(store_dir + "/v2/Incr-00000006-00000007-1714557800");
  fs::remove(store_dir + "/v2/Full-00000000-00000005-1714557600");
  fs::create_symlink(dir.path() + "/outside/secret", store_dir + "/v2/Full-00000000-00000005-1714557600.tmp");
  Put(store_dir + "/v2/Full-00000000-00000003-1714557500", "x");
  fs::rename(store_dir + "/v2/Full-00000000-00000003-1714557500", store_dir + "/v2/real");
  fs::create_symlink(store_dir + "/v2/real", store_dir + "/v2/Full-00000000-00000003-1714557500");
  const std::string destination = dir.path() + "/restored.db";
  EXPECT_FALSE(store.ReadSnapshotToFile("Full-00000000-00000003-1714557500", destination).ok());
  EXPECT_FALSE(fs::exists(destination));
}

TEST(StoreListing, ANameBeyondTheClustersRevisionIsSkippedAndReported) {
  TempDir dir("store-beyond");
  const std::string store_dir = dir.path() + "/etcd-main";
  Put(store_dir + "/v2/Full-00000000-00000005-1714557600", "x");
  Put(store_dir + "/v2/Incr-00000006-00000007-1714557700", "x");
  Put(store_dir + "/v2/Full-00000000-00000900-1714557800", "x");
  BackupStore store(store_dir);
  auto all = store.List();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->snapshots.size(), 3u)
      << "plausible beside its neighbours, and no cluster revision to judge by";
  auto listing = store.List(7);
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  ASSERT_EQ(listing->snapshots.size(), 2u);
  EXPECT_EQ(listing->snapshots.back().name, "Incr-00000006-00000007-1714557700");
  ASSERT_EQ(listing->warnings.size(), 1u);
  EXPECT_TRUE(Contains(listing->warnings[0], "beyond the cluster's current revision 7"))
      << listing->warnings[0];
}

// Without the cluster (a restore after a quorum loss), the neighbours judge:
// no etcd applies 10^6 revisions a second.
TEST(StoreListing, ARevisionTheNeighboursMakeImplausibleIsSkippedWithoutTheCluster) {
  TempDir dir("store-implausible");
  const std::string store_dir = dir.path() + "/etcd-main";
  Put(store_dir + "/v2/Full-00000000-00000005-1714557600", "x");
  Put(store_dir + "/v2/Incr-00000006-00000007-1714557700", "x");
  Put(store_dir + "/v2/Full-00000000-9223372036854775807-1714557800", "x");
  Put(store_dir + "/v2/Full-00000000-05000000000-1714557900", "x");
  BackupStore store(store_dir);
  auto listing = store.List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  ASSERT_EQ(listing->snapshots.size(), 2u);
  EXPECT_EQ(listing->snapshots.back().name, "Incr-00000006-00000007-1714557700");
  ASSERT_EQ(listing->warnings.size(), 2u);
  EXPECT_TRUE(
      Contains(listing->warnings[0], "v2/Full-00000000-05000000000-1714557900 names revision 5000000000"))
      << listing->warnings[0];
  EXPECT_TRUE(Contains(listing->warnings[1], "9223372036854775807")) << listing->warnings[1];
  EXPECT_TRUE(Contains(listing->warnings[1], "suspect, skipped")) << listing->warnings[1];
}

MemberObservationSources ObservedMember(const TempDir& dir) {
  MemberObservationSources sources;
  sources.member.name = "m0";
  sources.member.peer_url = "http://127.0.0.1:12380";
  sources.member.client_url = "http://127.0.0.1:12379";
  sources.member.data_dir = dir.path() + "/data";
  sources.member.config_template = dir.path() + "/etcd.conf.yaml";
  sources.member.config_out = dir.path() + "/etcd.conf.yaml.out";
  Put(sources.member.config_template, "name: m0\ninitial-cluster: m0=http://127.0.0.1:12380\n");
  auto etcd = ParseJson(R"({"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd",)"
                        R"("metadata":{"name":"etcd-main","namespace":"default"},"spec":{"replicas":1}})");
  sources.etcd = *etcd;
  return sources;
}

// member-init picked a stray name beyond the cluster's revision to restore.
TEST(StoreListing, ObserveMemberJudgesTheStoreAgainstTheClustersRevision) {
  TempDir dir("observe-beyond");
  const std::string store_dir = dir.path() + "/etcd-main";
  Put(store_dir + "/v2/Full-00000000-00000005-1714557600", "x");
  Put(store_dir + "/v2/Full-00000000-00000900-1714557800", "x");
  BackupStore store(store_dir);
  StallingEtcd etcd(6);
  EtcdClient cluster(EtcdClientConfig{{etcd.url()}, {}, std::chrono::seconds(5)});
  MemberObservationSources sources = ObservedMember(dir);
  sources.store = &store;
  sources.cluster = &cluster;
  auto now = TimestampFromUnixSeconds(1714557900);
  auto observed = ObserveMember(sources, *now);
  ASSERT_TRUE(observed.ok()) << observed.error().message;
  const std::string json = FormatJson(observed->document);
  const Value* snapshots = observed->document.Find("backupStore")->Find("snapshots");
  ASSERT_EQ(snapshots->list_value().size(), 1u) << json;
  EXPECT_EQ(snapshots->list_value()[0].Find("name")->string_value(), "Full-00000000-00000005-1714557600");
  EXPECT_TRUE(Contains(json, "beyond the cluster's current revision 6")) << json;
}

// --- class 9: why the member list is null ---------------------------------

TEST(ObserveMemberList, SaysWhyTheMemberListIsNull) {
  TempDir dir("observe-null");
  MemberObservationSources sources = ObservedMember(dir);
  auto now = TimestampFromUnixSeconds(1714557900);
  auto none = ObserveMember(sources, *now);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->document.Find("memberList")->is_null());
  ASSERT_NE(none->document.Find("memberListError"), nullptr);
  EXPECT_TRUE(Contains(none->document.Find("memberListError")->string_value(), "no etcd endpoint"));

  EtcdClient unreachable(EtcdClientConfig{{"http://127.0.0.1:1"}, {}, std::chrono::seconds(2)});
  sources.cluster = &unreachable;
  auto failed = ObserveMember(sources, *now);
  ASSERT_TRUE(failed.ok()) << failed.error().message;
  EXPECT_TRUE(failed->document.Find("memberList")->is_null());
  const std::string why = failed->document.Find("memberListError")->string_value();
  EXPECT_TRUE(Contains(why, "the member list could not be read")) << why;
  EXPECT_TRUE(Contains(why, "127.0.0.1:1")) << why;
}

// Planning was quadratic in the number of full snapshots: the latest full
// snapshot and the store's revision were found by a nested all() over the
// listing (3,000 full snapshots: 9,000,000 comparisons, 1.3 s). Measured by
// the evaluation budget, which counts the work: 3,000 snapshots must plan
// within 200,000 steps (the nested all() used up 1,000,000 and failed).
TEST(PlanningCost, ThreeThousandFullSnapshotsPlanInLinearWork) {
  TempDir dir("plan-3000");
  auto example =
      ParseJson(Slurp(std::string(testing::SourceDir()) + "/examples/snapshots/member-init-restore.json"));
  ASSERT_TRUE(example.ok());
  Value::List snapshots;
  for (int i = 1; i <= 3000; ++i) {
    snapshots.push_back(Value::MakeMap({{Value::String("name"), Value::String("Full-" + std::to_string(i))},
                                        {Value::String("kind"), Value::String("Full")},
                                        {Value::String("startRevision"), Value::Int(0)},
                                        {Value::String("lastRevision"), Value::Int(i)}}));
  }
  Value::Map document;
  for (const auto& [key, value] : example->map_value()) {
    if (key.string_value() == "backupStore") {
      document.emplace_back(key, Value::MakeMap({{Value::String("reachable"), Value::Bool(true)},
                                                 {Value::String("snapshots"), Value::MakeList(snapshots)}}));
    } else {
      document.emplace_back(key, value);
    }
  }
  const std::string path = dir.path() + "/snapshot.json";
  Put(path, FormatJson(Value::MakeMap(std::move(document))));
  std::istringstream in;
  std::ostringstream out, err;
  const int code = cli::RunPlan(
      {"--rules", "etcd-backup-restore@1", "--budget", "200000", path, "-o", "json"}, in, out, err);
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_FALSE(Contains(out.str() + err.str(), "budget")) << out.str() << err.str();
  EXPECT_TRUE(Contains(out.str(), "etcd-backup-restore-initialization")) << out.str();
}

}  // namespace
}  // namespace ruleplane
