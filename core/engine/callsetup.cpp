#include "callsetup.h"

#include "codec/messagejson.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

namespace rpcscope {

std::optional<GrpcCall> prepareGrpcCall(const Schema &schema, const RequestSpec &spec, QString *error)
{
    const google::protobuf::MethodDescriptor *method = schema.findMethod(spec.call, error);
    if (!method)
        return std::nullopt;
    if (method->client_streaming() || method->server_streaming()) {
        if (error)
            *error = QStringLiteral("%1 is a %2 method; only unary methods can be run so far")
                         .arg(spec.call, Schema::methodInfo(method).kindName());
        return std::nullopt;
    }
    std::unique_ptr<google::protobuf::Message> request
        = messageFromJson(schema, method->input_type(), spec.json, error);
    if (!request)
        return std::nullopt;
    for (const QString &fill : spec.fills) {
        if (!applyFill(request.get(), fill, error))
            return std::nullopt;
    }
    GrpcCall call;
    call.methodPath = Schema::methodInfo(method).path().toStdString();
    if (!request->SerializeToString(&call.request)) {
        if (error)
            *error = QStringLiteral("cannot serialize the request for %1").arg(spec.call);
        return std::nullopt;
    }
    call.schema = schema;
    call.responseType = spec.decodeResponse ? method->output_type() : nullptr;
    return call;
}

} // namespace rpcscope
