// member-agent's HTTP API, as etcd-backup-restore's sidecar serves it on
// --server-port (pkg/server/httpAPI.go), which etcd-druid calls:
//
//   /healthz                 200 {"health":true} while the member is healthy, else 503 {"health":false}
//   /snapshot/full[?final=true]  an out-of-schedule full snapshot (a ".final" one), taken by the
//                            leader: 200 with the snapshot as JSON, 500 when it failed, 400 for a
//                            `final` that is not a boolean
//   /snapshot/delta          the same for a delta (200 `null` when the cluster has not moved)
//   /snapshot/latest         {"fullSnapshot": {...}, "deltaSnapshots": [...]}: the newest full
//                            snapshot and the deltas after it, of this member's etcd cluster
//                            (and unmarked ones) once a heartbeat has named it
//   /metrics                 BackupMetrics' Prometheus text
//
// With TLS and a client CA (member-agent --server-client-ca), a snapshot
// route asks for a client certificate of that CA (403 without one).
//
// Any method, as Go's ServeMux (etcd-druid's compaction asks GET, its
// EtcdOpsTask POST). A member that does not lead forwards a snapshot request
// to the leader's agent (etcd-backup-restore's delegateReqToLeader): the
// leading member's client URL's host with this agent's port and scheme,
// once that agent's /healthz says healthy; 405 when it cannot. Without a
// backup store the snapshot routes answer 405, as etcd-backup-restore does
// without a snapshotter.
//
// The routes do no I/O of their own: MemberApiBackend does it (the loop's
// serves snapshots through MemberBackups' backup thread), so that they are
// tested with a fake.
#pragma once

#include <string>

#include "adapters/local/backup_store.h"
#include "member/member_backups.h"
#include "platform/http_server.h"

namespace ruleplane {

class MemberApiBackend {
 public:
  virtual ~MemberApiBackend() = default;
  // The member's last heartbeat found it healthy.
  virtual bool Healthy() = 0;
  // A backup store is configured.
  virtual bool BacksUp() = 0;
  virtual RequestedSnapshot TakeSnapshot(const SnapshotRequest& request) = 0;
  virtual Result<BackupStoreListing> ListStore() = 0;
  // The etcd cluster the member's last heartbeat answered for; 0 until one did.
  virtual uint64_t ClusterId() = 0;
  // The store's prefix (its directory's name), for the snapshots' JSON.
  virtual std::string StorePrefix() = 0;
  virtual std::string MetricsText() = 0;
  // `method` `url` ("http://10.0.0.1:8080/snapshot/full?final=true"), its
  // answer as it came; an error when there was none.
  virtual Result<HttpAnswer> Send(const std::string& method, const std::string& url) = 0;
};

// Answers one request; snapshot routes are slow replies (HttpReply::Slow)
// that call `backend` on the server's worker thread. `server_port` is this
// agent's, the leader's too, and so is `server_tls` (HTTPS). With
// `client_certificates`, the snapshot routes answer only a request that came
// with a verified client certificate (HttpRequest::client_verified), and 403
// any other: a snapshot on demand counts toward the garbage collector's
// limit, so a stranger's requests could push the older backups out.
// /healthz and /metrics stay open to probes and scrapers.
HttpReply ServeMemberApi(const HttpRequest& request, MemberApiBackend& backend, int server_port,
                         bool server_tls = false, bool client_certificates = false);

// etcd-backup-restore's Snapshot as JSON (pkg/types/snapstore.go), in Go's
// field order with its zero values: createdOn (RFC 3339),
// immutabilityExpriyTime (sic; zero time), versionID (null), kind, snapDir
// ("Backup-<unix>" in the v1 layout, else ""), snapName, prefix ("<store
// prefix>/v2/"), compressionSuffix, startRevision, lastRevision, isChunk, isFinal.
Value SnapshotValue(const StoredSnapshot& snapshot, const std::string& store_prefix);

// /snapshot/latest's body: the newest full snapshot (null when none) and
// the deltas after it, oldest first (null when none, as Go marshals an empty slice).
std::string LatestSnapshotsJson(const BackupStoreListing& listing);

// "https://10.0.0.1:2379" and 8080 -> "http://10.0.0.1:8080" (etcd-backup-restore's
// GetBackupLeaderEndPoint, which keeps etcd's scheme; here the agents'
// own: https when they serve TLS); "" when the URL has no host.
std::string LeaderAgentUrl(const std::string& leader_client_url, int server_port, bool server_tls = false);

}  // namespace ruleplane
