// The blocking calls into Triton, one class each. An operation runs on a
// thread of its own (ServerCore::Run) and its typed result becomes a JS
// value on the JS thread.
#ifndef TRITON_NODE_SERVER_OPERATIONS_H_
#define TRITON_NODE_SERVER_OPERATIONS_H_

#include <napi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "triton/errors.h"
#include "triton_capi.h"

namespace triton_node {

// What an operation does to the models it touches, for the hold-off after a
// load (ServerCore::WaitLoadsSettled).
enum class ModelEffect { kNone, kLoads, kUnloads };

class Operation {
 public:
  virtual ~Operation() = default;
  virtual ModelEffect effect() const { return ModelEffect::kNone; }
  // Worker thread. `server` is the server's handle (null while creating).
  virtual void Execute(TRITONSERVER_Server* server) = 0;
  // JS thread, after Execute succeeded.
  virtual Napi::Value Result(Napi::Env env) = 0;

  bool ok() const { return ok_; }
  const ErrorInfo& error() const { return error_; }
  // Records a failure (the first one counts).
  void Fail(const ErrorInfo& error);

 protected:
  // Takes `err` when non-null and records it; true when it was null.
  bool Check(TRITONSERVER_Error* err);

 private:
  bool ok_ = true;
  ErrorInfo error_;
};

// An operation whose result is a boolean.
class FlagOperation : public Operation {
 public:
  Napi::Value Result(Napi::Env env) override;

 protected:
  bool flag_ = false;
};

// An operation whose result is a TRITONSERVER_Message, as JSON text.
class MessageOperation : public Operation {
 public:
  void Execute(TRITONSERVER_Server* server) override;
  Napi::Value Result(Napi::Env env) override;

 protected:
  virtual TRITONSERVER_Error* Fetch(TRITONSERVER_Server* server,
                                    TRITONSERVER_Message** message) = 0;

 private:
  std::string text_;
};

class ServerLiveOp : public FlagOperation {
 public:
  void Execute(TRITONSERVER_Server* server) override;
};

class ServerReadyOp : public FlagOperation {
 public:
  void Execute(TRITONSERVER_Server* server) override;
};

class ServerMetadataOp : public MessageOperation {
 protected:
  TRITONSERVER_Error* Fetch(TRITONSERVER_Server* server,
                            TRITONSERVER_Message** message) override;
};

class ModelIndexOp : public MessageOperation {
 public:
  explicit ModelIndexOp(bool ready_only) : ready_only_(ready_only) {}

 protected:
  TRITONSERVER_Error* Fetch(TRITONSERVER_Server* server,
                            TRITONSERVER_Message** message) override;

 private:
  bool ready_only_;
};

// A model and a version (-1: Triton's choice).
struct ModelRef {
  std::string name;
  int64_t version = -1;
};

class ModelReadyOp : public FlagOperation {
 public:
  explicit ModelReadyOp(ModelRef model) : model_(std::move(model)) {}
  void Execute(TRITONSERVER_Server* server) override;

 private:
  ModelRef model_;
};

// { decoupled, batchFirstDim } of a model.
class ModelPropertiesOp : public Operation {
 public:
  explicit ModelPropertiesOp(ModelRef model) : model_(std::move(model)) {}
  void Execute(TRITONSERVER_Server* server) override;
  Napi::Value Result(Napi::Env env) override;

 private:
  ModelRef model_;
  bool decoupled_ = false;
  bool batch_first_dim_ = false;
};

// A message about one model (metadata, config, statistics).
class ModelMessageOperation : public MessageOperation {
 public:
  explicit ModelMessageOperation(ModelRef model) : model_(std::move(model)) {}

 protected:
  ModelRef model_;
};

class ModelMetadataOp : public ModelMessageOperation {
 public:
  using ModelMessageOperation::ModelMessageOperation;

 protected:
  TRITONSERVER_Error* Fetch(TRITONSERVER_Server* server,
                            TRITONSERVER_Message** message) override;
};

class ModelConfigOp : public ModelMessageOperation {
 public:
  using ModelMessageOperation::ModelMessageOperation;

 protected:
  TRITONSERVER_Error* Fetch(TRITONSERVER_Server* server,
                            TRITONSERVER_Message** message) override;
};

class ModelStatisticsOp : public ModelMessageOperation {
 public:
  using ModelMessageOperation::ModelMessageOperation;

 protected:
  TRITONSERVER_Error* Fetch(TRITONSERVER_Server* server,
                            TRITONSERVER_Message** message) override;
};

// A model load, with an optional config override and files (copied: the
// load runs later on another thread).
struct LoadRequest {
  std::string name;
  bool has_config = false;
  std::string config;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
};

class LoadModelOp : public Operation {
 public:
  explicit LoadModelOp(LoadRequest request) : request_(std::move(request)) {}
  ModelEffect effect() const override { return ModelEffect::kLoads; }
  void Execute(TRITONSERVER_Server* server) override;
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  LoadRequest request_;
};

class UnloadModelOp : public Operation {
 public:
  UnloadModelOp(std::string name, bool dependents)
      : name_(std::move(name)), dependents_(dependents) {}
  ModelEffect effect() const override { return ModelEffect::kUnloads; }
  void Execute(TRITONSERVER_Server* server) override;
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  std::string name_;
  bool dependents_;
};

// Prometheus text of the server's metrics.
class MetricsOp : public Operation {
 public:
  void Execute(TRITONSERVER_Server* server) override;
  Napi::Value Result(Napi::Env env) override;

 private:
  std::string text_;
};

}  // namespace triton_node

#endif  // TRITON_NODE_SERVER_OPERATIONS_H_
