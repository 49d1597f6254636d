#include "jsonhighlighter.h"

#include <QGuiApplication>
#include <QPalette>

namespace rpcscope {

JsonHighlighter::JsonHighlighter(QTextDocument *document)
    : QSyntaxHighlighter(document)
    , m_stringPattern(QStringLiteral(R"("(?:[^"\\]|\\.)*")"))
    // A number stands alone: not a part of "127.0.0.1" or of "v1.2.3" (a dot or a word character on either side).
    , m_numberPattern(QStringLiteral(R"((?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.]))"))
    , m_literalPattern(QStringLiteral(R"(\b(?:true|false|null)\b)"))
    , m_placeholderPattern(QStringLiteral(R"(\{\{[^}]*\}\})"))
{
    // Colours that read on the system's light or dark base.
    const bool dark = QGuiApplication::palette().color(QPalette::Base).lightness() < 128;
    m_key.setForeground(dark ? QColor(0x8a, 0xc6, 0xf2) : QColor(0x1f, 0x5f, 0x9f));
    m_string.setForeground(dark ? QColor(0xa5, 0xd6, 0x8f) : QColor(0x2e, 0x7d, 0x32));
    m_number.setForeground(dark ? QColor(0xf2, 0xb4, 0x82) : QColor(0xb3, 0x54, 0x00));
    m_literal.setForeground(dark ? QColor(0xd7, 0x9b, 0xf2) : QColor(0x7b, 0x1f, 0xa2));
    m_literal.setFontWeight(QFont::Bold);
    m_placeholder.setForeground(dark ? QColor(0xff, 0x8a, 0x80) : QColor(0xc6, 0x28, 0x28));
    m_placeholder.setFontItalic(true);
}

void JsonHighlighter::highlightBlock(const QString &text)
{
    for (auto it = m_numberPattern.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()), m_number);
    }
    for (auto it = m_literalPattern.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()), m_literal);
    }
    // Strings last among the plain tokens: digits and words inside them are text. A string followed by a colon
    // is a key.
    for (auto it = m_stringPattern.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        qsizetype after = m.capturedEnd();
        while (after < text.size() && text.at(after).isSpace())
            ++after;
        const bool key = after < text.size() && text.at(after) == QLatin1Char(':');
        setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()), key ? m_key : m_string);
    }
    for (auto it = m_placeholderPattern.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()), m_placeholder);
    }
}

} // namespace rpcscope
