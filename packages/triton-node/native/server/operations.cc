#include "server/operations.h"

#include "triton/api.h"
#include "triton/owners.h"

namespace triton_node {

void Operation::Fail(const ErrorInfo& error) {
  if (!ok_) return;
  ok_ = false;
  error_ = error;
}

bool Operation::Check(TRITONSERVER_Error* err) {
  if (err == nullptr) return true;
  Fail(TakeError(err));
  return false;
}

Napi::Value FlagOperation::Result(Napi::Env env) {
  return Napi::Boolean::New(env, flag_);
}

void MessageOperation::Execute(TRITONSERVER_Server* server) {
  TRITONSERVER_Message* raw = nullptr;
  if (!Check(Fetch(server, &raw))) return;
  MessageOwner message(raw);
  const char* base = nullptr;
  size_t size = 0;
  if (Check(Api().TRITONSERVER_MessageSerializeToJson(raw, &base, &size))) {
    text_.assign(base, size);
  }
}

Napi::Value MessageOperation::Result(Napi::Env env) {
  return Napi::String::New(env, text_);
}

void ServerLiveOp::Execute(TRITONSERVER_Server* server) {
  Check(Api().TRITONSERVER_ServerIsLive(server, &flag_));
}

void ServerReadyOp::Execute(TRITONSERVER_Server* server) {
  Check(Api().TRITONSERVER_ServerIsReady(server, &flag_));
}

TRITONSERVER_Error* ServerMetadataOp::Fetch(TRITONSERVER_Server* server,
                                            TRITONSERVER_Message** message) {
  return Api().TRITONSERVER_ServerMetadata(server, message);
}

TRITONSERVER_Error* ModelIndexOp::Fetch(TRITONSERVER_Server* server,
                                        TRITONSERVER_Message** message) {
  return Api().TRITONSERVER_ServerModelIndex(
      server, ready_only_ ? TRITONSERVER_INDEX_FLAG_READY : 0, message);
}

void ModelReadyOp::Execute(TRITONSERVER_Server* server) {
  Check(Api().TRITONSERVER_ServerModelIsReady(server, model_.name.c_str(),
                                              model_.version, &flag_));
}

void ModelPropertiesOp::Execute(TRITONSERVER_Server* server) {
  const TritonApi& api = Api();
  uint32_t batch = 0, txn = 0;
  if (!Check(api.TRITONSERVER_ServerModelBatchProperties(
          server, model_.name.c_str(), model_.version, &batch, nullptr))) {
    return;
  }
  if (!Check(api.TRITONSERVER_ServerModelTransactionProperties(
          server, model_.name.c_str(), model_.version, &txn, nullptr))) {
    return;
  }
  decoupled_ = (txn & TRITONSERVER_TXN_DECOUPLED) != 0;
  batch_first_dim_ = (batch & TRITONSERVER_BATCH_FIRST_DIM) != 0;
}

Napi::Value ModelPropertiesOp::Result(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("decoupled", Napi::Boolean::New(env, decoupled_));
  o.Set("batchFirstDim", Napi::Boolean::New(env, batch_first_dim_));
  return o;
}

TRITONSERVER_Error* ModelMetadataOp::Fetch(TRITONSERVER_Server* server,
                                           TRITONSERVER_Message** message) {
  return Api().TRITONSERVER_ServerModelMetadata(server, model_.name.c_str(),
                                                model_.version, message);
}

TRITONSERVER_Error* ModelConfigOp::Fetch(TRITONSERVER_Server* server,
                                         TRITONSERVER_Message** message) {
  return Api().TRITONSERVER_ServerModelConfig(server, model_.name.c_str(),
                                              model_.version, 1, message);
}

TRITONSERVER_Error* ModelStatisticsOp::Fetch(TRITONSERVER_Server* server,
                                             TRITONSERVER_Message** message) {
  return Api().TRITONSERVER_ServerModelStatistics(server, model_.name.c_str(),
                                                  model_.version, message);
}

void LoadModelOp::Execute(TRITONSERVER_Server* server) {
  const TritonApi& api = Api();
  const LoadRequest& r = request_;
  if (!r.has_config && r.files.empty()) {
    Check(api.TRITONSERVER_ServerLoadModel(server, r.name.c_str()));
    return;
  }
  std::vector<ParameterOwner> owners;
  std::vector<const TRITONSERVER_Parameter*> params;
  if (r.has_config) {
    owners.emplace_back(api.TRITONSERVER_ParameterNew(
        "config", TRITONSERVER_PARAMETER_STRING, r.config.c_str()));
  }
  for (const auto& f : r.files) {
    std::string key = "file:" + f.first;
    owners.emplace_back(api.TRITONSERVER_ParameterBytesNew(
        key.c_str(), f.second.data(), f.second.size()));
  }
  for (const ParameterOwner& p : owners) params.push_back(p.get());
  Check(api.TRITONSERVER_ServerLoadModelWithParameters(
      server, r.name.c_str(), params.data(), params.size()));
}

void UnloadModelOp::Execute(TRITONSERVER_Server* server) {
  const TritonApi& api = Api();
  Check(dependents_
            ? api.TRITONSERVER_ServerUnloadModelAndDependents(server,
                                                              name_.c_str())
            : api.TRITONSERVER_ServerUnloadModel(server, name_.c_str()));
}

void MetricsOp::Execute(TRITONSERVER_Server* server) {
  const TritonApi& api = Api();
  TRITONSERVER_Metrics* raw = nullptr;
  if (!Check(api.TRITONSERVER_ServerMetrics(server, &raw))) return;
  MetricsOwner metrics(raw);
  const char* base = nullptr;
  size_t size = 0;
  if (Check(api.TRITONSERVER_MetricsFormatted(
          raw, TRITONSERVER_METRIC_PROMETHEUS, &base, &size))) {
    text_.assign(base, size);
  }
}

Napi::Value MetricsOp::Result(Napi::Env env) {
  return Napi::String::New(env, text_);
}

}  // namespace triton_node
