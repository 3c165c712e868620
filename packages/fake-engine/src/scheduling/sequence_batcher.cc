// Triton's sequence batcher as far as the fake models it: sequences by
// correlation id, each request of a sequence run after the one before it,
// START and END flags, the idle timeout (max_sequence_idle_microseconds),
// cancellation of a waiting request (it ends the sequence), and implicit
// state (sequence_batching.state): the state inputs a backend
// reads, zeros (or the zero_data initial state) when a sequence starts, and
// the state outputs it writes, kept for the sequence's next request; and
// control inputs (START, END, READY, CORRID) given to the backend with each
// request. The oldest strategy is accepted and runs as the direct one:
// each request on its own (batching sequences together changes no result).
// Not modelled: slots (a sequence never waits for one, so READY is always
// true), data_file initial states.
#include "sequence_batcher.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>

#include "../config/data_types.h"
#include "../core/error.h"
#include "../core/response.h"
#include "../support/clock.h"
#include "scheduler.h"

namespace fake {
namespace {

uint64_t NowUs() { return SteadyNs() / 1000; }

std::string SequenceIdText(const TRITONSERVER_InferenceRequest* r) {
  return r->corr_is_string ? r->corr_str : std::to_string(r->corr_id);
}

size_t StateBytes(const SequenceStateConfig& s) {
  // Load refused every state larger than the machine's memory
  // (SequenceStateSizeProblem): the product fits.
  int64_t n = 1;
  for (int64_t d : s.dims) n *= d < 0 ? 1 : d;
  return static_cast<size_t>(n) * DataTypeSize(s.datatype);
}

// The machine's memory: no sequence can hold a state larger than it.
uint64_t MachineMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

// A value as a tensor's one element.
template <typename T>
std::vector<char> ElementBytes(T v) {
  std::vector<char> out(sizeof(T));
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

}  // namespace

std::vector<ControlTensor> SequenceControlTensors(
    const ModelConfig& cfg, const TRITONSERVER_InferenceRequest* r) {
  std::vector<ControlTensor> out;
  const bool start = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0;
  const bool end = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) != 0;
  const std::pair<const char*, bool> kBoolean[] = {
      {"CONTROL_SEQUENCE_START", start},
      {"CONTROL_SEQUENCE_END", end},
      {"CONTROL_SEQUENCE_READY", true}};
  SequenceControl c;
  for (const auto& k : kBoolean) {
    // Load checked the config: no error here.
    if (!FindSequenceControl(cfg, k.first, &c).empty() || c.tensor.empty()) {
      continue;
    }
    out.push_back(
        {c.tensor, c.datatype, k.second ? c.true_value : c.false_value});
  }
  if (!FindSequenceControl(cfg, "CONTROL_SEQUENCE_CORRID", &c).empty() ||
      c.tensor.empty()) {
    return out;
  }
  ControlTensor t{c.tensor, c.datatype, {}};
  if (c.datatype == TRITONSERVER_TYPE_BYTES) {
    // One BYTES element: the id's length, then the id.
    const std::string& id = r->corr_str;
    t.bytes = ElementBytes(static_cast<uint32_t>(id.size()));
    t.bytes.insert(t.bytes.end(), id.begin(), id.end());
  } else {
    // The id's low bytes in the type's size (little-endian), as Triton
    // copies it.
    const uint64_t id = r->corr_id;
    t.bytes = ElementBytes(id);
    t.bytes.resize(DataTypeSize(c.datatype));
  }
  out.push_back(std::move(t));
  return out;
}

TRITONSERVER_Error* CheckCorrelationIdType(
    const ModelConfig& cfg, const TRITONSERVER_InferenceRequest* r) {
  SequenceControl c;
  if (!FindSequenceControl(cfg, "CONTROL_SEQUENCE_CORRID", &c).empty() ||
      c.tensor.empty()) {
    return nullptr;
  }
  const bool numeric = c.datatype == TRITONSERVER_TYPE_UINT64 ||
                       c.datatype == TRITONSERVER_TYPE_INT64 ||
                       c.datatype == TRITONSERVER_TYPE_UINT32 ||
                       c.datatype == TRITONSERVER_TYPE_INT32;
  const char* given = nullptr;
  if (r->corr_is_string && c.datatype != TRITONSERVER_TYPE_BYTES) {
    given = "BYTES";
  } else if (!r->corr_is_string && !numeric) {
    given = "UINT64";
  }
  if (given == nullptr) return nullptr;
  return ErrArg(r->Prefix() + "sequence batching control '" + c.tensor +
                "' data-type is '" + given + "', but model '" + cfg.name +
                "' expects '" + TRITONSERVER_DataTypeString(c.datatype) + "'");
}

std::string SequenceKey(const TRITONSERVER_InferenceRequest* r) {
  return (r->corr_is_string ? "s:" : "u:") + SequenceIdText(r);
}

std::string SequenceConfigProblem(const ModelConfig& cfg,
                                  TRITONSERVER_Error_Code* code) {
  *code = TRITONSERVER_ERROR_INVALID_ARG;
  // Triton's checks of each state's initial state (when the scheduler is
  // made, after the backend created the model).
  for (const auto& s : cfg.sequence_batching.state) {
    for (const auto& init : s.initial_state) {
      const std::string& in = s.input_name;
      if (init.data_type != s.data_type) {
        return "The data type used for 'initial_state' field of state '" + in +
               "' does not match the state data type.";
      }
      if (init.name.empty()) {
        return "Field 'name' must be set when using initial_state for state "
               "input '" +
               in + "'.";
      }
      if (init.dims.size() != s.dims.size()) {
        return "Number of dimensions in 'initial_state' doesn't match the "
               "size of 'state' dimensions for state input '" +
               in + "'. " + std::to_string(init.dims.size()) +
               " != " + std::to_string(s.dims.size());
      }
      for (size_t i = 0; i < init.dims.size(); ++i) {
        if (init.dims[i] == -1) {
          return "'initial_state' field for state input name '" + in +
                 "' contains variable dimensions.";
        }
        if (s.dims[i] != -1 && init.dims[i] != s.dims[i]) {
          return "'initial_state' dim for input name '" + in +
                 "' doesn't match 'state' dim description. " +
                 std::to_string(init.dims[i]) +
                 " != " + std::to_string(s.dims[i]);
        }
      }
      if (!init.data_file.empty()) {
        *code = TRITONSERVER_ERROR_UNSUPPORTED;
        return "the fake engine's sequence batcher does not support "
               "initial_state data_file (state '" +
               in + "')";
      }
    }
  }
  return SequenceStateSizeProblem(cfg, MachineMemoryBytes());
}

TRITONSERVER_Error* SequenceAdmit(Model* m, TRITONSERVER_InferenceRequest* r,
                                  bool* run_now) {
  *run_now = true;
  if (m->config.max_batch_size > 0 && r->request_batch > 1) {
    return ErrArg("inference request to model '" + m->name +
                  "' must specify batch-size 1 due to requirements of "
                  "sequence batcher");
  }
  const bool start = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0;
  const std::string key = SequenceKey(r);
  const uint64_t now = NowUs();
  const uint64_t idle =
      m->config.sequence_batching.max_sequence_idle_microseconds;
  std::lock_guard<std::mutex> lock(m->sequences.mu);
  auto it = m->sequences.by_key.find(key);
  // An idle sequence was released by Triton's reaper in the meantime.
  if (it != m->sequences.by_key.end() && !it->second.running &&
      it->second.waiting.empty() && now - it->second.last_us > idle) {
    m->sequences.by_key.erase(it);
    it = m->sequences.by_key.end();
  }
  const bool end = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) != 0;
  if (!start && (it == m->sequences.by_key.end() || it->second.ended)) {
    return ErrArg("inference request for sequence " + SequenceIdText(r) +
                  " to model '" + m->name +
                  "' must specify the START flag on the first request of the "
                  "sequence");
  }
  Sequence& seq = m->sequences.by_key[key];
  seq.last_us = now;
  // A START after an END still running queues behind it (Triton would give
  // it a slot of its own; one after the other, nothing it sees differs).
  seq.ended = end;
  if (seq.running) {
    seq.waiting.push_back(r);
    *run_now = false;
    return nullptr;
  }
  seq.running = true;
  return nullptr;
}

std::vector<std::vector<char>>* SequenceStates(
    Model* m, const TRITONSERVER_InferenceRequest* r, bool reading) {
  const auto& states = m->config.sequence_batching.state;
  std::lock_guard<std::mutex> lock(m->sequences.mu);
  Sequence& seq = m->sequences.by_key[SequenceKey(r)];
  const bool start = (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) != 0;
  if ((reading && start) || seq.states.size() != states.size()) {
    seq.states.clear();
    try {
      for (const auto& s : states) seq.states.emplace_back(StateBytes(s), 0);
    } catch (const std::bad_alloc&) {
      // Within the machine's memory (load checked that) but not free now:
      // the request fails, the process stays.
      seq.states.clear();
      return nullptr;
    }
  }
  // The value stays in place until this request's step is done: only the
  // sequence's running request touches it.
  return &seq.states;
}

void SequenceStepDone(Model* m, const std::string& key, bool end) {
  TRITONSERVER_InferenceRequest* next = nullptr;
  std::deque<TRITONSERVER_InferenceRequest*> cancelled;
  {
    std::lock_guard<std::mutex> lock(m->sequences.mu);
    auto it = m->sequences.by_key.find(key);
    if (it == m->sequences.by_key.end()) return;
    Sequence& seq = it->second;
    seq.last_us = NowUs();
    if (end) seq.states.clear();
    if (!seq.waiting.empty() && seq.waiting.front()->cancelled->load()) {
      // As Triton's sequence batcher: the next request of the sequence was
      // cancelled while it waited, which ends the sequence; it and every
      // request queued behind it are CANCELLED (with an empty message), and
      // a later request of that id needs the START flag again.
      cancelled.swap(seq.waiting);
      m->sequences.by_key.erase(it);
    } else if (seq.waiting.empty()) {
      if (end) {
        m->sequences.by_key.erase(it);
      } else {
        seq.running = false;
      }
      return;
    } else {
      next = seq.waiting.front();
      seq.waiting.pop_front();
    }
  }
  for (TRITONSERVER_InferenceRequest* r : cancelled) {
    {
      std::lock_guard<std::mutex> slock(m->stats.mu);
      m->stats.fail.Add(SteadyNs() - r->queue_start_ns);
      ++m->stats.fail_canceled;
    }
    FailRequest(m, r, Err(TRITONSERVER_ERROR_CANCELLED, ""), true);
  }
  if (next == nullptr) return;
  if (auto* e = Enqueue(m, next)) {
    // Only a full queue refuses, and sequence models have no queue limit.
    FailRequest(m, next, e, true);
  }
}

}  // namespace fake
