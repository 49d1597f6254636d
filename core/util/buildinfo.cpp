#include "buildinfo.h"

#include "rpcscope_revision.h" // generated at build time: cmake/GitRevision.cmake

#include <QSysInfo>
#include <QtGlobal>

#include <boost/version.hpp>
#include <google/protobuf/stubs/common.h>
#include <grpcpp/grpcpp.h>
#include <msgpack/version.hpp>

namespace rpcscope {

QString gitRevision()
{
    return QStringLiteral(RPCSCOPE_GIT_REVISION);
}

QList<QPair<QString, QString>> buildInfo()
{
    return {
        { QStringLiteral("rpcscope"), QStringLiteral(RPCSCOPE_VERSION " (" RPCSCOPE_GIT_REVISION ")") },
        { QStringLiteral("Qt"), QString::fromLatin1(qVersion()) },
        { QStringLiteral("gRPC"), QString::fromStdString(grpc::Version()) },
        { QStringLiteral("protobuf"),
            QString::fromStdString(google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION)) },
        { QStringLiteral("msgpack-c"), QString::fromLatin1(msgpack_version()) },
        { QStringLiteral("Boost (Asio, Beast)"),
            QString::fromLatin1(BOOST_LIB_VERSION).replace(QLatin1Char('_'), QLatin1Char('.')) },
        { QStringLiteral("OS"),
            QSysInfo::prettyProductName() + QStringLiteral(", kernel ") + QSysInfo::kernelVersion() },
    };
}

} // namespace rpcscope
