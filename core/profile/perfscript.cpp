#include "perfscript.h"

#include <algorithm>

namespace rpcscope {

namespace {

bool isBlank(char c)
{
    return c == ' ' || c == '\t';
}

QByteArrayView trimmed(QByteArrayView text)
{
    qsizetype begin = 0;
    qsizetype end = text.size();
    while (begin < end && (isBlank(text[begin]) || text[begin] == '\r'))
        ++begin;
    while (end > begin && (isBlank(text[end - 1]) || text[end - 1] == '\r'))
        --end;
    return text.sliced(begin, end - begin);
}

// The last blank-separated token of @p text (trimmed), and what is left before it (trimmed).
QByteArrayView takeLastToken(QByteArrayView *text)
{
    const QByteArrayView t = trimmed(*text);
    qsizetype i = t.size();
    while (i > 0 && !isBlank(t[i - 1]))
        --i;
    *text = trimmed(t.first(i));
    return t.sliced(i);
}

bool parseNumber(QByteArrayView text, qint64 *out)
{
    if (text.isEmpty())
        return false;
    bool ok = false;
    const qint64 value = text.toLongLong(&ok);
    if (!ok || value < 0)
        return false;
    *out = value;
    return true;
}

// Kernel addresses: the upper half of the x86-64 (and arm64) address space.
constexpr quint64 kKernelStart = 0xffff800000000000ULL;

// One frame line ("ADDRESS SYMBOL (DSO)", already trimmed) as a folded frame.
QString frameName(QByteArrayView line)
{
    // The address: the first token.
    qsizetype i = 0;
    while (i < line.size() && !isBlank(line[i]))
        ++i;
    bool addressOk = false;
    const quint64 address = line.first(i).toULongLong(&addressOk, 16);
    QByteArrayView rest = trimmed(line.sliced(i));

    // The DSO: the last parenthesised group, found by matching the final ')' backwards (symbols have parentheses
    // of their own, "operator()(int) const"), and preceded by a blank.
    QByteArrayView dso;
    if (rest.endsWith(')')) {
        qsizetype open = -1;
        int depth = 0;
        for (qsizetype j = rest.size() - 1; j >= 0; --j) {
            if (rest[j] == ')') {
                ++depth;
            } else if (rest[j] == '(' && --depth == 0) {
                open = j;
                break;
            }
        }
        if (open < 0 || (open > 0 && !isBlank(rest[open - 1]))) {
            // Unbalanced parentheses in the DSO's path, or none before a symbol's own ')': take the last " (".
            const qsizetype spaced = rest.lastIndexOf(QByteArrayView(" ("));
            open = spaced >= 0 ? spaced + 1 : (rest.startsWith('(') ? 0 : -1);
        }
        if (open >= 0) {
            dso = rest.sliced(open + 1, rest.size() - open - 2);
            rest = trimmed(rest.first(open));
        }
    }

    const bool dsoKnown = !dso.isEmpty() && dso != QByteArrayView("[unknown]");
    QString name;
    if (rest.isEmpty() || rest == QByteArrayView("[unknown]")) {
        if (!dsoKnown) {
            name = QStringLiteral("[unknown]");
        } else if (dso.startsWith('[') && dso.endsWith(']')) {
            name = QString::fromUtf8(dso); // "[vdso]", "[kernel.kallsyms]": already bracketed
        } else {
            const qsizetype slash = dso.lastIndexOf('/');
            name = QLatin1Char('[') + QString::fromUtf8(dso.sliced(slash + 1)) + QLatin1Char(']');
        }
    } else {
        name = QString::fromUtf8(rest);
    }
    name.replace(QLatin1Char(';'), QLatin1Char(':'));
    const bool kernel = dso == QByteArrayView("[kernel.kallsyms]") || (addressOk && address >= kKernelStart);
    if (kernel)
        name += QStringLiteral("_[k]");
    return name;
}

} // namespace

void PerfScriptFolder::addLine(QByteArrayView line)
{
    ++m_line;
    const QByteArrayView content = trimmed(line);
    if (content.isEmpty()) {
        endSample();
        return;
    }
    if (isBlank(line[0])) {
        // A frame of the sample being read (ignored after a header that could not be read).
        if (m_inSample)
            m_frames.append(frameName(content));
        return;
    }

    // A header, "COMM PID/TID PERIOD": read from the right, as the comm may have blanks.
    endSample(); // a sample without the empty line after it
    QByteArrayView rest = content;
    const QByteArrayView periodText = takeLastToken(&rest);
    QByteArrayView pidText = takeLastToken(&rest);
    qint64 timeNs = -1;
    if (pidText.endsWith(':')) {
        // -F ...,time,...: "SECONDS.FRACTION:" between the pid and the period
        const QByteArrayView timeText = pidText.chopped(1);
        const qsizetype dot = timeText.indexOf('.');
        qint64 seconds = 0;
        qint64 fraction = 0;
        const QByteArrayView fractionText = dot < 0
            ? QByteArrayView()
            : timeText.sliced(dot + 1).first(std::min<qsizetype>(9, timeText.size() - dot - 1));
        if (parseNumber(dot < 0 ? timeText : timeText.first(dot), &seconds)
            && (fractionText.isEmpty() || parseNumber(fractionText, &fraction))) {
            for (qsizetype digits = fractionText.size(); digits < 9; ++digits)
                fraction *= 10;
            timeNs = seconds * 1000000000LL + fraction;
        }
        pidText = takeLastToken(&rest);
    }
    const qsizetype slash = pidText.indexOf('/');
    qint64 pid = 0;
    qint64 tid = 0;
    qint64 period = 0;
    const bool ok = parseNumber(periodText, &period) && parseNumber(slash < 0 ? pidText : pidText.first(slash), &pid)
        && (slash < 0 || parseNumber(pidText.sliced(slash + 1), &tid)) && !rest.isEmpty();
    if (!ok) {
        if (m_badLines++ == 0)
            m_firstBad = QStringLiteral("line %1: %2").arg(m_line).arg(QString::fromUtf8(line));
        return;
    }
    m_inSample = true;
    m_pid = pid;
    m_timeNs = timeNs;
    m_period = double(period);
    m_comm = QString::fromUtf8(rest);
    m_frames.clear();
}

void PerfScriptFolder::finish()
{
    endSample();
}

void PerfScriptFolder::endSample()
{
    if (!m_inSample)
        return;
    m_inSample = false;
    ++m_seen;
    const int key = m_classifier ? m_classifier(m_pid, m_timeNs) : 0;
    if ((!m_pids.isEmpty() && !m_pids.contains(m_pid)) || key == Skip) {
        m_frames.clear();
        return;
    }
    ++m_samples;
    if (!m_comms.contains(m_pid))
        m_comms.insert(m_pid, m_comm);
    QString stack;
    if (m_frames.isEmpty()) {
        // Recorded without call graphs: the process's name is all there is to say.
        stack = QLatin1Char('[') + m_comm + QLatin1Char(']');
        stack.replace(QLatin1Char(';'), QLatin1Char(':'));
    } else {
        std::reverse(m_frames.begin(), m_frames.end()); // root first
        stack = m_frames.join(QLatin1Char(';'));
    }
    m_frames.clear();
    if (m_period > 0) {
        if (m_classifier)
            m_keyed[key][stack] += m_period;
        else
            m_stacks[m_pid][stack] += m_period;
    }
}

bool isDeferredToSwitch(const QString &stack)
{
    const qsizetype leaf = stack.lastIndexOf(QLatin1Char(';'));
    return QStringView(stack).mid(leaf + 1).startsWith(QLatin1String("finish_task_switch"));
}

} // namespace rpcscope
