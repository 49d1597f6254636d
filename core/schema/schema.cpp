#include "schema.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/descriptor_database.h>
#include <google/protobuf/dynamic_message.h>

#include <algorithm>

namespace gp = google::protobuf;

namespace rpcscope {

QString SchemaError::toString() const
{
    QString out = file.isEmpty() ? QStringLiteral("<input>") : file;
    if (line > 0) {
        out += QLatin1Char(':') + QString::number(line);
        if (column > 0)
            out += QLatin1Char(':') + QString::number(column);
    }
    return out + QStringLiteral(": ") + message;
}

QString MethodInfo::kindName() const
{
    if (clientStreaming && serverStreaming)
        return QStringLiteral("bidi streaming");
    if (clientStreaming)
        return QStringLiteral("client streaming");
    if (serverStreaming)
        return QStringLiteral("server streaming");
    return QStringLiteral("unary");
}

QString SchemaLoadResult::errorText() const
{
    QStringList lines;
    for (const auto &e : errors)
        lines << e.toString();
    return lines.join(QLatin1Char('\n'));
}

namespace {
class CollectingErrors : public gp::DescriptorPool::ErrorCollector {
public:
    explicit CollectingErrors(QList<SchemaError> *errors) : m_errors(errors) { }
    void AddError(const std::string &filename, const std::string &element_name, const gp::Message *, ErrorLocation,
        const std::string &message) override
    {
        if (m_errors)
            m_errors->append({ QString::fromStdString(filename), 0, 0,
                QString::fromStdString(element_name) + QStringLiteral(": ") + QString::fromStdString(message) });
    }

private:
    QList<SchemaError> *m_errors;
};
} // namespace

struct Schema::Data {
    gp::FileDescriptorSet set;
    gp::SimpleDescriptorDatabase database;
    gp::DescriptorPool pool { &database };
    mutable gp::DynamicMessageFactory factory { &pool }; // GetPrototype() is non-const but thread-safe
    QStringList files;
};

Schema::Schema() = default;

Schema Schema::fromFileDescriptorSet(const gp::FileDescriptorSet &set, QList<SchemaError> *errors)
{
    auto data = std::make_shared<Data>();
    data->set = set;
    for (const auto &file : set.file()) {
        if (!data->database.Add(file) && errors)
            errors->append({ QString::fromStdString(file.name()), 0, 0, QStringLiteral("defined twice") });
    }
    // Build every file now, so broken descriptors are reported here rather than on first use.
    CollectingErrors collector(errors);
    gp::DescriptorPool validating(&data->database, &collector);
    bool ok = true;
    for (const auto &file : set.file()) {
        if (!validating.FindFileByName(file.name()))
            ok = false;
        data->files << QString::fromStdString(file.name());
    }
    Schema schema;
    if (ok) {
        for (const auto &file : set.file())
            data->pool.FindFileByName(file.name());
        schema.d = std::move(data);
    }
    return schema;
}

bool Schema::isEmpty() const
{
    return !d;
}

QStringList Schema::fileNames() const
{
    return d ? d->files : QStringList();
}

MethodInfo Schema::methodInfo(const gp::MethodDescriptor *method)
{
    MethodInfo info;
    info.service = QString::fromStdString(method->service()->full_name());
    info.name = QString::fromStdString(method->name());
    info.inputType = QString::fromStdString(method->input_type()->full_name());
    info.outputType = QString::fromStdString(method->output_type()->full_name());
    info.clientStreaming = method->client_streaming();
    info.serverStreaming = method->server_streaming();
    return info;
}

QList<ServiceInfo> Schema::services() const
{
    QList<ServiceInfo> out;
    if (!d)
        return out;
    for (const auto &name : d->files) {
        const gp::FileDescriptor *file = d->pool.FindFileByName(name.toStdString());
        if (!file)
            continue;
        for (int s = 0; s < file->service_count(); ++s) {
            const gp::ServiceDescriptor *service = file->service(s);
            ServiceInfo info { QString::fromStdString(service->full_name()), name, {} };
            for (int m = 0; m < service->method_count(); ++m)
                info.methods << methodInfo(service->method(m));
            out << info;
        }
    }
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.name < b.name; });
    return out;
}

const gp::MethodDescriptor *Schema::findMethod(const QString &name, QString *error) const
{
    QString normalized = name.trimmed();
    if (normalized.startsWith(QLatin1Char('/')))
        normalized.remove(0, 1);
    const qsizetype slash = normalized.lastIndexOf(QLatin1Char('/'));
    QString serviceName;
    QString methodName;
    if (slash >= 0) {
        serviceName = normalized.left(slash);
        methodName = normalized.mid(slash + 1);
    } else {
        const qsizetype dot = normalized.lastIndexOf(QLatin1Char('.'));
        serviceName = dot >= 0 ? normalized.left(dot) : QString();
        methodName = dot >= 0 ? normalized.mid(dot + 1) : normalized;
    }
    auto fail = [&](const QString &message) -> const gp::MethodDescriptor * {
        if (error) {
            QStringList known;
            for (const auto &service : services()) {
                for (const auto &method : service.methods)
                    known << method.fullName();
            }
            *error = message
                + (known.isEmpty() ? QStringLiteral(" (the schema has no services)")
                                   : QStringLiteral(" (known: ") + known.join(QStringLiteral(", ")) + QLatin1Char(')'));
        }
        return nullptr;
    };
    if (!d)
        return fail(QStringLiteral("no schema loaded, cannot find method \"%1\"").arg(name));
    if (serviceName.isEmpty() || methodName.isEmpty())
        return fail(QStringLiteral("\"%1\" is not a method name: use package.Service/Method").arg(name));
    const gp::ServiceDescriptor *service = d->pool.FindServiceByName(serviceName.toStdString());
    if (!service)
        return fail(QStringLiteral("service \"%1\" not found").arg(serviceName));
    const gp::MethodDescriptor *method = service->FindMethodByName(methodName.toStdString());
    if (!method)
        return fail(QStringLiteral("method \"%1\" not found in service %2").arg(methodName, serviceName));
    return method;
}

const gp::Descriptor *Schema::findMessage(const QString &fullName) const
{
    return d ? d->pool.FindMessageTypeByName(fullName.toStdString()) : nullptr;
}

const gp::DescriptorPool *Schema::pool() const
{
    return d ? &d->pool : nullptr;
}

std::unique_ptr<gp::Message> Schema::newMessage(const gp::Descriptor *type) const
{
    if (!d || !type)
        return nullptr;
    const gp::Message *prototype = d->factory.GetPrototype(type);
    return std::unique_ptr<gp::Message>(prototype ? prototype->New() : nullptr);
}

const gp::FileDescriptorSet &Schema::fileDescriptorSet() const
{
    static const gp::FileDescriptorSet empty;
    return d ? d->set : empty;
}

} // namespace rpcscope
