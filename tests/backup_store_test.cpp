// The backup store in etcd-backup-restore's layout, its delta format and its
// compressions, against golden files written by Go's own encoding/json,
// sha256, gzip, zlib and lzw (tests/data/backup-restore/generate.go), as
// etcd-backup-restore writes them.
#include "adapters/local/backup_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "adapters/local/atomic_file.h"
#include "adapters/local/compression.h"
#include "adapters/local/delta_file.h"
#include "engine/common/sha256.h"
#include "platform/base64.h"
#include "platform/sha256_stream.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane {
namespace {

namespace fs = std::filesystem;
using testing::Put;
using testing::Slurp;
using testing::TempDir;

const std::string kGolden = std::string(testing::SourceDir()) + "/tests/data/backup-restore/";
constexpr const char* kDelta = "Incr-00000002-00000005-1714557600";

TEST(DeltaFile, ReadsEtcdBackupRestoresFormat) {
  auto events = ParseDelta(Slurp(kGolden + kDelta));
  ASSERT_TRUE(events.ok()) << events.error().message;
  ASSERT_EQ(events->size(), 5u);
  const EtcdEvent& first = (*events)[0];
  EXPECT_EQ(first.type, EtcdEvent::Type::kPut);
  EXPECT_EQ(first.kv.key, "/registry/pods/a");
  EXPECT_EQ(first.kv.value, "first");
  EXPECT_EQ(first.kv.create_revision, 2);
  EXPECT_EQ(first.kv.mod_revision, 2);
  EXPECT_EQ(first.kv.version, 1);
  EXPECT_EQ((*events)[1].kv.value, std::string("\0\1\2\xff", 4)) << "binary values survive base64";
  const EtcdEvent& deleted = (*events)[3];
  EXPECT_EQ(deleted.type, EtcdEvent::Type::kDelete);
  EXPECT_EQ(deleted.kv.key, "/registry/pods/a");
  EXPECT_EQ(deleted.kv.mod_revision, 4);
  EXPECT_EQ((*events)[4].kv.lease, 7587869348717429000);

  const std::vector<RevisionGroup> groups = GroupByRevision(*events);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[1].revision, 3);
  EXPECT_EQ(groups[1].events.size(), 2u) << "one transaction of two puts is replayed as one";
}

TEST(DeltaFile, WritesWhatGoWrites) {
  auto events = ParseDelta(Slurp(kGolden + kDelta));
  ASSERT_TRUE(events.ok()) << events.error().message;
  // The golden events were received at different times; SerializeDelta takes
  // one. Everything else is byte for byte what Go's json.Marshal printed.
  const std::string time = "2024-05-01T10:00:00.123456789Z";
  const std::string go_json = std::regex_replace(
      Slurp(kGolden + kDelta + ".json"), std::regex(R"("time":"[^"]*")"), "\"time\":\"" + time + "\"");
  const std::string written = SerializeDelta(*events, time);
  ASSERT_GE(written.size(), 32u);
  EXPECT_EQ(written.substr(0, written.size() - 32), go_json);
  EXPECT_EQ(written.substr(written.size() - 32), Sha256Digest(go_json));
}

TEST(DeltaFile, AChangedByteIsAChecksumMismatch) {
  std::string bytes = Slurp(kGolden + kDelta);
  bytes[10] = bytes[10] == 'a' ? 'b' : 'a';
  auto events = ParseDelta(bytes);
  ASSERT_FALSE(events.ok());
  EXPECT_NE(events.error().message.find("checksum mismatch"), std::string::npos) << events.error().message;
  EXPECT_FALSE(ParseDelta("short").ok());
}

TEST(Compression, ReadsGoGzipZlibAndLzw) {
  const std::string plain = Slurp(kGolden + kDelta);
  ASSERT_FALSE(plain.empty());
  for (const std::string suffix : {".gz", ".zlib", ".Z"}) {
    const std::string name = std::string(kDelta) + suffix;
    EXPECT_EQ(CompressionSuffix(name), suffix);
    EXPECT_EQ(CompressionSuffix(name + ".final"), suffix);
    auto decompressed = Decompress(Slurp(kGolden + name), suffix);
    ASSERT_TRUE(decompressed.ok()) << suffix << ": " << decompressed.error().message;
    EXPECT_EQ(*decompressed, plain) << suffix;
  }
  EXPECT_FALSE(Decompress("not gzip", ".gz").ok());
  EXPECT_FALSE(Decompress(Slurp(kGolden + kDelta + ".Z").substr(0, 40), ".Z").ok())
      << "a truncated LZW stream";
}

TEST(Compression, ReadsALargeLzwStreamWhoseTableFillsAndClears) {
  auto decompressed = Decompress(Slurp(kGolden + "lzw-large.Z"), ".Z");
  ASSERT_TRUE(decompressed.ok()) << decompressed.error().message;
  EXPECT_GE(decompressed->size(), 300000u);
  EXPECT_EQ(Sha256Hex(*decompressed) + "\n", Slurp(kGolden + "lzw-large.sha256"));
}

TEST(Compression, WritesWhatItReads) {
  const std::string plain = Slurp(kGolden + kDelta);
  for (const std::string suffix : {"", ".gz", ".zlib"}) {
    auto compressed = Compress(plain, suffix);
    ASSERT_TRUE(compressed.ok()) << suffix;
    auto back = Decompress(*compressed, suffix);
    ASSERT_TRUE(back.ok()) << suffix;
    EXPECT_EQ(*back, plain) << suffix;
  }
  EXPECT_FALSE(Compress(plain, ".Z").ok()) << "ruleplane writes no LZW";
}

TEST(BackupStore, ListsBothLayoutsSortedAndLeavesStrangersAlone) {
  TempDir dir("store-list");
  const std::string store = dir.path() + "/etcd-main";
  Put(store + "/v1/Backup-1700000000/Full-00000000-00000100-1700000000", "x");
  Put(store + "/v1/Backup-1700000000/Incr-00000101-00000150-1700000100", "x");
  Put(store + "/v2/Full-00000000-00000200-1700000200.gz", "x");
  Put(store + "/v2/Incr-00000201-00000250-1700000300.zlib.final", "x");
  Put(store + "/v2/Full-00000000-00000300-1700000400.tmp.42", "a partial write");
  Put(store + "/v2/notes.txt", "?");

  auto listing = BackupStore(store).List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  EXPECT_EQ(listing->prefix, "etcd-main");
  std::vector<std::string> names;
  for (const StoredSnapshot& snapshot : listing->snapshots) names.push_back(snapshot.path);
  EXPECT_EQ(names, (std::vector<std::string>{"v1/Backup-1700000000/Full-00000000-00000100-1700000000",
                                             "v1/Backup-1700000000/Incr-00000101-00000150-1700000100",
                                             "v2/Full-00000000-00000200-1700000200.gz",
                                             "v2/Incr-00000201-00000250-1700000300.zlib.final"}));
  const StoredSnapshot& last = listing->snapshots.back();
  EXPECT_EQ(last.kind, "Incr");
  EXPECT_EQ(last.start_revision, 201);
  EXPECT_EQ(last.last_revision, 250);
  EXPECT_EQ(last.created_on, 1700000300);
  EXPECT_EQ(last.compression_suffix, ".zlib");
  EXPECT_TRUE(last.is_final);
  EXPECT_EQ(listing->warnings.size(), 2u);
  EXPECT_TRUE(fs::exists(store + "/v2/Full-00000000-00000300-1700000400.tmp.42")) << "never deleted";
  EXPECT_TRUE(BackupStore(dir.path() + "/absent").List()->snapshots.empty());
}

// Issue 24, class 1: a store mounted empty (neither v1/ nor v2/) failed the
// listing with the error left over from looking for v1/, and no member started.
TEST(BackupStore, AStoreMountedEmptyListsNothingAndIsNoError) {
  TempDir dir("store-empty");
  fs::create_directories(dir.path() + "/etcd-main");
  auto listing = BackupStore(dir.path() + "/etcd-main").List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  EXPECT_TRUE(listing->snapshots.empty());
  EXPECT_TRUE(listing->warnings.empty());
}

TEST(BackupStore, WritesADeltaAtomicallyAndReadsItBack) {
  TempDir dir("store-delta");
  BackupStore store(dir.path() + "/etcd-main");
  const std::string delta = Slurp(kGolden + kDelta);
  RequestLog log;
  auto name = store.WriteDelta(
      delta, 2, 5, 0, std::chrono::system_clock::time_point(std::chrono::seconds(1714557600)), ".gz", log);
  ASSERT_TRUE(name.ok()) << name.error().message;
  EXPECT_EQ(*name, std::string(kDelta) + ".gz");
  auto read = store.ReadSnapshot(*name);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, delta);
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(store.location() + "/v2")) {
    files.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(files, std::vector<std::string>{*name}) << "no temporary file is left behind";
  ASSERT_FALSE(log.requests().empty());
  EXPECT_EQ(log.requests().back().kind, Request::Kind::kFile);
}

TEST(BackupStore, ADryRunWritesNothing) {
  TempDir dir("store-dry");
  BackupStore store(dir.path() + "/etcd-main");
  RequestLog log(/*dry_run=*/true);
  auto name = store.WriteDelta(Slurp(kGolden + kDelta), 2, 5, 0, std::chrono::system_clock::now(), "", log);
  ASSERT_TRUE(name.ok()) << name.error().message;
  EXPECT_FALSE(log.requests().empty());
  EXPECT_FALSE(fs::exists(store.location() + "/v2/" + *name));
}

TEST(BackupStore, AFullSnapshotWithABadTrailerIsNotStored) {
  TempDir dir("store-full");
  const std::string database = std::string(4096, 'd');
  const std::string good = dir.path() + "/good.snapshot", bad = dir.path() + "/bad.snapshot";
  Put(good, database + Sha256Digest(database));
  Put(bad, database + Sha256Digest(database + "x"));
  BackupStore store(dir.path() + "/etcd-main");
  RequestLog log;
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1714557600));
  auto refused = store.WriteFull(bad, 7, 0, now, "", log);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("checksum"), std::string::npos) << refused.error().message;
  EXPECT_TRUE(store.List()->snapshots.empty());

  auto stored = store.WriteFull(good, 7, 0, now, ".zlib", log);
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(*stored, "Full-00000000-00000007-1714557600.zlib");
  EXPECT_FALSE(fs::exists(good)) << "the store takes the file";
  EXPECT_TRUE(fs::exists(bad)) << "a refused file is left where it was";
  const std::string copy = dir.path() + "/copy.snapshot";
  ASSERT_TRUE(store.ReadSnapshotToFile(*stored, copy).ok());
  EXPECT_EQ(Slurp(copy), database + Sha256Digest(database));
  EXPECT_TRUE(VerifySnapshotTrailer(copy, "the copy").ok());
}

// ?final=true's snapshot: etcd-backup-restore's name (the compression
// suffix, then ".final"), listed as final and read back like any other.
TEST(BackupStore, AFinalFullSnapshotIsNamedWithTheFinalSuffix) {
  TempDir dir("store-final");
  const std::string database = std::string(4096, 'f');
  const std::string source = dir.path() + "/final.snapshot";
  Put(source, database + Sha256Digest(database));
  BackupStore store(dir.path() + "/etcd-main");
  RequestLog log;
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1714557600));
  auto stored = store.WriteFull(source, 9, 0, now, ".gz", log, /*final=*/true);
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(*stored, "Full-00000000-00000009-1714557600.gz.final");
  auto listing = store.List();
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->snapshots.size(), 1u);
  EXPECT_TRUE(listing->snapshots[0].is_final);
  EXPECT_EQ(listing->snapshots[0].compression_suffix, ".gz");
  EXPECT_EQ(listing->snapshots[0].last_revision, 9);
  const std::string copy = dir.path() + "/copy.snapshot";
  ASSERT_TRUE(store.ReadSnapshotToFile(*stored, copy).ok());
  EXPECT_EQ(Slurp(copy), database + Sha256Digest(database));
}

// Each snapshot written with a cluster ID gets its marker
// clusters/<id hex>/snapshot-<name> before it is written; the listing reads the
// markers back, and garbage collection removes both.
TEST(BackupStoreClusters, AMarkerNamesTheClusterASnapshotWasTakenFromAndGoesWithIt) {
  TempDir dir("store-clusters");
  const std::string database = std::string(4096, 'c');
  const std::string source = dir.path() + "/full.snapshot";
  Put(source, database + Sha256Digest(database));
  BackupStore store(dir.path() + "/etcd-main");
  RequestLog log;
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1714557600));
  const uint64_t cluster = 0x8e9e05c52164694dULL;
  auto full = store.WriteFull(source, 1, cluster, now, "", log);
  ASSERT_TRUE(full.ok()) << full.error().message;
  auto delta = store.WriteDelta(Slurp(kGolden + kDelta), 2, 5, cluster, now, ".gz", log);
  ASSERT_TRUE(delta.ok()) << delta.error().message;
  EXPECT_TRUE(fs::exists(dir.path() + "/etcd-main/clusters/8e9e05c52164694d/snapshot-" + *full));
  EXPECT_TRUE(fs::exists(dir.path() + "/etcd-main/clusters/8e9e05c52164694d/snapshot-" + *delta));

  auto listing = store.List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  ASSERT_EQ(listing->snapshots.size(), 2u);
  EXPECT_TRUE(listing->warnings.empty()) << listing->warnings.front();
  for (const StoredSnapshot& snapshot : listing->snapshots) EXPECT_EQ(snapshot.cluster_id, cluster);
  EXPECT_EQ(listing->ToValue().Find("snapshots")->list_value()[0].Find("cluster")->string_value(),
            "8e9e05c52164694d");
  auto one = ChainCluster(listing->snapshots);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(*one, cluster);

  ASSERT_TRUE(store.Delete(listing->snapshots[1], log).ok());
  EXPECT_FALSE(fs::exists(dir.path() + "/etcd-main/v2/" + *delta));
  EXPECT_FALSE(fs::exists(dir.path() + "/etcd-main/clusters/8e9e05c52164694d/snapshot-" + *delta));
  EXPECT_TRUE(fs::exists(dir.path() + "/etcd-main/clusters/8e9e05c52164694d/snapshot-" + *full));
}

// A chain of one replay that names two clusters is refused, naming both; a
// snapshot without a marker (etcd-backup-restore's) agrees with any; a name
// two clusters marked is whose bytes no one can tell, and is skipped.
TEST(BackupStoreClusters, TwoClustersInOneReplayAreRefusedAndANameMarkedTwiceIsSkipped) {
  TempDir dir("store-two-clusters");
  const std::string store_dir = dir.path() + "/etcd-main";
  for (const char* name :
       {"v2/Full-00000000-00000001-1714557600", "v2/Incr-00000002-00000005-1714557601",
        "v2/Incr-00000006-00000009-1714557602", "v2/Incr-00000010-00000011-1714557603",
        "clusters/a1/snapshot-Full-00000000-00000001-1714557600",
        "clusters/b2/snapshot-Incr-00000006-00000009-1714557602",
        "clusters/a1/snapshot-Incr-00000010-00000011-1714557603",
        "clusters/b2/snapshot-Incr-00000010-00000011-1714557603", "clusters/not-hex/snapshot-x",
        "clusters/A1/snapshot-Full-00000000-00000001-1714557600"}) {
    fs::create_directories(fs::path(store_dir + "/" + name).parent_path());
    Put(store_dir + "/" + name, "");
  }
  BackupStore store(store_dir);
  auto listing = store.List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  ASSERT_EQ(listing->snapshots.size(), 3u) << "the name both clusters marked is not used";
  std::string warnings;
  for (const std::string& warning : listing->warnings) warnings += warning + "\n";
  EXPECT_NE(warnings.find("v2/Incr-00000010-00000011-1714557603 is marked as taken from 2 clusters"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("clusters/not-hex/snapshot-x is not a snapshot's marker"), std::string::npos)
      << warnings;
  EXPECT_NE(
      warnings.find("clusters/A1/snapshot-Full-00000000-00000001-1714557600 is not a snapshot's marker"),
      std::string::npos)
      << "only the spelling the store writes: " << warnings;
  EXPECT_EQ(listing->snapshots[1].cluster_id, 0u) << "no marker: etcd-backup-restore's";

  const std::vector<StoredSnapshot> unmarked_between(listing->snapshots.begin(),
                                                     listing->snapshots.begin() + 2);
  auto unmarked_agrees = ChainCluster(unmarked_between);
  ASSERT_TRUE(unmarked_agrees.ok()) << unmarked_agrees.error().message;
  EXPECT_EQ(*unmarked_agrees, 0xa1u);
  auto mixed = ChainCluster(listing->snapshots);
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(mixed.error().message.find("v2/Incr-00000006-00000009-1714557602 was taken from etcd cluster b2, "
                                       "v2/Full-00000000-00000001-1714557600 from cluster a1"),
            std::string::npos)
      << mixed.error().message;

  // One cluster's history: the other cluster's snapshots become warnings, the unmarked stay.
  BackupStoreListing of_a1 = *listing;
  of_a1.KeepCluster(0xa1);
  ASSERT_EQ(of_a1.snapshots.size(), 2u);
  EXPECT_EQ(of_a1.snapshots[0].name, "Full-00000000-00000001-1714557600");
  EXPECT_EQ(of_a1.snapshots[1].name, "Incr-00000002-00000005-1714557601");
  EXPECT_TRUE(ChainCluster(of_a1.snapshots).ok());
  EXPECT_NE(
      of_a1.warnings.back().find("v2/Incr-00000006-00000009-1714557602 was taken from etcd cluster b2, not "
                                 "a1: another cluster's, skipped (left alone)"),
      std::string::npos)
      << of_a1.warnings.back();
}

TEST(SnapshotTrailerCheck, AcceptsTheStreamInPiecesOfAnySize) {
  const std::string database(100000, 'q');
  const std::string stream = database + Sha256Digest(database);
  for (size_t piece :
       {size_t{1}, size_t{7}, size_t{31}, size_t{32}, size_t{33}, size_t{4096}, stream.size()}) {
    SnapshotTrailerCheck check;
    for (size_t at = 0; at < stream.size(); at += piece)
      check.Update(std::string_view(stream).substr(at, piece));
    EXPECT_TRUE(check.Finish("stream").ok()) << "pieces of " << piece;
  }
  SnapshotTrailerCheck corrupt;
  corrupt.Update(database + Sha256Digest(database + "!"));
  EXPECT_FALSE(corrupt.Finish("stream").ok());
  SnapshotTrailerCheck short_stream;
  short_stream.Update("tiny");
  EXPECT_FALSE(short_stream.Finish("stream").ok());
}

TEST(Base64, DecodesWhatItEncodesAndRefusesTheRest) {
  for (const std::string& bytes : {std::string(), std::string("f"), std::string("fo"), std::string("foo"),
                                   std::string("\0\xff\x10\x80", 4)}) {
    EXPECT_EQ(Base64Decode(Base64Encode(bytes)), bytes);
  }
  EXPECT_EQ(Base64Decode("Zm9vYmFy"), "foobar");
  for (const char* bad : {"Zm9", "Zm9v!mFy", "Zg=a", "Z===", "=m9v"}) EXPECT_FALSE(Base64Decode(bad)) << bad;
  std::string out = "kept";
  EXPECT_FALSE(Base64DecodeAppend("????", out));
  EXPECT_EQ(out, "kept");
}

TEST(MoveAside, RenamesAndNeverDeletes) {
  TempDir dir("move-aside");
  const std::string data = dir.path() + "/data";
  Put(data + "/member/snap/db", "precious");
  RequestLog log;
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1714557600));
  auto first = MoveAside(data, now, log);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, data + ".20240501T100000Z");
  EXPECT_EQ(Slurp(*first + "/member/snap/db"), "precious");
  EXPECT_FALSE(fs::exists(data));

  Put(data + "/member/snap/db", "second");
  auto second = MoveAside(data, now, log);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_NE(*second, *first) << "the same second does not overwrite the first";
  EXPECT_EQ(Slurp(*second + "/member/snap/db"), "second");
  EXPECT_EQ(Slurp(*first + "/member/snap/db"), "precious");
}

}  // namespace
}  // namespace ruleplane
