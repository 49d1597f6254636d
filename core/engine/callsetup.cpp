#include "callsetup.h"

#include "codec/messagejson.h"
#include "codec/requesttemplate.h"
#include "util/units.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <tuple>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

namespace rpcscope {

namespace {

/// JSON text + fills -> serialized request.
bool encodeJson(const Schema &schema, const google::protobuf::Descriptor *type, const QByteArray &json,
    const QStringList &fills, std::string *out, QString *error)
{
    std::unique_ptr<google::protobuf::Message> request = messageFromJson(schema, type, json, error);
    if (!request)
        return false;
    for (const QString &fill : fills) {
        if (!applyFill(request.get(), fill, error))
            return false;
    }
    if (!request->SerializeToString(out)) {
        if (error)
            *error = QStringLiteral("cannot serialize the request");
        return false;
    }
    return true;
}

/// The raw text of each top-level element of a JSON array that is known to be valid.
QList<QByteArray> splitJsonArray(const QByteArray &array)
{
    QList<QByteArray> elements;
    int depth = 0;
    bool inString = false;
    qsizetype start = -1;
    for (qsizetype i = 0; i < array.size(); ++i) {
        const char c = array[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth == 2 && c == '{')
                start = i;
        } else if (c == ']' || c == '}') {
            if (depth-- == 2 && c == '}' && start >= 0) {
                elements << array.mid(start, i - start + 1);
                start = -1;
            }
        }
    }
    return elements;
}

class TemplateEncoder final : public RequestEncoder {
public:
    TemplateEncoder(Schema schema, const google::protobuf::Descriptor *type, std::vector<RequestTemplate> templates,
        QStringList fills)
        : m_schema(std::move(schema)), m_type(type), m_templates(std::move(templates)), m_fills(std::move(fills))
    {
    }

    bool encode(
        uint64_t callNumber, int workerId, std::mt19937_64 &rng, std::string *out, std::string *error) const override
    {
        const RequestTemplate &t = m_templates[callNumber % m_templates.size()];
        const std::string json = t.render({ callNumber, workerId, &rng });
        QString why;
        if (!encodeJson(m_schema, m_type, QByteArray::fromStdString(json), m_fills, out, &why)) {
            *error = why.toStdString();
            return false;
        }
        return true;
    }

private:
    Schema m_schema;
    const google::protobuf::Descriptor *m_type;
    std::vector<RequestTemplate> m_templates;
    QStringList m_fills;
};

} // namespace

std::optional<GrpcCall> prepareGrpcCall(const Schema &schema, const RequestSpec &spec, QString *error)
{
    auto fail = [&](const QString &why) -> std::optional<GrpcCall> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const google::protobuf::MethodDescriptor *method = schema.findMethod(spec.call, error);
    if (!method)
        return std::nullopt;
    const google::protobuf::Descriptor *input = method->input_type();
    GrpcCall call;
    call.methodPath = Schema::methodInfo(method).path().toStdString();
    call.schema = schema;
    call.responseType = spec.decodeResponse ? method->output_type() : nullptr;
    call.method = method;

    if (spec.binary) {
        // Check that the bytes are a message of the input type; fills apply to it as to JSON.
        std::unique_ptr<google::protobuf::Message> request = schema.newMessage(input);
        if (!request->ParseFromArray(spec.binary->constData(), static_cast<int>(spec.binary->size())))
            return fail(QStringLiteral("the binary request does not parse as %1")
                            .arg(QString::fromStdString(input->full_name())));
        for (const QString &fill : spec.fills) {
            if (!applyFill(request.get(), fill, error))
                return std::nullopt;
        }
        call.requests.push_back(request->SerializeAsString());
        return call;
    }

    // One object, or an array of objects sent round-robin.
    QList<QByteArray> documents;
    const QByteArray trimmed = spec.json.trimmed();
    if (trimmed.startsWith('[')) {
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(trimmed, &parseError);
        if (parseError.error == QJsonParseError::NoError) {
            const QJsonArray array = doc.array();
            if (array.isEmpty())
                return fail(QStringLiteral("the request array is empty"));
            for (qsizetype i = 0; i < array.size(); ++i) {
                if (!array[i].isObject())
                    return fail(QStringLiteral("request array element %1 is not a JSON object").arg(i));
            }
            // The elements' own text, not a re-serialization (which would round 64-bit integers through double).
            documents = splitJsonArray(trimmed);
        } else if (!RequestTemplate::hasPlaceholders(trimmed)) {
            // Let messageFromJson report the position of the syntax error.
            documents << spec.json;
        } else {
            return fail(QStringLiteral("a templated request must be a single JSON object"));
        }
    } else {
        documents << spec.json;
    }

    if (RequestTemplate::hasPlaceholders(spec.json)) {
        std::vector<RequestTemplate> templates;
        for (const QByteArray &document : std::as_const(documents)) {
            std::optional<RequestTemplate> t = RequestTemplate::parse(document, error);
            if (!t)
                return std::nullopt;
            // Render once now, so a template that cannot make a valid request fails here, not mid-run.
            std::mt19937_64 rng(1);
            std::string sample;
            QString why;
            if (!encodeJson(
                    schema, input, QByteArray::fromStdString(t->render({ 0, 0, &rng })), spec.fills, &sample, &why))
                return fail(QStringLiteral("request template: %1").arg(why));
            templates.push_back(std::move(*t));
        }
        call.perCall = std::make_shared<TemplateEncoder>(schema, input, std::move(templates), spec.fills);
        call.requests.clear();
        return call;
    }

    for (qsizetype i = 0; i < documents.size(); ++i) {
        std::string bytes;
        QString why;
        if (!encodeJson(schema, input, documents[i], spec.fills, &bytes, &why))
            return fail(documents.size() > 1 ? QStringLiteral("request array element %1: %2").arg(i).arg(why) : why);
        call.requests.push_back(std::move(bytes));
    }
    return call;
}

} // namespace rpcscope
