#include "printable.h"

#include <algorithm>

namespace rpcscope {

QString printable(const QString &text, bool keepNewlines)
{
    auto unsafe = [keepNewlines](QChar c) {
        const char16_t u = c.unicode();
        if (u == u'\n')
            return !keepNewlines;
        // C0 controls (tab included: it would break a table's columns), DEL, C1 controls (0x9b is a CSI on its own)
        return u < 0x20 || (u >= 0x7f && u < 0xa0);
    };
    if (std::none_of(text.begin(), text.end(), unsafe))
        return text;
    QString out;
    out.reserve(text.size() + 16);
    for (const QChar c : text) {
        if (unsafe(c))
            out += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        else
            out += c;
    }
    return out;
}

} // namespace rpcscope
