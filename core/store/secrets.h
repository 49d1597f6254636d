#pragma once

#include "runrecord.h"

#include <QString>
#include <QStringList>

namespace rpcscope {

/**
 * What never leaves rpcscope in clear: a run's secrets are replaced by `<redacted sha256:abcd1234>` (the first 8 hex
 * digits of the value's SHA-256, so two runs can still be seen to differ) wherever the run is stored or exported.
 *
 * Secrets are the values of metadata (gRPC metadata, HTTP headers) and of the environment given to a server command
 * rpcscope starts whose key or name is sensitive (isSecretKey()) or whose value looks like a credential
 * (isSecretValue()); the rest stays in clear, so that "what differs" can show it (RPCSCOPE_SERVE_DELAY: 1ms -> 2ms). A
 * scenario opts out with "secrets": {"keep": true}
 * (--keep-secrets), which the record keeps, so a report says that it holds secrets.
 */

/// True for authorization, proxy-authorization, cookie, set-cookie, x-api-key and any key containing token, secret,
/// password, passwd, passphrase, key, auth, cookie, session or credential (case-insensitive), and for the keys in
/// @p extra (the scenario's secrets.redact, --redact).
bool isSecretKey(const QString &key, const QStringList &extra = {});
/// True for a value that is a credential whatever its name: a URL with a password, "Bearer ..."/"Basic ...", a JSON
/// Web Token, a PEM private key.
bool isSecretValue(const QString &value);
/// isSecretKey(@p key, @p extra) or isSecretValue(@p value).
bool isSecret(const QString &key, const QString &value, const QStringList &extra = {});
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
