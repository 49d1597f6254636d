#include "clientprotocol.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace rpcscope {

namespace {

/// A value of a flat object, as read by hand.
struct Value {
    enum Type { Number, String, True, False, Null } type = Null;
    double number = 0;
    bool integral = false; ///< written without a fraction or an exponent
    uint64_t whole = 0; ///< when integral and not negative
    bool negative = false;
    QString text; ///< String
};

/// A hand-written reader of one flat JSON object (no nested objects or arrays): the lines a client prints by the
/// million, where QJsonDocument would cost several microseconds each.
class FlatReader {
public:
    explicit FlatReader(const QByteArray &line) : m_p(line.constData()), m_end(line.constData() + line.size()) { }

    /// Reads the object, calling @p field(key, value) for each member; false when the line is not a flat object
    /// (the caller then asks QJsonDocument, for its error or for what it can read).
    template<typename F> bool read(F &&field)
    {
        skipSpace();
        if (!consume('{'))
            return false;
        skipSpace();
        if (consume('}'))
            return atEnd();
        for (;;) {
            QString key;
            skipSpace();
            if (!string(&key))
                return false;
            skipSpace();
            if (!consume(':'))
                return false;
            skipSpace();
            Value value;
            if (!this->value(&value))
                return false;
            if (!field(key, value))
                return false;
            skipSpace();
            if (consume(','))
                continue;
            if (consume('}'))
                return atEnd();
            return false;
        }
    }

private:
    const char *m_p;
    const char *m_end;

    void skipSpace()
    {
        while (m_p < m_end && (*m_p == ' ' || *m_p == '\t' || *m_p == '\r' || *m_p == '\n'))
            ++m_p;
    }
    bool consume(char c)
    {
        if (m_p < m_end && *m_p == c) {
            ++m_p;
            return true;
        }
        return false;
    }
    bool atEnd()
    {
        skipSpace();
        return m_p == m_end;
    }
    bool literal(const char *word)
    {
        const size_t n = std::strlen(word);
        if (static_cast<size_t>(m_end - m_p) < n || std::memcmp(m_p, word, n) != 0)
            return false;
        m_p += n;
        return true;
    }
    /// A string without escapes is taken as it is; one with escapes goes to QJsonDocument (rare: error messages).
    bool string(QString *out)
    {
        if (!consume('"'))
            return false;
        const char *start = m_p;
        while (m_p < m_end && *m_p != '"') {
            if (*m_p == '\\' || static_cast<unsigned char>(*m_p) < 0x20)
                return false;
            ++m_p;
        }
        if (m_p == m_end)
            return false;
        *out = QString::fromUtf8(start, m_p - start);
        ++m_p;
        return true;
    }
    bool number(Value *v)
    {
        const char *start = m_p;
        v->negative = consume('-');
        const char *digits = m_p;
        uint64_t whole = 0;
        bool overflow = false;
        while (m_p < m_end && *m_p >= '0' && *m_p <= '9') {
            const auto digit = static_cast<uint64_t>(*m_p - '0');
            if (whole > (std::numeric_limits<uint64_t>::max() - digit) / 10)
                overflow = true;
            whole = whole * 10 + digit;
            ++m_p;
        }
        if (m_p == digits)
            return false;
        v->integral = !overflow;
        if (m_p < m_end && (*m_p == '.' || *m_p == 'e' || *m_p == 'E')) {
            v->integral = false;
            while (m_p < m_end
                && ((*m_p >= '0' && *m_p <= '9') || *m_p == '.' || *m_p == 'e' || *m_p == 'E' || *m_p == '+'
                    || *m_p == '-'))
                ++m_p;
        }
        v->type = Value::Number;
        v->whole = whole;
        if (v->integral) {
            v->number = v->negative ? -static_cast<double>(whole) : static_cast<double>(whole);
            return true;
        }
        const QByteArray text(start, m_p - start);
        bool ok = false;
        v->number = text.toDouble(&ok);
        return ok;
    }
    bool value(Value *v)
    {
        if (m_p == m_end)
            return false;
        switch (*m_p) {
        case '"':
            v->type = Value::String;
            return string(&v->text);
        case 't':
            v->type = Value::True;
            return literal("true");
        case 'f':
            v->type = Value::False;
            return literal("false");
        case 'n':
            v->type = Value::Null;
            return literal("null");
        default:
            return number(v);
        }
    }
};

/// A JSON value from QJsonDocument as the hand reader gives it; false for objects and arrays.
bool fromJson(const QJsonValue &json, Value *v)
{
    switch (json.type()) {
    case QJsonValue::Bool:
        v->type = json.toBool() ? Value::True : Value::False;
        return true;
    case QJsonValue::Null:
        v->type = Value::Null;
        return true;
    case QJsonValue::String:
        v->type = Value::String;
        v->text = json.toString();
        return true;
    case QJsonValue::Double: {
        v->type = Value::Number;
        v->number = json.toDouble();
        v->negative = v->number < 0;
        v->integral = std::isfinite(v->number) && std::floor(v->number) == v->number && std::fabs(v->number) < 9e15;
        v->whole = v->integral && !v->negative ? static_cast<uint64_t>(v->number) : 0;
        return true;
    }
    default:
        return false;
    }
}

/// Builds the event from the line's members, one at a time.
class EventBuilder {
public:
    bool add(const QString &key, const Value &v)
    {
        if (key == u"latency_ns")
            return count(key, v, &m_event.latencyNs, &m_hasLatency);
        if (key == u"ok") {
            if (v.type != Value::True && v.type != Value::False)
                return fail(QStringLiteral("\"ok\" must be true or false"));
            m_event.ok = v.type == Value::True;
            m_hasOk = true;
            return true;
        }
        if (key == u"warmup") {
            if (v.type != Value::True && v.type != Value::False)
                return fail(QStringLiteral("\"warmup\" must be true or false"));
            m_event.warmup = v.type == Value::True;
            return true;
        }
        if (key == u"status") {
            if (v.type == Value::Number && v.integral) // an HTTP status as a number
                m_event.status = QString::number(v.negative ? -static_cast<int64_t>(v.whole) : v.whole);
            else if (v.type == Value::String)
                m_event.status = v.text;
            else if (v.type != Value::Null)
                return fail(QStringLiteral("\"status\" must be a string or a number"));
            return true;
        }
        if (key == u"error" || key == u"message") {
            if (v.type == Value::String)
                m_event.message = v.text;
            return true;
        }
        if (key == u"bytes_sent")
            return count(key, v, &m_event.bytesSent, nullptr);
        if (key == u"bytes_received")
            return count(key, v, &m_event.bytesReceived, nullptr);
        if (key == u"done") {
            uint64_t block = 0;
            if (!count(key, v, &block, nullptr))
                return false;
            m_event.block = static_cast<int64_t>(std::min<uint64_t>(block, INT64_MAX));
            m_done = true;
            return true;
        }
        if (key == u"ready") {
            m_ready = v.type == Value::True;
            return true;
        }
        if (key == u"fatal") {
            m_event.message = v.type == Value::String ? v.text : QStringLiteral("(no reason given)");
            m_fatal = true;
            return true;
        }
        return true; // t_ns and whatever a later version adds: not read here
    }

    std::optional<ClientEvent> finish(QString *error)
    {
        if (!m_error.isEmpty())
            return failed(error, m_error);
        if (m_fatal) {
            m_event.kind = ClientEvent::Fatal;
            return m_event;
        }
        if (m_done) {
            m_event.kind = ClientEvent::Done;
            return m_event;
        }
        if (m_ready) {
            m_event.kind = ClientEvent::Ready;
            return m_event;
        }
        if (!m_hasLatency)
            return failed(error,
                QStringLiteral("a call needs \"latency_ns\" (or the line is {\"ready\": true}, {\"done\": BLOCK} or "
                               "{\"fatal\": \"why\"})"));
        if (!m_hasOk)
            return failed(error, QStringLiteral("a call needs \"ok\": true or false"));
        m_event.kind = ClientEvent::Call;
        return m_event;
    }

    const QString &error() const { return m_error; }

private:
    ClientEvent m_event;
    bool m_hasLatency = false;
    bool m_hasOk = false;
    bool m_done = false;
    bool m_fatal = false;
    bool m_ready = false;
    QString m_error;

    bool fail(const QString &why)
    {
        m_error = why;
        return false;
    }
    bool count(const QString &key, const Value &v, uint64_t *out, bool *seen)
    {
        if (v.type != Value::Number || !v.integral || v.negative)
            return fail(QStringLiteral("\"%1\" must be a whole number, 0 or more").arg(key));
        *out = v.whole;
        if (seen)
            *seen = true;
        return true;
    }
    static std::optional<ClientEvent> failed(QString *error, const QString &why)
    {
        if (error)
            *error = why;
        return std::nullopt;
    }
};

} // namespace

std::optional<ClientEvent> parseClientLine(const QByteArray &line, QString *error)
{
    {
        EventBuilder builder;
        FlatReader reader(line);
        if (reader.read([&](const QString &key, const Value &v) { return builder.add(key, v); }))
            return builder.finish(error);
        if (!builder.error().isEmpty()) {
            if (error)
                *error = builder.error();
            return std::nullopt;
        }
    }
    // Not a flat object the quick way: escapes in a string, nesting, or not JSON at all.
    QJsonParseError parseError {};
    const QJsonDocument document = QJsonDocument::fromJson(line, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
        if (error)
            *error = parseError.error != QJsonParseError::NoError
                ? QStringLiteral("not a JSON object (%1 at column %2)")
                      .arg(parseError.errorString())
                      .arg(parseError.offset + 1)
                : QStringLiteral("not a JSON object");
        return std::nullopt;
    }
    EventBuilder builder;
    const QJsonObject object = document.object();
    for (auto it = object.begin(); it != object.end(); ++it) {
        Value v;
        if (!fromJson(it.value(), &v)) {
            if (it.key() == u"latency_ns" || it.key() == u"ok" || it.key() == u"done" || it.key() == u"status") {
                if (error)
                    *error = QStringLiteral("\"%1\" must not be an object or an array").arg(it.key());
                return std::nullopt;
            }
            continue; // a member of a later version
        }
        if (!builder.add(it.key(), v))
            break;
    }
    return builder.finish(error);
}

QByteArray clientBlockLine(int block, uint64_t calls, int64_t durationMs, int concurrency, uint64_t warmupCalls)
{
    QByteArray line = "{\"block\": " + QByteArray::number(block);
    if (calls > 0)
        line += ", \"calls\": " + QByteArray::number(calls);
    else
        line += ", \"duration_ms\": " + QByteArray::number(durationMs);
    line += ", \"concurrency\": " + QByteArray::number(concurrency)
        + ", \"warmup_calls\": " + QByteArray::number(warmupCalls) + "}\n";
    return line;
}

} // namespace rpcscope
