#pragma once

#include "runrecord.h"

#include <QString>
#include <QStringList>

namespace rpcscope {

/**
 * What never leaves rpcscope in clear: a run's secrets are replaced by `<redacted sha256:abcd1234>` (the first 8 hex
 * digits of the value's SHA-256, so two runs can still be seen to differ) wherever the run is stored or exported.
 *
 * Secrets are the values of metadata (gRPC metadata, HTTP headers) whose key is sensitive (isSecretKey()) and every
 * environment value given to a server command rpcscope starts. A scenario opts out with "secrets": {"keep": true}
 * (--keep-secrets), which the record keeps, so a report says that it holds secrets.
 */

/// True for authorization, proxy-authorization, cookie, set-cookie, x-api-key and any key containing token, secret,
/// password, passwd or key (case-insensitive), and for the keys in @p extra (the scenario's secrets.redact).
bool isSecretKey(const QString &key, const QStringList &extra = {});
/// `<redacted sha256:abcd1234>` for @p value.
QString redactedValue(const QString &value);
/// True for a value redactedValue() made.
bool isRedactedValue(const QString &value);

/**
 * Redacts @p run's secrets in place (its scenario document's metadata, including the -m/-H values of runs saved with
 * their CLI flags, and its server command's environment), unless its scenario keeps them. Already redacted values are
 * left as they are. Returns what it redacted, e.g. "metadata authorization", "server env DB_PASSWORD".
 */
QStringList redactSecrets(RunRecord *run);
/// What @p run holds redacted (its redacted values, named as redactSecrets() names them).
QStringList redactedFields(const RunRecord &run);
/// True when the run's scenario asked to keep its secrets (--keep-secrets).
bool keepsSecrets(const RunRecord &run);

} // namespace rpcscope
