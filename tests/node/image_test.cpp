// The images scripts/build-images.sh writes (label `node`): OCI archives as
// containerd imports them, every blob the digest that names it, and the
// ruleplane image's root holding what its Pods run: the ruleplane binary with
// its bundled rules, etcd and etcdctl, each started in the image's root alone.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "engine/common/json_value.h"
#include "engine/common/sha256.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

std::string ImagesDir() {
  const char* dir = std::getenv("RULEPLANE_IMAGES");
  return dir != nullptr ? dir : "/var/cache/ruleplane/images";
}

struct Image {
  std::string name;
  Value config;
  std::string layer_path;  // the layer's tar, extracted from the archive
};

// Reads the archive as an importer does: index.json -> manifest -> config
// and layer, each blob checked against its digest.
void ReadArchive(const std::string& archive, const TempDir& dir, Image& image) {
  ASSERT_TRUE(fs::exists(archive)) << archive << ": run scripts/build-images.sh (or set RULEPLANE_IMAGES)";
  const std::string root = dir.path() + "/archive";
  fs::create_directories(root);
  ASSERT_EQ(RunShell("tar -xf " + archive + " -C " + root).exit_code, 0);
  EXPECT_EQ(Slurp(root + "/oci-layout"), R"({"imageLayoutVersion": "1.0.0"})");
  auto blob = [&](const Value& descriptor) {
    const std::string digest = ValueAt(descriptor, {"digest"})->string_value();
    const std::string text = Slurp(root + "/blobs/sha256/" + digest.substr(7));
    EXPECT_EQ("sha256:" + Sha256Hex(text), digest);
    EXPECT_EQ(static_cast<int64_t>(text.size()), ValueAt(descriptor, {"size"})->int_value()) << digest;
    return text;
  };
  auto index = ParseJson(Slurp(root + "/index.json"));
  ASSERT_TRUE(index.ok()) << index.error().message;
  const Value* manifests = ValueAt(*index, {"manifests"});
  ASSERT_TRUE(manifests != nullptr && manifests->list_value().size() == 1u);
  const Value& descriptor = manifests->list_value()[0];
  image.name = ValueAt(descriptor, {"annotations", "io.containerd.image.name"})->string_value();
  auto manifest = ParseJson(blob(descriptor));
  ASSERT_TRUE(manifest.ok()) << manifest.error().message;
  auto config = ParseJson(blob(*ValueAt(*manifest, {"config"})));
  ASSERT_TRUE(config.ok()) << config.error().message;
  image.config = *config;
  const Value& layer = ValueAt(*manifest, {"layers"})->list_value().at(0);
  EXPECT_EQ(ValueAt(layer, {"mediaType"})->string_value(), "application/vnd.oci.image.layer.v1.tar");
  const std::string layer_text = blob(layer);
  // Uncompressed: the layer's diff_id is its digest.
  EXPECT_EQ(ValueAt(*config, {"rootfs", "diff_ids"})->list_value().at(0).string_value(),
            ValueAt(layer, {"digest"})->string_value());
  image.layer_path = root + "/blobs/sha256/" + ValueAt(layer, {"digest"})->string_value().substr(7);
}

TEST(Image, PauseIsOneStaticBinaryThatExitsOnSigterm) {
  TempDir dir("image-pause");
  Image image;
  ASSERT_NO_FATAL_FAILURE(ReadArchive(ImagesDir() + "/pause.tar", dir, image));
  EXPECT_EQ(image.name, "localhost/pause:ruleplane");
  const std::string root = dir.path() + "/root";
  fs::create_directories(root);
  ASSERT_EQ(RunShell("tar -xf " + image.layer_path + " -C " + root).exit_code, 0);
  EXPECT_EQ(RunShell("tar -tf " + image.layer_path).output, "pause\n") << "nothing but the binary";
  // Started alone in its root (no library to load), it waits until SIGTERM, then exits 0.
  const ShellRun run = RunShell(
      "chroot " + root + " /pause & pid=$!; sleep 0.2; kill -0 $pid || exit 3; kill -TERM $pid; wait $pid");
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

TEST(Image, RuleplaneHoldsTheBinaryItsRulesAndEtcd) {
  TempDir dir("image-ruleplane");
  Image image;
  ASSERT_NO_FATAL_FAILURE(ReadArchive(ImagesDir() + "/ruleplane.tar", dir, image));
  EXPECT_EQ(image.name, "localhost/ruleplane:latest");
  EXPECT_EQ(FormatJson(*ValueAt(image.config, {"config", "Entrypoint"})), R"(["/usr/local/bin/ruleplane"])");
  const std::string root = dir.path() + "/root";
  fs::create_directories(root);
  ASSERT_EQ(RunShell("tar -xf " + image.layer_path + " -C " + root).exit_code, 0);
  // Each runs in the image's root with only what the image holds: a missing
  // shared library or a lost rule bundle fails here.
  const std::pair<std::string, std::string> commands_and_output[] = {
      {"/usr/local/bin/ruleplane version", "ruleplane "},
      {"/usr/local/bin/ruleplane lint", " 0 errors"},
      {"etcd --version", "etcd Version: 3.4.23"},
      {"etcdctl version", "etcdctl version: 3.4.23"},
  };
  for (const auto& [command, expected] : commands_and_output) {
    const ShellRun run = RunShell("chroot " + root + " " + command);
    EXPECT_EQ(run.exit_code, 0) << command << "\n" << run.output;
    EXPECT_TRUE(Contains(run.output, expected)) << command << "\n" << run.output;
  }
  EXPECT_FALSE(fs::exists(root + "/var/cache/apt/archives/etcd-server_3.4.23-1_amd64.deb"))
      << "no package left in the image";
}

}  // namespace
}  // namespace ruleplane::testing
