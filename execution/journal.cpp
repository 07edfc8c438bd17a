#include "execution/journal.h"

#include <sqlite3.h>
#include <zlib.h>

#include <chrono>
#include <ctime>

#include "engine/common/json_value.h"

namespace ruleplane {
namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS evaluations (
  id INTEGER PRIMARY KEY,
  recorded_at TEXT NOT NULL,
  snapshot_kind TEXT NOT NULL,
  snapshot_digest TEXT NOT NULL,
  snapshot_zlib BLOB NOT NULL,
  snapshot_bytes INTEGER NOT NULL,
  rule_sets TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS plans (
  id INTEGER PRIMARY KEY,
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),
  command TEXT NOT NULL,
  subject TEXT NOT NULL,
  dry_run INTEGER NOT NULL,
  state TEXT NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL DEFAULT '',
  matched_rules TEXT NOT NULL,
  plan_digest TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS plans_by_subject ON plans(subject, id);
CREATE TABLE IF NOT EXISTS steps (
  plan_id INTEGER NOT NULL REFERENCES plans(id),
  position INTEGER NOT NULL,
  step_id TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  params TEXT NOT NULL,
  adapter TEXT NOT NULL,
  disruptive INTEGER NOT NULL,
  depends_on TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  started_at TEXT NOT NULL DEFAULT '',
  finished_at TEXT NOT NULL DEFAULT '',
  requests TEXT NOT NULL DEFAULT '[]',
  message TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (plan_id, step_id)
);
)";

// The largest snapshot a journal records or reads back (canonical JSON).
constexpr int64_t kMaxSnapshotBytes = 64 << 20;

// Schema versions (PRAGMA user_version): 1 had no plans.plan_digest.
constexpr int kSchemaVersion = 2;

// What ReadPlan reads, with the plan digest as `digest` (a column, or '').
std::string PlanColumns(const std::string& digest) {
  return "id, evaluation_id, command, subject, dry_run, state, error, started_at, finished_at, "
         "matched_rules, " +
         digest;
}

// UTC, RFC 3339 with milliseconds, of `time`.
std::string Rfc3339Millis(std::chrono::system_clock::time_point time) {
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof text - length, ".%03dZ", static_cast<int>(millis % 1000));
  return text;
}

std::string Now() { return Rfc3339Millis(std::chrono::system_clock::now()); }

Value StringList(const std::vector<std::string>& items) {
  Value::List list;
  for (const std::string& item : items) list.push_back(Value::String(item));
  return Value::MakeList(std::move(list));
}

std::vector<std::string> ParseStringList(const std::string& json) {
  std::vector<std::string> items;
  auto value = ParseJson(json);
  if (!value.ok() || !value->is_list()) return items;
  for (const Value& item : value->list_value()) {
    if (item.is_string()) items.push_back(item.string_value());
  }
  return items;
}

std::string RequestsJson(const std::vector<Request>& requests) {
  Value::List list;
  for (const Request& request : requests) list.push_back(RequestToValue(request));
  return FormatJson(Value::MakeList(std::move(list)));
}

std::string TextOf(const Value& map, const char* key) {
  const Value* value = map.Find(key);
  return value != nullptr && value->is_string() ? value->string_value() : std::string();
}

std::vector<Request> ParseRequests(const std::string& json) {
  std::vector<Request> requests;
  auto value = ParseJson(json);
  if (!value.ok() || !value->is_list()) return requests;
  for (const Value& item : value->list_value()) {
    Request request;
    const std::string kind = TextOf(item, "kind");
    request.kind = kind == "command" ? Request::Kind::kCommand
                   : kind == "file"  ? Request::Kind::kFile
                                     : Request::Kind::kHttp;
    request.verb = TextOf(item, "verb");
    request.target = TextOf(item, "target");
    request.body = TextOf(item, "body");
    if (const Value* args = item.Find("args"); args != nullptr && args->is_list()) {
      for (const Value& arg : args->list_value())
        request.args.push_back(arg.is_string() ? arg.string_value() : "");
    }
    const Value* mutates = item.Find("mutates");
    request.mutates = mutates == nullptr || !mutates->is_bool() || mutates->bool_value();
    requests.push_back(std::move(request));
  }
  return requests;
}

StepState StepStateFromName(std::string_view name) {
  for (StepState state : {StepState::kPending, StepState::kRunning, StepState::kSucceeded, StepState::kFailed,
                          StepState::kSkipped, StepState::kRefused}) {
    if (StepStateName(state) == name) return state;
  }
  return StepState::kPending;
}

Result<std::string> Compress(const std::string& data) {
  uLongf size = compressBound(static_cast<uLong>(data.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(data.data()),
                static_cast<uLong>(data.size()), Z_BEST_COMPRESSION) != Z_OK) {
    return Error{ErrorCode::kInternal, "zlib could not compress a snapshot", {}};
  }
  out.resize(size);
  return out;
}

Result<std::string> Decompress(const std::string& data, size_t original_size) {
  std::string out(original_size, '\0');
  uLongf size = static_cast<uLongf>(original_size);
  if (uncompress(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(data.data()),
                 static_cast<uLong>(data.size())) != Z_OK ||
      size != original_size) {
    return Error{ErrorCode::kIo, "a recorded snapshot does not decompress", {}};
  }
  return out;
}

sqlite3* Db(void* handle) { return static_cast<sqlite3*>(handle); }

// One prepared statement, finalized when it goes out of scope.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    prepared_ = sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr);
  }
  ~Statement() { sqlite3_finalize(statement_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int index, const std::string& text) {
    sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int index, int64_t number) {
    sqlite3_bind_int64(statement_, index, number);
    return *this;
  }
  Statement& BindBlob(int index, const std::string& bytes) {
    sqlite3_bind_blob(statement_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return prepared_ == SQLITE_OK ? sqlite3_step(statement_) : prepared_; }
  std::string Text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
    return text == nullptr ? std::string()
                           : std::string(text, static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
  }
  std::string Blob(int column) const {
    const auto* bytes = static_cast<const char*>(sqlite3_column_blob(statement_, column));
    return bytes == nullptr
               ? std::string()
               : std::string(bytes, static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
  }
  int64_t Int(int column) const { return sqlite3_column_int64(statement_, column); }

 private:
  sqlite3_stmt* statement_ = nullptr;
  int prepared_;
};

}  // namespace

std::string_view StepStateName(StepState state) {
  switch (state) {
    case StepState::kPending:
      return "pending";
    case StepState::kRunning:
      return "running";
    case StepState::kSucceeded:
      return "succeeded";
    case StepState::kFailed:
      return "failed";
    case StepState::kSkipped:
      return "skipped";
    case StepState::kRefused:
      return "refused";
  }
  return "pending";
}

Journal::Journal(std::string path, JournalLimits limits)
    : path_(std::move(path)), limits_(limits), plan_columns_(PlanColumns("plan_digest")) {}

Journal::~Journal() { sqlite3_close(static_cast<sqlite3*>(db_)); }

Result<std::unique_ptr<Journal>> Journal::Open(const std::string& path, JournalLimits limits) {
  std::unique_ptr<Journal> journal(new Journal(path, limits));
  sqlite3* db = nullptr;
  const int opened = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  journal->db_ = db;
  auto run = [&](const std::string& sql, const char* what) -> Status {
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return {};
    std::string text = message != nullptr ? message : sqlite3_errmsg(db);
    sqlite3_free(message);
    return Error{ErrorCode::kIo, "the journal " + path + ": " + what + ": " + text, {}};
  };
  if (opened != SQLITE_OK) {
    return Error{ErrorCode::kIo, "the journal " + path + ": cannot open: " + sqlite3_errmsg(db), {}};
  }
  sqlite3_busy_timeout(db, static_cast<int>(limits.busy_timeout.count()));
  if (Status set =
          run("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;", "cannot set up");
      !set.ok())
    return set.error();
  // Created or upgraded under the write lock, so that two processes opening one journal agree.
  if (Status begun = run("BEGIN IMMEDIATE", "cannot lock it to set up its schema"); !begun.ok())
    return begun.error();
  int64_t found = 0;
  {
    Statement version(db, "PRAGMA user_version");
    if (version.Step() == SQLITE_ROW) found = version.Int(0);
  }
  std::string setup = kSchema;
  if (found == 1) setup += "ALTER TABLE plans ADD COLUMN plan_digest TEXT NOT NULL DEFAULT '';";
  if (found > kSchemaVersion) {
    (void)run("ROLLBACK", "rolling back");
    return Error{ErrorCode::kIo,
                 "the journal " + path + " has schema version " + std::to_string(found) +
                     ", newer than this ruleplane's " + std::to_string(kSchemaVersion),
                 {}};
  }
  setup += "PRAGMA user_version = " + std::to_string(kSchemaVersion) + ";";
  if (Status created = run(setup, "cannot set up its schema"); !created.ok()) {
    (void)run("ROLLBACK", "rolling back");
    return created.error();
  }
  if (Status committed = run("COMMIT", "committing its schema"); !committed.ok()) return committed.error();
  return journal;
}

Result<std::unique_ptr<Journal>> Journal::OpenForReading(const std::string& path) {
  std::unique_ptr<Journal> journal(new Journal(path, {}));
  sqlite3* db = nullptr;
  const int opened = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  journal->db_ = db;
  if (opened != SQLITE_OK) {
    return Error{ErrorCode::kIo, "the journal " + path + ": cannot open: " + sqlite3_errmsg(db), {}};
  }
  sqlite3_busy_timeout(db, static_cast<int>(journal->limits_.busy_timeout.count()));
  int64_t version = -1, tables = 0;
  {
    Statement read(db, "PRAGMA user_version");
    if (read.Step() == SQLITE_ROW) version = read.Int(0);
    Statement count(db,
                    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                    "('evaluations', 'plans', 'steps')");
    if (count.Step() == SQLITE_ROW) tables = count.Int(0);
  }
  if (version < 1 || version > kSchemaVersion || tables != 3) {
    return Error{
        ErrorCode::kInvalidArgument,
        path + " is not a ruleplane journal" +
            (version > kSchemaVersion ? " this ruleplane reads (schema " + std::to_string(version) + ")"
                                      : std::string()),
        {}};
  }
  if (version == 1) journal->plan_columns_ = PlanColumns("''");
  return journal;
}

namespace {

Status Execute(sqlite3* db, const std::string& path, Statement& statement, const char* what) {
  if (statement.Step() != SQLITE_DONE) {
    return Error{ErrorCode::kIo, "the journal " + path + ": " + what + ": " + sqlite3_errmsg(db), {}};
  }
  return {};
}

}  // namespace

Result<int64_t> Journal::BeginPlan(const Snapshot& snapshot,
                                   const std::vector<std::pair<std::string, std::string>>& rule_set_digests,
                                   const Plan& plan, const std::string& command, const std::string& subject,
                                   bool dry_run) {
  const std::string canonical = FormatJson(snapshot.document);
  if (static_cast<int64_t>(canonical.size()) > kMaxSnapshotBytes) {
    return Error{ErrorCode::kInvalidArgument,
                 "the journal " + path_ + ": a snapshot of " + std::to_string(canonical.size()) +
                     " bytes is more than it records (" + std::to_string(kMaxSnapshotBytes) + ")",
                 {}};
  }
  auto compressed = Compress(canonical);
  if (!compressed.ok()) return compressed.error();
  Value::List rule_sets;
  for (const auto& [id, digest] : rule_set_digests) {
    rule_sets.push_back(Value::MakeMap(
        {{Value::String("id"), Value::String(id)}, {Value::String("digest"), Value::String(digest)}}));
  }
  std::vector<std::string> matched;
  for (const PlannedRuleSet& rule_set : plan.rule_sets) {
    for (const std::string& rule : rule_set.matched_rules)
      matched.push_back(rule_set.name + "@" + rule_set.version + "/" + rule);
  }
  // The evaluation, the plan and its steps in one transaction: a plan is never half recorded.
  if (sqlite3_exec(Db(db_), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return Error{
        ErrorCode::kIo,
        "the journal " + path_ + ": cannot take its write lock to record a plan: " + sqlite3_errmsg(Db(db_)),
        {}};
  }
  Statement evaluation(Db(db_),
                       "INSERT INTO evaluations (recorded_at, snapshot_kind, snapshot_digest, snapshot_zlib, "
                       "snapshot_bytes, rule_sets) VALUES (?, ?, ?, ?, ?, ?)");
  evaluation.Bind(1, Now()).Bind(2, snapshot.kind).Bind(3, snapshot.digest).BindBlob(4, *compressed);
  evaluation.Bind(5, static_cast<int64_t>(canonical.size()))
      .Bind(6, FormatJson(Value::MakeList(std::move(rule_sets))));
  Status status = Execute(Db(db_), path_, evaluation, "recording an evaluation");
  const int64_t evaluation_id = sqlite3_last_insert_rowid(Db(db_));
  Statement insert(Db(db_),
                   "INSERT INTO plans (evaluation_id, command, subject, dry_run, state, started_at, "
                   "matched_rules, plan_digest) VALUES (?, ?, ?, ?, 'running', ?, ?, ?)");
  insert.Bind(1, evaluation_id).Bind(2, command).Bind(3, subject).Bind(4, int64_t{dry_run}).Bind(5, Now());
  insert.Bind(6, FormatJson(StringList(matched))).Bind(7, PlanDigest(plan));
  if (status.ok()) status = Execute(Db(db_), path_, insert, "recording a plan");
  const int64_t plan_id = sqlite3_last_insert_rowid(Db(db_));
  for (size_t i = 0; status.ok() && i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    Statement step_insert(
        Db(db_),
        "INSERT INTO steps (plan_id, position, step_id, action, target, params, adapter, disruptive, "
        "depends_on, idempotency_key, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')");
    step_insert.Bind(1, plan_id).Bind(2, static_cast<int64_t>(i)).Bind(3, step.id).Bind(4, step.action);
    step_insert.Bind(5, step.target).Bind(6, FormatJson(step.params)).Bind(7, step.adapter);
    step_insert.Bind(8, int64_t{step.disruptive}).Bind(9, FormatJson(StringList(step.depends_on)));
    step_insert.Bind(10, step.idempotency_key);
    status = Execute(Db(db_), path_, step_insert, "recording a step");
  }
  if (status.ok()) status = Prune();
  if (!status.ok()) {
    sqlite3_exec(Db(db_), "ROLLBACK", nullptr, nullptr, nullptr);
    return status.error();
  }
  if (sqlite3_exec(Db(db_), "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return Error{
        ErrorCode::kIo, "the journal " + path_ + ": committing a plan: " + sqlite3_errmsg(Db(db_)), {}};
  }
  return plan_id;
}

Status Journal::Prune() {
  // Beyond the newest max_plans or older than max_age; never a subject's latest.
  const std::string doomed =
      "SELECT id FROM plans WHERE (id <= (SELECT MAX(id) FROM plans) - ?1 OR started_at < ?2) "
      "AND id NOT IN (SELECT MAX(id) FROM plans GROUP BY subject, dry_run)";
  const std::string cutoff = Rfc3339Millis(std::chrono::system_clock::now() - limits_.max_age);
  for (const std::string& sql : {"DELETE FROM steps WHERE plan_id IN (" + doomed + ")",
                                 "DELETE FROM plans WHERE id IN (" + doomed + ")",
                                 std::string("DELETE FROM evaluations WHERE id NOT IN "
                                             "(SELECT evaluation_id FROM plans)")}) {
    Statement remove(Db(db_), sql.c_str());
    if (sql.find("?1") != std::string::npos) remove.Bind(1, limits_.max_plans).Bind(2, cutoff);
    if (Status removed = Execute(Db(db_), path_, remove, "pruning old records"); !removed.ok())
      return removed;
  }
  return {};
}

Status Journal::StepStarted(int64_t plan_id, const PlanStep& step, int attempt) {
  Statement update(
      Db(db_),
      "UPDATE steps SET state = 'running', attempts = ?, "
      "started_at = CASE started_at WHEN '' THEN ? ELSE started_at END WHERE plan_id = ? AND step_id = ?");
  update.Bind(1, int64_t{attempt}).Bind(2, Now()).Bind(3, plan_id).Bind(4, step.id);
  return Execute(Db(db_), path_, update, "recording a step's start");
}

Status Journal::StepFinished(int64_t plan_id, const std::string& step_id, StepState state,
                             const std::vector<Request>& requests, const std::string& message) {
  Statement update(Db(db_),
                   "UPDATE steps SET state = ?, finished_at = ?, requests = ?, message = ? "
                   "WHERE plan_id = ? AND step_id = ?");
  update.Bind(1, std::string(StepStateName(state)))
      .Bind(2, Now())
      .Bind(3, RequestsJson(requests))
      .Bind(4, message);
  update.Bind(5, plan_id).Bind(6, step_id);
  return Execute(Db(db_), path_, update, "recording a step's outcome");
}

Status Journal::FinishPlan(int64_t plan_id, const std::string& state, const std::string& error) {
  Statement update(Db(db_), "UPDATE plans SET state = ?, error = ?, finished_at = ? WHERE id = ?");
  update.Bind(1, state).Bind(2, error).Bind(3, Now()).Bind(4, plan_id);
  return Execute(Db(db_), path_, update, "recording a plan's outcome");
}

namespace {

std::vector<StepRecord> ReadSteps(sqlite3* db, int64_t plan_id) {
  Statement select(
      db,
      "SELECT step_id, action, target, idempotency_key, disruptive, state, attempts, started_at, "
      "finished_at, requests, message FROM steps WHERE plan_id = ? ORDER BY position");
  select.Bind(1, plan_id);
  std::vector<StepRecord> steps;
  while (select.Step() == SQLITE_ROW) {
    StepRecord step;
    step.plan_id = plan_id;
    step.step_id = select.Text(0);
    step.action = select.Text(1);
    step.target = select.Text(2);
    step.idempotency_key = select.Text(3);
    step.disruptive = select.Int(4) != 0;
    step.state = StepStateFromName(select.Text(5));
    step.attempts = static_cast<int>(select.Int(6));
    step.started_at = select.Text(7);
    step.finished_at = select.Text(8);
    step.requests = ParseRequests(select.Text(9));
    step.message = select.Text(10);
    steps.push_back(std::move(step));
  }
  return steps;
}

// A row of kPlanColumns, without its steps.
PlanRecord ReadPlan(const Statement& select) {
  PlanRecord plan;
  plan.id = select.Int(0);
  plan.evaluation_id = select.Int(1);
  plan.command = select.Text(2);
  plan.subject = select.Text(3);
  plan.dry_run = select.Int(4) != 0;
  plan.state = select.Text(5);
  plan.error = select.Text(6);
  plan.started_at = select.Text(7);
  plan.finished_at = select.Text(8);
  plan.matched_rules = ParseStringList(select.Text(9));
  plan.digest = select.Text(10);
  return plan;
}

}  // namespace

Result<std::vector<StepRecord>> Journal::UnfinishedSteps(const std::string& subject) {
  Statement select(Db(db_),
                   "SELECT id, state FROM plans WHERE subject = ? AND dry_run = 0 ORDER BY id DESC LIMIT 1");
  select.Bind(1, subject);
  const int row = select.Step();
  if (row == SQLITE_DONE) return std::vector<StepRecord>{};
  if (row != SQLITE_ROW) {
    return Error{ErrorCode::kIo, "the journal " + path_ + ": " + sqlite3_errmsg(Db(db_)), {}};
  }
  const std::string state = select.Text(1);
  if (state != "running" && state != "failed") return std::vector<StepRecord>{};
  return ReadSteps(Db(db_), select.Int(0));
}

Result<std::optional<PlanRecord>> Journal::LatestPlan(const std::string& subject, bool dry_run) {
  Statement select(Db(db_), ("SELECT " + plan_columns_ +
                             " FROM plans WHERE subject = ? AND dry_run = ? ORDER BY id DESC LIMIT 1")
                                .c_str());
  select.Bind(1, subject).Bind(2, int64_t{dry_run});
  const int row = select.Step();
  if (row == SQLITE_DONE) return std::optional<PlanRecord>();
  if (row != SQLITE_ROW)
    return Error{ErrorCode::kIo, "the journal " + path_ + ": " + sqlite3_errmsg(Db(db_)), {}};
  return std::optional<PlanRecord>(ReadPlan(select));
}

Result<std::vector<PlanRecord>> Journal::Plans(int limit) {
  Statement select(Db(db_), ("SELECT " + plan_columns_ + " FROM plans ORDER BY id DESC LIMIT ?").c_str());
  select.Bind(1, limit > 0 ? int64_t{limit} : int64_t{-1});
  std::vector<PlanRecord> plans;
  int row;
  while ((row = select.Step()) == SQLITE_ROW) {
    PlanRecord plan = ReadPlan(select);
    plan.steps = ReadSteps(Db(db_), plan.id);
    plans.push_back(std::move(plan));
  }
  if (row != SQLITE_DONE)
    return Error{ErrorCode::kIo, "the journal " + path_ + ": " + sqlite3_errmsg(Db(db_)), {}};
  return plans;
}

Result<std::vector<EvaluationRecord>> Journal::Evaluations(int limit) {
  Statement select(
      Db(db_),
      "SELECT id, recorded_at, snapshot_digest, snapshot_zlib, snapshot_bytes, rule_sets FROM evaluations "
      "ORDER BY id DESC LIMIT ?");
  select.Bind(1, limit > 0 ? int64_t{limit} : int64_t{-1});
  std::vector<EvaluationRecord> evaluations;
  int row;
  while ((row = select.Step()) == SQLITE_ROW) {
    EvaluationRecord record;
    record.id = select.Int(0);
    record.recorded_at = select.Text(1);
    record.snapshot_digest = select.Text(2);
    // The stored size is not trusted for an allocation: a snapshot is at most kMaxSnapshotBytes.
    const int64_t size = select.Int(4);
    if (size < 0 || size > kMaxSnapshotBytes) {
      return Error{ErrorCode::kIo,
                   "the journal " + path_ + ": evaluation " + std::to_string(record.id) +
                       " says its snapshot has " + std::to_string(size) + " bytes (at most " +
                       std::to_string(kMaxSnapshotBytes) + ")",
                   {}};
    }
    auto text = Decompress(select.Blob(3), static_cast<size_t>(size));
    if (!text.ok())
      return Error{
          text.error().code,
          "the journal " + path_ + ": evaluation " + std::to_string(record.id) + ": " + text.error().message,
          {}};
    auto snapshot = ParseSnapshot(*text);
    if (!snapshot.ok()) {
      return Error{ErrorCode::kIo,
                   "the journal " + path_ + ": evaluation " + std::to_string(record.id) + ": " +
                       snapshot.error().message,
                   {}};
    }
    record.snapshot = std::move(*snapshot);
    if (auto rule_sets = ParseJson(select.Text(5)); rule_sets.ok() && rule_sets->is_list()) {
      for (const Value& item : rule_sets->list_value())
        record.rule_sets.emplace_back(TextOf(item, "id"), TextOf(item, "digest"));
    }
    evaluations.push_back(std::move(record));
  }
  if (row != SQLITE_DONE)
    return Error{ErrorCode::kIo, "the journal " + path_ + ": " + sqlite3_errmsg(Db(db_)), {}};
  return evaluations;
}

}  // namespace ruleplane
