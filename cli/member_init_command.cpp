// ruleplane member-init, observe member and backup: what runs in a member's
// pod. member-init is the init container: observe this member, plan with the
// initialization rules, execute on this member only, journal every step.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "actions/local/etcd_config.h"
#include "adapters/etcd/etcd_client.h"
#include "adapters/kubernetes/kube_client.h"
#include "cli/cluster_input.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output_format.h"
#include "cli/rule_library.h"
#include "cli/store_flags.h"
#include "engine/common/json_value.h"
#include "execution/journal.h"
#include "member/member_init.h"
#include "observers/member_observer.h"
#include "platform/file_input.h"

namespace ruleplane::cli {
namespace {

constexpr std::chrono::seconds kWaitForClusterPeriod{2};
// Set by SIGTERM while member-init waits for the cluster: it stops waiting.
std::atomic<bool> stop_waiting{false};

constexpr const char* kMemberFlagsHelp = R"(
This member:
  --name NAME               the member's name (its pod name)
  --peer-url URL            its advertised peer URL
  --client-url URL          its advertised client URL
  --data-dir DIR            its etcd data directory
  --config-template FILE    the etcd configuration (YAML) etcd-druid mounts
  --config-out FILE         where the generated configuration goes (default DIR/../etcd.conf.yaml)
  --namespace NS            the namespace the safe_guard file must name
The cluster and the store:
  --endpoints URL[,URL]     etcd client URLs of the cluster (tried in order); default: the
                            members the configuration's initial-cluster lists, and every
                            ordinal up to the Etcd's spec.replicas and status.clusterSize
                            named as this Pod is, on the port of its listen-client-urls
  --cacert FILE --cert FILE --key FILE   TLS to etcd
  --backup-store DIR        a Local backup store in etcd-backup-restore's layout (DIR is
                            <container>/<prefix>); or --storage-provider S3 and the store
                            flags below
  --max-delta-bytes N       the largest delta snapshot read, decompressed (default 134217728,
                            128 MiB: etcd-backup-restore's default --delta-snapshot-memory-limit
                            of 100 MiB and a last watch response); raise it with that limit
  --etcd FILE|-             the Etcd object (JSON, as kubectl get etcd -o json prints it)
  --member-lease FILE       this member's Lease (JSON), read by the 2.x rules
  --etcd-name NAME          instead of --etcd and --member-lease, in a Pod: read the Etcd
                            NAME and the Lease named --name from the API server (namespace
                            --namespace; --kubeconfig FILE, else $KUBECONFIG, else in-cluster)
)";

constexpr const char* kMemberInitUsage =
    R"(usage: ruleplane member-init [member flags] [--rules NAME@VERSION|PATH]... [--journal FILE]
                             [--dry-run] [--retry-deadline SECONDS] [--wait-for-cluster SECONDS]
                             [-o table|json]

What an init container runs before etcd starts: observes this member (its data
directory, the backup store, the cluster's member list, the Etcd object's
status), plans with the initialization rules (etcd-backup-restore@1 by
default; --rules etcd-backup-restore@2 for today's behaviour), executes the
plan on this member only, and writes the etcd configuration.

The disruptive steps the rules decide for this member (remove and add itself,
move its data directory aside, restore) run without a flag; a step that
targets another member is refused. Every step is journaled before it acts and
after (--journal, default DIR/../ruleplane-journal.db); a run that was killed
resumes without repeating a step that took effect.

--dry-run prints the plan and every request and command it would send, and
changes nothing: it does not write (or create) the journal either.

--wait-for-cluster SECONDS: when the rules abort the initialization to wait
for the cluster (AbortInitialization: the first member is still restoring, no
member answers), observe and plan again every 2 s for up to SECONDS before
giving up (default 0: give up at once), or until SIGTERM. Each round reads the
Etcd and the Lease again (from the API server, or the files; not standard
input), so the re-bootstrap marker or a status that comes meanwhile counts. In
a Pod this replaces the kubelet's restarts, whose back-off grows to 5 minutes.

Exit codes: 0 the member may start, 1 the plan failed, was refused or aborted
(the error is in the journal), or this member could not be observed (its
database could not be checked, say: not the same as corrupt), and nothing was
changed, 2 bad usage or unreadable input.
)";

constexpr const char* kObserveUsage = R"(usage: ruleplane observe member [member flags]
       ruleplane observe cluster [--kubeconfig FILE] [-n NAMESPACE] NAME   (observe cluster --help)

Prints this member's EtcdMemberInitSnapshot: everything the initialization
rules read, observed. Reads only.
)";

const std::vector<FlagSpec> kMemberFlags = {{"--name"},
                                            {"--peer-url"},
                                            {"--client-url"},
                                            {"--data-dir"},
                                            {"--config-template"},
                                            {"--config-out"},
                                            {"--namespace"},
                                            {"--endpoints"},
                                            {"--cacert"},
                                            {"--cert"},
                                            {"--key"},
                                            {"--etcd"},
                                            {"--member-lease"},
                                            {"--etcd-name"},
                                            {"--kubeconfig"},
                                            {"--max-delta-bytes"}};

std::vector<FlagSpec> WithMemberFlags(std::vector<FlagSpec> more) {
  more.insert(more.end(), kMemberFlags.begin(), kMemberFlags.end());
  return WithStoreFlags(std::move(more));
}

Result<Value> ReadJsonInput(const std::string& path, std::istream& in) {
  // The Etcd or a Lease: bounded, and a regular file (a FIFO or /dev/zero is refused).
  auto text = path == "-" ? ReadBoundedStream(in, kMaxConfigFileBytes, "standard input")
                          : ReadRegularFile(path, kMaxConfigFileBytes);
  if (!text.ok()) return text.error();
  auto value = ParseJson(*text);
  if (!value.ok()) return Error{value.error().code, path + ": " + value.error().message, {}};
  return value;
}

// Everything a member command works with, built from its flags.
struct MemberContext {
  LocalMember member;
  std::unique_ptr<EtcdClient> cluster;
  std::unique_ptr<BackupStore> store;
  Value etcd;
  Value lease;

  MemberObservationSources Sources() const { return {member, cluster.get(), store.get(), etcd, lease}; }
};

// The Etcd and this member's Lease (when it exists) as the API server has them.
Status ReadFromApiServer(const Flags& flags, MemberContext& context) {
  auto config = ResolveKubeConfig(flags.Get("--kubeconfig"), "");
  if (!config.ok()) return config.error();
  const std::string namespace_name = flags.Get("--namespace", config->namespace_name);
  KubeClient client(*config);
  RequestLog reads;
  auto etcd = client.Get(
      {"druid.gardener.cloud/v1alpha1", "etcds", namespace_name, flags.Get("--etcd-name"), ""}, reads);
  if (!etcd.ok()) return etcd.error();
  context.etcd = *etcd;
  auto lease =
      client.Get({"coordination.k8s.io/v1", "leases", namespace_name, context.member.name, ""}, reads);
  if (lease.ok()) {
    context.lease = *lease;
  } else if (lease.error().code != ErrorCode::kNotFound) {
    return lease.error();
  }
  return {};
}

// The Etcd and this member's Lease, from the API server (--etcd-name) or from
// --etcd and --member-lease; the error names the flag.
Status ReadEtcdAndLease(const Flags& flags, std::istream& in, MemberContext& context) {
  auto named = [](const char* flag, const Error& error) {
    return Error{error.code, std::string(flag) + ": " + error.message, error.position};
  };
  if (flags.Has("--etcd-name")) {
    if (Status read = ReadFromApiServer(flags, context); !read.ok())
      return named("--etcd-name", read.error());
    return {};
  }
  auto etcd = ReadJsonInput(flags.Get("--etcd"), in);
  if (!etcd.ok()) return named("--etcd", etcd.error());
  context.etcd = *etcd;
  if (flags.Has("--member-lease")) {
    auto lease = ReadJsonInput(flags.Get("--member-lease"), in);
    if (!lease.ok()) return named("--member-lease", lease.error());
    context.lease = *lease;
  }
  return {};
}

std::optional<MemberContext> BuildMemberContext(const Flags& flags, std::istream& in, std::ostream& err,
                                                const char* usage) {
  if (!flags.Require({"--name", "--peer-url", "--data-dir", "--config-template"}, err, usage)) {
    return std::nullopt;
  }
  if (flags.Has("--etcd") == flags.Has("--etcd-name")) {
    err << "ruleplane: give --etcd FILE or --etcd-name NAME (one of them)\n" << usage;
    return std::nullopt;
  }
  MemberContext context;
  LocalMember& member = context.member;
  member.name = flags.Get("--name");
  member.peer_url = flags.Get("--peer-url");
  member.client_url = flags.Get("--client-url");
  member.data_dir = std::filesystem::absolute(flags.Get("--data-dir")).lexically_normal().string();
  while (member.data_dir.size() > 1 && member.data_dir.back() == '/') member.data_dir.pop_back();
  member.config_template = flags.Get("--config-template");
  member.config_out = flags.Get(
      "--config-out", (std::filesystem::path(member.data_dir).parent_path() / "etcd.conf.yaml").string());
  member.namespace_name = flags.Get("--namespace");
  EtcdClientConfig cluster;
  cluster.tls = TlsFromFlags(flags);
  if (flags.Has("--endpoints") && !flags.GetUrls("--endpoints", cluster.endpoints, err)) return std::nullopt;
  if (StoreGiven(flags)) {
    StoreConfig store_config;
    if (!StoreConfigFromFlags(flags, store_config, err)) return std::nullopt;
    auto opened = OpenBackupStore(store_config);
    if (!opened.ok()) {
      err << "ruleplane: " << opened.error().message << "\n";
      return std::nullopt;
    }
    context.store = std::move(*opened);
    int64_t max_delta_bytes = kMaxDeltaFileBytes;
    if (!flags.GetCount("--max-delta-bytes", max_delta_bytes, err)) return std::nullopt;
    context.store->set_max_delta_bytes(max_delta_bytes);
  }
  if (Status read = ReadEtcdAndLease(flags, in, context); !read.ok()) {
    err << "ruleplane: " << read.error().message << "\n";
    return std::nullopt;
  }
  member.cluster_token = EtcdClusterToken(context.etcd);
  // Without --endpoints: every member the cluster could have, as the template and the Etcd name them.
  if (!flags.Has("--endpoints")) {
    auto derived = ClientEndpointsOfConfig(member.config_template, member.name, context.etcd);
    if (!derived.ok()) {
      err << "ruleplane: --config-template: " << derived.error().message << "\n";
      return std::nullopt;
    }
    cluster.endpoints = *derived;
    for (const std::string& url : cluster.endpoints) {
      if (Status usable = CheckHttpUrl(url); !usable.ok()) {
        err << "ruleplane: --config-template: listen-client-urls: " << usable.error().message << "\n";
        return std::nullopt;
      }
    }
  }
  if (!cluster.endpoints.empty()) context.cluster = std::make_unique<EtcdClient>(cluster);
  return context;
}

}  // namespace

int RunObserve(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  const std::string usage = std::string(kObserveUsage) + kMemberFlagsHelp + kStoreFlagsUsage;
  if (!args.empty() && args[0] == "cluster")
    return RunObserveCluster(Args(args.begin() + 1, args.end()), out, err);
  if (HelpRequested(args)) return PrintUsage(usage, out);
  if (args.empty() || args[0] != "member") {
    err << usage;
    return kExitUsage;
  }
  Flags flags(WithMemberFlags({}));
  if (!flags.Parse(Args(args.begin() + 1, args.end()), err, usage.c_str())) return kExitUsage;
  auto context = BuildMemberContext(flags, in, err, usage.c_str());
  if (!context) return kExitUsage;
  auto snapshot = ObserveMemberNow(context->Sources());
  if (!snapshot.ok()) {
    err << "ruleplane: observe member: " << snapshot.error().message << "\n";
    return kExitUsage;
  }
  out << FormatJson(snapshot->document, 2) << "\n";
  return out ? kExitOk : kExitUsage;
}

int RunMemberInit(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  const std::string usage = std::string(kMemberInitUsage) + kMemberFlagsHelp + kStoreFlagsUsage;
  if (HelpRequested(args)) return PrintUsage(usage, out);
  Flags flags(WithMemberFlags({{"--rules"},
                               {"--journal"},
                               {"--dry-run", false},
                               {"--retry-deadline"},
                               {"--wait-for-cluster"},
                               {"-o"}}));
  if (!flags.Parse(args, err, usage.c_str())) return kExitUsage;
  auto context = BuildMemberContext(flags, in, err, usage.c_str());
  if (!context) return kExitUsage;
  const std::string format = flags.Get("-o", "table");
  if (format != "table" && format != "json") {
    err << "ruleplane: -o must be table or json\n";
    return kExitUsage;
  }

  std::vector<std::string> references = flags.GetList("--rules");
  if (references.empty()) references = {"etcd-backup-restore@1"};
  auto library = LoadRuleLibrary(references, err);
  if (!library) return kExitUsage;
  if (PrintDiagnostics(*library, err) > 0) return kExitUsage;
  auto rule_sets = SelectForSubject(*library, "EtcdMemberInit", err);
  if (rule_sets.empty()) {
    err << "ruleplane: no initialization rules (subject EtcdMemberInit) among --rules\n";
    return kExitUsage;
  }

  int64_t deadline_seconds = 0, wait_seconds = 0;
  if (!flags.GetCount("--retry-deadline", deadline_seconds, err)) return kExitUsage;
  if (!flags.GetCount("--wait-for-cluster", wait_seconds, err)) return kExitUsage;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(wait_seconds);

  // Decided before the journal is opened: a member that cannot be observed changes nothing, not even the
  // journal.
  MemberObservationSources sources = context->Sources();
  auto decision = DecideMemberInit(sources, rule_sets, library->catalogue.get());
  if (!decision.ok()) {
    err << "ruleplane: member-init: " << decision.error().message << "\n";
    return kExitFinding;
  }
  MemberInitExecution execution;
  execution.dry_run = flags.Has("--dry-run");
  // A dry run changes nothing, the journal included: it is not even opened
  // (SQLite would create the file, and the executor records every run).
  std::unique_ptr<Journal> journal;
  if (!execution.dry_run) {
    const std::string journal_path = flags.Get(
        "--journal",
        (std::filesystem::path(context->member.data_dir).parent_path() / "ruleplane-journal.db").string());
    auto opened = Journal::Open(journal_path);
    if (!opened.ok()) {
      err << "ruleplane: member-init: " << opened.error().message << "\n";
      return kExitUsage;
    }
    journal = std::move(*opened);
    execution.journal = journal.get();
  }
  execution.step_deadline = std::chrono::seconds(deadline_seconds);
  ExecutionReport report = ExecuteMemberInit(*decision, sources, rule_sets, execution);

  // As PID 1 of its container, member-init would ignore SIGTERM without a handler.
  if (wait_seconds > 0) std::signal(SIGTERM, [](int) { stop_waiting = true; });
  auto aborted = [](const ExecutionReport& run) {
    return !run.ok() && std::any_of(run.steps.begin(), run.steps.end(), [](const StepReport& step) {
      return step.action == "AbortInitialization" && step.state == StepState::kFailed;
    });
  };
  while (aborted(report) && !execution.dry_run &&
         std::chrono::steady_clock::now() + kWaitForClusterPeriod <= give_up) {
    err << "ruleplane: member-init: " << report.error->message << "; observing again in 2 s\n";
    const auto next = std::chrono::steady_clock::now() + kWaitForClusterPeriod;
    while (!stop_waiting && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (stop_waiting) break;
    // The Etcd and the Lease as they are now (the re-bootstrap marker, the
    // status may have come meanwhile); standard input cannot be read again.
    if (flags.Get("--etcd") != "-" && flags.Get("--member-lease") != "-") {
      if (Status read = ReadEtcdAndLease(flags, in, *context); !read.ok()) {
        err << "ruleplane: member-init: " << read.error().message << "; observing again in 2 s\n";
        continue;
      }
      sources = context->Sources();
    }
    decision = DecideMemberInit(sources, rule_sets, library->catalogue.get());
    if (!decision.ok()) {
      err << "ruleplane: member-init: " << decision.error().message << "\n";
      return kExitFinding;
    }
    report = ExecuteMemberInit(*decision, sources, rule_sets, execution);
  }
  const Plan* plan = &decision->plan;
  const std::string& self = context->member.name;

  if (format == "json") {
    out << FormatJson(Value::MakeMap({{Value::String("plan"), PlanToValue(*plan)},
                                      {Value::String("execution"), ExecutionReportToValue(report)}}),
                      2)
        << "\n";
  } else {
    out << "member " << self << ": "
        << (plan->rule_sets.empty() ? "" : plan->rule_sets[0].name + "@" + plan->rule_sets[0].version);
    for (const PlannedRuleSet& planned : plan->rule_sets) {
      for (const std::string& rule : planned.matched_rules) out << " " << rule;
    }
    out << (execution.dry_run ? " (dry run: nothing is changed)\n" : "\n");
    out << FormatExecutionReport(report, execution.dry_run);
  }
  if (!report.ok()) {
    err << "ruleplane: member-init: " << report.error->message << "\n";
    return kExitFinding;
  }
  return out ? kExitOk : kExitUsage;
}

}  // namespace ruleplane::cli
